"""dtjit: exact decision trees built breadth-first by Numba kernels, scikit-learn compatible.

Public names:

- :class:`DecisionTreeClassifier`, :class:`DecisionTreeRegressor`: drop-in replacements for
  scikit-learn's trees;
- :class:`Tree`: the fitted tree as flat parallel arrays (``estimator.tree_``);
- :func:`save`, :func:`load`: model files without pickle;
- :mod:`dtjit.criteria`: entropy, Gini and information gain for hand computations;
- :func:`export_rules`: the tree as if-then rules;
- :class:`MDLPDiscretizer`: Fayyad & Irani's supervised discretisation, a transformer.
"""

__version__ = "0.1.0"

from . import criteria
from ._estimators import DecisionTreeClassifier, DecisionTreeRegressor
from ._persist import load, save
from ._tree import Tree, TreeFormatError, check_tree
from .discretize import MDLPDiscretizer
from .export import export_rules

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "MDLPDiscretizer",
    "Tree",
    "TreeFormatError",
    "check_tree",
    "criteria",
    "export_rules",
    "load",
    "save",
    "__version__",
]
