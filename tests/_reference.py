"""Slow, obvious pure-Python/numpy reference decision tree (no numba).

The compiled kernels of :mod:`dtjit` are tested against this module, so it favours clarity
over speed: every split candidate recomputes its sums from scratch, nodes are plain Python
objects, and it is meant for datasets of at most a few hundred rows.

The rules are scikit-learn's "best" splitter rules (``sklearn/tree/_splitter.pyx``,
``_partitioner.pyx``, ``_criterion.pyx`` and the builders in ``_tree.pyx``):

* ``X`` is float32; thresholds, impurities and sums are float64.
* A node is a leaf if ``depth >= max_depth``, ``n < min_samples_split``,
  ``n < 2 * min_samples_leaf``, ``W < 2 * min_weight_leaf`` or ``impurity <= EPS``.
* For every feature in increasing order, the node's samples are sorted by that feature. The
  feature is constant if ``max <= min + FEATURE_THRESHOLD`` (addition in float32). Position
  ``p`` (left = the first ``p`` sorted samples) is a candidate iff
  ``v[p] > v[p - 1] + FEATURE_THRESHOLD`` (float32), both children keep at least
  ``min_samples_leaf`` samples and at least ``min_weight_leaf`` weight.
* Candidates are scored by scikit-learn's proxy; the best is the first one with the strictly
  greatest proxy (lowest feature, then lowest threshold on ties).
* ``threshold = float(v[p - 1]) / 2.0 + float(v[p]) / 2.0``; rows with ``x <= threshold`` go
  left.
* The node stays a leaf if ``improvement + EPS < min_impurity_decrease``.
* ``max_leaf_nodes`` switches to best-first growth (largest improvement first, ties to the
  node created first).

One scikit-learn rule the list above does not spell out is also reproduced: rows whose
sample weight is exactly 0 are dropped before building (scikit-learn's splitter never puts
them in the tree, so they count neither in ``n_node_samples`` nor in ``min_samples_leaf``).

Sums over a set of rows are computed with :func:`math.fsum` (the correctly rounded exact
sum), so they do not depend on the order of the rows; with integer or dyadic data they equal
the sum in any order.

Node ids are breadth-first: the root is 0 and the children of the ``k``-th internal node (in
id order) are ``2k + 1`` (left) and ``2k + 2`` (right).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: scikit-learn's ``EPSILON``: tolerance of ``impurity <= EPS`` and of the
#: ``min_impurity_decrease`` test.
EPS = float(np.finfo(np.float64).eps)

#: scikit-learn's ``FEATURE_THRESHOLD``; it is a float32 and is added to float32 values.
FEATURE_THRESHOLD = np.float32(1e-7)

#: Sentinels of scikit-learn's ``Tree``.
TREE_LEAF = -1
TREE_UNDEFINED = -2

CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss")
REGRESSION_CRITERIA = ("squared_error",)

#: Arrays of a tree dict, in the order :func:`assert_tree_equal` reports them.
TREE_ARRAYS = (
    "feature",
    "threshold",
    "left",
    "right",
    "value",
    "impurity",
    "n_node_samples",
    "weighted_n_node_samples",
)


# --------------------------------------------------------------------------------------
# Node statistics and impurities
# --------------------------------------------------------------------------------------


@dataclass
class _Stats:
    """Sufficient statistics of a set of rows.

    Attributes
    ----------
    n : int
        Number of rows.
    weight : float
        Sum of the sample weights ``W``.
    counts : numpy.ndarray or None
        Classification: weighted class counts ``c_k`` (float64, length ``n_classes``).
    s : float
        Regression: ``sum(w * y)``.
    q : float
        Regression: ``sum(w * y * y)``.
    """

    n: int
    weight: float
    counts: np.ndarray | None = None
    s: float = 0.0
    q: float = 0.0
    constant: bool = False


def _stats(rows, y, w, is_classifier, n_classes):
    """Compute the statistics of ``rows`` from scratch.

    Parameters
    ----------
    rows : numpy.ndarray of int
        Row indices.
    y : numpy.ndarray
        Class codes (classification) or float64 targets (regression).
    w : numpy.ndarray of float64
        Sample weights.
    is_classifier : bool
        Which statistics to compute.
    n_classes : int
        Number of classes (ignored for regression).

    Returns
    -------
    _Stats
    """
    rows = np.asarray(rows, dtype=np.intp)
    wr = w[rows]
    yr = y[rows]
    weight = math.fsum(wr)
    if is_classifier:
        counts = np.array([math.fsum(wr[yr == k]) for k in range(n_classes)], dtype=np.float64)
        return _Stats(n=len(rows), weight=weight, counts=counts)
    wy = wr * yr
    constant = bool(len(yr) == 0 or yr.min() == yr.max())
    return _Stats(
        n=len(rows), weight=weight, s=math.fsum(wy), q=math.fsum(wy * yr), constant=constant
    )


def _log2(x):
    """Base-2 logarithm as scikit-learn computes it: ``ln(x) / ln(2)``."""
    return math.log(x) / math.log(2.0)


def gini(counts, weight):
    """Gini impurity ``1 - sum(c_k * c_k) / (W * W)``.

    Parameters
    ----------
    counts : sequence of float
        Weighted class counts ``c_k``.
    weight : float
        Node weight ``W``.

    Returns
    -------
    float
    """
    sq = 0.0
    for c in counts:
        sq += float(c) * float(c)
    return 1.0 - sq / (weight * weight)


def entropy(counts, weight):
    """Shannon entropy in bits, ``-sum(p_k * log2(p_k))`` over classes with ``c_k > 0``.

    Parameters
    ----------
    counts : sequence of float
        Weighted class counts ``c_k``.
    weight : float
        Node weight ``W``.

    Returns
    -------
    float
    """
    ent = 0.0
    for c in counts:
        if c > 0.0:
            p = float(c) / weight
            ent -= p * _log2(p)
    return ent


def squared_error(s, q, weight):
    """Weighted variance ``q / W - (s / W) ** 2``.

    Parameters
    ----------
    s : float
        ``sum(w * y)``.
    q : float
        ``sum(w * y * y)``.
    weight : float
        Node weight ``W``.

    Returns
    -------
    float
    """
    return q / weight - (s / weight) ** 2


def _impurity(stats, criterion):
    """Impurity of a node (or child) from its statistics."""
    if criterion == "gini":
        return gini(stats.counts, stats.weight)
    if criterion in ("entropy", "log_loss"):
        return entropy(stats.counts, stats.weight)
    if stats.constant:
        return 0.0  # all targets equal: pure by definition (dtjit's rule; see _criterion)
    return squared_error(stats.s, stats.q, stats.weight)


def _proxy(left, total, criterion):
    """scikit-learn's proxy improvement of a candidate (larger is better).

    Parameters
    ----------
    left : _Stats
        Statistics of the left child, computed from scratch.
    total : _Stats
        Statistics of the node. The right child is obtained by subtraction, like
        scikit-learn: ``right = total - left``.
    criterion : str
        Criterion name.

    Returns
    -------
    float
    """
    w_left = left.weight
    w_right = total.weight - w_left
    if criterion == "squared_error":
        s_left = left.s
        s_right = total.s - s_left
        return s_left * s_left / w_left + s_right * s_right / w_right
    right_counts = total.counts - left.counts
    if criterion == "gini":
        imp_left = gini(left.counts, w_left)
        imp_right = gini(right_counts, w_right)
    else:
        imp_left = entropy(left.counts, w_left)
        imp_right = entropy(right_counts, w_right)
    return -w_right * imp_right - w_left * imp_left


# --------------------------------------------------------------------------------------
# Split search
# --------------------------------------------------------------------------------------


@dataclass
class _Split:
    """Best split of a node.

    Attributes
    ----------
    feature : int
        Feature index.
    threshold : float
        Rows with ``x[feature] <= threshold`` go left.
    proxy : float
        Proxy improvement of the split.
    left_rows, right_rows : numpy.ndarray of int
        Row indices of the children, in increasing order.
    improvement : float
        Weighted impurity decrease (scikit-learn's ``impurity_improvement``).
    """

    feature: int
    threshold: float
    proxy: float
    left_rows: np.ndarray
    right_rows: np.ndarray
    improvement: float = 0.0


@dataclass
class _Params:
    """Resolved hyper-parameters and data shared by every node."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    is_classifier: bool
    n_classes: int
    criterion: str
    max_depth: int | None
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    min_impurity_decrease: float
    weight_root: float
    #: ``split_finder(rows, stats, impurity, prm)``: the splitter; ``None`` is the exact one.
    split_finder: object = None


def _is_leaf_by_rules(n, weight, impurity, depth, prm):
    """Leaf tests applied before any split search."""
    return (
        (prm.max_depth is not None and depth >= prm.max_depth)
        or n < prm.min_samples_split
        or n < 2 * prm.min_samples_leaf
        or weight < 2 * prm.min_weight_leaf
        or impurity <= EPS
    )


def _best_split(rows, stats, impurity, prm):
    """Find the best split of a node, or ``None`` if the node must be a leaf.

    Parameters
    ----------
    rows : numpy.ndarray of int
        Row indices of the node (increasing).
    stats : _Stats
        Statistics of the node.
    impurity : float
        Impurity of the node.
    prm : _Params
        Data and hyper-parameters.

    Returns
    -------
    _Split or None
        ``None`` if there is no valid candidate or the improvement is below
        ``min_impurity_decrease``.
    """
    n = len(rows)
    best = None
    best_proxy = -math.inf
    for f in range(prm.X.shape[1]):
        order = rows[np.argsort(prm.X[rows, f], kind="stable")]
        v = prm.X[order, f]  # float32, sorted
        if v[n - 1] <= v[0] + FEATURE_THRESHOLD:  # float32 addition and comparison
            continue  # constant feature
        for p in range(1, n):
            if not v[p] > v[p - 1] + FEATURE_THRESHOLD:
                continue  # not a boundary between distinct values
            if p < prm.min_samples_leaf or n - p < prm.min_samples_leaf:
                continue
            left = _stats(order[:p], prm.y, prm.w, prm.is_classifier, prm.n_classes)
            w_left = left.weight
            w_right = stats.weight - w_left
            if w_left < prm.min_weight_leaf or w_right < prm.min_weight_leaf:
                continue
            proxy = _proxy(left, stats, prm.criterion)
            if proxy > best_proxy:
                best_proxy = proxy
                threshold = float(v[p - 1]) / 2.0 + float(v[p]) / 2.0
                best = _Split(
                    feature=f,
                    threshold=threshold,
                    proxy=proxy,
                    left_rows=np.sort(order[:p]),
                    right_rows=np.sort(order[p:]),
                )
    return finish_split(best, stats, impurity, prm)


def finish_split(best, stats, impurity, prm):
    """Compute the improvement of a node's best split; ``None`` if there is no valid split.

    ``best`` is the winning candidate (or ``None``), with its children's rows; ``stats``,
    ``impurity`` and ``prm`` are those of :func:`_best_split`. Returns ``best`` with its
    improvement set, or ``None`` if it is below ``min_impurity_decrease``.
    """
    if best is None:
        return None
    left = _stats(best.left_rows, prm.y, prm.w, prm.is_classifier, prm.n_classes)
    right = _stats(best.right_rows, prm.y, prm.w, prm.is_classifier, prm.n_classes)
    impurity_left = _impurity(left, prm.criterion)
    impurity_right = _impurity(right, prm.criterion)
    w = stats.weight
    w_left = left.weight
    w_right = w - w_left
    best.improvement = (w / prm.weight_root) * (
        impurity - w_right / w * impurity_right - w_left / w * impurity_left
    )
    if best.improvement + EPS < prm.min_impurity_decrease:
        return None
    return best


# --------------------------------------------------------------------------------------
# Growth
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Node:
    """A node while the tree grows."""

    rows: np.ndarray
    depth: int
    created: int
    stats: _Stats
    impurity: float
    split: _Split | None
    children: tuple | None = field(default=None)


def _make_node(rows, depth, created, prm):
    """Compute a node's statistics, impurity and best split (if it may split)."""
    stats = _stats(rows, prm.y, prm.w, prm.is_classifier, prm.n_classes)
    impurity = _impurity(stats, prm.criterion)
    split = None
    if not _is_leaf_by_rules(len(rows), stats.weight, impurity, depth, prm):
        split = (prm.split_finder or _best_split)(rows, stats, impurity, prm)
    return _Node(
        rows=rows, depth=depth, created=created, stats=stats, impurity=impurity, split=split
    )


def _grow(prm, rows, max_leaf_nodes):
    """Grow the tree; returns the root :class:`_Node`.

    Every node's best split is found when the node is created. The frontier holds the nodes
    not yet expanded; the one with the largest improvement is expanded first (ties: the node
    created first). Without ``max_leaf_nodes`` every splittable node is expanded, so the
    order is irrelevant; with it, at most ``max_leaf_nodes - 1`` splits are made.
    """
    budget = math.inf if max_leaf_nodes is None else max_leaf_nodes - 1
    n_created = 0
    root = _make_node(rows, 0, n_created, prm)
    n_created += 1
    frontier = [root]
    n_splits = 0
    while n_splits < budget:
        splittable = [nd for nd in frontier if nd.split is not None]
        if not splittable:
            break
        node = max(splittable, key=lambda nd: (nd.split.improvement, -nd.created))
        frontier = [nd for nd in frontier if nd is not node]
        left = _make_node(node.split.left_rows, node.depth + 1, n_created, prm)
        right = _make_node(node.split.right_rows, node.depth + 1, n_created + 1, prm)
        n_created += 2
        node.children = (left, right)
        frontier += [left, right]
        n_splits += 1
    return root


def _to_arrays(root, is_classifier, n_classes):
    """Number the nodes breadth-first and pack them into numpy arrays."""
    order = [root]
    i = 0
    while i < len(order):
        if order[i].children is not None:
            order.extend(order[i].children)
        i += 1
    node_id = {id(nd): k for k, nd in enumerate(order)}

    count = len(order)
    width = n_classes if is_classifier else 1
    tree = {
        "feature": np.full(count, TREE_UNDEFINED, dtype=np.int32),
        "threshold": np.full(count, float(TREE_UNDEFINED), dtype=np.float64),
        "left": np.full(count, TREE_LEAF, dtype=np.int32),
        "right": np.full(count, TREE_LEAF, dtype=np.int32),
        "value": np.zeros((count, 1, width), dtype=np.float64),
        "impurity": np.zeros(count, dtype=np.float64),
        "n_node_samples": np.zeros(count, dtype=np.int64),
        "weighted_n_node_samples": np.zeros(count, dtype=np.float64),
        "missing_left": np.zeros(count, dtype=np.uint8),
    }
    for k, nd in enumerate(order):
        st = nd.stats
        if is_classifier:
            tree["value"][k, 0, :] = st.counts / st.weight
        else:
            tree["value"][k, 0, 0] = st.s / st.weight
        tree["impurity"][k] = nd.impurity
        tree["n_node_samples"][k] = st.n
        tree["weighted_n_node_samples"][k] = st.weight
        if nd.children is not None:
            left, right = nd.children
            tree["feature"][k] = nd.split.feature
            tree["threshold"][k] = nd.split.threshold
            tree["left"][k] = node_id[id(left)]
            tree["right"][k] = node_id[id(right)]
            tree["missing_left"][k] = 1 if left.stats.n > right.stats.n else 0
    return tree


def reference_build(
    X,
    y,
    *,
    is_classifier,
    n_classes=None,
    criterion="gini",
    max_depth=None,
    min_samples_split=2,
    min_samples_leaf=1,
    min_weight_leaf=0.0,
    min_impurity_decrease=0.0,
    sample_weight=None,
    max_leaf_nodes=None,
    split_finder=None,
):
    """Build a decision tree with scikit-learn's "best" splitter rules, slowly.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training data; converted to float32. Must be finite.
    y : array-like of shape (n_samples,)
        Classification: integer class codes in ``0 .. n_classes - 1``.
        Regression: targets, converted to float64.
    is_classifier : bool
        Classification or regression.
    n_classes : int, optional
        Number of classes; defaults to ``max(y) + 1``. Ignored for regression.
    criterion : {"gini", "entropy", "log_loss", "squared_error"}, default="gini"
        ``"log_loss"`` is an alias of ``"entropy"``; ``"squared_error"`` is the only
        regression criterion.
    max_depth : int or None, default=None
        ``None`` means unlimited.
    min_samples_split : int, default=2
        Already resolved to an absolute count.
    min_samples_leaf : int, default=1
        Already resolved to an absolute count.
    min_weight_leaf : float, default=0.0
        Absolute minimum weight of a leaf.
    min_impurity_decrease : float, default=0.0
        A node splits only if ``improvement + EPS >= min_impurity_decrease``.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative float64 weights; default ones. Rows with weight 0 are dropped, like
        scikit-learn does.
    max_leaf_nodes : int or None, default=None
        If given (>= 2), grow best-first with at most this many leaves.
    split_finder : callable, optional
        ``split_finder(rows, stats, impurity, prm)`` replacing the exact split search (the
        histogram reference of ``_hist_reference`` plugs in here); it must end with
        :func:`finish_split`.

    Returns
    -------
    dict of numpy.ndarray
        Breadth-first node arrays: ``feature`` (int32, -2 at leaves), ``threshold``
        (float64, -2.0 at leaves), ``left`` and ``right`` (int32, -1 at leaves), ``value``
        (float64, shape ``(node_count, 1, n_classes)`` of weighted class fractions, or
        ``(node_count, 1, 1)`` of weighted means), ``impurity`` (float64),
        ``n_node_samples`` (int64), ``weighted_n_node_samples`` (float64) and
        ``missing_left`` (uint8: at split nodes 1 iff the left child has more samples than
        the right one; 0 at leaves).
    """
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    n = X.shape[0]
    if n == 0:
        raise ValueError("X has no rows")
    if not np.all(np.isfinite(X)):
        raise ValueError("the reference builder does not support NaN or infinite values in X")

    if is_classifier:
        if criterion not in CLASSIFICATION_CRITERIA:
            raise ValueError(f"unknown classification criterion {criterion!r}")
        y = np.asarray(y)
        if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError("y must be a 1-D integer array of class codes, one per row")
        y = y.astype(np.intp)
        if n_classes is None:
            n_classes = int(y.max()) + 1
        if y.min() < 0 or y.max() >= n_classes:
            raise ValueError(f"class codes must lie in 0 .. {n_classes - 1}")
    else:
        if criterion not in REGRESSION_CRITERIA:
            raise ValueError(f"unknown regression criterion {criterion!r}")
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (n,):
            raise ValueError("y must be 1-D with one target per row")
        n_classes = 1

    if sample_weight is None:
        w = np.ones(n, dtype=np.float64)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError("sample_weight must be 1-D with one weight per row")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("sample_weight must be finite and non-negative")
    if max_leaf_nodes is not None and max_leaf_nodes < 2:
        raise ValueError("max_leaf_nodes must be None or >= 2")

    rows = np.flatnonzero(w != 0.0)  # scikit-learn ignores zero-weight rows
    if len(rows) == 0:
        raise ValueError("all sample weights are zero")

    prm = _Params(
        X=X,
        y=y,
        w=w,
        is_classifier=bool(is_classifier),
        n_classes=int(n_classes),
        criterion=criterion,
        max_depth=max_depth,
        min_samples_split=int(min_samples_split),
        min_samples_leaf=int(min_samples_leaf),
        min_weight_leaf=float(min_weight_leaf),
        min_impurity_decrease=float(min_impurity_decrease),
        weight_root=math.fsum(w[rows]),
        split_finder=split_finder,
    )
    root = _grow(prm, rows, max_leaf_nodes)
    return _to_arrays(root, prm.is_classifier, prm.n_classes)


# --------------------------------------------------------------------------------------
# Traversal
# --------------------------------------------------------------------------------------

_FALLBACK_NAMES = {
    "left": ("children_left",),
    "right": ("children_right",),
    "missing_left": ("missing_go_to_left",),
}


def _get(tree, name, default=None):
    """Read array ``name`` from a tree dict or from an object's attribute."""
    names = (name, *_FALLBACK_NAMES.get(name, ()))
    for nm in names:
        if isinstance(tree, dict):
            if nm in tree:
                return np.asarray(tree[nm])
        elif hasattr(tree, nm):
            return np.asarray(getattr(tree, nm))
    if default is not None:
        return default
    raise KeyError(f"tree has no array {name!r}")


def reference_apply(tree, X):
    """Leaf id reached by every row of ``X``.

    Parameters
    ----------
    tree : dict or object
        Tree arrays (``feature``, ``threshold``, ``left``, ``right`` and optionally
        ``missing_left``), e.g. the output of :func:`reference_build`.
    X : array-like of shape (n_samples, n_features)
        Converted to float32.

    Returns
    -------
    numpy.ndarray of int64
        Leaf ids. From node 0: a NaN goes left iff ``missing_left``, otherwise a row goes left
        iff ``float(x[feature]) <= threshold``.
    """
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    feature = _get(tree, "feature")
    threshold = _get(tree, "threshold")
    left = _get(tree, "left")
    right = _get(tree, "right")
    missing_left = _get(tree, "missing_left", np.zeros(len(feature), dtype=np.uint8))
    out = np.empty(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        node = 0
        while left[node] != TREE_LEAF:
            x = float(X[i, feature[node]])
            if math.isnan(x):
                go_left = bool(missing_left[node])
            else:
                go_left = x <= float(threshold[node])
            node = int(left[node]) if go_left else int(right[node])
        out[i] = node
    return out


def reference_predict_value(tree, X):
    """``value`` of the leaf reached by every row of ``X``.

    Parameters
    ----------
    tree : dict or object
        Tree arrays, as for :func:`reference_apply`, plus ``value``.
    X : array-like of shape (n_samples, n_features)
        Converted to float32.

    Returns
    -------
    numpy.ndarray of float64
        Shape ``(n_samples, 1, n_classes)`` or ``(n_samples, 1, 1)``.
    """
    return _get(tree, "value")[reference_apply(tree, X)]


# --------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------

_EXACT = ("feature", "threshold", "left", "right", "n_node_samples", "missing_left")


def assert_tree_equal(a, b, *, rtol=1e-12, atol=0.0):
    """Assert that two trees are node-for-node equal.

    Parameters
    ----------
    a, b : dict or object
        Trees with arrays (keys or attributes) ``feature, threshold, left, right, value,
        impurity, n_node_samples, weighted_n_node_samples``; ``missing_left`` is compared
        too when both have it.
    rtol : float, default=1e-12
        Relative tolerance for ``value``, ``impurity`` and ``weighted_n_node_samples``.
        Integer arrays and thresholds are compared exactly.
    atol : float, default=0.0
        Absolute tolerance for the same arrays (useful for impurities that are 0 up to
        rounding).

    Raises
    ------
    AssertionError
        Naming the node count mismatch, or the first node (lowest id) where an array
        differs, the arrays that differ there and both values.
    """
    names = list(TREE_ARRAYS)
    if _has(a, "missing_left") and _has(b, "missing_left"):
        names.append("missing_left")
    arrays_a = {nm: _get(a, nm) for nm in names}
    arrays_b = {nm: _get(b, nm) for nm in names}

    count_a = len(arrays_a["feature"])
    count_b = len(arrays_b["feature"])
    for nm in names:
        if arrays_a[nm].shape[1:] != arrays_b[nm].shape[1:]:
            raise AssertionError(
                f"{nm!r}: shapes differ: {arrays_a[nm].shape} != {arrays_b[nm].shape}"
            )

    # Compare the nodes both trees have, so a node-count mismatch still names the first
    # node where the trees diverge.
    common = min(count_a, count_b)
    first_bad = {}
    for nm in names:
        xa, xb = arrays_a[nm][:common], arrays_b[nm][:common]
        if nm in _EXACT:
            ok = xa == xb
        else:
            ok = np.isclose(xa, xb, rtol=rtol, atol=atol, equal_nan=True)
        ok = ok.reshape(common, -1).all(axis=1)
        if not ok.all():
            first_bad[nm] = int(np.flatnonzero(~ok)[0])
    if not first_bad and count_a == count_b:
        return

    lines = []
    if count_a != count_b:
        lines.append(f"node counts differ: {count_a} != {count_b}")
    if not first_bad:
        lines.append(f"(the first {common} nodes are equal)")
        raise AssertionError("\n".join(lines))

    node = min(first_bad.values())
    lines.append(f"trees differ first at node {node}:")
    for nm in names:
        if first_bad.get(nm) == node:
            lines.append(f"  {nm}: {arrays_a[nm][node]!r} != {arrays_b[nm][node]!r}")
    lines.append(
        "  (first difference per array: "
        + ", ".join(f"{nm} at node {k}" for nm, k in first_bad.items())
        + ")"
    )
    for tag, arr in (("a", arrays_a), ("b", arrays_b)):
        lines.append(
            f"  node {node} in {tag}: feature={arr['feature'][node]}, "
            f"threshold={arr['threshold'][node]!r}, "
            f"n_node_samples={arr['n_node_samples'][node]}, "
            f"impurity={arr['impurity'][node]!r}"
        )
    raise AssertionError("\n".join(lines))


def _has(tree, name):
    """Whether a tree dict or object provides array ``name``."""
    return name in tree if isinstance(tree, dict) else hasattr(tree, name)


# ------------------------------------------------------------------------ cost-complexity pruning
def reference_preorder(left, right, node=0):
    """Node ids in depth-first preorder, left first (scikit-learn's depth-first numbering)."""
    if left[node] == -1:
        return [node]
    return [node, *reference_preorder(left, right, left[node]), *reference_preorder(
        left, right, right[node])]  # fmt: skip


def reference_weakest_links(left, right, impurity, weight):
    """scikit-learn's ``_cost_complexity_prune`` loop, transcribed: scan all nodes per step.

    Nodes are scanned in depth-first preorder and the first strictly smallest alpha wins, so
    ties go to the earliest node in preorder, as in scikit-learn (whose ids are preorder).
    Returns ``(nodes, alphas, impurities, n_leaves, r_unpruned)`` lists, one entry per step.
    """
    n = len(left)
    order = reference_preorder(left, right)
    parent = {0: None}
    for node in range(n):
        if left[node] != -1:
            parent[left[node]] = node
            parent[right[node]] = node
    r_node = [weight[i] * impurity[i] / weight[0] for i in range(n)]
    r_branch = [0.0] * n
    n_leaves = [0] * n
    for leaf in order:
        if left[leaf] != -1:
            continue
        r_branch[leaf] = r_node[leaf]
        node = parent[leaf]
        while node is not None:
            r_branch[node] += r_node[leaf]
            n_leaves[node] += 1
            node = parent[node]
    r_unpruned = r_branch[0]
    candidate = {i for i in range(n) if left[i] != -1}
    nodes, alphas, impurities, leaves = [], [], [], []
    while 0 in candidate:
        best, best_alpha = None, np.finfo(np.float64).max
        for i in order:
            if i in candidate:
                a = (r_node[i] - r_branch[i]) / (n_leaves[i] - 1)
                if a < best_alpha:
                    best, best_alpha = i, a
        stack = [best]
        while stack:  # the pruned branch's internal nodes are no longer candidates
            node = stack.pop()
            candidate.discard(node)
            if left[node] != -1:
                stack += [left[node], right[node]]
        n_pruned = n_leaves[best] - 1
        n_leaves[best] = 0
        r_diff = r_node[best] - r_branch[best]
        r_branch[best] = r_node[best]
        node = parent[best]
        while node is not None:
            n_leaves[node] -= n_pruned
            r_branch[node] += r_diff
            node = parent[node]
        nodes.append(best)
        alphas.append(best_alpha)
        impurities.append(r_branch[0])
        leaves.append(1 if best == 0 else n_leaves[0])
    return nodes, alphas, impurities, leaves, r_unpruned


def reference_collapse(tree, cut):
    """Arrays of ``tree`` with the nodes in ``cut`` made leaves, renumbered by a BFS queue."""
    arrays = {k: np.array(v) for k, v in tree.to_arrays().items()}
    queue, order = [0], []
    while queue:
        node = queue.pop(0)
        order.append(node)
        if arrays["left"][node] != -1 and node not in cut:
            queue += [int(arrays["left"][node]), int(arrays["right"][node])]
    new_id = {old: new for new, old in enumerate(order)}
    out = {k: v[order].copy() for k, v in arrays.items()}
    for new, old in enumerate(order):
        if old in cut or arrays["left"][old] == -1:
            out["left"][new] = out["right"][new] = -1
            out["feature"][new] = -2
            out["threshold"][new] = -2.0
            out["missing_left"][new] = 0
        else:
            out["left"][new] = new_id[int(arrays["left"][old])]
            out["right"][new] = new_id[int(arrays["right"][old])]
    return out


# --------------------------------------------------------------------------------------
# Split search with missing values (one feature, one node)
# --------------------------------------------------------------------------------------


def reference_split_with_missing(x, y, w, criterion, is_classifier, n_classes,
                                 min_samples_leaf=1, min_weight_leaf=0.0):  # fmt: skip
    """Best split of one feature of one node whose values may be NaN (scikit-learn 1.9).

    Candidates, in the order in which they are tried (a later one wins only if strictly
    better): every cut between two distinct non-missing values with the NaN rows on the
    right; the cut "every value left, NaN right" (threshold ``+inf``); every cut between two
    distinct values with the NaN rows on the left. A feature that is all NaN cannot split;
    one whose values are all equal can split them from its NaN rows.

    Parameters
    ----------
    x : numpy.ndarray of float32
        The node's values of the feature.
    y, w : numpy.ndarray
        Class codes or targets, and sample weights.
    criterion, is_classifier, n_classes, min_samples_leaf, min_weight_leaf
        As in :func:`reference_build`.

    Returns
    -------
    tuple or None
        ``(proxy, threshold, missing, left_rows)`` with ``missing`` 1 (NaN left), 0 (NaN
        right) or -1 (no NaN in the node), and ``left_rows`` the sorted row indices going
        left; ``None`` when no candidate is valid.
    """
    n = len(x)
    rows = np.arange(n)
    total = _stats(rows, y, w, is_classifier, n_classes)
    missing = np.isnan(x)
    values = np.unique(x[~missing])  # sorted distinct non-missing values
    if len(values) == 0:
        return None
    candidates = []  # (threshold, nan_left)
    for nan_left in (False, True):
        if nan_left and not missing.any():
            break
        for a, b in zip(values[:-1], values[1:], strict=True):
            if b > a + FEATURE_THRESHOLD:  # float32 addition and comparison
                candidates.append((float(a) / 2.0 + float(b) / 2.0, nan_left))
        if missing.any() and not nan_left:
            candidates.append((math.inf, False))
    best = None
    for threshold, nan_left in candidates:
        go_left = np.where(missing, nan_left, x.astype(np.float64) <= threshold)
        left_rows = rows[go_left]
        n_left = len(left_rows)
        if n_left < min_samples_leaf or n - n_left < min_samples_leaf:
            continue
        left = _stats(left_rows, y, w, is_classifier, n_classes)
        if left.weight < min_weight_leaf or total.weight - left.weight < min_weight_leaf:
            continue
        proxy = _proxy(left, total, criterion)
        if best is None or proxy > best[0]:
            side = (1 if nan_left else 0) if missing.any() else -1
            best = (proxy, threshold, side, left_rows)
    return best


def reference_random_split(x, y, w, criterion, is_classifier, n_classes, threshold, nan_left,
                           min_samples_leaf=1, min_weight_leaf=0.0):  # fmt: skip
    """The one split the random splitter scores for one feature of one node.

    ``threshold`` and ``nan_left`` are the drawn threshold and side of the NaN rows (read
    only when the node has some): rows with a value ``<= threshold`` go left, NaN rows to
    the drawn side. Other arguments as in :func:`reference_split_with_missing`.

    Returns
    -------
    tuple or None
        ``(proxy, threshold, missing, left_rows)`` as :func:`reference_split_with_missing`
        gives them; ``None`` when a child breaks ``min_samples_leaf`` or ``min_weight_leaf``.
    """
    n = len(x)
    rows = np.arange(n)
    total = _stats(rows, y, w, is_classifier, n_classes)
    missing = np.isnan(x)
    go_left = np.where(missing, nan_left, x.astype(np.float64) <= threshold)
    left_rows = rows[go_left]
    if len(left_rows) < min_samples_leaf or n - len(left_rows) < min_samples_leaf:
        return None
    left = _stats(left_rows, y, w, is_classifier, n_classes)
    if left.weight < min_weight_leaf or total.weight - left.weight < min_weight_leaf:
        return None
    side = (1 if nan_left else 0) if missing.any() else -1
    return _proxy(left, total, criterion), threshold, side, left_rows
