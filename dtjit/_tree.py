"""The storage contract (:class:`Tree`) and its invariant checker (model files: ``_persist``)."""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from .engine.jit import TREE_LEAF, TREE_UNDEFINED
from .predict.walk import PackedTree, node_depths, pack_nodes

# name -> (dtype, ndim) of every per-node array; the order is the file order.
NODE_ARRAYS: dict[str, tuple[np.dtype, int]] = {
    "feature": (np.dtype(np.int32), 1),
    "threshold": (np.dtype(np.float64), 1),
    "left": (np.dtype(np.int32), 1),
    "right": (np.dtype(np.int32), 1),
    "value": (np.dtype(np.float64), 3),
    "impurity": (np.dtype(np.float64), 1),
    "n_node_samples": (np.dtype(np.int64), 1),
    "weighted_n_node_samples": (np.dtype(np.float64), 1),
    "missing_left": (np.dtype(np.uint8), 1),
}


# Subset splits of categorical features (optional: a tree without them, and a model file
# written before they existed, has all nodes numeric). ``categorical_set`` is per node,
# ``category_bits`` one row per stored set.
CATEGORICAL_ARRAYS: dict[str, tuple[np.dtype, int]] = {
    "categorical_set": (np.dtype(np.int32), 1),
    "category_bits": (np.dtype(np.uint64), 2),
}

# Where the builder learned the NaN direction of a split (optional: unknown in trees and model
# files from before it was recorded, and in scikit-learn's trees).
MISSING_LEARNED = "missing_learned"
MISSING_LEARNED_DTYPE = np.dtype(np.uint8)

# Children's weighted_n_node_samples add up to their parent's within this relative error (the
# builders sum the same weights in different orders).
WEIGHT_SUM_RTOL = 1e-7


class TreeFormatError(ValueError):
    """A tree's arrays, or a model file, break the storage contract."""


class Tree:
    """A fitted binary decision tree stored as flat parallel arrays.

    All arrays have length ``node_count``. Node ids are in breadth-first order: the root is 0,
    and the children of the ``k``-th split node (in id order) are ``2k + 1`` (left) and
    ``2k + 2`` (right). So every child id is larger than its parent's, all nodes of depth
    ``d`` come before those of depth ``d + 1``, and ``right == left + 1``.

    ==========================  =============================  ====================================
    array                       dtype, shape                   meaning
    ==========================  =============================  ====================================
    ``feature``                 int32                          split feature; ``-2`` at leaves
    ``threshold``               float64                        a row goes left iff
                                                               ``x[feature] <= threshold``; ``-2``
                                                               at leaves; ``+inf`` splits the
                                                               values from the NaN rows
    ``left``, ``right``         int32                          child ids; ``-1`` at leaves
    ``value``                   float64 (n, n_outputs,         class fractions (classification)
                                max_n_classes)                 or mean target (regression)
    ``impurity``                float64                        criterion value of the node
    ``n_node_samples``          int64                          training rows reaching the node
    ``weighted_n_node_samples`` float64                        their total sample weight
    ``missing_left``            uint8                          1 if a NaN goes left at this split
                                                               (learned where the node had NaN
                                                               in the feature, else the child
                                                               with more training rows)
    ``categorical_set``         int32                          row of ``category_bits`` of a
                                                               categorical split, else ``-1``
    ``missing_learned``         uint8 (optional)               1 at a threshold split whose
                                                               training rows had NaN in its
                                                               feature (``missing_left`` was
                                                               learned), else 0
    ==========================  =============================  ====================================

    Categorical (subset) splits: ``category_bits`` is a uint64 table of shape
    ``(n_sets, n_words)``; at a node with ``categorical_set[node] == k >= 0`` a row whose
    category code ``c`` has bit ``c`` set in row ``k`` (bit ``c & 63`` of word ``c >> 6``)
    goes left, every other row goes right, except that NaN and codes ``>= 64 * n_words``
    follow ``missing_left``. Categories never seen at a node during fit (in particular
    categories unseen in fit) have their bit set to ``missing_left``'s side. The
    ``threshold`` of a categorical node is NaN: there is no threshold, and a reader that
    ignores ``categorical_set`` and routes ``x <= threshold`` sends every row right instead of
    guessing. Both arrays are optional at construction (default: no categorical split).

    The scikit-learn names are available too (``children_left``, ``children_right``,
    ``missing_go_to_left``, ``node_count``, ``max_depth``, ``n_leaves``, ``n_outputs``,
    ``n_classes``, ``max_n_classes``, ``n_features``), so ``sklearn.tree.export_text`` and
    ``sklearn.tree.plot_tree`` read a dtjit estimator unchanged; so are its methods
    ``compute_feature_importances`` and, on float32 rows, ``apply``, ``predict`` and
    ``decision_path``.

    Parameters
    ----------
    n_features : int
        Number of features the tree was fitted on.
    n_classes : array-like of int, shape (n_outputs,)
        Classes per output; ``[1]`` for regression.
    categorical_set : ndarray of int32, shape (node_count,), optional
        Default: all ``-1`` (no categorical split).
    category_bits : ndarray of uint64, shape (n_sets, n_words), optional
        Default: an empty ``(0, 1)`` table.
    missing_learned : ndarray of uint8, shape (node_count,), optional
        Default: None, unknown (trees from before it was recorded): exports then say "or
        missing" at every split on a feature that had NaN in training.
    **arrays : ndarray
        The other arrays of the table above, with exactly those dtypes.

    Raises
    ------
    TreeFormatError
        If the arrays break any invariant (see :func:`check_tree`).

    Notes
    -----
    The tree keeps read-only copies of the arrays it is given: they are validated once, at
    construction, and the compiled traversal trusts them from then on. The copies are views
    of immutable memory, so ``setflags(write=True)`` raises, and the attributes (arrays,
    ``n_features``, ``n_classes``) cannot be reassigned. To change a tree, build a new one
    from edited copies.
    """

    def __init__(
        self,
        *,
        n_features: int,
        n_classes: Any,
        categorical_set: np.ndarray | None = None,
        category_bits: np.ndarray | None = None,
        missing_learned: np.ndarray | None = None,
        **arrays: np.ndarray,
    ) -> None:
        if categorical_set is None:
            feature = arrays.get("feature")
            n_nodes = feature.shape[0] if isinstance(feature, np.ndarray) else 0
            categorical_set = np.full(n_nodes, -1, dtype=np.int32)
        if category_bits is None:
            category_bits = np.zeros((0, 1), dtype=np.uint64)
        missing = set(NODE_ARRAYS) - set(arrays)
        extra = set(arrays) - set(NODE_ARRAYS)
        if missing or extra:
            raise TreeFormatError(
                f"Tree arrays: missing {sorted(missing)}, unexpected {sorted(extra)}."
            )
        try:
            self._n_features = int(n_features)
            self._n_classes = _frozen(np.asarray(n_classes, dtype=np.intp).reshape(-1))
        except (OverflowError, TypeError, ValueError) as exc:
            raise TreeFormatError(f"Invalid n_features or n_classes: {exc}") from exc
        arrays = {**arrays, "categorical_set": categorical_set, "category_bits": category_bits}
        # Private copies that nobody can change: the arrays are checked once, here, and the
        # compiled traversal trusts them afterwards (an edited child index would make predict
        # read out of bounds). A writeable flag set to False can be set back by the caller;
        # a view of an immutable ``bytes`` object cannot be made writeable at all.
        self._arrays: dict[str, np.ndarray | None] = {
            name: _frozen(a) if isinstance(a, np.ndarray) else a for name, a in arrays.items()
        }
        self._arrays[MISSING_LEARNED] = (
            _frozen(missing_learned) if isinstance(missing_learned, np.ndarray) else missing_learned
        )
        check_tree(self)
        self._depth = _frozen(node_depths(self.left, self.right))
        # Arrays derived from the tree for prediction, built on first use and kept: the tree
        # never changes, and rebuilding them per call would dominate small predictions.
        self._derived: dict[str, Any] = {}

    # scikit-learn vocabulary -------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """Number of features the tree was fitted on (read-only)."""
        return self._n_features

    @property
    def n_classes(self) -> np.ndarray:
        """Classes per output, intp (read-only; ``[1]`` for regression)."""
        return self._n_classes

    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return int(self.feature.shape[0])

    capacity = node_count

    @property
    def children_left(self) -> np.ndarray:
        """Left child ids (``-1`` at leaves)."""
        return self.left

    @property
    def children_right(self) -> np.ndarray:
        """Right child ids (``-1`` at leaves)."""
        return self.right

    @property
    def missing_go_to_left(self) -> np.ndarray:
        """Where NaN goes at each split (scikit-learn's name of ``missing_left``)."""
        return self.missing_left

    @property
    def n_outputs(self) -> int:
        """Number of outputs."""
        return int(self.value.shape[1])

    @property
    def max_n_classes(self) -> int:
        """Largest number of classes over outputs (1 for regression)."""
        return int(self.value.shape[2])

    @property
    def max_depth(self) -> int:
        """Depth of the deepest leaf (the root has depth 0)."""
        return int(self._depth.max())

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.left == TREE_LEAF))

    @property
    def node_depth(self) -> np.ndarray:
        """Depth of every node."""
        return self._depth

    # computations -------------------------------------------------------------------------
    def compute_feature_importances(self, normalize: bool = True) -> np.ndarray:
        """Mean decrease in impurity of each feature (scikit-learn's definition).

        Parameters
        ----------
        normalize : bool, default=True
            Scale the importances to sum to 1 (when any is positive).

        Returns
        -------
        ndarray of float64, shape (n_features,)
        """
        split = np.flatnonzero(self.left != TREE_LEAF)
        w = self.weighted_n_node_samples
        imp = self.impurity
        left, right = self.left[split], self.right[split]
        # scikit-learn's order of operations, unless weight * impurity overflows (targets
        # near the fit's 1e154 limit: inf - inf = NaN); then weights as shares of the root's.
        for scale in (1.0, w[0]):
            with np.errstate(over="ignore", invalid="ignore"):
                share = w / scale
                decrease = share[split] * imp[split] - share[left] * imp[left]
                decrease -= share[right] * imp[right]
                importances = np.bincount(
                    self.feature[split], weights=decrease, minlength=self.n_features
                ).astype(np.float64)
                importances /= w[0] / scale
            if np.isfinite(importances).all():
                break
        if normalize:
            total = importances.sum()
            if total > 0.0:
                importances /= total
        return importances

    # scikit-learn's low-level Tree methods ---------------------------------------------------
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Return the leaf each row of ``X`` reaches, as scikit-learn's ``Tree.apply``.

        Parameters
        ----------
        X : ndarray of float32, shape (n_samples, n_features or more)
            Float32 only, like scikit-learn's low-level tree (the estimators' ``apply``
            converts any input); columns past ``n_features`` are ignored, as there. NaN
            follows each split's ``missing_left``; the columns of categorical splits hold
            category codes, unchecked (the estimators refuse non-integer and negative
            codes; here they route as their integer part would). Unlike scikit-learn's
            tree, infinity is refused (as by the estimators) and so is sparse X.

        Returns
        -------
        ndarray of intp, shape (n_samples,)
            Leaf ids.
        """
        from .predict import routing

        rows = self._checked_rows(X)
        return routing.route(self, rows, self.node_ids(), 1).astype(np.intp, copy=False)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Return the ``value`` of the leaf each row reaches, as scikit-learn's ``Tree.predict``.

        Parameters
        ----------
        X : ndarray of float32, shape (n_samples, n_features)
            As for :meth:`apply`.

        Returns
        -------
        ndarray of float64
            Shape (n_samples, max_n_classes) for one output, else (n_samples, n_outputs,
            max_n_classes): class fractions, or the mean target (``max_n_classes == 1``).
        """
        out = self.value.take(self.apply(X), axis=0)
        return out.reshape(out.shape[0], self.max_n_classes) if self.n_outputs == 1 else out

    def decision_path(self, X: np.ndarray) -> Any:
        """Return the nodes each row visits, as scikit-learn's ``Tree.decision_path``.

        Parameters
        ----------
        X : ndarray of float32, shape (n_samples, n_features)
            As for :meth:`apply`.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_samples, node_count)
            Entry ``(i, j)`` is 1 iff row ``i`` passes through node ``j``.
        """
        from .predict import routing

        return routing.decision_path(self, self._checked_rows(X))

    def _checked_rows(self, X: Any) -> np.ndarray:
        """Return X's first ``n_features`` columns; refuse what scikit-learn's ``Tree`` does.

        The compiled traversal reads ``X[i, feature[node]]`` unchecked, so a narrower X is
        refused here (scikit-learn's Tree reads past its rows), as is sparse X (refused by
        every dtjit method).
        """
        if hasattr(X, "tocsr"):
            raise TypeError("A sparse X is not supported; pass a dense float32 ndarray.")
        if not isinstance(X, np.ndarray):
            raise ValueError(f"X should be in np.ndarray format, got {type(X)}")
        if X.dtype != np.float32:
            raise ValueError(f"X.dtype should be np.float32, got {X.dtype}")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
        if X.shape[1] < self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} columns; this tree reads {self.n_features} features."
            )
        return X[:, : self.n_features]

    def _derive(self, name: str, build: Any) -> Any:
        if name not in self._derived:
            self._derived[name] = build()
        return self._derived[name]

    def packed_nodes(self) -> PackedTree:
        """Return the tree in the compact form the traversal kernels read (built once).

        Returns
        -------
        PackedTree
            8-byte records (float32 threshold rounded down, so comparisons on float32 rows
            are exact; child, feature and NaN direction packed in 32 bits) placed by cache
            line, the walk's phases and the tree id of each slot; see
            :func:`dtjit.predict.walk.pack_nodes`.
        """
        return self._derive(
            "packed",
            lambda: pack_nodes(
                self.feature,
                self.threshold,
                self.left,
                self.missing_left,
                self.n_features,
                self.n_node_samples,
            ),
        )

    def node_ids(self) -> np.ndarray:
        """Return ``0 .. node_count - 1`` as int64 (what ``apply`` writes per leaf; built once)."""
        return self._derive("node_ids", lambda: np.arange(self.node_count, dtype=np.int64))

    def majority_class(self) -> np.ndarray:
        """Return the most weighted class index of every node as int64 (first on ties; built once).

        A per-node label lets ``predict`` write labels during the traversal instead of
        building the (n_samples, n_classes) probability matrix first.
        """
        return self._derive(
            "majority", lambda: np.argmax(self.value[:, 0, :], axis=1).astype(np.int64)
        )

    def class_fractions(self) -> np.ndarray:
        """Return ``value[:, 0, :]`` as a contiguous (n_nodes, n_classes) array (built once).

        ``predict_proba`` has the traversal kernel copy these rows (as int64 bit patterns)
        straight into its output.
        """
        return self._derive("fractions", lambda: np.array(self.value[:, 0, :], order="C"))

    def majority_classes(self) -> np.ndarray:
        """Return the most weighted class index of every node and output, (n_nodes, n_outputs).

        int64, C order, first class on ties (built once): ``predict`` of a multi-output
        classifier routes these rows, one label index per output.
        """
        return self._derive(
            "majorities", lambda: np.ascontiguousarray(np.argmax(self.value, axis=2), np.int64)
        )

    def output_values(self) -> np.ndarray:
        """Return ``value`` as a contiguous (n_nodes, n_outputs * max_n_classes) array.

        Built once; row ``node`` holds every output's class fractions (or means), so one
        traversal serves all outputs of a multi-output tree.
        """
        return self._derive(
            "output_values", lambda: np.array(self.value.reshape(self.node_count, -1), order="C")
        )

    def node_means(self) -> np.ndarray:
        """Return ``value[:, 0, 0]`` as a contiguous float64 array (regression; built once)."""
        return self._derive("means", lambda: np.array(self.value[:, 0, 0], order="C"))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Return the per-node arrays by name (read-only views)."""
        return {name: getattr(self, name) for name in NODE_ARRAYS}

    def categorical_arrays(self) -> dict[str, np.ndarray]:
        """Return ``categorical_set`` and ``category_bits`` by name (read-only views)."""
        return {name: getattr(self, name) for name in CATEGORICAL_ARRAYS}

    def optional_arrays(self) -> dict[str, np.ndarray]:
        """Return the optional per-node arrays the tree has (``missing_learned``) by name."""
        if self.missing_learned is None:
            return {}
        return {MISSING_LEARNED: self.missing_learned}

    @property
    def has_categorical_splits(self) -> bool:
        """True when some node splits on a category subset (computed once: predict asks)."""
        return self._derive("has_categorical", lambda: bool((self.categorical_set >= 0).any()))

    def category_set(self, node: int) -> np.ndarray:
        """Return the category codes that go left at categorical split ``node`` (int64).

        Only codes below ``64 * n_words`` are listed; for a node whose missing values go
        left that includes every code unseen at the node during fit.
        """
        k = int(self.categorical_set[node])
        if k < 0:
            raise ValueError(f"Node {node} is not a categorical split.")
        bits = np.unpackbits(self.category_bits[k].astype("<u8").view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int64)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "n_features": self.n_features,
            "n_classes": self.n_classes,
            **self.to_arrays(),
            **self.categorical_arrays(),
            **self.optional_arrays(),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def _repr_html_(self) -> str:
        """Draw the tree in Jupyter (its top levels when it is large; text for multi-output)."""
        from ._display import tree_html  # the display code is not needed to predict
        from ._view import resolve_view

        if self.n_outputs != 1:
            return f"<pre>{html.escape(repr(self))}</pre>"
        return tree_html(resolve_view(self))

    def __repr__(self) -> str:
        return (
            f"Tree(node_count={self.node_count}, max_depth={self.max_depth}, "
            f"n_leaves={self.n_leaves}, n_features={self.n_features}, "
            f"n_outputs={self.n_outputs})"
        )


def _frozen(a: np.ndarray) -> np.ndarray:
    """Return a C-ordered copy of ``a`` that can never be made writeable.

    The copy is a view of a ``bytes`` object, which owns no writeable memory, so numpy
    refuses ``setflags(write=True)`` on it and on every view of it. Object arrays (refused
    by :func:`check_tree` anyway) hold references, not data, and are only copied read-only.
    """
    if a.dtype.hasobject:
        a = a.copy()
        a.setflags(write=False)
        return a
    return np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype).reshape(a.shape)


def _stored_array(name: str) -> property:
    """Return a read-only attribute for the stored array ``name`` (assignment raises)."""

    def get(self: Tree) -> Any:
        return self._arrays[name]

    return property(get, doc=f"``{name}`` (read-only; see the class docstring).")


for _name in (*NODE_ARRAYS, *CATEGORICAL_ARRAYS, MISSING_LEARNED):
    setattr(Tree, _name, _stored_array(_name))
del _name


def _fail(message: str) -> None:
    raise TreeFormatError(message)


def check_tree(tree: Tree) -> None:
    """Check every invariant of the storage contract; raise :class:`TreeFormatError` if broken.

    Checked: dtypes and shapes; leaf markers consistent across ``feature``, ``left``,
    ``right`` and ``threshold`` (``-1`` children, ``-2`` feature and threshold); split
    features in range; the children of the ``k``-th split node are exactly ``2k + 1`` and
    ``2k + 2`` (which implies every index is in range, every node but the root has exactly
    one parent, no cycles, and breadth-first order); finite (or ``+inf``) thresholds and
    finite values; sample counts and weights that add up from children to parents (weights
    within a relative ``WEIGHT_SUM_RTOL``), and a root of positive weight.

    Parameters
    ----------
    tree : Tree
        The tree (or any object with the same attributes) to check.
    """
    n_nodes = None
    for name, (dtype, ndim) in NODE_ARRAYS.items():
        a = _checked_array(tree, name, dtype, ndim)
        if n_nodes is None:
            n_nodes = a.shape[0]
        elif a.shape[0] != n_nodes:
            _fail(f"Tree.{name} has {a.shape[0]} nodes, Tree.feature has {n_nodes}.")
    if n_nodes == 0:
        _fail("A tree needs at least one node.")
    n_classes = tree.n_classes
    if n_classes.ndim != 1 or n_classes.shape[0] < 1:
        _fail(f"n_classes must list at least one output, got {n_classes.tolist()}.")
    if n_classes.shape[0] != tree.value.shape[1] or n_classes.min() < 1:
        _fail(f"n_classes {n_classes.tolist()} does not match value shape {tree.value.shape}.")
    if tree.value.shape[2] != n_classes.max():
        _fail(f"value has {tree.value.shape[2]} class columns, n_classes says {n_classes.max()}.")
    if not 1 <= tree.n_features <= np.iinfo(np.int32).max:
        _fail(f"n_features must be in [1, 2**31 - 1], got {tree.n_features}.")

    feature, left, right = tree.feature, tree.left, tree.right
    is_leaf = left == TREE_LEAF
    _first_bad(is_leaf != (right == TREE_LEAF), "left and right disagree on being a leaf")
    _first_bad(is_leaf & (feature != TREE_UNDEFINED), f"a leaf's feature must be {TREE_UNDEFINED}")
    _first_bad(
        is_leaf & (tree.threshold != TREE_UNDEFINED), f"a leaf's threshold must be {TREE_UNDEFINED}"
    )
    split = np.flatnonzero(~is_leaf)
    n_split = split.shape[0]
    if n_nodes != 2 * n_split + 1:
        _fail(f"{n_nodes} nodes but {n_split} split nodes: a binary tree has 2 * splits + 1 nodes.")
    expected_left = 2 * np.arange(n_split) + 1
    _first_bad(
        left[split] != expected_left,
        "children are not in breadth-first order (the k-th split node's left child must be 2k+1)",
        where=split,
    )
    _first_bad(right[split] != expected_left + 1, "right child must be left + 1", where=split)
    _first_bad(
        (feature[split] < 0) | (feature[split] >= tree.n_features),
        f"split feature out of range [0, {tree.n_features})",
        where=split,
    )
    _check_categorical(tree, n_nodes, is_leaf, split)
    categorical_set = getattr(tree, "categorical_set", np.full(n_nodes, -1))
    numeric = split[categorical_set[split] < 0]
    # +inf is scikit-learn's threshold for "every value left, NaN right" (NaN <= inf is false).
    numeric_threshold = tree.threshold[numeric]
    _first_bad(
        np.isnan(numeric_threshold) | (numeric_threshold == -np.inf),
        "split threshold must be finite or +inf",
        where=numeric,
    )
    _first_bad(~np.isfinite(tree.value.reshape(n_nodes, -1)).all(axis=1), "value is not finite")
    _first_bad(~np.isfinite(tree.impurity), "impurity is not finite")
    w = tree.weighted_n_node_samples
    _first_bad(~np.isfinite(w) | (w < 0), "weighted_n_node_samples must be finite and >= 0")
    if not w[0] > 0:  # every share (importances, partial dependence) divides by it
        _fail("Invalid tree at node 0: weighted_n_node_samples of the root must be > 0.")
    with np.errstate(over="ignore"):  # sums near the float64 maximum: inf, caught as a mismatch
        children = w[left[split]] + w[right[split]]
    _first_bad(
        ~(np.abs(children - w[split]) <= WEIGHT_SUM_RTOL * w[split]),
        "children's weighted_n_node_samples do not add up to the parent's",
        where=split,
    )
    n = tree.n_node_samples
    _first_bad(n < 1, "n_node_samples must be >= 1")
    _first_bad(
        n[left[split]] + n[right[split]] != n[split],
        "children's n_node_samples do not add up to the parent's",
        where=split,
    )
    _first_bad(tree.missing_left > 1, "missing_left must be 0 or 1")
    _check_missing_learned(tree, n_nodes, is_leaf)


def _check_missing_learned(tree: Tree, n_nodes: int, is_leaf: np.ndarray) -> None:
    """Check the optional ``missing_learned``: uint8, one per node, 0 or 1, 0 at leaves."""
    learned = getattr(tree, MISSING_LEARNED, None)
    if learned is None:
        return
    if not isinstance(learned, np.ndarray) or learned.dtype != MISSING_LEARNED_DTYPE:
        _fail(f"Tree.{MISSING_LEARNED} must be a uint8 numpy array.")
    if learned.shape != (n_nodes,):
        _fail(f"Tree.{MISSING_LEARNED} has shape {learned.shape}, expected ({n_nodes},).")
    _first_bad(learned > 1, f"{MISSING_LEARNED} must be 0 or 1")
    _first_bad(is_leaf & (learned != 0), f"a leaf's {MISSING_LEARNED} must be 0")


def _check_categorical(tree: Tree, n_nodes: int, is_leaf: np.ndarray, split: np.ndarray) -> None:
    """Check ``categorical_set`` / ``category_bits``: dtypes, shapes, indices, NaN thresholds.

    An object with neither attribute (e.g. a scikit-learn tree) has no categorical splits.
    """
    if not any(hasattr(tree, name) for name in CATEGORICAL_ARRAYS):
        return
    for name, (dtype, ndim) in CATEGORICAL_ARRAYS.items():
        _checked_array(tree, name, dtype, ndim)
    sets, bits = tree.categorical_set, tree.category_bits
    if sets.shape[0] != n_nodes:
        _fail(f"Tree.categorical_set has {sets.shape[0]} nodes, Tree.feature has {n_nodes}.")
    if bits.shape[1] < 1:
        _fail("Tree.category_bits needs at least one word per set.")
    _first_bad(is_leaf & (sets != -1), "a leaf's categorical_set must be -1")
    _first_bad(
        (sets < -1) | (sets >= bits.shape[0]),
        f"categorical_set out of range [-1, {bits.shape[0]})",
    )
    categorical = split[sets[split] >= 0]
    _first_bad(
        ~np.isnan(tree.threshold[categorical]),
        "a categorical split's threshold must be NaN",
        where=categorical,
    )


def _checked_array(tree: Tree, name: str, dtype: np.dtype, ndim: int) -> np.ndarray:
    """Return ``tree.<name>`` after checking it is a numpy array of that dtype and rank."""
    a = getattr(tree, name, None)
    if not isinstance(a, np.ndarray):
        _fail(f"Tree.{name} must be a numpy array, got {type(a).__name__}.")
    if a.dtype != dtype:
        _fail(f"Tree.{name} must have dtype {dtype}, got {a.dtype}.")
    if a.ndim != ndim:
        _fail(f"Tree.{name} must be {ndim}-D, got shape {a.shape}.")
    return a


def _first_bad(mask: np.ndarray, what: str, where: np.ndarray | None = None) -> None:
    bad = np.flatnonzero(mask)
    if bad.size:
        node = int(bad[0] if where is None else where[bad[0]])
        _fail(f"Invalid tree at node {node}: {what}.")


# The model-file format moved to ._persist (one module owns it); these names stay importable
# from here for code written before the move.
_MOVED_TO_PERSIST = frozenset(
    {
        "FORMAT_NAME",
        "FORMAT_VERSION",
        "KNOWN_MEMBERS",
        "OUTPUT_CLASSES_MEMBER",
        "read_model_file",
        "tree_from_arrays",
        "write_model_file",
    }
)


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_PERSIST:
        from . import _persist

        return getattr(_persist, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
