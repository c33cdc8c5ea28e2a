"""``splitter="random"``: scikit-learn's random splitter (one uniform threshold per feature).

No reference tree exists (the draws are ours), so the tests check the contract: reproducible
from ``random_state``, every threshold strictly inside the node's range of its feature and
separating the node's rows as recorded, impurity never increasing, serial == parallel, and
statistical behaviour like scikit-learn's ``splitter="random"`` over many seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import tree as sklearn_tree
from sklearn.model_selection import train_test_split

import dtjit


def _node_rows(est, X):
    """Boolean matrix (n_samples, node_count): which training rows pass through each node."""
    return est.decision_path(X).toarray().astype(bool)


@pytest.mark.parametrize("cls", [dtjit.DecisionTreeClassifier, dtjit.DecisionTreeRegressor])
def test_random_trees_are_reproducible_and_depend_on_the_seed(cls, breast_cancer_data):
    X, y = breast_cancer_data
    a = cls(splitter="random", random_state=1).fit(X, y)
    b = cls(splitter="random", random_state=1).fit(X, y)
    c = cls(splitter="random", random_state=2).fit(X, y)
    for name, arr in a.tree_.to_arrays().items():
        np.testing.assert_array_equal(arr, getattr(b.tree_, name), err_msg=name)
    assert not np.array_equal(a.tree_.threshold, c.tree_.threshold)
    assert not np.array_equal(a.tree_.threshold, cls(random_state=1).fit(X, y).tree_.threshold)


@pytest.mark.parametrize("max_features", [None, "sqrt"])
@pytest.mark.parametrize("weighted", [False, True])
def test_thresholds_lie_inside_the_node_range_and_impurity_never_grows(
    breast_cancer_data, max_features, weighted
):
    X, y = breast_cancer_data
    X32 = X.astype(np.float32)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y)) if weighted else None
    est = dtjit.DecisionTreeClassifier(
        splitter="random", max_features=max_features, random_state=0
    ).fit(X, y, sample_weight=w)
    t = est.tree_
    rows = _node_rows(est, X)
    split_nodes = np.flatnonzero(t.children_left != -1)
    assert len(split_nodes) > 10
    for node in split_nodes:
        values = X32[rows[:, node], t.feature[node]].astype(np.float64)
        assert values.min() <= t.threshold[node] < values.max()
        left, right = t.children_left[node], t.children_right[node]
        went_left = values <= t.threshold[node]
        assert went_left.sum() == t.n_node_samples[left]
        assert (~went_left).sum() == t.n_node_samples[right]
        w_node, w_left, w_right = t.weighted_n_node_samples[[node, left, right]]
        decrease = (
            w_node * t.impurity[node] - w_left * t.impurity[left] - w_right * t.impurity[right]
        )
        assert decrease >= -1e-12 * w_node


def test_regressor_thresholds_and_variance(diabetes_data):
    X, y = diabetes_data
    est = dtjit.DecisionTreeRegressor(splitter="random", max_depth=6, random_state=5).fit(X, y)
    t = est.tree_
    rows = _node_rows(est, X)
    for node in np.flatnonzero(t.children_left != -1):
        values = X.astype(np.float32)[rows[:, node], t.feature[node]]
        assert values.min() <= t.threshold[node] < values.max()
        left, right = t.children_left[node], t.children_right[node]
        children = (
            t.n_node_samples[left] * t.impurity[left] + t.n_node_samples[right] * t.impurity[right]
        )
        assert children <= t.n_node_samples[node] * t.impurity[node] * (1 + 1e-12)


@pytest.mark.parametrize("criterion", ["gini", "squared_error"])
def test_random_serial_and_parallel_builds_are_bit_identical(criterion):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40_000, 8)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=len(X)) > 1).astype(int)
    cls = (
        dtjit.DecisionTreeRegressor
        if criterion == "squared_error"
        else dtjit.DecisionTreeClassifier
    )
    kw = {"criterion": criterion, "splitter": "random", "random_state": 9}
    serial = cls(n_jobs=1, **kw).fit(X, y)
    parallel = cls(n_jobs=2, **kw).fit(X, y)
    for name, a in serial.tree_.to_arrays().items():
        np.testing.assert_array_equal(a, getattr(parallel.tree_, name), err_msg=name)


def test_constant_features_are_never_split():
    rng = np.random.default_rng(0)
    X = np.zeros((300, 4), dtype=np.float32)
    X[:, 2] = rng.normal(size=300)
    y = (X[:, 2] > 0.3).astype(int)
    for seed in range(5):
        est = dtjit.DecisionTreeClassifier(splitter="random", random_state=seed).fit(X, y)
        split = est.tree_.feature[est.tree_.children_left != -1]
        assert set(split) == {2}
        assert est.score(X, y) == 1.0


@pytest.mark.parametrize("max_depth", [3, None])
def test_accuracy_is_in_scikit_learns_ballpark(breast_cancer_data, max_depth):
    """Averaged over seeds, held-out accuracy and tree size match scikit-learn's random
    splitter (the trees themselves differ: the random streams are not the same)."""
    X, y = breast_cancer_data
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    ours, theirs, our_nodes, their_nodes = [], [], [], []
    for seed in range(40):
        kw = {"splitter": "random", "max_depth": max_depth, "random_state": seed}
        a = dtjit.DecisionTreeClassifier(**kw).fit(X_train, y_train)
        b = sklearn_tree.DecisionTreeClassifier(**kw).fit(X_train, y_train)
        ours.append(a.score(X_test, y_test))
        theirs.append(b.score(X_test, y_test))
        our_nodes.append(a.tree_.node_count)
        their_nodes.append(b.tree_.node_count)
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.02
    assert abs(np.mean(our_nodes) / np.mean(their_nodes) - 1) < 0.15
    if max_depth is None:
        # Random cuts separate the classes less well: full trees grow larger, as in
        # scikit-learn.
        best = dtjit.DecisionTreeClassifier().fit(X_train, y_train)
        assert np.mean(our_nodes) > best.tree_.node_count
