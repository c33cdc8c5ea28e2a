"""The compiled builder against the slow reference builder of ``tests/_reference.py``.

Hypothesis draws small datasets with many ties (small integer features, few classes,
integer weights), the regime where tie-breaking and the class-boundary skipping of the
sweep are most likely to go wrong. Kernel and reference must build the same tree, array for
array: structure, features, thresholds, values, impurities, counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from _assertions import assert_trees_identical
from _reference import assert_tree_equal, reference_apply, reference_build
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dtjit
from dtjit.engine import grow as _builder

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def datasets(draw, classification=True):
    n = draw(st.integers(2, 60))
    m = draw(st.integers(1, 4))
    n_values = draw(st.integers(1, 8))  # few distinct values: many ties
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, m)).astype(np.float32)
    if draw(st.booleans()):
        X += rng.normal(scale=0.01, size=X.shape).astype(np.float32)
    if classification:
        n_classes = draw(st.integers(1, 4))
        y = rng.integers(0, n_classes, size=n)
    else:
        y = rng.integers(-3, 4, size=n).astype(np.float64) / 2.0  # dyadic: exact sums
    weights = rng.integers(1, 4, size=n).astype(np.float64) if draw(st.booleans()) else None
    return X, y, weights


params_strategy = st.fixed_dictionaries(
    {
        "max_depth": st.sampled_from([None, 1, 2, 4]),
        "min_samples_split": st.sampled_from([2, 3, 6]),
        "min_samples_leaf": st.sampled_from([1, 2, 4]),
        "min_weight_fraction_leaf": st.sampled_from([0.0, 0.1]),
        "min_impurity_decrease": st.sampled_from([0.0, 0.02]),
        "max_leaf_nodes": st.sampled_from([None, None, 2, 5]),
    }
)


def _fit_both(est, X, y, weights, params, is_classifier, criterion):
    est.fit(X, y, sample_weight=weights)
    n = len(y)
    total = n if weights is None else weights.sum()
    msl = params["min_samples_leaf"]
    ref = reference_build(
        X,
        np.searchsorted(est.classes_, y) if is_classifier else y,
        is_classifier=is_classifier,
        n_classes=len(est.classes_) if is_classifier else None,
        criterion=criterion,
        max_depth=params["max_depth"],
        min_samples_split=max(params["min_samples_split"], 2 * msl),
        min_samples_leaf=msl,
        min_weight_leaf=params["min_weight_fraction_leaf"] * total,
        min_impurity_decrease=params["min_impurity_decrease"],
        sample_weight=weights,
        max_leaf_nodes=params["max_leaf_nodes"],
    )
    return ref


@SETTINGS
@given(data=datasets(classification=True), params=params_strategy,
       criterion=st.sampled_from(["gini", "entropy"]))  # fmt: skip
def test_classifier_matches_reference(data, params, criterion):
    X, y, weights = data
    est = dtjit.DecisionTreeClassifier(criterion=criterion, **params)
    ref = _fit_both(est, X, y, weights, params, True, criterion)
    assert_tree_equal(est.tree_, ref, rtol=1e-12)
    np.testing.assert_array_equal(est.apply(X), reference_apply(ref, X))


@SETTINGS
@given(data=datasets(classification=False), params=params_strategy)
def test_regressor_matches_reference(data, params):
    X, y, weights = data
    est = dtjit.DecisionTreeRegressor(**params)
    ref = _fit_both(est, X, y, weights, params, False, "squared_error")
    assert_tree_equal(est.tree_, ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.apply(X), reference_apply(ref, X))


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_long_tied_groups_and_chained_near_ties_match_reference(criterion):
    """Skewed 0/1 columns and ties chained closer than ``FEATURE_THRESHOLD``, unit weights.

    The sweep takes a long first or last tied group in one step and leaves columns constant
    in a node unpartitioned below it; a chain of near-ties (0, 6e-8, 1.2e-7: each step under
    1e-7, the whole over it) is one group only when followed step by step.
    """
    rng = np.random.default_rng(11)
    n = 3000
    near = np.float32([0.0, 6e-8, 1.2e-7, 1.0])
    X = np.column_stack(
        [
            rng.random(n) < 0.05,  # sparse: long first group
            rng.random(n) < 0.95,  # dense: long last group
            rng.random(n) < 0.5,
            near[rng.choice(4, n, p=[0.4, 0.2, 0.2, 0.2])],  # chained first group
            -near[rng.choice(4, n, p=[0.3, 0.3, 0.1, 0.3])],  # chained last group
            rng.integers(0, 5, n),
            rng.normal(size=n),
        ]
    ).astype(np.float32)
    # The label rewards cuts inside the chains, which a correct sweep may not make.
    chain_cuts = (X[:, 3] > 1e-7).astype(int) + (X[:, 4] > -1e-7)
    y = (X[:, 0] + X[:, 2] + chain_cuts + (rng.random(n) < 0.3)).astype(np.int64)
    params = {
        "max_depth": None, "min_samples_split": 2, "min_samples_leaf": 1,
        "min_weight_fraction_leaf": 0.0, "min_impurity_decrease": 0.0, "max_leaf_nodes": None,
    }  # fmt: skip
    est = dtjit.DecisionTreeClassifier(criterion=criterion, **params)
    ref = _fit_both(est, X, y, None, params, True, criterion)
    assert_tree_equal(est.tree_, ref, rtol=1e-12)
    assert est.tree_.node_count > 100
    np.testing.assert_array_equal(est.apply(X), reference_apply(ref, X))


def serial_parallel_data(criterion, n_samples):
    """Data large enough for every parallel kernel, with a tie-heavy column; and the class."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n_samples, 8)).astype(np.float32)
    X[:, 3] = np.round(X[:, 3])  # a tie-heavy column
    if criterion == "squared_error":
        return X, X[:, 0] + np.sin(X[:, 1]) + rng.normal(size=len(X)), dtjit.DecisionTreeRegressor
    y = (X[:, 0] + X[:, 3] ** 2 + rng.normal(size=len(X)) > 1).astype(int) + (X[:, 2] > 1)
    return X, y, dtjit.DecisionTreeClassifier


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("max_leaf_nodes", [None, 50])
def test_serial_and_parallel_builds_are_bit_identical(criterion, max_leaf_nodes):
    """Large enough for the parallel sweep, partition and presort; results must not move."""
    X, y, cls = serial_parallel_data(criterion, 40_000)
    kw = {"criterion": criterion, "max_leaf_nodes": max_leaf_nodes}
    serial = cls(n_jobs=1, **kw).fit(X, y)
    parallel = cls(n_jobs=2, **kw).fit(X, y)
    for name, a in serial.tree_.to_arrays().items():
        np.testing.assert_array_equal(a, getattr(parallel.tree_, name), err_msg=name)
    np.testing.assert_array_equal(serial.predict(X), parallel.predict(X))


def test_max_features_draws_are_reproducible_and_respect_the_budget():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 10)).astype(np.float32)
    y = (X.sum(axis=1) > 0).astype(int)
    a = dtjit.DecisionTreeClassifier(max_features=3, random_state=11).fit(X, y)
    b = dtjit.DecisionTreeClassifier(max_features=3, random_state=11).fit(X, y)
    c = dtjit.DecisionTreeClassifier(max_features=3, random_state=12).fit(X, y)
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    assert not np.array_equal(a.tree_.feature, c.tree_.feature)
    assert a.max_features_ == 3


@pytest.mark.parametrize("task", ["regression", "weighted classification"])
def test_renumbered_samples_grow_the_tree_grown_without(monkeypatch, task):
    """The builder renumbers the samples by position as its nodes shrink (regression and
    weighted fits, ``sweep_exact.renumber_samples``): the tree is the one grown without it,
    bit for bit, threads, NaN and a 0/1 column included. Without it here: the
    shrink factor out of reach."""
    rng = np.random.default_rng(8)
    n = 4000
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[:, 3] = rng.random(n) < 0.3
    X[rng.random(n) < 0.1, 1] = np.nan
    if task == "regression":
        y = X[:, 0] * 2.0 + rng.normal(size=n)
        est, weights = dtjit.DecisionTreeRegressor, None
    else:
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        est, weights = dtjit.DecisionTreeClassifier, rng.uniform(0.5, 2.0, n)
    renumbered = est(n_jobs=2).fit(X, y, sample_weight=weights)
    monkeypatch.setattr(_builder, "RENUMBER_SHRINK", 2**40)
    plain = est(n_jobs=2).fit(X, y, sample_weight=weights)
    assert renumbered.tree_.max_depth > 8
    assert_trees_identical(renumbered, plain)


@pytest.mark.parametrize(
    "n_samples, n_features, n_classes, criterion, unit_weight, hist, expected",
    [
        (150, 4, 3, "gini", True, False, False),  # iris: the plain tier, compiled in seconds
        (150, 4, 3, "entropy", True, True, False),
        (65_536, 1, 2, "gini", True, False, True),  # from ACCELERATE_MIN_ROWS rows: every fit
        (65_536, 1, 1, "squared_error", False, True, True),
        (20_000, 20, 2, "gini", True, False, False),  # 4M units: plain
        (60_000, 20, 3, "gini", True, False, False),  # 13M
        (20_000, 20, 300, "gini", True, False, True),  # many classes: 123M
        (20_000, 20, 3, "entropy", True, False, True),  # entropy counts 5x in the exact sweeps
        (20_000, 20, 10, "entropy", True, True, False),  # ... twice in the bins
        (20_000, 20, 50, "gini", True, True, True),
        (5_000, 20, 50, "gain_ratio", True, False, True),
        (20_000, 20, 300, "gini", False, False, False),  # weighted Gini: no accelerated sweep
        (20_000, 20, 300, "entropy", False, False, True),  # weighted entropy: exact only
        (20_000, 20, 300, "entropy", False, True, False),
        (20_000, 20, 2, "entropy", False, False, False),  # ... from 3 classes
        (60_000, 500, 1, "squared_error", True, False, False),  # regression: by rows only
    ],
)  # fmt: skip
def test_accelerated_tier_follows_rows_or_the_class_work(
    n_samples, n_features, n_classes, criterion, unit_weight, hist, expected
):
    from dtjit.engine.jit import CRITERION_CODES

    code = CRITERION_CODES[criterion]
    assert (
        _builder.takes_accelerators(n_samples, n_features, n_classes, code, unit_weight, hist)
        is expected
    )


@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize(
    "criterion, n_classes, weighted",
    [("gini", 2, False), ("gini", 5, False), ("entropy", 3, False), ("entropy", 4, True),
     ("gini", 3, True)],
)  # fmt: skip
def test_accelerators_grow_the_tree_the_plain_kernels_grow(monkeypatch, splitter, criterion,
                                                           n_classes, weighted):  # fmt: skip
    """Fits from ``ACCELERATE_MIN_ROWS`` rows on take the block and screened sweeps and the
    two-valued search (hist: the row sweeps of small nodes and the screened entropy sweep);
    smaller ones the general sweeps. Both must
    grow the same tree, bit for bit: here on the same data, with ties, NaN and 0/1 columns,
    the thresholds moved to take each way."""
    from dtjit.engine import sweep_exact, sweep_two_valued

    rng = np.random.default_rng(11)
    n = 3000
    X = np.column_stack([
        rng.integers(0, 30, n), rng.normal(size=n), rng.random(n) < 0.3,
        rng.integers(0, 4, n), rng.random(n) < 0.8,
    ]).astype(np.float32)  # fmt: skip
    X[rng.random(n) < 0.05, 1] = np.nan
    y = (X[:, 0] // 7 + X[:, 2] + (X[:, 1] > 0.3) + (rng.random(n) < 0.2)) % n_classes
    weights = rng.uniform(0.5, 3.0, n) if weighted else None
    fits = []
    for threshold in (0, 2**40):  # every fit accelerated, then none
        monkeypatch.setattr(_builder, "ACCELERATE_MIN_ROWS", threshold)
        monkeypatch.setattr(_builder, "ACCELERATE_MIN_WORK", threshold)
        monkeypatch.setattr(sweep_exact, "ACCELERATE_MIN_ROWS", threshold)
        monkeypatch.setattr(sweep_two_valued, "MIN_ROWS", threshold)
        est = dtjit.DecisionTreeClassifier(criterion=criterion, splitter=splitter)
        fits.append(est.fit(X, y, sample_weight=weights))
    assert fits[0].tree_.node_count > 50
    assert_trees_identical(*fits)
