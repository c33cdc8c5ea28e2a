"""Missing values (NaN) in X: split search, builders, prediction, parity with scikit-learn.

scikit-learn 1.9's rules, which dtjit follows (``sklearn/tree/sweep_exact.pyx``):

- at every candidate threshold the NaN rows of the node go right, then left; the cut "every
  value left, NaN right" (threshold ``+inf``) is tried between the two sweeps; a later
  candidate wins only if strictly better;
- a node without NaN in its split feature sends NaN at predict time to the child with
  strictly more training rows (ties: right);
- the random splitter draws the side of the NaN rows with a coin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _assertions import assert_same_as_sklearn, assert_trees_identical, compare_with_sklearn
from _kernel_entry import via_kernel
from _reference import _proxy, _stats, reference_random_split, reference_split_with_missing
from sklearn import tree as sk_tree

import dtjit
from dtjit.cli import main as cli_main
from dtjit.engine import sweep_exact
from dtjit.engine.threads import run_workers


def _with_nan(X, fraction, seed):
    X = np.array(X, dtype=np.float32)
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


def _assert_rows_reproduce_counts(est, X):
    """Routing the training rows by the stored rules (missing_left included) lands exactly
    the builder's rows in every node: the partition and missing_left agree."""
    tree = est.tree_
    path = est.decision_path(X)
    np.testing.assert_array_equal(np.asarray(path.sum(axis=0)).ravel(), tree.n_node_samples)


# ----------------------------------------------------------------- the kernel vs the reference
def _kernel_split(
    x, y, w, criterion, n_classes, min_samples_leaf, min_weight_leaf, unit=False, known=-np.inf
):
    """Run ``sweep_exact.best_splits_worker`` on one node holding every row, one feature.

    ``unit``: every weight is 1. The sweep then counts rows for the side weights; for
    classification its unit-weight mode also counts rows for the class statistics, and
    counts long tied groups from the other end (``sweep_exact.skip_long_first_group``).
    ``known``: the node's best proxy from other features (``_shared_best``).
    """
    is_classifier = criterion != "squared_error"
    sorted_idx, sorted_val = sweep_exact.presort(
        np.ascontiguousarray(x[:, None]), np.zeros(1, np.uint8), 1
    )
    code = y.astype(np.int32) if is_classifier else np.zeros(len(y), np.int32)
    contrib = w.copy() if is_classifier else w * y
    codes = code[sorted_idx].astype(np.uint8)  # the builder's sorted_code
    n_sweep = n_classes if is_classifier else 1
    total = np.zeros(n_sweep)
    np.add.at(total, code, contrib)
    if not is_classifier:  # the node's statistics: sum(w*y), sum(w*y*y), range of y
        total = np.array([total[0], np.sum(w * y * y), np.ptp(y)])
    one = np.zeros(1, np.int64)
    out_proxy, out_pos = np.empty((1, 1)), np.empty((1, 1), np.int64)
    out_threshold, out_missing = np.empty((1, 1)), np.empty((1, 1), np.int8)
    code_of_criterion = dtjit.engine.jit.CRITERION_CODES[criterion]
    unit_weight = unit and is_classifier
    # The builder's table of n ln n (entropy on row counts screens its cuts with it): the
    # kernel takes the screened entropy sweep wherever it has a table, Gini or not.
    xlogx = sweep_exact.screening_table(len(x), unit_weight, code_of_criterion)
    # The switches the builder would pass for a large fit (the accelerated sweeps).
    switches = sweep_exact.sweep_switches(True)
    sweep_exact.best_splits_worker(
        np.zeros(1, np.int64), np.int64(1), one, np.ones((1, 1), np.uint8), one,
        np.array([len(x)]), total[None, :], np.array([w.sum()]), sorted_idx, sorted_val, codes,
        contrib, w, unit_weight, unit, xlogx, n_sweep, code_of_criterion, min_samples_leaf,
        float(min_weight_leaf), out_proxy, out_pos, out_threshold, out_missing,
        np.array([known]), *switches,
    )  # fmt: skip
    proxy, pos = out_proxy[0, 0], int(out_pos[0, 0])
    threshold, missing = out_threshold[0, 0], int(out_missing[0, 0])
    if proxy == -np.inf:
        return None
    n_missing = int(np.isnan(x).sum())
    left = sorted_idx[0][:pos]
    if missing == 1:
        left = np.r_[left, sorted_idx[0][len(x) - n_missing :]]
    return proxy, threshold, missing, np.sort(left)


@pytest.mark.parametrize(
    "criterion, unit",
    [("gini", False), ("entropy", False), ("squared_error", False), ("gini", True),
     ("entropy", True), ("squared_error", True)],
)  # fmt: skip
def test_split_search_matches_reference(criterion, unit):
    """Random small nodes: same threshold, NaN side and rows left as the slow reference.

    Many columns are skewed 0/1 columns, whose long first or last tied group the sweep
    takes in one step; some hold distinct values. Told that another feature reaches this
    one's best proxy, the search still finds that very split (ties admitted, through both
    NaN passes); told of a better one, it reports nothing better than its best.
    """
    rng = np.random.default_rng(5)
    n_checked = 0
    for _ in range(300):
        n = int(rng.integers(2, 30))
        kind = rng.random()
        if kind < 0.4:
            x = (rng.random(n) < rng.choice([0.1, 0.3, 0.7, 0.9])).astype(np.float32)
        elif kind < 0.7:
            x = rng.integers(0, int(rng.integers(1, 6)), n).astype(np.float32)
        else:  # distinct values: weighted entropy's screen (mostly_distinct)
            x = rng.normal(size=n).astype(np.float32)
        x[rng.random(n) < rng.random() * 0.7] = np.nan
        # 3 or 9 classes: weighted entropy takes weighted_entropy_sweep.
        n_classes = int(rng.choice([2, 3, 9]))
        y = rng.integers(0, n_classes, n)
        if criterion == "squared_error":
            y = rng.integers(-3, 4, n).astype(np.float64)
        # weights in quarters: exact sums
        w = np.ones(n) if unit else rng.integers(1, 13, n) / 4.0
        msl = int(rng.integers(1, 4))
        mwl = float(rng.choice([0.0, 2.0]))
        ref = reference_split_with_missing(
            x, y, w, criterion, criterion != "squared_error", n_classes, msl, mwl
        )
        got = _kernel_split(x, y, w, criterion, n_classes, msl, mwl, unit)
        assert (ref is None) == (got is None), (x, y, w, ref, got)
        if ref is None:
            continue
        n_checked += 1
        assert got[0] == pytest.approx(ref[0], rel=1e-12, abs=1e-12)
        assert got[1] == ref[1]
        assert got[2] == ref[2]
        np.testing.assert_array_equal(got[3], ref[3])
        args = (x, y, w, criterion, n_classes, msl, mwl, unit)
        tied = _kernel_split(*args, known=got[0])
        assert tied[:3] == got[:3], (x, y, got, tied)
        np.testing.assert_array_equal(tied[3], got[3])
        beaten = _kernel_split(*args, known=got[0] + 0.5)
        assert beaten is None or beaten[0] <= got[0]
    assert n_checked > 100


def test_values_versus_missing_split_has_infinite_threshold():
    """The only useful split separates the NaN rows: threshold +inf, NaN right."""
    X = np.array([[1.0], [1.0], [1.0], [np.nan], [np.nan]], dtype=np.float32)
    y = np.array([0, 0, 0, 1, 1])
    for splitter in ("best", "hist"):
        ours = dtjit.DecisionTreeClassifier(splitter=splitter).fit(X, y)
        theirs = sk_tree.DecisionTreeClassifier().fit(X, y)
        assert ours.tree_.threshold[0] == np.inf == theirs.tree_.threshold[0]
        assert ours.tree_.missing_left[0] == 0 == theirs.tree_.missing_go_to_left[0]
        np.testing.assert_array_equal(ours.predict(X), y)
        dtjit.check_tree(ours.tree_)


def test_all_missing_feature_cannot_split():
    X = np.c_[np.full(6, np.nan), [0, 1, 2, 3, 4, 5]].astype(np.float32)
    y = np.array([0, 0, 0, 1, 1, 1])
    for splitter in ("best", "random", "hist"):
        est = dtjit.DecisionTreeClassifier(splitter=splitter, random_state=0).fit(X, y)
        assert 0 not in est.tree_.feature


# --------------------------------------------------------------------------- scikit-learn parity
@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_one_feature_trees_are_sklearns(criterion):
    """With one feature scikit-learn's choice is never random: identical trees."""
    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(5, 80))
        X = rng.integers(0, int(rng.integers(2, 9)), (n, 1)).astype(np.float32)
        X[rng.random(X.shape) < rng.random() * 0.6] = np.nan
        w = None if trial % 2 else rng.integers(1, 4, n).astype(float)
        kw = {"criterion": criterion, "min_samples_leaf": int(rng.integers(1, 4))}
        if criterion == "squared_error":
            y = rng.normal(size=n).round(1)
            pair = (dtjit.DecisionTreeRegressor(**kw), sk_tree.DecisionTreeRegressor(**kw))
        else:
            y = rng.integers(0, 3, n)
            pair = (dtjit.DecisionTreeClassifier(**kw), sk_tree.DecisionTreeClassifier(**kw))
        ours, theirs = (est.fit(X, y, sample_weight=w) for est in pair)
        cmp = compare_with_sklearn(ours, theirs, X, y, w)
        assert not cmp.mismatches and not cmp.ties, (trial, cmp.mismatches[:3])
        _assert_rows_reproduce_counts(ours, X)


def _titanic(shared_data):
    df = pd.read_csv(shared_data / "titanic3.csv", keep_default_na=False, na_values=[""])
    X = df[["pclass", "age", "sibsp", "parch", "fare", "body"]].to_numpy(np.float64)
    return X, df["survived"].to_numpy()


def _penguins(shared_data):
    df = pd.read_csv(shared_data / "penguins.csv")
    names = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
    return df[names].to_numpy(np.float64), df["species"].to_numpy()


def _adult(shared_data, n_rows=6000):
    cols = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
            "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
            "hours_per_week", "native_country", "income"]  # fmt: skip
    df = pd.read_csv(shared_data / "adult.data.gz", header=None, names=cols,
                     skipinitialspace=True, na_values="?", nrows=n_rows)  # fmt: skip
    # Categorical columns ordinal-coded, "?" staying NaN; plus NaN injected into numbers.
    coded = {c: df[c].astype("category").cat.codes.replace(-1, np.nan)
             for c in ("workclass", "occupation", "native_country")}  # fmt: skip
    numbers = _with_nan(df[["age", "education_num", "hours_per_week"]], 0.1, seed=3)
    X = np.c_[numbers, pd.DataFrame(coded).to_numpy(np.float64)]
    return X, df["income"].to_numpy()


REAL_CASES = [
    ("titanic", _titanic, {}),
    ("titanic", _titanic, {"criterion": "entropy", "min_samples_leaf": 3}),
    ("titanic", _titanic, {"max_leaf_nodes": 20}),
    ("titanic", _titanic, {"min_weight_fraction_leaf": 0.01, "class_weight": "balanced"}),
    ("titanic", _titanic, {"min_impurity_decrease": 0.002, "ccp_alpha": 0.001}),
    ("penguins", _penguins, {}),
    ("penguins", _penguins, {"criterion": "log_loss", "max_depth": 4}),
    ("adult", _adult, {"max_depth": 8}),
    ("adult", _adult, {"max_leaf_nodes": 40, "criterion": "entropy"}),
]


@pytest.mark.parametrize(
    ("load", "params"),
    [(load, params) for _, load, params in REAL_CASES],
    ids=[f"{name}-{i}" for i, (name, _, _) in enumerate(REAL_CASES)],
)
def test_real_data_with_missing_values_is_sklearns(shared_data, load, params):
    """Every node equal to scikit-learn's, or a proven tie where it picks at random."""
    X, y = load(shared_data)
    assert np.isnan(X).any()
    ours = dtjit.DecisionTreeClassifier(**params).fit(X, y)
    theirs = sk_tree.DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    cmp = assert_same_as_sklearn(ours, theirs, X, y, allow_ties=True)
    assert cmp.same_nodes > 10
    assert (ours.predict(X) == theirs.predict(X)).mean() > 0.97
    dtjit.check_tree(ours.tree_)
    if not params.get("ccp_alpha"):
        _assert_rows_reproduce_counts(ours, X)


@pytest.mark.parametrize("params", [{}, {"min_samples_leaf": 5, "max_leaf_nodes": 30}])
def test_regression_with_missing_values_is_sklearns(shared_data, params):
    """Titanic fare from the other numeric columns (age and body have NaN)."""
    X, _ = _titanic(shared_data)
    keep = ~np.isnan(X[:, 4])
    X, y = np.delete(X[keep], 4, axis=1), X[keep, 4]
    ours = dtjit.DecisionTreeRegressor(**params).fit(X, y)
    theirs = sk_tree.DecisionTreeRegressor(random_state=0, **params).fit(X, y)
    cmp = compare_with_sklearn(ours, theirs, X, y)
    assert not cmp.mismatches, cmp.mismatches[:3]
    assert cmp.same_nodes > 10
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9)


def test_synthetic_missing_not_at_random_is_sklearns():
    """NaN that carries signal (missing where x0 is large): learned both ways, like sklearn."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.3).astype(int)
    X[X[:, 0] > 1.0, 0] = np.nan
    X[rng.random(600) < 0.2, 1] = np.nan
    ours = dtjit.DecisionTreeClassifier(max_depth=6).fit(X, y)
    theirs = sk_tree.DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    assert_same_as_sklearn(ours, theirs, X, y, allow_ties=True)
    learned = ours.tree_.feature == 0
    assert ours.tree_.missing_left[learned].any() or (ours.tree_.threshold == np.inf).any()


# ------------------------------------------------------------------------------ the histogram
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_hist_equals_exact_with_missing_values(criterion):
    """At most max_bins distinct values (plus NaN) per feature: the hist tree is the exact one."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 40, size=(3000, 5)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 8, 3000) > 40).astype(int)
    X = _with_nan(X, 0.15, seed=9)
    X[:, 4] = np.where(rng.random(3000) < 0.5, np.nan, 7.0)  # constant values plus NaN
    for params in ({}, {"min_samples_leaf": 4, "max_leaf_nodes": 60}):
        exact = dtjit.DecisionTreeClassifier(criterion=criterion, **params).fit(X, y)
        hist = dtjit.DecisionTreeClassifier(criterion=criterion, splitter="hist", **params)
        assert_trees_identical(exact, hist.fit(X, y))


def test_hist_with_missing_values_is_sklearns_on_few_values(shared_data):
    X, y = _titanic(shared_data)
    X = np.round(X[:, :4] / 4)  # pclass, age, sibsp, parch: few distinct values
    ours = dtjit.DecisionTreeClassifier(splitter="hist", max_bins=64).fit(X, y)
    theirs = sk_tree.DecisionTreeClassifier(random_state=0).fit(X, y)
    assert_same_as_sklearn(ours, theirs, X, y, allow_ties=True)


def test_hist_many_values_routes_training_rows_consistently():
    rng = np.random.default_rng(8)
    X = _with_nan(rng.normal(size=(4000, 4)), 0.2, seed=1)
    y = rng.integers(0, 3, 4000)
    est = dtjit.DecisionTreeClassifier(splitter="hist", max_bins=16, max_depth=10).fit(X, y)
    _assert_rows_reproduce_counts(est, X)


# ------------------------------------------------------------------------- the random splitter
def test_random_splitter_with_missing_values():
    """scikit-learn's semantics: NaN side drawn per feature; values all equal plus NaN split."""
    rng = np.random.default_rng(3)
    X = _with_nan(rng.normal(size=(500, 4)), 0.25, seed=4)
    y = rng.integers(0, 2, 500)
    a = dtjit.DecisionTreeClassifier(splitter="random", random_state=7).fit(X, y)
    b = dtjit.DecisionTreeClassifier(splitter="random", random_state=7).fit(X, y)
    assert_trees_identical(a, b)
    _assert_rows_reproduce_counts(a, X)
    assert 0 < a.tree_.missing_left[a.tree_.feature >= 0].mean() < 1
    Xc = np.array([[1.0], [1.0], [1.0], [np.nan], [np.nan], [np.nan]], dtype=np.float32)
    yc = np.array([0, 0, 0, 1, 1, 1])
    split = [
        dtjit.DecisionTreeClassifier(splitter="random", random_state=s).fit(Xc, yc).tree_
        for s in range(10)
    ]
    assert all(t.node_count in (1, 3) for t in split)
    assert any(t.node_count == 3 and t.missing_left[0] == 0 for t in split)


def _presorted_segments(X, bounds):
    """``sorted_idx, sorted_val`` of X's columns with each node's rows ``[a, b)`` sorted on their
    own, NaN last: the layout the builder keeps (``sweep_exact`` module docstring)."""
    n_samples, n_features = X.shape
    sorted_idx = np.empty((n_features, n_samples), np.int32)
    sorted_val = np.empty((n_features, n_samples), np.float32)
    for f in range(n_features):
        for a, b in bounds:
            rows = a + np.argsort(X[a:b, f], kind="stable")  # numpy sorts NaN last
            sorted_idx[f, a:b] = rows
            sorted_val[f, a:b] = X[rows, f]
    return sorted_idx, sorted_val


@pytest.mark.parametrize(
    "criterion, unit",
    [("gini", False), ("entropy", False), ("squared_error", False), ("gini", True),
     ("squared_error", True)],
)  # fmt: skip
@pytest.mark.parametrize("n_threads", [1, 2])
def test_random_splits_worker_matches_reference(criterion, unit, n_threads):
    """``sweep_exact.random_splits_worker`` on batches of nodes: for every candidate (node,
    feature) the drawn threshold's proxy, NaN side and rows left are the slow reference's,
    a child too small or too light gives ``-inf``, and non-candidates are left untouched."""
    rng = np.random.default_rng(9)
    is_classifier = criterion != "squared_error"
    n_features = 3
    n_checked = n_dropped = 0
    for _ in range(40):
        sizes = rng.integers(2, 25, int(rng.integers(1, 6)))
        ends = np.cumsum(sizes)
        bounds = list(zip(ends - sizes, ends, strict=True))
        n = int(ends[-1])
        X = np.empty((n, n_features), np.float32)
        X[:, 0] = (rng.random(n) < 0.3).astype(np.float32)  # skewed 0/1
        X[:, 1] = rng.integers(0, 4, n)  # ties
        X[:, 2] = rng.normal(size=n)  # distinct values
        X[rng.random(X.shape) < rng.random() * 0.5] = np.nan
        n_classes = int(rng.choice([2, 3, 9]))
        y = rng.integers(0, n_classes, n)
        if not is_classifier:
            y = rng.integers(-3, 4, n).astype(np.float64)
        w = np.ones(n) if unit else rng.integers(1, 13, n) / 4.0  # quarters: exact sums
        msl = int(rng.integers(1, 4))
        mwl = float(rng.choice([0.0, 2.0]))
        sorted_idx, sorted_val = _presorted_segments(X, bounds)
        code = y.astype(np.int32) if is_classifier else np.zeros(n, np.int32)
        contrib = w.copy() if is_classifier else w * y
        n_sweep = n_classes if is_classifier else 1
        stats = np.zeros((len(bounds), n_sweep if is_classifier else 3))
        for k, (a, b) in enumerate(bounds):
            np.add.at(stats[k], code[a:b], contrib[a:b])
            if not is_classifier:  # sum(w*y), sum(w*y*y), range of y, as segment_stats
                stats[k, 1:] = np.sum(w[a:b] * y[a:b] ** 2), np.ptp(y[a:b])
        weights = np.array([w[a:b].sum() for a, b in bounds])
        # The builder's draw: candidates with two distinct values, a threshold between the
        # node's smallest and largest value, a side for the NaN rows when it has some.
        candidate = (rng.random((len(bounds), n_features)) < 0.8).astype(np.uint8)
        out_threshold = np.zeros((len(bounds), n_features))
        out_missing = np.full((len(bounds), n_features), -1, np.int8)
        for k, (a, b) in enumerate(bounds):
            for f in range(n_features):
                values = X[a:b, f][~np.isnan(X[a:b, f])]
                if len(values) == 0 or values.min() == values.max():
                    candidate[k, f] = 0
                    continue
                out_threshold[k, f] = rng.uniform(values.min(), values.max())
                if len(values) < b - a:
                    out_missing[k, f] = rng.integers(0, 2)
        drawn_threshold, drawn_missing = out_threshold.copy(), out_missing.copy()
        out_proxy = np.full((len(bounds), n_features), -np.inf)
        out_pos = np.full((len(bounds), n_features), -7, np.int64)
        run_workers(
            sweep_exact.random_splits_worker, n_threads, np.arange(len(bounds)), candidate,
            ends - sizes, ends, stats, weights, sorted_idx, sorted_val,
            code[sorted_idx].astype(np.uint8), contrib, w, unit and is_classifier, unit,
            n_sweep, dtjit.engine.jit.CRITERION_CODES[criterion], msl, mwl, out_proxy, out_pos,
            out_threshold, out_missing,
        )  # fmt: skip
        for k, (a, b) in enumerate(bounds):
            for f in range(n_features):
                if not candidate[k, f]:
                    assert out_proxy[k, f] == -np.inf and out_pos[k, f] == -7
                    assert out_missing[k, f] == drawn_missing[k, f]
                    continue
                ref = reference_random_split(
                    X[a:b, f], y[a:b], w[a:b], criterion, is_classifier, n_classes,
                    drawn_threshold[k, f], drawn_missing[k, f] == 1, msl, mwl,
                )  # fmt: skip
                assert (ref is None) == (out_proxy[k, f] == -np.inf), (k, f, ref)
                if ref is None:
                    n_dropped += 1
                    continue
                n_checked += 1
                pos, missing = int(out_pos[k, f]), int(out_missing[k, f])
                assert out_proxy[k, f] == pytest.approx(ref[0], rel=1e-12, abs=1e-12)
                assert out_threshold[k, f] == ref[1]
                assert missing == ref[2]
                left = sorted_idx[f, a:pos]
                if missing == 1:
                    left = np.r_[left, np.flatnonzero(np.isnan(X[a:b, f])) + a]
                np.testing.assert_array_equal(np.sort(left), ref[3] + a)
    assert n_checked > 100 and n_dropped > 0


# --------------------------------------------------------------------------------- predicting
def test_nan_on_a_feature_without_nan_in_training_goes_to_the_larger_child(iris_data):
    X, y = iris_data
    est = dtjit.DecisionTreeClassifier(max_depth=3).fit(X, y)
    tree = est.tree_
    split = np.flatnonzero(tree.feature >= 0)
    n_left = tree.n_node_samples[tree.children_left[split]]
    n_right = tree.n_node_samples[tree.children_right[split]]
    np.testing.assert_array_equal(tree.missing_left[split], (n_left > n_right).astype(np.uint8))
    theirs = sk_tree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    X_nan = _with_nan(X, 0.3, seed=0)
    if compare_with_sklearn(est, theirs, X, y).identical:
        np.testing.assert_array_equal(est.predict(X_nan), theirs.predict(X_nan))
    rows = np.full((1, 4), np.nan)
    node = 0
    while tree.children_left[node] != -1:
        node = tree.children_left[node] if tree.missing_left[node] else tree.children_right[node]
    assert est.apply(rows)[0] == node


def test_serial_equals_parallel_with_missing_values():
    rng = np.random.default_rng(6)
    X = _with_nan(rng.normal(size=(30000, 8)), 0.1, seed=2)
    y = (np.nan_to_num(X[:, 0]) + rng.normal(0, 0.5, 30000) > 0).astype(int)
    for splitter in ("best", "hist"):
        one = dtjit.DecisionTreeClassifier(splitter=splitter, max_depth=12, n_jobs=1).fit(X, y)
        two = dtjit.DecisionTreeClassifier(splitter=splitter, max_depth=12, n_jobs=2).fit(X, y)
        assert_trees_identical(one, two)
        np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))


def test_save_load_keeps_missing_directions(tmp_path, shared_data):
    X, y = _titanic(shared_data)
    est = dtjit.DecisionTreeClassifier(max_depth=6).fit(X, y)
    dtjit.save(est, tmp_path / "m.npz")
    back = dtjit.load(tmp_path / "m.npz")
    assert_trees_identical(est, back)
    np.testing.assert_array_equal(back.features_with_missing_, est.features_with_missing_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert dtjit.export_text(back) == dtjit.export_text(est)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_values_still_raise(iris_data, value):
    X, y = iris_data
    X_bad = X.copy()
    X_bad[3, 1] = value
    est = dtjit.DecisionTreeClassifier()
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.fit(X_bad, y)
    est.fit(X, y)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.predict(X_bad)


def test_tags_allow_nan():
    for est in (dtjit.DecisionTreeClassifier(), dtjit.DecisionTreeRegressor()):
        assert est.__sklearn_tags__().input_tags.allow_nan


@pytest.mark.parametrize("splitter", ["best", "hist", "random"])
def test_features_with_missing_lists_the_columns_that_had_nan(splitter):
    # Read off the presorted columns / the bins, it must equal a scan of X: a column with a
    # few NaN, one entirely NaN, one with NaN taken as categorical (numeric with "random")
    # and columns without any.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 5))
    X[rng.random(400) < 0.1, 0] = np.nan
    X[:, 2] = np.nan
    X[:, 3] = rng.integers(0, 4, size=400)
    X[rng.random(400) < 0.2, 3] = np.nan
    y = (np.nan_to_num(X[:, 1]) > 0).astype(int)
    categorical = [3] if splitter != "random" else None
    est = dtjit.DecisionTreeClassifier(splitter=splitter, categorical_features=categorical)
    est.fit(X, y)
    assert est.features_with_missing_.dtype == bool
    assert list(est.features_with_missing_) == [True, False, True, True, False]
    # NaN only in a row of zero weight: that row takes no part in the fit.
    X[:, 2] = 1.0
    X[7, 4] = np.nan
    weight = np.ones(400)
    weight[7] = 0.0
    est.fit(X, y, sample_weight=weight)
    assert list(est.features_with_missing_) == [True, False, False, True, False]


# ------------------------------------------------------------------------------- showing, CLI
def test_exports_say_where_missing_values_go():
    X = np.array([[1.0, 0], [2.0, 0], [3.0, 1], [np.nan, 1], [np.nan, 0], [4.0, 1]] * 5)
    y = np.array([0, 0, 1, 1, 1, 1] * 5)
    est = dtjit.DecisionTreeClassifier().fit(X, y)
    assert list(est.features_with_missing_) == [True, False]
    text = dtjit.export_text(est, feature_names=["a", "b"])
    assert "or missing" in text or "a is missing" in text
    assert "b <= 0.50 or missing" not in text and "b >  0.50 or missing" not in text
    plain = dtjit.DecisionTreeClassifier().fit(np.nan_to_num(X, nan=9.0), y)
    assert "missing" not in dtjit.export_text(plain)


def test_cli_fit_reads_empty_cells_as_missing(tmp_path, shared_data, capsys):
    table = pd.read_csv(shared_data / "penguins.csv").drop(columns=["island", "sex"])
    assert table.isna().any().any()
    code = cli_main(
        [
            "fit",
            str(shared_data / "penguins.csv"),
            "--target",
            "species",
            "--drop",
            "island",
            "--drop",
            "sex",
            "-o",
            str(tmp_path / "m.npz"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    model = dtjit.load(tmp_path / "m.npz")
    direct = dtjit.DecisionTreeClassifier().fit(table.drop(columns="species"), table["species"])
    assert_trees_identical(model, direct)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("min_samples_leaf", [1, 7, 8])
def test_missing_tail_split_matches_reference(criterion, min_samples_leaf):
    """The NaN tail's statistics and the cut "every value | NaN", against a slow reference."""
    rng = np.random.default_rng(min_samples_leaf)
    n, n_classes = 40, 3
    y = rng.integers(0, n_classes, n)
    w = rng.uniform(0.5, 2.0, n)
    idx = rng.permutation(n).astype(np.int32)
    codes = y[idx].astype(np.uint8)
    start, end_non_missing, end = 5, 28, 35  # positions [28, 35) hold the node's NaN rows
    values, tail = idx[start:end_non_missing], idx[end_non_missing:end]
    everything = _stats(idx[start:end], y, w, True, n_classes)
    code = dtjit.engine.jit.CRITERION_CODES[criterion]
    missing_stats, left = np.full(n_classes, np.nan), np.full(n_classes, np.nan)
    missing_weight, proxy = via_kernel(sweep_exact.missing_tail_split)(
        idx, codes, np.int64(start), np.int64(end_non_missing), np.int64(end), w, w, False,
        False, np.int64(n_classes), everything.counts, everything.weight, np.int64(code),
        np.int64(min_samples_leaf), 0.0, missing_stats, left,
    )  # fmt: skip
    expected_tail = _stats(tail, y, w, True, n_classes)
    np.testing.assert_allclose(missing_stats, expected_tail.counts, rtol=1e-12)
    assert missing_weight == pytest.approx(expected_tail.weight, rel=1e-12)
    if min(len(values), len(tail)) < min_samples_leaf:
        assert proxy == -np.inf
    else:
        expected = _proxy(_stats(values, y, w, True, n_classes), everything, criterion)
        assert proxy == pytest.approx(expected, rel=1e-12)
