"""scikit-learn compatible estimators: validate, resolve the parameters, call ``engine.fit``."""

from __future__ import annotations

import numbers
import warnings
from math import ceil
from typing import Any

import numpy as np
from scipy import sparse
from sklearn import tree as sklearn_tree
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin, clone
from sklearn.utils import Bunch, check_random_state, compute_sample_weight, metadata_routing
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from . import _category_encoding, _display, _prune, engine
from ._parameters import check_class_weight_values, kernel_count
from ._tree import Tree
from .engine.criterion import POISSON_EPSILON
from .engine.jit import CRITERION_CODES
from .engine.sweep_categorical import MAX_CATEGORIES
from .engine.threads import resolve_n_jobs
from .predict import partial_dependence
from .predict import routing as _routing

MAX_DEPTH_UNLIMITED = np.iinfo(np.int32).max
# Criteria the categorical subset search scores (dtjit.engine.sweep_categorical). Not
# absolute_error: ordering categories by median does not give the best subset, and no sound
# O(k log k) rule is known for it.
CATEGORICAL_CRITERIA = frozenset(
    {"gini", "entropy", "log_loss", "gain_ratio", "squared_error", "poisson"}
)
# Criteria with a multi-output form (dtjit.engine.sweep_multioutput), as in scikit-learn less
# poisson and absolute_error.
MULTI_OUTPUT_CRITERIA = frozenset({"gini", "entropy", "log_loss", "squared_error"})


class BaseDecisionTree(MultiOutputMixin, BaseEstimator):
    """Shared machinery of :class:`DecisionTreeClassifier` and :class:`DecisionTreeRegressor`."""

    # check_input is an option, not data: metadata routing leaves it out, as for
    # scikit-learn's trees.
    __metadata_request__fit = {"check_input": metadata_routing.UNUSED}
    __metadata_request__predict = {"check_input": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "splitter": [StrOptions({"best", "random", "hist"})],
        "max_bins": [Interval(numbers.Integral, 2, 255, closed="both")],
        "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "min_samples_split": [
            Interval(numbers.Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
        ],
        "min_samples_leaf": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="neither"),
        ],
        "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
        "max_features": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "random_state": ["random_state"],
        "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_impurity_decrease": [Interval(numbers.Real, 0.0, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "ccp_alpha": [Interval(numbers.Real, 0.0, None, closed="left")],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
    }

    # -- fitting -----------------------------------------------------------------------------
    def _fit(self, X: Any, y: Any, sample_weight: Any, *, is_classifier: bool) -> Any:
        # Validate, resolve every parameter into one FitSpec, then one call into the engine
        # (as scikit-learn's _fit calls builder.build). Input errors are raised here; the
        # engine raises only its own limits (float64 once rescaled, code widths, bins).
        self._validate_params()
        n_threads = resolve_n_jobs(self.n_jobs)
        X, y, columns = self._validate_training_data(X, y, is_classifier)
        n_outputs = 1 if y.ndim == 1 else y.shape[1]
        if is_classifier:
            y_kernel = self._encode_classes(y, n_outputs)
            n_classes = np.atleast_1d(self.n_classes_)
        else:
            # C-contiguous and writable: numba types a read-only array as a type of its own,
            # so a read-only y or sample_weight (pandas' to_numpy under copy-on-write, a
            # read-only memmap) would compile a second copy of the builder, 10-60 s cold.
            y_kernel = _kernel_vector(y)
            _check_regression_criterion(self.criterion, self.splitter, y_kernel)
            n_classes = np.ones(n_outputs, dtype=np.intp)
        sample_weight, weight_total = self._training_weights(sample_weight, X, y, is_classifier)
        if self.criterion == "poisson":
            _check_poisson_root(y_kernel, sample_weight)
        spec = self._fit_spec(
            X.shape, n_classes, weight_total, columns, n_threads, is_classifier=is_classifier
        )
        fitted = engine.fit(spec, X, y_kernel, sample_weight)
        self.features_with_missing_ = fitted.features_with_missing
        self.n_outputs_ = n_outputs
        # The engine returns arrays: Tree depends on dtjit.predict, which the engine may not.
        tree = Tree(n_features=X.shape[1], n_classes=n_classes, **fitted.tree._asdict())
        self.tree_ = _prune.prune_to_alpha(tree, float(self.ccp_alpha))
        return self

    def _validate_training_data(
        self, X: Any, y: Any, is_classifier: bool
    ) -> tuple[np.ndarray, np.ndarray, _category_encoding.CategoricalColumns]:
        """Return X (float32, C order) and y validated, and the categorical columns learned.

        Sets ``n_features_in_`` (and ``feature_names_in_``) and the fitted categorical
        attributes.
        """
        raw_X = X
        X, cat_features = _category_encoding.fit_features(
            self.categorical_features, X, self.splitter
        )
        X, mapped_categories, from_values = _category_encoding.map_values_fit(X, cat_features)
        mapped_X = X
        if sparse.issparse(y):
            raise TypeError("A sparse y is not supported; pass y as a dense array.")
        X, y = validate_data(
            self, X, y, dtype=np.float32, order="C", y_numeric=not is_classifier,
            ensure_all_finite="allow-nan", multi_output=True,
        )  # fmt: skip
        if y.ndim == 2 and y.shape[1] == 1:
            # One output, as in scikit-learn; a DataConversionWarning only where several
            # outputs are not supported (e.g. splitter="hist"), as single-output estimators do.
            y = column_or_1d(y, warn=not self._supports_multi_output())
        if y.ndim > 1 and y.shape[1] > 1:
            self._check_multi_output(cat_features.size > 0)
        if cat_features.size:
            # NaN in a categorical column is a missing category, as in a numeric one.
            _category_encoding.check_codes(
                X, cat_features, raw_X, limit=MAX_CATEGORIES, unconverted=mapped_X
            )
            if self.criterion not in CATEGORICAL_CRITERIA:
                raise ValueError(
                    f"categorical_features is not supported with criterion="
                    f"{self.criterion!r} (the best category subset for absolute error has no "
                    f"known efficient search); use one of {sorted(CATEGORICAL_CRITERIA)}."
                )
        columns = _category_encoding.learn_columns(X, cat_features, mapped_categories, from_values)
        self.categorical_features_ = columns.features
        self.categories_ = columns.categories
        self.categories_from_values_ = columns.from_values
        return X, y, columns

    def _encode_classes(self, y: np.ndarray, n_outputs: int) -> np.ndarray:
        """Set ``classes_`` and ``n_classes_``; return y's int32 class codes per output."""
        _check_classification_targets(y)
        if n_outputs == 1:
            self.classes_, y_encoded = _encode_labels(y)
            self.n_classes_ = len(self.classes_)
        else:
            encoded = [np.unique(y[:, o], return_inverse=True) for o in range(n_outputs)]
            self.classes_ = [classes for classes, _ in encoded]
            self.n_classes_ = np.array([len(c) for c in self.classes_], dtype=np.intp)
            y_encoded = np.column_stack([codes for _, codes in encoded])
        return y_encoded.astype(np.int32)

    def _training_weights(
        self, sample_weight: Any, X: np.ndarray, y: np.ndarray, is_classifier: bool
    ) -> tuple[np.ndarray, float]:
        """Return the float64 weights (times ``class_weight``) and their total.

        ``y`` holds a classifier's labels (``class_weight`` names classes); without weights
        the total is the row count.
        """
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        if is_classifier and self.class_weight is not None:
            check_class_weight_values(self.class_weight)
            expanded = compute_sample_weight(self.class_weight, y)
            with np.errstate(over="ignore"):  # an overflowing product is refused below
                sample_weight = expanded if sample_weight is None else sample_weight * expanded
        if sample_weight is None:
            return np.ones(X.shape[0], dtype=np.float64), X.shape[0]
        sample_weight = _kernel_vector(sample_weight)
        with np.errstate(over="ignore"):  # an overflowing total is refused below
            total = sample_weight.sum()
        if not total > 0.0:
            raise ValueError(
                "sample_weight sums to zero: at least one sample needs a positive weight."
            )
        if not np.isfinite(total):
            raise ValueError(
                "The sample weights (sample_weight times class_weight) sum to more than "
                "float64 holds; divide them by a common factor, which changes no split."
            )
        return sample_weight, total

    def _fit_spec(
        self,
        shape: tuple[int, int],
        n_classes: np.ndarray,
        weight_total: float,
        columns: _category_encoding.CategoricalColumns,
        n_threads: int,
        *,
        is_classifier: bool,
    ) -> engine.FitSpec:
        """Resolve the parameters into the engine's settings; sets ``max_features_``.

        Fractions are of the rows passed in (before zero-weight rows are dropped), as in
        scikit-learn. Every value is a plain int / float, so numpy scalars in the parameters
        never compile a second copy of the builder.
        """
        n_samples, n_features = shape
        if isinstance(self.min_samples_leaf, numbers.Integral):
            min_samples_leaf = kernel_count(self.min_samples_leaf)
        else:
            min_samples_leaf = ceil(self.min_samples_leaf * n_samples)
        if isinstance(self.min_samples_split, numbers.Integral):
            min_samples_split = kernel_count(self.min_samples_split)
        else:
            min_samples_split = max(2, ceil(self.min_samples_split * n_samples))
        self.max_features_ = self._resolve_max_features(n_features)
        seed = check_random_state(self.random_state).randint(
            1, np.iinfo(np.int64).max, dtype=np.int64
        )
        cat_slot, n_words = _category_encoding.split_layout(columns, n_features)
        return engine.FitSpec(
            splitter=self.splitter,
            criterion=CRITERION_CODES[self.criterion],
            is_regression=not is_classifier,
            n_outputs=n_classes.shape[0],
            n_classes=n_classes,
            max_depth=(
                MAX_DEPTH_UNLIMITED
                if self.max_depth is None
                else kernel_count(self.max_depth, MAX_DEPTH_UNLIMITED)
            ),
            min_samples_split=int(max(min_samples_split, 2 * min_samples_leaf)),
            min_samples_leaf=int(min_samples_leaf),
            min_weight_leaf=float(self.min_weight_fraction_leaf * weight_total),
            min_impurity_decrease=float(self.min_impurity_decrease),
            max_features=min(self.max_features_, n_features),
            max_leaf_nodes=(
                -1 if self.max_leaf_nodes is None else kernel_count(self.max_leaf_nodes)
            ),
            max_bins=int(self.max_bins),
            mdl_stop=bool(getattr(self, "mdl_stop", False)),
            rng_state=np.array([seed], dtype=np.uint64),
            n_threads=int(n_threads),
            cat_slot=cat_slot,
            n_words=n_words,
        )

    def _supports_multi_output(self) -> bool:
        """Whether this configuration can fit a y of several columns (``_check_multi_output``)."""
        return (
            self.splitter != "hist"
            and self.criterion in MULTI_OUTPUT_CRITERIA
            and (self.categorical_features is None or self.categorical_features == "from_dtype")
            and not getattr(self, "mdl_stop", False)
        )

    def _check_multi_output(self, has_categorical: bool) -> None:
        """Reject the options that have no multi-output form (y of shape (n, k), k > 1)."""
        unsupported = []
        if self.criterion not in MULTI_OUTPUT_CRITERIA:
            unsupported.append(f"criterion={self.criterion!r}")
        if self.splitter == "hist":
            unsupported.append("splitter='hist'")
        if has_categorical:
            unsupported.append("categorical_features")
        if getattr(self, "mdl_stop", False):
            unsupported.append("mdl_stop=True")
        if unsupported:
            raise ValueError(
                f"Multi-output y (more than one column) is not supported with "
                f"{', '.join(unsupported)}; multi-output trees support criterion in "
                f"{sorted(MULTI_OUTPUT_CRITERIA)} with splitter='best' or 'random', numeric "
                f"features only."
            )

    def cost_complexity_pruning_path(self, X: Any, y: Any, sample_weight: Any = None) -> Bunch:
        """Compute the pruning path of minimal cost-complexity pruning (scikit-learn's).

        A copy of the estimator with ``ccp_alpha=0`` is fitted on (X, y); the path lists
        the effective alphas at which its subtrees are pruned away, weakest link first.
        To get the path of an already fitted tree without refitting, use
        :func:`dtjit.pruning.pruning_path`; to prune a fitted tree to one of the alphas,
        :func:`dtjit.prune`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training input.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels or target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero.

        Returns
        -------
        sklearn.utils.Bunch
            ``ccp_alphas``: ndarray of float64, the effective alphas, starting at 0 (the
            unpruned tree) and ending with the alpha that prunes the tree to its root;
            ``impurities``: the total weighted leaf impurity ``R(T)`` of the subtree at each
            alpha (scikit-learn's definitions and values, except that an alpha rounding
            below 0, such as -1e-17 for a split that decreases the impurity by nothing, is
            given as 0, a valid ``ccp_alpha``).
        """
        self._validate_params()  # a bad parameter is reported even though it is reset here
        est = clone(self).set_params(ccp_alpha=0.0)
        est.fit(X, y, sample_weight=sample_weight)
        alphas, impurities = _prune.cost_complexity_path(est.tree_)
        return Bunch(ccp_alphas=alphas, impurities=impurities)

    def _resolve_max_features(self, n_features: int) -> int:
        max_features = self.max_features
        if max_features is None:
            return n_features
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(np.log2(n_features)))
        if isinstance(max_features, numbers.Integral):
            # Above n_features: every feature, as in scikit-learn (whose max_features_ keeps
            # the value given); the builders take min(max_features_, n_features).
            return int(max_features)
        return max(1, int(max_features * n_features))

    # -- prediction ---------------------------------------------------------------------------
    def _validate_X_predict(self, X: Any) -> np.ndarray:
        """Return X as a numeric ndarray of the right width; values are checked by the kernels.

        scikit-learn's ``validate_data`` without its whole-array NaN / infinity scan: the
        traversal kernels check each block of rows as they route it. The dtype is kept (each
        block is converted to float32 as it is routed). X that it would return unchanged
        skips it (:func:`_validate_data_returns_as_is`).
        """
        # scikit-learn's check_is_fitted computes the estimator's tags on every call (about a
        # quarter of a 1,000-row predict); with tree_ set it passes, so it runs only without.
        if not hasattr(self, "tree_"):
            check_is_fitted(self, "tree_")
        columns = self._categorical_columns()
        raw_X = X
        if columns is not None:
            names = getattr(self, "feature_names_in_", None)
            X = _category_encoding.map_values_predict(X, columns, names, estimator=self)
        if columns is not None or not _validate_data_returns_as_is(self, X):
            X = validate_data(
                self, X, reset=False, dtype="numeric", order=None, ensure_all_finite=False
            )
        if columns is not None:
            # Codes beyond the known ones are unseen categories (routed with NaN); only
            # values that cannot be codes are errors, checked in the input's dtype.
            _category_encoding.check_codes(X, columns.features, raw_X, limit=np.inf)
        if self.tree_.n_features != X.shape[1]:
            # The traversal indexes X by the tree's features: they must fit X's columns.
            raise ValueError(
                f"tree_ was built for {self.tree_.n_features} features but X has {X.shape[1]}."
            )
        return X

    def _categorical_columns(self) -> _category_encoding.CategoricalColumns | None:
        """Return the fitted categorical columns, or None when there are none."""
        features = getattr(self, "categorical_features_", None)
        if features is None or len(features) == 0:
            return None
        return _category_encoding.CategoricalColumns(
            features=features,
            categories=self.categories_,
            from_values=self.categories_from_values_,
        )

    def _categorical_column_mask(self) -> np.ndarray | None:
        """Return uint8 per feature, 1 for the categorical columns; None when there are none."""
        columns = self._categorical_columns()
        return None if columns is None else columns.mask(self.tree_.n_features)

    def _route(self, X: np.ndarray, payload: np.ndarray) -> np.ndarray:
        """Return ``payload[leaf]`` for each row of a validated X, on ``n_jobs`` threads.

        See :func:`dtjit.predict.routing.route`.
        """
        # Checked here even when a small X runs serially: set_params after fit is unvalidated.
        threads = resolve_n_jobs(self.n_jobs)
        return _routing.route(self.tree_, X, payload, threads, self._categorical_column_mask())

    def apply(self, X: Any, check_input: bool = True) -> np.ndarray:
        """Return the index of the leaf each sample ends up in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples; any float or int dtype, C or F order, read-only arrays and
            memmaps accepted. Inputs that are not float32 C arrays are converted block by
            block, never copied whole; the pages of a memory-mapped X are released as its
            blocks are done.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Leaf node ids (breadth-first numbering).
        """
        X = self._validate_X_predict(X)
        return self._route(X, self.tree_.node_ids())

    def decision_path(self, X: Any, check_input: bool = True) -> sparse.csr_matrix:
        """Return the nodes each sample visits, as a sparse indicator matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_samples, node_count)
            Entry ``(i, j)`` is 1 iff sample ``i`` passes through node ``j``.
        """
        X = self._validate_X_predict(X)
        return _routing.decision_path(self.tree_, X, self._categorical_column_mask())

    # -- inspection ----------------------------------------------------------------------------
    def get_depth(self) -> int:
        """Return the depth of the tree (the root alone has depth 0)."""
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """Return the number of leaves of the tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total impurity decrease brought by each feature (Gini importance).

        Returns
        -------
        ndarray of float64, shape (n_features,)
        """
        check_is_fitted(self, "tree_")
        return self.tree_.compute_feature_importances()

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = _routing.ALLOW_NAN
        tags.target_tags.multi_output = self._supports_multi_output()
        return tags

    def _html_repr(self) -> str:
        # scikit-learn's Jupyter hook (_repr_html_ and _repr_mimebundle_ both call it).
        return _display.estimator_html(self)


def _validate_data_returns_as_is(estimator: BaseDecisionTree, X: Any) -> bool:
    """Whether predict's ``validate_data`` would return X unchanged, with no warning.

    It does for a numeric 2-D ndarray of the fitted width when no feature names were fitted.
    Such X skips it: it costs about ten times a one-row prediction (the latency rows of
    ``benchmarks/bench_predict.py``).
    """
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype.kind in "biuf"
        and X.shape[0] > 0
        and X.shape[1] == getattr(estimator, "n_features_in_", None)
        and not hasattr(estimator, "feature_names_in_")
    )


def _check_classification_targets(y: np.ndarray) -> None:
    """Raise scikit-learn's ``check_classification_targets`` error unless y holds labels.

    Integer and boolean labels always pass (binary, multiclass or multilabel), and for them
    its ``type_of_target`` would sort all of y (tens of milliseconds on covtype's 465k
    labels): only other dtypes go through it.
    """
    if y.dtype.kind not in "biu":
        check_classification_targets(y)


def _encode_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``np.unique(y, return_inverse=True)`` for a 1-D ``y``.

    Integer labels spanning a range no wider than ``y`` is long are counted instead of
    sorted: on covtype's 465k labels 3 ms instead of np.unique's 8 ms.
    """
    if y.dtype.kind in "iu" and y.ndim == 1 and y.size > 0:
        low = y.min()
        span = int(y.max()) - int(low)
        if span < y.size:
            # Offsets from the lowest label, in a type where neither they nor the labels
            # wrap: int64 holds every signed label; an unsigned offset is at most span.
            work = np.dtype(np.int64) if y.dtype.kind == "i" else y.dtype
            offset = (y.astype(work, copy=False) - work.type(low)).astype(np.int64, copy=False)
            present = np.bincount(offset, minlength=span + 1) > 0
            classes = (np.flatnonzero(present).astype(work) + work.type(low)).astype(y.dtype)
            return classes, (np.cumsum(present) - 1)[offset]
    return np.unique(y, return_inverse=True)


def _labels_per_output(classes: list[np.ndarray], indices: np.ndarray) -> np.ndarray:
    """Return ``classes[o][indices[:, o]]`` as the columns of one array.

    Every output's labels come from the columns of one y array, so they share its dtype.
    """
    out = np.empty(indices.shape, dtype=classes[0].dtype)
    for o, labels in enumerate(classes):
        out[:, o] = labels.take(indices[:, o])
    return out


def _kernel_vector(a: np.ndarray) -> np.ndarray:
    """Return ``a`` as a C-contiguous, writable float64 array (a copy only when needed)."""
    return np.require(a, dtype=np.float64, requirements=("C", "W"))


class DecisionTreeClassifier(ClassifierMixin, BaseDecisionTree):
    """A decision tree classifier grown breadth-first by compiled kernels.

    A drop-in replacement for :class:`sklearn.tree.DecisionTreeClassifier` with the same
    parameters, defaults and fitted attributes. With ``splitter="best"`` and
    ``max_features=None`` it builds scikit-learn's tree, except that ties between equally
    good splits are broken deterministically (lowest feature index, then lowest threshold)
    where scikit-learn picks at random. ``splitter="hist"`` (with ``max_bins``) is an extra:
    a histogram search that is faster on large data.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "gain_ratio"}, default="gini"
        Impurity measure; entropy is in bits and ``log_loss`` is its alias. ``"gain_ratio"``
        is C4.5's rule (Quinlan 1993): each feature's threshold is the one of largest
        information gain; among the features whose gain is at least the average gain of
        the node's candidate features, the one of largest gain ratio (gain / split
        information) is chosen. Node impurities are entropies; C4.5 release 8's
        ``log2(N - 1) / N`` threshold penalty is *not* applied. Best-first growth
        (``max_leaf_nodes``) still orders nodes by impurity decrease. A categorical
        feature takes part with its subset split of largest gain (a binary split, not
        C4.5's one branch per value); its split information is that of the two sides.
    splitter : {"best", "random", "hist"}, default="best"
        ``"best"``: exact search over every threshold (midpoints between consecutive distinct
        values). ``"random"``: scikit-learn's random splitter (Extra-Trees style): for each
        candidate feature one threshold drawn uniformly between the node's smallest and
        largest value (constant features skipped), the best of those kept; reproducible with
        ``random_state``. ``"hist"``: features binned into at most ``max_bins`` quantile bins
        (uint8 codes), split search over per-node histograms; thresholds lie midway between
        training values, and when no feature has more than ``max_bins`` distinct values the
        tree is the exact one (up to ties: two splits equally good in exact arithmetic may
        round apart differently in the two splitters' sums, whose order differs, unless
        those sums are exact, as with class counts and unit or integer weights). Values
        within 1e-7 of their neighbour in a node are tied, as in the exact splitter.
    max_depth : int, default=None
        Deepest level a node may have; ``None`` grows until the leaves are pure or too small.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a fraction of ``n_samples`` if float).
    min_samples_leaf : int or float, default=1
        Fewest samples each child must keep (a fraction of ``n_samples`` if float).
    min_weight_fraction_leaf : float, default=0.0
        Least fraction of the total sample weight each child must keep.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at random at each node; ``None``, or an int of at least the number
        of features, searches all of them (as in scikit-learn).
    random_state : int, RandomState instance or None, default=None
        Seeds the feature draws of ``max_features`` and the thresholds of
        ``splitter="random"``.
    max_leaf_nodes : int, default=None
        Grow best-first (largest impurity decrease first) up to this many leaves.
    min_impurity_decrease : float, default=0.0
        Split only if the weighted impurity decrease is at least this much.
    class_weight : dict, list of dict or "balanced", default=None
        Weights of the classes, multiplied into ``sample_weight``.
    n_jobs : int, default=None
        Threads for fit and predict: ``None`` means 1, ``-1`` all cores. Threads are only
        used for inputs large enough to pay for them; results do not depend on them.
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning, applied after growing
        (scikit-learn's semantics): the weakest link is pruned while its effective alpha is
        at most ``ccp_alpha``; 0 prunes nothing. See :meth:`cost_complexity_pruning_path`,
        :func:`dtjit.prune` and :mod:`dtjit.pruning` for choosing it.
    max_bins : int, default=255
        Most bins per feature for ``splitter="hist"`` (2 to 255); ignored by the other
        splitters. A feature with at most ``max_bins`` distinct values gets one bin per
        value; others get quantile bins computed on at most 200,000 sampled rows.
    mdl_stop : bool, default=False
        Minimum-description-length pre-pruning: a node becomes a leaf when its best split
        fails Fayyad & Irani's MDLP acceptance test, ``Gain > log2(N - 1) / N + Delta / N``
        with ``Delta = log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)]`` (entropies in
        bits, ``k`` the classes present). ``N`` is the node's weighted sample count (its row
        count when unweighted): integer weights act as repeated rows, and a node weighing
        less than 2 is not split (the test needs ``N >= 2``). Weights normalised to sum to 1
        therefore give one leaf, with a warning: scale them to the row count first. (Weights
        whose largest is beyond 2**400 or below 2**-400 are first rescaled by a power of two
        for the criterion's squares; ``N`` counts them rescaled.) The split itself is still
        chosen by ``criterion``. With ``criterion="entropy"`` on one feature, the tree cuts
        where :class:`dtjit.MDLPDiscretizer` cuts.
    categorical_features : array-like of int, str or bool, "from_dtype" or None, default=\
"from_dtype"
        Columns split by category subsets instead of thresholds: column indices, column
        names (a DataFrame), a boolean mask, ``"from_dtype"`` (the default: the pandas
        ``category`` columns of a DataFrame, as in LightGBM; no column of any other input)
        or None (every column numeric). A listed column holds non-negative integer codes,
        or (in a DataFrame) ``category`` / string values mapped to codes at fit time
        (``categories_``); NaN is a missing value. At most 4096 codes per column with
        ``splitter="best"``, 256 bins (codes plus missing) with ``"hist"``; not with
        ``"random"``. Binary classification
        and regression find the optimal subset by ordering categories by class-1 rate /
        mean target; multiclass searches all subsets up to 12 present categories and one
        ordering per class beyond. A category (or NaN) unseen at a node during fit follows
        that node's ``missing_left`` direction at predict time. See
        :mod:`dtjit.engine.sweep_categorical` for the exact rules.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,) or list of ndarray
        The class labels (a list with one array per output when ``n_outputs_ > 1``).
    n_classes_ : int or ndarray of int
        Number of classes (per output when ``n_outputs_ > 1``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X has string column names.
    n_outputs_ : int
        Number of outputs: columns of y (a column vector counts as one).
    max_features_ : int
        The resolved ``max_features``.
    categorical_features_ : ndarray of int64
        Indices of the categorical columns (empty without any).
    categories_ : list of ndarray
        Per categorical column (in the order of ``categorical_features_``), the known
        categories: the values mapped to codes ``0 .. k-1``, or the integer codes seen in fit.
    categories_from_values_ : list of bool
        Per categorical column, whether its values were mapped to codes (pandas category or
        string values) rather than taken as integer codes.
    tree_ : Tree
        The fitted tree as flat arrays (see :class:`dtjit.Tree`), pruned to ``ccp_alpha``.
    feature_importances_ : ndarray of shape (n_features,)
        Normalised impurity decrease per feature.
    features_with_missing_ : ndarray of bool, shape (n_features_in_,)
        Features that had NaN in the training rows (rows of zero weight, which take no part
        in the fit, are not counted). Which splits learned where NaN goes
        (their training rows had NaN in the split feature) is ``tree_.missing_learned``;
        exports show those directions as "or missing".

    Notes
    -----
    Missing values: NaN in X is handled as in scikit-learn 1.9, by every splitter and
    criterion. At each candidate threshold the node's NaN rows are tried on the right, then
    on the left, and the split "every value | NaN" (stored with threshold ``+inf``) is tried
    too; the better side is stored in ``tree_.missing_go_to_left``. At a split whose feature
    had no NaN among the node's training rows, NaN goes to the child with more training
    rows. ``splitter="random"`` draws the side of the NaN rows at random;
    ``splitter="hist"`` gives NaN a bin of its own.

    Multiple outputs: y of shape (n_samples, n_outputs) grows one tree for all outputs, as
    in scikit-learn: a node's impurity is the mean over outputs of each output's impurity,
    ``tree_.value`` has shape (node_count, n_outputs, max_n_classes), ``predict`` returns
    one column per output and ``predict_proba`` a list of arrays. Criteria ``"gini"``,
    ``"entropy"`` and ``"log_loss"``, splitters ``"best"`` and ``"random"``, sample weights,
    ``class_weight`` (a list of dicts or ``"balanced"``), NaN in X and cost-complexity
    pruning work with several outputs; ``splitter="hist"``, ``categorical_features``,
    ``"gain_ratio"`` and ``mdl_stop`` raise ``ValueError``, and so do the exports and plots.

    Compilation: dtjit's kernels are compiled by numba the first time they run and cached
    on disk next to the installed package. The very first ``fit`` / ``predict`` after
    installing takes about 40 s to 2 minutes on a 2-core machine, depending on its CPU;
    later calls, and later Python processes, load the cache (well under a second).
    ``splitter="hist"`` has kernels of its own: its first use compiles for about 25-85 s
    more. Categorical features, ``criterion="absolute_error"``, multi-output y and more than
    256 classes are compiled on their first use (about 7-80 s each), apart from the common
    fit. ``dtjit compile`` (a command) compiles every path ahead of use.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from dtjit import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = DecisionTreeClassifier(max_depth=2).fit(X, y)
    >>> clf.tree_.node_count, clf.get_depth()
    (5, 2)
    >>> clf.predict(X[:3])
    array([0, 0, 0])
    """

    __metadata_request__predict_proba = {"check_input": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        **BaseDecisionTree._parameter_constraints,
        "criterion": [StrOptions({"gini", "entropy", "log_loss", "gain_ratio"})],
        "class_weight": [dict, list, StrOptions({"balanced"}), None],
        "mdl_stop": ["boolean"],
    }

    def __init__(
        self,
        *,
        criterion: str = "gini",
        splitter: str = "best",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_features: int | float | str | None = None,
        random_state: Any = None,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
        class_weight: Any = None,
        n_jobs: int | None = None,
        ccp_alpha: float = 0.0,
        max_bins: int = 255,
        mdl_stop: bool = False,
        categorical_features: Any = "from_dtype",
    ) -> None:
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins
        self.mdl_stop = mdl_stop
        self.categorical_features = categorical_features

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, check_input: bool = True
    ) -> DecisionTreeClassifier:
        """Build the tree from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training input; converted to float32 like scikit-learn does. NaN is a missing
            value (see the class Notes); infinite values raise ``ValueError``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels; several columns fit one tree for several outputs (see Notes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero; ``None`` weighs samples equally.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        self : DecisionTreeClassifier
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, is_classifier=True)

    def predict(self, X: Any, check_input: bool = True) -> np.ndarray:
        """Predict the class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predicted labels (the majority class of each sample's leaf; ties go to the
            first class in ``classes_``); with several outputs, one column per output.
        """
        X = self._validate_X_predict(X)
        tree = self.tree_
        if self.n_outputs_ > 1:
            return _labels_per_output(self.classes_, self._route(X, tree.majority_classes()))
        classes = self.classes_
        if classes.dtype == np.int64 and classes[0] == 0 and classes[-1] == len(classes) - 1:
            # Sorted distinct integers from 0 to k-1 are 0..k-1: each label is its own index,
            # so the kernel writes the predictions (scalar checks: array_equal costs ~3 us).
            return self._route(X, tree.majority_class())
        return self.classes_.take(self._route(X, tree.majority_class()))

    def predict_proba(self, X: Any, check_input: bool = True) -> np.ndarray:
        """Predict class probabilities: the weighted class fractions of each sample's leaf.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes), or list of n_outputs such arrays
            With several outputs, output ``o``'s array has ``n_classes_[o]`` columns.
        """
        X = self._validate_X_predict(X)
        if self.n_outputs_ > 1:
            values = self._route(X, self.tree_.output_values().view(np.int64)).view(np.float64)
            values = values.reshape(X.shape[0], self.n_outputs_, -1)
            return [
                np.ascontiguousarray(values[:, o, :n_classes])
                for o, n_classes in enumerate(self.n_classes_)
            ]
        fractions = self.tree_.class_fractions().view(np.int64)
        return self._route(X, fractions).view(np.float64)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Predict the natural logarithm of the class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes), or list of n_outputs such arrays
            ``-inf`` where a class is absent from the leaf.
        """
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            if self.n_outputs_ > 1:
                return [np.log(p) for p in proba]
            return np.log(proba)

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        # A binary y per output, as scikit-learn (not with the histogram splitter).
        tags.classifier_tags.multi_label = self._supports_multi_output()
        return tags


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    """A decision tree regressor grown breadth-first by compiled kernels.

    A drop-in replacement for :class:`sklearn.tree.DecisionTreeRegressor` (criteria
    ``squared_error``, ``poisson`` and ``absolute_error`` with scikit-learn's semantics).

    Parameters
    ----------
    criterion : {"squared_error", "poisson", "absolute_error"}, default="squared_error"
        Impurity measure. ``"squared_error"``: the weighted variance of the target, leaf
        value the weighted mean. ``"poisson"``: half the mean Poisson deviance
        ``sum(w * y * log(y / mean)) / W``, leaf value the mean; y must be non-negative with
        a positive sum, and splits giving a child a target sum of (about) zero are never
        chosen. ``"absolute_error"``: the mean absolute deviation from the weighted median,
        leaf value the weighted median; O(n log n) per node and feature (Fenwick-tree
        sweep, twice when the node has NaN in the feature); exact and random splitters
        only. Every criterion accepts NaN in X (see Notes). ``"friedman_mse"``, deprecated
        in scikit-learn 1.9, is mapped to ``"squared_error"`` with its FutureWarning.
    splitter : {"best", "random", "hist"}, default="best"
        Exact search over every threshold, one random threshold per candidate feature
        (scikit-learn's random splitter), or histogram search over at most ``max_bins``
        quantile bins per feature (see :class:`DecisionTreeClassifier`); ``"hist"`` does
        not support ``criterion="absolute_error"``.
    max_depth : int, default=None
        Deepest level a node may have.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split.
    min_samples_leaf : int or float, default=1
        Fewest samples each child must keep.
    min_weight_fraction_leaf : float, default=0.0
        Least fraction of the total sample weight each child must keep.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at random at each node; ``None``, or an int of at least the number
        of features, searches all of them (as in scikit-learn).
    random_state : int, RandomState instance or None, default=None
        Seeds the feature draws of ``max_features`` and the thresholds of
        ``splitter="random"``.
    max_leaf_nodes : int, default=None
        Grow best-first up to this many leaves.
    min_impurity_decrease : float, default=0.0
        Split only if the weighted impurity decrease is at least this much.
    n_jobs : int, default=None
        Threads for fit and predict: ``None`` means 1, ``-1`` all cores.
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning, applied after growing
        (scikit-learn's semantics); 0 prunes nothing. See :mod:`dtjit.pruning`.
    max_bins : int, default=255
        Most bins per feature for ``splitter="hist"`` (2 to 255); ignored otherwise.
    categorical_features : array-like of int, str or bool, "from_dtype" or None, default=\
"from_dtype"
        Columns split by category subsets instead of thresholds: column indices, column
        names (a DataFrame), a boolean mask, ``"from_dtype"`` (the default: the pandas
        ``category`` columns of a DataFrame, as in LightGBM; no column of any other input)
        or None (every column numeric). A listed column holds non-negative integer codes,
        or (in a DataFrame) ``category`` / string values mapped to codes at fit time
        (``categories_``); NaN is a missing value. At most 4096 codes per column with
        ``splitter="best"``, 256 bins (codes plus missing) with ``"hist"``; not with
        ``"random"``, nor with
        ``criterion="absolute_error"`` (ordering categories by median does not find the best
        subset). ``squared_error`` and ``poisson`` find the optimal subset by ordering
        categories by mean target. A category (or NaN) unseen at a node during fit follows
        that node's ``missing_left`` direction at predict time. See
        :mod:`dtjit.engine.sweep_categorical` for the exact rules.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X has string column names.
    n_outputs_ : int
        Number of outputs: columns of y (a column vector counts as one).
    max_features_ : int
        The resolved ``max_features``.
    categorical_features_ : ndarray of int64
        Indices of the categorical columns (empty without any).
    categories_ : list of ndarray
        Per categorical column (in the order of ``categorical_features_``), the known
        categories: the values mapped to codes ``0 .. k-1``, or the integer codes seen in fit.
    categories_from_values_ : list of bool
        Per categorical column, whether its values were mapped to codes (pandas category or
        string values) rather than taken as integer codes.
    tree_ : Tree
        The fitted tree as flat arrays, pruned to ``ccp_alpha``.
    feature_importances_ : ndarray of shape (n_features,)
        Normalised impurity decrease per feature.
    features_with_missing_ : ndarray of bool, shape (n_features_in_,)
        Features that had NaN in the training rows (rows of zero weight, which take no part
        in the fit, are not counted). Which splits learned where NaN goes
        (their training rows had NaN in the split feature) is ``tree_.missing_learned``;
        exports show those directions as "or missing".

    Notes
    -----
    Missing values: NaN in X is handled as in scikit-learn 1.9, by every splitter and
    criterion. At each candidate threshold the node's NaN rows are tried on the right, then
    on the left, and the split "every value | NaN" (stored with threshold ``+inf``) is tried
    too; the better side is stored in ``tree_.missing_go_to_left``. At a split whose feature
    had no NaN among the node's training rows, NaN goes to the child with more training
    rows. ``splitter="random"`` draws the side of the NaN rows at random;
    ``splitter="hist"`` gives NaN a bin of its own.

    Multiple outputs: y of shape (n_samples, n_outputs) grows one tree for all outputs, as
    in scikit-learn: a node's impurity is the mean over outputs of the outputs' variances,
    ``tree_.value`` has shape (node_count, n_outputs, 1) and ``predict`` returns one column
    per output. ``"squared_error"``, splitters ``"best"`` and ``"random"``, sample weights,
    NaN in X and cost-complexity pruning work with several outputs; ``splitter="hist"``,
    ``categorical_features``, ``"poisson"`` and ``"absolute_error"`` raise ``ValueError``,
    and so do the exports and plots.

    Compilation: as for :class:`DecisionTreeClassifier` (the two share their kernels): the
    very first ``fit`` / ``predict`` after installing compiles for about 40 s to 2 minutes
    on a 2-core machine, later processes load numba's cache, and ``dtjit compile`` compiles
    every path ahead of use.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from dtjit import DecisionTreeRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = DecisionTreeRegressor(max_depth=3).fit(X, y)
    >>> reg.get_n_leaves()
    8
    """

    _parameter_constraints: dict = {
        **BaseDecisionTree._parameter_constraints,
        "criterion": [StrOptions({"squared_error", "poisson", "absolute_error"})],
    }

    def __init__(
        self,
        *,
        criterion: str = "squared_error",
        splitter: str = "best",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_features: int | float | str | None = None,
        random_state: Any = None,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
        n_jobs: int | None = None,
        ccp_alpha: float = 0.0,
        max_bins: int = 255,
        categorical_features: Any = "from_dtype",
    ) -> None:
        if isinstance(criterion, str) and criterion == "friedman_mse":
            # As scikit-learn 1.9 does, in its constructor only (set_params refuses it).
            criterion = "squared_error"
            warnings.warn(
                'Value `"friedman_mse"` for `criterion` is deprecated and will be '
                'removed in 1.11. It maps to `"squared_error"` as both '
                'were always equivalent. Use `criterion="squared_error"` '
                "to remove this warning.",
                FutureWarning,
                stacklevel=2,
            )
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.n_jobs = n_jobs
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins
        self.categorical_features = categorical_features

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, check_input: bool = True
    ) -> DecisionTreeRegressor:
        """Build the tree from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training input; converted to float32 like scikit-learn does. NaN is a missing
            value (see the class Notes); infinite values raise ``ValueError``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Target values; several columns fit one tree for several outputs (see Notes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        self : DecisionTreeRegressor
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, is_classifier=False)

    def predict(self, X: Any, check_input: bool = True) -> np.ndarray:
        """Predict the target of each sample: the weighted mean of its leaf.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        check_input : bool, default=True
            Kept for scikit-learn compatibility; input is always validated.

        Returns
        -------
        ndarray of float64, shape (n_samples,) or (n_samples, n_outputs)
        """
        # The kernel copies 8-byte payloads without looking at them: float64 means travel
        # as their int64 bit patterns, so one compiled kernel serves every prediction.
        X = self._validate_X_predict(X)
        if self.n_outputs_ > 1:
            means = self.tree_.output_values().view(np.int64)
            return self._route(X, means).view(np.float64)
        means = self.tree_.node_means().view(np.int64)
        return self._route(X, means).view(np.float64)

    def _compute_partial_dependence_recursion(self, grid: Any, target_features: Any) -> np.ndarray:
        """Partial dependence at ``grid`` by a weighted walk of the tree, reading no data.

        ``sklearn.inspection.partial_dependence`` calls this for its ``method="recursion"``,
        its default for regression trees (``dtjit.predict.partial_dependence``).

        Parameters
        ----------
        grid : array-like of shape (n_points, n_target_features)
            Values of the target features, one column per feature (taken as float32).
        target_features : array-like of int, shape (n_target_features,)
            Indices of the target features.

        Returns
        -------
        ndarray of float64, shape (n_points,), or (n_outputs, n_points) for several outputs
            The mean prediction over the training rows with the target features set to each
            grid point, weighted by ``sample_weight``.
        """
        check_is_fitted(self, "tree_")
        return partial_dependence.partial_dependence_recursion(self, grid, target_features)


def _check_poisson_root(y: np.ndarray, sample_weight: np.ndarray) -> None:
    """Reject a Poisson fit whose weighted target sum leaves every deviance undefined.

    At a weighted sum of y of at most ``POISSON_EPSILON`` the root's deviance is infinite
    (scikit-learn's rule) and no split can have two children with a positive sum: scikit-learn
    returns that one node with an infinite impurity; a clear error serves better.
    """
    total = float(np.dot(sample_weight, y.reshape(-1)))
    if not total > POISSON_EPSILON:
        raise ValueError(
            f"The weighted sum of y is {total:.3g}; Poisson regression needs it above "
            f"{POISSON_EPSILON:.3g}: give rows with y > 0 a positive sample_weight, or scale "
            "up y or sample_weight."
        )


def _check_regression_criterion(criterion: str, splitter: str, y: np.ndarray) -> None:
    """Reject targets and splitters a regression criterion cannot work with."""
    if criterion == "poisson":
        if np.any(y < 0):
            raise ValueError(
                "Some value(s) of y are negative which is not allowed for Poisson regression."
            )
        if not np.sum(y) > 0:
            raise ValueError("Sum of y is not positive which is necessary for Poisson regression.")
    if criterion == "absolute_error" and splitter == "hist":
        raise ValueError(
            "criterion='absolute_error' supports splitter='best' and splitter='random', not "
            "'hist' (a histogram of bins cannot give the medians the criterion needs)."
        )


# scikit-learn's export_text, export_graphviz and plot_tree accept only instances of its tree
# classes (ABCs), then read only tree_ (in its vocabulary), classes_ and criterion: registered
# as virtual subclasses, dtjit's trees pass that check without inheriting scikit-learn's fit.
sklearn_tree.DecisionTreeClassifier.register(DecisionTreeClassifier)
sklearn_tree.DecisionTreeRegressor.register(DecisionTreeRegressor)
