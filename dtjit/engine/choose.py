"""From a batch's split search to one split per node: the reduction step of both builders.

The searches (``sweep_*``) leave the best cut of every (searched node, feature) pair in a
:class:`~.records.BatchSearch`. This module picks each node's feature (:func:`best_features`:
the strictly greatest proxy, ties to the lowest index; or C4.5's gain ratio), sums the
children's statistics of the exact splitters' chosen splits, and accepts or refuses every
split (:func:`accept_split`: the children's impurities, ``min_impurity_decrease`` and the
MDL test).

The children's statistics depend on the kind of split, so each kind is a kernel of its own,
and :func:`choose_splits` (Python, once per level or best-first step) calls each with the
nodes of its kind only:

- :func:`count_children`: a threshold on unweighted class counts, read from the split
  feature's sorted class codes;
- :func:`sum_children`: a threshold with weights, regression targets or several outputs;
- :func:`subset_children`: a categorical subset split;
- :func:`two_valued_children`: a 0/1 column of ``sweep_two_valued``.

numba compiles every branch a kernel can reach, so one kernel for every kind compiled all of
them into each fit, or one specialisation per combination of switches (ten of them, about
1 s each, over every path). Here a fit compiles the kinds its data produces, each once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .borrow import borrowed
from .criterion import impurity_improvement, node_impurity, poisson_loss
from .jit import (
    ABSOLUTE_ERROR,
    EPSILON,
    MULTI_OUTPUT,
    POISSON,
    callee_kernel,
    inline_kernel,
    kernel,
)
from .mdlp import mdlp_accepts_split
from .sweep_absolute_error import MEDIAN_STAT, absolute_error_of_segment
from .sweep_categorical import split_segment_ids
from .sweep_exact import NO_SPLIT, copy_rows, count_missing, count_sorted_codes, segment_stats
from .sweep_multioutput import stats_of_rows
from .sweep_two_valued import high_side_counts


class ChosenSplits(NamedTuple):
    """Each searched node's chosen split, before the stopping rules (row ``s`` as in the search).

    ``child_rows`` holds, for the nodes with ``own_rows[s] == 1``, their children's sample ids
    at the node's positions, left child first: the criteria that read a child's rows
    (poisson, absolute error) read them there when the left child is not a prefix of the
    split feature's sorted segment (NaN rows sent left, a subset split). Empty otherwise.
    """

    feature: np.ndarray  # int64, -1: no valid cut
    pos: np.ndarray  # int64: end of the left child's segment once partitioned
    weight_left: np.ndarray  # float64
    weight_right: np.ndarray  # float64
    own_rows: np.ndarray  # uint8
    child_rows: np.ndarray  # int32, (n_samples,) or (0,)


def best_features(proxy: np.ndarray) -> np.ndarray:
    """Feature of the strictly greatest proxy of each row; -1 where none beats ``NO_SPLIT``.

    ``np.argmax`` returns the first of equal maxima, which is the lowest feature index a
    scan keeping only strictly greater proxies ends on; NaN proxies never win.
    """
    valid = np.where(proxy > NO_SPLIT, proxy, NO_SPLIT)
    feature = valid.argmax(axis=1).astype(np.int64, copy=False)
    feature[valid.max(axis=1) == NO_SPLIT] = -1
    return feature


def new_chosen(feature: np.ndarray, n_samples: int, criterion: int) -> ChosenSplits:
    """Return the record :func:`choose_splits` fills for the searched nodes' ``feature``."""
    n = feature.shape[0]
    reads_rows = criterion in (POISSON, ABSOLUTE_ERROR)
    return ChosenSplits(
        feature, np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n),
        np.zeros(n, dtype=np.uint8), np.empty(n_samples if reads_rows else 0, dtype=np.int32),
    )  # fmt: skip


@inline_kernel
def todo_entry(i, todo, feature, search_nodes, searched, node_start, node_end):
    """Return ``s, f, node, k, start, end`` of entry ``i`` of ``todo``.

    The searched row, its chosen feature, the node id, its batch position and its segment.
    """
    s = todo[i]
    node = search_nodes[s]
    return s, feature[s], node, searched[s], node_start[node], node_end[node]


@inline_kernel
def threshold_cut(s, f, out_pos, out_missing, sorted_val, start, end):
    """Return ``pos, n_missing_left, end_right`` of searched row ``s``'s threshold on ``f``.

    The NaN rows are the segment's tail ``[end_right, end)``; sent left
    (``out_missing[s, f] == 1``), they join ``[start, pos)``.
    """
    n_missing_left = count_missing(sorted_val[f], start, end) if out_missing[s, f] == 1 else 0
    return out_pos[s, f], n_missing_left, end - n_missing_left


@kernel
def count_children(todo, search, nodes, sorted_val, sorted_code, splits, chosen):
    """Children's class counts of threshold splits, unweighted and with one output.

    ``todo`` lists the searched rows ``s`` to do. The counts are read from the split
    feature's sorted class codes, in order (a gather ``code[idx[p]]`` per row misses the
    cache on large data); only the smaller child is counted, the other's counts are the
    node's minus those (exact: counts in float64), so this reads at most half of a segment.
    """
    # Uncounted views of the arguments for the loop below (``borrow``).
    (todo, searched, search_nodes, out_pos, out_missing, node_start, node_end, node_stats,
     node_weight, sorted_val, sorted_code, child_stats, feature, pos_of, weight_left,
     weight_right) = borrowed((
        todo, search.searched, search.nodes, search.pos, search.missing, nodes.start,
        nodes.end, nodes.stats, nodes.weight, sorted_val, sorted_code, splits.child_stats,
        chosen.feature, chosen.pos, chosen.weight_left, chosen.weight_right))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        pos, n_missing_left, end_right = threshold_cut(s, f, out_pos, out_missing, sorted_val,
                                                       start, end)  # fmt: skip
        codes = sorted_code[f]
        # One call site of the inlined count: the smaller child's runs of positions.
        small = 0 if pos - start + end - end_right <= end_right - pos else 1
        first, stop, extra_start = (start, pos, end_right) if small == 0 else (pos, end_right, end)
        counted = count_sorted_codes(codes, first, stop, extra_start, end, child_stats[k, small])
        for c in range(child_stats.shape[2]):
            child_stats[k, 1 - small, c] = node_stats[node, c] - child_stats[k, small, c]
        weight_left[s] = counted if small == 0 else node_weight[node] - counted
        weight_right[s] = node_weight[node] - counted if small == 0 else counted
        pos_of[s] = pos + n_missing_left


@kernel
def sum_children(
    todo, search, nodes, sorted_idx, sorted_val, code, contrib, sample_weight, y,
    is_regression, criterion, splits, chosen, multi_output_search,
):  # fmt: skip
    """Children's statistics of threshold splits, summed over their rows (``stats_of_rows``).

    For weighted classification, regression and several outputs (``multi_output_search``:
    True when the fit has several, see ``grow.search_switches``). With NaN rows sent left,
    and a criterion reading the children's rows, those are copied to ``chosen.child_rows``.
    """
    (todo, searched, search_nodes, out_pos, out_missing, node_start, node_end, sorted_idx,
     sorted_val, code, contrib, sample_weight, y, child_stats, feature, pos_of, weight_left,
     weight_right, own_rows, child_rows) = borrowed((
        todo, search.searched, search.nodes, search.pos, search.missing, nodes.start,
        nodes.end, sorted_idx, sorted_val, code, contrib, sample_weight, y, splits.child_stats,
        chosen.feature, chosen.pos, chosen.weight_left, chosen.weight_right, chosen.own_rows,
        chosen.child_rows))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        pos, n_missing_left, end_right = threshold_cut(s, f, out_pos, out_missing, sorted_val,
                                                       start, end)  # fmt: skip
        idx = sorted_idx[f]
        weight_left[s] = stats_of_rows(
            criterion, multi_output_search, idx, start, pos, end_right, end, code, contrib,
            sample_weight, y, is_regression, child_stats[k, 0],
        )  # fmt: skip
        weight_right[s] = stats_of_rows(
            criterion, multi_output_search, idx, pos, end_right, end_right, end_right, code,
            contrib, sample_weight, y, is_regression, child_stats[k, 1],
        )  # fmt: skip
        pos_of[s] = pos + n_missing_left
        if child_rows.shape[0] > 0 and n_missing_left > 0:
            at = copy_rows(idx, start, pos, child_rows, start)
            at = copy_rows(idx, end_right, end, child_rows, at)
            copy_rows(idx, pos, end_right, child_rows, at)
            own_rows[s] = 1


@inline_kernel
def copy_bits(src, dst):
    """Copy a split row of bits: a loop, as row assignment compiles numba's shape-error text."""
    for w in range(src.shape[0]):
        dst[w] = src[w]


@kernel
def subset_children(
    todo, search, nodes, sorted_idx, sorted_val, code, contrib, sample_weight, y,
    is_regression, cat_slot, node_bits, splits, chosen,
):  # fmt: skip
    """Children's statistics of categorical subset splits; stores each node's split row.

    The node's split row goes to ``node_bits[node]`` and its threshold becomes the node id
    (the estimator turns both into the tree's bitset table). A subset split's children are
    not a prefix of the sorted segment, so with a criterion reading their rows these are
    copied to ``chosen.child_rows``. NaN is one of the categories: its side is in the row.
    """
    (todo, searched, search_nodes, out_pos, out_threshold, out_bits, node_start, node_end,
     sorted_idx, sorted_val, code, contrib, sample_weight, y, cat_slot, node_bits,
     child_stats, feature, pos_of, weight_left, weight_right, own_rows, child_rows) = borrowed((
        todo, search.searched, search.nodes, search.pos, search.threshold, search.bits,
        nodes.start, nodes.end, sorted_idx, sorted_val, code, contrib, sample_weight, y,
        cat_slot, node_bits, splits.child_stats, chosen.feature, chosen.pos,
        chosen.weight_left, chosen.weight_right, chosen.own_rows,
        chosen.child_rows))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        copy_bits(out_bits[s, cat_slot[f]], node_bits[node])
        out_threshold[s, f] = node
        left_ids, right_ids = split_segment_ids(
            sorted_idx[f], sorted_val[f], start, end, node_bits[node]
        )
        weight_left[s] = segment_stats(
            left_ids, np.int64(0), left_ids.shape[0], np.int64(0), np.int64(0), code, contrib,
            sample_weight, y, is_regression, child_stats[k, 0],
        )  # fmt: skip
        weight_right[s] = segment_stats(
            right_ids, np.int64(0), right_ids.shape[0], np.int64(0), np.int64(0), code, contrib,
            sample_weight, y, is_regression, child_stats[k, 1],
        )  # fmt: skip
        pos_of[s] = out_pos[s, f]
        if child_rows.shape[0] > 0:
            at = copy_rows(left_ids, np.int64(0), left_ids.shape[0], child_rows, start)
            copy_rows(right_ids, np.int64(0), right_ids.shape[0], child_rows, at)
            own_rows[s] = 1


@kernel
def two_valued_children(todo, search, nodes, row_codes, two_valued, splits, chosen):
    """Children's class counts of splits on a two-valued column (``sweep_two_valued``).

    The split feature's own segment is stale (such columns are not partitioned): the right
    child's counts are those of the rows taking the high value, read in the row feature's
    order (``row_codes``) with the column's bit; the left child's are the rest (row counts,
    so exact).
    """
    two_slot, _, high_bits = two_valued
    (todo, searched, search_nodes, out_pos, node_start, node_end, node_stats, node_weight,
     row_codes, two_slot, high_bits, child_stats, feature, pos_of, weight_left,
     weight_right) = borrowed((
        todo, search.searched, search.nodes, search.pos, nodes.start, nodes.end, nodes.stats,
        nodes.weight, row_codes, two_slot, high_bits, splits.child_stats, chosen.feature,
        chosen.pos, chosen.weight_left, chosen.weight_right))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        weight_right[s] = high_side_counts(
            row_codes, start, end, high_bits, two_slot[f],
            child_stats[k, 1],
        )  # fmt: skip
        weight_left[s] = node_weight[node] - weight_right[s]
        for c in range(child_stats.shape[2]):
            child_stats[k, 0, c] = node_stats[node, c] - child_stats[k, 1, c]
        pos_of[s] = out_pos[s, f]


@inline_kernel
def segment_impurity(
    criterion, stats, weight, idx, start, end, y, sample_weight, absolute_error_search,
    multi_output_search,
):  # fmt: skip
    """Impurity of the node holding the samples ``idx[start:end]``, with statistics ``stats``.

    ``poisson`` and ``absolute_error`` read the samples (O(n) and O(n log n)); the
    ``absolute_error`` median is written to ``stats[MEDIAN_STAT]``. The other criteria need
    only ``stats`` (``criterion.node_impurity``). The switches: see ``grow.search_switches``
    (None leaves the median computation, or the multi-output impurity, out of the code).
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
    return node_impurity(criterion, stats, weight, multi_output_search)


@callee_kernel
def children_impurity(criterion, child_stats, weight_left, weight_right, idx, start, pos, end, y,
                      sample_weight):  # fmt: skip
    """Return the impurities of a split's two children (plain criteria).

    Every criterion but absolute error and the multi-output ones
    (:func:`optional_children_impurity` has those). ``child_stats`` is the split's
    ``(2, n_stats)`` statistics; ``idx[start:pos]`` and ``idx[pos:end]`` are the children's
    samples (read by poisson only).
    """
    impurity_left = segment_impurity(criterion, child_stats[0], weight_left, idx, start, pos, y,
                                     sample_weight, None, None)  # fmt: skip
    impurity_right = segment_impurity(criterion, child_stats[1], weight_right, idx, pos, end, y,
                                      sample_weight, None, None)  # fmt: skip
    return impurity_left, impurity_right


@inline_kernel
def split_rows_of(s, f, own_rows, child_rows, sorted_idx):
    """Return searched row ``s``'s children's sample ids: its own copy, or the sorted segment."""
    return child_rows if own_rows[s] else sorted_idx[f]


@kernel
def optional_children_impurity(
    todo, search, nodes, sorted_idx, y, sample_weight, criterion, splits, chosen, out,
    absolute_error_search, multi_output_search,
):  # fmt: skip
    """Children's impurities of the chosen splits of absolute-error or multi-output fits.

    Writes ``out[s, 0]`` and ``out[s, 1]`` for each searched row of ``todo`` (the
    absolute-error median goes to the children's ``MEDIAN_STAT`` statistic). A kernel of
    those fits only, one per switch: :func:`children_impurity` serves the others.
    """
    (todo, searched, search_nodes, node_start, node_end, sorted_idx, feature, pos_of,
     weight_left, weight_right, own_rows, child_rows, child_stats) = borrowed((
        todo, search.searched, search.nodes, nodes.start, nodes.end, sorted_idx,
        chosen.feature, chosen.pos, chosen.weight_left, chosen.weight_right, chosen.own_rows,
        chosen.child_rows, splits.child_stats))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        rows = split_rows_of(s, f, own_rows, child_rows, sorted_idx)
        for side in range(2):
            out[s, side] = segment_impurity(
                criterion, child_stats[k, side], weight_left[s] if side == 0 else weight_right[s],
                rows, start if side == 0 else pos_of[s], pos_of[s] if side == 0 else end, y,
                sample_weight, absolute_error_search, multi_output_search,
            )  # fmt: skip


@inline_kernel
def accept_split(
    k, f, pos, split_threshold_k, missing, weight_left, weight_right, impurity_left,
    impurity_right, impurity, weight, weight_root, min_impurity_decrease, splits, mdl_stop,
):  # fmt: skip
    """Record batch node ``k``'s best split unless a stopping rule rejects it.

    ``splits`` is the batch's :class:`SplitBatch`; its ``child_stats[k]`` holds the
    children's statistics on entry, and the children's impurities are given. The node
    stays a leaf (``splits.feature[k] == -1``) if ``improvement + EPSILON <
    min_impurity_decrease``, or, with ``mdl_stop``, if the split fails Fayyad & Irani's MDLP
    test.
    """
    child_stats = splits.child_stats
    if mdl_stop is not None and not mdlp_accepts_split(
        child_stats[k, 0], child_stats[k, 1], weight_left, weight_right
    ):
        return
    gain = impurity_improvement(
        impurity, impurity_left, impurity_right, weight_left, weight_right, weight, weight_root
    )
    if gain + EPSILON < min_impurity_decrease:
        return
    splits.child_weight[k, 0] = weight_left
    splits.child_weight[k, 1] = weight_right
    splits.child_impurity[k, 0] = impurity_left
    splits.child_impurity[k, 1] = impurity_right
    splits.feature[k] = f
    splits.pos[k] = pos
    splits.threshold[k] = split_threshold_k
    splits.improvement[k] = gain
    splits.missing[k] = missing


@kernel
def accept_splits(
    todo, search, nodes, sorted_idx, y, sample_weight, criterion, weight_root,
    min_impurity_decrease, splits, chosen, given_impurity, mdl_stop,
):  # fmt: skip
    """:func:`accept_split` for the chosen split of every searched row of ``todo``.

    The children's impurities are ``given_impurity[s]`` when it has rows (absolute-error
    and multi-output fits, :func:`optional_children_impurity`), else computed here by
    :func:`children_impurity`. A child's rows are the split feature's sorted segment, or
    ``chosen.child_rows`` where the kind kernel copied them (``own_rows``).
    """
    (todo, searched, search_nodes, out_threshold, out_missing, node_start, node_end,
     node_weight, node_impurity_, sorted_idx, feature, pos_of, weight_left, weight_right,
     own_rows, child_rows, child_stats) = borrowed((
        todo, search.searched, search.nodes, search.threshold, search.missing, nodes.start,
        nodes.end, nodes.weight, nodes.impurity, sorted_idx, chosen.feature, chosen.pos,
        chosen.weight_left, chosen.weight_right, chosen.own_rows, chosen.child_rows,
        splits.child_stats))  # fmt: skip
    for i in range(todo.shape[0]):
        s, f, node, k, start, end = todo_entry(
            i, todo, feature, search_nodes, searched, node_start, node_end
        )
        if given_impurity.shape[0] > 0:
            impurity_left, impurity_right = given_impurity[s, 0], given_impurity[s, 1]
        else:
            impurity_left, impurity_right = children_impurity(
                criterion, child_stats[k], weight_left[s], weight_right[s],
                split_rows_of(s, f, own_rows, child_rows, sorted_idx), start, pos_of[s], end, y,
                sample_weight,
            )  # fmt: skip
        accept_split(
            k, f, pos_of[s], out_threshold[s, f], out_missing[s, f], weight_left[s],
            weight_right[s], impurity_left, impurity_right, node_impurity_[node],
            node_weight[node], weight_root, min_impurity_decrease, splits, mdl_stop,
        )  # fmt: skip


# No given impurities: :func:`accept_splits` computes them (:func:`children_impurity`).
NO_IMPURITIES = np.zeros((0, 2))
NO_ROWS = np.zeros(0, dtype=np.int64)


def choose_splits(search, nodes, node_bits, splits, fit, feature):
    """Sum the children's statistics of each searched node's split, then accept or refuse it.

    ``search`` is the batch's :class:`BatchSearch`, ``nodes`` the :class:`NodeArrays`,
    ``splits`` the :class:`SplitBatch` written, ``fit`` the ``grow.PresortedFit`` and
    ``feature`` each searched row's chosen feature (-1: none), from :func:`best_features`
    or the gain-ratio rule. A subset split's row is stored in ``node_bits[node]`` and its
    threshold is the node id.

    Notes
    -----
    Python, once per level (per best-first step): the nodes are sorted by the kind of their
    split, and each kind's kernel runs on its own nodes. Each node's work is independent of
    the others', so the order of the kinds changes nothing.
    """
    chosen = new_chosen(feature, fit.sorted_idx.shape[1], fit.criterion)
    todo = np.flatnonzero(feature >= 0)
    if todo.shape[0] == 0:
        return
    # Most fits have neither categorical nor two-valued columns: every split a threshold.
    threshold, subset, two_valued = todo, NO_ROWS, NO_ROWS
    if fit.switches[0] is not None or fit.two_valued[2].shape[1] > 0:
        f = feature[todo]
        subset = todo[fit.cat_slot[f] >= 0]
        two_valued = todo[fit.two_valued[0][f] >= 0]
        threshold = todo[(fit.cat_slot[f] < 0) & (fit.two_valued[0][f] < 0)]
    if threshold.shape[0] > 0:
        if fit.unit_weight and fit.criterion < MULTI_OUTPUT:
            count_children(threshold, search, nodes, fit.sorted_val, fit.sorted_code, splits,
                           chosen)  # fmt: skip
        else:
            sum_children(
                threshold, search, nodes, fit.sorted_idx, fit.sorted_val, fit.code, fit.contrib,
                fit.sample_weight, fit.y, fit.is_regression, fit.criterion, splits, chosen,
                fit.switches[2],
            )  # fmt: skip
    if subset.shape[0] > 0:
        subset_children(
            subset, search, nodes, fit.sorted_idx, fit.sorted_val, fit.code, fit.contrib,
            fit.sample_weight, fit.y, fit.is_regression, fit.cat_slot, node_bits, splits,
            chosen,
        )  # fmt: skip
    if two_valued.shape[0] > 0:
        two_valued_children(two_valued, search, nodes, fit.sorted_code[fit.row_feature],
                            fit.two_valued, splits, chosen)  # fmt: skip
    _, absolute_error_search, multi_output_search = fit.switches
    given_impurity = NO_IMPURITIES
    if absolute_error_search is not None or multi_output_search is not None:
        given_impurity = np.empty((feature.shape[0], 2))
        optional_children_impurity(
            todo, search, nodes, fit.sorted_idx, fit.y, fit.sample_weight, fit.criterion,
            splits, chosen, given_impurity, absolute_error_search, multi_output_search,
        )  # fmt: skip
    accept_splits(
        todo, search, nodes, fit.sorted_idx, fit.y, fit.sample_weight, fit.criterion,
        fit.weight_root, fit.rules.min_impurity_decrease, splits, chosen, given_impurity,
        fit.mdl_stop,
    )  # fmt: skip
