"""Best-first growth (``max_leaf_nodes``) in speculative batches grows the strict tree.

The builders expand several queued nodes per step and replay strict best-first order over
them (``grow.Frontier``). ``grow.MAX_SPECULATIVE_BATCH = 1`` forces one node per step, the
strict order itself: every fit here is grown both ways and must come out bit for bit the
same, across criteria, weights, splitters, NaN, categorical features, several outputs,
threads, ties and budgets that run out in the middle of a step. Parity with scikit-learn's
best-first trees is tested in ``test_parity.py`` and ``test_reference.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from _assertions import assert_trees_identical, check_tree_invariants

import dtjit
from dtjit.engine import grow

C, R = dtjit.DecisionTreeClassifier, dtjit.DecisionTreeRegressor


class Steps:
    """What the best-first steps of the fits since the last :meth:`reset` did."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sizes: list[int] = []  # nodes expanded per step
        self.rolled_back = 0  # expansions the replay never confirmed
        self.confirmed = 0


@pytest.fixture
def steps(monkeypatch):
    """Record every best-first step's size and every fit's rolled-back expansions."""
    record = Steps()
    next_batch, finished = grow.Frontier.next_batch, grow.Frontier.finished

    def recording_next_batch(self):
        batch, splits = next_batch(self)
        if batch.shape[0] > 0:
            record.sizes.append(int(batch.shape[0]))
        return batch, splits

    def recording_finished(self, *args):
        record.rolled_back += int(self.expanded.sum()) - len(self.confirmed)
        record.confirmed += len(self.confirmed)
        return finished(self, *args)

    monkeypatch.setattr(grow.Frontier, "next_batch", recording_next_batch)
    monkeypatch.setattr(grow.Frontier, "finished", recording_finished)
    return record


def fit_both_ways(monkeypatch, steps, make, X, y, sample_weight=None):
    """Fit ``make()`` speculatively and strictly; assert the trees are identical.

    Returns the speculative fit; ``steps`` then describes it.
    """
    monkeypatch.setattr(grow, "MAX_SPECULATIVE_BATCH", 1)
    strict = make().fit(X, y, sample_weight=sample_weight)
    assert all(size == 1 for size in steps.sizes)
    assert steps.rolled_back == 0
    monkeypatch.setattr(grow, "MAX_SPECULATIVE_BATCH", 1 << 30)
    steps.reset()
    speculative = make().fit(X, y, sample_weight=sample_weight)
    assert_trees_identical(speculative, strict)
    check_tree_invariants(speculative)
    np.testing.assert_array_equal(speculative.apply(X), strict.apply(X))
    assert speculative.tree_.n_leaves <= speculative.max_leaf_nodes
    return speculative


def mixed_data(n, seed, nan=False, n_classes=3):
    """Integer, continuous, 0/1 and low-cardinality columns; a noisy class target."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.integers(0, 40, n), rng.normal(size=n), rng.random(n) < 0.3,
        rng.integers(0, 5, n), rng.normal(size=n),
    ]).astype(np.float32)  # fmt: skip
    y = (X[:, 0] // 9 + X[:, 2] + (X[:, 1] > 0.2) + (rng.random(n) < 0.25)) % n_classes
    if nan:
        X[rng.random(n) < 0.07, 1] = np.nan
        X[rng.random(n) < 0.03, 4] = np.nan
    y_reg = X[:, 0] * 0.1 + np.nan_to_num(X[:, 1]) + rng.normal(size=n)
    return X, y.astype(np.int64), y_reg, rng.uniform(0.5, 2.0, n)


CLASSIFIERS = {
    "gini": {},
    "entropy": {"criterion": "entropy"},
    "log_loss-min_samples_leaf": {"criterion": "log_loss", "min_samples_leaf": 7},
    "gain_ratio": {"criterion": "gain_ratio"},
    "mdl_stop": {"criterion": "entropy", "mdl_stop": True},
    "max_depth": {"max_depth": 6},
    "min_impurity_decrease": {"min_impurity_decrease": 2e-4},
    "class_weight": {"class_weight": "balanced"},
    "hist": {"splitter": "hist"},
    "hist-entropy": {"splitter": "hist", "criterion": "entropy", "max_bins": 16},
    "hist-gain_ratio": {"splitter": "hist", "criterion": "gain_ratio"},
    "threads": {"n_jobs": 2},
    "hist-threads": {"splitter": "hist", "n_jobs": 2},
}


@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 6, 31, 120, 1000])
@pytest.mark.parametrize("nan", [False, True], ids=["dense", "nan"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("params", list(CLASSIFIERS.values()), ids=list(CLASSIFIERS))
def test_classifier_grows_the_strict_tree(
    monkeypatch, steps, params, weighted, nan, max_leaf_nodes
):
    X, y, _, w = mixed_data(3000, seed=max_leaf_nodes, nan=nan)
    if params.get("mdl_stop") and weighted:
        w = w * 2.0  # mdl_stop counts weights as rows: keep every node above two
    fit_both_ways(
        monkeypatch, steps, lambda: C(max_leaf_nodes=max_leaf_nodes, **params), X, y,
        w if weighted else None,
    )  # fmt: skip


REGRESSORS = {
    "squared_error": {},
    "poisson": {"criterion": "poisson"},
    "absolute_error": {"criterion": "absolute_error"},
    "min_samples_leaf": {"min_samples_leaf": 9},
    "hist": {"splitter": "hist"},
    "threads": {"n_jobs": 2},
}


@pytest.mark.parametrize("max_leaf_nodes", [2, 5, 40, 400])
@pytest.mark.parametrize("nan", [False, True], ids=["dense", "nan"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("params", list(REGRESSORS.values()), ids=list(REGRESSORS))
def test_regressor_grows_the_strict_tree(monkeypatch, steps, params, weighted, nan, max_leaf_nodes):
    X, _, y, w = mixed_data(2000, seed=max_leaf_nodes + 1, nan=nan)
    if params.get("criterion") == "poisson":
        y = np.abs(y)
    fit_both_ways(
        monkeypatch, steps, lambda: R(max_leaf_nodes=max_leaf_nodes, **params), X, y,
        w if weighted else None,
    )  # fmt: skip


@pytest.mark.parametrize("max_leaf_nodes", [4, 25, 300])
@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("nan", [False, True], ids=["dense", "nan"])
def test_categorical_splits_keep_their_rows(monkeypatch, steps, splitter, nan, max_leaf_nodes):
    """A subset split's threshold indexes its split row by node id: renumbered with it."""
    X, y, _, _ = mixed_data(4000, seed=7, nan=nan)
    X[:, 3] = np.where(np.isnan(X[:, 1]) & nan, np.nan, X[:, 3] + 5 * (X[:, 0] % 3))
    est = fit_both_ways(
        monkeypatch, steps,
        lambda: C(max_leaf_nodes=max_leaf_nodes, splitter=splitter, categorical_features=[3, 0]),
        X, y,
    )  # fmt: skip
    assert (est.tree_.categorical_set >= 0).any()


@pytest.mark.parametrize("max_leaf_nodes", [3, 30, 500])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_several_outputs_grow_the_strict_tree(monkeypatch, steps, task, max_leaf_nodes):
    X, y, y_reg, w = mixed_data(2500, seed=11, nan=True)
    if task == "classification":
        Y, make = np.column_stack([y, (y + X[:, 3].astype(int)) % 2]), C
    else:
        Y, make = np.column_stack([y_reg, np.sin(y_reg) + np.nan_to_num(X[:, 4])]), R
    fit_both_ways(monkeypatch, steps, lambda: make(max_leaf_nodes=max_leaf_nodes), X, Y, w)


@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 4, 7, 8, 9, 16, 33, 64, 65, 200])
def test_ties_break_as_in_strict_order(monkeypatch, steps, max_leaf_nodes):
    """Duplicated columns and mirror-image halves: many nodes with equal improvements,
    whose order only the strict ids decide."""
    rng = np.random.default_rng(5)
    half = rng.integers(0, 8, size=(256, 2)).astype(np.float32)
    X = np.vstack([half, -half])  # symmetric: each split's mirror has the same improvement
    X = np.column_stack([X, X[:, 0], X[:, 1]])  # duplicated columns
    y = np.concatenate([(half.sum(axis=1) % 3), (half.sum(axis=1) % 3)]).astype(int)
    est = fit_both_ways(monkeypatch, steps, lambda: C(max_leaf_nodes=max_leaf_nodes), X, y)
    assert est.tree_.n_leaves == min(max_leaf_nodes, C().fit(X, y).tree_.n_leaves)


def test_the_budget_runs_out_mid_step_and_expansions_roll_back(monkeypatch, steps):
    """The speculative path is the one tested above: steps of many nodes, some of them
    never confirmed, and the tree still the strict one."""
    X, y, _, _ = mixed_data(20_000, seed=3)
    fit_both_ways(monkeypatch, steps, lambda: C(max_leaf_nodes=300), X, y)
    assert max(steps.sizes) > 10
    assert len(steps.sizes) < steps.confirmed / 3
    assert steps.rolled_back > 0


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_large_fit_with_the_accelerators(monkeypatch, steps, splitter, criterion):
    """Enough rows for the large-fit accelerators (screening tables, two-valued counts)."""
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=(70_000, 4)), rng.random((70_000, 2)) < 0.4])
    y = ((X[:, 0] + X[:, 1] * X[:, 4] - X[:, 5] + rng.normal(size=len(X))) > 0).astype(int)
    fit_both_ways(
        monkeypatch, steps,
        lambda: C(max_leaf_nodes=700, splitter=splitter, criterion=criterion), X, y,
    )  # fmt: skip
    assert steps.rolled_back > 0


@pytest.mark.parametrize(
    "params",
    [
        {"max_features": 3, "random_state": 4},
        {"splitter": "random", "random_state": 4},
        {"splitter": "hist", "max_features": 2, "random_state": 4},
    ],
    ids=["max_features", "random", "hist-max_features"],
)
def test_fits_drawing_random_numbers_grow_one_node_per_step(monkeypatch, steps, params):
    """Their draws follow the order nodes are searched in, so they never speculate."""
    X, y, _, _ = mixed_data(3000, seed=9)
    fit_both_ways(monkeypatch, steps, lambda: C(max_leaf_nodes=60, **params), X, y)
    assert steps.sizes and all(size == 1 for size in steps.sizes)
    assert steps.rolled_back == 0


def test_speculation_share_does_not_change_the_tree(monkeypatch):
    """However much a step speculates, the replay keeps the strict tree."""
    X, y, _, w = mixed_data(5000, seed=13, nan=True)
    trees = []
    for share in (0.0, 0.1, 0.5, 1.0, 10.0):
        monkeypatch.setattr(grow, "SPECULATION_SHARE", share)
        trees.append(C(max_leaf_nodes=150).fit(X, y, sample_weight=w))
    for tree in trees[1:]:
        assert_trees_identical(tree, trees[0])


@pytest.mark.parametrize("max_leaf_nodes", [4, 5, 9, 14, 23, 40, 77, 150])
@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_mirror_twin_subtrees_tie_in_strict_order(
    monkeypatch, steps, criterion, splitter, max_leaf_nodes
):
    """Two clusters with mirrored labels grow twin subtrees: every node has a twin of
    exactly the same improvement, so strict ids alone decide which twin a budget reaches."""
    rng = np.random.default_rng(21)
    half = rng.integers(0, 12, size=(600, 3)).astype(np.float32)
    y_half = ((half[:, 0] + 2 * half[:, 1] + rng.integers(0, 3, 600)) % 5 < 3).astype(int)
    X = np.vstack([np.column_stack([np.zeros(600), half]), np.column_stack([np.ones(600), half])])
    y = np.concatenate([y_half, 1 - y_half])
    est = fit_both_ways(
        monkeypatch, steps,
        lambda: C(max_leaf_nodes=max_leaf_nodes, criterion=criterion, splitter=splitter), X, y,
    )  # fmt: skip
    assert est.tree_.feature[0] == 0  # the clusters split first
    assert est.tree_.n_leaves == max_leaf_nodes  # odd budgets cut a pair of twins
