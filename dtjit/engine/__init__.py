"""The engine: compiled kernels and the Python driver that grows a tree from prepared data.

It imports numpy and numba and itself only, never the estimators or scikit-learn. Its entry
point is :func:`fit`: one :class:`FitSpec` of resolved settings and the validated data in,
the finished tree's arrays out (``pipeline``: ``prepare`` -> ``grow`` -> ``finish``).
"""

from .pipeline import fit
from .records import FitResult, FitSpec, TreeArrays

__all__ = ["FitResult", "FitSpec", "TreeArrays", "fit"]
