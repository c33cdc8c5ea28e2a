"""Two-valued features searched from class counts (``dtjit.engine.sweep_two_valued``).

The layout against a plain Python reading of the columns, and fitted trees against the slow
reference builder of ``tests/_reference.py``: the path must give the sweep's very splits.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from _reference import assert_tree_equal, reference_apply, reference_build

import dtjit
from dtjit.engine import sweep_two_valued
from dtjit.engine.jit import FEATURE_THRESHOLD


@pytest.fixture(autouse=True)
def two_valued_at_any_size(monkeypatch):
    """The estimator takes the path from ``MIN_ROWS`` rows on: here, at every size."""
    monkeypatch.setattr(sweep_two_valued, "MIN_ROWS", 0)


def mixed_columns(n, seed, with_nan=False):
    """Indicator, one-hot, two-valued, near-tied and numeric columns (one with NaN); a label.

    The reference builder takes no NaN: without ``with_nan`` that column is numeric.
    """
    rng = np.random.default_rng(seed)
    one_hot = np.eye(5, dtype=np.float32)[rng.choice(5, n, p=[0.5, 0.3, 0.1, 0.07, 0.03])]
    X = np.column_stack(
        [
            rng.normal(size=n),  # numeric
            rng.random(n) < 0.04,  # sparse indicator
            rng.random(n) < 0.9,  # dense indicator
            np.where(rng.random(n) < 0.5, -3.5, 7.25),  # two values, not 0/1
            one_hot,
            np.where(rng.random(n) < 0.5, 1.0, 1.0 + 5e-8),  # two values closer than 1e-7
            np.where(rng.random(n) < 0.3, np.nan if with_nan else 0.5, 2.0),  # one value, NaN
            np.ones(n),  # constant
            rng.integers(0, 3, n),  # three values
        ]
    ).astype(np.float32)
    y = (
        (X[:, 1] > 0).astype(int)
        + (X[:, 3] > 0)
        + 2 * X[:, 5]
        + (X[:, 0] > 0.5)
        + (rng.random(n) < 0.25)
    ).astype(np.int64)
    return X, y


def reference_layout(X):
    """Slot, threshold and set bits of each column, from its distinct values."""
    slot = np.full(X.shape[1], -1)
    threshold = np.zeros(X.shape[1])
    high_rows = {}
    n_two = 0
    for f in range(X.shape[1]):
        column = X[:, f]
        values = np.unique(column)
        if np.isnan(column).any() or len(values) != 2:
            continue
        low, high = values
        if not high > np.float32(low + FEATURE_THRESHOLD):
            continue
        slot[f] = n_two
        threshold[f] = np.float64(low) / 2 + np.float64(high) / 2
        high_rows[n_two] = set(np.flatnonzero(column == high))
        n_two += 1
    return slot, threshold, high_rows


def unpacked(high_bits):
    """The bits of ``high_bits`` (uint64 words), column ``j`` for slot ``j``."""
    as_bytes = high_bits.astype("<u8").view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")


def layout_of(X, eligible):
    return sweep_two_valued.two_valued_layout(np.ascontiguousarray(X), eligible)


def test_layout_matches_reference():
    X, _ = mixed_columns(2000, 0, with_nan=True)
    X[0, 6] = np.nan  # a NaN in the very first row rules a column out too
    X[:, 7] = np.where(X[:, 7] == 1, 2.0, -0.0)  # -0.0 and 0.0 are one value
    X[::2, 7] = np.where(X[::2, 7] == 2.0, 2.0, 0.0)
    slot, threshold, high_bits = layout_of(X, np.ones(X.shape[1], dtype=np.uint8))
    ref_slot, ref_threshold, ref_high_rows = reference_layout(X)
    np.testing.assert_array_equal(slot, ref_slot)
    np.testing.assert_array_equal(threshold[slot >= 0], ref_threshold[ref_slot >= 0])
    # Indicators, the (-3.5, 7.25) column and the one-hot block; not the near-tied pair,
    # the NaN column, the constant or the three-valued column.
    assert list(np.flatnonzero(slot >= 0)) == [1, 2, 3, 4, 5, 7, 8]
    bits = unpacked(high_bits)
    for j, rows in ref_high_rows.items():
        assert set(np.flatnonzero(bits[:, j])) == rows


def columns_split_by_chunks(n):
    """Columns whose values differ between the thirds of the rows, besides ``mixed_columns``.

    Read in chunks, each chunk sees fewer values than the whole: only the merge can tell.
    """
    X, _ = mixed_columns(n, 5)
    third = np.arange(n) * 3 // n
    extra = np.column_stack(
        [
            third == 2,  # one value per chunk of three, two in all: two-valued
            third,  # one value per chunk, three in all: not
            np.where(third == 1, np.nan, 1.0),  # NaN in one chunk only: not
            np.where(third == 0, 4.0, np.where(np.arange(n) % 2, 4.0, 9.0)),  # two values
            np.where(third == 2, 2.0, np.arange(n) % 2),  # 0/1, then a third value
        ]
    )
    return np.column_stack([X, extra]).astype(np.float32)


@pytest.mark.parametrize("n_chunks", [1, 2, 3, 7])
def test_chunked_scans_merge_to_the_reference(n_chunks):
    X = columns_split_by_chunks(999)
    n_features = X.shape[1]
    bounds = np.linspace(0, X.shape[0], n_chunks + 1).astype(np.int64)
    low = np.zeros((n_chunks, n_features), dtype=np.float32)
    high = np.zeros_like(low)
    state = np.zeros((n_chunks, n_features), dtype=np.uint8)
    eligible = np.ones(n_features, dtype=np.uint8)
    sweep_two_valued.scan_chunks(X, bounds, eligible, low, high, state)
    slot = np.empty(n_features, dtype=np.int64)
    threshold = np.zeros(n_features)
    high_value = np.zeros(n_features, dtype=np.float32)
    n_two = sweep_two_valued.merge_scans(low, high, state, slot, threshold, high_value)
    ref_slot, ref_threshold, _ = reference_layout(X)
    np.testing.assert_array_equal(slot, ref_slot)
    np.testing.assert_array_equal(threshold[slot >= 0], ref_threshold[ref_slot >= 0])
    assert n_two == (ref_slot >= 0).sum()
    assert list(np.flatnonzero(slot[-5:] >= 0)) == [0, 3]


def test_parallel_layout_equals_serial_layout(monkeypatch):
    X = columns_split_by_chunks(12_000)
    # The threaded passes from this size on (a smaller X than the real threshold's).
    monkeypatch.setattr(sweep_two_valued, "PASS_PARALLEL_MIN_WORK", X.size)
    assert sweep_two_valued.row_chunks(X, 2).shape[0] == 3
    eligible = np.ones(X.shape[1], dtype=np.uint8)
    serial = sweep_two_valued.two_valued_layout(X, eligible, 1)
    parallel = sweep_two_valued.two_valued_layout(X, eligible, 2)
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)
    ref_slot, _, ref_high_rows = reference_layout(X)
    np.testing.assert_array_equal(parallel[0], ref_slot)
    bits = unpacked(parallel[2])
    for j, rows in ref_high_rows.items():
        assert set(np.flatnonzero(bits[:, j])) == rows


def test_layout_respects_eligibility_and_keeps_one_feature_swept():
    X, _ = mixed_columns(500, 1)
    eligible = np.ones(X.shape[1], dtype=np.uint8)
    eligible[1] = 0  # as a categorical column would be
    assert layout_of(X, eligible)[0][1] == -1
    slot, _, high_bits = layout_of(X, None)
    assert (slot == -1).all() and high_bits.shape == (0, 0)
    # Every column two-valued: feature 0 stays swept (its segments are the nodes' rows).
    indicators = X[:, 1:3]
    slot, _, _ = layout_of(indicators, np.ones(2, dtype=np.uint8))
    assert list(slot) == [-1, 0]


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"min_samples_leaf": 7},
        {"min_weight_fraction_leaf": 0.01, "max_depth": 6},
        {"max_leaf_nodes": 40},
    ],
)
def test_trees_match_reference(criterion, params):
    X, y = mixed_columns(1500, 2)
    est = dtjit.DecisionTreeClassifier(criterion=criterion, **params).fit(X, y)
    msl = params.get("min_samples_leaf", 1)
    ref = reference_build(
        X,
        np.searchsorted(est.classes_, y),
        is_classifier=True,
        n_classes=len(est.classes_),
        criterion=criterion,
        max_depth=params.get("max_depth"),
        min_samples_split=max(2, 2 * msl),
        min_samples_leaf=msl,
        min_weight_leaf=params.get("min_weight_fraction_leaf", 0.0) * len(y),
        max_leaf_nodes=params.get("max_leaf_nodes"),
    )
    assert_tree_equal(est.tree_, ref, rtol=1e-12)
    np.testing.assert_array_equal(est.apply(X), reference_apply(ref, X))
    # The two-valued columns were split on, so the path was exercised.
    assert np.isin(est.tree_.feature, [1, 3, 5]).any()


def test_all_columns_two_valued_match_reference():
    rng = np.random.default_rng(4)
    X = (rng.random((1500, 6)) < [0.5, 0.1, 0.3, 0.7, 0.05, 0.5]).astype(np.float32)
    y = (X[:, 1] + X[:, 2] * X[:, 3] + (rng.random(1500) < 0.2)).astype(np.int64)
    est = dtjit.DecisionTreeClassifier().fit(X, y)
    ref = reference_build(X, y, is_classifier=True, n_classes=len(est.classes_))
    assert list(est.classes_) == list(range(len(est.classes_)))
    assert_tree_equal(est.tree_, ref, rtol=1e-12)


def test_more_than_64_two_valued_columns_match_reference():
    """Two words of bits per row: the bit fill and the general loops of the count and partition."""
    rng = np.random.default_rng(6)
    n = 800
    indicators = rng.random((n, 70)) < rng.uniform(0.02, 0.6, 70)
    X = np.column_stack([rng.normal(size=n), indicators]).astype(np.float32)
    y = (X[:, 3] + 2 * X[:, 68] + X[:, 70] * (X[:, 0] > 0) + (rng.random(n) < 0.3)).astype(int)
    slot, _, high_bits = layout_of(X, np.ones(X.shape[1], dtype=np.uint8))
    assert slot.max() == 69 and slot[0] == -1 and high_bits.shape == (n, 2)
    ref_slot, _, ref_high_rows = reference_layout(X)
    np.testing.assert_array_equal(slot, ref_slot)
    bits = unpacked(high_bits)
    for j, rows in ref_high_rows.items():
        assert set(np.flatnonzero(bits[:, j])) == rows
    assert not bits[:, 70:].any()  # the second word's unused bits stay clear
    est = dtjit.DecisionTreeClassifier().fit(X, y)
    ref = reference_build(X, y, is_classifier=True, n_classes=len(est.classes_))
    assert_tree_equal(est.tree_, ref, rtol=1e-12)
    assert (est.tree_.feature >= 65).any()  # a split on a feature of the second word


@pytest.mark.parametrize("max_leaf_nodes", [None, 60])
def test_serial_and_parallel_builds_are_bit_identical(max_leaf_nodes):
    """Large enough for the parallel count pass; the trees must not move."""
    X, y = mixed_columns(40_000, 3)
    kw = {"max_leaf_nodes": max_leaf_nodes}
    serial = dtjit.DecisionTreeClassifier(n_jobs=1, **kw).fit(X, y)
    parallel = dtjit.DecisionTreeClassifier(n_jobs=2, **kw).fit(X, y)
    for name, a in serial.tree_.to_arrays().items():
        np.testing.assert_array_equal(a, getattr(parallel.tree_, name), err_msg=name)


@numba.njit
def _compiled_lowest_set_bit(word):
    return sweep_two_valued.lowest_set_bit(word)


def test_lowest_set_bit_matches_python_bit_arithmetic():
    """Compiled (the intrinsic) and plain Python (what NUMBA_DISABLE_JIT runs) alike."""
    rng = np.random.default_rng(3)
    words = [1, 2**63, 2**63 + 2**5, 0xFFFF0000] + [
        int(rng.integers(1, 2**63)) << int(rng.integers(0, 2)) for _ in range(500)
    ]
    for word in words:
        expected = (word & -word).bit_length() - 1
        assert _compiled_lowest_set_bit(np.uint64(word)) == expected, hex(word)
        assert sweep_two_valued.lowest_set_bit(np.uint64(word)) == expected, hex(word)
