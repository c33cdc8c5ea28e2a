"""The histogram splitter (``splitter="hist"``): binning, histograms, trees.

- Binning kernels against the numpy reference of ``_hist_reference``, including the sampled
  path of large inputs and its fall-back for values the sample missed.
- Histogram build and sibling subtraction against ``np.add.at``.
- Trees against the slow reference histogram builder (quantile bins), and identical to the
  exact splitter's trees when every feature has at most ``max_bins`` distinct values.
- Serial == parallel, routing consistency, accuracy close to the exact tree.
"""

from __future__ import annotations

import numpy as np
import pytest
from _hist_reference import reference_bins, reference_hist_build, reference_histogram
from _kernel_entry import via_kernel
from _reference import assert_tree_equal, reference_apply
from conftest import sample_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_builder import _fit_both, datasets, params_strategy, serial_parallel_data

import dtjit
from dtjit.engine import binning as _binning
from dtjit.engine import jit, sweep_exact, sweep_hist
from dtjit.engine.threads import run_workers

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _assert_binned_equal(binned, expected):
    codes, bin_offset, bin_min, bin_max = expected
    np.testing.assert_array_equal(binned.bin_offset, bin_offset)
    np.testing.assert_array_equal(binned.codes, codes)
    np.testing.assert_array_equal(binned.bin_min, bin_min)
    np.testing.assert_array_equal(binned.bin_max, bin_max)


# -- binning ---------------------------------------------------------------------------------


@SETTINGS
@given(
    n=st.integers(1, 300),
    n_values=st.sampled_from([1, 2, 5, 40, 1000]),
    max_bins=st.sampled_from([2, 3, 7, 255]),
    seed=st.integers(0, 2**32 - 1),
)
def test_binning_matches_reference(n, n_values, max_bins, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, 3)).astype(np.float32)
    X[:, 1] = rng.normal(size=n).astype(np.float32)
    X[:, 2] *= np.float32(1e-8)  # distinct values closer than FEATURE_THRESHOLD merge
    binned = _binning.bin_features(X, max_bins, 1)
    _assert_binned_equal(binned, reference_bins(X, max_bins))
    assert (np.diff(binned.bin_offset) <= max_bins).all()
    assert (binned.bin_min <= binned.bin_max).all()


def test_few_distinct_values_get_one_bin_each(covtype_table):
    X, _, _ = covtype_table
    X = X[sample_rows(len(X), 50_000, 0)]
    binned = _binning.bin_features(X, 255, 2)
    for f in range(X.shape[1]):
        distinct = np.unique(X[:, f])
        n_bins = binned.bin_offset[f + 1] - binned.bin_offset[f]
        if len(distinct) <= 255:
            assert n_bins == len(distinct)
            bins = slice(binned.bin_offset[f], binned.bin_offset[f + 1])
            np.testing.assert_array_equal(binned.bin_min[bins], distinct)
            np.testing.assert_array_equal(binned.bin_max[bins], distinct)
        else:
            assert n_bins <= 255
    _assert_binned_equal(binned, reference_bins(X, 255))


@pytest.mark.parametrize("max_bins", [2, 10, 255])
def test_quantile_bins_hold_about_equal_counts(max_bins):
    rng = np.random.default_rng(5)
    X = rng.lognormal(size=(100_000, 2)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 100)  # ties: about 2,000 distinct values, some heavy
    binned = _binning.bin_features(X, max_bins, 1)
    for f in range(2):
        counts = np.bincount(binned.codes[:, f])
        assert len(counts) == binned.bin_offset[f + 1] - binned.bin_offset[f]
        assert (counts > 0).all()
        if f == 0:  # continuous: exactly max_bins bins of n / max_bins rows each (+-2 rows)
            assert len(counts) == max_bins
            assert np.abs(counts - len(X) / max_bins).max() < 2
        else:  # a bin never holds more than one quantile step plus one distinct value
            assert len(counts) >= max_bins // 2
            heaviest = np.unique(X[:, 1], return_counts=True)[1].max()
            assert counts.max() <= len(X) / max_bins + heaviest


def test_sampled_binning_keeps_values_the_sample_missed():
    """Above BIN_SAMPLE_ROWS the bins come from a sample; a rare value still gets its bin."""
    n = _binning.BIN_SAMPLE_ROWS + 50_000
    rng = np.random.default_rng(1)
    X = np.empty((n, 5), dtype=np.float32)
    X[:, 0] = rng.integers(0, 10, size=n)
    X[:3, 0] = 4.5  # three rows: almost surely not in the sample
    X[:, 1] = rng.normal(size=n)  # many distinct values: quantile bins
    X[:, 2] = rng.integers(0, 300, size=n)  # more than 255 distinct values
    # Two more such columns (re-binned n_threads columns at a time): a 0/1 column, coded
    # by one comparison in the sample's bins, and 50 values.
    X[:, 3] = rng.integers(0, 2, size=n)
    X[-2:, 3] = 0.5
    X[:, 4] = rng.integers(0, 50, size=n)
    X[n // 2, 4] = 7.25
    for n_threads in (1, 2):
        binned = _binning.bin_features(X, 255, n_threads)
        np.testing.assert_array_equal(np.diff(binned.bin_offset)[[0, 3, 4]], [11, 3, 51])
        assert 4.5 in binned.bin_min[:11]
        assert 0.5 in binned.bin_min[binned.bin_offset[3] : binned.bin_offset[4]]
        assert 7.25 in binned.bin_min[binned.bin_offset[4] :]
        for f in range(X.shape[1]):
            bins = slice(binned.bin_offset[f], binned.bin_offset[f + 1])
            # Bin extremes are those of the full data, codes are ordered like the values.
            lo, hi = binned.bin_min[bins], binned.bin_max[bins]
            codes = binned.codes[:, f].astype(np.int64)
            np.testing.assert_array_equal(lo[codes] <= X[:, f], True)
            np.testing.assert_array_equal(hi[codes] >= X[:, f], True)
            assert (hi[:-1] < lo[1:]).all()
        if n_threads == 1:
            first = binned
        else:
            _assert_binned_equal(binned, tuple(first))


def test_binning_reads_a_read_only_x_without_copying_it():
    """A read-only X (a memory map opened "r") is binned in place, to the same codes.

    numba types read-only arrays apart; the binning once copied such an X whole (peak memory
    +1x X) to reach the kernels' writeable signature. Now every X reaches them read-only.
    """
    import tracemalloc

    n = 8 * _binning.BIN_SAMPLE_ROWS
    X = np.random.default_rng(2).normal(size=(n, 4)).astype(np.float32)
    expected = _binning.bin_features(X, 255, 1)
    X.flags.writeable = False
    tracemalloc.start()
    try:
        binned = _binning.bin_features(X, 255, 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _assert_binned_equal(binned, tuple(expected))
    # The codes (1 byte a value) and the sample's presort are allocated; a copy of X is not.
    assert peak < X.nbytes, (peak, X.nbytes)


# -- histograms ------------------------------------------------------------------------------


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("unit_weight", [True, False])
def test_histograms_and_subtraction_match_add_at(unit_weight, n_threads):
    rng = np.random.default_rng(3)
    n, n_features, n_classes = 5000, 4, 3
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    binned = _binning.bin_features(X, 17, 1)
    labels = rng.integers(0, n_classes, size=n).astype(np.int32)
    weights = np.ones(n) if unit_weight else rng.integers(1, 5, size=n).astype(np.float64)
    width = sweep_hist.histogram_width(n_classes, unit_weight)
    n_total = binned.bin_offset[-1]
    pool = np.zeros((3, n_total, width))
    small = 1200  # positions [0, small) are the smaller child, [small, n) the larger
    pool[:2] = np.nan  # every bin must be written
    run_workers(  # two threads: each task's features in two chunks
        sweep_hist.build_histograms_worker, n_threads, np.array([0, 1]), np.array([0, 0]),
        np.array([n, small]), binned.codes, binned.bin_offset, labels, weights, weights,
        unit_weight, n_classes, pool, np.int64(n_threads),
    )  # fmt: skip
    sweep_hist.subtract_histograms(np.array([2]), np.array([0]), np.array([1]), pool)
    for slot, (a, b) in enumerate([(0, n), (0, small), (small, n)]):
        for f in range(n_features):
            bins = slice(binned.bin_offset[f], binned.bin_offset[f + 1])
            expected = reference_histogram(
                binned.codes[:, f], np.arange(a, b), labels, weights, bins.stop - bins.start,
                n_classes,
            )  # fmt: skip
            np.testing.assert_array_equal(pool[slot, bins, :n_classes], expected)
            if not unit_weight:
                np.testing.assert_array_equal(pool[slot, bins, n_classes], expected.sum(axis=1))


@pytest.mark.parametrize("seed", range(6))
def test_hist_entropy_screen_keeps_the_first_of_tied_proxies(seed):
    """The screen of unweighted entropy in ``sweep_bins`` (a table of ``n ln n``) changes no
    result: the same proxy, cut, threshold and NaN side as the sweep without it, which scores
    every cut. Mirrored histograms give exactly equal proxies at mirrored cuts (the first
    must win); repeated label patterns and random counts give near ties; with and without
    ``min_samples_leaf`` / ``min_weight_leaf`` limits, and with a NaN bin (swept twice).
    """
    rng = np.random.default_rng(seed)
    empty = np.zeros(0, dtype=np.int64)
    for trial in range(60):
        n_classes = int(rng.integers(2, 11))
        n_bins = int(rng.integers(2, 40))
        counts = rng.integers(0, 4, size=(n_bins, n_classes)) * (rng.random((n_bins, 1)) < 0.8)
        if trial % 3 == 0:
            half = counts[: (n_bins + 1) // 2]
            counts = np.concatenate([half, half[::-1]])  # mirrored: tied cuts
        elif trial % 3 == 1:
            pattern = rng.integers(0, 3, size=(int(rng.integers(1, 4)), n_classes))
            counts = np.resize(pattern, (n_bins, n_classes))
        hist = counts.astype(np.float64)
        n_bins = hist.shape[0]
        with_nan = trial % 4 == 3
        bin_min = np.arange(n_bins, dtype=np.float64)
        if with_nan:
            bin_min[-1] = np.nan  # the last bin holds the NaN rows
        total = hist.sum(axis=0)
        n_rows = int(total.sum())
        if n_rows == 0:
            continue
        min_leaf = int(rng.choice([1, 1, 3, 10]))
        min_weight = float(rng.choice([0.0, 0.0, 2.5, 7.0]))
        for criterion in (jit.ENTROPY, jit.GAIN_RATIO):
            results = []
            for table in (sweep_exact.xlogx_table(n_rows), empty):  # screened, then not
                result = via_kernel(sweep_hist.best_bin_split)(
                    hist, np.int64(0), np.int64(n_bins), np.arange(n_bins, dtype=np.int64),
                    np.int64(n_bins), bin_min, bin_min + 0.5, np.uint8(0), total, float(n_rows),
                    np.int64(n_rows), np.int64(n_classes), True, np.int64(criterion), table,
                    np.int64(min_leaf), min_weight, np.zeros(n_classes),
                )  # fmt: skip
                results.append(result)
            assert results[0] == results[1], (seed, trial, criterion)


@pytest.mark.parametrize("seed", range(4))
def test_hist_row_sweep_equals_the_bin_sweep(seed):
    """A small node's row sweep on unit weights (``unit_rows_sweep``) returns the bin sweep's
    proxy, cut and threshold, for Gini, entropy and gain ratio (both screened with the table
    of ``n ln n``). Rows mirrored around the middle bin give exactly equal proxies at mirrored
    cuts (the first must win); classes repeating with the bin give runs of bins pure in one
    class, which the bin sweep skips and the row sweep scores; with and without
    ``min_samples_leaf`` / ``min_weight_leaf`` limits, one to 300 rows.
    """
    rng = np.random.default_rng(seed)
    bin_rows = np.empty((2, 256), dtype=np.int64)
    for trial in range(120):
        n_classes = int(rng.integers(2, 12))
        n_bins = int(rng.integers(2, 80))
        n_rows = int(rng.integers(1, 301))
        codes = rng.integers(0, n_bins, size=n_rows)
        classes = rng.integers(0, n_classes, size=n_rows)
        if trial % 3 == 0:  # mirrored: tied cuts
            half = max(1, n_rows // 2)
            codes = np.concatenate([codes[:half], n_bins - 1 - codes[:half]])
            classes = np.concatenate([classes[:half], classes[:half]])
            n_rows = 2 * half
        elif trial % 3 == 1:  # the class follows the bin: pure bins, runs of one class
            classes = (codes // int(rng.integers(1, 6))) % n_classes
        codes_2d = codes.astype(np.uint8).reshape(-1, 1)
        classes = classes.astype(np.int32)
        hist = np.zeros((n_bins, n_classes))
        np.add.at(hist, (codes, classes), 1.0)
        total = hist.sum(axis=0)
        listed = np.unique(codes).astype(np.int64)
        bin_min = 2.0 * np.arange(n_bins)
        bin_max = bin_min + 1.0
        min_leaf = int(rng.choice([1, 1, 3, 10]))
        min_weight = float(rng.choice([0.0, 0.0, 2.5, 7.0]))
        grouped = np.empty(n_rows, dtype=np.int32)
        sweep_hist.group_classes_by_bin(
            0, n_rows, codes_2d, 0, listed, len(listed), classes, bin_rows, grouped
        )
        np.testing.assert_array_equal(grouped, classes[np.argsort(codes, kind="stable")])
        for criterion in (jit.GINI, jit.ENTROPY, jit.GAIN_RATIO):
            table = sweep_exact.screening_table(n_rows, True, criterion)
            expected = via_kernel(sweep_hist.best_bin_split)(
                hist, np.int64(0), np.int64(n_bins), listed, np.int64(len(listed)), bin_min,
                bin_max, np.uint8(0), total, float(n_rows), np.int64(n_rows),
                np.int64(n_classes), True, np.int64(criterion), table, np.int64(min_leaf),
                min_weight, np.zeros(n_classes),
            )  # fmt: skip
            result = sweep_hist.unit_rows_sweep(
                np.int64(0), listed, np.int64(len(listed)), bin_rows[0], grouped, bin_min,
                bin_max, total, float(n_rows), np.int64(n_rows), np.int64(n_classes),
                np.int64(criterion), table, np.int64(min_leaf), min_weight,
                np.empty(n_classes, dtype=np.int64),
            )  # fmt: skip
            assert result == expected[:3] and expected[3] == -1, (seed, trial, criterion)


# -- trees -----------------------------------------------------------------------------------

HIST_PARAMS = st.fixed_dictionaries(
    {
        "max_depth": st.sampled_from([None, 2, 4]),
        "min_samples_split": st.sampled_from([2, 6]),
        "min_samples_leaf": st.sampled_from([1, 3]),
        "min_weight_fraction_leaf": st.sampled_from([0.0, 0.1]),
        "min_impurity_decrease": st.sampled_from([0.0, 0.02]),
        "max_leaf_nodes": st.sampled_from([None, None, 4]),
    }
)


@SETTINGS
@given(
    data=datasets(classification=True),
    params=HIST_PARAMS,
    max_bins=st.sampled_from([2, 3, 5]),
    criterion=st.sampled_from(["gini", "entropy"]),
)
def test_hist_classifier_matches_reference(data, params, max_bins, criterion):
    X, y, weights = data
    est = dtjit.DecisionTreeClassifier(
        splitter="hist", max_bins=max_bins, criterion=criterion, **params
    ).fit(X, y, sample_weight=weights)
    msl = params["min_samples_leaf"]
    total = len(y) if weights is None else weights.sum()
    ref = reference_hist_build(
        X, np.searchsorted(est.classes_, y), max_bins=max_bins, is_classifier=True,
        n_classes=len(est.classes_), criterion=criterion, max_depth=params["max_depth"],
        min_samples_split=max(params["min_samples_split"], 2 * msl), min_samples_leaf=msl,
        min_weight_leaf=params["min_weight_fraction_leaf"] * total,
        min_impurity_decrease=params["min_impurity_decrease"], sample_weight=weights,
        max_leaf_nodes=params["max_leaf_nodes"],
    )  # fmt: skip
    assert_tree_equal(est.tree_, ref, rtol=1e-12)
    np.testing.assert_array_equal(est.apply(X), reference_apply(ref, X))


@SETTINGS
@given(data=datasets(classification=False), params=HIST_PARAMS, max_bins=st.sampled_from([2, 4]))
def test_hist_regressor_matches_reference(data, params, max_bins):
    X, y, weights = data
    est = dtjit.DecisionTreeRegressor(splitter="hist", max_bins=max_bins, **params)
    est.fit(X, y, sample_weight=weights)
    msl = params["min_samples_leaf"]
    total = len(y) if weights is None else weights.sum()
    ref = reference_hist_build(
        X, y, max_bins=max_bins, is_classifier=False, criterion="squared_error",
        max_depth=params["max_depth"],
        min_samples_split=max(params["min_samples_split"], 2 * msl), min_samples_leaf=msl,
        min_weight_leaf=params["min_weight_fraction_leaf"] * total,
        min_impurity_decrease=params["min_impurity_decrease"], sample_weight=weights,
        max_leaf_nodes=params["max_leaf_nodes"],
    )  # fmt: skip
    assert_tree_equal(est.tree_, ref, rtol=1e-9, atol=1e-12)


# Distinct float32 values chained closer than FEATURE_THRESHOLD (1e-7, added in float32):
# 0 ~ 6e-8 ~ 1.2e-7, and 1 ~ 1 + u ~ 1 + 2u ~ 1 + 3u (u = 1.19e-7, one float32 step at 1,
# and 1 + 1e-7 rounds to 1 + u): each value is tied with its neighbours, not with the
# neighbours' neighbours. A node that lacks a run's middle value can be cut inside the run.
NEAR_TIES = np.array(
    [0.0, 6e-8, 1.2e-7, *(1.0 + np.arange(4) * np.spacing(np.float32(1.0))), 2.0],
    dtype=np.float32,
)


@st.composite
def near_tie_datasets(draw, classification=True):
    n = draw(st.integers(2, 80))
    m = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = NEAR_TIES[rng.integers(0, len(NEAR_TIES), size=(n, m))]
    if draw(st.booleans()):
        X[rng.random(X.shape) < 0.15] = np.nan
    if classification:
        y = rng.integers(0, draw(st.integers(2, 4)), size=n)
    else:
        y = rng.integers(-3, 4, size=n).astype(np.float64) / 2.0  # dyadic: exact sums
    weights = rng.integers(1, 4, size=n).astype(np.float64) if draw(st.booleans()) else None
    return X, y, weights


@SETTINGS
@given(
    data=datasets(classification=True),
    params=params_strategy,
    criterion=st.sampled_from(["gini", "entropy"]),
    max_features=st.sampled_from([None, 0.5]),
)
def test_hist_classifier_equals_exact_with_few_distinct_values(data, params, criterion,
                                                               max_features):  # fmt: skip
    """At most 8 distinct values per feature: one bin each, so the trees are the same."""
    X, y, weights = data
    kw = {"criterion": criterion, "max_features": max_features, "random_state": 0, **params}
    exact = dtjit.DecisionTreeClassifier(**kw).fit(X, y, sample_weight=weights)
    hist = dtjit.DecisionTreeClassifier(splitter="hist", **kw).fit(X, y, sample_weight=weights)
    assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-12)
    ref = _fit_both(exact, X, y, weights, params, True, criterion)
    if max_features is None:
        assert_tree_equal(hist.tree_, ref, rtol=1e-12)


@SETTINGS
@given(
    data=st.one_of(datasets(classification=False), near_tie_datasets(classification=False)),
    params=params_strategy,
)
def test_hist_regressor_equals_exact_with_few_distinct_values(data, params):
    X, y, weights = data
    exact = dtjit.DecisionTreeRegressor(**params).fit(X, y, sample_weight=weights)
    hist = dtjit.DecisionTreeRegressor(splitter="hist", **params).fit(X, y, sample_weight=weights)
    assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(
    data=near_tie_datasets(),
    params=params_strategy,
    criterion=st.sampled_from(["gini", "entropy"]),
    max_features=st.sampled_from([None, 0.5]),
    max_bins=st.sampled_from([8, 255]),
)
def test_hist_equals_exact_with_near_ties(data, params, criterion, max_features, max_bins):
    """Values within 1e-7 of a neighbour have bins of their own, and a node's sweep treats
    neighbouring bins as the exact splitter treats the values: tied when within 1e-7.

    They once shared one bin for the whole column, so a node holding only 0 and 1.2e-7
    could not be split between them; and with ``max_features`` a node holding only 0 and
    6e-8 counted as non-constant, which changed the features drawn.
    """
    X, y, weights = data
    kw = {"criterion": criterion, "max_features": max_features, "random_state": 0, **params}
    exact = dtjit.DecisionTreeClassifier(**kw).fit(X, y, sample_weight=weights)
    hist = dtjit.DecisionTreeClassifier(splitter="hist", max_bins=max_bins, **kw)
    assert_tree_equal(hist.fit(X, y, sample_weight=weights).tree_, exact.tree_, rtol=1e-12)


@pytest.mark.parametrize("n", [40, 20_000])  # small nodes (codes) and stored histograms
def test_near_ties_alone_are_a_constant_feature_for_max_features(n):
    """A feature of values 0 and 6e-8 only (tied) is constant for the draw of
    ``max_features``, as in the exact splitter: drawing goes on to a splittable feature."""
    rng = np.random.default_rng(n)
    X = np.column_stack(
        [
            NEAR_TIES[rng.integers(0, 2, n)],
            rng.integers(0, 6, n),
            NEAR_TIES[rng.integers(2, 4, n)],  # 1.2e-7 and 1: not tied
        ]
    ).astype(np.float32)
    y = (X[:, 1] + rng.integers(0, 3, n) > 3).astype(int)
    for seed in range(8):
        kw = {"max_features": 1, "random_state": seed}
        exact = dtjit.DecisionTreeClassifier(**kw).fit(X, y)
        hist = dtjit.DecisionTreeClassifier(splitter="hist", **kw).fit(X, y)
        assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-12)


@pytest.mark.parametrize("scale", [1, 2000])  # a small node (listed bins), a stored histogram
def test_class_boundary_skip_sees_the_whole_group_of_near_ties(scale):
    """Groups 0 | 0.5 | 1 ~ 1 + u | 1.5 (u one float32 step: tied): the cut 0.5 | 1 lies
    between bins pure in class 0, but 1's group holds class 1 too, so it is a class boundary
    and must be scored; it is the best cut."""
    u = np.spacing(np.float32(1.0))
    values = np.array([0.0, 0.5, 1.0, 1.0 + u, 1.5], dtype=np.float32)
    counts = np.array([5, 5, 1, 10, 1]) * scale
    X = np.repeat(values, counts)[:, None]
    y = np.repeat([0, 0, 0, 1, 1], counts)
    exact = dtjit.DecisionTreeClassifier(max_depth=1).fit(X, y)
    hist = dtjit.DecisionTreeClassifier(splitter="hist", max_depth=1).fit(X, y)
    assert exact.tree_.threshold[0] == 0.75
    assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-12)


def test_near_ties_split_where_the_node_lacks_the_middle_value():
    """The run 0 ~ 4e-8 ~ 8e-8 ~ 1.2e-7 is whole at the root; the child without its middle
    values splits 0 from 1.2e-7 (the exact tree, and the only way to fit this y)."""
    f0 = np.array([0.0, 1.2e-7, 0.4e-7, 0.8e-7] * 5, dtype=np.float32)
    f1 = np.array([0.0, 0.0, 1.0, 1.0] * 5, dtype=np.float32)
    X = np.column_stack([f0, f1])
    y = np.array([0, 1, 2, 2] * 5)
    exact = dtjit.DecisionTreeClassifier().fit(X, y)
    hist = dtjit.DecisionTreeClassifier(splitter="hist").fit(X, y)
    assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-12)
    assert hist.score(X, y) == 1.0
    assert np.isclose(hist.tree_.threshold[hist.tree_.feature == 0], 6e-8).all()


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"criterion": "entropy", "max_depth": 12},
        {"max_leaf_nodes": 300},
        {"min_samples_leaf": 20, "weighted": True},
        {"max_features": "sqrt", "random_state": 3},
    ],
)
def test_hist_equals_exact_on_covtype_low_cardinality_columns(covtype_table, kw):
    """Covertype's columns with at most 255 distinct values (soil / wilderness indicators,
    slope, hillshades, ...): the histogram tree is the exact tree, array for array."""
    X, y, _ = covtype_table
    rows = sample_rows(len(X), 60_000, 1)
    X, y = X[rows], y[rows]
    keep = [f for f in range(X.shape[1]) if len(np.unique(X[:, f])) <= 255]
    X = np.ascontiguousarray(X[:, keep])
    assert len(keep) >= 45
    # Integer weights keep every sum exact whatever the order of summation; with arbitrary
    # weights the two splitters' sums differ in the last bits and near-ties may flip.
    kw = dict(kw)
    w = np.random.default_rng(0).integers(1, 4, size=len(y)) if kw.pop("weighted", 0) else None
    exact = dtjit.DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w)
    hist = dtjit.DecisionTreeClassifier(splitter="hist", n_jobs=2, **kw).fit(X, y, sample_weight=w)
    assert exact.tree_.node_count > 100
    assert_tree_equal(hist.tree_, exact.tree_, rtol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("max_leaf_nodes", [None, 50])
@pytest.mark.parametrize("weighted", [False, True])
def test_hist_serial_and_parallel_builds_are_bit_identical(criterion, max_leaf_nodes, weighted):
    X, y, cls = serial_parallel_data(criterion, 60_000)
    w = np.random.default_rng(8).uniform(0.5, 2.0, size=len(X)) if weighted else None
    kw = {"criterion": criterion, "max_leaf_nodes": max_leaf_nodes, "splitter": "hist"}
    serial = cls(n_jobs=1, **kw).fit(X, y, sample_weight=w)
    parallel = cls(n_jobs=2, **kw).fit(X, y, sample_weight=w)
    for name, a in serial.tree_.to_arrays().items():
        np.testing.assert_array_equal(a, getattr(parallel.tree_, name), err_msg=name)


@pytest.mark.parametrize("max_bins", [2, 16, 255])
def test_hist_thresholds_route_training_rows_like_the_bins(max_bins):
    """With quantile bins the thresholds lie between bins: predicting on the training data
    sends every row to the leaf whose sample count it was part of."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20_000, 5)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] + rng.normal(scale=0.5, size=len(X)) > 0).astype(int)
    est = dtjit.DecisionTreeClassifier(splitter="hist", max_bins=max_bins).fit(X, y)
    tree = est.tree_
    counts = np.bincount(est.apply(X), minlength=tree.node_count)
    leaves = tree.children_left == -1
    np.testing.assert_array_equal(counts[leaves], tree.n_node_samples[leaves])


def test_hist_with_max_bins_two_splits_each_feature_once_per_path():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)).astype(np.float32)
    y = (X.sum(axis=1) > 0).astype(int)
    est = dtjit.DecisionTreeClassifier(splitter="hist", max_bins=2).fit(X, y)
    assert est.get_depth() <= 3
    for f in range(3):  # two bins: the one possible threshold, the edge between them
        assert len(np.unique(est.tree_.threshold[est.tree_.feature == f])) <= 1, f


@pytest.mark.slow
def test_hist_accuracy_is_close_to_the_exact_tree():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=200_000, n_features=20, n_informative=10, random_state=0)
    X = X.astype(np.float32)
    train, test = slice(0, 160_000), slice(160_000, None)
    exact = dtjit.DecisionTreeClassifier(n_jobs=-1).fit(X[train], y[train])
    hist = dtjit.DecisionTreeClassifier(splitter="hist", n_jobs=-1).fit(X[train], y[train])
    gap = exact.score(X[test], y[test]) - hist.score(X[test], y[test])
    assert abs(gap) < 0.005, gap


@pytest.mark.parametrize("seed", range(6))
def test_features_with_near_ties_match_a_loop_over_neighbouring_bins(seed):
    """A feature is marked when two of its neighbouring bins are within FEATURE_THRESHOLD in
    float32 (NaN bins never); a feature's last bin and the next one's first are no pair, and
    features with one bin, or none, have no pair."""
    from dtjit.engine.jit import FEATURE_THRESHOLD
    from dtjit.engine.sweep_hist import features_with_near_ties

    rng = np.random.default_rng(seed)
    n_bins = rng.integers(0, 5, size=8)
    n_bins[0] = 0 if seed % 2 else n_bins[0]
    bin_offset = np.concatenate([[0], np.cumsum(n_bins)]).astype(np.int64)
    n_total = int(bin_offset[-1])
    bin_min = np.sort(rng.choice([0.0, 1.0, 1.0 + 5e-8, 2.0, 3.0], size=n_total))
    bin_max = bin_min + rng.choice([0.0, 3e-8, 0.5], size=n_total)
    bin_min[rng.random(n_total) < 0.15] = np.nan
    expected = np.zeros(len(n_bins), dtype=np.uint8)
    for f in range(len(n_bins)):
        for b in range(bin_offset[f], bin_offset[f + 1] - 1):
            if np.float32(bin_min[b + 1]) <= np.float32(bin_max[b]) + FEATURE_THRESHOLD:
                expected[f] = 1
    got = features_with_near_ties(bin_offset, bin_min, bin_max)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, expected)


def test_every_bin_listed_lists_each_feature_s_bins_in_order():
    """A node swept from its stored histogram lists every bin of each feature, NaN bin last."""
    bin_offset = np.array([0, 3, 3, 8, 9], dtype=np.int64)  # 3 bins, none, 5, 1
    listed, n_listed = sweep_hist.every_bin_listed(bin_offset)
    np.testing.assert_array_equal(n_listed, [3, 0, 5, 1])
    assert listed.dtype == np.int64 and listed.flags.c_contiguous
    for f, n in enumerate(n_listed):
        np.testing.assert_array_equal(listed[f, :n], np.arange(n))
