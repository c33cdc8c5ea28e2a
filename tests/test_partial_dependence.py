"""Partial dependence by weighted traversal (scikit-learn's 'recursion' method) of regressors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import tree as sk_tree
from sklearn.exceptions import NotFittedError
from sklearn.inspection import PartialDependenceDisplay, partial_dependence

import dtjit


def _reference(tree, grid, targets):
    """Plain recursion over the tree's arrays, as scikit-learn's Tree method describes it."""
    targets = list(targets)
    weight = tree.weighted_n_node_samples

    def goes_left(node, x):
        k = tree.categorical_set[node]
        if np.isnan(x):
            return bool(tree.missing_left[node])
        if k >= 0:
            code = int(x)
            if not 0 <= code < 64 * tree.category_bits.shape[1]:
                return bool(tree.missing_left[node])
            return bool((int(tree.category_bits[k, code // 64]) >> (code % 64)) & 1)
        return float(np.float32(x)) <= tree.threshold[node]

    def walk(node, point, w):
        left = tree.children_left[node]
        if left == -1:
            return w * tree.value[node].reshape(-1)
        right = tree.children_right[node]
        f = tree.feature[node]
        if f in targets:
            child = left if goes_left(node, point[targets.index(f)]) else right
            return walk(child, point, w)
        return walk(left, point, w * weight[left] / weight[node]) + walk(
            right, point, w * weight[right] / weight[node]
        )

    return np.array([walk(0, point, 1.0) for point in grid])


def _data(seed, n=400, categorical=False, nan=False, outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    if categorical:
        X[:, 1] = rng.integers(0, 7, size=n)
    y = X[:, 0] * 2 + np.sin(3 * X[:, 2]) + (X[:, 1] > 2) + rng.normal(scale=0.3, size=n)
    if outputs > 1:
        y = np.c_[y, X[:, 3] - X[:, 0]]
    if nan:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y, rng.uniform(0.2, 3, size=n)


@pytest.mark.parametrize(
    "kind", ["numeric", "weighted", "nan", "categorical", "multi-output", "best-first"]
)
def test_kernel_matches_the_python_reference(kind):
    X, y, w = _data(
        1,
        categorical=kind == "categorical",
        nan=kind == "nan",
        outputs=2 if kind == "multi-output" else 1,
    )
    params = {"max_depth": 8}
    if kind == "categorical":
        params["categorical_features"] = [1]
    if kind == "best-first":
        params = {"max_leaf_nodes": 40}
    est = dtjit.DecisionTreeRegressor(**params).fit(X, y, w if kind == "weighted" else None)
    for targets in ([0], [1], [2, 1], [3, 0, 2]):
        values = X[:30, targets].copy()
        values[:3] = np.nan  # NaN goes to each split's missing side, as in predict
        got = est._compute_partial_dependence_recursion(values, targets)
        expected = _reference(est.tree_, values, targets)
        expected = expected[:, 0] if expected.shape[1] == 1 else expected.T
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_walk_weights_sum_to_one_and_untargeted_features_give_the_weighted_mean():
    X, y, w = _data(2)
    est = dtjit.DecisionTreeRegressor(max_depth=6).fit(X, y, w)
    # A feature the tree never splits on leaves every path weighted: the weighted mean of y.
    unused = [f for f in range(4) if f not in est.tree_.feature[est.tree_.feature >= 0]]
    if not unused:
        est = dtjit.DecisionTreeRegressor(max_depth=6).fit(np.c_[X, np.zeros(len(X))], y, w)
        unused = [4]
    got = est._compute_partial_dependence_recursion(np.array([[0.0], [5.0]]), unused)
    np.testing.assert_allclose(got, np.average(y, weights=w), rtol=1e-12)


def test_sklearn_partial_dependence_uses_it_and_matches_sklearns_own_tree():
    # Continuous features and leaves of 15 rows or more: no two splits of a node tie (in
    # nodes of a few rows, several features can cut the rows alike), so scikit-learn grows
    # the same tree, up to node numbering.
    X, y, _ = _data(3)
    params = {"max_depth": 7, "min_samples_leaf": 15}
    ours = dtjit.DecisionTreeRegressor(**params).fit(X, y)
    theirs = sk_tree.DecisionTreeRegressor(**params, random_state=0).fit(X, y)
    splits = [
        sorted(zip(t.feature[t.feature >= 0], t.threshold[t.feature >= 0], strict=True))
        for t in (ours.tree_, theirs.tree_)
    ]
    assert splits[0] == splits[1]
    for features in ([0], [2], [(0, 2)]):
        a = partial_dependence(ours, X, features, grid_resolution=20)
        b = partial_dependence(theirs, X, features, grid_resolution=20, method="recursion")
        np.testing.assert_allclose(a["average"], b["average"], rtol=1e-10)
    display = PartialDependenceDisplay.from_estimator(ours, X, [0, (0, 2)], grid_resolution=10)
    assert len(display.pd_results) == 2


def test_multi_output_gives_one_row_per_output():
    X, y, _ = _data(4, outputs=2)
    est = dtjit.DecisionTreeRegressor(max_depth=5).fit(X, y)
    got = partial_dependence(est, X, [0], grid_resolution=7, method="recursion")["average"]
    assert got.shape == (2, 7)


@pytest.mark.parametrize(
    "grid, targets, match",
    [
        (np.zeros((3, 2)), [0], r"shape \(n_points, 1\)"),
        (np.zeros((3, 1)), [4], "target feature 4 is out of range"),
        (np.zeros((3, 1)), [-1], "target feature -1 is out of range"),
        (np.zeros((3, 1)), [0.5], "1-d array of feature indices"),
    ],
)
def test_bad_grid_or_targets_are_refused(grid, targets, match):
    X, y, _ = _data(5, n=60)
    est = dtjit.DecisionTreeRegressor(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match=match):
        est._compute_partial_dependence_recursion(grid, targets)


def test_categories_mapped_from_values_need_the_brute_method():
    pd = pytest.importorskip("pandas")
    X, y, _ = _data(6, n=80, categorical=True)
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["b"] = pd.Categorical(frame["b"].map(lambda v: f"level{int(v)}"))
    est = dtjit.DecisionTreeRegressor(max_depth=4, categorical_features=["b"]).fit(frame, y)
    with pytest.raises(ValueError, match="method='brute'"):
        est._compute_partial_dependence_recursion(np.zeros((2, 1)), [1])
    # Numeric target features of the same estimator are fine.
    got = est._compute_partial_dependence_recursion(np.zeros((2, 1)), [0])
    assert got.shape == (2,)


def test_unfitted_estimator_is_refused():
    with pytest.raises(NotFittedError):
        dtjit.DecisionTreeRegressor()._compute_partial_dependence_recursion(np.zeros((1, 1)), [0])
