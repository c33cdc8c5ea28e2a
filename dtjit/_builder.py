"""Level-wise (breadth-first) and best-first tree builders, over presorted or binned data.

Both builders share two steps, applied to a *batch* of nodes:

1. :func:`evaluate_batch`: stopping rules, candidate features, the best split of every
   (node, feature) pair, a deterministic reduction (strictly better wins, so ties go to the
   lowest feature index, then the lowest threshold), the children's impurities and the
   ``min_impurity_decrease`` test.
2. :func:`apply_splits`: children appended in batch order, their statistics, and the stable
   partition of every feature's segments.

The level-wise builder's batch is a whole level, so node ids come out in breadth-first order
by construction. The best-first builder (``max_leaf_nodes``) expands one node at a time in
order of improvement and renumbers to breadth-first order at the end.

The optional split searches (categorical subsets, ``absolute_error``, multi-output) are
compile-time choices (:func:`search_switches`): numba compiles every branch of a kernel, and
those searches were most of a cold first fit's compile time. A fit that uses one runs the
builder's loop in Python over the compiled kernels (:func:`builder_for`), so it compiles
its own :func:`evaluate_batch` but no second copy of the builder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import prange

from ._absolute_error import (
    MEDIAN_STAT,
    absolute_error_of_segment,
    absolute_error_splits_parallel,
    absolute_error_splits_serial,
    rank_targets,
)
from ._borrow import borrowed, keep_alive
from ._categorical import (
    categorical_splits_binned,
    categorical_splits_presorted,
    mark_goes_left,
    order_bins_left_first,
    restore_bins,
    split_segment_ids,
)
from ._criterion import impurity_improvement, node_impurity, poisson_loss
from ._gain_ratio import gain_ratio_feature_binned, gain_ratio_feature_presorted
from ._hist import (
    build_histograms_parallel,
    build_histograms_serial,
    constant_features,
    features_with_near_ties,
    histogram_width,
    partition_rows,
    subtract_histograms,
    sweep_parallel,
    sweep_serial,
)
from ._jit import (
    ABSOLUTE_ERROR,
    EPSILON,
    GAIN_RATIO,
    MULTI_OUTPUT,
    PARALLEL_MIN_WORK,
    POISSON,
    TREE_LEAF,
    TREE_UNDEFINED,
    inline_kernel,
    kernel,
    parallel_kernel,
)
from ._mdlp import mdlp_accepts_split
from ._multioutput import (
    multi_output_splits_parallel,
    multi_output_splits_serial,
    stats_of_rows,
)
from ._shared_best import new_shared_best
from ._splitter import (
    NO_SPLIT,
    UPKEEP_ALWAYS,
    UPKEEP_NEVER,
    UPKEEP_UNLESS_CONSTANT,
    best_splits_parallel,
    best_splits_serial,
    copy_rows,
    count_missing,
    count_sorted_codes,
    draw_candidate_features,
    new_side_flags,
    partition_parallel,
    partition_serial,
    presorted_constant_features,
    raise_side_flags,
    rand_below,
    rand_uniform,
    renumber_samples,
    screening_table,
    segment_stats,
    set_side_flag,
)
from ._two_valued import (
    bits_in_row_order,
    high_side_counts,
    mark_two_valued_sides,
    two_valued_splits_parallel,
    two_valued_splits_serial,
)

INITIAL_CAPACITY = 64
# The builder renumbers the samples (``_splitter.renumber_samples``) when its largest open
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
        Criterion code, multi-output codes included (``_jit.multi_output_criterion``).
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


def builder_for(
    builder: Any, switches: tuple[bool | None, ...], wide_codes: bool = False
) -> Callable[..., Any]:
    """Return what to call for ``builder`` (:func:`build` or :func:`build_hist`) in a fit.

    The common fit (every one of the :func:`search_switches` None, one-byte class codes)
    gets the compiled builder. A fit with an optional search, or whose presorted class codes
    are uint16 (``wide_codes``: more than 256 classes, ``_estimators._sorted_codes``), runs
    the same function's Python code instead (``builder.py_func``): its loop over levels, or
    over best-first steps, calls the compiled kernels (:func:`evaluate_batch`,
    :func:`apply_splits`, the small helpers) from Python.

    Notes
    -----
    Compiling a builder links every kernel it calls into one module that LLVM optimises and
    translates again: about 7 s per specialisation, on top of the kernels' own compilation.
    The Python loop costs tens of microseconds per level (per split when growing best-first)
    and saves those seconds for each optional search. The builders' bodies call no helper
    once per node, so a level is a handful of calls either way.
    """
    if not wide_codes and all(switch is None for switch in switches):
        return builder
    # A plain function when numba's JIT is disabled (NUMBA_DISABLE_JIT=1).
    return getattr(builder, "py_func", builder)


# Added to a node's missing_left when its NaN direction was learned from NaN rows in the
# split feature (not chosen by the larger-child rule): the builders return both in one array.
LEARNED_FLAG = 2


@inline_kernel
def largest_segment(nodes, node_start, node_end):
    """Rows of the largest of ``nodes`` (a helper, not a loop, in the builders' Python code)."""
    largest = 0
    for node in nodes:
        largest = max(largest, node_end[node] - node_start[node])
    return largest


@inline_kernel
def all_ones(a):
    """Whether every entry of ``a`` is 1."""
    for x in a:
        if x != 1.0:
            return False
    return True


@inline_kernel
def grow(a, capacity, fill):
    """Return ``a`` copied into a larger array of ``capacity`` rows, new rows set to ``fill``."""
    out = grow_unset(a, capacity)
    out[a.shape[0] :] = fill
    return out


@inline_kernel
def grow_unset(a, capacity):
    """Return ``a`` copied into a larger array of ``capacity`` rows, new rows not written.

    Notes
    -----
    The node arrays grow this way: pages of rows not written yet are not resident, so the
    spare capacity costs no memory (about 1x X less peak on a 10-class 1M x 20 fit), and
    every field of a node is written when the node is created (:func:`append_children`).
    """
    out = np.empty((capacity,) + a.shape[1:], dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


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


@inline_kernel
def new_splits(n_batch, n_stats):
    """Allocate a batch's split record, every node a leaf until a split is accepted.

    The tuple is ``split_feature`` (-1: leaf), ``split_pos``, ``split_threshold``,
    ``improvement``, ``child_stats``, ``child_weight``, ``child_impurity``,
    ``split_missing`` (where the node's NaN rows go: 1 left, 0 right, -1 none in the node).
    ``split_pos`` is the end of the left child's segment once the node is partitioned.
    """
    return (
        np.full(n_batch, -1, dtype=np.int32),
        np.zeros(n_batch, dtype=np.int64),
        np.zeros(n_batch, dtype=np.float64),
        np.zeros(n_batch, dtype=np.float64),
        np.zeros((n_batch, 2, n_stats), dtype=np.float64),
        np.zeros((n_batch, 2), dtype=np.float64),
        np.zeros((n_batch, 2), dtype=np.float64),
        np.full(n_batch, -1, dtype=np.int8),
    )


@inline_kernel
def nodes_to_search(
    nodes, node_start, node_end, node_depth, node_weight, node_impurity_, max_depth,
    min_samples_split, min_samples_leaf, min_weight_leaf,
):  # fmt: skip
    """Batch positions and ids of the nodes no leaf rule stops from being searched."""
    searched = np.empty(nodes.shape[0], dtype=np.int64)
    n_searched = 0
    for k in range(nodes.shape[0]):
        node = nodes[k]
        if not is_leaf_by_rules(
            node_end[node] - node_start[node], node_weight[node], node_impurity_[node],
            node_depth[node], max_depth, min_samples_split, min_samples_leaf, min_weight_leaf,
        ):  # fmt: skip
            searched[n_searched] = k
            n_searched += 1
    searched = searched[:n_searched]
    search_nodes = np.empty(n_searched, dtype=np.int64)
    for s in range(n_searched):
        search_nodes[s] = nodes[searched[s]]
    return searched, search_nodes


@inline_kernel
def best_feature(proxies):
    """Feature of the strictly greatest proxy (ties: the lowest index); -1 if none is finite."""
    best_f = np.int64(-1)
    best_proxy = NO_SPLIT
    for f in range(proxies.shape[0]):
        if proxies[f] > best_proxy:
            best_proxy = proxies[f]
            best_f = f
    return best_f


@inline_kernel
def segment_impurity(
    criterion, stats, weight, idx, start, end, y, sample_weight, absolute_error_search
):
    """Impurity of the node holding the samples ``idx[start:end]``, with statistics ``stats``.

    ``poisson`` and ``absolute_error`` read the samples (O(n) and O(n log n)); the
    ``absolute_error`` median is written to ``stats[MEDIAN_STAT]``. The other criteria need
    only ``stats`` (``_criterion.node_impurity``). ``absolute_error_search``: see
    :func:`search_switches` (None leaves the median computation out of the compiled code).
    """
    # Targets all equal (range ``stats[2] == 0``): pure, impurity 0 as in node_impurity,
    # whatever the rounding of y / mean or of the pinball identity (1e-16 to 6e-14 above 0,
    # and such nodes were split with zero gain). A node of zeros keeps poisson's inf.
    if criterion == POISSON:
        loss = poisson_loss(idx, start, end, y, sample_weight, stats[0], weight)
        return 0.0 if stats[2] == 0.0 and loss < np.inf else loss
    if absolute_error_search is not None and criterion == ABSOLUTE_ERROR:
        median, impurity = absolute_error_of_segment(idx, start, end, y, sample_weight)
        stats[MEDIAN_STAT] = median
        return 0.0 if stats[2] == 0.0 else impurity
    return node_impurity(criterion, stats, weight)


@inline_kernel
def reads_rows(criterion):
    """Whether the criterion's child impurity reads the child's samples (not only its sums)."""
    return criterion == POISSON or criterion == ABSOLUTE_ERROR


@kernel
def accept_split(
    k, f, pos, split_threshold_k, missing, weight_left, weight_right, criterion, impurity,
    weight, weight_root, min_impurity_decrease, splits, idx, start, end, y, sample_weight,
    mdl_stop, absolute_error_search,
):  # fmt: skip
    """Record batch node ``k``'s best split unless a stopping rule rejects it.

    ``splits`` is the batch's split record (:func:`new_splits`); its ``child_stats[k]``
    holds the children's statistics on entry. ``idx[start:pos]`` and ``idx[pos:end]`` are
    the children's samples (read by the criteria whose impurity needs them). The children's
    impurities and the weighted impurity decrease are computed here, and the node stays a
    leaf (``split_feature[k] == -1``) if ``improvement + EPSILON < min_impurity_decrease``,
    or, with ``mdl_stop``, if the split fails Fayyad & Irani's MDLP test.

    Notes
    -----
    A kernel, called once per split node: inlined, its impurity code was compiled again in
    every specialisation of :func:`evaluate_batch` (about 1 s each).
    """
    split_feature, split_pos, split_threshold, improvement, child_stats, child_weight = splits[:6]
    child_impurity = splits[6]
    if mdl_stop and not mdlp_accepts_split(
        child_stats[k, 0], child_stats[k, 1], weight_left, weight_right
    ):
        return
    impurity_left = segment_impurity(
        criterion, child_stats[k, 0], weight_left, idx, start, pos, y, sample_weight,
        absolute_error_search,
    )  # fmt: skip
    impurity_right = segment_impurity(
        criterion, child_stats[k, 1], weight_right, idx, pos, end, y, sample_weight,
        absolute_error_search,
    )  # fmt: skip
    gain = impurity_improvement(
        impurity, impurity_left, impurity_right, weight_left, weight_right, weight, weight_root
    )
    if gain + EPSILON < min_impurity_decrease:
        return
    child_weight[k, 0] = weight_left
    child_weight[k, 1] = weight_right
    child_impurity[k, 0] = impurity_left
    child_impurity[k, 1] = impurity_right
    split_feature[k] = f
    split_pos[k] = pos
    split_threshold[k] = split_threshold_k
    improvement[k] = gain
    splits[7][k] = missing


@inline_kernel
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
    n_categorical = 0
    for f in range(cat_slot.shape[0]):
        if cat_slot[f] >= 0:
            n_categorical += 1
    cat_candidate = candidate.copy()
    for f in range(cat_slot.shape[0]):
        if cat_slot[f] >= 0:
            candidate[:, f] = 0
    out_bits = np.zeros((candidate.shape[0], n_categorical, node_bits.shape[1]), dtype=np.uint64)
    return cat_candidate, out_bits


@kernel
def draw_candidates(
    search_nodes, node_start, node_end, sorted_val, max_features, rng_state, random_split,
    has_two_valued, two_slot,
):  # fmt: skip
    """Candidate features of every searched node, and the random splitter's thresholds.

    Returns ``candidate`` (uint8, one row per node of ``search_nodes``), and
    ``out_threshold`` / ``out_missing``, the threshold and NaN side drawn per candidate with
    ``random_split`` (``out_missing`` is -1 elsewhere). With ``has_two_valued``, features
    with a two-valued slot (``two_slot[f] >= 0``) are never candidates of the sweep.
    Random numbers are drawn serially, per node the features first, then one threshold per
    candidate in feature order.

    Notes
    -----
    A kernel of its own rather than part of :func:`evaluate_batch`, which numba compiles
    once per combination of optional searches: this part is the same in all of them.
    """
    n_searched = search_nodes.shape[0]
    n_features = sorted_val.shape[0]
    candidate = np.empty((n_searched, n_features), dtype=np.uint8)
    f_order = np.empty(n_features, dtype=np.int64)
    constant = np.zeros(n_features, dtype=np.uint8)
    out_threshold = np.empty((n_searched, n_features), dtype=np.float64)
    out_missing = np.full((n_searched, n_features), -1, dtype=np.int8)
    for s in range(n_searched):
        node = search_nodes[s]
        start = node_start[node]
        end = node_end[node]
        if max_features < n_features or random_split:
            presorted_constant_features(start, end, sorted_val, constant)
        draw_candidate_features(f_order, max_features, constant, rng_state, candidate[s])
        if has_two_valued:
            for f in range(n_features):
                if two_slot[f] >= 0:
                    candidate[s, f] = 0  # searched by _two_valued, not swept
        if random_split:
            # One threshold per searched non-constant feature, drawn in feature order,
            # serially here so the parallel sweep below stays reproducible; then, if the
            # node has NaN in the feature, their side by a coin (scikit-learn's order).
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
    return candidate, out_threshold, out_missing


@kernel
def evaluate_batch(
    nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
    sorted_idx, sorted_val, sorted_code, code, contrib, sample_weight, unit_weight,
    unit_sample_weight, xlogx, y, is_regression, n_sweep, criterion, max_depth,
    min_samples_split,
    min_samples_leaf, min_weight_leaf, min_impurity_decrease, max_features, weight_root,
    rng_state, parallel,
    n_chunks, random_split, mdl_stop, cat_slot, node_bits, two_valued, row_feature,
    categorical_search, absolute_error_search, multi_output_search,
):  # fmt: skip
    """Find the split of every node of a batch, or decide it is a leaf.

    Categorical features (``cat_slot[f] >= 0``, see ``_categorical``) get a subset split;
    when one wins, its split row goes to ``node_bits[node]`` and its ``threshold`` is the
    node id (the estimator turns both into the tree's bitset table).

    With ``random_split`` (``splitter="random"``) each searched non-constant feature gets one
    threshold drawn uniformly between the node's smallest and largest value, and the best of
    those is chosen (scikit-learn's random splitter). With ``criterion == GAIN_RATIO`` the
    feature is chosen by C4.5's rule (``_gain_ratio``); ``mdl_stop``: see :func:`accept_split`.
    A multi-output criterion code (``_jit.MULTI_OUTPUT``) searches with ``_multioutput``'s
    sweep, whose per-row arrays ``code``, ``contrib`` and ``y`` hold one entry per output.
    ``two_valued`` is ``(slot, threshold, high_bits)`` of ``_two_valued`` (no slot set: none),
    ``high_bits`` in the order of feature ``row_feature``'s positions; the features with a
    slot are searched there, from the segments of ``row_feature``.

    Returns
    -------
    split_feature : ndarray of int32
        Chosen feature per batch node, ``-1`` for a leaf.
    split_pos : ndarray of int64
        First position of the right child in the node's segment.
    split_threshold, improvement : ndarray of float64
        Threshold and weighted impurity decrease of the chosen split.
    child_stats : ndarray of float64, shape (n_batch, 2, n_stats)
        Statistics of the left and right child of each chosen split (they were needed for
        the improvement; :func:`apply_splits` stores them instead of summing again).
    child_weight, child_impurity : ndarray of float64, shape (n_batch, 2)
        Weight and impurity of those children.

    Notes
    -----
    Leaf rules, in scikit-learn's order: ``depth >= max_depth``, ``n < min_samples_split``,
    ``n < 2 * min_samples_leaf``, ``W < 2 * min_weight_leaf``, ``impurity <= EPSILON``; then no
    valid candidate, or ``improvement + EPSILON < min_impurity_decrease``.
    Random numbers (``max_features``, random thresholds) are drawn here, serially, in batch
    order: per node the features first, then one threshold per candidate in feature order.
    """
    two_slot, two_threshold, high_bits = two_valued
    # Uncounted views of the arguments for the loops below (``_borrow``).
    (nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_, sorted_idx,
     sorted_val, sorted_code, code, contrib, sample_weight, y, rng_state, cat_slot, node_bits,
     two_slot, two_threshold, high_bits) = borrowed((
        nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
        sorted_idx, sorted_val, sorted_code, code, contrib, sample_weight, y, rng_state, cat_slot,
        node_bits, two_slot, two_threshold, high_bits))  # fmt: skip
    n_features = sorted_idx.shape[0]
    splits = new_splits(nodes.shape[0], node_stats.shape[1])
    split_feature, split_pos, split_threshold, improvement, child_stats, _, _ = splits[:7]
    has_two_valued = high_bits.shape[1] > 0
    searched, search_nodes = nodes_to_search(
        nodes, node_start, node_end, node_depth, node_weight, node_impurity_, max_depth,
        min_samples_split, min_samples_leaf, min_weight_leaf,
    )  # fmt: skip
    n_searched = searched.shape[0]
    if n_searched == 0:
        return splits
    work = 0
    for node in search_nodes:
        work += node_end[node] - node_start[node]

    candidate, out_threshold, out_missing = draw_candidates(
        search_nodes, node_start, node_end, sorted_val, max_features, rng_state, random_split,
        has_two_valued, two_slot,
    )  # fmt: skip
    out_proxy = np.full((n_searched, n_features), NO_SPLIT)  # the sweep skips non-candidates
    out_pos = np.empty((n_searched, n_features), dtype=np.int64)
    cat_candidate, out_bits = hold_categorical_candidates(candidate, cat_slot, node_bits)
    # Each node's best proxy so far, which the exact sweeps' pre-tests start from
    # (``_shared_best``): the two-valued features are scored first, for that start.
    node_best = new_shared_best(n_searched)
    if has_two_valued:
        codes = sorted_code[row_feature]
        if parallel and work * high_bits.shape[1] * 64 >= PARALLEL_MIN_WORK:
            two_valued_splits_parallel(
                search_nodes, two_slot, two_threshold, codes, node_start, node_end,
                node_stats, node_weight, high_bits, n_sweep, criterion, min_samples_leaf,
                min_weight_leaf, out_proxy, out_pos, out_threshold, out_missing, node_best,
                n_chunks,
            )  # fmt: skip
        else:
            two_valued_splits_serial(
                search_nodes, two_slot, two_threshold, codes, node_start, node_end,
                node_stats, node_weight, high_bits, n_sweep, criterion, min_samples_leaf,
                min_weight_leaf, out_proxy, out_pos, out_threshold, out_missing, node_best,
            )  # fmt: skip
    # A classification row's contribution is its weight, the same value (``_estimators``'
    # _classification_sweep), so the sweep reads both from contrib: its second read of a row
    # then hits the cache line its first one loaded, where a read of sample_weight missed
    # again (a deep node's rows sit at scattered ids).
    sweep_weight = sample_weight if is_regression else contrib
    # The *_search switches are None when the fit cannot use that search: numba then prunes
    # the branch from this specialisation (see :func:`search_switches`).
    if absolute_error_search is not None:
        max_segment = np.int64(0)
        for node in search_nodes:
            max_segment = max(max_segment, node_end[node] - node_start[node])
        rank_of = np.empty(sorted_idx.shape[1], dtype=np.int64)
        sorted_y = np.empty(sorted_idx.shape[1], dtype=np.float64)
        rank_targets(search_nodes, node_start, node_end, sorted_idx[0], y, rank_of, sorted_y)
        if parallel and work * n_features >= PARALLEL_MIN_WORK:
            absolute_error_splits_parallel(
                search_nodes, candidate, node_start, node_end, node_weight, sorted_idx,
                sorted_val, rank_of, sorted_y, sample_weight, min_samples_leaf,
                min_weight_leaf, random_split, max_segment, out_proxy, out_pos, out_threshold,
                out_missing,
            )  # fmt: skip
        else:
            absolute_error_splits_serial(
                search_nodes, candidate, node_start, node_end, node_weight, sorted_idx,
                sorted_val, rank_of, sorted_y, sample_weight, min_samples_leaf,
                min_weight_leaf, random_split, max_segment, out_proxy, out_pos, out_threshold,
                out_missing,
            )  # fmt: skip
    elif multi_output_search is not None:
        if parallel and work * n_features >= PARALLEL_MIN_WORK:
            multi_output_splits_parallel(
                search_nodes, candidate, node_start, node_end, node_stats, node_weight,
                sorted_idx, sorted_val, code, contrib, sample_weight, n_sweep, criterion,
                min_samples_leaf, min_weight_leaf, random_split, out_proxy, out_pos,
                out_threshold, out_missing,
            )  # fmt: skip
        else:
            multi_output_splits_serial(
                search_nodes, candidate, node_start, node_end, node_stats, node_weight,
                sorted_idx, sorted_val, code, contrib, sample_weight, n_sweep, criterion,
                min_samples_leaf, min_weight_leaf, random_split, out_proxy, out_pos,
                out_threshold, out_missing,
            )  # fmt: skip
    elif parallel and work * n_features >= PARALLEL_MIN_WORK:
        best_splits_parallel(
            search_nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx,
            sorted_val, sorted_code, contrib, sweep_weight, unit_weight, unit_sample_weight,
            xlogx, n_sweep, criterion, min_samples_leaf, min_weight_leaf, random_split, out_proxy,
            out_pos, out_threshold, out_missing, node_best, n_chunks,
        )  # fmt: skip
    else:
        best_splits_serial(
            search_nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx,
            sorted_val, sorted_code, contrib, sweep_weight, unit_weight, unit_sample_weight,
            xlogx, n_sweep, criterion, min_samples_leaf, min_weight_leaf, random_split, out_proxy,
            out_pos, out_threshold, out_missing, node_best,
        )  # fmt: skip
    if categorical_search is not None and out_bits.shape[1] > 0:
        categorical_splits_presorted(
            parallel and work * out_bits.shape[1] >= PARALLEL_MIN_WORK, search_nodes,
            cat_candidate, cat_slot, node_start, node_end, node_stats,
            node_weight, sorted_idx, sorted_val, sorted_code, contrib, sample_weight, n_sweep,
            criterion, min_samples_leaf, min_weight_leaf, out_proxy, out_pos, out_bits,
        )  # fmt: skip

    # Poisson and absolute error read the children's samples as the runs idx[start:pos] and
    # idx[pos:end]. A split whose left child is not a prefix of the split feature's sorted
    # segment (NaN rows sent left, or a subset split) has its children's ids copied here,
    # left first, at the node's positions (nodes of a batch own disjoint segments).
    child_rows = np.empty(0, dtype=np.int32)
    for s in range(n_searched):
        node = search_nodes[s]
        k = searched[s]
        start = node_start[node]
        end = node_end[node]
        if criterion == GAIN_RATIO:
            best_f = gain_ratio_feature_presorted(
                out_proxy[s], out_pos[s], out_missing[s], sorted_idx, sorted_val, start, end,
                sample_weight, unit_weight, node_impurity_[node], node_weight[node], cat_slot,
                out_bits[s],
            )  # fmt: skip
        else:
            best_f = best_feature(out_proxy[s])
        if best_f < 0:
            continue
        pos = out_pos[s, best_f]
        missing = out_missing[s, best_f]
        idx = sorted_idx[best_f]
        rows = idx
        if categorical_search is not None and cat_slot[best_f] >= 0:
            # A subset split: its rows are not a prefix of the sorted segment. (NaN is one
            # of its categories: its side is in the split row, not in out_missing.)
            node_bits[node] = out_bits[s, cat_slot[best_f]]
            out_threshold[s, best_f] = node
            left_ids, right_ids = split_segment_ids(
                idx, sorted_val[best_f], start, end, node_bits[node]
            )
            n_missing_left = 0
            weight_left = segment_stats(
                left_ids, np.int64(0), left_ids.shape[0], np.int64(0), np.int64(0), code,
                contrib, sample_weight, y, is_regression, child_stats[k, 0],
            )  # fmt: skip
            weight_right = segment_stats(
                right_ids, np.int64(0), right_ids.shape[0], np.int64(0), np.int64(0), code,
                contrib, sample_weight, y, is_regression, child_stats[k, 1],
            )  # fmt: skip
            if reads_rows(criterion):
                if child_rows.shape[0] == 0:
                    child_rows = np.empty(idx.shape[0], dtype=np.int32)
                at = copy_rows(left_ids, np.int64(0), left_ids.shape[0], child_rows, start)
                copy_rows(right_ids, np.int64(0), right_ids.shape[0], child_rows, at)
                rows = child_rows
        elif has_two_valued and two_slot[best_f] >= 0:
            # Its own segment is stale: the right child's class counts are read from the
            # rows taking high, the left child's are the rest (row counts, so exact).
            n_missing_left = 0
            weight_right = high_side_counts(
                sorted_code[row_feature], start, end, high_bits, two_slot[best_f],
                child_stats[k, 1],
            )  # fmt: skip
            weight_left = node_weight[node] - weight_right
            for c in range(child_stats.shape[2]):
                child_stats[k, 0, c] = node_stats[node, c] - child_stats[k, 1, c]
        else:
            # The NaN rows are the tail [end_left, end); sent left, they join [start, pos).
            n_missing_left = count_missing(sorted_val[best_f], start, end) if missing == 1 else 0
            end_right = end - n_missing_left
            if unit_weight and criterion < MULTI_OUTPUT:
                # Row counts: from the split feature's sorted codes, read in order (this
                # loop is serial, and a gather per row cost a cache miss each). Only the
                # smaller child is counted: the other's counts are the node's minus those,
                # exact in float64 like every count, and this serial pass reads at most
                # half of the segment.
                codes = sorted_code[best_f]
                small = 0 if pos - start + end - end_right <= end_right - pos else 1
                if small == 0:
                    weight_left = count_sorted_codes(codes, start, pos, end_right, end,
                                                     child_stats[k, 0])  # fmt: skip
                    weight_right = node_weight[node] - weight_left
                else:
                    weight_right = count_sorted_codes(codes, pos, end_right, end_right,
                                                      end_right, child_stats[k, 1])  # fmt: skip
                    weight_left = node_weight[node] - weight_right
                for c in range(child_stats.shape[2]):
                    child_stats[k, 1 - small, c] = node_stats[node, c] - child_stats[k, small, c]
            else:
                weight_left = stats_of_rows(
                    criterion, multi_output_search, idx, start, pos, end_right, end, code,
                    contrib, sample_weight, y, is_regression, child_stats[k, 0],
                )  # fmt: skip
                weight_right = stats_of_rows(
                    criterion, multi_output_search, idx, pos, end_right, end_right, end_right,
                    code, contrib, sample_weight, y, is_regression, child_stats[k, 1],
                )  # fmt: skip
            if n_missing_left > 0 and reads_rows(criterion):
                if child_rows.shape[0] == 0:
                    child_rows = np.empty(idx.shape[0], dtype=np.int32)
                at = copy_rows(idx, start, pos, child_rows, start)
                at = copy_rows(idx, end_right, end, child_rows, at)
                copy_rows(idx, pos, end_right, child_rows, at)
                rows = child_rows
        accept_split(
            k, best_f, pos + n_missing_left, out_threshold[s, best_f], missing, weight_left,
            weight_right, criterion, node_impurity_[node], node_weight[node], weight_root,
            min_impurity_decrease, splits, rows, start, end, y, sample_weight, mdl_stop,
            absolute_error_search,
        )  # fmt: skip
    return splits


@inline_kernel
def append_children(
    k, node, first_child, split_feature, split_pos, split_threshold, split_missing,
    child_stats, child_weight, child_impurity, feature, threshold, left, right, missing_left,
    node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
):  # fmt: skip
    """Make batch node ``k`` (id ``node``) a split with children ``first_child`` and the next.

    ``missing_left`` is the side learned for the node's NaN rows, plus ``LEARNED_FLAG``
    (the estimator separates the two); when the node had none in the split feature,
    scikit-learn's rule: NaN goes to the child with strictly more training samples, else
    right.
    """
    start = node_start[node]
    end = node_end[node]
    pos = split_pos[k]
    feature[node] = split_feature[k]
    threshold[node] = split_threshold[k]
    left[node] = first_child
    right[node] = first_child + 1
    if split_missing[k] >= 0:
        missing_left[node] = split_missing[k] + LEARNED_FLAG
    else:
        missing_left[node] = 1 if pos - start > end - pos else 0
    for side in range(2):
        child = first_child + side
        # A leaf until it is split; written here, as grown storage is not pre-filled.
        feature[child] = TREE_UNDEFINED
        threshold[child] = TREE_UNDEFINED
        left[child] = TREE_LEAF
        right[child] = TREE_LEAF
        missing_left[child] = 0
        node_start[child] = start if side == 0 else pos
        node_end[child] = pos if side == 0 else end
        node_depth[child] = node_depth[node] + 1
        node_stats[child] = child_stats[k, side]
        node_weight[child] = child_weight[k, side]
        node_impurity_[child] = child_impurity[k, side]


@inline_kernel
def append_split_children(
    nodes, split_feature, split_pos, split_threshold, split_missing, child_stats, child_weight,
    child_impurity, node_count, feature, threshold, left, right, missing_left, node_start,
    node_end, node_depth, node_stats, node_weight, node_impurity_,
):  # fmt: skip
    """:func:`append_children` for every batch node with ``split_feature >= 0``, in batch order.

    Returns the new node count.
    """
    for k in range(nodes.shape[0]):
        if split_feature[k] >= 0:
            append_children(
                k, nodes[k], node_count, split_feature, split_pos, split_threshold,
                split_missing, child_stats, child_weight, child_impurity, feature, threshold,
                left, right, missing_left, node_start, node_end, node_depth, node_stats,
                node_weight, node_impurity_,
            )  # fmt: skip
            node_count += 2
    return node_count


@kernel
def apply_splits(
    nodes, split_feature, split_pos, split_threshold, split_missing, child_stats, child_weight,
    child_impurity, node_count, feature, threshold, left, right, missing_left, node_start, node_end,
    node_depth, node_stats, node_weight, node_impurity_, sorted_idx, sorted_val, sorted_code,
    goes_left, parallel, n_chunks, cat_slot, node_bits, two_valued, row_feature, upkeep,
    max_depth, min_samples_split, min_samples_leaf, min_weight_leaf,
):  # fmt: skip
    """Split the batch nodes whose ``split_feature >= 0``; children get ids from ``node_count``.

    The storage arrays must have room for two children per split node.

    A node whose two children are leaves by the rules alone (:func:`is_leaf_by_rules`: the
    last level of a ``max_depth`` tree, pure or too small children) is not partitioned: the
    children's statistics and impurities were computed from the parent's segment during the
    search, and nothing reads a leaf's segment. At ``max_depth=10`` that is the last level's
    partition, a tenth of the partition work.

    Returns
    -------
    int
        The new node count.

    Notes
    -----
    Children are appended in batch order, left before right, so ``right == left + 1`` and a
    batch that is one level yields breadth-first ids. ``two_valued`` and ``row_feature``: see
    :func:`evaluate_batch`; ``upkeep``: see ``_splitter.partition_feature``.
    """
    two_slot, _, high_bits = two_valued
    # Uncounted views of the arguments for the loops below (``_borrow``).
    (nodes, split_feature, split_pos, split_threshold, split_missing, child_stats, child_weight,
     child_impurity, feature, threshold, left, right, missing_left, node_start, node_end,
     node_depth, node_stats, node_weight, node_impurity_, sorted_idx, sorted_val, sorted_code,
     goes_left, cat_slot, node_bits, two_slot, high_bits) = borrowed((
        nodes, split_feature, split_pos, split_threshold, split_missing, child_stats,
        child_weight, child_impurity, feature, threshold, left, right, missing_left, node_start,
        node_end, node_depth, node_stats, node_weight, node_impurity_, sorted_idx, sorted_val,
        sorted_code, goes_left, cat_slot, node_bits, two_slot, high_bits))  # fmt: skip
    n_batch = nodes.shape[0]
    split_nodes = np.empty(n_batch, dtype=np.int64)
    split_features = np.empty(n_batch, dtype=np.int32)
    flip = np.zeros(n_batch, dtype=np.uint8)
    left_size = np.empty(n_batch, dtype=np.int64)
    # With every flag cleared first, a plain split raises only its smaller child's flags (an
    # OR per sample, on at most half of the segment) and says which child that is in flip.
    # Clearing costs the whole bit array, so it is done only when the batch's segments are
    # large against it (a level of a breadth-first build), not for the few small nodes of a
    # best-first step; otherwise, and for the other kinds of split, each flag of the segment
    # is set (set_side_flag).
    batch_rows = 0
    for k in range(n_batch):
        if split_feature[k] >= 0:
            batch_rows += node_end[nodes[k]] - node_start[nodes[k]]
    cleared = batch_rows >= goes_left.shape[0]
    if cleared:
        goes_left[:] = 0
    n_split = 0
    max_segment = np.int64(0)
    work = 0
    for k in range(n_batch):
        f = split_feature[k]
        if f < 0:
            continue
        node = nodes[k]
        start = node_start[node]
        end = node_end[node]
        pos = split_pos[k]
        idx = sorted_idx[f]
        append_children(
            k, node, node_count, split_feature, split_pos, split_threshold, split_missing,
            child_stats, child_weight, child_impurity, feature, threshold, left, right,
            missing_left, node_start, node_end, node_depth, node_stats, node_weight,
            node_impurity_,
        )  # fmt: skip
        node_count += 2
        both_leaves = True
        for child in range(node_count - 2, node_count):
            both_leaves = both_leaves and is_leaf_by_rules(
                node_end[child] - node_start[child], node_weight[child], node_impurity_[child],
                node_depth[child], max_depth, min_samples_split, min_samples_leaf,
                min_weight_leaf,
            )  # fmt: skip
        if both_leaves:
            continue
        split_nodes[n_split] = node
        if cat_slot[f] >= 0:
            # A subset split: rows go by category, and the split feature's own segment
            # must be partitioned too (-1 matches no feature in the partition).
            mark_goes_left(idx, sorted_val[f], start, end, node_bits[node], goes_left)
            split_features[n_split] = -1
        elif high_bits.shape[1] > 0 and two_slot[f] >= 0:
            # Its segment is stale: the rows come from the row feature, sides from the bits.
            mark_two_valued_sides(
                sorted_idx[row_feature], start, end, high_bits, two_slot[f], goes_left
            )
            split_features[n_split] = -1
        else:
            # The split feature is sorted with NaN last, so its first pos - start samples
            # are the left child, unless NaN goes left: then the NaN tail joins them, and
            # the split feature's own segment is partitioned like the others' (left | NaN |
            # right becomes left, NaN | right, each child with its NaN last).
            n_missing_left = (
                count_missing(sorted_val[f], start, end) if split_missing[k] == 1 else 0
            )
            end_right = end - n_missing_left
            end_left = pos - n_missing_left
            if not cleared:
                for u in range(np.uint64(start), np.uint64(end)):  # unsigned: see _jit
                    p = np.int64(u)
                    set_side_flag(goes_left, idx[u], p < end_left or p >= end_right)
            elif end_left - start + end - end_right <= end_right - end_left:
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
    if n_split > 0:
        split_nodes = split_nodes[:n_split]
        split_features = split_features[:n_split]
        flip = flip[:n_split]
        left_size = left_size[:n_split]
        if parallel and work * sorted_idx.shape[0] >= PARALLEL_MIN_WORK:
            partition_parallel(split_nodes, node_start, node_end, split_features, goes_left,
                               flip, left_size, sorted_idx, sorted_val, sorted_code, upkeep,
                               high_bits, max_segment, n_chunks)  # fmt: skip
        else:
            partition_serial(split_nodes, node_start, node_end, split_features, goes_left,
                             flip, left_size, sorted_idx, sorted_val, sorted_code, upkeep,
                             high_bits, max_segment)  # fmt: skip
    return node_count


@kernel
def build(
    sorted_idx, sorted_val, sorted_code, code, contrib, sample_weight, unit_weight, y, n_stats,
    n_sweep, criterion, is_regression, max_depth, min_samples_split, min_samples_leaf,
    min_weight_leaf, min_impurity_decrease, max_features, max_leaf_nodes, rng_state, parallel,
    n_chunks, mdl_stop, random_split, cat_slot, n_words, two_valued, categorical_search,
    absolute_error_search, multi_output_search,
):  # fmt: skip
    """Grow a tree over presorted data: level-wise, or best-first when ``max_leaf_nodes > 0``.

    Parameters
    ----------
    sorted_idx, sorted_val, sorted_code : ndarray, shape (n_features, n_samples)
        Output of ``presort_*`` and ``sorted_codes``; modified (segments are partitioned in
        place, and the ids of ``sorted_idx`` may be renumbered: ``_splitter.renumber_samples``).
    code, contrib, sample_weight, y : ndarray, shape (n_samples,)
        Per-sample sweep code (int32), contribution, weight and regression target (float64);
        with a multi-output criterion ``code``, ``contrib`` and ``y`` have ``n_samples *
        n_outputs`` entries (``_multioutput``) and ``sorted_code`` is unused but partitioned.
    unit_weight : bool
        Every contribution and weight is 1: the sweep skips gathering them.
    n_stats, n_sweep : int
        Length of a node's statistics vector and its swept prefix.
    criterion : int
        Criterion code.
    is_regression : bool
        Whether statistics hold ``sum(w*y), sum(w*y*y)``.
    max_depth, min_samples_split, min_samples_leaf : int
        Resolved stopping rules.
    min_weight_leaf, min_impurity_decrease : float
        Resolved stopping rules.
    max_features : int
        Features drawn per node.
    max_leaf_nodes : int
        Leaf budget; ``<= 0`` for unlimited (level-wise growth).
    rng_state : ndarray of uint64, shape (1,)
        Generator state for ``max_features``.
    parallel : bool
        Whether large batches may use threads.
    n_chunks : int
        Threads available to the partition.
    mdl_stop : bool
        Make a node a leaf when its best split fails the MDLP test (classification).
    random_split : bool
        ``splitter="random"``: score one random threshold per candidate feature.
    cat_slot : ndarray of int32, shape (n_features,)
        Position of each feature among the categorical ones, ``-1`` for numeric features.
    n_words : int
        uint64 words of a category bitset (see ``_categorical``).
    two_valued : tuple of ndarray
        ``slot, threshold, high_bits`` of ``_two_valued`` (``high_bits`` with no column: the
        path is off). Features with a slot are searched there; at least one feature has none.
    categorical_search, absolute_error_search, multi_output_search : True or None
        Compile-time switches of the optional split searches (:func:`search_switches`).

    Returns
    -------
    tuple of ndarray
        ``feature, threshold, left, right, missing_left, depth, node_stats, weight, impurity,
        n_node_samples``, truncated to the node count. ``missing_left`` holds
        ``LEARNED_FLAG`` on top of the side where that side was learned from NaN rows.
        Node ids are breadth-first for level-wise growth, creation order for best-first
        growth.
    node_bits : ndarray of uint64, shape (node_count, n_words + 1)
        The split row of each categorical split node, indexed by the node id stored in its
        ``threshold`` (creation ids; rows of other nodes are unused).

    Notes
    -----
    No recursion: the frontier is an id range (level-wise) or a binary heap (best-first).
    Storage grows by doubling. Cost per level: O(n_features * n_active) for the sweeps and the
    partition, where ``n_active`` counts the samples of nodes still being split.
    """
    n_samples = sorted_idx.shape[1]
    # Unweighted regression: the sweep counts rows for the side weights instead of reading
    # sample_weight at each row's id, which a deep node holds scattered (a cache miss per row).
    unit_sample_weight = unit_weight or all_ones(sample_weight)
    # Entropy and gain ratio on row counts screen their cuts with a table of n ln n.
    xlogx = screening_table(n_samples, unit_weight, criterion)
    row_feature, upkeep = segment_upkeep(two_valued)
    two_valued = bits_in_row_order(two_valued, sorted_idx[row_feature])
    capacity = INITIAL_CAPACITY
    tree = new_nodes(capacity, n_stats)
    goes_left = new_side_flags(n_samples)
    node_bits = np.zeros((capacity, n_words + 1), dtype=np.uint64)
    weight_root = init_root(tree, sorted_idx[row_feature], code, contrib, sample_weight, y,
                            is_regression, criterion, absolute_error_search,
                            multi_output_search)  # fmt: skip
    node_count = np.int64(1)
    frontier = new_frontier(capacity, n_stats)
    heap_size = np.int64(0)
    best_first = max_leaf_nodes > 0
    batch = np.zeros(1, dtype=np.int64)  # the root
    splits_left = max_leaf_nodes - 1
    # Weighted or regression sweeps read contrib and sample_weight by sample id: renumbered
    # by position, a node's ids are its segment's positions (see renumber_samples). Level-wise
    # growth of the common fit only (the optional searches keep other arrays by id).
    renumber = (
        not unit_weight
        and not best_first
        and categorical_search is None
        and absolute_error_search is None
        and multi_output_search is None
    )
    window = n_samples
    while batch.shape[0] > 0:
        (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
         node_stats, node_weight, node_impurity_) = tree  # fmt: skip
        if renumber:
            largest = largest_segment(batch, node_start, node_end)
            if largest * RENUMBER_SHRINK <= window:
                code, contrib, sample_weight, y = renumber_samples(
                    sorted_idx, row_feature, upkeep, code, contrib, sample_weight, y
                )
                window = largest
        splits = evaluate_batch(
            batch, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
            sorted_idx, sorted_val, sorted_code, code, contrib, sample_weight, unit_weight,
            unit_sample_weight, xlogx, y, is_regression, n_sweep, criterion, max_depth,
            min_samples_split, min_samples_leaf, min_weight_leaf, min_impurity_decrease,
            max_features, weight_root, rng_state, parallel, n_chunks, random_split, mdl_stop,
            cat_slot, node_bits, two_valued, row_feature, categorical_search,
            absolute_error_search, multi_output_search,
        )  # fmt: skip
        if best_first:
            frontier, heap_size = queue_splits(batch, splits, frontier, heap_size)
            if heap_size == 0 or splits_left <= 0:
                break
            splits_left -= 1
            batch, splits, heap_size = pop_best(frontier, heap_size)
        capacity, tree, frontier = make_room(batch, splits[0], node_count, capacity, tree,
                                             frontier, best_first)  # fmt: skip
        if capacity > node_bits.shape[0]:
            node_bits = grow(node_bits, capacity, np.int64(0))
        (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
         node_stats, node_weight, node_impurity_) = tree  # fmt: skip
        split_feature, split_pos, split_threshold, _, child_stats, child_weight, child_impurity = (
            splits[:7]
        )
        first_child = node_count
        node_count = apply_splits(
            batch, split_feature, split_pos, split_threshold, splits[7], child_stats,
            child_weight, child_impurity, node_count, feature, threshold, left, right, missing_left,
            node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
            sorted_idx, sorted_val, sorted_code, goes_left, parallel, n_chunks, cat_slot,
            node_bits, two_valued, row_feature, upkeep, max_depth, min_samples_split,
            min_samples_leaf, min_weight_leaf,
        )  # fmt: skip
        batch = np.arange(first_child, node_count).astype(np.int64)
    return finished_tree(tree, node_count), node_bits[:node_count].copy()


@inline_kernel
def segment_upkeep(two_valued):
    """Return the feature read as the nodes' row sets, and what the partition does to each.

    The row feature is the first one not searched by ``_two_valued`` (feature 0 without
    them, which ``_absolute_error.rank_targets`` relies on); it is partitioned even where it
    is constant, the two-valued features never (see ``_splitter.partition_feature``).
    """
    two_slot = two_valued[0]
    upkeep = np.full(two_slot.shape[0], UPKEEP_UNLESS_CONSTANT, dtype=np.uint8)
    row_feature = np.int64(0)
    while two_slot[row_feature] >= 0:
        row_feature += 1
    upkeep[row_feature] = UPKEEP_ALWAYS
    for f in range(two_slot.shape[0]):
        if two_slot[f] >= 0:
            upkeep[f] = UPKEEP_NEVER
    return row_feature, upkeep


@inline_kernel
def new_nodes(capacity, n_stats):
    """Allocate node storage with room for ``capacity`` nodes.

    The tuple is ``feature, threshold, left, right, missing_left, node_start, node_end,
    node_depth, node_stats, node_weight, node_impurity``.
    """
    return (
        np.full(capacity, TREE_UNDEFINED, dtype=np.int32),
        np.full(capacity, float(TREE_UNDEFINED), dtype=np.float64),
        np.full(capacity, TREE_LEAF, dtype=np.int32),
        np.full(capacity, TREE_LEAF, dtype=np.int32),
        np.zeros(capacity, dtype=np.uint8),
        np.zeros(capacity, dtype=np.int64),
        np.zeros(capacity, dtype=np.int64),
        np.zeros(capacity, dtype=np.int64),
        np.zeros((capacity, n_stats), dtype=np.float64),
        np.zeros(capacity, dtype=np.float64),
        np.zeros(capacity, dtype=np.float64),
    )


@inline_kernel
def init_root(
    tree, root_idx, code, contrib, sample_weight, y, is_regression, criterion,
    absolute_error_search, multi_output_search,
):  # fmt: skip
    """Make node 0 the root over all samples ``root_idx``; returns its weight.

    The switches are those of :func:`search_switches`.
    """
    node_end = tree[6]
    node_stats = tree[8]
    node_weight = tree[9]
    node_impurity_ = tree[10]
    n_samples = root_idx.shape[0]
    node_end[0] = n_samples
    # The root holds every sample, so its statistics are summed in id order, reading code,
    # contrib and weight in order instead of gathering them through the presorted ids: a
    # depth-1 covtype fit took 0.99x the time (3 ms of 237). Id order is also the order
    # scikit-learn sums the root in, which matters to weighted fits' rounding.
    ids = np.empty(n_samples, dtype=np.int32)
    for i in range(n_samples):
        ids[i] = i
    node_weight[0] = stats_of_rows(
        criterion, multi_output_search, ids, np.int64(0), n_samples, np.int64(0),
        np.int64(0), code, contrib, sample_weight, y, is_regression, node_stats[0],
    )  # fmt: skip
    node_impurity_[0] = segment_impurity(
        criterion, node_stats[0], node_weight[0], root_idx, np.int64(0), n_samples, y,
        sample_weight, absolute_error_search,
    )  # fmt: skip
    return node_weight[0]


@inline_kernel
def new_frontier(capacity, n_stats):
    """Allocate the best-first frontier.

    A binary max-heap of (improvement, -node id) in two arrays, and the pending split of
    every queued node: a split record (:func:`new_splits`) indexed by node id.
    """
    return (
        np.empty(INITIAL_CAPACITY, dtype=np.int64),
        np.empty(INITIAL_CAPACITY, dtype=np.float64),
        new_splits(capacity, n_stats),
    )


@inline_kernel
def copy_split(src, k, dst, j):
    """Copy entry ``k`` of split record ``src`` to entry ``j`` of ``dst``."""
    dst[0][j] = src[0][k]
    dst[1][j] = src[1][k]
    dst[2][j] = src[2][k]
    dst[3][j] = src[3][k]
    dst[4][j] = src[4][k]
    dst[5][j] = src[5][k]
    dst[6][j] = src[6][k]
    dst[7][j] = src[7][k]


@inline_kernel
def queue_splits(batch, splits, frontier, heap_size):
    """Queue the batch nodes that have a split; returns the frontier and the heap size."""
    heap_node, heap_gain, pending = frontier
    for k in range(batch.shape[0]):
        if splits[0][k] < 0:
            continue
        node = batch[k]
        copy_split(splits, k, pending, node)
        if heap_size == heap_node.shape[0]:
            heap_node = grow(heap_node, 2 * heap_size, np.int64(0))
            heap_gain = grow(heap_gain, 2 * heap_size, 0.0)
        heap_size = heap_push(heap_node, heap_gain, heap_size, node, splits[3][k])
    return (heap_node, heap_gain, pending), heap_size


@inline_kernel
def pop_best(frontier, heap_size):
    """Take the best node off the frontier: returns it as a one-node batch with its split."""
    heap_node, heap_gain, pending = frontier
    node = heap_node[0]
    heap_size = heap_pop(heap_node, heap_gain, heap_size)
    splits = new_splits(1, pending[4].shape[2])
    copy_split(pending, node, splits, 0)
    return np.full(1, node, dtype=np.int64), splits, heap_size


@inline_kernel
def make_room(batch, split_feature, node_count, capacity, tree, frontier, best_first):
    """Grow the node storage (doubling) so the batch's children fit; returns the new state."""
    n_new = 0
    for k in range(batch.shape[0]):
        if split_feature[k] >= 0:
            n_new += 2
    if node_count + n_new <= capacity:
        return capacity, tree, frontier
    capacity = max(2 * capacity, node_count + n_new)
    (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
     node_stats, node_weight, node_impurity_) = tree  # fmt: skip
    tree = (
        grow_unset(feature, capacity),
        grow_unset(threshold, capacity),
        grow_unset(left, capacity),
        grow_unset(right, capacity),
        grow_unset(missing_left, capacity),
        grow_unset(node_start, capacity),
        grow_unset(node_end, capacity),
        grow_unset(node_depth, capacity),
        grow_unset(node_stats, capacity),
        grow_unset(node_weight, capacity),
        grow_unset(node_impurity_, capacity),
    )
    if best_first:
        heap_node, heap_gain, pending = frontier
        bigger = new_splits(capacity, pending[4].shape[2])
        for node in range(pending[0].shape[0]):
            copy_split(pending, node, bigger, node)
        frontier = (heap_node, heap_gain, bigger)
    return capacity, tree, frontier


@inline_kernel
def finished_tree(tree, node_count):
    """Return the builders' result: the node arrays cut to ``node_count`` (see :func:`build`).

    Views, not copies: the estimator's ``Tree`` copies what it keeps once the presorted
    data are freed, so a copy here would only raise the fit's peak memory.
    """
    (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
     node_stats, node_weight, node_impurity_) = tree  # fmt: skip
    n_node_samples = node_end[:node_count] - node_start[:node_count]
    return (
        feature[:node_count],
        threshold[:node_count],
        left[:node_count],
        right[:node_count],
        missing_left[:node_count],
        node_depth[:node_count],
        node_stats[:node_count],
        node_weight[:node_count],
        node_impurity_[:node_count],
        n_node_samples,
    )


# A node keeps its histogram while open (so a child can derive its own by subtraction) only
# if building one from its rows, rows x n_features adds, costs more than twice the
# histogram's size (zeroing plus subtracting it). On 1M x 20 binary that is 1,020 rows: a
# quarter of it built the full-depth tree no faster (1.38 s vs 1.41 s CPU), a fixed 16k
# rows took twice as long. The rule also bounds the stored histograms' memory by
# 8 bytes x n_samples x n_features. Smaller nodes build a throw-away histogram when searched.
STORED_HIST_MIN_ROWS = 256


@inline_kernel
def stored_histogram_min_rows(n_features, n_total_bins, width):
    """Fewest rows a node needs to keep its histogram (see ``STORED_HIST_MIN_ROWS``)."""
    return max(STORED_HIST_MIN_ROWS, 2 * n_total_bins * width // n_features)


@kernel
def evaluate_batch_hist(
    nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
    node_slot, hist_pool, rows, codes, bin_offset, bin_min, bin_max, near_ties, code, contrib,
    sample_weight, unit_weight, y, position_contrib, position_weight, position_y, is_regression,
    n_sweep, criterion, xlogx, max_depth, min_samples_split, min_samples_leaf, min_weight_leaf,
    min_impurity_decrease, max_features, weight_root, rng_state, parallel, n_chunks, mdl_stop,
    cat_slot, nan_bin, node_bits, categorical_search,
):  # fmt: skip
    """Do what :func:`evaluate_batch` does, over histograms of binned data.

    A categorical feature's bins are its codes (``nan_bin[f]``: the bin of a missing value,
    ``-1`` if none); its subset split is stored as in :func:`evaluate_batch`.
    ``contrib``, ``sample_weight`` and ``y`` are indexed by sample id, their ``position_``
    copies by position (``_hist``). ``xlogx``: ``_splitter.screening_table`` of the fit.

    Returns the same arrays. The chosen split's rows are partitioned here (the pass that sums
    the children's statistics moves them too), so ``split_pos`` is final on return.

    Notes
    -----
    Leaf rules, feature draws and the reduction over features are those of the exact
    builder; a node is swept from its stored histogram (slot ``node_slot[node] >= 0``) or
    from one built on the spot.
    """
    # Uncounted views of the arguments for the loops below (``_borrow``).
    (nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_, node_slot,
     hist_pool, rows, codes, bin_offset, bin_min, bin_max, near_ties, code, contrib,
     sample_weight, y, position_contrib, position_weight, position_y, xlogx, rng_state,
     cat_slot, nan_bin, node_bits) = borrowed((
        nodes, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
        node_slot, hist_pool, rows, codes, bin_offset, bin_min, bin_max, near_ties, code, contrib,
        sample_weight, y, position_contrib, position_weight, position_y, xlogx, rng_state,
        cat_slot, nan_bin, node_bits))  # fmt: skip
    n_features = codes.shape[1]
    splits = new_splits(nodes.shape[0], node_stats.shape[1])
    searched, search_nodes = nodes_to_search(
        nodes, node_start, node_end, node_depth, node_weight, node_impurity_, max_depth,
        min_samples_split, min_samples_leaf, min_weight_leaf,
    )  # fmt: skip
    n_searched = searched.shape[0]
    if n_searched == 0:
        return splits
    work = 0
    rows_searched = 0
    max_segment = np.int64(0)
    for node in search_nodes:
        n = node_end[node] - node_start[node]
        work += bin_offset[n_features] if node_slot[node] >= 0 else 2 * n * n_features
        rows_searched += n
        max_segment = max(max_segment, n)

    candidate = np.empty((n_searched, n_features), dtype=np.uint8)
    f_order = np.empty(n_features, dtype=np.int64)
    constant = np.zeros(n_features, dtype=np.uint8)
    for s in range(n_searched):
        node = search_nodes[s]
        if max_features < n_features:
            constant_features(hist_pool, node_slot[node], node_start[node], node_end[node],
                              codes, bin_offset, bin_min, bin_max, n_sweep, unit_weight,
                              constant)  # fmt: skip
        draw_candidate_features(f_order, max_features, constant, rng_state, candidate[s])
    cat_candidate, out_bits = hold_categorical_candidates(candidate, cat_slot, node_bits)

    out_proxy = np.empty((n_searched, n_features), dtype=np.float64)
    out_cut = np.empty((n_searched, n_features), dtype=np.int64)
    out_threshold = np.empty((n_searched, n_features), dtype=np.float64)
    out_missing = np.empty((n_searched, n_features), dtype=np.int8)
    if parallel and work >= PARALLEL_MIN_WORK:
        sweep_parallel(
            search_nodes, node_slot, node_start, node_end, node_stats, node_weight, hist_pool,
            codes, bin_offset, bin_min, bin_max, near_ties, code, position_contrib,
            position_weight, unit_weight, n_sweep, criterion, xlogx, min_samples_leaf,
            min_weight_leaf, candidate, out_proxy, out_cut, out_threshold, out_missing,
            min(4 * n_chunks, n_searched),
        )  # fmt: skip
    else:
        sweep_serial(
            search_nodes, node_slot, node_start, node_end, node_stats, node_weight, hist_pool,
            codes, bin_offset, bin_min, bin_max, near_ties, code, position_contrib,
            position_weight, unit_weight, n_sweep, criterion, xlogx, min_samples_leaf,
            min_weight_leaf, candidate, out_proxy, out_cut, out_threshold, out_missing,
        )  # fmt: skip
    if categorical_search is not None and out_bits.shape[1] > 0:
        categorical_splits_binned(
            parallel and rows_searched * out_bits.shape[1] >= PARALLEL_MIN_WORK, search_nodes,
            cat_candidate, cat_slot, nan_bin, bin_offset, node_start, node_end,
            node_stats, node_weight, rows, codes, code, contrib, sample_weight, n_sweep,
            criterion, min_samples_leaf, min_weight_leaf, out_proxy, out_bits,
        )  # fmt: skip

    n_chunks_split = min(n_chunks, n_searched)
    if parallel and n_chunks_split > 1 and work >= PARALLEL_MIN_WORK:
        split_nodes_parallel(
            searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start,
            node_end, node_weight, node_impurity_, rows, codes, bin_offset, code, contrib,
            sample_weight, y, position_contrib, position_weight, position_y, is_regression,
            unit_weight, criterion, weight_root, min_impurity_decrease, splits, max_segment,
            n_chunks_split, mdl_stop, cat_slot, nan_bin, node_bits, out_bits,
        )  # fmt: skip
    else:
        split_nodes(
            np.int64(0), n_searched, searched, search_nodes, out_proxy, out_cut, out_threshold,
            out_missing,
            node_start, node_end, node_weight, node_impurity_, rows, codes, bin_offset, code,
            contrib, sample_weight, y, position_contrib, position_weight, position_y,
            is_regression, unit_weight, criterion, weight_root, min_impurity_decrease, splits,
            max_segment, mdl_stop, cat_slot, nan_bin, node_bits, out_bits,
        )  # fmt: skip
    return splits


@kernel
def split_nodes(
    first, stop, searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start,
    node_end, node_weight, node_impurity_, rows, codes, bin_offset, code, contrib,
    sample_weight, y, position_contrib, position_weight, position_y, is_regression, unit_weight,
    criterion, weight_root, min_impurity_decrease, splits, max_segment, mdl_stop, cat_slot,
    nan_bin, node_bits, out_bits,
):  # fmt: skip
    """Reduce, partition and accept the best splits of searched nodes ``first .. stop - 1``.

    Notes
    -----
    Node ``s`` touches only its own segment of ``rows`` / ``codes`` / ``code`` and entry
    ``searched[s]`` of the split record, so disjoint node ranges may run concurrently.
    """
    child_stats = splits[4]
    # Uncounted views of the arguments for the loops below (``_borrow``).
    (searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start, node_end,
     node_weight, node_impurity_, rows, codes, bin_offset, code, contrib, sample_weight, y,
     position_contrib, position_weight, position_y, cat_slot, nan_bin, node_bits, out_bits,
     child_stats) = borrowed((
        searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start,
        node_end, node_weight, node_impurity_, rows, codes, bin_offset, code, contrib,
        sample_weight, y, position_contrib, position_weight, position_y, cat_slot, nan_bin,
        node_bits, out_bits, child_stats))  # fmt: skip
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (
        np.empty(max_segment, dtype=np.int32),
        np.empty((max_segment, codes.shape[1]), dtype=np.uint8),
        np.empty(max_segment, dtype=np.int32),
        np.empty((0 if unit_weight else max_segment, 3), dtype=np.float64),
    )
    scratch_rows, scratch_codes, scratch_code, scratch_stats = borrowed(owned)
    inverse = np.zeros(256, dtype=np.uint8)  # set by each subset split before use
    for s in range(first, stop):
        node = search_nodes[s]
        k = searched[s]
        if criterion == GAIN_RATIO:
            best_f = gain_ratio_feature_binned(
                out_proxy[s], out_cut[s], out_missing[s], bin_offset, rows, codes,
                node_start[node], node_end[node], sample_weight, node_impurity_[node],
                node_weight[node], cat_slot, nan_bin, out_bits[s],
            )  # fmt: skip
        else:
            best_f = best_feature(out_proxy[s])
        if best_f < 0:
            continue
        missing = out_missing[s, best_f]
        cut = out_cut[s, best_f] - bin_offset[best_f]
        # NaN sent left: the feature's NaN bin, its last, joins the left side.
        nan_code = bin_offset[best_f + 1] - bin_offset[best_f] - 1 if missing == 1 else -1
        if cat_slot[best_f] >= 0:
            # A subset split: recode the categories left-first, partition on the cut
            # between the two groups, then restore the codes. Its NaN bin is one of the
            # recoded categories, so no separate NaN code.
            node_bits[node] = out_bits[s, cat_slot[best_f]]
            out_threshold[s, best_f] = node
            cut, inverse = order_bins_left_first(
                codes, node_start[node], node_end[node], best_f, nan_bin[best_f],
                node_bits[node],
            )  # fmt: skip
            nan_code = -1
        pos, weight_left, weight_right = partition_rows(
            rows, node_start[node], node_end[node], codes, best_f, cut, nan_code, code,
            position_contrib, position_weight, position_y, is_regression, unit_weight,
            scratch_rows, scratch_codes, scratch_code, scratch_stats, child_stats[k, 0],
            child_stats[k, 1],
        )  # fmt: skip
        if cat_slot[best_f] >= 0:
            restore_bins(codes, node_start[node], node_end[node], best_f, inverse)
        accept_split(
            k, best_f, pos, out_threshold[s, best_f], missing, weight_left, weight_right,
            criterion, node_impurity_[node], node_weight[node], weight_root,
            min_impurity_decrease, splits, rows, node_start[node], node_end[node], y,
            sample_weight, mdl_stop, None,
        )  # fmt: skip
    keep_alive(owned)


@parallel_kernel
def split_nodes_parallel(
    searched, search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start, node_end,
    node_weight, node_impurity_, rows, codes, bin_offset, code, contrib, sample_weight, y,
    position_contrib, position_weight, position_y, is_regression, unit_weight, criterion,
    weight_root, min_impurity_decrease, splits, max_segment, n_chunks, mdl_stop, cat_slot,
    nan_bin, node_bits, out_bits,
):  # fmt: skip
    """Run :func:`split_nodes` over ``n_chunks`` contiguous ranges of nodes on threads.

    Every node is handled exactly as in the serial loop, so the results are identical.
    """
    n_searched = searched.shape[0]
    for t in prange(n_chunks):
        split_nodes(
            t * n_searched // n_chunks, (t + 1) * n_searched // n_chunks, searched,
            search_nodes, out_proxy, out_cut, out_threshold, out_missing, node_start, node_end,
            node_weight, node_impurity_, rows, codes, bin_offset, code, contrib, sample_weight, y,
            position_contrib, position_weight, position_y, is_regression, unit_weight, criterion,
            weight_root, min_impurity_decrease, splits, max_segment, mdl_stop, cat_slot, nan_bin,
            node_bits, out_bits,
        )  # fmt: skip


@inline_kernel
def take_slot(hist_pool, free_slots, n_free):
    """Take a free histogram slot, doubling the pool when none is left.

    Returns
    -------
    slot, hist_pool, free_slots, n_free
    """
    if n_free == 0:
        old = hist_pool.shape[0]
        pool = np.empty((2 * old,) + hist_pool.shape[1:], dtype=np.float64)
        pool[:old] = hist_pool
        hist_pool = pool
        free_slots = np.empty(2 * old, dtype=np.int64)
        for j in range(old):
            free_slots[j] = 2 * old - 1 - j
        n_free = old
    n_free -= 1
    return free_slots[n_free], hist_pool, free_slots, n_free


@inline_kernel
def give_back_slot(node, node_slot, free_slots, n_free):
    """Return ``node``'s histogram slot (if any) to the free list; returns ``n_free``."""
    if node_slot[node] >= 0:
        free_slots[n_free] = node_slot[node]
        node_slot[node] = -1
        n_free += 1
    return n_free


@inline_kernel
def release_leaf_slots(nodes, split_feature, node_slot, free_slots, n_free):
    """Give back the histogram slots of the batch nodes that stay leaves; returns ``n_free``."""
    for k in range(nodes.shape[0]):
        if split_feature[k] < 0:  # a leaf for good: its histogram is no longer needed
            n_free = give_back_slot(nodes[k], node_slot, free_slots, n_free)
    return n_free


@kernel
def children_histograms(
    batch, split_feature, first_child, node_start, node_end, node_depth, node_weight,
    node_impurity_, node_slot, hist_pool, free_slots, n_free, codes, bin_offset, code,
    position_contrib, position_weight, unit_weight, n_sweep, max_depth, min_samples_split,
    min_samples_leaf, min_weight_leaf, min_stored_rows, parallel, n_chunks,
):  # fmt: skip
    """Build the histograms of the new children that need one; free the parents' slots.

    A child needs a stored histogram when it will be searched (no leaf rule applies) and has
    at least ``min_stored_rows`` rows. Of two siblings the smaller is built from its rows and
    the larger is the parent's histogram minus it (the smaller's histogram is built into
    the larger's slot when the smaller itself needs none).

    Returns
    -------
    hist_pool, free_slots, n_free
    """
    n_batch = batch.shape[0]
    task_slot = np.empty(2 * n_batch, dtype=np.int64)
    task_start = np.empty(2 * n_batch, dtype=np.int64)
    task_end = np.empty(2 * n_batch, dtype=np.int64)
    derive_dst = np.empty(n_batch, dtype=np.int64)
    derive_parent = np.empty(n_batch, dtype=np.int64)
    derive_src = np.empty(n_batch, dtype=np.int64)
    n_tasks = 0
    n_derive = 0
    work = 0
    child = first_child
    for k in range(n_batch):
        if split_feature[k] < 0:
            continue
        parent = batch[k]
        node_slot[child] = -1
        node_slot[child + 1] = -1
        parent_slot = node_slot[parent]
        children = (child, child + 1)
        child += 2
        if parent_slot < 0:
            continue
        need = np.zeros(2, dtype=np.bool_)
        for side in range(2):
            c = children[side]
            n = node_end[c] - node_start[c]
            need[side] = n >= min_stored_rows and not is_leaf_by_rules(
                n, node_weight[c], node_impurity_[c], node_depth[c], max_depth,
                min_samples_split, min_samples_leaf, min_weight_leaf,
            )  # fmt: skip
        n_left = node_end[children[0]] - node_start[children[0]]
        n_right = node_end[children[1]] - node_start[children[1]]
        small = 0 if n_left <= n_right else 1
        big = 1 - small
        small_node = children[small]
        big_node = children[big]
        build_slot = -1
        if need[small]:
            build_slot, hist_pool, free_slots, n_free = take_slot(hist_pool, free_slots, n_free)
            node_slot[small_node] = build_slot
        if need[big]:
            big_slot, hist_pool, free_slots, n_free = take_slot(hist_pool, free_slots, n_free)
            node_slot[big_node] = big_slot
            if build_slot < 0:
                build_slot = big_slot
            derive_dst[n_derive] = big_slot
            derive_parent[n_derive] = parent_slot
            derive_src[n_derive] = build_slot
            n_derive += 1
        if build_slot >= 0:
            task_slot[n_tasks] = build_slot
            task_start[n_tasks] = node_start[small_node]
            task_end[n_tasks] = node_end[small_node]
            n_tasks += 1
            work += node_end[small_node] - node_start[small_node]
    if n_tasks > 0:
        n_features = codes.shape[1]
        if parallel and work * n_features >= PARALLEL_MIN_WORK:
            build_histograms_parallel(
                task_slot[:n_tasks], task_start[:n_tasks], task_end[:n_tasks], codes,
                bin_offset, code, position_contrib, position_weight, unit_weight, n_sweep,
                hist_pool,
                n_chunks if n_tasks < 2 * n_chunks else 1,
            )  # fmt: skip
        else:
            build_histograms_serial(
                task_slot[:n_tasks], task_start[:n_tasks], task_end[:n_tasks], codes,
                bin_offset, code, position_contrib, position_weight, unit_weight, n_sweep,
                hist_pool,
            )  # fmt: skip
        subtract_histograms(derive_dst[:n_derive], derive_parent[:n_derive],
                            derive_src[:n_derive], hist_pool)  # fmt: skip
    for k in range(n_batch):
        if split_feature[k] >= 0:
            n_free = give_back_slot(batch[k], node_slot, free_slots, n_free)
    return hist_pool, free_slots, n_free


@kernel
def build_hist(
    codes, bin_offset, bin_min, bin_max, code, contrib, sample_weight, unit_weight, y, n_stats,
    n_sweep, criterion, is_regression, max_depth, min_samples_split, min_samples_leaf,
    min_weight_leaf, min_impurity_decrease, max_features, max_leaf_nodes, rng_state, parallel,
    n_chunks, mdl_stop, cat_slot, nan_bin, n_words, categorical_search,
):  # fmt: skip
    """Grow a tree over binned data (``splitter="hist"``); returns what :func:`build` does.

    Parameters
    ----------
    codes : ndarray of uint8, shape (n_samples, n_features), C order
        Bin codes (``_binning.bin_features``); modified: rows are partitioned with the nodes.
    bin_offset : ndarray of int64, shape (n_features + 1,)
        Feature ``f``'s bins in the flat bin axis.
    bin_min, bin_max : ndarray of float64, shape (n_total_bins,)
        Smallest and largest training value of each bin (thresholds are placed between).
    code, contrib, sample_weight, unit_weight, y, n_stats, n_sweep, criterion, is_regression
        As in :func:`build`.
    max_depth, min_samples_split, min_samples_leaf, min_weight_leaf, min_impurity_decrease
        As in :func:`build`.
    max_features, max_leaf_nodes, rng_state, parallel, n_chunks, mdl_stop, cat_slot, n_words
        As in :func:`build`.
    categorical_search : True or None
        As in :func:`build` (the histogram splitter has no other optional search).
    nan_bin : ndarray of int64, shape (n_features,)
        A categorical feature's bin of missing values (its largest), ``-1`` if none.

    Notes
    -----
    Same growth orders as :func:`build` (level-wise, or best-first with ``max_leaf_nodes``).
    Memory: one histogram of ``n_total_bins x histogram_width`` float64 per open node with
    at least ``stored_histogram_min_rows`` rows; a level and the parents it derives from hold
    at most ``8 * n_samples * n_features`` bytes of them. Cost per level: O(n_features * n_built) to
    build histograms, where ``n_built`` counts the rows of the smaller children and of small
    nodes, plus O(n_total_bins * n_sweep) per stored-histogram node for the sweeps.
    """
    n_samples, n_features = codes.shape
    near_ties = features_with_near_ties(bin_offset, bin_min, bin_max)
    xlogx = screening_table(n_samples, unit_weight, criterion)  # as in build
    n_hist = histogram_width(n_sweep, unit_weight)
    min_stored_rows = stored_histogram_min_rows(n_features, bin_offset[n_features], n_hist)
    capacity = INITIAL_CAPACITY
    tree = new_nodes(capacity, n_stats)
    rows = np.arange(n_samples).astype(np.int32)
    # No absolute_error or multi-output search in the histogram splitter.
    weight_root = init_root(tree, rows, code, contrib, sample_weight, y, is_regression,
                            criterion, None, None)  # fmt: skip
    code = code.copy()  # from here on indexed by position, like codes (partitioned)
    # The same for each row's contribution, weight and target (rows is still 0 .. n - 1
    # here); unweighted classification reads none of them.
    n_positioned = 0 if unit_weight else n_samples
    position_contrib = contrib[:n_positioned].copy()
    position_weight = sample_weight[:n_positioned].copy()
    position_y = y[:n_positioned].copy() if is_regression else y[:0].copy()
    node_count = np.int64(1)
    frontier = new_frontier(capacity, n_stats)
    heap_size = np.int64(0)
    node_slot = np.full(capacity, -1, dtype=np.int64)
    node_bits = np.zeros((capacity, n_words + 1), dtype=np.uint64)
    hist_pool = np.empty((2, bin_offset[n_features], n_hist), dtype=np.float64)
    free_slots = np.array([1, 0], dtype=np.int64)
    n_free = 2
    root_searched = not is_leaf_by_rules(
        n_samples, tree[9][0], tree[10][0], 0, max_depth, min_samples_split, min_samples_leaf,
        min_weight_leaf,
    )  # fmt: skip
    if n_samples >= min_stored_rows and root_searched:
        slot, hist_pool, free_slots, n_free = take_slot(hist_pool, free_slots, n_free)
        node_slot[0] = slot
        build_histograms_serial(np.full(1, slot, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                np.full(1, n_samples, dtype=np.int64), codes, bin_offset, code,
                                position_contrib, position_weight, unit_weight, n_sweep,
                                hist_pool)  # fmt: skip

    best_first = max_leaf_nodes > 0
    batch = np.zeros(1, dtype=np.int64)
    splits_left = max_leaf_nodes - 1
    while batch.shape[0] > 0:
        (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
         node_stats, node_weight, node_impurity_) = tree  # fmt: skip
        splits = evaluate_batch_hist(
            batch, node_start, node_end, node_depth, node_stats, node_weight, node_impurity_,
            node_slot, hist_pool, rows, codes, bin_offset, bin_min, bin_max, near_ties, code,
            contrib, sample_weight, unit_weight, y, position_contrib, position_weight, position_y,
            is_regression, n_sweep, criterion, xlogx, max_depth,
            min_samples_split, min_samples_leaf, min_weight_leaf, min_impurity_decrease,
            max_features, weight_root, rng_state, parallel, n_chunks, mdl_stop, cat_slot,
            nan_bin, node_bits, categorical_search,
        )  # fmt: skip
        n_free = release_leaf_slots(batch, splits[0], node_slot, free_slots, n_free)
        if best_first:
            frontier, heap_size = queue_splits(batch, splits, frontier, heap_size)
            if heap_size == 0 or splits_left <= 0:
                break
            splits_left -= 1
            batch, splits, heap_size = pop_best(frontier, heap_size)
        old_capacity = capacity
        capacity, tree, frontier = make_room(batch, splits[0], node_count, capacity, tree,
                                             frontier, best_first)  # fmt: skip
        if capacity > old_capacity:
            node_slot = grow(node_slot, capacity, np.int64(-1))
            node_bits = grow(node_bits, capacity, np.int64(0))
        (feature, threshold, left, right, missing_left, node_start, node_end, node_depth,
         node_stats, node_weight, node_impurity_) = tree  # fmt: skip
        first_child = node_count
        node_count = append_split_children(
            batch, splits[0], splits[1], splits[2], splits[7], splits[4], splits[5], splits[6],
            node_count, feature, threshold, left, right, missing_left, node_start, node_end,
            node_depth, node_stats, node_weight, node_impurity_,
        )  # fmt: skip
        hist_pool, free_slots, n_free = children_histograms(
            batch, splits[0], first_child, node_start, node_end, node_depth, node_weight,
            node_impurity_, node_slot, hist_pool, free_slots, n_free, codes, bin_offset, code,
            position_contrib, position_weight, unit_weight, n_sweep, max_depth, min_samples_split,
            min_samples_leaf, min_weight_leaf, min_stored_rows, parallel, n_chunks,
        )  # fmt: skip
        batch = np.arange(first_child, node_count).astype(np.int64)
    return finished_tree(tree, node_count), node_bits[:node_count].copy()


@kernel
def heap_before(gain_a, node_a, gain_b, node_b):
    """Order of the best-first frontier: larger improvement first, then the older node."""
    return gain_a > gain_b or (gain_a == gain_b and node_a < node_b)


@kernel
def heap_push(heap_node, heap_gain, size, node, gain):
    """Insert ``node`` with priority ``gain``; the arrays must have room. Returns the new size."""
    pos = size
    heap_node[pos] = node
    heap_gain[pos] = gain
    while pos > 0:
        parent = (pos - 1) // 2
        if heap_before(heap_gain[pos], heap_node[pos], heap_gain[parent], heap_node[parent]):
            heap_node[pos], heap_node[parent] = heap_node[parent], heap_node[pos]
            heap_gain[pos], heap_gain[parent] = heap_gain[parent], heap_gain[pos]
            pos = parent
        else:
            break
    return size + 1


@kernel
def heap_pop(heap_node, heap_gain, size):
    """Remove the top of the heap (read it from ``heap_node[0]`` first). Returns the new size."""
    size -= 1
    heap_node[0] = heap_node[size]
    heap_gain[0] = heap_gain[size]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and heap_before(
            heap_gain[child + 1], heap_node[child + 1], heap_gain[child], heap_node[child]
        ):
            child += 1
        if heap_before(heap_gain[child], heap_node[child], heap_gain[pos], heap_node[pos]):
            heap_node[pos], heap_node[child] = heap_node[child], heap_node[pos]
            heap_gain[pos], heap_gain[child] = heap_gain[child], heap_gain[pos]
            pos = child
        else:
            break
    return size


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


@kernel
def node_depths(left, right):
    """Depth of every node of a tree whose children have larger ids than their parent."""
    depth = np.zeros(left.shape[0], dtype=np.int64)
    for node in range(left.shape[0]):
        if left[node] != TREE_LEAF:
            depth[left[node]] = depth[node] + 1
            depth[right[node]] = depth[node] + 1
    return depth
