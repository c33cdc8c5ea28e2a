"""Supervised discretisation: Fayyad & Irani's MDLP as a scikit-learn transformer."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._parameters import kernel_count
from .engine.mdlp import mdlp_cut_points

# "No depth limit" for the kernel: deeper than any column can be cut.
_UNLIMITED_DEPTH = np.iinfo(np.int64).max

#: Bin code that :meth:`MDLPDiscretizer.transform` gives to missing values.
MISSING_BIN = -1


class MDLPDiscretizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Cut numeric features into intervals with Fayyad & Irani's MDLP criterion.

    Each feature is cut on its own, supervised by the class labels (Fayyad & Irani 1993): the
    whole range is split at the class boundary point that minimises the class-information
    entropy of the two halves, the cut is kept iff its information gain exceeds the
    minimum-description-length cost

    ``Gain > log2(N - 1) / N + Delta / N``,
    ``Delta = log2(3**k - 2) - [k * Ent(S) - k1 * Ent(S1) - k2 * Ent(S2)]``

    (entropies in bits, ``k``, ``k1``, ``k2`` the numbers of classes present in the interval
    ``S`` and its halves), and both halves are split again the same way until no cut passes.

    Parameters
    ----------
    min_samples_split : int, default=2
        Intervals with fewer samples are not split. The default leaves the MDL test alone
        in charge, as in the paper; larger values are a safety limit, not part of MDLP.
    max_depth : int or None, default=None
        Depth of the recursion beyond which intervals are not split (``1`` allows one cut
        per feature, ``d`` at most ``2**d - 1``). ``None``, the default, is the paper's
        unlimited recursion.

    Attributes
    ----------
    cut_points_ : list of ndarray of float64
        One increasing array per feature; empty when the feature is not cut (a constant
        feature, a single class, or no cut that passes the test). A cut point is the
        midpoint between the two distinct training values it separates, like a tree
        threshold.
    n_bins_ : ndarray of int64, shape (n_features_in_,)
        Number of bins of each feature: ``len(cut_points_[f]) + 1``.
    classes_ : ndarray of shape (n_classes,)
        The class labels seen in ``fit``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Names of the features seen in ``fit`` when ``X`` has string column names.

    See Also
    --------
    sklearn.preprocessing.KBinsDiscretizer : unsupervised binning (uniform, quantile,
        k-means).

    Notes
    -----
    Bins: ``transform`` maps a value ``x`` of feature ``f`` to the number of cut points
    below it, ``searchsorted(cut_points_[f], x, side="left")``, so a value equal to a cut
    point goes to the *lower* bin, as ``x <= threshold`` goes left in a tree. Codes are
    int32 in ``0 .. n_bins_[f] - 1``; a missing value (NaN) gets the code ``-1``.

    Missing values are ignored by ``fit`` (each feature is cut on its non-missing rows) and
    passed through by ``transform`` as code ``-1``. Infinite values are rejected.

    Only class boundary points are candidates: a cut between two values whose samples all
    belong to one and the same class never minimises the entropy (Fayyad & Irani 1992), so
    no cut falls inside a run of a single class. Cuts only fall between distinct values.
    Among equally good cut points the lowest one is taken.

    The work is compiled with Numba: each column is sorted once, collapsed into groups of
    equal values with prefix class counts, and each candidate costs O(n_classes). The first
    call in a fresh process compiles (a few seconds); later calls and later processes (on-disk
    cache) do not.

    References
    ----------
    Fayyad, U. M. & Irani, K. B. (1993). Multi-interval discretization of continuous-valued
    attributes for classification learning. IJCAI-93, 1022-1027.

    Examples
    --------
    >>> import numpy as np
    >>> from dtjit import MDLPDiscretizer
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]])
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> disc = MDLPDiscretizer().fit(X, y)
    >>> disc.cut_points_[0].tolist(), disc.n_bins_.tolist()
    ([4.5], [2])
    >>> disc.transform([[4.5], [4.6], [np.nan]]).ravel().tolist()
    [0, 1, -1]
    """

    _parameter_constraints: dict = {
        "min_samples_split": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, *, min_samples_split: int = 2, max_depth: int | None = None) -> None:
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth

    def fit(self, X: Any, y: Any) -> MDLPDiscretizer:
        """Find the cut points of every feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        MDLPDiscretizer
            The fitted transformer.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.int32)
        max_depth = (
            _UNLIMITED_DEPTH
            if self.max_depth is None
            else kernel_count(self.max_depth, _UNLIMITED_DEPTH)
        )
        self.cut_points_ = []
        for f in range(X.shape[1]):
            column = X[:, f]
            present = ~np.isnan(column)
            values = column[present]
            order = np.argsort(values, kind="stable")
            self.cut_points_.append(
                mdlp_cut_points(
                    np.ascontiguousarray(values[order]),
                    np.ascontiguousarray(codes[present][order]),
                    len(self.classes_),
                    kernel_count(self.min_samples_split),
                    max_depth,
                )
            )
        self.n_bins_ = np.array([len(c) + 1 for c in self.cut_points_], dtype=np.int64)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Replace every value by the index of its bin.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features; NaN marks a missing value.

        Returns
        -------
        ndarray of int32, shape (n_samples, n_features)
            Bin codes ``0 .. n_bins_[f] - 1``; ``-1`` for a missing value. A value equal to a
            cut point goes to the lower bin.
        """
        check_is_fitted(self, "cut_points_")
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite="allow-nan")
        out = np.empty(X.shape, dtype=np.int32)
        for f, cuts in enumerate(self.cut_points_):
            column = X[:, f]
            out[:, f] = np.searchsorted(cuts, column, side="left")
            out[np.isnan(column), f] = MISSING_BIN
        return out

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = []  # codes are int32, whatever X was
        return tags
