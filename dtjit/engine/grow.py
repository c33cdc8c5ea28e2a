"""Level-wise (breadth-first) and best-first tree builders, over presorted or binned data.

One execution model: the builders (:func:`build`, :func:`build_hist`) are Python loops over
levels (best-first steps) that call a few kernels per level. Each level has two steps,
applied to a *batch* of nodes:

1. :func:`evaluate_batch`: stopping rules, candidate features, the best split of every
   (node, feature) pair, a deterministic reduction (strictly better wins, so ties go to the
   lowest feature index, then the lowest threshold), the children's impurities and the
   ``min_impurity_decrease`` test.
2. :func:`apply_splits`: children appended in batch order, their statistics, and the stable
   partition of every feature's segments.

The level-wise builder's batch is a whole level, so node ids come out in breadth-first order
by construction. The best-first builder (``max_leaf_nodes``) expands nodes in order of
improvement: each step is a batch of several queued nodes, over which :class:`Frontier`
replays strict best-first order (and rolls back what that order never reaches); the ids
are strict best-first creation order, renumbered to breadth-first order by the estimator.

numba compiles every branch a kernel can reach and every kernel it calls (``kernel_calls``).
So the variants are chosen here, in Python, before any kernel runs: the split search
(sweep, two-valued counts, subsets, absolute error, multi-output), serial or threaded
kernels or threads (threads only for batches large enough to repay them), and, per kind of
chosen split (threshold, subset, two-valued column), the kernels that sum its children
(``choose``) and mark its rows' sides, each called with the nodes of its kind. The few
optional paths left inside a kernel take True-or-None switches (:func:`search_switches`)
that numba prunes. A fit compiles only what it runs. The records passed to the kernels are
named tuples (``records``).
"""

from __future__ import annotations

import functools
import heapq
from typing import NamedTuple

import numpy as np

from .borrow import borrowed, keep_alive
from .choose import (
    accept_split,
    best_features,
    children_impurity,
    choose_splits,
    copy_bits,
    segment_impurity,
)
from .criterion import multi_output_impurity, n_outputs_of
from .gain_ratio import gain_ratio_features_binned, gain_ratio_features_presorted
from .jit import (
    ABSOLUTE_ERROR,
    ENTROPY,
    EPSILON,
    GAIN_RATIO,
    GINI,
    MULTI_OUTPUT,
    PARALLEL_MIN_WORK,
    TREE_LEAF,
    TREE_UNDEFINED,
    inline_kernel,
    kernel,
)
from .records import (
    BatchSearch,
    NodeArrays,
    SplitBatch,
    StoppingRules,
    grown,
    new_nodes,
    new_splits,
)
from .sweep_absolute_error import (
    MEDIAN_STAT,
    absolute_error_of_segment,
    absolute_error_splits_worker,
    rank_targets,
)
from .sweep_categorical import (
    categorical_splits_binned,
    categorical_splits_presorted,
    mark_goes_left,
    order_bins_left_first,
    restore_bins,
)
from .sweep_exact import (
    ACCELERATE_MIN_ROWS,
    NO_SPLIT,
    UPKEEP_ALWAYS,
    UPKEEP_NEVER,
    UPKEEP_UNLESS_CONSTANT,
    WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES,
    best_splits_worker,
    count_missing,
    draw_candidate_features,
    new_side_flags,
    partition_worker,
    presorted_constant_features,
    raise_side_flags,
    rand_below,
    rand_uniform,
    random_splits_worker,
    renumber_samples,
    screening_table,
    segment_stats,
    set_side_flag,
    sweep_switches,
)
from .sweep_hist import (
    build_histograms_worker,
    constant_features,
    every_bin_listed,
    features_with_near_ties,
    histogram_width,
    partition_rows,
    subtract_histograms,
    sweep_worker,
)
from .sweep_multioutput import (
    multi_output_segment_stats,
    multi_output_splits_worker,
)
from .sweep_two_valued import (
    bits_in_row_order,
    mark_two_valued_sides,
    two_valued_splits_worker,
)
from .threads import run_concurrently, run_workers

INITIAL_CAPACITY = 64
# The builder renumbers the samples (``sweep_exact.renumber_samples``) when its largest open
# node has shrunk this many times since the last renumbering (or the start).
RENUMBER_SHRINK = 4


def search_switches(criterion: int, categorical: bool) -> tuple[bool | None, ...]:
    """Return the builders' optional-search switches for a fit.

    The tuple is ``categorical_search, absolute_error_search, multi_output_search``; each
    is ``True`` when the fit may use that split search and ``None`` when it cannot.
    numba removes a branch on ``switch is None`` from the specialisation it compiles, so a
    fit without categorical features, with a single output and another criterion than
    ``absolute_error`` compiles none of those searches (they were most of a cold first
    fit's compile time). Each combination is compiled once, on first use.

    Parameters
    ----------
    criterion : int
        Criterion code, multi-output codes included (``jit.multi_output_criterion``).
    categorical : bool
        Whether the data has categorical features.

    Returns
    -------
    tuple of (True or None)
        The three switches, in the builders' argument order.
    """
    return (
        True if categorical else None,
        True if criterion == ABSOLUTE_ERROR else None,
        True if criterion >= MULTI_OUTPUT else None,
    )


# Added to a node's missing_left when its NaN direction was learned from NaN rows in the
# split feature (not chosen by the larger-child rule): the builders return both in one array.
LEARNED_FLAG = 2


def leaf_by_rules(n, weight, impurity, depth, rules):
    """Which nodes are leaves before any split search (scikit-learn's rules and order).

    Vectorised twin of :func:`is_leaf_by_rules` over arrays of node sizes, weights,
    impurities and depths; the same comparisons in float64 and int64.
    """
    return (
        (depth >= rules.max_depth)
        | (n < rules.min_samples_split)
        | (n < 2 * rules.min_samples_leaf)
        | (weight < 2.0 * rules.min_weight_leaf)
        | (impurity <= EPSILON)
    )


@inline_kernel
def is_leaf_by_rules(
    n, weight, impurity, depth, max_depth, min_samples_split, min_samples_leaf, min_weight_leaf
):
    """Whether a node is a leaf before any split search (scikit-learn's rules and order)."""
    return (
        depth >= max_depth
        or n < min_samples_split
        or n < 2 * min_samples_leaf
        or weight < 2.0 * min_weight_leaf
        or impurity <= EPSILON
    )


def nodes_to_search(batch, nodes, rules):
    """Batch positions and ids of the nodes no leaf rule stops from being searched."""
    n = nodes.end[batch] - nodes.start[batch]
    leaf = leaf_by_rules(n, nodes.weight[batch], nodes.impurity[batch], nodes.depth[batch], rules)
    searched = np.flatnonzero(~leaf).astype(np.int64)
    return searched, batch[searched]


def hold_categorical_candidates(candidate, cat_slot, node_bits):
    """Take the categorical columns out of ``candidate`` for the numeric sweeps.

    Returns
    -------
    cat_candidate : ndarray of uint8
        A copy of ``candidate`` before the categorical columns were cleared in it.
    out_bits : ndarray of uint64, shape (n_batch, n_categorical, n_words + 1)
        Room for one split row per (node, categorical feature); no columns without
        categorical features.
    """
    categorical = cat_slot >= 0
    n_categorical = int(categorical.sum())
    if n_categorical == 0:  # nothing to take out: no copy
        return candidate, np.zeros((candidate.shape[0], 0, node_bits.shape[1]), dtype=np.uint64)
    cat_candidate = candidate.copy()
    candidate[:, categorical] = 0
    out_bits = np.zeros((candidate.shape[0], n_categorical, node_bits.shape[1]), dtype=np.uint64)
    return cat_candidate, out_bits


@kernel
def draw_candidates(
    search_nodes, node_start, node_end, sorted_val, max_features, rng_state, random_split,
    two_slot, candidate, out_threshold, out_missing,
):  # fmt: skip
    """Candidate features of every searched node, and the random splitter's thresholds.

    Fills ``candidate`` (uint8, one row per node of ``search_nodes``), and, with
    ``random_split``, ``out_threshold`` / ``out_missing``: the threshold and NaN side drawn
    per candidate (``out_missing`` stays -1 elsewhere). Features with a two-valued slot
    (``two_slot[f] >= 0``) are never candidates of the sweep. Random numbers are drawn
    serially, per node the features first, then one threshold per candidate in feature
    order.
    """
    n_features = sorted_val.shape[0]
    f_order = np.empty(n_features, dtype=np.int64)
    constant = np.zeros(n_features, dtype=np.uint8)
    for s in range(search_nodes.shape[0]):
        node = search_nodes[s]
        start = node_start[node]
        end = node_end[node]
        if max_features < n_features or random_split:
            presorted_constant_features(start, end, sorted_val, constant)
        draw_candidate_features(f_order, max_features, constant, rng_state, candidate[s])
        for f in range(n_features):
            if two_slot[f] >= 0:
                candidate[s, f] = 0  # searched by sweep_two_valued, not swept
        if random_split:
            # One threshold per searched non-constant feature, drawn in feature order,
            # serially here so the parallel sweep stays reproducible; then, if the node
            # has NaN in the feature, their side by a coin (scikit-learn's order).
            for f in range(n_features):
                if candidate[s, f] and not constant[f]:
                    n_missing = count_missing(sorted_val[f], start, end)
                    low = np.float64(sorted_val[f, start])
                    high = np.float64(sorted_val[f, end - n_missing - 1])
                    t = rand_uniform(rng_state, low, high)
                    out_threshold[s, f] = low if t == high else t
                    if n_missing > 0:
                        out_missing[s, f] = rand_below(rng_state, np.int64(2))
                else:
                    candidate[s, f] = 0


class PresortedFit(NamedTuple):
    """What every level of an exact fit reads: the presorted data, per-sample arrays, settings.

    ``code``, ``contrib``, ``sample_weight`` and ``y`` may be replaced by renumbered copies
    during the fit (``sweep_exact.renumber_samples``); the record is then rebuilt.
    """

    sorted_idx: np.ndarray
    sorted_val: np.ndarray
    sorted_code: np.ndarray
    code: np.ndarray
    contrib: np.ndarray
    sample_weight: np.ndarray
    y: np.ndarray
    unit_weight: bool
    unit_sample_weight: bool
    xlogx: np.ndarray
    is_regression: bool
    n_sweep: int
    criterion: int
    rules: StoppingRules
    max_features: int
    weight_root: float
    rng_state: np.ndarray
    parallel: bool
    n_chunks: int
    random_split: bool
    mdl_stop: object  # switch (True or None): the MDL test is compiled only for fits using it
    cat_slot: np.ndarray
    two_valued: tuple
    row_feature: int
    upkeep: np.ndarray
    switches: tuple
    sweeps: tuple  # ``sweep_exact.sweep_switches``


# No n ln n table: the entropy sweeps score every cut (see ``sweep_exact.screening_table``).
NO_TABLE = np.zeros(0, dtype=np.int64)

# Below ACCELERATE_MIN_ROWS rows, a classification fit takes the accelerated tier when the
# plain tier would cost it about 0.25 s of CPU or more. The plain tier's general sweeps score
# a cut in O(classes), the accelerated ones in O(1). Its cost, in units of rows x features
# x (classes + CLASS_WORK_OFFSET) (a part per row, then one per class and cut), entropy's
# *_ENTROPY_WORK times as many (a logarithm per class), was about 1.5e-8 s a unit here
# (make_classification, 20 features, full depth, 3 to 300 classes), so ACCELERATE_MIN_WORK
# units are 0.25 s. The plain tier took 20k x 300 classes with Gini and 20k x 10 classes with
# entropy 8-10x the accelerated tier's time (bench_tiers.py).
ACCELERATE_MIN_WORK = 1 << 24
CLASS_WORK_OFFSET = 8
EXACT_ENTROPY_WORK = 5
HIST_ENTROPY_WORK = 2


def takes_accelerators(n_samples, n_features, n_sweep, criterion, unit_weight, hist):
    """Whether a fit runs the accelerated tier (its own specialisation of the searches).

    Every fit from ``ACCELERATE_MIN_ROWS`` rows on. A smaller classification fit whose
    criterion has an accelerated sweep (Gini and entropy on row counts; with weights,
    entropy of at least ``WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES`` classes in the exact
    splitter only) when its estimated plain-tier work reaches ``ACCELERATE_MIN_WORK``:
    many classes or entropy make a mid-size fit slow in the plain tier, and a compile of a
    few seconds, once per machine, soon repays itself. Both tiers grow the same trees.
    """
    if n_samples >= ACCELERATE_MIN_ROWS:
        return True
    entropy = criterion == ENTROPY or criterion == GAIN_RATIO
    if criterion == GINI and unit_weight:
        factor = 1
    elif entropy and (unit_weight or (not hist and n_sweep >= WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES)):
        factor = HIST_ENTROPY_WORK if hist else EXACT_ENTROPY_WORK
    else:
        return False
    work = n_samples * n_features * (n_sweep + CLASS_WORK_OFFSET) * factor
    return work >= ACCELERATE_MIN_WORK


def parallel_pays(fit, work):
    """Whether a step of ``work`` rows x features is worth running on threads."""
    return fit.parallel and work >= PARALLEL_MIN_WORK


def threads_for(fit, work):
    """Return the threads for a step of ``work`` rows x features: the fit's, or 1 if small."""
    return fit.n_chunks if parallel_pays(fit, work) else 1


def evaluate_batch(batch, nodes, node_bits, fit):
    """Find the split of every node of a batch, or decide it is a leaf.

    Categorical features (``cat_slot[f] >= 0``, see ``sweep_categorical``) get a subset split;
    when one wins, its split row goes to ``node_bits[node]`` and its ``threshold`` is the
    node id (the estimator turns both into the tree's bitset table).

    With ``random_split`` (``splitter="random"``) each searched non-constant feature gets one
    threshold drawn uniformly between the node's smallest and largest value, and the best of
    those is chosen (scikit-learn's random splitter). With ``criterion == GAIN_RATIO`` the
    feature is chosen by C4.5's rule (``gain_ratio``); ``mdl_stop``: see :func:`accept_split`.
    A multi-output criterion code (``jit.MULTI_OUTPUT``) searches with ``sweep_multioutput``'s
    sweep. ``fit.two_valued`` is ``(slot, threshold, high_bits)`` of ``sweep_two_valued`` (no
    column in ``high_bits``: none); the features with a slot are searched there.

    Returns
    -------
    SplitBatch

    Notes
    -----
    This runs in Python, once per level (once per best-first step): it picks which
    kernels run, so a fit compiles only the searches it uses, and the parallel ones only
    when a batch is large enough to use threads.
    Leaf rules, in scikit-learn's order: ``depth >= max_depth``, ``n < min_samples_split``,
    ``n < 2 * min_samples_leaf``, ``W < 2 * min_weight_leaf``, ``impurity <= EPSILON``; then no
    valid candidate, or ``improvement + EPSILON < min_impurity_decrease``.
    Random numbers (``max_features``, random thresholds) are drawn serially, in batch order:
    per node the features first, then one threshold per candidate in feature order.
    """
    categorical_search, absolute_error_search, multi_output_search = fit.switches
    two_slot, two_threshold, high_bits = fit.two_valued
    sorted_idx, sorted_val = fit.sorted_idx, fit.sorted_val
    n_features = sorted_idx.shape[0]
    splits = new_splits(batch.shape[0], nodes.stats.shape[1])
    searched, search_nodes = nodes_to_search(batch, nodes, fit.rules)
    n_searched = searched.shape[0]
    if n_searched == 0:
        return splits
    work = int((nodes.end[search_nodes] - nodes.start[search_nodes]).sum())
    candidate = np.empty((n_searched, n_features), dtype=np.uint8)
    out_threshold = np.empty((n_searched, n_features), dtype=np.float64)
    out_missing = np.full((n_searched, n_features), -1, dtype=np.int8)
    if fit.max_features < n_features or fit.random_split:
        draw_candidates(
            search_nodes, nodes.start, nodes.end, sorted_val, fit.max_features, fit.rng_state,
            fit.random_split, two_slot, candidate, out_threshold, out_missing,
        )  # fmt: skip
    else:
        # Nothing to draw: every feature is a candidate but the two-valued ones, as
        # draw_candidates would mark them (a fit that draws nothing does not compile it).
        candidate[:] = 1
        candidate[:, two_slot >= 0] = 0
    out_proxy = np.full((n_searched, n_features), NO_SPLIT)  # the sweep skips non-candidates
    out_pos = np.empty((n_searched, n_features), dtype=np.int64)
    cat_candidate, out_bits = hold_categorical_candidates(candidate, fit.cat_slot, node_bits)
    # Each node's best proxy so far, which the exact sweeps' pre-tests start from
    # (``shared_best``): the two-valued features are scored first, for that start.
    node_best = np.full(n_searched, -np.inf)  # ``shared_best.new_shared_best``, in Python
    rules = fit.rules
    if high_bits.shape[1] > 0:
        codes = fit.sorted_code[fit.row_feature]
        two_valued_args = (
            search_nodes, two_slot, two_threshold, codes, nodes.start, nodes.end, nodes.stats,
            nodes.weight, high_bits, fit.n_sweep, fit.criterion, rules.min_samples_leaf,
            rules.min_weight_leaf, out_proxy, out_pos, out_threshold, out_missing, node_best,
        )  # fmt: skip
        run_workers(two_valued_splits_worker, threads_for(fit, work * high_bits.shape[1] * 64),
                    *two_valued_args)  # fmt: skip
    if absolute_error_search is not None:
        max_segment = int((nodes.end[search_nodes] - nodes.start[search_nodes]).max())
        rank_of = np.empty(sorted_idx.shape[1], dtype=np.int64)
        sorted_y = np.empty(sorted_idx.shape[1], dtype=np.float64)
        rank_targets(search_nodes, nodes.start, nodes.end, sorted_idx[0], fit.y, rank_of, sorted_y)
        run_workers(
            absolute_error_splits_worker, threads_for(fit, work * n_features), search_nodes,
            candidate, nodes.start, nodes.end, nodes.weight, sorted_idx, sorted_val, rank_of,
            sorted_y, fit.sample_weight, rules.min_samples_leaf, rules.min_weight_leaf,
            fit.random_split, max_segment, out_proxy, out_pos, out_threshold, out_missing,
        )  # fmt: skip
    elif multi_output_search is not None:
        run_workers(
            multi_output_splits_worker, threads_for(fit, work * n_features), search_nodes,
            candidate, nodes.start, nodes.end, nodes.stats, nodes.weight, sorted_idx, sorted_val,
            fit.code, fit.contrib, fit.sample_weight, fit.n_sweep, fit.criterion,
            rules.min_samples_leaf, rules.min_weight_leaf, fit.random_split, out_proxy, out_pos,
            out_threshold, out_missing,
        )  # fmt: skip
    else:
        # A classification row's contribution is its weight, the same value (``_estimators``'
        # _classification_sweep), so the sweep reads both from contrib: its second read of a
        # row then hits the cache line its first one loaded.
        sweep_weight = fit.sample_weight if fit.is_regression else fit.contrib
        inputs = (
            search_nodes, candidate, nodes.start, nodes.end, nodes.stats, nodes.weight,
            sorted_idx, sorted_val, fit.sorted_code, fit.contrib, sweep_weight, fit.unit_weight,
            fit.unit_sample_weight,
        )  # fmt: skip
        limits = (fit.n_sweep, fit.criterion, rules.min_samples_leaf, rules.min_weight_leaf)
        outputs = (out_proxy, out_pos, out_threshold, out_missing)
        n_threads = threads_for(fit, work * n_features)
        if fit.random_split:
            run_workers(random_splits_worker, n_threads, *inputs, *limits, *outputs)
        else:
            run_workers(best_splits_worker, n_threads, *inputs, fit.xlogx, *limits, *outputs,
                        node_best, *fit.sweeps)  # fmt: skip
    if categorical_search is not None and out_bits.shape[1] > 0:
        categorical_splits_presorted(
            threads_for(fit, work * out_bits.shape[1]), search_nodes, cat_candidate,
            fit.cat_slot, nodes.start, nodes.end, nodes.stats, nodes.weight, sorted_idx,
            sorted_val, fit.sorted_code, fit.contrib, fit.sample_weight, fit.n_sweep,
            fit.criterion, rules.min_samples_leaf, rules.min_weight_leaf, out_proxy, out_pos,
            out_bits,
        )  # fmt: skip
    search = BatchSearch(
        searched, search_nodes, out_proxy, out_pos, out_threshold, out_missing, out_bits
    )
    if fit.criterion == GAIN_RATIO:
        feature = np.empty(n_searched, dtype=np.int64)
        gain_ratio_features_presorted(search, nodes, sorted_idx, sorted_val, fit.sample_weight,
                                      fit.unit_weight, fit.cat_slot, feature)  # fmt: skip
    else:
        feature = best_features(out_proxy)
    choose_splits(search, nodes, node_bits, splits, fit, feature)
    return splits


def switch(flag):
    """Return a kernel switch: True, or None, which numba prunes the branches of."""
    return True if flag else None


@inline_kernel
def append_children(k, node, first_child, splits, nodes):
    """Make batch node ``k`` (id ``node``) a split with children ``first_child`` and the next.

    ``missing_left`` is the side learned for the node's NaN rows, plus ``LEARNED_FLAG``
    (the estimator separates the two); when the node had none in the split feature,
    scikit-learn's rule: NaN goes to the child with strictly more training samples, else
    right.
    """
    start = nodes.start[node]
    end = nodes.end[node]
    pos = splits.pos[k]
    nodes.feature[node] = splits.feature[k]
    nodes.threshold[node] = splits.threshold[k]
    nodes.left[node] = first_child
    nodes.right[node] = first_child + 1
    if splits.missing[k] >= 0:
        nodes.missing_left[node] = splits.missing[k] + LEARNED_FLAG
    else:
        nodes.missing_left[node] = 1 if pos - start > end - pos else 0
    for side in range(2):
        child = first_child + side
        # A leaf until it is split; written here, as grown storage is not pre-filled.
        nodes.feature[child] = TREE_UNDEFINED
        nodes.threshold[child] = TREE_UNDEFINED
        nodes.left[child] = TREE_LEAF
        nodes.right[child] = TREE_LEAF
        nodes.missing_left[child] = 0
        nodes.start[child] = start if side == 0 else pos
        nodes.end[child] = pos if side == 0 else end
        nodes.depth[child] = nodes.depth[node] + 1
        # Element by element: an array assignment compiles numba's shape-mismatch error path.
        for c in range(nodes.stats.shape[1]):
            nodes.stats[child, c] = splits.child_stats[k, side, c]
        nodes.weight[child] = splits.child_weight[k, side]
        nodes.impurity[child] = splits.child_impurity[k, side]


@kernel
def append_split_children(batch, splits, node_count, nodes):
    """:func:`append_children` for every batch node with a split, in batch order.

    Returns the new node count.
    """
    for k in range(batch.shape[0]):
        if splits.feature[k] >= 0:
            append_children(k, batch[k], node_count, splits, nodes)
            node_count += 2
    return node_count


@kernel
def mark_sides(
    batch, splits, node_count, nodes, sorted_idx, sorted_val, goes_left, cleared, rules,
    marked_elsewhere, split_nodes, split_features, flip, left_size, partitioned,
):  # fmt: skip
    """Append the children of every split node and mark each sample's side in ``goes_left``.

    Fills the partition's inputs (``split_nodes``, ``split_features``, ``flip``,
    ``left_size``: one entry per node to partition) and returns ``node_count, n_split,
    max_segment, work``. ``cleared``: every flag of ``goes_left`` is 0 on entry.
    Batch nodes with ``marked_elsewhere[k]`` (subset and two-valued splits) get their side
    flags from :func:`mark_subset_sides` and :func:`mark_two_valued_splits`, which the
    caller runs on those with ``partitioned[k]`` set here.

    A node whose two children are leaves by the rules alone (:func:`is_leaf_by_rules`: the
    last level of a ``max_depth`` tree, pure or too small children) is not partitioned: the
    children's statistics and impurities were computed from the parent's segment during the
    search, and nothing reads a leaf's segment.
    """
    # Uncounted views of the arguments for the loop below (``borrow``).
    (batch, node_start, node_end, sorted_idx, sorted_val, goes_left, marked_elsewhere,
     split_nodes, split_features, flip, left_size, partitioned) = borrowed((
        batch, nodes.start, nodes.end, sorted_idx, sorted_val, goes_left, marked_elsewhere,
        split_nodes, split_features, flip, left_size, partitioned))  # fmt: skip
    n_split = 0
    max_segment = np.int64(0)
    work = np.int64(0)
    for k in range(batch.shape[0]):
        f = splits.feature[k]
        if f < 0:
            continue
        node = batch[k]
        start = node_start[node]
        end = node_end[node]
        pos = splits.pos[k]
        idx = sorted_idx[f]
        append_children(k, node, node_count, splits, nodes)
        node_count += 2
        both_leaves = True
        for child in range(node_count - 2, node_count):
            both_leaves = both_leaves and is_leaf_by_rules(
                node_end[child] - node_start[child], nodes.weight[child], nodes.impurity[child],
                nodes.depth[child], rules.max_depth, rules.min_samples_split,
                rules.min_samples_leaf, rules.min_weight_leaf,
            )  # fmt: skip
        if both_leaves:
            continue
        split_nodes[n_split] = node
        partitioned[k] = 1
        if marked_elsewhere[k]:
            # Rows go by category or by the two-valued column's bits, and the split
            # feature's own segment must be partitioned too (-1 matches no feature).
            split_features[n_split] = -1
        else:
            # The split feature is sorted with NaN last, so its first pos - start samples
            # are the left child, unless NaN goes left: then the NaN tail joins them, and
            # the split feature's own segment is partitioned like the others' (left | NaN |
            # right becomes left, NaN | right, each child with its NaN last).
            n_missing_left = (
                count_missing(sorted_val[f], start, end) if splits.missing[k] == 1 else 0
            )
            end_right = end - n_missing_left
            end_left = pos - n_missing_left
            if not cleared:
                for u in range(np.uint64(start), np.uint64(end)):  # unsigned: see jit
                    p = np.int64(u)
                    set_side_flag(goes_left, idx[u], p < end_left or p >= end_right)
            elif end_left - start + end - end_right <= end_right - end_left:
                # With every flag cleared first, a plain split raises only its smaller
                # child's flags (an OR per sample, on at most half of the segment) and
                # says which child that is in flip.
                raise_side_flags(idx, start, end_left, goes_left)
                raise_side_flags(idx, end_right, end, goes_left)
            else:
                raise_side_flags(idx, end_left, end_right, goes_left)
                flip[n_split] = 1
            split_features[n_split] = f if n_missing_left == 0 else -1
        left_size[n_split] = pos - start
        n_split += 1
        max_segment = max(max_segment, end - start)
        work += end - start
    return node_count, n_split, max_segment, work


@kernel
def mark_subset_sides(ks, batch, splits, nodes, sorted_idx, sorted_val, node_bits, goes_left):
    """Side flags of the rows of batch nodes ``ks``, split on categorical subsets."""
    for i in range(ks.shape[0]):
        k = ks[i]
        node = batch[k]
        f = splits.feature[k]
        mark_goes_left(sorted_idx[f], sorted_val[f], nodes.start[node], nodes.end[node],
                       node_bits[node], goes_left)  # fmt: skip


@kernel
def mark_two_valued_splits(ks, batch, splits, nodes, row_idx, two_valued, goes_left):
    """Side flags of the rows of batch nodes ``ks``, split on two-valued columns.

    Their split feature's segment is stale: the rows come from the row feature
    (``row_idx``), the sides from the column's bits.
    """
    two_slot, _, high_bits = two_valued
    for i in range(ks.shape[0]):
        k = ks[i]
        node = batch[k]
        mark_two_valued_sides(row_idx, nodes.start[node], nodes.end[node], high_bits,
                              two_slot[splits.feature[k]], goes_left)  # fmt: skip


def apply_splits(batch, splits, node_count, nodes, node_bits, goes_left, fit):
    """Split the batch nodes that have a split; children get ids from ``node_count``.

    The node storage must have room for two children per split node. Returns the new node
    count.

    Notes
    -----
    Children are appended in batch order, left before right, so ``right == left + 1`` and a
    batch that is one level yields breadth-first ids. Clearing every side flag first costs
    the whole bit array, so it is done only when the batch's segments are large against it
    (a level of a breadth-first build), not for the smaller nodes of most best-first
    steps; otherwise each flag of the segment is set.
    """
    two_slot = fit.two_valued[0]
    n_batch = batch.shape[0]
    split = splits.feature >= 0
    batch_rows = int((nodes.end[batch[split]] - nodes.start[batch[split]]).sum())
    cleared = batch_rows >= goes_left.shape[0]
    if cleared:
        goes_left[:] = 0
    split_nodes = np.empty(n_batch, dtype=np.int64)
    split_features = np.empty(n_batch, dtype=np.int32)
    flip = np.zeros(n_batch, dtype=np.uint8)
    left_size = np.empty(n_batch, dtype=np.int64)
    marked_elsewhere = np.zeros(n_batch, dtype=np.uint8)
    partitioned = np.zeros(n_batch, dtype=np.uint8)
    subset_k = two_valued_k = None  # most fits: neither categorical nor two-valued columns
    if fit.switches[0] is not None or fit.two_valued[2].shape[1] > 0:
        split_k = np.flatnonzero(split)
        split_f = splits.feature[split_k]
        subset_k = split_k[fit.cat_slot[split_f] >= 0]
        two_valued_k = split_k[two_slot[split_f] >= 0]
        marked_elsewhere[subset_k] = 1
        marked_elsewhere[two_valued_k] = 1
    node_count, n_split, max_segment, work = mark_sides(
        batch, splits, node_count, nodes, fit.sorted_idx, fit.sorted_val, goes_left, cleared,
        fit.rules, marked_elsewhere, split_nodes, split_features, flip, left_size, partitioned,
    )  # fmt: skip
    if subset_k is not None and subset_k.shape[0] > 0:
        subset_k = subset_k[partitioned[subset_k] == 1]
        mark_subset_sides(subset_k, batch, splits, nodes, fit.sorted_idx, fit.sorted_val,
                          node_bits, goes_left)  # fmt: skip
    if two_valued_k is not None and two_valued_k.shape[0] > 0:
        two_valued_k = two_valued_k[partitioned[two_valued_k] == 1]
        row_idx = fit.sorted_idx[fit.row_feature]
        mark_two_valued_splits(two_valued_k, batch, splits, nodes, row_idx, fit.two_valued,
                               goes_left)  # fmt: skip
    if n_split > 0:
        partition_args = (
            split_nodes[:n_split], nodes.start, nodes.end, split_features[:n_split], goes_left,
            flip[:n_split], left_size[:n_split], fit.sorted_idx, fit.sorted_val,
            fit.sorted_code, fit.upkeep, fit.two_valued[2], max_segment,
            True,  # the vector blocks, in every fit (see partition_worker)
        )  # fmt: skip
        n_threads = threads_for(fit, work * fit.sorted_idx.shape[0])
        run_workers(partition_worker, n_threads, *partition_args)
    return node_count


def stopping_rules(spec, rows):
    """Return the builders' :class:`StoppingRules`, in the rescaled units of ``rows``."""
    return StoppingRules(
        int(spec.max_depth), int(spec.min_samples_split), int(spec.min_samples_leaf),
        float(rows.min_weight_leaf), float(rows.min_impurity_decrease),
    )  # fmt: skip


def build(spec, rows, columns, criterion, switches):
    """Grow a tree over presorted data: level-wise, or best-first when ``max_leaf_nodes > 0``.

    Parameters
    ----------
    spec : FitSpec
        The fit's settings (``records.FitSpec``): stopping rules, ``max_features``,
        ``max_leaf_nodes``, ``rng_state`` (advanced), threads, ``mdl_stop``, the splitter
        (``"random"``: one random threshold per candidate feature), categorical slots.
    rows : WeightedRows
        Per-sample sweep codes, contributions, weights and targets (``prepare.weighted_rows``);
        with a multi-output criterion ``code``, ``contrib`` and ``y`` have ``n_samples *
        n_outputs`` entries (``sweep_multioutput``) and ``sorted_code`` is unused but
        partitioned. Its stopping rules in weight and impurity units are the ones applied.
    columns : PresortedColumns
        ``sorted_idx``, ``sorted_val``, ``sorted_code`` (modified: segments are partitioned in
        place, and the ids of ``sorted_idx`` may be renumbered, see
        ``sweep_exact.renumber_samples``) and ``two_valued``: ``slot, threshold, high_bits``
        of ``sweep_two_valued`` (``high_bits`` with no column: the path is off). Features with
        a slot are searched there; at least one feature has none.
    criterion : int
        Criterion code (a multi-output code with several outputs).
    switches : tuple
        ``categorical_search, absolute_error_search, multi_output_search``, True or None: the
        optional split searches the fit may use (:func:`search_switches`).

    Returns
    -------
    tuple of ndarray
        ``feature, threshold, left, right, missing_left, depth, node_stats, weight, impurity,
        n_node_samples``, truncated to the node count. ``missing_left`` holds
        ``LEARNED_FLAG`` on top of the side where that side was learned from NaN rows.
        Node ids are breadth-first for level-wise growth, creation order in strict
        best-first order for best-first growth (:class:`Frontier`).
    node_bits : ndarray of uint64, shape (node_count, n_words + 1)
        The split row of each categorical split node, indexed by the node id stored in its
        ``threshold`` (creation ids; rows of other nodes are unused).

    Notes
    -----
    The loop over levels (best-first steps) runs in Python and calls a few kernels per
    level: :func:`evaluate_batch` and :func:`apply_splits` choose them, so a fit compiles
    only what it runs. No recursion: the frontier is an id range (level-wise) or a
    :class:`Frontier` (best-first). Storage grows by doubling. Cost per level:
    O(n_features * n_active) for the sweeps and the partition, where ``n_active`` counts
    the samples of nodes still being split.
    """
    sorted_idx, sorted_val, sorted_code = (
        columns.sorted_idx,
        columns.sorted_val,
        columns.sorted_code,
    )
    two_valued = columns.two_valued
    code, contrib, sample_weight, y = rows.code, rows.contrib, rows.sample_weight, rows.y
    unit_weight, n_stats, n_sweep = bool(rows.unit_weight), rows.n_stats, rows.n_sweep
    is_regression, max_features, max_leaf_nodes = (
        bool(spec.is_regression),
        int(spec.max_features),
        int(spec.max_leaf_nodes),
    )
    random_split, n_chunks = spec.splitter == "random", int(spec.n_threads)
    parallel, mdl_stop, rng_state = n_chunks > 1, spec.mdl_stop, spec.rng_state
    cat_slot, n_words = spec.cat_slot, spec.n_words
    categorical_search, absolute_error_search, multi_output_search = switches
    n_samples = sorted_idx.shape[1]
    rules = stopping_rules(spec, rows)
    row_feature, upkeep = segment_upkeep(two_valued[0])
    if two_valued[2].shape[1] > 0:
        two_valued = bits_in_row_order(two_valued, sorted_idx[row_feature])
    capacity = INITIAL_CAPACITY
    nodes = new_nodes(capacity, n_stats)
    goes_left = new_side_flags(n_samples)
    node_bits = np.zeros((capacity, n_words + 1), dtype=np.uint64)
    weight_root = init_root(
        nodes, sorted_idx[row_feature], code, contrib, sample_weight, y, is_regression,
        criterion, (absolute_error_search, multi_output_search),
    )  # fmt: skip
    # Entropy and gain ratio on row counts screen their cuts with a table of n ln n (an
    # accelerator, like the block sweeps).
    accelerate = takes_accelerators(
        n_samples, sorted_idx.shape[0], n_sweep, criterion, unit_weight, hist=False
    )
    xlogx = screening_table(n_samples, unit_weight, criterion) if accelerate else NO_TABLE
    fit = PresortedFit(
        sorted_idx, sorted_val, sorted_code, code, contrib, sample_weight, y, bool(unit_weight),
        # Unweighted regression: the sweep counts rows for the side weights instead of
        # reading sample_weight at each row's id (a cache miss per row in a deep node).
        bool(unit_weight or np.all(sample_weight == 1.0)), xlogx,
        bool(is_regression), int(n_sweep), int(criterion), rules, int(max_features),
        float(weight_root), rng_state, bool(parallel), int(n_chunks), bool(random_split),
        switch(mdl_stop), cat_slot, two_valued, row_feature, upkeep, switches,
        sweep_switches(accelerate),
    )  # fmt: skip
    node_count = 1
    best_first = max_leaf_nodes > 0
    n_batch = speculative_batch_limit(max_features, sorted_idx.shape[0], random_split)
    frontier = Frontier(n_stats, max_leaf_nodes, n_batch) if best_first else None
    batch = np.zeros(1, dtype=np.int64)  # the root
    # Weighted or regression sweeps read contrib and sample_weight by sample id: renumbered
    # by position, a node's ids are its segment's positions (see renumber_samples). Level-wise
    # growth of the common fit only (the optional searches keep other arrays by id).
    renumber = not unit_weight and not best_first and all(s is None for s in switches)
    window = n_samples
    while batch.shape[0] > 0:
        if renumber:
            largest = int((nodes.end[batch] - nodes.start[batch]).max())
            if largest * RENUMBER_SHRINK <= window:
                renumbered = renumber_samples(
                    sorted_idx, row_feature, upkeep, fit.code, fit.contrib, fit.sample_weight,
                    fit.y,
                )  # fmt: skip
                code, contrib, weight, y = renumbered
                fit = fit._replace(code=code, contrib=contrib, sample_weight=weight, y=y)
                window = largest
        splits = evaluate_batch(batch, nodes, node_bits, fit)
        if best_first:
            frontier.queue(batch, splits)
            batch, splits = frontier.next_batch()
            if batch.shape[0] == 0:
                break
        capacity, nodes = make_room(splits, node_count, capacity, nodes)
        if capacity > node_bits.shape[0]:
            node_bits = grown(node_bits, capacity, 0)
        first_child = node_count
        node_count = apply_splits(batch, splits, node_count, nodes, node_bits, goes_left, fit)
        batch = np.arange(first_child, node_count, dtype=np.int64)
    if best_first:
        return frontier.finished(nodes, node_bits, cat_slot)
    return finished_tree(nodes, node_count), node_bits[:node_count].copy()


def segment_upkeep(two_slot):
    """Return the feature read as the nodes' row sets, and what the partition does to each.

    The row feature is the first one not searched by ``sweep_two_valued`` (feature 0 without
    them, which ``sweep_absolute_error.rank_targets`` relies on); it is partitioned even where it
    is constant, the two-valued features never (see ``sweep_exact.partition_worker``).
    """
    upkeep = np.full(two_slot.shape[0], UPKEEP_UNLESS_CONSTANT, dtype=np.uint8)
    row_feature = int(np.flatnonzero(two_slot < 0)[0])
    upkeep[row_feature] = UPKEEP_ALWAYS
    upkeep[two_slot >= 0] = UPKEEP_NEVER
    return row_feature, upkeep


def init_root(nodes, root_idx, code, contrib, sample_weight, y, is_regression, criterion,
              switches):  # fmt: skip
    """Make node 0 of ``nodes`` the root over all samples ``root_idx``; returns its weight.

    ``switches`` are the absolute-error and multi-output ones of :func:`search_switches`.
    The root holds every sample, so its statistics are summed in id order, reading code,
    contrib and weight in order instead of gathering them through the presorted ids. Id
    order is also the order scikit-learn sums the root in, which matters to weighted fits'
    rounding.

    Notes
    -----
    The absolute-error and multi-output fits compute the root with the kernels their
    searches compile anyway, called from here; the other fits with :func:`root_statistics`,
    one specialisation for all of them. (One kernel with the switches compiled one per
    combination.)
    """
    absolute_error_search, multi_output_search = switches
    n_samples = root_idx.shape[0]
    nodes.end[0] = n_samples
    ids = np.arange(n_samples, dtype=np.int32)
    zero, end = np.int64(0), np.int64(n_samples)
    stats = nodes.stats[0]
    if multi_output_search is not None:
        weight = multi_output_segment_stats(
            ids, zero, end, zero, zero, code, contrib, sample_weight, y, is_regression,
            n_outputs_of(criterion), stats,
        )  # fmt: skip
        impurity = multi_output_impurity(criterion, stats, weight)
    elif absolute_error_search is not None:
        weight = segment_stats(ids, zero, end, zero, zero, code, contrib, sample_weight, y,
                               is_regression, stats)  # fmt: skip
        median, impurity = absolute_error_of_segment(root_idx, zero, end, y, sample_weight)
        stats[MEDIAN_STAT] = median
        if stats[2] == 0.0:  # every target equal: pure (see choose.segment_impurity)
            impurity = 0.0
    else:
        weight, impurity = root_statistics(ids, root_idx, code, contrib, sample_weight, y,
                                           is_regression, criterion, stats)  # fmt: skip
    nodes.weight[0] = weight
    nodes.impurity[0] = impurity
    return float(weight)


@kernel
def root_statistics(ids, root_idx, code, contrib, sample_weight, y, is_regression, criterion,
                    stats):  # fmt: skip
    """Fill the root's ``stats`` (``ids``: 0 .. n - 1); return its weight and impurity.

    For every criterion but absolute error and the multi-output ones (:func:`init_root`).
    """
    end = np.int64(ids.shape[0])
    weight = segment_stats(ids, np.int64(0), end, np.int64(0), np.int64(0), code, contrib,
                           sample_weight, y, is_regression, stats)  # fmt: skip
    impurity = segment_impurity(criterion, stats, weight, root_idx, np.int64(0), end, y,
                                sample_weight, None, None)  # fmt: skip
    return weight, impurity


# Most nodes one best-first step expands (see ``Frontier``); 1 grows strictly one node per
# step. Fits that draw random numbers during a search always take 1.
MAX_SPECULATIVE_BATCH = 1 << 30
# A best-first step also expands the searched nodes whose path improvement ranks within the
# splits confirmed so far plus this share of the splits left (see ``Frontier``): a larger
# share means fewer steps but more expansions that the budget later rolls back.
SPECULATION_SHARE = 0.25


def speculative_batch_limit(max_features, n_features, random_split):
    """Most nodes a best-first step of this fit may expand at once (see :class:`Frontier`).

    The random draws of a search (``max_features < n_features``, the random splitter's
    thresholds) follow the order nodes are searched in, so those fits expand one node per
    step, in strict best-first order, and draw exactly the numbers they drew one node at a
    time. Every other search depends only on the node's own samples, read before the node
    is partitioned; nothing reads the segment of a rolled-back expansion (left | right, no
    longer sorted as a whole): a leaf's value, size and impurity are the statistics
    recorded when it was created, and a stored histogram belongs to one node whatever the
    order (built, or its parent's minus its sibling's).
    """
    return 1 if max_features < n_features or random_split else MAX_SPECULATIVE_BATCH


class Frontier:
    """Best-first growth: strict best-first order, replayed over speculative batches.

    Strict order expands the queued node of largest improvement next; ties go to the node
    created first in that order. Its *strict id* says when: the root is 0 and a node's
    children get the next two ids when it is expanded, left then right. A node's split
    depends only on its own samples, not on when it is searched, so a step may expand
    several searched nodes together, like a level (apply the splits, search all the
    children in one batch), before strict order reaches them. The replay then *confirms*
    expansions in strict order, and :meth:`finished` rolls back those it never confirmed
    (the leaf budget ran out first): such a node is a leaf again and its descendants are
    dropped. The builder's Python loop thus runs once per step, not once per node.

    Which nodes a step expands: the one strict order needs next, and every searched node
    whose *path improvement* (the smallest improvement on its path from the root) ranks
    within ``len(confirmed) + SPECULATION_SHARE * splits_left`` of the searched nodes.
    Strict order expands nodes by decreasing path improvement (a node waits for its
    ancestors, and the heap always holds one of them), so the first ``n`` expansions are
    the ``n`` nodes of largest path improvement (ties aside); the rank among the nodes
    searched so far is an optimistic estimate of the final one. Which nodes are expanded
    never changes the tree, only the work.

    Invariants: ``heap`` holds ``(-improvement, strict id, node)`` for every node with a
    split whose parent is confirmed and which is not confirmed itself; its keys are
    distinct, so the order of pops is fixed. Every confirmed node was expanded; every
    expanded node is searched and has a split, and its parent is expanded. Only confirmed
    nodes' children have strict ids.

    Parameters
    ----------
    n_stats : int
        Length of a node's statistics vector.
    max_leaf_nodes : int
        The leaf budget (``> 0``).
    max_batch : int
        Most nodes expanded per step (:func:`speculative_batch_limit`); 1 expands each node
        when strict order reaches it, so every expansion is confirmed at once and node ids
        are strict ids.
    """

    def __init__(self, n_stats: int, max_leaf_nodes: int, max_batch: int) -> None:
        self.heap: list[tuple[float, int, int]] = []
        # Each searched node's split, path improvement (-inf without a split) and whether
        # it is expanded, by node id.
        self.splits = new_splits(INITIAL_CAPACITY, n_stats)
        self.path_improvement = np.full(INITIAL_CAPACITY, -np.inf)
        self.expanded = np.zeros(INITIAL_CAPACITY, dtype=bool)
        self.n_searched = 0
        self.sorted_paths = np.zeros(0)  # the path improvements of the searched splits
        # Python lists indexed by node id: the replay reads them one node at a time.
        self.improvement: list[float] = []
        self.has_split: list[bool] = []
        self.strict_id: list[int] = []
        self.first_child: dict[int, int] = {}
        self.confirmed: list[int] = []
        self.n_strict = 0
        self.splits_left = max_leaf_nodes - 1
        self.max_batch = max_batch
        self.parents = np.zeros(0, dtype=np.int64)  # the batch expanded last

    def queue(self, batch, splits) -> None:
        """Take the splits of a searched batch: the root, or the children of the last step.

        ``batch`` is the id range following every node searched so far; the children of
        the last step's ``j``-th node are ``batch[2 * j]`` and ``batch[2 * j + 1]``.
        """
        first = self.n_searched
        stop = first + batch.shape[0]
        if stop > self.expanded.shape[0]:
            capacity = max(2 * self.expanded.shape[0], stop)
            self.splits = SplitBatch(*(grown(a, capacity) for a in self.splits))
            self.path_improvement = grown(self.path_improvement, capacity, -np.inf)
            self.expanded = grown(self.expanded, capacity, False)
        for stored, searched in zip(self.splits, splits, strict=True):
            stored[first:stop] = searched
        has_split = splits.feature >= 0
        path = np.where(has_split, splits.improvement, -np.inf)
        if first > 0:
            path = np.minimum(path, np.repeat(self.path_improvement[self.parents], 2))
            children = range(first, stop, 2)
            self.first_child.update(zip(self.parents.tolist(), children, strict=True))
        self.path_improvement[first:stop] = path
        self.n_searched = stop
        # Two sorted runs: the stable sort (a merge sort) merges them in linear time.
        added = np.sort(path[has_split])
        self.sorted_paths = np.sort(np.concatenate((self.sorted_paths, added)), kind="stable")
        self.improvement.extend(splits.improvement.tolist())
        self.has_split.extend(has_split.tolist())
        self.strict_id.extend([-1] * batch.shape[0])
        if first == 0:  # the root
            self.n_strict = 1
            self.strict_id[0] = 0
            if self.has_split[0]:
                heapq.heappush(self.heap, (-self.improvement[0], 0, 0))

    def speculation_bound(self) -> float:
        """Smallest path improvement a searched node needs to be expanded speculatively."""
        rank = len(self.confirmed) + int(SPECULATION_SHARE * self.splits_left)
        known = self.sorted_paths
        if rank <= 0:
            return np.inf
        if rank >= known.shape[0]:
            return -np.inf
        return float(known[known.shape[0] - rank])

    def next_batch(self):
        """Replay strict order up to the first node not expanded yet; return what to expand.

        Returns the batch (node ids) and its splits: that node first, then the searched
        nodes not expanded whose path improvement reaches :meth:`speculation_bound` (the
        best ones, if more than ``max_batch - 1``); an empty batch when growth is over (the
        budget is spent or no queued node has a split).
        """
        heap, expanded = self.heap, self.expanded
        improvement, has_split, strict_id = self.improvement, self.has_split, self.strict_id
        while heap and self.splits_left > 0:
            node = heap[0][2]
            if not expanded[node]:
                return self.expand(node)
            heapq.heappop(heap)
            # Confirm the expansion of node: its children get the next strict ids.
            self.splits_left -= 1
            self.confirmed.append(node)
            child = self.first_child[node]
            for c in (child, child + 1):
                strict_id[c] = self.n_strict
                self.n_strict += 1
                if has_split[c]:
                    heapq.heappush(heap, (-improvement[c], strict_id[c], c))
        return np.zeros(0, dtype=np.int64), None

    def expand(self, node: int):
        """Return the batch :meth:`next_batch` expands when strict order needs ``node``."""
        self.expanded[node] = True
        parents = np.full(1, node, dtype=np.int64)
        if self.max_batch > 1:
            path = self.path_improvement[: self.n_searched]
            bound = max(self.speculation_bound(), np.finfo(np.float64).min)  # has a split
            more = np.flatnonzero((path >= bound) & ~self.expanded[: self.n_searched])
            if more.shape[0] > self.max_batch - 1:
                more = more[np.argsort(-path[more], kind="stable")[: self.max_batch - 1]]
            parents = np.concatenate((parents, more))
            self.expanded[more] = True
        self.parents = parents
        return parents, SplitBatch(*(a[parents] for a in self.splits))

    def finished(self, nodes, node_bits, cat_slot):
        """Return the builders' result (:func:`build`) in strict best-first ids.

        The nodes with a strict id are kept, in that order; an expansion never confirmed
        is rolled back to the leaf it was (the fields ``append_children`` gives a new
        child), and its descendants are dropped. A subset split's threshold, its split
        row's index, becomes its new id; ``node_bits`` rows follow their nodes.
        """
        strict = np.array(self.strict_id, dtype=np.int64)
        kept = np.flatnonzero(strict >= 0)
        order = np.empty(self.n_strict, dtype=np.int64)
        order[strict[kept]] = kept
        split = np.zeros(strict.shape[0], dtype=bool)
        split[self.confirmed] = True
        split = split[order]
        n = order.shape[0]
        feature = np.where(split, nodes.feature[order], TREE_UNDEFINED).astype(np.int32)
        threshold = np.where(split, nodes.threshold[order], float(TREE_UNDEFINED))
        left = np.full(n, TREE_LEAF, dtype=np.int32)
        right = np.full(n, TREE_LEAF, dtype=np.int32)
        left[split] = strict[nodes.left[order[split]]]
        right[split] = left[split] + 1
        missing_left = np.where(split, nodes.missing_left[order], 0).astype(np.uint8)
        subset = split & (cat_slot[np.maximum(feature, 0)] >= 0)
        threshold[subset] = np.flatnonzero(subset)
        built = (
            feature,
            threshold,
            left,
            right,
            missing_left,
            nodes.depth[order],
            nodes.stats[order],
            nodes.weight[order],
            nodes.impurity[order],
            nodes.end[order] - nodes.start[order],
        )
        return built, node_bits[order]


def make_room(splits, node_count, capacity, nodes):
    """Grow the node storage (doubling) so the batch's children fit.

    Returns the capacity and the node arrays (the same ones when they had room).
    """
    n_new = 2 * int(np.count_nonzero(splits.feature >= 0))
    if node_count + n_new <= capacity:
        return capacity, nodes
    capacity = max(2 * capacity, node_count + n_new)
    return capacity, NodeArrays(*(grown(a, capacity) for a in nodes))


def finished_tree(nodes, node_count):
    """Return the builders' result: the node arrays cut to ``node_count`` (see :func:`build`).

    Views, not copies: the estimator's ``Tree`` copies what it keeps once the presorted
    data are freed, so a copy here would only raise the fit's peak memory.
    """
    n = node_count
    return (
        nodes.feature[:n],
        nodes.threshold[:n],
        nodes.left[:n],
        nodes.right[:n],
        nodes.missing_left[:n],
        nodes.depth[:n],
        nodes.stats[:n],
        nodes.weight[:n],
        nodes.impurity[:n],
        nodes.end[:n] - nodes.start[:n],
    )


# A node keeps its histogram while open (so a child can derive its own by subtraction) only
# if building one from its rows, rows x n_features adds, costs more than twice the
# histogram's size (zeroing plus subtracting it). The rule also bounds the stored
# histograms' memory by 8 bytes x n_samples x n_features. Smaller nodes build a throw-away
# histogram when searched.
STORED_HIST_MIN_ROWS = 256


def stored_histogram_min_rows(n_features, n_total_bins, width):
    """Fewest rows a node needs to keep its histogram (see ``STORED_HIST_MIN_ROWS``)."""
    return max(STORED_HIST_MIN_ROWS, 2 * n_total_bins * width // n_features)


class BinnedFit(NamedTuple):
    """What every level of a histogram fit reads (see :class:`PresortedFit`).

    ``contrib``, ``sample_weight`` and ``y`` are indexed by sample id, their ``position_``
    copies by position, like ``codes`` and ``code`` (partitioned with the rows).
    """

    codes: np.ndarray
    bin_offset: np.ndarray
    every_bin: np.ndarray  # ``sweep_hist.every_bin_listed``: the bins a stored histogram sweeps
    n_bins_of: np.ndarray
    bin_min: np.ndarray
    bin_max: np.ndarray
    near_ties: np.ndarray
    rows: np.ndarray
    code: np.ndarray
    contrib: np.ndarray
    sample_weight: np.ndarray
    y: np.ndarray
    position_contrib: np.ndarray
    position_weight: np.ndarray
    position_y: np.ndarray
    unit_weight: bool
    is_regression: bool
    n_sweep: int
    criterion: int
    xlogx: np.ndarray
    rules: StoppingRules
    max_features: int
    weight_root: float
    rng_state: np.ndarray
    parallel: bool
    n_chunks: int
    mdl_stop: object  # switch (True or None): the MDL test is compiled only for fits using it
    cat_slot: np.ndarray
    nan_bin: np.ndarray
    categorical_search: object
    min_stored_rows: int
    sweeps: tuple  # ``row_sweeps`` of ``sweep_hist.sweep_worker``


@kernel
def draw_candidates_binned(
    search_nodes, node_slot, node_start, node_end, hist_pool, codes, bin_offset, bin_min,
    bin_max, n_sweep, unit_weight, max_features, rng_state, candidate,
):  # fmt: skip
    """Fill ``candidate`` for every searched node (``sweep_exact.draw_candidate_features``)."""
    n_features = codes.shape[1]
    f_order = np.empty(n_features, dtype=np.int64)
    constant = np.zeros(n_features, dtype=np.uint8)
    for s in range(search_nodes.shape[0]):
        node = search_nodes[s]
        if max_features < n_features:
            constant_features(hist_pool, node_slot[node], node_start[node], node_end[node],
                              codes, bin_offset, bin_min, bin_max, n_sweep, unit_weight,
                              constant)  # fmt: skip
        draw_candidate_features(f_order, max_features, constant, rng_state, candidate[s])


def evaluate_batch_hist(batch, nodes, node_slot, hist_pool, node_bits, fit):
    """Do what :func:`evaluate_batch` does, over histograms of binned data.

    A categorical feature's bins are its codes (``nan_bin[f]``: the bin of a missing value,
    ``-1`` if none); its subset split is stored as in :func:`evaluate_batch`.

    Returns the same record. The chosen split's rows are partitioned here (the pass that
    sums the children's statistics moves them too), so ``pos`` is final on return.

    Notes
    -----
    Leaf rules, feature draws and the reduction over features are those of the exact
    builder; a node is swept from its stored histogram (slot ``node_slot[node] >= 0``) or
    from one built on the spot.
    """
    codes, bin_offset = fit.codes, fit.bin_offset
    rules = fit.rules
    n_features = codes.shape[1]
    splits = new_splits(batch.shape[0], nodes.stats.shape[1])
    searched, search_nodes = nodes_to_search(batch, nodes, rules)
    n_searched = searched.shape[0]
    if n_searched == 0:
        return splits
    n = nodes.end[search_nodes] - nodes.start[search_nodes]
    stored = node_slot[search_nodes] >= 0
    work = int(np.where(stored, bin_offset[n_features], 2 * n * n_features).sum())
    rows_searched = int(n.sum())
    max_segment = int(n.max())

    candidate = np.ones((n_searched, n_features), dtype=np.uint8)
    if fit.max_features < n_features:  # else every feature, and nothing drawn or compiled
        draw_candidates_binned(
            search_nodes, node_slot, nodes.start, nodes.end, hist_pool, codes, bin_offset,
            fit.bin_min, fit.bin_max, fit.n_sweep, fit.unit_weight, fit.max_features,
            fit.rng_state, candidate,
        )  # fmt: skip
    cat_candidate, out_bits = hold_categorical_candidates(candidate, fit.cat_slot, node_bits)
    out_proxy = np.empty((n_searched, n_features), dtype=np.float64)
    out_cut = np.empty((n_searched, n_features), dtype=np.int64)
    out_threshold = np.empty((n_searched, n_features), dtype=np.float64)
    out_missing = np.empty((n_searched, n_features), dtype=np.int8)
    sweep_args = (
        search_nodes, node_slot, nodes.start, nodes.end, nodes.stats, nodes.weight, hist_pool,
        codes, bin_offset, fit.every_bin, fit.n_bins_of, fit.bin_min, fit.bin_max,
        fit.near_ties, fit.code,
        fit.position_contrib, fit.position_weight, fit.unit_weight, fit.n_sweep, fit.criterion,
        fit.xlogx, rules.min_samples_leaf, rules.min_weight_leaf, candidate, out_proxy, out_cut,
        out_threshold, out_missing, *fit.sweeps,
    )  # fmt: skip
    if fit.parallel and work >= PARALLEL_MIN_WORK:
        run_workers(sweep_worker, fit.n_chunks, *sweep_args, min(4 * fit.n_chunks, n_searched))
    else:
        run_workers(sweep_worker, 1, *sweep_args, 1)
    if fit.categorical_search is not None and out_bits.shape[1] > 0:
        categorical_splits_binned(
            threads_for(fit, rows_searched * out_bits.shape[1]),
            search_nodes, cat_candidate, fit.cat_slot, fit.nan_bin, bin_offset, nodes.start,
            nodes.end, nodes.stats, nodes.weight, fit.rows, codes, fit.code, fit.contrib,
            fit.sample_weight, fit.n_sweep, fit.criterion, rules.min_samples_leaf,
            rules.min_weight_leaf, out_proxy, out_bits,
        )  # fmt: skip
    search = BatchSearch(
        searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, out_bits
    )
    if fit.criterion == GAIN_RATIO:
        feature = np.empty(n_searched, dtype=np.int64)
        gain_ratio_features_binned(search, nodes, bin_offset, fit.rows, codes, fit.sample_weight,
                                   fit.cat_slot, fit.nan_bin, feature)  # fmt: skip
    else:
        feature = best_features(out_proxy)
    todo = np.flatnonzero(feature >= 0)
    if todo.shape[0] == 0:
        return splits
    f = feature[todo]
    # Each chosen split as a cut of its feature's bins; NaN sent left: the feature's NaN
    # bin, its last, joins the left side.
    cut = out_cut[todo, f] - bin_offset[f]
    nan_code = np.where(out_missing[todo, f] == 1, bin_offset[f + 1] - bin_offset[f] - 1, -1)
    subset = np.flatnonzero(fit.cat_slot[f] >= 0)
    inverse = np.empty((subset.shape[0], 256), dtype=np.uint8)
    if subset.shape[0] > 0:
        # A subset split: its categories recoded left-first, it is a cut between the two
        # groups (its NaN bin one of them), and the codes are restored after the partition.
        order_subsets_left_first(
            todo[subset], subset, search, nodes, codes, fit.cat_slot, fit.nan_bin, node_bits,
            feature, cut, nan_code, inverse,
        )  # fmt: skip
    split_args = (
        todo, feature, cut, nan_code, search, nodes, fit.rows, codes, fit.code, fit.contrib,
        fit.sample_weight, fit.y, fit.position_contrib, fit.position_weight, fit.position_y,
        fit.is_regression, fit.unit_weight, fit.criterion, fit.weight_root,
        rules.min_impurity_decrease, splits, max_segment, fit.mdl_stop,
    )  # fmt: skip
    n_todo = todo.shape[0]
    n_chunks = max(1, min(fit.n_chunks, n_todo)) if work >= PARALLEL_MIN_WORK else 1
    # Contiguous ranges of nodes on threads: every node is handled as in one serial call.
    bounds = [np.int64(t * n_todo // n_chunks) for t in range(n_chunks + 1)]
    run_concurrently([
        functools.partial(split_nodes, bounds[t], bounds[t + 1], *split_args)
        for t in range(n_chunks)
    ])  # fmt: skip
    if subset.shape[0] > 0:
        restore_subset_bins(todo[subset], search, nodes, codes, feature, inverse)
    return splits


@kernel
def order_subsets_left_first(
    todo, at, search, nodes, codes, cat_slot, nan_bin, node_bits, feature, cut, nan_code,
    inverse,
):  # fmt: skip
    """Recode the categories of each subset split's feature left-first, in its node's rows.

    For searched row ``todo[i]`` (entry ``at[i]`` of ``cut`` and ``nan_code``): stores the
    split row in ``node_bits[node]`` and the node id as its threshold, recodes the feature
    (``sweep_categorical.order_bins_left_first``), and writes the resulting cut, no NaN code
    and the inverse map (``inverse[i]``) for :func:`restore_subset_bins`.
    """
    for i in range(todo.shape[0]):
        s = todo[i]
        f = feature[s]
        node = search.nodes[s]
        copy_bits(search.bits[s, cat_slot[f]], node_bits[node])
        search.threshold[s, f] = node
        cut[at[i]], row = order_bins_left_first(
            codes, nodes.start[node], nodes.end[node], f, nan_bin[f], node_bits[node]
        )
        nan_code[at[i]] = -1
        for b in range(256):
            inverse[i, b] = row[b]


@kernel
def restore_subset_bins(todo, search, nodes, codes, feature, inverse):
    """Undo :func:`order_subsets_left_first` in the (now partitioned) nodes."""
    for i in range(todo.shape[0]):
        s = todo[i]
        node = search.nodes[s]
        restore_bins(codes, nodes.start[node], nodes.end[node], feature[s], inverse[i])


@kernel
def split_nodes(
    first, stop, todo, feature, cut, nan_code, search, nodes, rows, codes, code, contrib,
    sample_weight, y, position_contrib, position_weight, position_y, is_regression,
    unit_weight, criterion, weight_root, min_impurity_decrease, splits, max_segment, mdl_stop,
):  # fmt: skip
    """Partition and accept the chosen splits of searched rows ``todo[first:stop]``.

    ``search`` is the batch's :class:`BatchSearch` (its ``pos`` are bin cuts), ``nodes``
    the :class:`NodeArrays`, ``splits`` the :class:`SplitBatch` written. Entry ``i`` of
    ``cut`` and ``nan_code`` is row ``todo[i]``'s split: rows whose code is at most ``cut``,
    or is ``nan_code``, go left (subset splits are recoded to such a cut beforehand).

    Notes
    -----
    Node ``s`` touches only its own segment of ``rows`` / ``codes`` / ``code`` and entry
    ``searched[s]`` of the split record, so disjoint node ranges may run concurrently.
    """
    # Uncounted views of the arguments for the loops below (``borrow``).
    (todo, feature, cut, nan_code, searched, search_nodes, out_threshold, out_missing,
     node_start, node_end, node_weight, node_impurity_, rows, codes, code, contrib,
     sample_weight, y, position_contrib, position_weight, position_y,
     child_stats) = borrowed((
        todo, feature, cut, nan_code, search.searched, search.nodes, search.threshold,
        search.missing, nodes.start, nodes.end, nodes.weight, nodes.impurity, rows, codes,
        code, contrib, sample_weight, y, position_contrib, position_weight, position_y,
        splits.child_stats))  # fmt: skip
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (
        np.empty(max_segment, dtype=np.int32),
        np.empty((max_segment, codes.shape[1]), dtype=np.uint8),
        np.empty(max_segment, dtype=np.int32),
        np.empty((0 if unit_weight else max_segment, 3), dtype=np.float64),
    )
    scratch_rows, scratch_codes, scratch_code, scratch_stats = borrowed(owned)
    for i in range(first, stop):
        s = todo[i]
        best_f = feature[s]
        node = search_nodes[s]
        k = searched[s]
        pos, weight_left, weight_right = partition_rows(
            rows, node_start[node], node_end[node], codes, best_f, cut[i], nan_code[i], code,
            position_contrib, position_weight, position_y, is_regression, unit_weight,
            scratch_rows, scratch_codes, scratch_code, scratch_stats, child_stats[k, 0],
            child_stats[k, 1],
        )  # fmt: skip
        impurity_left, impurity_right = children_impurity(
            criterion, child_stats[k], weight_left, weight_right, rows, node_start[node], pos,
            node_end[node], y, sample_weight,
        )  # fmt: skip
        accept_split(
            k, best_f, pos, out_threshold[s, best_f], out_missing[s, best_f], weight_left,
            weight_right, impurity_left, impurity_right, node_impurity_[node],
            node_weight[node], weight_root, min_impurity_decrease, splits, mdl_stop,
        )  # fmt: skip
    keep_alive(owned)


class HistogramPool:
    """Histograms of the open nodes that keep one, in slots of a pool that grows by doubling.

    ``node_slot[node]`` is a node's slot, ``-1`` for none; freed slots are reused last in,
    first out.
    """

    def __init__(self, n_total_bins: int, width: int, capacity: int) -> None:
        self.hist = np.empty((2, n_total_bins, width), dtype=np.float64)
        self.free = [1, 0]
        self.node_slot = np.full(capacity, -1, dtype=np.int64)

    def take(self) -> int:
        """Take a free slot (the pool doubles when none is left)."""
        if not self.free:
            old = self.hist.shape[0]
            self.hist = grown(self.hist, 2 * old)
            self.free = list(range(2 * old - 1, old - 1, -1))
        return self.free.pop()

    def give_back(self, nodes) -> None:
        """Free the slots of ``nodes`` (those that have one)."""
        for node in nodes.tolist():
            slot = int(self.node_slot[node])
            if slot >= 0:
                self.free.append(slot)
                self.node_slot[node] = -1


@kernel
def plan_children_histograms(
    batch, split_feature, first_child, nodes, node_slot, rules, min_stored_rows, need_out,
):  # fmt: skip
    """Which new children need a stored histogram (``need_out[2 * j + side]``, j-th split).

    A child needs one when it will be searched (no leaf rule applies) and has at least
    ``min_stored_rows`` rows; the children of a parent without a stored histogram need none
    (they build theirs when searched). Sets every child's ``node_slot`` to -1.
    """
    child = first_child
    j = 0
    for k in range(batch.shape[0]):
        if split_feature[k] < 0:
            continue
        parent_has = node_slot[batch[k]] >= 0
        for side in range(2):
            c = child + side
            node_slot[c] = -1
            n = nodes.end[c] - nodes.start[c]
            need_out[2 * j + side] = parent_has and n >= min_stored_rows and not is_leaf_by_rules(
                n, nodes.weight[c], nodes.impurity[c], nodes.depth[c], rules.max_depth,
                rules.min_samples_split, rules.min_samples_leaf, rules.min_weight_leaf,
            )  # fmt: skip
        child += 2
        j += 1


def children_histograms(batch, splits, first_child, nodes, pool, fit):
    """Build the histograms of the new children that need one; free the parents' slots.

    Of two siblings the smaller is built from its rows and the larger is the parent's
    histogram minus it (the smaller's histogram is built into the larger's slot when the
    smaller itself needs none).
    """
    split_parents = batch[splits.feature >= 0]
    n_split = split_parents.shape[0]
    need = np.zeros(2 * n_split, dtype=np.uint8)
    plan_children_histograms(
        batch, splits.feature, first_child, nodes, pool.node_slot, fit.rules,
        fit.min_stored_rows, need,
    )  # fmt: skip
    tasks = []  # (slot, start, end) built from rows
    derive = []  # (dst, parent, src): dst = parent - src
    for j, parent in enumerate(split_parents.tolist()):
        parent_slot = int(pool.node_slot[parent])
        if parent_slot < 0:
            continue
        children = (first_child + 2 * j, first_child + 2 * j + 1)
        sizes = [int(nodes.end[c] - nodes.start[c]) for c in children]
        small = 0 if sizes[0] <= sizes[1] else 1
        big = 1 - small
        build_slot = -1
        if need[2 * j + small]:
            build_slot = pool.take()
            pool.node_slot[children[small]] = build_slot
        if need[2 * j + big]:
            big_slot = pool.take()
            pool.node_slot[children[big]] = big_slot
            if build_slot < 0:
                build_slot = big_slot
            derive.append((big_slot, parent_slot, build_slot))
        if build_slot >= 0:
            small_node = children[small]
            tasks.append((build_slot, int(nodes.start[small_node]), int(nodes.end[small_node])))
    if tasks:
        task_slot, task_start, task_end = np.array(tasks, dtype=np.int64).T.copy()
        work = int((task_end - task_start).sum()) * fit.codes.shape[1]
        build_args = (
            task_slot, task_start, task_end, fit.codes, fit.bin_offset, fit.code,
            fit.position_contrib, fit.position_weight, fit.unit_weight, fit.n_sweep, pool.hist,
        )  # fmt: skip
        if fit.parallel and work >= PARALLEL_MIN_WORK:
            # Few large nodes: each node's features split over the threads too.
            n_chunks = fit.n_chunks if task_slot.shape[0] < 2 * fit.n_chunks else 1
            run_workers(build_histograms_worker, fit.n_chunks, *build_args, n_chunks)
        else:
            run_workers(build_histograms_worker, 1, *build_args, 1)
        if derive:
            dst, parent, src = np.array(derive, dtype=np.int64).T.copy()
            subtract_histograms(dst, parent, src, pool.hist)
    pool.give_back(split_parents)


def build_hist(spec, rows, columns, criterion, categorical_search):
    """Grow a tree over binned data (``splitter="hist"``); returns what :func:`build` does.

    Parameters
    ----------
    spec, rows, criterion
        As in :func:`build`.
    columns : BinnedColumns
        ``codes`` (uint8, ``(n_samples, n_features)``, C order; modified: rows are partitioned
        with the nodes), ``bin_offset`` (feature ``f``'s bins in the flat bin axis),
        ``bin_min`` / ``bin_max`` (smallest and largest training value of each bin; thresholds
        are placed between) and ``nan_bin`` (a categorical feature's bin of missing values,
        its largest, ``-1`` if none).
    categorical_search : True or None
        As in :func:`build` (the histogram splitter has no other optional search).

    Notes
    -----
    Same growth orders as :func:`build` (level-wise, or best-first with ``max_leaf_nodes``),
    with the loop in Python. Memory: one histogram of ``n_total_bins x histogram_width``
    float64 per open node with at least ``stored_histogram_min_rows`` rows; a level and the
    parents it derives from hold at most ``8 * n_samples * n_features`` bytes of them. Cost
    per level: O(n_features * n_built) to build histograms, where ``n_built`` counts the
    rows of the smaller children and of small nodes, plus O(n_total_bins * n_sweep) per
    stored-histogram node for the sweeps.
    """
    codes, bin_offset, nan_bin = columns.codes, columns.bin_offset, columns.nan_bin
    bin_min, bin_max = columns.bin_min, columns.bin_max
    code, contrib, sample_weight, y = rows.code, rows.contrib, rows.sample_weight, rows.y
    unit_weight, n_stats, n_sweep = bool(rows.unit_weight), rows.n_stats, rows.n_sweep
    is_regression, max_features, max_leaf_nodes = (
        bool(spec.is_regression),
        int(spec.max_features),
        int(spec.max_leaf_nodes),
    )
    n_chunks, mdl_stop, rng_state = int(spec.n_threads), spec.mdl_stop, spec.rng_state
    parallel, cat_slot, n_words = n_chunks > 1, spec.cat_slot, spec.n_words
    n_samples, n_features = codes.shape
    rules = stopping_rules(spec, rows)
    n_hist = histogram_width(n_sweep, unit_weight)
    capacity = INITIAL_CAPACITY
    nodes = new_nodes(capacity, n_stats)
    rows = np.arange(n_samples, dtype=np.int32)
    # No absolute_error or multi-output search in the histogram splitter.
    weight_root = init_root(
        nodes, rows, code, contrib, sample_weight, y, is_regression, criterion, (None, None)
    )
    # From here on indexed by position, like codes (partitioned); rows is still 0 .. n - 1
    # here. Unweighted classification reads none of contrib, weight and target by position.
    n_positioned = 0 if unit_weight else n_samples
    # The row sweeps of small nodes are the accelerator here. The bin sweep's entropy screen
    # (its xlogx table) is compiled into every fit, so every fit uses it: plain-tier entropy
    # fits took 0.67-0.86x the time with it (5k-20k rows x 20, 3-50 classes; same trees).
    accelerate = takes_accelerators(
        n_samples, n_features, n_sweep, criterion, unit_weight, hist=True
    )
    fit = BinnedFit(
        codes, bin_offset, *every_bin_listed(bin_offset), bin_min, bin_max,
        features_with_near_ties(bin_offset, bin_min, bin_max),
        rows, code.copy(), contrib, sample_weight, y, contrib[:n_positioned].copy(),
        sample_weight[:n_positioned].copy(),
        y[:n_positioned].copy() if is_regression else y[:0].copy(), bool(unit_weight),
        bool(is_regression), int(n_sweep), int(criterion),
        screening_table(n_samples, unit_weight, criterion),
        rules, int(max_features),
        float(weight_root), rng_state, bool(parallel), int(n_chunks), switch(mdl_stop), cat_slot,
        nan_bin, categorical_search,
        stored_histogram_min_rows(n_features, int(bin_offset[n_features]), n_hist),
        # The row sweeps of small nodes (an accelerator).
        (switch(accelerate),),
    )  # fmt: skip
    node_count = 1
    best_first = max_leaf_nodes > 0
    n_batch = speculative_batch_limit(max_features, n_features, False)
    frontier = Frontier(n_stats, max_leaf_nodes, n_batch) if best_first else None
    node_bits = np.zeros((capacity, n_words + 1), dtype=np.uint64)
    pool = HistogramPool(int(bin_offset[n_features]), n_hist, capacity)
    root_searched = not leaf_by_rules(n_samples, nodes.weight[0], nodes.impurity[0], 0, rules)
    if n_samples >= fit.min_stored_rows and root_searched:
        slot = pool.take()
        pool.node_slot[0] = slot
        # The root's features split over the threads when the fit is threaded.
        n_threads = fit.n_chunks if n_samples * n_features >= PARALLEL_MIN_WORK else 1
        run_workers(
            build_histograms_worker, n_threads, np.full(1, slot, dtype=np.int64),
            np.zeros(1, dtype=np.int64), np.full(1, n_samples, dtype=np.int64), codes,
            bin_offset, fit.code, fit.position_contrib, fit.position_weight, fit.unit_weight,
            fit.n_sweep, pool.hist, n_threads,
        )  # fmt: skip

    batch = np.zeros(1, dtype=np.int64)
    while batch.shape[0] > 0:
        splits = evaluate_batch_hist(batch, nodes, pool.node_slot, pool.hist, node_bits, fit)
        pool.give_back(batch[splits.feature < 0])  # leaves for good: histograms not needed
        if best_first:
            frontier.queue(batch, splits)
            batch, splits = frontier.next_batch()
            if batch.shape[0] == 0:
                break
        capacity, nodes = make_room(splits, node_count, capacity, nodes)
        if capacity > node_bits.shape[0]:
            pool.node_slot = grown(pool.node_slot, capacity, -1)
            node_bits = grown(node_bits, capacity, 0)
        first_child = node_count
        node_count = append_split_children(batch, splits, node_count, nodes)
        children_histograms(batch, splits, first_child, nodes, pool, fit)
        batch = np.arange(first_child, node_count, dtype=np.int64)
    if best_first:
        return frontier.finished(nodes, node_bits, cat_slot)
    return finished_tree(nodes, node_count), node_bits[:node_count].copy()


@kernel
def breadth_first_order(left, right):
    """Node ids of a tree listed in breadth-first order (children left before right).

    Returns
    -------
    ndarray of int64
        ``order[new_id] = old_id``.
    """
    n = left.shape[0]
    order = np.empty(n, dtype=np.int64)
    order[0] = 0
    head = 0
    tail = 1
    while head < tail:
        node = order[head]
        head += 1
        if left[node] != TREE_LEAF:
            order[tail] = left[node]
            order[tail + 1] = right[node]
            tail += 2
    return order
