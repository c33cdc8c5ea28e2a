"""The criteria beyond gini / entropy / squared error with NaN in X and with categorical splits.

- ``poisson`` and ``absolute_error`` with NaN in X (scikit-learn 1.9 supports both with
  ``splitter="best"`` and ``"random"``): every split optimal by brute force over
  scikit-learn's candidates (NaN right, "values | NaN", NaN left), every node's impurity and
  value recomputed from its rows, parity with scikit-learn on real data.
- ``gain_ratio`` with categorical features: C4.5's choice among numeric thresholds and
  category subsets, against a Python reference.
- ``poisson`` with categorical features: the ordering by mean target is optimal (brute force
  over all subsets), children impurities from the right rows.
- ``absolute_error`` with categorical features stays an error.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _assertions import check_tree_invariants, compare_with_sklearn
from _categorical_reference import POISSON_EPSILON, brute_force_subsets, proxy
from _criteria_reference import (
    FEATURE_THRESHOLD,
    absolute_error,
    entropy_bits,
    node_rows,
    weighted_median,
)
from _kernel_entry import via_kernel
from _reference import reference_split_with_missing
from conftest import read_adult, sample_rows
from sklearn import tree as sk_tree

import dtjit
from dtjit.engine.jit import POISSON
from dtjit.engine.sweep_absolute_error import absolute_errors_pass, rank_targets
from dtjit.engine.sweep_categorical import best_category_subset

REGRESSION_CRITERIA = ["poisson", "absolute_error"]


def _with_nan(X, fraction, seed):
    X = np.array(X, dtype=np.float32)
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


# --------------------------------------------------------------------------------------------
# References: one node's rows, plain numpy
# --------------------------------------------------------------------------------------------
def _children_loss(y, w, criterion):
    """``sum(w * loss)`` of one child: Poisson half deviance or absolute error (inf: invalid)."""
    if criterion == "poisson":
        s = math.fsum(w * y)
        if s <= POISSON_EPSILON:
            return math.inf  # scikit-learn never makes a child predicting 0
        mean = s / w.sum()
        positive = y > 0
        return float(np.sum(w[positive] * y[positive] * np.log(y[positive] / mean)))
    return absolute_error(y, w)


def _node_loss(y, w, criterion):
    """The node's impurity as scikit-learn defines it (the loss divided by the weight)."""
    return _children_loss(y, w, criterion) / w.sum()


def regression_candidates(x, y, w, criterion, min_samples_leaf=1):
    """Every split of one feature in scikit-learn 1.9's order, with its children's loss.

    Returns a list of ``(loss, threshold, nan_left)``: cuts between distinct values with the
    NaN rows right, the cut "every value | NaN" (threshold inf), cuts with the NaN rows left;
    ``nan_left`` is None when the node has no NaN in the feature. Cuts leaving a child fewer
    than ``min_samples_leaf`` rows are left out.
    """
    x = np.asarray(x, dtype=np.float32)
    missing = np.isnan(x)
    values = np.unique(x[~missing])
    cuts = []
    for nan_left in (False, True):
        if nan_left and not missing.any():
            break
        for a, b in zip(values[:-1], values[1:], strict=True):
            if b > a + FEATURE_THRESHOLD:
                t = float(a) / 2.0 + float(b) / 2.0
                cuts.append((np.where(missing, nan_left, x <= t), t, nan_left))
        if missing.any() and not nan_left and len(values):
            cuts.append((~missing, math.inf, False))
    out = []
    for left, t, nan_left in cuts:
        if min(left.sum(), (~left).sum()) < min_samples_leaf:
            continue
        loss = _children_loss(y[left], w[left], criterion) + _children_loss(
            y[~left], w[~left], criterion
        )
        out.append((loss, t, nan_left if missing.any() else None))
    return out


def assert_regression_tree_is_optimal(est, X, y, w, min_samples_leaf=1, rel=1e-9):
    """Every node's value and impurity from its rows; every split among the best candidates.

    Candidates whose loss is within ``rel`` of the best are equally good up to rounding; the
    tree's split must be one of them, and the first when it is the only one.
    """
    tree = est.tree_
    rows = node_rows(tree, X)
    criterion = est.criterion
    n_checked = n_nan_left = 0
    for node in range(tree.node_count):
        r = rows[node]
        assert tree.n_node_samples[node] == len(r)
        if criterion == "absolute_error":
            expected_value = weighted_median(y[r], w[r])
        else:
            expected_value = np.average(y[r], weights=w[r])
        assert tree.value[node, 0, 0] == pytest.approx(expected_value, rel=1e-12, abs=1e-12)
        assert tree.impurity[node] == pytest.approx(
            _node_loss(y[r], w[r], criterion), rel=1e-9, abs=1e-12
        ), f"impurity of node {node}"
        if tree.children_left[node] == -1:
            continue
        candidates = [
            (loss, f, t, nan_left)
            for f in range(X.shape[1])
            for loss, t, nan_left in regression_candidates(
                X[r, f], y[r], w[r], criterion, min_samples_leaf
            )
        ]
        best = min(c[0] for c in candidates)
        near = [c[1:] for c in candidates if c[0] <= best + rel * abs(best) + 1e-12]
        f = int(tree.feature[node])
        has_nan = bool(np.isnan(X[r, f].astype(np.float32)).any())
        ours = (f, float(tree.threshold[node]), bool(tree.missing_left[node]) if has_nan else None)
        assert ours in near, f"node {node}: {ours} not among the best {near[:3]}"
        if len(near) == 1:
            assert ours == near[0]
        n_checked += 1
        n_nan_left += has_nan and bool(tree.missing_left[node])
    return n_checked, n_nan_left


def _poisson_data(n, seed):
    """Counts whose rate depends on three features; NaN where x0 is large (informative)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    rate = np.exp(0.8 * X[:, 0] - 0.5 * np.abs(X[:, 1]) + 0.3 * X[:, 2])
    y = rng.poisson(rate).astype(float)
    X = _with_nan(X, 0.2, seed + 1)
    X[rng.random(n) < 0.5 * (X[:, 0] > 0.5), 0] = np.nan  # missing not at random
    return X, y


def _absolute_error_data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + rng.standard_t(2, size=n)
    X = _with_nan(X, 0.2, seed + 1)
    y[np.isnan(X[:, 1])] += 2.0  # missing carries signal: NaN left is sometimes best
    return X, y


DATA = {"poisson": _poisson_data, "absolute_error": _absolute_error_data}


# --------------------------------------------------------------------------------------------
# poisson / absolute_error with NaN in X
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("criterion", REGRESSION_CRITERIA)
@pytest.mark.parametrize("weighted", [False, True])
def test_nan_splits_are_optimal_and_impurities_exact(criterion, weighted):
    """The children's impurities come from the rows each child really holds (NaN included)."""
    X, y = DATA[criterion](300, seed=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    est = dtjit.DecisionTreeRegressor(criterion=criterion, max_depth=5, min_samples_leaf=2)
    est.fit(X, y, sample_weight=w)
    check_tree_invariants(est)
    n_checked, n_nan_left = assert_regression_tree_is_optimal(est, X, y, w, min_samples_leaf=2)
    assert n_checked > 10
    assert n_nan_left > 0  # the NaN-left sweep is exercised and its children are right


@pytest.mark.parametrize("criterion", REGRESSION_CRITERIA)
def test_nan_only_and_constant_value_features(criterion):
    """A feature with one value plus NaN can split values | NaN (threshold inf); all-NaN cannot."""
    x = np.array([1.0, 1.0, 1.0, np.nan, np.nan, np.nan, 1.0, np.nan])
    y = np.array([1.0, 2.0, 1.0, 6.0, 7.0, 5.0, 1.0, 6.0])
    est = dtjit.DecisionTreeRegressor(criterion=criterion).fit(x.reshape(-1, 1), y)
    assert est.tree_.threshold[0] == np.inf and est.tree_.missing_left[0] == 0
    theirs = sk_tree.DecisionTreeRegressor(criterion=criterion).fit(x.reshape(-1, 1), y)
    np.testing.assert_allclose(est.predict(x.reshape(-1, 1)), theirs.predict(x.reshape(-1, 1)))
    all_nan = np.c_[np.full(8, np.nan), x]
    est = dtjit.DecisionTreeRegressor(criterion=criterion).fit(all_nan, y)
    assert est.tree_.feature[0] == 1


def _titanic_fare(shared_data):
    """Titanic fare (a non-negative amount) from class, age, family and body (NaN in age, body)."""
    df = pd.read_csv(shared_data / "titanic3.csv", keep_default_na=False, na_values=[""])
    df = df[df["fare"].notna()]
    X = df[["pclass", "age", "sibsp", "parch", "body"]].to_numpy(np.float64)
    return X, df["fare"].to_numpy(np.float64)


def _cal_housing_with_nan(shared_data, n=1500):
    a = np.loadtxt(shared_data / "cal_housing.data.gz", delimiter=",")
    a = a[sample_rows(len(a), n, 0)]
    return _with_nan(a[:, :8], 0.15, seed=5).astype(np.float64), a[:, 8] / 100_000.0


@pytest.mark.parametrize("criterion", REGRESSION_CRITERIA)
@pytest.mark.parametrize("load", [_titanic_fare, _cal_housing_with_nan], ids=["titanic", "housing"])
def test_nan_parity_with_sklearn_on_real_data(criterion, load, shared_data):
    """Every node scikit-learn's, or a proven tie (equal quality: it picks at random)."""
    X, y = load(shared_data)
    assert np.isnan(X).any()
    # Level-wise growth: with max_leaf_nodes, a tie anywhere (scikit-learn's random pick)
    # changes where the rest of the leaf budget goes, and the trees cannot be compared.
    for params in ({"max_depth": 5}, {"min_samples_leaf": 5, "max_depth": 7}):
        ours = dtjit.DecisionTreeRegressor(criterion=criterion, **params).fit(X, y)
        theirs = sk_tree.DecisionTreeRegressor(criterion=criterion, random_state=0, **params)
        theirs.fit(X, y)
        cmp = compare_with_sklearn(ours, theirs, X, y, impurity_atol=1e-9 * float(np.var(y)))
        assert not cmp.mismatches, "\n".join(cmp.mismatches[:3])
        assert cmp.same_nodes > 10
        check_tree_invariants(ours)


@pytest.mark.parametrize("criterion", REGRESSION_CRITERIA)
def test_nan_random_splitter_and_parallel(criterion):
    """Random thresholds and NaN sides (a coin) give valid trees with exact impurities; threads
    change nothing."""
    X, y = DATA[criterion](400, seed=8)
    a = dtjit.DecisionTreeRegressor(criterion=criterion, splitter="random", random_state=2)
    b = dtjit.DecisionTreeRegressor(criterion=criterion, splitter="random", random_state=2)
    a.fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.fit(X, y).tree_.threshold)
    check_tree_invariants(a)
    tree = a.tree_
    rows = node_rows(tree, X)
    w = np.ones(len(y))
    for node in range(tree.node_count):
        r = rows[node]
        assert tree.impurity[node] == pytest.approx(
            _node_loss(y[r], w[r], criterion), rel=1e-9, abs=1e-12
        )
    split = tree.feature >= 0
    has_nan = np.array([np.isnan(X[rows[n], tree.feature[n]]).any() if split[n] else False
                        for n in range(tree.node_count)])  # fmt: skip
    assert 0 < tree.missing_left[has_nan].mean() < 1  # both sides drawn
    X, y = DATA[criterion](50_000, seed=9)  # large enough for the threads to be used
    serial = dtjit.DecisionTreeRegressor(criterion=criterion, max_depth=6).fit(X, y)
    threaded = dtjit.DecisionTreeRegressor(criterion=criterion, max_depth=6, n_jobs=2)
    np.testing.assert_array_equal(serial.tree_.threshold, threaded.fit(X, y).tree_.threshold)
    np.testing.assert_array_equal(serial.tree_.impurity, threaded.tree_.impurity)


def test_poisson_hist_equals_exact_with_nan():
    """Few distinct values: the hist splitter's NaN bin gives the exact splitter's tree."""
    rng = np.random.default_rng(9)
    X = rng.integers(0, 30, size=(500, 3)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = rng.poisson(np.exp(0.05 * np.nan_to_num(X[:, 0], nan=40) - 0.5)).astype(float)
    exact = dtjit.DecisionTreeRegressor(criterion="poisson", max_depth=6).fit(X, y)
    hist = dtjit.DecisionTreeRegressor(criterion="poisson", max_depth=6, splitter="hist")
    hist.fit(X, y)
    for name in ("feature", "threshold", "missing_left", "n_node_samples"):
        np.testing.assert_array_equal(getattr(hist.tree_, name), getattr(exact.tree_, name))
    np.testing.assert_allclose(hist.tree_.impurity, exact.tree_.impurity, rtol=1e-12)


def test_absolute_error_pass_with_preloaded_rows_matches_brute_force():
    """The NaN-left forward pass: rows preloaded into the Fenwick tree are in every prefix."""
    rng = np.random.default_rng(6)
    n, n_pre = 50, 12
    y = rng.integers(0, 12, n).astype(float)
    w = rng.integers(1, 4, n).astype(float)
    idx = rng.permutation(n).astype(np.int32)
    rank_of = np.empty(n, dtype=np.int64)
    sorted_y = np.empty(n, dtype=np.float64)
    rank_targets(np.zeros(1, dtype=np.int64), np.array([0]), np.array([n]), idx, y, rank_of,
                 sorted_y)  # fmt: skip
    tree_w, tree_wy, out = np.empty(n + 1), np.empty(n + 1), np.empty(n)
    stop = n - n_pre  # positions [stop, n) are preloaded, [0, stop) swept
    errors_pass = via_kernel(absolute_errors_pass)
    errors_pass(idx, 0, stop, stop, n, 0, rank_of, sorted_y, w, n, tree_w, tree_wy, out)
    for p in range(stop):
        rows = np.r_[idx[stop:], idx[: p + 1]]
        assert out[p] == pytest.approx(absolute_error(y[rows], w[rows]), abs=1e-9)


# --------------------------------------------------------------------------------------------
# gain_ratio with categorical features
# --------------------------------------------------------------------------------------------
def _entropy_proxy(left, total, w_left, weight):
    """``-W_r H_r - W_l H_l`` in bits, with the kernels' arithmetic (``entropy_bits``)."""
    w_right = weight - w_left
    return -w_right * entropy_bits(total - left, w_right) - w_left * entropy_bits(left, w_left)


def _ordered_subset(x, codes, w):
    """dtjit's documented subset search for two classes, written out: categories (NaN last)
    ordered by weighted class-1 rate (stable), best prefix by information gain.

    Returns ``(proxy, left categories, left weight)`` or None (one category only)."""
    present = sorted(set(x[~np.isnan(x)].tolist())) + ([math.nan] if np.isnan(x).any() else [])
    if len(present) < 2:
        return None
    groups = [np.isnan(x) if math.isnan(c) else x == c for c in present]
    stats = np.array([[w[g & (codes == k)].sum() for k in (0, 1)] for g in groups])
    weights = stats.sum(axis=1)
    order = np.argsort(stats[:, 1] / weights, kind="stable")
    total = stats.sum(axis=0)
    weight = float(weights.sum())
    best = None
    left = np.zeros(2)
    for t in range(len(present) - 1):
        left = left + stats[order[t]]
        w_left = float(left.sum())
        p = _entropy_proxy(left, total, w_left, weight)
        if best is None or p > best[0]:
            best = (p, frozenset(present[j] for j in order[: t + 1]), w_left)
    # The prefix order is optimal: no subset has a larger gain (brute force).
    brute = max(q for q, _ in brute_force_subsets(stats, weights, np.ones(len(weights)), "entropy"))
    assert best[0] >= brute - 1e-9 * abs(brute)
    return best


def c45_choice_with_categories(X, codes, w, categorical):
    """C4.5's split of one node (two classes): per feature the split of largest gain (NaN
    rows on their side; a category subset for categorical features); among the features of
    at least average gain, the largest gain ratio, lowest index on ties.

    Returns ``(feature, threshold or frozenset of left categories)`` or None."""
    weight = float(w.sum())
    impurity = entropy_bits(np.bincount(codes, weights=w, minlength=2), weight)
    splits = {}
    for f in range(X.shape[1]):
        if f in categorical:
            found = _ordered_subset(X[:, f], codes, w)
            if found is not None:
                p, left, w_left = found
                splits[f] = (impurity + p / weight, left, w_left)
            continue
        ref = reference_split_with_missing(X[:, f].astype(np.float32), codes, w, "entropy", True, 2)
        if ref is not None:
            p, threshold, _, left_rows = ref
            splits[f] = (impurity + p / weight, threshold, float(w[left_rows].sum()))
    if not splits:
        return None
    average = sum(s[0] for s in splits.values()) / len(splits)
    best_f, best_ratio = None, -math.inf
    for f, (gain, _, w_left) in splits.items():
        if gain < average - 1e-12:
            continue
        ratio = gain / entropy_bits([w_left, weight - w_left], weight)
        if ratio > best_ratio:
            best_f, best_ratio = f, ratio
    return best_f, splits[best_f][1]


def _adult_sample(shared_data, n=1200):
    df = read_adult(shared_data, nrows=n)
    cats = ["workclass", "marital-status", "relationship", "race"]
    coded = np.column_stack(
        [df[c].astype("category").cat.codes.replace(-1, np.nan).to_numpy(float) for c in cats]
    )
    numbers = df[["age", "education-num", "hours-per-week"]].to_numpy(np.float64)
    numbers[np.random.default_rng(1).random(numbers.shape) < 0.1] = np.nan
    X = np.c_[numbers, coded]
    y = (df["income"] == ">50K").to_numpy(int)
    return X, y, list(range(3, 3 + len(cats)))


@pytest.mark.parametrize(
    ("splitter", "weighted"), [("best", False), ("best", True), ("hist", True)]
)
def test_gain_ratio_with_categorical_features_is_c45(shared_data, splitter, weighted):
    """Numeric features (NaN injected) and categorical ones (``?`` as NaN) compete by C4.5's
    rule; the hist splitter builds the same tree (fewer than 256 values per feature)."""
    X, y, categorical = _adult_sample(shared_data)
    w = np.random.default_rng(2).integers(1, 4, len(y)).astype(float) if weighted else None
    est = dtjit.DecisionTreeClassifier(criterion="gain_ratio", max_depth=5, splitter=splitter,
                                       categorical_features=categorical)  # fmt: skip
    est.fit(X, y, sample_weight=w)
    check_tree_invariants(est)
    w = np.ones(len(y)) if w is None else w
    tree = est.tree_
    rows = node_rows(tree, X)
    n_categorical_splits = 0
    for node in np.flatnonzero(tree.children_left >= 0):
        r = rows[node]
        f, split = c45_choice_with_categories(X[r], y[r], w[r], categorical)
        assert tree.feature[node] == f, f"node {node}"
        if f in categorical:
            left_rows = rows[tree.children_left[node]]
            x_left = X[left_rows, f]
            went_left = set(x_left[~np.isnan(x_left)].tolist())
            if np.isnan(x_left).any():
                went_left.add(math.nan)
            # Compare as text: NaN != NaN in sets of floats.
            assert {str(c) for c in went_left} == {str(c) for c in split}, f"node {node}"
            n_categorical_splits += 1
        else:
            assert tree.threshold[node] == split, f"node {node}"
    assert n_categorical_splits >= 3


# Hand computation (in bits), rows 0-7 of class 0 and 8-15 of class 1:
#   A numeric: x=0 holds 6 of class 0 and 2 of class 1 (8 | 8): gain 1 - H(1/4) = 0.18872,
#     split info 1, ratio 0.18872.
#   B categorical, categories 0 (rows 0-1, class 0), 1 (3 of class 0, 4 of class 1) and 2
#     (the same): class-1 rates 0, 4/7, 4/7; the best subset is {0} | {1, 2} (2 | 14):
#     gain 1 - 14/16 H(6/14) = 0.13793, split info H(1/8) = 0.54356, ratio 0.25374.
#   C numeric: gain 0.04557. Average gain 0.12407: A and B qualify; gain picks A, the ratio B.
HAND_Y = np.array([0] * 8 + [1] * 8)
HAND_X = np.array(
    [
        [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1],
        [0, 0, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2],
        [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1],
    ],
    dtype=float,
).T


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_gain_ratio_picks_a_categorical_subset_by_its_split_information(splitter):
    kw = {"max_depth": 1, "splitter": splitter, "categorical_features": [1]}
    by_gain = dtjit.DecisionTreeClassifier(criterion="entropy", **kw).fit(HAND_X, HAND_Y)
    assert by_gain.tree_.feature[0] == 0
    by_ratio = dtjit.DecisionTreeClassifier(criterion="gain_ratio", **kw).fit(HAND_X, HAND_Y)
    tree = by_ratio.tree_
    assert tree.feature[0] == 1 and tree.categorical_set[0] >= 0
    assert tree.n_node_samples[1] == 2  # category 0 alone goes left
    gain = 1 - 14 / 16 * entropy_bits([6, 8], 14)
    assert gain == pytest.approx(0.13793, abs=5e-6)
    assert gain / entropy_bits([2, 14], 16) == pytest.approx(0.25374, abs=5e-6)
    w = np.ones(16)
    assert c45_choice_with_categories(HAND_X, HAND_Y, w, [1]) == (1, frozenset({0.0}))
    # Weights that are repeated rows: the same choice.
    repeated = by_ratio.fit(np.r_[HAND_X, HAND_X[:2]], np.r_[HAND_Y, HAND_Y[:2]]).tree_
    weighted = dtjit.DecisionTreeClassifier(criterion="gain_ratio", **kw)
    weighted.fit(HAND_X, HAND_Y, sample_weight=np.r_[2.0, 2.0, np.ones(14)])
    assert weighted.tree_.feature[0] == repeated.feature[0]
    np.testing.assert_array_equal(weighted.tree_.category_bits, repeated.category_bits)


# --------------------------------------------------------------------------------------------
# poisson with categorical features
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_poisson_subset_by_mean_order_is_the_brute_force_optimum(seed):
    """Ordering categories by mean target finds the best subset for Poisson deviance too."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    counts = rng.integers(1, 8, m)
    stats, weights = [], []
    for n in counts:
        w = rng.uniform(0.5, 2.0, n) if seed % 2 else np.ones(n)
        y = rng.poisson(rng.uniform(0.2, 5.0), n).astype(float) + 0.1  # positive means
        stats.append([float(np.sum(w * y))])
        weights.append(float(w.sum()))
    stats, weights = np.array(stats), np.array(weights)
    total = np.array([stats[:, 0].sum(), 0.0, 1.0])
    side = np.zeros(m, dtype=np.uint8)
    best, _ = via_kernel(best_category_subset)(m, stats, weights, counts.astype(np.int64), total,
                                   float(weights.sum()), 1, POISSON, 1, 0.0, side)  # fmt: skip
    brute = max(p for p, _ in brute_force_subsets(stats, weights, counts, "poisson"))
    assert best == pytest.approx(brute, rel=1e-12)
    chosen = np.flatnonzero(side[:m])
    w_left = weights[chosen].sum()
    again = proxy("poisson", stats[chosen].sum(axis=0), stats.sum(axis=0), w_left,
                  weights.sum() - w_left)  # fmt: skip
    assert again == pytest.approx(best, rel=1e-12)


def test_poisson_subset_never_gives_a_child_zero_sum():
    stats = np.array([[0.0], [0.0], [3.0], [5.0]])
    weights = np.array([2.0, 3.0, 2.0, 1.0])
    counts = np.array([2, 3, 2, 1], dtype=np.int64)
    side = np.zeros(4, dtype=np.uint8)
    best, _ = via_kernel(best_category_subset)(4, stats, weights, counts, np.array([8.0, 0.0, 1.0]),
                                   8.0, 1, POISSON, 1, 0.0, side)  # fmt: skip
    valid = [p for p, _ in brute_force_subsets(stats, weights, counts, "poisson")]
    assert -np.inf < best <= max(valid) + 1e-12
    assert stats[side[:4] == 1, 0].sum() > 0 and stats[side[:4] == 0, 0].sum() > 0


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_poisson_with_categorical_vendor_on_cpu(shared_data, splitter):
    """CPU performance with its categorical vendor (30 values) and NaN injected: every node's
    impurity from its rows (a subset split's children are not runs of a sorted column), every
    subset split optimal by brute force where at most 12 categories reach the node."""
    df = pd.read_csv(shared_data / "weka" / "cpu.with.vendor.csv")
    y = df.pop("class").to_numpy(float)
    df["vendor"] = df["vendor"].astype("category").cat.codes.astype(float)
    X = df.to_numpy(float)
    X[np.random.default_rng(3).random(X.shape) < 0.1] = np.nan
    est = dtjit.DecisionTreeRegressor(criterion="poisson", splitter=splitter, max_depth=6,
                                      categorical_features=["vendor"])  # fmt: skip
    est.fit(pd.DataFrame(X, columns=df.columns), y)
    check_tree_invariants(est)
    tree = est.tree_
    rows = node_rows(tree, X)
    w = np.ones(len(y))
    n_subset = 0
    for node in range(tree.node_count):
        r = rows[node]
        assert tree.n_node_samples[node] == len(r)
        assert tree.impurity[node] == pytest.approx(_node_loss(y[r], w[r], "poisson"), rel=1e-9)
        assert tree.value[node, 0, 0] == pytest.approx(y[r].mean(), rel=1e-12)
        if tree.children_left[node] == -1 or tree.categorical_set[node] < 0:
            continue
        x = X[r, 0]
        present = sorted(set(x[~np.isnan(x)].tolist()))
        groups = [x == c for c in present] + ([np.isnan(x)] if np.isnan(x).any() else [])
        if len(groups) > 12:
            continue
        stats = np.array([[y[r][g].sum()] for g in groups])
        weights = np.array([float(g.sum()) for g in groups])
        brute = max(p for p, _ in brute_force_subsets(stats, weights, weights, "poisson"))
        left = rows[tree.children_left[node]]
        s_left, s_right = y[left].sum(), y[r].sum() - y[left].sum()
        ours = proxy("poisson", np.array([s_left]), np.array([y[r].sum()]), len(left),
                     len(r) - len(left))  # fmt: skip
        assert ours == pytest.approx(brute, rel=1e-9), f"node {node}"
        assert s_left > 0 and s_right > 0
        n_subset += 1
    assert n_subset >= 1
    assert est.score(pd.DataFrame(X, columns=df.columns), y) > 0.7


def test_absolute_error_with_categorical_features_is_refused():
    X = np.c_[np.arange(6) % 3, np.arange(6.0)]
    with pytest.raises(ValueError, match="absolute_error.*no known efficient search"):
        dtjit.DecisionTreeRegressor(criterion="absolute_error", categorical_features=[0]).fit(
            X, np.arange(6.0)
        )


# --------------------------------------------------------------------------------------------
# "or missing" only where a split learned the NaN direction
# --------------------------------------------------------------------------------------------
def _feature_nan_only_in_one_branch():
    """Feature 0 has NaN only among rows with x1 > 0: a split on x0 under x1 <= 0 never saw
    NaN (its NaN direction is the larger child's), one under x1 > 0 learned it."""
    rng = np.random.default_rng(0)
    n = 400
    X = np.c_[rng.normal(size=n), rng.normal(size=n)]
    y = ((X[:, 1] > 0) ^ (X[:, 0] > 0.3)).astype(int)
    X[(X[:, 1] > 0) & (rng.random(n) < 0.3), 0] = np.nan
    y[np.isnan(X[:, 0])] = 1
    return X, y


@pytest.mark.parametrize("params", [{}, {"max_leaf_nodes": 6}, {"splitter": "hist"}])
def test_missing_learned_marks_the_splits_whose_rows_had_nan(params):
    X, y = _feature_nan_only_in_one_branch()
    est = dtjit.DecisionTreeClassifier(max_depth=5, **params).fit(X, y)
    tree = est.tree_
    rows = node_rows(tree, X)
    expected = np.zeros(tree.node_count, dtype=np.uint8)
    for node in np.flatnonzero(tree.children_left >= 0):
        expected[node] = np.isnan(X[rows[node], tree.feature[node]]).any()
    np.testing.assert_array_equal(tree.missing_learned, expected)
    on_x0 = tree.feature == 0
    assert expected[on_x0].any() and not expected[on_x0].all()  # both kinds of x0 split
    text = dtjit.export_text(est, feature_names=["a", "b"])
    n_or_missing = text.count("or missing") + text.count("a is missing")
    assert n_or_missing == expected.sum()  # one edge per learned split says it
    alphas = est.cost_complexity_pruning_path(X, y).ccp_alphas
    pruned = dtjit.prune(est, alphas[len(alphas) // 2])
    assert 1 < pruned.tree_.node_count < tree.node_count
    kept = node_rows(pruned.tree_, X)
    for node in np.flatnonzero(pruned.tree_.children_left >= 0):
        assert (
            pruned.tree_.missing_learned[node]
            == np.isnan(X[kept[node], pruned.tree_.feature[node]]).any()
        )


def test_missing_learned_is_saved_and_old_files_fall_back_per_feature(tmp_path):
    from dtjit._tree import read_model_file, write_model_file

    X, y = _feature_nan_only_in_one_branch()
    est = dtjit.DecisionTreeClassifier(max_depth=3).fit(X, y)
    dtjit.save(est, tmp_path / "m.npz")
    back = dtjit.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.tree_.missing_learned, est.tree_.missing_learned)
    assert dtjit.export_text(back) == dtjit.export_text(est)
    header, arrays = read_model_file(tmp_path / "m.npz")
    del arrays["missing_learned"]  # a file from before the flag was recorded
    write_model_file(tmp_path / "old.npz", header, arrays)
    old = dtjit.load(tmp_path / "old.npz")
    assert old.tree_.missing_learned is None
    np.testing.assert_array_equal(old.predict(X), est.predict(X))
    on_x0 = int((old.tree_.feature == 0).sum())
    text = dtjit.export_text(old, feature_names=["a", "b"])
    assert text.count("or missing") + text.count("a is missing") == on_x0  # every x0 split
    bad = dict(est.tree_.to_arrays(), missing_learned=np.full(est.tree_.node_count, 2, np.uint8))
    with pytest.raises(dtjit.TreeFormatError, match="missing_learned"):
        dtjit.Tree(n_features=2, n_classes=[2], **bad)
