"""Absolute-error criterion (``criterion="absolute_error"``): weighted medians in O(n log n).

scikit-learn's semantics (``sklearn/tree/criterion.pyx``, class ``MAE``, release 1.9): the
value of a node is the weighted median of its targets and its impurity is the mean absolute
deviation from it, ``sum(w * |y - median|) / W``. The median of a set is the target at the
smallest rank whose cumulative weight exceeds half the total weight; when the cumulative
weight of some rank equals half the total exactly, it is the midpoint of that target and the
next one.

Split search for one (node, feature) pair sweeps the feature's sorted segment twice, as
scikit-learn does: forward, adding one sample at a time to a Fenwick tree over the node-local
ranks of the targets, which gives the absolute error of every prefix (left child); and
backward for every suffix (right child). A Fenwick tree answers "which rank holds half the
weight" and "weight and ``w * y`` below that rank" in O(log n), so a candidate costs
O(log n) instead of the O(n) of recomputing medians: O(n log n) per node and feature.

Missing values (scikit-learn 1.9's rules, as ``sweep_exact.best_splits_worker``): a
feature's NaN rows are the tail of its sorted segment. The sweep above, run over the whole
segment, scores every cut with the NaN rows on the right and, last, the cut "every value |
NaN" (threshold ``+inf``). A second sweep scores the cuts with the NaN rows on the left: its
forward pass starts from a Fenwick tree already holding them, its backward pass covers the
values only. scikit-learn moves the rows physically for that second sweep; the additions
happen in the same order here, so the errors round alike. Ties keep the earlier candidate.

The ranks of a node's targets are computed once per node (a sort) and shared by all features:
``rank_of[i]`` is sample ``i``'s rank in its node and ``sorted_y[start + r]`` the target at rank
``r`` of the node whose segment starts at ``start``. Nodes of a batch own disjoint samples and
segments, so one pair of arrays serves the whole batch.
"""

from __future__ import annotations

import numpy as np

from .jit import FEATURE_THRESHOLD, callee_kernel, inline_kernel, kernel
from .sorting import stable_order
from .sweep_exact import NO_SPLIT, count_missing, first_position_above
from .work_queue import claim_item

# Index of the weighted median in a regression node's statistics vector (after
# sum(w*y), sum(w*y*y) and the target range), filled when the node's impurity is computed.
MEDIAN_STAT = 3


@inline_kernel
def fenwick_reset(tree_w, tree_wy, size):
    """Clear the first ``size + 1`` entries; return the highest power of two ``<= size``."""
    for j in range(size + 1):
        tree_w[j] = 0.0
        tree_wy[j] = 0.0
    p = 1
    while p <= size:
        p <<= 1
    return p >> 1


@inline_kernel
def fenwick_add(tree_w, tree_wy, size, rank, y_value, weight):
    """Add weight ``weight`` and ``weight * y_value`` at 0-based ``rank`` (1-based inside)."""
    weighted_y = weight * y_value
    j = rank + 1
    while j <= size:
        tree_w[j] += weight
        tree_wy[j] += weighted_y
        j += j & -j


@inline_kernel
def fenwick_search(tree_w, tree_wy, size, max_pow2, target_weight):
    """Find where the cumulative weight crosses ``target_weight`` (scikit-learn's search).

    Returns
    -------
    rank : int
        Smallest rank whose cumulative weight (inclusive) exceeds the target.
    prev_rank : int
        ``rank`` itself, or, when some rank's cumulative weight equals the target exactly,
        that rank (the midpoint of the two targets is then the median).
    cumul_weight, cumul_weighted_y : float
        Sums of ``w`` and ``w * y`` over the ranks below ``rank``.

    Notes
    -----
    The same descent and the same additions as scikit-learn's ``WeightedFenwickTree.search``,
    so medians and absolute errors round as they do there. O(log size).
    """
    current = 0
    cumul_weight = 0.0
    cumul_weighted_y = 0.0
    bit = max_pow2
    equal_bit = 0
    equal_target = 0.0
    while bit != 0:
        nxt = current + bit
        if nxt <= size:
            node_weight = tree_w[nxt]
            if target_weight == node_weight:
                equal_target = target_weight
                equal_bit = bit
                break
            elif target_weight > node_weight:
                target_weight -= node_weight
                current = nxt
                cumul_weight += node_weight
                cumul_weighted_y += tree_wy[nxt]
        bit >>= 1
    if bit == 0:
        return current, current, cumul_weight, cumul_weighted_y
    # Exact match: the previous rank is the largest with cumulative weight below the target,
    # the rank is the first with cumulative weight above it.
    prev = current
    while bit != 0:
        nxt = prev + bit
        if nxt <= size:
            node_weight = tree_w[nxt]
            if target_weight > node_weight:
                target_weight -= node_weight
                prev = nxt
        bit >>= 1
    bit = equal_bit
    target_weight = equal_target
    while bit != 0:
        nxt = current + bit
        if nxt <= size:
            node_weight = tree_w[nxt]
            if target_weight >= node_weight:
                target_weight -= node_weight
                current = nxt
                cumul_weight += node_weight
                cumul_weighted_y += tree_wy[nxt]
        bit >>= 1
    return current, prev, cumul_weight, cumul_weighted_y


@inline_kernel
def fenwick_add_sample(i, base, rank_of, sorted_y, sample_weight, size, tree_w, tree_wy):
    """Add sample ``i`` of the node starting at ``base``; returns its ``w`` and ``w * y``."""
    w = sample_weight[i]
    rank = rank_of[i]
    y_value = sorted_y[base + rank]
    fenwick_add(tree_w, tree_wy, size, rank, y_value, w)
    return w, w * y_value


@callee_kernel
def absolute_errors_pass(idx, first, stop, preload_start, preload_end, base, rank_of, sorted_y,
                         sample_weight, size, tree_w, tree_wy, out_errors):  # fmt: skip
    """Absolute error of every prefix of ``idx[first], idx[first + step], ...`` up to ``stop``.

    Parameters
    ----------
    idx : ndarray of int32
        Sample ids in the feature's sorted order.
    first, stop : int
        Forward pass (``first < stop``): positions ``first .. stop - 1``, ``out_errors[p -
        base]`` receives the error of ``idx[first:p + 1]``. Backward pass (``first > stop``):
        positions ``first`` down to ``stop + 1``, the error of ``idx[p:first + 1]``.
    preload_start, preload_end : int
        Samples ``idx[preload_start:preload_end]`` (in that order; none if equal) are in
        every prefix: added before the pass, with no output of their own (the NaN rows
        when they go left).
    base : int
        The node's first position (``sorted_y`` and ``out_errors`` offsets).
    rank_of, sorted_y : ndarray
        Node-local ranks of the targets (by sample id) and the targets by rank.
    sample_weight : ndarray of float64
    size : int
        Number of samples of the node (ranks are ``0 .. size - 1``).
    tree_w, tree_wy : ndarray of float64
        Scratch Fenwick arrays of at least ``size + 1`` entries.
    out_errors : ndarray of float64
        Receives ``sum(w * |y - median|)`` of each prefix.

    Notes
    -----
    scikit-learn's ``precompute_absolute_errors``: O(size log size).
    """
    step = 1 if first < stop else -1
    max_pow2 = fenwick_reset(tree_w, tree_wy, size)
    total_w = 0.0
    total_wy = 0.0
    for p in range(preload_start, preload_end):
        w, wy = fenwick_add_sample(idx[p], base, rank_of, sorted_y, sample_weight, size, tree_w,
                                   tree_wy)  # fmt: skip
        total_w += w
        total_wy += wy
    p = first
    while p != stop:
        w, wy = fenwick_add_sample(idx[p], base, rank_of, sorted_y, sample_weight, size, tree_w,
                                   tree_wy)  # fmt: skip
        total_w += w
        total_wy += wy
        median_rank, prev_rank, w_left, wy_left = fenwick_search(
            tree_w, tree_wy, size, max_pow2, 0.5 * total_w
        )
        if median_rank != prev_rank:
            median = (sorted_y[base + prev_rank] + sorted_y[base + median_rank]) / 2
        else:
            median = sorted_y[base + median_rank]
        w_right = total_w - w_left
        wy_right = total_wy - wy_left
        # Pinball identity: above the median w * (y - m), below it w * (m - y).
        out_errors[p - base] = (wy_right - median * w_right) + (median * w_left - wy_left)
        p += step


@inline_kernel
def absolute_error_proxy(error_left, error_right, weight_left, weight_right):
    """scikit-learn's proxy ``-W_r * I_r - W_l * I_l`` with ``I = error / W`` (larger is better)."""
    return -weight_right * (error_right / weight_right) - weight_left * (error_left / weight_left)


@callee_kernel
def absolute_error_cuts(idx, val, start, end_values, end, missing_left, rank_of, sorted_y,
                        sample_weight, weight, min_samples_leaf, min_weight_leaf, only_pos,
                        tree_w, tree_wy, left_errors, right_errors):  # fmt: skip
    """Best cut of one feature for one node with the NaN rows on one given side.

    Parameters
    ----------
    idx, val : ndarray of int32 / float32
        The feature's sorted sample ids and values.
    start, end_values, end : int
        The node's segment ``[start, end)``; its NaN values are ``[end_values, end)``.
    missing_left : bool
        The NaN rows go left (else right).
    rank_of, sorted_y, sample_weight
        See the module docstring.
    weight : float
        The node's weight.
    min_samples_leaf, min_weight_leaf
        Fewest samples and least weight a child may have.
    only_pos : int
        ``-1``: every cut between two distinct values, then, with NaN rows on the right,
        the cut "every value | NaN". Otherwise score only the cut before ``only_pos``
        (``splitter="random"``).
    tree_w, tree_wy, left_errors, right_errors : ndarray of float64
        Scratch of at least ``end - start + 1`` entries.

    Returns
    -------
    proxy, pos, threshold
        ``pos`` is the first non-missing position of the right child; the threshold of the
        cut "every value | NaN" is ``+inf`` (``-inf`` proxy when no cut is valid).

    Notes
    -----
    Two passes of O(n log n): with the NaN rows on the right, forward over the values and
    backward over the whole segment (so ``right_errors`` also holds the NaN rows alone);
    with them on the left, forward over the values after the NaN rows, backward over the
    values only.
    """
    n = end - start
    n_missing = end - end_values
    if missing_left:
        absolute_errors_pass(idx, start, end_values, end_values, end, start, rank_of, sorted_y,
                             sample_weight, n, tree_w, tree_wy, left_errors)  # fmt: skip
        absolute_errors_pass(idx, end_values - 1, start - 1, start, start, start, rank_of,
                             sorted_y, sample_weight, n, tree_w, tree_wy,
                             right_errors)  # fmt: skip
    else:
        absolute_errors_pass(idx, start, end_values, start, start, start, rank_of, sorted_y,
                             sample_weight, n, tree_w, tree_wy, left_errors)  # fmt: skip
        absolute_errors_pass(idx, end - 1, start - 1, start, start, start, rank_of, sorted_y,
                             sample_weight, n, tree_w, tree_wy, right_errors)  # fmt: skip
    n_left_extra = n_missing if missing_left else 0
    n_right_extra = n_missing - n_left_extra
    # Left weights are summed in scikit-learn's order: the NaN rows first when they go left.
    weight_left = 0.0
    if missing_left:
        for p in range(end_values, end):
            weight_left += sample_weight[idx[p]]
    best_proxy = NO_SPLIT
    best_pos = end
    best_threshold = 0.0
    for p in range(start + 1, end_values):
        weight_left += sample_weight[idx[p - 1]]
        if only_pos >= 0 and p != only_pos:
            continue
        if only_pos < 0 and val[p] <= val[p - 1] + FEATURE_THRESHOLD:
            continue  # not between two distinct values
        if end_values - p + n_right_extra < min_samples_leaf or (
            weight - weight_left < min_weight_leaf
        ):
            break  # the right side only shrinks from here on
        if p - start + n_left_extra < min_samples_leaf or weight_left < min_weight_leaf:
            continue
        proxy = absolute_error_proxy(
            left_errors[p - 1 - start], right_errors[p - start], weight_left, weight - weight_left
        )
        if proxy > best_proxy:
            best_proxy = proxy
            best_pos = p
            best_threshold = np.float64(val[p - 1]) / 2.0 + np.float64(val[p]) / 2.0
    if n_missing > 0 and not missing_left and (only_pos < 0 or only_pos == end_values):
        # Every value left, the NaN rows right.
        weight_left = 0.0
        for p in range(start, end_values):
            weight_left += sample_weight[idx[p]]
        if (
            end_values - start >= min_samples_leaf
            and n_missing >= min_samples_leaf
            and weight_left >= min_weight_leaf
            and weight - weight_left >= min_weight_leaf
        ):
            proxy = absolute_error_proxy(
                left_errors[end_values - 1 - start], right_errors[end_values - start],
                weight_left, weight - weight_left,
            )  # fmt: skip
            if proxy > best_proxy:
                best_proxy = proxy
                best_pos = end_values
                best_threshold = np.inf
    return best_proxy, best_pos, best_threshold


@inline_kernel
def absolute_error_split_in_segment(idx, val, start, end, rank_of, sorted_y, sample_weight,
                                    weight, min_samples_leaf, min_weight_leaf, random_split,
                                    threshold, missing_go_left, tree_w, tree_wy, left_errors,
                                    right_errors):  # fmt: skip
    """Best (or, with ``random_split``, the given) split of one feature for one node.

    Parameters
    ----------
    idx, val : ndarray of int32 / float32
        The feature's sorted sample ids and values (NaN last); only ``[start, end)`` is read.
    start, end : int
        The node's segment.
    rank_of, sorted_y : ndarray
        Node-local target ranks (see the module docstring).
    sample_weight : ndarray of float64
    weight : float
        The node's weight.
    min_samples_leaf, min_weight_leaf
        Fewest samples and least weight a child may have.
    random_split : bool
        Score only ``threshold`` (``splitter="random"``).
    threshold : float
        The drawn threshold (read only with ``random_split``).
    missing_go_left : bool
        The side drawn for the NaN rows (read only with ``random_split`` and NaN rows).
    tree_w, tree_wy, left_errors, right_errors : ndarray of float64
        Scratch of at least ``end - start + 1`` entries.

    Returns
    -------
    proxy, pos, threshold, missing
        As ``sweep_exact.best_splits_worker`` / ``random_split_in_segment`` give them.

    Notes
    -----
    Candidates, feasibility rules and tie-breaking (strictly greater proxy wins, so the lowest
    threshold, NaN right before NaN left) are those of the exact sweep. Cost O(n log n) per
    side tried for the NaN rows, n = end - start.
    """
    n_missing = count_missing(val, start, end)
    end_values = end - n_missing
    if end_values == start or (n_missing == 0 and val[end - 1] <= val[start] + FEATURE_THRESHOLD):
        return NO_SPLIT, end, 0.0, -1
    if random_split:
        missing = (1 if missing_go_left else 0) if n_missing > 0 else -1
        pos = first_position_above(val, start, end_values, threshold)
        # pos > start: the threshold is drawn at or above the smallest value.
        n_left = pos - start + (n_missing if missing == 1 else 0)
        if n_left < min_samples_leaf or end - start - n_left < min_samples_leaf:
            return NO_SPLIT, end, threshold, missing  # before the O(n log n) passes
        proxy, pos, _ = absolute_error_cuts(
            idx, val, start, end_values, end, missing == 1, rank_of, sorted_y, sample_weight,
            weight, min_samples_leaf, min_weight_leaf, pos, tree_w, tree_wy, left_errors,
            right_errors,
        )  # fmt: skip
        return proxy, pos, threshold, missing
    proxy, pos, best_threshold = absolute_error_cuts(
        idx, val, start, end_values, end, np.bool_(False), rank_of, sorted_y, sample_weight,
        weight, min_samples_leaf, min_weight_leaf, np.int64(-1), tree_w, tree_wy, left_errors,
        right_errors,
    )  # fmt: skip
    if n_missing == 0:
        return proxy, pos, best_threshold, -1
    proxy_left, pos_left, threshold_left = absolute_error_cuts(
        idx, val, start, end_values, end, np.bool_(True), rank_of, sorted_y, sample_weight,
        weight, min_samples_leaf, min_weight_leaf, np.int64(-1), tree_w, tree_wy, left_errors,
        right_errors,
    )  # fmt: skip
    if proxy_left > proxy:
        return proxy_left, pos_left, threshold_left, 1
    return proxy, pos, best_threshold, 0


@kernel
def rank_targets(nodes, node_start, node_end, idx, y, rank_of, sorted_y):
    """Fill ``rank_of`` and ``sorted_y`` for every node of a batch (see the module docstring).

    Parameters
    ----------
    idx : ndarray of int32
        Any one feature's sorted sample ids: each node's segment holds its samples.

    Notes
    -----
    A stable sort per node: O(n log n). Tied targets get distinct consecutive ranks, which
    changes neither medians nor absolute errors.
    """
    for node in nodes:
        start = node_start[node]
        end = node_end[node]
        values = np.empty(end - start, dtype=np.float64)
        for p in range(start, end):
            values[p - start] = y[idx[p]]
        order = stable_order(values)
        for r in range(end - start):
            sorted_y[start + r] = values[order[r]]
            rank_of[idx[start + order[r]]] = r


@callee_kernel
def absolute_error_splits_of_feature(f, nodes, candidate, node_start, node_end, node_weight,
                                     sorted_idx, sorted_val, rank_of, sorted_y, sample_weight,
                                     min_samples_leaf, min_weight_leaf, random_split,
                                     max_segment, out_proxy, out_pos, out_threshold,
                                     out_missing):  # fmt: skip
    """Sweep feature ``f`` for every node of a batch; writes column ``f`` of the outputs only.

    ``out_missing[k, f]`` receives where node ``k``'s NaN rows go (1 left, 0 right, -1 none).
    With ``random_split``, ``out_threshold[k, f]`` and ``out_missing[k, f]`` hold the drawn
    threshold and NaN side on entry.
    """
    tree_w = np.empty(max_segment + 1, dtype=np.float64)
    tree_wy = np.empty(max_segment + 1, dtype=np.float64)
    left_errors = np.empty(max_segment, dtype=np.float64)
    right_errors = np.empty(max_segment, dtype=np.float64)
    for k in range(nodes.shape[0]):
        node = nodes[k]
        if candidate[k, f]:
            proxy, pos, threshold, missing = absolute_error_split_in_segment(
                sorted_idx[f], sorted_val[f], node_start[node], node_end[node], rank_of,
                sorted_y, sample_weight, node_weight[node], min_samples_leaf, min_weight_leaf,
                random_split, out_threshold[k, f], out_missing[k, f] == 1, tree_w, tree_wy,
                left_errors, right_errors,
            )  # fmt: skip
        else:
            proxy, pos, threshold, missing = NO_SPLIT, node_end[node], 0.0, -1
        out_proxy[k, f] = proxy
        out_pos[k, f] = pos
        out_threshold[k, f] = threshold
        out_missing[k, f] = missing


@kernel
def absolute_error_splits_worker(queue, n_threads, nodes, candidate, node_start, node_end,
                                 node_weight, sorted_idx, sorted_val, rank_of, sorted_y,
                                 sample_weight, min_samples_leaf, min_weight_leaf, random_split,
                                 max_segment, out_proxy, out_pos, out_threshold,
                                 out_missing):  # fmt: skip
    """One thread's share of the best absolute-error split of every (node, feature) pair.

    Called on ``n_threads`` threads at once (``threads.run_workers``); each claims features
    from ``queue``, and feature ``f`` writes only column ``f`` of the outputs and its own
    scratch: bit-identical whatever the thread count.
    """
    f = claim_item(queue)
    while f < sorted_idx.shape[0]:
        absolute_error_splits_of_feature(
            f, nodes, candidate, node_start, node_end, node_weight, sorted_idx, sorted_val,
            rank_of, sorted_y, sample_weight, min_samples_leaf, min_weight_leaf, random_split,
            max_segment, out_proxy, out_pos, out_threshold, out_missing,
        )  # fmt: skip
        f = claim_item(queue)


@kernel
def absolute_error_of_segment(idx, start, end, y, sample_weight):
    """Weighted median and mean absolute deviation of the samples ``idx[start:end]``.

    Returns
    -------
    median : float
        scikit-learn's weighted median (see the module docstring).
    impurity : float
        ``sum(w * |y - median|) / W``, computed with scikit-learn's pinball identity from the
        sums of ``w`` and ``w * y`` below the median's rank.

    Notes
    -----
    One sort, then a scan in target order: O(n log n).
    """
    n = end - start
    values = np.empty(n, dtype=np.float64)
    weights = np.empty(n, dtype=np.float64)
    total_w = 0.0
    total_wy = 0.0
    for p in range(start, end):
        i = idx[p]
        values[p - start] = y[i]
        weights[p - start] = sample_weight[i]
        total_w += sample_weight[i]
        total_wy += sample_weight[i] * y[i]
    order = stable_order(values)
    half_weight = 0.5 * total_w
    w_left = 0.0
    wy_left = 0.0
    median = values[order[n - 1]]
    for r in range(n):
        j = order[r]
        cumulative = w_left + weights[j]
        if cumulative > half_weight:
            median = values[j]
            if w_left == half_weight and r > 0:
                median = (values[order[r - 1]] + values[j]) / 2
            break
        w_left = cumulative
        wy_left += weights[j] * values[j]
    w_right = total_w - w_left
    wy_right = total_wy - wy_left
    error = (wy_right - median * w_right) + (median * w_left - wy_left)
    return median, error / total_w
