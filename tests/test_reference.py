"""Tests of the slow reference tree (``tests/_reference.py``) itself.

The reference is checked against hand-computable facts and against scikit-learn, which uses
the same rules except one: scikit-learn visits the features of every node in a random order
(even with ``max_features=None``), so when two features give splits with the same proxy it
may keep another feature than the reference (which keeps the lowest). The comparison below
is exact everywhere else and, for depth-first trees, accepts a different split only where
the reference itself scores scikit-learn's split as tied with its own.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from _reference import (
    EPS,
    _proxy,
    _stats,
    assert_tree_equal,
    entropy,
    gini,
    reference_apply,
    reference_build,
    reference_predict_value,
    squared_error,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

N_ROWS = 200
N_FEATURES = 5
N_CLASSES = 3


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def make_data(seed):
    """Continuous float32 features without ties, a 3-class label and a regression target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    y_class = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=N_ROWS), [-0.5, 0.5])
    y_reg = X[:, 0] + np.sin(2.0 * X[:, 1]) + 0.3 * rng.normal(size=N_ROWS)
    weights = rng.integers(1, 4, size=N_ROWS).astype(np.float64)  # 1, 2 or 3
    for j in range(N_FEATURES):
        assert len(np.unique(X[:, j])) == N_ROWS
    return X, y_class, y_reg, weights


def sklearn_tree_to_bfs(sk_tree):
    """Renumber a fitted scikit-learn ``Tree`` (depth-first ids) breadth-first.

    Parameters
    ----------
    sk_tree : sklearn.tree._tree.Tree
        ``estimator.tree_``.

    Returns
    -------
    dict of numpy.ndarray
        The same arrays as :func:`reference_build` returns, in breadth-first order.
    """
    order = [0]
    i = 0
    while i < len(order):
        node = order[i]
        if sk_tree.children_left[node] != -1:
            order += [int(sk_tree.children_left[node]), int(sk_tree.children_right[node])]
        i += 1
    new_id = {old: new for new, old in enumerate(order)}
    order = np.array(order)

    def renumber(children):
        return np.array([new_id[c] if c != -1 else -1 for c in children[order]], dtype=np.int32)

    is_leaf = sk_tree.children_left[order] == -1
    # Best-first growth leaves a stale missing_go_to_left on nodes that became leaves.
    missing_left = np.where(is_leaf, 0, sk_tree.missing_go_to_left[order]).astype(np.uint8)
    return {
        "feature": sk_tree.feature[order].astype(np.int32),
        "threshold": sk_tree.threshold[order],
        "left": renumber(sk_tree.children_left),
        "right": renumber(sk_tree.children_right),
        "value": sk_tree.value[order],
        "impurity": sk_tree.impurity[order],
        "n_node_samples": sk_tree.n_node_samples[order].astype(np.int64),
        "weighted_n_node_samples": sk_tree.weighted_n_node_samples[order],
        "missing_left": missing_left,
    }


def _close(a, b, rtol=1e-9, atol=1e-12):
    return np.allclose(a, b, rtol=rtol, atol=atol)


def assert_same_as_sklearn(ref, sk, X, y, w, *, is_classifier, criterion, allow_ties):
    """Compare a reference tree with a BFS-renumbered scikit-learn tree.

    Ints and thresholds must be equal, ``value``/``impurity``/weights within rtol 1e-9.
    With ``allow_ties`` (depth-first growth only) a node where the two trees split
    differently is accepted if the reference scores scikit-learn's split as tied with its
    own (relative difference <= 1e-12) and its own split is on a lower feature; the two
    subtrees below are then not compared.

    Returns
    -------
    int
        Number of tied nodes accepted.
    """
    try:
        assert_tree_equal(ref, sk, rtol=1e-9, atol=1e-12)
        return 0
    except AssertionError:
        if not allow_ties:
            raise

    n_classes = ref["value"].shape[2]
    ties = 0
    stack = [(0, 0, np.flatnonzero(w != 0.0))]
    while stack:
        a, b, rows = stack.pop()
        where = f"reference node {a} / sklearn (BFS) node {b}"
        assert ref["n_node_samples"][a] == sk["n_node_samples"][b] == len(rows), where
        for name in ("value", "impurity", "weighted_n_node_samples"):
            assert _close(ref[name][a], sk[name][b]), (where, name, ref[name][a], sk[name][b])
        fa, fb = ref["feature"][a], sk["feature"][b]
        ta, tb = ref["threshold"][a], sk["threshold"][b]
        assert (fa < 0) == (fb < 0), (where, "leaf in one tree only", fa, fb)
        if fa < 0:
            continue
        if fa != fb or ta != tb:
            total = _stats(rows, y, w, is_classifier, n_classes)
            proxies = []
            for f, t in ((fa, ta), (fb, tb)):
                left = _stats(rows[X[rows, f] <= t], y, w, is_classifier, n_classes)
                proxies.append(_proxy(left, total, criterion))
            assert math.isclose(proxies[0], proxies[1], rel_tol=1e-12, abs_tol=1e-12), (
                where,
                "different splits that are not tied",
                (fa, ta, proxies[0]),
                (fb, tb, proxies[1]),
            )
            if proxies[0] == proxies[1]:
                assert fa < fb, (where, "an exact tie must go to the lowest feature", fa, fb)
            ties += 1
            continue
        assert ref["missing_left"][a] == sk["missing_left"][b], where
        go_left = X[rows, fa] <= ta
        stack.append((ref["left"][a], sk["left"][b], rows[go_left]))
        stack.append((ref["right"][a], sk["right"][b], rows[~go_left]))
    assert ties > 0  # otherwise assert_tree_equal would have passed
    return ties


# --------------------------------------------------------------------------------------
# (1) Agreement with scikit-learn
# --------------------------------------------------------------------------------------

COMBOS = {
    "default": {},
    "max_depth=3": {"max_depth": 3},
    "min_samples_leaf=5": {"min_samples_leaf": 5},
    "min_impurity_decrease=0.01": {"min_impurity_decrease": 0.01},
    "max_leaf_nodes=8": {"max_leaf_nodes": 8},
    "weights+max_depth=4": {"weights": True, "max_depth": 4},
    "weights+max_leaf_nodes=8": {"weights": True, "max_leaf_nodes": 8},
    "weights+min_samples_leaf=5": {"weights": True, "min_samples_leaf": 5},
    "weights+min_weight_fraction_leaf=0.05": {"weights": True, "min_weight_fraction_leaf": 0.05},
    "min_samples_split=30+max_depth=5": {"min_samples_split": 30, "max_depth": 5},
}


@pytest.mark.parametrize("combo", list(COMBOS))
@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_same_tree_as_sklearn(criterion, combo):
    params = dict(COMBOS[combo])
    X, y_class, y_reg, weights = make_data(seed=0)
    is_classifier = criterion != "squared_error"
    y = y_class if is_classifier else y_reg
    sample_weight = weights if params.pop("weights", False) else None
    w = np.ones(N_ROWS) if sample_weight is None else sample_weight
    fraction = params.pop("min_weight_fraction_leaf", 0.0)

    Estimator = DecisionTreeClassifier if is_classifier else DecisionTreeRegressor
    est = Estimator(
        criterion=criterion, random_state=0, min_weight_fraction_leaf=fraction, **params
    ).fit(X, y, sample_weight=sample_weight)
    ref = reference_build(
        X,
        y,
        is_classifier=is_classifier,
        n_classes=N_CLASSES if is_classifier else None,
        criterion=criterion,
        sample_weight=sample_weight,
        min_weight_leaf=fraction * w.sum(),  # sklearn's resolution of the fraction
        **params,
    )
    assert ref["feature"].dtype == np.int32 and ref["n_node_samples"].dtype == np.int64
    assert ref["value"].shape == (len(ref["feature"]), 1, N_CLASSES if is_classifier else 1)
    assert len(ref["feature"]) > 7  # a real tree, not a stump

    sk = sklearn_tree_to_bfs(est.tree_)
    ties = assert_same_as_sklearn(
        ref,
        sk,
        X,
        y,
        w,
        is_classifier=is_classifier,
        criterion=criterion,
        # Best-first growth is global: a tie changes which nodes get the budget.
        allow_ties="max_leaf_nodes" not in params,
    )
    if ties == 0:
        # Identical trees: traversal and predictions agree too.
        np.testing.assert_array_equal(reference_apply(ref, X), sklearn_apply_bfs(est, X))
        predicted = reference_predict_value(ref, X)[:, 0, :]
        if is_classifier:
            np.testing.assert_allclose(predicted, est.predict_proba(X), rtol=1e-9)
        else:
            np.testing.assert_allclose(predicted[:, 0], est.predict(X), rtol=1e-9)


def sklearn_apply_bfs(est, X):
    """scikit-learn's ``apply`` with leaf ids translated to breadth-first ids."""
    t = est.tree_
    order = [0]
    i = 0
    while i < len(order):
        if t.children_left[order[i]] != -1:
            order += [int(t.children_left[order[i]]), int(t.children_right[order[i]])]
        i += 1
    new_id = np.empty(t.node_count, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    return new_id[est.apply(X)]


def test_zero_weight_rows_are_dropped_like_sklearn():
    X, y_class, _, weights = make_data(seed=1)
    w = weights.copy()
    w[::7] = 0.0
    est = DecisionTreeClassifier(random_state=0, max_depth=3).fit(X, y_class, sample_weight=w)
    ref = reference_build(X, y_class, is_classifier=True, max_depth=3, sample_weight=w)
    assert ref["n_node_samples"][0] == np.count_nonzero(w)
    assert_tree_equal(ref, sklearn_tree_to_bfs(est.tree_), rtol=1e-9, atol=1e-12)
    # Same tree as without those rows at all.
    keep = w != 0.0
    ref_kept = reference_build(
        X[keep], y_class[keep], is_classifier=True, max_depth=3, sample_weight=w[keep]
    )
    assert_tree_equal(ref, ref_kept)


# --------------------------------------------------------------------------------------
# (2) Hand-computable facts
# --------------------------------------------------------------------------------------


def test_spam_example_entropy():
    """Word counts -> spam: the root splits at 150 with an information gain of 0.5488 bits."""
    X = np.array([40, 60, 100, 200, 300, 300, 300, 800], dtype=np.float32).reshape(-1, 1)
    Y, N = 1, 0
    y = np.array([Y, Y, Y, N, Y, N, N, N])
    tree = reference_build(X, y, is_classifier=True, n_classes=2, criterion="entropy")

    assert tree["feature"][0] == 0
    assert tree["threshold"][0] == 150.0
    left, right = tree["left"][0], tree["right"][0]
    assert (left, right) == (1, 2)
    assert tree["n_node_samples"][[0, left, right]].tolist() == [8, 3, 5]
    assert tree["impurity"][0] == pytest.approx(1.0, abs=1e-15)  # 4 Y / 4 N
    assert tree["impurity"][left] == 0.0  # Y, Y, Y
    p = 1 / 5  # right: Y, N, N, N, N
    assert tree["impurity"][right] == pytest.approx(-p * math.log2(p) - (1 - p) * math.log2(1 - p))
    gain = tree["impurity"][0] - 3 / 8 * tree["impurity"][left] - 5 / 8 * tree["impurity"][right]
    assert round(gain, 4) == 0.5488
    np.testing.assert_array_equal(tree["value"][left, 0], [0.0, 1.0])
    np.testing.assert_allclose(tree["value"][right, 0], [0.8, 0.2])
    # "log_loss" is an alias.
    assert_tree_equal(
        tree, reference_build(X, y, is_classifier=True, n_classes=2, criterion="log_loss")
    )


def test_impurity_formulas():
    assert gini([2.0, 2.0], 4.0) == 0.5
    assert gini([4.0, 0.0], 4.0) == 0.0
    assert gini([1.0, 1.0, 1.0], 3.0) == pytest.approx(2 / 3)
    assert entropy([1.0, 1.0], 2.0) == 1.0
    assert entropy([3.0, 0.0], 3.0) == 0.0
    assert entropy([1.0, 1.0, 1.0, 1.0], 4.0) == 2.0
    # y = 0, 0, 10, 10 with unit weights: mean 5, variance 25.
    assert squared_error(20.0, 200.0, 4.0) == 25.0


def test_regression_hand_example():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([0.0, 0.0, 10.0, 10.0])
    tree = reference_build(X, y, is_classifier=False, criterion="squared_error")
    assert tree["feature"].tolist() == [0, -2, -2]
    assert tree["threshold"].tolist() == [2.5, -2.0, -2.0]
    assert tree["left"].tolist() == [1, -1, -1] and tree["right"].tolist() == [2, -1, -1]
    assert tree["impurity"].tolist() == [25.0, 0.0, 0.0]
    assert tree["value"][:, 0, 0].tolist() == [5.0, 0.0, 10.0]
    assert tree["n_node_samples"].tolist() == [4, 2, 2]
    assert tree["missing_left"].tolist() == [0, 0, 0]  # 2 vs 2: not n_left > n_right
    assert reference_apply(tree, [[2.5], [2.6], [np.nan], [-np.inf]]).tolist() == [1, 2, 2, 1]
    # With 1 and 2 on the left and 3 rows on the right missing values go right (0) ...
    tree = reference_build(
        [[1.0], [2.0], [3.0], [4.0], [5.0]],
        [0.0, 0.0, 10.0, 10.0, 10.0],
        is_classifier=False,
        criterion="squared_error",
    )
    assert tree["threshold"][0] == 2.5 and tree["missing_left"][0] == 0
    # ... and with 3 rows on the left they go left.
    tree = reference_build(
        [[1.0], [2.0], [3.0], [4.0], [5.0]],
        [0.0, 0.0, 0.0, 10.0, 10.0],
        is_classifier=False,
        criterion="squared_error",
    )
    assert tree["threshold"][0] == 3.5 and tree["missing_left"][0] == 1
    assert reference_apply(tree, [[np.nan]]).tolist() == [1]


def test_sample_weights_act_like_repeated_rows():
    X, _, y_reg, _ = make_data(seed=2)
    X, y_reg = X[:60], y_reg[:60]
    y_reg = np.round(y_reg * 4) / 4  # dyadic targets: sums are exact in any order
    w = np.arange(60) % 3 + 1.0
    weighted = reference_build(
        X, y_reg, is_classifier=False, criterion="squared_error", sample_weight=w, max_depth=4
    )
    rep = np.repeat(np.arange(60), w.astype(int))
    repeated = reference_build(
        X[rep], y_reg[rep], is_classifier=False, criterion="squared_error", max_depth=4
    )
    for name in ("feature", "threshold", "left", "right"):
        np.testing.assert_array_equal(weighted[name], repeated[name])
    for name in ("value", "impurity"):
        np.testing.assert_allclose(weighted[name], repeated[name], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(
        weighted["weighted_n_node_samples"], repeated["n_node_samples"].astype(float)
    )


def test_feature_threshold_is_added_in_float32():
    y = np.array([0, 1])
    # 1 + 1e-7 rounds to 1 + ulp(1) in float32: the next float32 after 1 is not a split.
    one_up = np.nextafter(np.float32(1.0), np.float32(2.0))
    tree = reference_build([[1.0], [one_up]], y, is_classifier=True)
    assert tree["feature"].tolist() == [-2]
    # Near 0, values closer than 1e-7 are merged too.
    tree = reference_build([[0.0], [5e-8]], y, is_classifier=True)
    assert tree["feature"].tolist() == [-2]
    # 1000 + 1e-7 rounds back to 1000 in float32: adjacent float32 values do split.
    k_up = np.nextafter(np.float32(1000.0), np.float32(2000.0))
    tree = reference_build([[1000.0], [k_up]], y, is_classifier=True)
    assert tree["feature"].tolist() == [0, -2, -2]
    assert tree["threshold"][0] == 1000.0 / 2.0 + float(k_up) / 2.0
    assert 1000.0 < tree["threshold"][0] < float(k_up)
    # 0 and 2e-7 are far enough apart.
    tree = reference_build([[0.0], [2e-7]], y, is_classifier=True)
    assert tree["threshold"][0] == float(np.float32(2e-7)) / 2.0


def test_ties_go_to_lowest_feature_then_lowest_threshold():
    # Column 1 equals column 0: the same proxy on both, feature 0 wins.
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([0, 0, 1, 1])
    tree = reference_build(np.c_[x, x], y, is_classifier=True)
    assert tree["feature"][0] == 0
    tree = reference_build(np.c_[x[::-1].copy(), x], y, is_classifier=True)
    assert tree["feature"][0] == 0 and tree["threshold"][0] == 2.5
    # Symmetric labels: positions 1 and 3 give the same proxy, the lowest threshold wins.
    tree = reference_build(x[:, None], [0, 1, 1, 0], is_classifier=True, max_depth=1)
    assert tree["threshold"][0] == 1.5


def test_leaf_rules():
    X, y_class, y_reg, _ = make_data(seed=3)
    # Pure node and constant features.
    tree = reference_build(X, np.zeros(N_ROWS, dtype=int), is_classifier=True, n_classes=2)
    assert tree["feature"].tolist() == [-2]
    np.testing.assert_array_equal(tree["value"][0, 0], [1.0, 0.0])
    tree = reference_build(np.ones((10, 3)), np.arange(10) % 2, is_classifier=True)
    assert tree["feature"].tolist() == [-2] and tree["impurity"][0] == 0.5
    # max_depth=0, min_samples_split, 2 * min_samples_leaf, 2 * min_weight_leaf.
    for kw in (
        {"max_depth": 0},
        {"min_samples_split": N_ROWS + 1},
        {"min_samples_leaf": N_ROWS // 2 + 1},
        {"min_weight_leaf": N_ROWS / 2 + 0.5},
        {"min_impurity_decrease": 10.0},
    ):
        tree = reference_build(X, y_reg, is_classifier=False, criterion="squared_error", **kw)
        assert tree["feature"].tolist() == [-2], kw
    # min_samples_leaf = n/2 leaves exactly one candidate: the median.
    tree = reference_build(
        X,
        y_reg,
        is_classifier=False,
        criterion="squared_error",
        min_samples_leaf=N_ROWS // 2,
        max_depth=1,
    )
    assert tree["n_node_samples"].tolist() == [N_ROWS, N_ROWS // 2, N_ROWS // 2]


@pytest.mark.parametrize("criterion", ["gini", "squared_error"])
def test_structural_invariants(criterion):
    X, y_class, y_reg, weights = make_data(seed=4)
    is_classifier = criterion == "gini"
    y = y_class if is_classifier else y_reg
    kw = {"min_samples_leaf": 4, "min_weight_leaf": 9.0, "min_impurity_decrease": 0.002}
    tree = reference_build(
        X, y, is_classifier=is_classifier, criterion=criterion, sample_weight=weights, **kw
    )
    feature, left, right = tree["feature"], tree["left"], tree["right"]
    internal = np.flatnonzero(feature >= 0)
    leaves = np.flatnonzero(feature < 0)
    # Breadth-first numbering: children of the k-th internal node are 2k+1 and 2k+2.
    np.testing.assert_array_equal(left[internal], 2 * np.arange(len(internal)) + 1)
    np.testing.assert_array_equal(right[internal], 2 * np.arange(len(internal)) + 2)
    assert len(feature) == 2 * len(internal) + 1
    # Leaf sentinels.
    assert (tree["threshold"][leaves] == -2.0).all()
    assert (left[leaves] == -1).all() and (right[leaves] == -1).all()
    assert (tree["missing_left"][leaves] == 0).all()
    # Counts and weights add up; leaves respect the minimums.
    for name in ("n_node_samples", "weighted_n_node_samples"):
        a = tree[name]
        np.testing.assert_array_equal(a[internal], a[left[internal]] + a[right[internal]])
    assert (tree["n_node_samples"][leaves] >= 4).all()
    assert (tree["weighted_n_node_samples"][leaves] >= 9.0).all()
    n_left = tree["n_node_samples"][left[internal]]
    n_right = tree["n_node_samples"][right[internal]]
    np.testing.assert_array_equal(tree["missing_left"][internal], n_left > n_right)
    # Every split improves the impurity by at least min_impurity_decrease.
    wn = tree["weighted_n_node_samples"]
    imp = tree["impurity"]
    improvement = (
        wn[internal]
        / wn[0]
        * (
            imp[internal]
            - wn[right[internal]] / wn[internal] * imp[right[internal]]
            - wn[left[internal]] / wn[internal] * imp[left[internal]]
        )
    )
    assert (improvement + EPS >= 0.002).all()
    # apply reaches the leaves with the stored counts; values are weighted means/fractions.
    leaf_of = reference_apply(tree, X)
    assert set(leaf_of) == set(leaves)
    np.testing.assert_array_equal(
        np.bincount(leaf_of, minlength=len(feature))[leaves], tree["n_node_samples"][leaves]
    )
    np.testing.assert_allclose(
        np.bincount(leaf_of, weights, len(feature))[leaves], wn[leaves], rtol=1e-12
    )
    value = reference_predict_value(tree, X)
    for leaf in leaves[:5]:
        rows = leaf_of == leaf
        if is_classifier:
            expected = np.bincount(y[rows], weights[rows], N_CLASSES) / weights[rows].sum()
        else:
            expected = [np.average(y[rows], weights=weights[rows])]
        np.testing.assert_allclose(
            value[rows][:, 0], np.tile(expected, (rows.sum(), 1)), rtol=1e-12
        )


def test_best_first_respects_max_leaf_nodes_and_order():
    X, y_class, _, _ = make_data(seed=5)
    full = reference_build(X, y_class, is_classifier=True)
    for n_leaves in (2, 3, 5, 10):
        tree = reference_build(X, y_class, is_classifier=True, max_leaf_nodes=n_leaves)
        assert np.count_nonzero(tree["feature"] < 0) == n_leaves
    stump = reference_build(X, y_class, is_classifier=True, max_leaf_nodes=2)
    for name in ("feature", "threshold"):
        assert stump[name][0] == full[name][0]
    # A budget larger than the full tree gives the full tree.
    n_full_leaves = int(np.count_nonzero(full["feature"] < 0))
    assert_tree_equal(
        reference_build(X, y_class, is_classifier=True, max_leaf_nodes=n_full_leaves + 10), full
    )


def test_assert_tree_equal_messages():
    X, y_class, _, _ = make_data(seed=6)
    tree = reference_build(X, y_class, is_classifier=True, max_depth=3)
    assert_tree_equal(tree, {k: v.copy() for k, v in tree.items()})
    # Objects with attributes are accepted.
    assert_tree_equal(SimpleNamespace(**tree), tree)

    other = {k: v.copy() for k, v in tree.items()}
    other["threshold"][4] = np.nextafter(other["threshold"][4], np.inf)
    other["impurity"][6] *= 1 + 1e-6
    with pytest.raises(AssertionError, match=r"first at node 4:\n  threshold"):
        assert_tree_equal(tree, other)
    other = {k: v.copy() for k, v in tree.items()}
    other["impurity"][6] *= 1 + 1e-6
    with pytest.raises(AssertionError, match="node 6:\n  impurity"):
        assert_tree_equal(tree, other)
    assert_tree_equal(tree, other, rtol=1e-5)
    smaller = reference_build(X, y_class, is_classifier=True, max_depth=2)
    with pytest.raises(AssertionError, match="node counts differ"):
        assert_tree_equal(tree, smaller)


def test_invalid_inputs():
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match="NaN"):
        reference_build([[np.nan], [1.0]], [0, 1], is_classifier=True)
    with pytest.raises(ValueError, match="criterion"):
        reference_build(X, [0.0, 1.0, 2.0], is_classifier=False, criterion="gini")
    with pytest.raises(ValueError, match="class codes"):
        reference_build(X, [0, 1, 2], is_classifier=True, n_classes=2)
    with pytest.raises(ValueError, match="non-negative"):
        reference_build(X, [0, 1, 1], is_classifier=True, sample_weight=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="max_leaf_nodes"):
        reference_build(X, [0, 1, 1], is_classifier=True, max_leaf_nodes=1)
