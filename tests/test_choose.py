"""The reduction kernels of ``dtjit.engine.choose`` against slow, obvious Python references.

Each kernel is called directly on a small presorted problem built here by hand: a few nodes
owning disjoint row sets, every feature sorted by (node, value) with NaN last, so a node's
segment ``[start, end)`` holds the same rows in every feature, as in the exact builder. The
references find a child's rows from the data (``X``'s values and NaN, the split row, the 0/1
column) and the presorted positions, never with the kernels' own helpers. Sums run in the
kernels' order (the child's rows in segment order), so the statistics are compared exactly;
impurities and improvements, which the references compute by other formulas, to
``rtol=1e-12``.

Also here: the Python side of the reduction (``choose.best_features``), C4.5's gain-ratio
choice (``gain_ratio.gain_ratio_features_presorted``) and the side flags the builder sets for
subset and two-valued splits (``grow.mark_subset_sides``, ``grow.mark_two_valued_splits``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pytest

from dtjit.engine import choose, records
from dtjit.engine.gain_ratio import GAIN_TOLERANCE, gain_ratio_features_presorted
from dtjit.engine.grow import mark_subset_sides, mark_two_valued_splits
from dtjit.engine.jit import (
    ABSOLUTE_ERROR,
    ENTROPY,
    EPSILON,
    GINI,
    POISSON,
    SQUARED_ERROR,
)
from dtjit.engine.sweep_absolute_error import MEDIAN_STAT
from dtjit.engine.sweep_exact import new_side_flags

SEEDS = [0, 1, 2]
N_CLASSES = 3
# Words of a category bitset: categories 0 .. 99 use both (bit c of word c >> 6).
N_WORDS = 2
N_CATEGORIES = 100
# scikit-learn's Poisson criterion rejects target sums at most this (criterion.POISSON_EPSILON).
POISSON_EPSILON = 10.0 * EPSILON
CRITERION_NAMES = {
    GINI: "gini", ENTROPY: "entropy", SQUARED_ERROR: "squared_error", POISSON: "poisson",
    ABSOLUTE_ERROR: "absolute_error",
}  # fmt: skip


def criterion_id(value):
    """Test id of a parameter: a criterion code's name (tasks are strings already)."""
    return CRITERION_NAMES[value] if isinstance(value, int) else value


# ---------------------------------------------------------------------------------------
# The problem: rows, their nodes, the presorted columns and the batch search record
# ---------------------------------------------------------------------------------------


class Problem(NamedTuple):
    """A presorted batch: ``group[i]`` is row ``i``'s node (group ``g`` is node ``node[g]``)."""

    X: np.ndarray  # float32 (n_samples, n_features)
    group: np.ndarray  # int64 per row
    sorted_idx: np.ndarray  # int32 (n_features, n_samples)
    sorted_val: np.ndarray  # float32 (n_features, n_samples)
    start: np.ndarray  # int64 per group
    end: np.ndarray  # int64 per group
    node: np.ndarray  # int64 node id per group
    cat_slot: np.ndarray  # int32 per feature, -1: numeric


class Targets(NamedTuple):
    """What a row adds to the statistics, as ``prepare.weighted_rows`` lays it out."""

    code: np.ndarray  # int32: class code, or 0 (regression)
    contrib: np.ndarray  # float64: w, or w * y (regression)
    sample_weight: np.ndarray  # float64
    y: np.ndarray  # float64 targets (regression), a placeholder otherwise
    is_regression: bool
    n_stats: int


def make_problem(rng, n_features, categorical=(), duplicate=None, n_groups=6):
    """Rows in ``n_groups`` nodes, tied values, NaN, each column sorted as the builder sorts it.

    Features in ``categorical`` hold category codes ``0 .. N_CATEGORIES - 1`` as floats;
    ``duplicate = (a, b)`` makes column ``b`` a copy of column ``a`` (exact ties). Every node
    keeps at least two non-NaN values per feature.
    """
    sizes = rng.integers(8, 30, n_groups)
    n = int(sizes.sum())
    group = rng.permutation(np.repeat(np.arange(n_groups), sizes)).astype(np.int64)
    X = rng.integers(0, 8, (n, n_features)).astype(np.float32)  # many tied values
    X[:, ::2] += rng.normal(size=(n, len(range(0, n_features, 2)))).astype(np.float32)
    cat_slot = np.full(n_features, -1, dtype=np.int32)
    for slot, f in enumerate(categorical):
        X[:, f] = rng.integers(0, N_CATEGORIES, n)
        cat_slot[f] = slot
    X[rng.random((n, n_features)) < 0.15] = np.nan
    for g in range(n_groups):
        rows = np.flatnonzero(group == g)
        short = np.flatnonzero(np.isnan(X[rows]).sum(axis=0) > sizes[g] - 2)
        X[np.ix_(rows[:2], short)] = 0.0
    if duplicate is not None:
        X[:, duplicate[1]] = X[:, duplicate[0]]
    sorted_idx = np.empty((n_features, n), dtype=np.int32)
    for f in range(n_features):
        nan = np.isnan(X[:, f])
        # Stable: by node, then non-NaN before NaN, then value; ties keep row order.
        sorted_idx[f] = np.lexsort((np.where(nan, 0.0, X[:, f]), nan, group))
    sorted_val = np.ascontiguousarray(np.take_along_axis(X.T, sorted_idx, axis=1))
    end = np.cumsum(sizes).astype(np.int64)
    start = end - sizes
    # Node ids neither equal to the group nor in segment order.
    node = rng.permutation(2 * n_groups + 3)[:n_groups].astype(np.int64)
    return Problem(X, group, sorted_idx, sorted_val, start, end, node, cat_slot)


def make_targets(rng, n, task):
    """Targets of ``task``: "counts" (unit weights), "weighted", "regression", "poisson" or
    "absolute_error" (regression with the median's slot, ``sweep_absolute_error.MEDIAN_STAT``).
    """
    if task in ("counts", "weighted"):
        code = rng.integers(0, N_CLASSES, n).astype(np.int32)
        weight = np.ones(n) if task == "counts" else rng.uniform(0.25, 3.0, n)
        return Targets(code, weight, weight, np.zeros(1), False, N_CLASSES)
    y = rng.poisson(1.5, n).astype(np.float64) if task == "poisson" else rng.normal(size=n)
    weight = rng.uniform(0.25, 3.0, n)
    n_stats = MEDIAN_STAT + 1 if task == "absolute_error" else 3
    return Targets(np.zeros(n, dtype=np.int32), weight * y, weight, y, True, n_stats)


def new_search(rng, problem, n_batch):
    """A ``BatchSearch`` whose row ``s`` is group ``s``, at a random batch position."""
    n_searched = problem.node.shape[0]
    n_features = problem.X.shape[1]
    n_categorical = max(1, int((problem.cat_slot >= 0).sum()))
    return records.BatchSearch(
        searched=rng.permutation(n_batch)[:n_searched].astype(np.int64),
        nodes=problem.node.copy(),
        proxy=rng.normal(size=(n_searched, n_features)),
        pos=np.zeros((n_searched, n_features), dtype=np.int64),
        threshold=np.full((n_searched, n_features), -7.0),
        missing=np.full((n_searched, n_features), -1, dtype=np.int8),
        bits=np.zeros((n_searched, n_categorical, N_WORDS + 1), dtype=np.uint64),
    )


def n_missing(problem, s, f):
    """NaN values of feature ``f`` among group ``s``'s rows, read from ``X``."""
    return int(np.isnan(problem.X[problem.group == s, f]).sum())


def draw_cuts(rng, problem, search):
    """A threshold cut inside the non-NaN part of every (node, feature); NaN sides 1 / 0 / -1."""
    for s in range(search.nodes.shape[0]):
        start, end = problem.start[s], problem.end[s]
        for f in range(problem.X.shape[1]):
            tail = n_missing(problem, s, f)
            search.pos[s, f] = rng.integers(start + 1, end - tail)  # both sides non-empty
            search.missing[s, f] = rng.integers(0, 2) if tail > 0 else -1


def draw_split_rows(rng, search):
    """A random split row per (node, categorical feature): category bits, then NaN's side."""
    shape = search.bits.shape
    search.bits[:, :, :N_WORDS] = rng.integers(0, 2**64, shape[:2] + (N_WORDS,), dtype=np.uint64)
    search.bits[:, :, N_WORDS] = rng.integers(0, 2, shape[:2])


def new_nodes(problem, targets, impurity_of):
    """Node storage holding each group's statistics, weight and impurity (``impurity_of``,
    or 0 if None).
    """
    nodes = records.new_nodes(2 * problem.node.shape[0] + 3, targets.n_stats)
    for s, node in enumerate(problem.node):
        rows = problem.sorted_idx[0, problem.start[s] : problem.end[s]]
        stats, weight = reference_stats(rows, targets)
        nodes.start[node] = problem.start[s]
        nodes.end[node] = problem.end[s]
        nodes.stats[node] = stats
        nodes.weight[node] = weight
        nodes.impurity[node] = (
            0.0 if impurity_of is None else impurity_of(rows, stats, weight, targets)
        )
    return nodes


def draw_features(rng, n_searched, choices):
    """Each searched row's chosen feature among ``choices``, or -1 (about one in five)."""
    feature = rng.choice(np.asarray(choices, dtype=np.int64), n_searched)
    feature[rng.random(n_searched) < 0.2] = -1
    feature[0] = choices[0]  # at least one node to do
    return feature


# ---------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------


def reference_stats(rows, targets):
    """Statistics vector and weight of ``rows``, summed in their order (``segment_stats``).

    Classification: the weight of each class. Regression: ``sum(w*y)``, ``sum((w*y)*y)``
    and the range of ``y``.
    """
    stats = np.zeros(targets.n_stats)
    weight = 0.0
    for i in rows:
        stats[targets.code[i]] += targets.contrib[i]
        weight += targets.sample_weight[i]
    if targets.is_regression:
        square_sum = 0.0
        for i in rows:
            square_sum += targets.contrib[i] * targets.y[i]
        stats[1] = square_sum
        y = targets.y[rows]
        stats[2] = y.max() - y.min() if y.size else -np.inf  # the kernels' empty range
    return stats, weight


def threshold_children(problem, s, f, pos, missing):
    """Rows of the two children of a cut at ``pos``: the NaN tail joins the left if missing == 1.

    Returns ``left, right, n_missing_left`` (rows in segment order, left's NaN rows last).
    """
    idx = problem.sorted_idx[f]
    start, end = problem.start[s], problem.end[s]
    tail = n_missing(problem, s, f)
    values = idx[start : end - tail]
    nans = idx[end - tail : end]
    cut = pos - start
    assert not np.isnan(problem.X[values, f]).any() and np.isnan(problem.X[nans, f]).all()
    if missing == 1:
        return np.concatenate([values[:cut], nans]), values[cut:], tail
    return values[:cut], np.concatenate([values[cut:], nans]), 0


def category_goes_left(x, split_row):
    """Whether category value ``x`` goes left: bit ``x`` of the row, NaN by the last word."""
    if math.isnan(x):
        return bool(split_row[N_WORDS])
    c = int(x)
    return bool((int(split_row[c // 64]) >> (c % 64)) & 1)


def subset_children(problem, s, f, split_row):
    """Rows of the two children of a subset split, each in segment order."""
    rows = problem.sorted_idx[f, problem.start[s] : problem.end[s]]
    left = [i for i in rows if category_goes_left(problem.X[i, f], split_row)]
    right = [i for i in rows if not category_goes_left(problem.X[i, f], split_row)]
    return np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)


def gini(rows, stats, weight, targets):
    p = stats / weight
    return 1.0 - float(np.sum(p * p))


def entropy(rows, stats, weight, targets):
    p = stats[stats > 0] / weight
    return float(-np.sum(p * np.log2(p)))


def variance(rows, stats, weight, targets):
    y, w = targets.y[rows], targets.sample_weight[rows]
    if np.all(y == y[0]):
        return 0.0
    mean = np.sum(w * y) / np.sum(w)
    return float(np.sum(w * (y - mean) ** 2) / np.sum(w))


def half_poisson_deviance(rows, stats, weight, targets):
    y, w = targets.y[rows], targets.sample_weight[rows]
    if np.sum(w * y) <= POISSON_EPSILON:
        return np.inf
    if np.all(y == y[0]):
        return 0.0
    mean = np.sum(w * y) / np.sum(w)
    positive = y > 0
    return float(np.sum(w[positive] * y[positive] * np.log(y[positive] / mean)) / np.sum(w))


def weighted_median(rows, targets):
    """scikit-learn's weighted median: the first value (in stable target order) whose
    cumulative weight passes half the total; the mean of it and the one before when the
    weight before it is exactly half.
    """
    y, w = targets.y[rows], targets.sample_weight[rows]
    order = np.argsort(y, kind="stable")
    half, before = 0.5 * float(np.sum(w)), 0.0
    for r, j in enumerate(order):
        if before + w[j] > half:
            return (y[order[r - 1]] + y[j]) / 2 if r > 0 and before == half else y[j]
        before += w[j]
    return y[order[-1]]


def absolute_deviation(rows, stats, weight, targets):
    y, w = targets.y[rows], targets.sample_weight[rows]
    if np.all(y == y[0]):
        return 0.0
    return float(np.sum(w * np.abs(y - weighted_median(rows, targets))) / np.sum(w))


IMPURITY = {GINI: gini, ENTROPY: entropy, SQUARED_ERROR: variance, POISSON: half_poisson_deviance,
            ABSOLUTE_ERROR: absolute_deviation}  # fmt: skip


def weighted_impurity_decrease(parent, left, right, weight_left, weight_right, weight_root):
    """scikit-learn's ``Criterion.impurity_improvement``, as ``min_impurity_decrease`` reads it."""
    weight = weight_left + weight_right
    return (weight / weight_root) * (
        parent - weight_right / weight * right - weight_left / weight * left
    )


def side_flags(flags, n_samples):
    """Each sample's bit of ``sweep_exact.new_side_flags`` (bit ``i & 7`` of byte ``i >> 3``)."""
    return np.unpackbits(flags, bitorder="little")[:n_samples].astype(bool)


def random_side_flags(rng, n_samples):
    flags = new_side_flags(n_samples)
    flags[:] = rng.integers(0, 256, flags.shape[0], dtype=np.uint8)
    return flags


# ---------------------------------------------------------------------------------------
# 1. best_features
# ---------------------------------------------------------------------------------------


def reference_best_features(proxy):
    """Scan each row keeping a feature only if its proxy is strictly above the best so far."""
    out = np.full(proxy.shape[0], -1, dtype=np.int64)
    for s in range(proxy.shape[0]):
        best = -math.inf
        for f in range(proxy.shape[1]):
            if proxy[s, f] > best:  # False for NaN
                best = proxy[s, f]
                out[s] = f
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_best_features_matches_strict_scan(seed):
    rng = np.random.default_rng(seed)
    # Few distinct values: exact ties within most rows.
    proxy = rng.choice([-3.0, -1.5, -1.5, 0.0, 2.25, np.inf], size=(40, 7))
    proxy[rng.random(proxy.shape) < 0.15] = np.nan
    proxy[rng.random(proxy.shape) < 0.2] = -np.inf
    proxy[3] = -np.inf  # no valid cut
    proxy[5] = np.nan
    proxy[7, ::2] = np.nan
    proxy[7, 1::2] = -np.inf
    expected = reference_best_features(proxy)
    assert (expected == -1).sum() >= 3 and (expected >= 0).sum() > 20
    got = choose.best_features(proxy)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------
# 2. count_children and sum_children: threshold splits
# ---------------------------------------------------------------------------------------


def threshold_batch(seed, task, criterion):
    """A batch of threshold splits: the problem, its records and the chosen features."""
    rng = np.random.default_rng(seed)
    problem = make_problem(rng, n_features=4)
    targets = make_targets(rng, problem.X.shape[0], task)
    nodes = new_nodes(problem, targets, IMPURITY.get(criterion))
    n_batch = problem.node.shape[0] + 2  # two batch positions not searched
    search = new_search(rng, problem, n_batch)
    draw_cuts(rng, problem, search)
    feature = draw_features(rng, search.nodes.shape[0], range(problem.X.shape[1]))
    splits = records.new_splits(n_batch, targets.n_stats)
    chosen = choose.new_chosen(feature, problem.X.shape[0], criterion)
    return problem, targets, nodes, search, splits, chosen


def run_threshold_children(problem, targets, nodes, search, splits, chosen, criterion):
    """The builder's choice of kernel: counts for unit-weight classification, else sums."""
    todo = np.flatnonzero(chosen.feature >= 0)
    if targets.is_regression or not np.all(targets.sample_weight == 1.0):
        choose.sum_children(
            todo, search, nodes, problem.sorted_idx, problem.sorted_val, targets.code,
            targets.contrib, targets.sample_weight, targets.y, targets.is_regression,
            criterion, splits, chosen, None,
        )  # fmt: skip
    else:
        sorted_code = np.ascontiguousarray(targets.code[problem.sorted_idx], dtype=np.uint8)
        choose.count_children(todo, search, nodes, problem.sorted_val, sorted_code, splits, chosen)
    return todo


def check_threshold_children(problem, targets, search, splits, chosen):
    """Child statistics, weights, positions and copied rows against the references."""
    reads_rows = chosen.child_rows.shape[0] > 0
    done = np.zeros(splits.child_stats.shape[0], dtype=bool)
    for s, f in enumerate(chosen.feature):
        if f < 0:
            assert chosen.weight_left[s] == chosen.weight_right[s] == chosen.pos[s] == 0
            assert chosen.own_rows[s] == 0
            continue
        k = search.searched[s]
        done[k] = True
        pos, missing = search.pos[s, f], search.missing[s, f]
        left, right, n_left_missing = threshold_children(problem, s, f, pos, missing)
        for side, rows in enumerate((left, right)):
            stats, weight = reference_stats(rows, targets)
            np.testing.assert_array_equal(splits.child_stats[k, side], stats)
            assert (chosen.weight_left, chosen.weight_right)[side][s] == weight
        assert chosen.pos[s] == pos + n_left_missing
        assert chosen.own_rows[s] == (reads_rows and n_left_missing > 0)
        if chosen.own_rows[s]:
            start, end = problem.start[s], problem.end[s]
            np.testing.assert_array_equal(
                chosen.child_rows[start:end], np.concatenate([left, right])
            )
    assert np.all(splits.child_stats[~done] == 0.0)  # no other batch position written
    assert reads_rows or chosen.child_rows.shape == (0,)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("criterion", [GINI, ENTROPY], ids=criterion_id)
def test_count_children_matches_reference(seed, criterion):
    batch = threshold_batch(seed, "counts", criterion)
    problem, targets, nodes, search, splits, chosen = batch
    todo = run_threshold_children(*batch, criterion)
    # The kernel counts the smaller child and subtracts: both cases occur, and NaN rows go left.
    n_left = chosen.pos[todo] - problem.start[todo]
    n_right = problem.end[todo] - chosen.pos[todo]
    assert (n_left < n_right).any() and (n_left > n_right).any()
    assert (chosen.pos[todo] > search.pos[todo, chosen.feature[todo]]).any()
    check_threshold_children(problem, targets, search, splits, chosen)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "task, criterion",
    [
        ("weighted", GINI),
        ("regression", SQUARED_ERROR),
        ("poisson", POISSON),  # reads the children's rows: child_rows allocated
        ("absolute_error", ABSOLUTE_ERROR),  # likewise
    ],
    ids=criterion_id,
)
def test_sum_children_matches_reference(seed, task, criterion):
    batch = threshold_batch(seed, task, criterion)
    problem, targets, nodes, search, splits, chosen = batch
    run_threshold_children(*batch, criterion)
    if criterion in (POISSON, ABSOLUTE_ERROR):
        assert chosen.own_rows.any()  # some node sends its NaN rows left
    check_threshold_children(problem, targets, search, splits, chosen)


# ---------------------------------------------------------------------------------------
# 3. subset_children: categorical subset splits
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "task, criterion",
    [("weighted", GINI), ("regression", SQUARED_ERROR), ("poisson", POISSON)],
    ids=criterion_id,
)
def test_subset_children_matches_reference(seed, task, criterion):
    rng = np.random.default_rng(seed)
    problem = make_problem(rng, n_features=4, categorical=(1, 3))
    targets = make_targets(rng, problem.X.shape[0], task)
    impurity = IMPURITY[criterion]
    nodes = new_nodes(problem, targets, impurity)
    n_batch = problem.node.shape[0] + 2
    search = new_search(rng, problem, n_batch)
    draw_split_rows(rng, search)
    feature = draw_features(rng, search.nodes.shape[0], [1, 3])
    children = {}
    for s, f in enumerate(feature):
        if f >= 0:
            split_row = search.bits[s, problem.cat_slot[f]]
            children[s] = subset_children(problem, s, f, split_row)
            search.pos[s, f] = problem.start[s] + children[s][0].shape[0]
    threshold_before = search.threshold.copy()
    node_bits = np.zeros((nodes.start.shape[0], N_WORDS + 1), dtype=np.uint64)
    splits = records.new_splits(n_batch, targets.n_stats)
    chosen = choose.new_chosen(feature, problem.X.shape[0], criterion)
    todo = np.flatnonzero(feature >= 0)
    choose.subset_children(
        todo, search, nodes, problem.sorted_idx, problem.sorted_val, targets.code,
        targets.contrib, targets.sample_weight, targets.y, targets.is_regression,
        problem.cat_slot, node_bits, splits, chosen,
    )  # fmt: skip
    reads_rows = criterion == POISSON
    expected_bits = np.zeros_like(node_bits)
    expected_threshold = threshold_before
    for s, (left, right) in children.items():
        f, k, node = feature[s], search.searched[s], problem.node[s]
        for side, rows in enumerate((left, right)):
            stats, weight = reference_stats(rows, targets)
            np.testing.assert_array_equal(splits.child_stats[k, side], stats)
            assert (chosen.weight_left, chosen.weight_right)[side][s] == weight
        assert chosen.pos[s] == search.pos[s, f]
        expected_bits[node] = search.bits[s, problem.cat_slot[f]]
        expected_threshold[s, f] = node
        assert chosen.own_rows[s] == reads_rows
        if reads_rows:
            start, end = problem.start[s], problem.end[s]
            np.testing.assert_array_equal(
                chosen.child_rows[start:end], np.concatenate([left, right])
            )
    np.testing.assert_array_equal(node_bits, expected_bits)
    np.testing.assert_array_equal(search.threshold, expected_threshold)
    assert not chosen.own_rows[feature < 0].any()


# ---------------------------------------------------------------------------------------
# 4. two_valued_children: 0/1 columns searched from the row feature's bits
# ---------------------------------------------------------------------------------------

# Two-valued features and their slots (bit ``j & 63`` of word ``j >> 6`` of a row's bits);
# feature 0 is the row feature, swept and partitioned.
TWO_VALUED_SLOTS = {1: 3, 2: 64, 3: 127}


def two_valued_problem(seed):
    """Unit-weight classification with 0/1 columns, their bits in the row feature's order.

    ``sweep_two_valued.two_valued_layout`` numbers the slots 0, 1, ...; the kernels only
    read bit ``slot[f]``, so here they are spread over both words, and the bits of no
    feature are random noise.
    """
    rng = np.random.default_rng(seed)
    problem = make_problem(rng, n_features=4)
    n = problem.X.shape[0]
    X = problem.X
    for f in TWO_VALUED_SLOTS:
        X[:, f] = rng.random(n) < rng.uniform(0.1, 0.9)  # no NaN: not two-valued otherwise
    slot = np.full(X.shape[1], -1, dtype=np.int64)
    threshold = np.zeros(X.shape[1])
    row_idx = problem.sorted_idx[0]
    high_bits = rng.integers(0, 2**64, (n, 2), dtype=np.uint64)  # noise in unused slots
    for f, j in TWO_VALUED_SLOTS.items():
        slot[f] = j
        threshold[f] = 0.5
        bit = np.uint64(1) << np.uint64(j % 64)
        word = high_bits[:, j // 64]
        high = X[row_idx, f] == 1.0  # the bits of position p belong to sample row_idx[p]
        high_bits[:, j // 64] = np.where(high, word | bit, word & ~bit)
    targets = make_targets(rng, n, "counts")
    return rng, problem, targets, (slot, threshold, high_bits)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_valued_children_matches_reference(seed):
    rng, problem, targets, two_valued = two_valued_problem(seed)
    nodes = new_nodes(problem, targets, gini)
    n_batch = problem.node.shape[0] + 2
    search = new_search(rng, problem, n_batch)
    search.pos[:] = rng.integers(0, 1000, search.pos.shape)
    feature = draw_features(rng, search.nodes.shape[0], list(TWO_VALUED_SLOTS))
    splits = records.new_splits(n_batch, targets.n_stats)
    chosen = choose.new_chosen(feature, problem.X.shape[0], GINI)
    row_codes = np.ascontiguousarray(targets.code[problem.sorted_idx[0]], dtype=np.uint8)
    todo = np.flatnonzero(feature >= 0)
    choose.two_valued_children(todo, search, nodes, row_codes, two_valued, splits, chosen)
    for s, f in enumerate(feature):
        if f < 0:
            continue
        k = search.searched[s]
        rows = problem.sorted_idx[0, problem.start[s] : problem.end[s]]
        right = rows[problem.X[rows, f] == 1.0]
        left = rows[problem.X[rows, f] == 0.0]
        for side, child in enumerate((left, right)):
            counts = np.bincount(targets.code[child], minlength=N_CLASSES).astype(np.float64)
            np.testing.assert_array_equal(splits.child_stats[k, side], counts)
        assert chosen.weight_left[s] == left.shape[0]
        assert chosen.weight_right[s] == right.shape[0]
        assert chosen.pos[s] == search.pos[s, f]


# ---------------------------------------------------------------------------------------
# 5. accept_splits: impurities, improvement, min_impurity_decrease
# ---------------------------------------------------------------------------------------


def reference_splits(problem, targets, nodes, search, feature, criterion, weight_root):
    """Per searched row: the children's impurities, the improvement and the split's pos."""
    impurity = IMPURITY[criterion]
    out = {}
    for s, f in enumerate(feature):
        if f < 0:
            continue
        left, right, n_left_missing = threshold_children(
            problem, s, f, search.pos[s, f], search.missing[s, f]
        )
        (stats_l, w_l), (stats_r, w_r) = (
            reference_stats(left, targets),
            reference_stats(right, targets),
        )
        imp_l = impurity(left, stats_l, w_l, targets)
        imp_r = impurity(right, stats_r, w_r, targets)
        parent = nodes.impurity[problem.node[s]]
        gain = weighted_impurity_decrease(parent, imp_l, imp_r, w_l, w_r, weight_root)
        out[s] = (imp_l, imp_r, gain, w_l, w_r, search.pos[s, f] + n_left_missing)
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "task, criterion",
    [
        ("counts", GINI),
        ("counts", ENTROPY),
        ("weighted", GINI),
        ("weighted", ENTROPY),
        ("regression", SQUARED_ERROR),
        ("poisson", POISSON),  # NaN-left children read from chosen.child_rows
        ("absolute_error", ABSOLUTE_ERROR),  # impurities from optional_children_impurity
    ],
    ids=criterion_id,
)
def test_accept_splits_matches_reference(seed, task, criterion):
    batch = threshold_batch(seed, task, criterion)
    problem, targets, nodes, search, splits, chosen = batch
    weight_root = 1.5 * float(targets.sample_weight.sum())
    expected = reference_splits(
        problem, targets, nodes, search, chosen.feature, criterion, weight_root
    )
    gains = np.sort([gain for (_, _, gain, _, _, _) in expected.values()])
    mid = gains.shape[0] // 2
    assert np.isfinite(gains[mid - 1]) and gains[mid] - gains[mid - 1] > 1e-9
    # No rule; one between two improvements; one above them all.
    for min_impurity_decrease in (0.0, (gains[mid - 1] + gains[mid]) / 2, gains[-1] + 1.0):
        splits = records.new_splits(splits.feature.shape[0], targets.n_stats)
        chosen = choose.new_chosen(chosen.feature, problem.X.shape[0], criterion)
        todo = run_threshold_children(problem, targets, nodes, search, splits, chosen, criterion)
        given = choose.NO_IMPURITIES
        if criterion == ABSOLUTE_ERROR:  # the builder's pass for it, then the given impurities
            given = np.full((chosen.feature.shape[0], 2), np.nan)
            choose.optional_children_impurity(
                todo, search, nodes, problem.sorted_idx, targets.y, targets.sample_weight,
                criterion, splits, chosen, given, True, None,
            )  # fmt: skip
        choose.accept_splits(
            todo, search, nodes, problem.sorted_idx, targets.y, targets.sample_weight,
            criterion, weight_root, float(min_impurity_decrease), splits, chosen, given, None,
        )  # fmt: skip
        # The absolute error is summed by scikit-learn's pinball identity, not term by term.
        rtol = 1e-9 if criterion == ABSOLUTE_ERROR else 1e-12
        accepted = np.zeros(splits.feature.shape[0], dtype=bool)
        for s, (imp_l, imp_r, gain, w_l, w_r, pos) in expected.items():
            k, f = search.searched[s], chosen.feature[s]
            if gain + EPSILON < min_impurity_decrease:
                continue
            accepted[k] = True
            assert splits.feature[k] == f
            np.testing.assert_allclose(splits.child_impurity[k], [imp_l, imp_r], rtol=rtol)
            np.testing.assert_allclose(splits.improvement[k], gain, rtol=rtol, atol=1e-15)
            if criterion == ABSOLUTE_ERROR:  # each child's median, kept in its statistics
                left, right, _ = threshold_children(problem, s, f, search.pos[s, f],
                                                    search.missing[s, f])  # fmt: skip
                for side, rows in enumerate((left, right)):
                    median = splits.child_stats[k, side, MEDIAN_STAT]
                    assert median == weighted_median(rows, targets)
            np.testing.assert_array_equal(splits.child_weight[k], [w_l, w_r])
            assert splits.pos[k] == pos
            assert splits.threshold[k] == search.threshold[s, f]
            assert splits.missing[k] == search.missing[s, f]
        np.testing.assert_array_equal(splits.feature[~accepted], -1)
        if min_impurity_decrease == 0.0:
            assert accepted.sum() >= mid + 1
        else:
            assert accepted.sum() == (gains > min_impurity_decrease).sum()


# ---------------------------------------------------------------------------------------
# 6. C4.5's gain ratio, and the side flags of subset and two-valued splits
# ---------------------------------------------------------------------------------------


def reference_gain_ratio_feature(proxies, left_weights, impurity, weight):
    """C4.5's rule (``gain_ratio``'s docstring): the largest gain ratio among the features of
    at least average gain, ties to the lowest index; -1 if no feature has a valid split.
    """
    gains = {f: impurity + p / weight for f, p in enumerate(proxies) if p > -math.inf}
    if not gains:
        return -1
    average = sum(gains.values()) / len(gains)
    best_f, best_ratio = -1, -math.inf
    for f, gain in gains.items():
        if gain < average - GAIN_TOLERANCE:
            continue
        split_info = 0.0
        for w in (left_weights[f], weight - left_weights[f]):
            if w > 0.0:
                split_info -= w / weight * (math.log(w / weight) / math.log(2.0))
        ratio = gain / split_info
        if ratio > best_ratio:
            best_f, best_ratio = f, ratio
    return best_f


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task", ["counts", "weighted"])
def test_gain_ratio_features_presorted_matches_c45_rule(seed, task):
    rng = np.random.default_rng(seed)
    # Feature 4 is a copy of feature 1: equal gain ratios, the lower index wins.
    problem = make_problem(rng, n_features=5, categorical=(2,), duplicate=(1, 4), n_groups=10)
    targets = make_targets(rng, problem.X.shape[0], task)
    nodes = new_nodes(problem, targets, entropy)
    search = new_search(rng, problem, problem.node.shape[0])
    draw_cuts(rng, problem, search)
    search.pos[:, 4] = search.pos[:, 1]
    search.missing[:, 4] = search.missing[:, 1]
    draw_split_rows(rng, search)
    left_weights = np.zeros(search.proxy.shape)
    for s in range(search.nodes.shape[0]):
        weight = nodes.weight[problem.node[s]]
        for f in range(problem.X.shape[1]):
            if problem.cat_slot[f] >= 0:
                left, right = subset_children(problem, s, f, search.bits[s, problem.cat_slot[f]])
            else:
                left, right, _ = threshold_children(
                    problem, s, f, search.pos[s, f], search.missing[s, f]
                )
            # The entropy sweep's proxy of the cut: -W_r H_r - W_l H_l.
            search.proxy[s, f] = 0.0
            for rows in (left, right):
                stats, w = reference_stats(rows, targets)
                search.proxy[s, f] -= w * entropy(rows, stats, w, targets)
            left_weights[s, f] = reference_stats(left, targets)[1] if left.size else 0.0
        assert left_weights[s].max() < weight
    search.proxy[rng.random(search.proxy.shape) < 0.15] = -np.inf  # no valid cut
    search.proxy[1] = -np.inf
    expected = [
        reference_gain_ratio_feature(
            search.proxy[s], left_weights[s], nodes.impurity[node], nodes.weight[node]
        )
        for s, node in enumerate(search.nodes)
    ]
    feature = np.empty(search.nodes.shape[0], dtype=np.int64)
    gain_ratio_features_presorted(
        search, nodes, problem.sorted_idx, problem.sorted_val, targets.sample_weight,
        task == "counts", problem.cat_slot, feature,
    )  # fmt: skip
    np.testing.assert_array_equal(feature, expected)
    assert expected[1] == -1


@pytest.mark.parametrize("seed", SEEDS)
def test_mark_subset_sides_matches_categories(seed):
    rng = np.random.default_rng(seed)
    problem = make_problem(rng, n_features=3, categorical=(0, 2))
    n = problem.X.shape[0]
    nodes = new_nodes(problem, make_targets(rng, n, "counts"), gini)
    n_groups = problem.node.shape[0]
    # Batch position k holds group order[k]; the groups split on a subset: ks.
    order = rng.permutation(n_groups)
    batch = problem.node[order]
    splits = records.new_splits(n_groups, N_CLASSES)
    splits.feature[:] = rng.choice([0, 2], n_groups)
    ks = np.flatnonzero(rng.random(n_groups) < 0.7).astype(np.int64)
    node_bits = np.zeros((nodes.start.shape[0], N_WORDS + 1), dtype=np.uint64)
    node_bits[:, :N_WORDS] = rng.integers(0, 2**64, (node_bits.shape[0], N_WORDS), dtype=np.uint64)
    node_bits[:, N_WORDS] = rng.integers(0, 2, node_bits.shape[0])
    goes_left = random_side_flags(rng, n)
    expected = side_flags(goes_left, n)
    for k in ks:
        s, f = order[k], splits.feature[k]
        for i in np.flatnonzero(problem.group == s):
            expected[i] = category_goes_left(problem.X[i, f], node_bits[batch[k]])
    mark_subset_sides(
        ks, batch, splits, nodes, problem.sorted_idx, problem.sorted_val, node_bits, goes_left
    )
    np.testing.assert_array_equal(side_flags(goes_left, n), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_mark_two_valued_splits_matches_column(seed):
    rng, problem, targets, two_valued = two_valued_problem(seed)
    n = problem.X.shape[0]
    nodes = new_nodes(problem, targets, gini)
    n_groups = problem.node.shape[0]
    order = rng.permutation(n_groups)
    batch = problem.node[order]
    splits = records.new_splits(n_groups, N_CLASSES)
    splits.feature[:] = rng.choice(list(TWO_VALUED_SLOTS), n_groups)
    ks = np.flatnonzero(rng.random(n_groups) < 0.7).astype(np.int64)
    goes_left = random_side_flags(rng, n)
    expected = side_flags(goes_left, n)
    for k in ks:
        rows = np.flatnonzero(problem.group == order[k])
        expected[rows] = problem.X[rows, splits.feature[k]] == 0.0  # the low value goes left
    mark_two_valued_splits(ks, batch, splits, nodes, problem.sorted_idx[0], two_valued, goes_left)
    np.testing.assert_array_equal(side_flags(goes_left, n), expected)
