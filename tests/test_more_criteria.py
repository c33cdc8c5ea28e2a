"""Gain ratio (C4.5), MDL pre-pruning, and the poisson / absolute_error regression criteria."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _assertions import check_tree_invariants, compare_with_sklearn
from _criteria_reference import (
    absolute_error,
    absolute_error_splits,
    c45_choice,
    entropy_bits,
    mdlp_accepts,
    node_rows,
    weighted_median,
)
from _kernel_entry import via_kernel
from _reference import reference_split_with_missing
from conftest import sample_rows
from sklearn import tree as sk_tree

import dtjit
from dtjit import criteria
from dtjit.engine.sweep_absolute_error import absolute_errors_pass, rank_targets

# ----------------------------------------------------------------------------------------
# Gain ratio
# ----------------------------------------------------------------------------------------

# Three binary features over 8 + 8 rows (class 0 first). Hand computation, in bits:
#   A: x=0 holds 6 of class 0 and 2 of class 1 (8 | 8): gain 1 - H(1/4) = 0.18872,
#      split info 1, ratio 0.18872.
#   B: x=0 holds 2 of class 0 only (2 | 14): gain 1 - 14/16 H(6/14) = 0.13793,
#      split info H(1/8) = 0.54356, ratio 0.25373.
#   C: x=0 holds 5 of class 0 and 3 of class 1 (8 | 8): gain 1 - H(3/8) = 0.04557.
# Average gain 0.12407: A and B qualify; information gain picks A, gain ratio picks B.
HAND_Y = np.array([0] * 8 + [1] * 8)
HAND_X = np.array(
    [
        [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1],
    ],
    dtype=float,
).T


def _counts(x, y, value):
    return np.bincount(y[x == value], minlength=2)


def test_hand_computed_gains_and_ratios():
    parent = np.bincount(HAND_Y)
    gains = [
        criteria.information_gain(parent, [_counts(x, HAND_Y, 0), _counts(x, HAND_Y, 1)])
        for x in HAND_X.T
    ]
    ratios = [
        criteria.gain_ratio(parent, [_counts(x, HAND_Y, 0), _counts(x, HAND_Y, 1)])
        for x in HAND_X.T
    ]
    np.testing.assert_allclose(gains, [0.1887, 0.1379, 0.0456], atol=5e-5)
    np.testing.assert_allclose(ratios[:2], [0.1887, 0.2537], atol=5e-5)


@pytest.mark.parametrize("splitter", ["best", "hist", "random"])
def test_gain_ratio_and_gain_pick_different_features(splitter):
    # Binary features: the random splitter's only possible cut is the exact one.
    kw = {"splitter": splitter, "max_depth": 1, "random_state": 0}
    by_gain = dtjit.DecisionTreeClassifier(criterion="entropy", **kw).fit(HAND_X, HAND_Y)
    by_ratio = dtjit.DecisionTreeClassifier(criterion="gain_ratio", **kw).fit(HAND_X, HAND_Y)
    assert by_gain.tree_.feature[0] == 0
    assert by_ratio.tree_.feature[0] == 1
    assert 0.0 <= by_ratio.tree_.threshold[0] < 1.0  # the random splitter draws it
    # Node impurity reported is the entropy.
    np.testing.assert_allclose(by_ratio.tree_.impurity[0], 1.0)
    np.testing.assert_allclose(
        by_ratio.tree_.impurity[1:], [0.0, -(3 / 7) * math.log2(3 / 7) - (4 / 7) * math.log2(4 / 7)]
    )


def test_only_features_with_average_gain_qualify():
    # Without C the average gain is (A + B) / 2 > B: B no longer qualifies and A is chosen
    # although B's ratio is larger.
    est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", max_depth=1)
    assert est.fit(HAND_X[:, :2], HAND_Y).tree_.feature[0] == 0


def test_no_release8_threshold_penalty():
    """Deviation from C4.5 release 8, on purpose: no log2(N - 1) / N penalty.

    M has 20 distinct values, its best cut (11 | 9) has gain 0.7583 and ratio 0.7638; the
    binary feature B has gain 0.6100 and ratio 0.6282. The book's rule picks M. Release 8
    subtracts log2(19) / 20 = 0.2124 from M's gain, then B has the larger ratio.
    """
    y = np.array([0] * 10 + [1] * 10)
    m = np.array([0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 5, 11, 12, 13, 14, 15, 16, 17, 18, 19.0])
    b = np.array([0] * 8 + [1] * 12, dtype=float)
    X = np.column_stack([m, b])
    w = np.ones(20)
    assert c45_choice(X, y, w, 2) == (0, 10.5)
    assert c45_choice(X, y, w, 2, with_penalty=True)[0] == 1
    est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", max_depth=1).fit(X, y)
    assert (est.tree_.feature[0], est.tree_.threshold[0]) == (0, 10.5)


@pytest.fixture(scope="module")
def play_tennis(shared_data):
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "weka" / "weather.nominal.csv", dtype=str)
    # Ordinal codes in alphabetical order: outlook overcast=0, rainy=1, sunny=2.
    X = np.column_stack(
        [np.unique(table[c], return_inverse=True)[1] for c in table.columns[:4]]
    ).astype(float)
    return table, X, table["play"].to_numpy()


def test_play_tennis_root_is_outlook(play_tennis):
    table, X, y = play_tennis
    outlook = table["outlook"].to_numpy()
    parent = criteria.class_counts(y)
    three_way = criteria.gain_ratio(parent, criteria.branch_counts(outlook, y))
    assert round(three_way, 4) == 0.1564  # Quinlan's multiway outlook split
    est = dtjit.DecisionTreeClassifier(criterion="gain_ratio").fit(X, y)
    # Binary version: overcast (4 yes) against the rest (5 yes, 5 no).
    assert (est.tree_.feature[0], est.tree_.threshold[0]) == (0, 0.5)
    binary_ratio = criteria.gain_ratio(parent, [[0, 4], [5, 5]])
    assert round(binary_ratio, 4) == round((0.940286 - 10 / 14) / 0.863121, 4)
    codes = np.searchsorted(est.classes_, y)
    assert c45_choice(X, codes, np.ones(len(y)), 2) == (0, 0.5)
    check_tree_invariants(est)


def _assert_every_split_is_c45(est, X, y, w):
    codes = np.searchsorted(est.classes_, y)
    tree = est.tree_
    rows = node_rows(tree, X)
    n_split = 0
    for node in range(tree.node_count):
        if tree.children_left[node] == -1:
            continue
        r = rows[node]
        expected = c45_choice(X[r], codes[r], w[r], len(est.classes_))
        assert (tree.feature[node], tree.threshold[node]) == expected, f"node {node}"
        n_split += 1
    assert n_split > 5


@pytest.mark.parametrize(
    "params",
    [
        {"splitter": "best"},
        {"splitter": "hist"},  # few distinct values: the hist tree is the exact one
        {"splitter": "best", "max_leaf_nodes": 12},
        {"splitter": "best", "n_jobs": 2},
    ],
)
def test_gain_ratio_matches_python_reference(params):
    rng = np.random.default_rng(7)
    n = 400
    # Features of very different cardinality: gain ratio exists to correct gain's bias
    # towards many-valued ones.
    X = np.column_stack(
        [
            rng.integers(0, 2, n),
            rng.integers(0, 4, n),
            rng.integers(0, 60, n),
            rng.integers(0, 200, n),
            rng.integers(0, 9, n),
        ]
    ).astype(float)
    y = (X[:, 0] + (X[:, 1] > 1) + (X[:, 3] > 120) + rng.integers(0, 2, n)) % 3
    w = rng.integers(1, 4, n).astype(float)  # integer weights: exact sums in any order
    est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", max_depth=6, **params)
    est.fit(X, y, sample_weight=w)
    _assert_every_split_is_c45(est, X, y, w)
    check_tree_invariants(est)


def _c45_choice_with_missing(X, codes, n_classes, count_nan_left=True):
    """C4.5's feature for one node's rows, NaN allowed: every feature's best entropy split
    (NaN side included) from the NaN-aware reference sweep; its split information from the
    rows it sends left, NaN rows included unless ``count_nan_left`` is False (a bug this
    reference can show the effect of). Returns ``(feature, threshold)`` or ``None``."""
    n = len(codes)
    impurity = entropy_bits(np.bincount(codes, minlength=n_classes), n)
    splits = {}
    for f in range(X.shape[1]):
        ref = reference_split_with_missing(X[:, f], codes, np.ones(n), "entropy", True, n_classes)
        if ref is not None:
            proxy, threshold, missing, left_rows = ref
            n_left = len(left_rows)
            if not count_nan_left:
                n_left -= int(np.isnan(X[left_rows, f]).sum())
            splits[f] = (impurity + proxy / n, threshold, n_left)
    if not splits:
        return None
    average = sum(s[0] for s in splits.values()) / len(splits)
    ratios = {
        f: gain / entropy_bits([n_left, n - n_left], n)
        for f, (gain, _, n_left) in splits.items()
        if gain >= average - 1e-12
    }
    best = max(ratios, key=lambda f: (ratios[f], -f))
    return best, splits[best][1]


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_gain_ratio_with_missing_values_counts_nan_rows_on_their_side(splitter):
    """With NaN, a split's information counts the NaN rows on the side they go to."""
    n_discriminating = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        n = 300
        X = np.column_stack(
            [rng.integers(0, 2, n), rng.integers(0, 5, n), rng.integers(0, 40, n)]
        ).astype(np.float32)
        y = ((X[:, 0] + (X[:, 1] > 2) + (X[:, 2] > 25) + rng.integers(0, 2, n)) % 3).astype(int)
        X[rng.random((n, 3)) < 0.4] = np.nan
        est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", max_depth=5, splitter=splitter)
        tree = est.fit(X, y).tree_
        rows = node_rows(tree, X)
        for node in np.flatnonzero(tree.children_left >= 0):
            r = rows[node]
            expected = _c45_choice_with_missing(X[r], y[r], 3)
            assert (tree.feature[node], tree.threshold[node]) == expected, (
                f"seed {seed} node {node}"
            )
            n_discriminating += _c45_choice_with_missing(X[r], y[r], 3, False) != expected
    assert n_discriminating > 0  # some node's choice depends on counting the NaN rows


def test_gain_ratio_random_splitter_and_max_features_run():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    for params in ({"splitter": "random"}, {"max_features": 2}):
        est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", random_state=0, **params)
        est.fit(X, y)
        check_tree_invariants(est)
        assert est.score(X, y) == 1.0
        again = dtjit.DecisionTreeClassifier(criterion="gain_ratio", random_state=0, **params)
        np.testing.assert_array_equal(again.fit(X, y).tree_.threshold, est.tree_.threshold)


# ----------------------------------------------------------------------------------------
# MDL pre-pruning
# ----------------------------------------------------------------------------------------


def test_mdl_stop_hand_computation():
    x = np.arange(6.0).reshape(-1, 1)
    y = np.array([0, 0, 1, 0, 1, 1])
    # Best cut 1.5: (2, 0) | (1, 3). Gain = 1 - 4/6 H(1/4) = 0.45915; threshold
    # log2(5)/6 + (log2(7) - [2 - 0 - 2 H(1/4)])/6 = 0.38699 + 0.40505 = 0.79204: rejected.
    gain = 1 - 4 / 6 * (-(0.25 * math.log2(0.25)) - 0.75 * math.log2(0.75))
    assert round(gain, 5) == 0.45915
    assert not mdlp_accepts([2, 0], [1, 3])
    free = dtjit.DecisionTreeClassifier(criterion="entropy").fit(x, y)
    assert free.tree_.threshold[0] == 1.5
    stopped = dtjit.DecisionTreeClassifier(criterion="entropy", mdl_stop=True).fit(x, y)
    assert stopped.tree_.node_count == 1
    # A clean cut of 10 rows: Gain 1 > log2(9)/10 + (log2(7) - 2)/10 = 0.39768: accepted.
    x10 = np.arange(10.0).reshape(-1, 1)
    y10 = np.array([0] * 5 + [1] * 5)
    assert mdlp_accepts([5, 0], [0, 5])
    est = dtjit.DecisionTreeClassifier(criterion="gini", mdl_stop=True).fit(x10, y10)
    assert est.tree_.node_count == 3 and est.tree_.threshold[0] == 4.5


def test_mdl_stop_weights_act_as_repeated_rows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, size=(80, 2)).astype(float)
    y = (X[:, 0] + rng.integers(0, 5, 80) > 8).astype(int)
    w = rng.integers(1, 4, 80)
    weighted = dtjit.DecisionTreeClassifier(criterion="entropy", mdl_stop=True)
    weighted.fit(X, y, sample_weight=w.astype(float))
    repeated = dtjit.DecisionTreeClassifier(criterion="entropy", mdl_stop=True)
    repeated.fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_array_equal(weighted.tree_.feature, repeated.tree_.feature)
    np.testing.assert_array_equal(weighted.tree_.threshold, repeated.tree_.threshold)


def test_mdl_stop_splits_no_node_weighing_less_than_two(iris_data):
    X, y = iris_data
    est = dtjit.DecisionTreeClassifier(criterion="entropy", mdl_stop=True)
    grown = est.fit(X, y).tree_.node_count
    assert grown > 3
    # Weights summing to 1 (as AdaBoost passes them): log2(N - 1) was -inf at the root,
    # which accepted its split, and NaN below, which refused every other one.
    with pytest.warns(UserWarning, match="sum to 1: the MDL test splits no node weighing"):
        est.fit(X, y, sample_weight=np.full(len(y), 1.0 / len(y)))
    assert est.tree_.node_count == 1
    # Half-weight rows: only nodes weighing at least 2 are split, and nothing warns.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        half = est.fit(X, y, sample_weight=np.full(len(y), 0.5)).tree_
    split = half.children_left != -1
    assert split.any() and (half.weighted_n_node_samples[split] >= 2.0).all()
    # Weights below 2**-400 are rescaled by a power of two before the test counts them.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert est.fit(X, y, sample_weight=np.full(len(y), 1e-125)).tree_.node_count > 1


@pytest.mark.parametrize("dataset", ["iris", "breast_cancer"])
def test_single_feature_tree_with_mdl_stop_cuts_where_mdlp_cuts(
    dataset, iris_data, breast_cancer_data
):
    X, y = iris_data if dataset == "iris" else breast_cancer_data
    features = range(4) if dataset == "iris" else (0, 7, 20, 27)
    for f in features:
        # float32 values, so the tree's float32 midpoints and MDLP's agree exactly.
        x = X[:, [f]].astype(np.float32).astype(np.float64)
        cuts = dtjit.MDLPDiscretizer().fit(x, y).cut_points_[0]
        est = dtjit.DecisionTreeClassifier(criterion="entropy", mdl_stop=True).fit(x, y)
        thresholds = np.sort(est.tree_.threshold[est.tree_.children_left != -1])
        np.testing.assert_array_equal(thresholds, cuts, err_msg=f"feature {f}")
        assert len(cuts) > 0
    for splitter in ("hist", "best"):
        # Every split of a multi-feature tree passes the test (checked by hand here).
        est = dtjit.DecisionTreeClassifier(mdl_stop=True, splitter=splitter).fit(X, y)
        codes = np.searchsorted(est.classes_, y)
        rows = node_rows(est.tree_, X)
        for node in np.flatnonzero(est.tree_.children_left != -1):
            left = np.bincount(
                codes[rows[est.tree_.children_left[node]]], minlength=len(est.classes_)
            )
            right = np.bincount(
                codes[rows[est.tree_.children_right[node]]], minlength=len(est.classes_)
            )
            assert mdlp_accepts(left, right)


def test_mdl_stop_is_a_classifier_option():
    with pytest.raises(TypeError, match="mdl_stop"):
        dtjit.DecisionTreeRegressor(mdl_stop=True)
    with pytest.raises(ValueError, match="mdl_stop"):
        dtjit.DecisionTreeClassifier(mdl_stop="yes").fit([[0.0], [1.0]], [0, 1])


# ----------------------------------------------------------------------------------------
# Poisson and absolute error
# ----------------------------------------------------------------------------------------


def _cal_housing(shared_data, n=1500, seed=0):
    a = np.loadtxt(shared_data / "cal_housing.data.gz", delimiter=",")
    a = a[sample_rows(len(a), n, seed)]
    return a[:, :8], a[:, 8] / 100_000.0


def _cpu(shared_data):
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "weka" / "cpu.csv")
    return table.iloc[:, :-1].to_numpy(float), table["class"].to_numpy(float)


def _datasets(shared_data, diabetes_data):
    return {
        "diabetes": diabetes_data,
        "cal_housing": _cal_housing(shared_data),
        "cpu": _cpu(shared_data),
    }


def _parity(ours, theirs, X, y, w=None):
    cmp = compare_with_sklearn(ours, theirs, X, y, w, impurity_atol=1e-9 * float(np.var(y)))
    assert not cmp.mismatches, "\n".join(cmp.mismatches[:5])
    assert not cmp.pure_splits
    return cmp


@pytest.mark.parametrize("criterion", ["poisson", "absolute_error"])
def test_parity_with_sklearn_on_real_data(criterion, shared_data, diabetes_data):
    """Every node equal to scikit-learn's, or a proven tie (then scikit-learn picks at random).

    These targets are integers or rounded (house values in steps of 100, capped), and the
    features hold duplicates, so exactly equal splits are common in deep trees.
    """
    for X, y in _datasets(shared_data, diabetes_data).values():
        for max_depth in (4, None):
            ours = dtjit.DecisionTreeRegressor(criterion=criterion, max_depth=max_depth)
            ours.fit(X, y)
            check_tree_invariants(ours)
            theirs = sk_tree.DecisionTreeRegressor(
                criterion=criterion, max_depth=max_depth, random_state=0
            ).fit(X, y)
            _parity(ours, theirs, X, y)


@pytest.mark.parametrize("criterion", ["poisson", "absolute_error"])
def test_identical_to_sklearn_without_ties(criterion, shared_data):
    X, y = _cal_housing(shared_data)
    ours = dtjit.DecisionTreeRegressor(criterion=criterion, max_depth=4).fit(X, y)
    theirs = sk_tree.DecisionTreeRegressor(criterion=criterion, max_depth=4, random_state=0)
    theirs.fit(X, y)
    assert _parity(ours, theirs, X, y).identical
    assert ours.tree_.node_count == theirs.tree_.node_count
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    # The pruning path is computed from node impurities: scikit-learn's too.
    ours_path = ours.cost_complexity_pruning_path(X, y)
    theirs_path = theirs.cost_complexity_pruning_path(X, y)
    assert len(ours_path.ccp_alphas) == len(theirs_path.ccp_alphas) > 5
    np.testing.assert_allclose(ours_path.ccp_alphas, theirs_path.ccp_alphas, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(ours_path.impurities, theirs_path.impurities, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("criterion", ["poisson", "absolute_error"])
def test_parity_with_sklearn_weighted(criterion, diabetes_data):
    X, y = diabetes_data
    w = np.random.default_rng(1).integers(0, 4, len(y)).astype(float)
    ours = dtjit.DecisionTreeRegressor(criterion=criterion, min_samples_leaf=3).fit(X, y, w)
    theirs = sk_tree.DecisionTreeRegressor(
        criterion=criterion, min_samples_leaf=3, random_state=0
    ).fit(X, y, w)
    _parity(ours, theirs, X, y, w)


def test_absolute_error_passes_match_brute_force():
    """The Fenwick-tree prefix / suffix absolute errors against sorting every prefix."""
    rng = np.random.default_rng(5)
    n = 60
    y = rng.integers(0, 15, n).astype(float)  # ties in y
    w = rng.integers(1, 4, n).astype(float)  # integer weights: exact half-weight medians
    idx = rng.permutation(n).astype(np.int32)
    rank_of = np.empty(n, dtype=np.int64)
    sorted_y = np.empty(n, dtype=np.float64)
    rank_targets(np.zeros(1, dtype=np.int64), np.array([0]), np.array([n]), idx, y, rank_of,
                 sorted_y)  # fmt: skip
    tree_w, tree_wy = np.empty(n + 1), np.empty(n + 1)
    forward, backward = np.empty(n), np.empty(n)
    errors_pass = via_kernel(absolute_errors_pass)
    errors_pass(idx, 0, n, 0, 0, 0, rank_of, sorted_y, w, n, tree_w, tree_wy, forward)
    errors_pass(idx, n - 1, -1, 0, 0, 0, rank_of, sorted_y, w, n, tree_w, tree_wy, backward)
    for p in range(n):
        head, tail = idx[: p + 1], idx[p:]
        assert forward[p] == pytest.approx(absolute_error(y[head], w[head]), abs=1e-9)
        assert backward[p] == pytest.approx(absolute_error(y[tail], w[tail]), abs=1e-9)


def test_absolute_error_tree_matches_brute_force_reference():
    rng = np.random.default_rng(11)
    n = 160
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 10, n), rng.uniform(size=n)])
    y = X[:, 0] * 3 + np.sin(4 * X[:, 2]) + rng.standard_t(2, size=n)
    w = rng.uniform(0.5, 2.0, n)
    est = dtjit.DecisionTreeRegressor(criterion="absolute_error", max_depth=5)
    est.fit(X, y, sample_weight=w)
    tree = est.tree_
    rows = node_rows(tree, X)
    for node in range(tree.node_count):
        r = rows[node]
        assert tree.value[node, 0, 0] == pytest.approx(weighted_median(y[r], w[r]), abs=1e-12)
        assert tree.impurity[node] == pytest.approx(
            absolute_error(y[r], w[r]) / w[r].sum(), rel=1e-9, abs=1e-12
        )
        if tree.children_left[node] == -1:
            continue
        candidates = [
            (error, f, threshold)
            for f in range(X.shape[1])
            for threshold, error in absolute_error_splits(X[r, f], y[r], w[r])
        ]
        best_error = min(c[0] for c in candidates)
        first_best = next(c for c in candidates if c[0] <= best_error * (1 + 1e-12) + 1e-12)
        assert (tree.feature[node], tree.threshold[node]) == first_best[1:], f"node {node}"


def test_absolute_error_leaf_values_are_weighted_medians():
    X = np.zeros((4, 1))
    y = np.array([1.0, 2.0, 3.0, 10.0])
    est = dtjit.DecisionTreeRegressor(criterion="absolute_error").fit(X, y, [1, 1, 1, 1])
    assert est.predict(X[:1])[0] == 2.5  # half the weight below 2 and above 3: midpoint
    est.fit(X, y, [1, 1, 3, 1])
    assert est.predict(X[:1])[0] == 3.0
    assert est.tree_.impurity[0] == pytest.approx((2 + 1 + 7) / 6)


@pytest.mark.parametrize("splitter", ["best", "random", "hist"])
@pytest.mark.parametrize("criterion", ["poisson", "absolute_error"])
def test_nodes_of_equal_targets_are_leaves(criterion, splitter):
    """A node whose targets are all equal is pure: impurity 0, never split.

    Their impurities read the rows (y / mean, the pinball identity), and rounding left 1e-16
    to 6e-14 in such nodes, which were then split with zero gain (about 1 fit in 9 for
    absolute_error, 1 in 4 for poisson on the data below).
    """
    if splitter == "hist" and criterion == "absolute_error":
        pytest.skip("absolute_error has no histogram search")
    rng = np.random.default_rng(7)
    for fit in range(60):
        n = int(rng.integers(3, 12))
        X = rng.integers(0, 4, size=(n, 2)).astype(float)
        # Equal targets on the rows with x0 < 2 (a pure region below the root), else all.
        y = np.full(n, rng.choice([5.9, 0.1, 252.0, 1e-3]))
        if fit % 2:
            y[X[:, 0] >= 2] = rng.uniform(1, 9, size=int((X[:, 0] >= 2).sum()))
        w = rng.uniform(0.1, 3, size=n) if fit % 3 else None
        est = dtjit.DecisionTreeRegressor(
            criterion=criterion, splitter=splitter, random_state=fit
        ).fit(X, y, w)
        tree = est.tree_
        path = est.decision_path(X).toarray().astype(bool)
        for node in np.flatnonzero(tree.children_left >= 0):
            assert np.ptp(y[path[:, node]]) > 0, f"fit {fit}: split node {node} is pure"
        pure = [node for node in range(tree.node_count) if np.ptp(y[path[:, node]]) == 0]
        assert np.all(tree.impurity[pure] == 0.0), f"fit {fit}"


def test_poisson_rejects_children_without_positive_sum():
    x = np.arange(8.0).reshape(-1, 1)
    y = np.array([0, 0, 0, 0, 1, 3, 2, 4.0])
    est = dtjit.DecisionTreeRegressor(criterion="poisson").fit(x, y)
    leaves = est.tree_.children_left == -1
    assert np.all(est.tree_.value[leaves, 0, 0] > 0)  # no zero-mean leaf, unlike squared error
    sq = dtjit.DecisionTreeRegressor().fit(x, y)
    assert np.any(sq.tree_.value[sq.tree_.children_left == -1, 0, 0] == 0)
    theirs = sk_tree.DecisionTreeRegressor(criterion="poisson").fit(x, y)
    np.testing.assert_allclose(est.predict(x), theirs.predict(x))


def test_poisson_hist_equals_exact_on_few_values(diabetes_data):
    X, y = diabetes_data
    exact = dtjit.DecisionTreeRegressor(criterion="poisson", max_depth=6).fit(X[:, [1, 3]], y)
    hist = dtjit.DecisionTreeRegressor(criterion="poisson", max_depth=6, splitter="hist")
    hist.fit(X[:, [1, 3]], y)  # sex (2 values), bp (100 values): below max_bins
    np.testing.assert_array_equal(hist.tree_.feature, exact.tree_.feature)
    np.testing.assert_array_equal(hist.tree_.threshold, exact.tree_.threshold)
    np.testing.assert_allclose(hist.tree_.impurity, exact.tree_.impurity, rtol=1e-12)


def test_regression_criteria_with_random_splitter_and_best_first(diabetes_data):
    X, y = diabetes_data
    for criterion in ("poisson", "absolute_error"):
        for params in ({"splitter": "random", "random_state": 0}, {"max_leaf_nodes": 10}):
            est = dtjit.DecisionTreeRegressor(criterion=criterion, **params).fit(X, y)
            check_tree_invariants(est)
            if "max_leaf_nodes" in params:
                assert est.get_n_leaves() == 10
                theirs = sk_tree.DecisionTreeRegressor(
                    criterion=criterion, random_state=0, **params
                ).fit(X, y)
                np.testing.assert_allclose(est.predict(X), theirs.predict(X), rtol=1e-12)


@pytest.mark.parametrize(
    ("params", "y", "match"),
    [
        ({"criterion": "poisson"}, [1.0, -1.0, 2.0], "negative"),
        ({"criterion": "poisson"}, [0.0, 0.0, 0.0], "Sum of y is not positive"),
        ({"criterion": "absolute_error", "splitter": "hist"}, [1.0, 2.0, 3.0], "hist"),
        ({"criterion": "gain_ratio"}, [1.0, 2.0, 3.0], "criterion"),
    ],
)
def test_regression_criterion_errors(params, y, match):
    with pytest.raises(ValueError, match=match):
        dtjit.DecisionTreeRegressor(**params).fit(np.arange(3.0).reshape(-1, 1), y)


@pytest.mark.parametrize("splitter", ["best", "random", "hist"])
@pytest.mark.parametrize(
    ("y", "sample_weight", "total"),
    [([0.0, 0.0, 2.0], [1.0, 1.0, 0.0], "0"), ([1e-100, 2e-100, 3e-100], None, "6e-100")],
)
def test_poisson_needs_a_positive_weighted_target_sum(splitter, y, sample_weight, total):
    # Every deviance would be infinite (scikit-learn keeps the root with impurity inf).
    X = np.arange(3.0).reshape(-1, 1)
    with pytest.raises(ValueError, match=f"weighted sum of y is {total}; Poisson"):
        dtjit.DecisionTreeRegressor(criterion="poisson", splitter=splitter).fit(
            X, y, sample_weight=sample_weight
        )
