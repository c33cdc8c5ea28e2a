"""Split search of multi-output trees (y of shape (n_samples, n_outputs), scikit-learn's).

One tree predicts every output; its splits minimise the impurity averaged over the outputs
(``criterion.multi_output_impurity``). The presorted layout of ``sweep_exact`` is shared;
what differs is what a row adds to the sweep statistics: one slot *per output* instead of
one. The per-row arrays are flattened row by row, entry ``j = i * n_outputs + o`` for row
``i`` and output ``o``:

- ``code[j]`` (int32): the statistics slot of row ``i`` for output ``o``:
  ``o * width + class`` for classification (``width``: the largest number of classes),
  ``o`` for regression;
- ``contrib[j]`` (float64): what it adds there, ``w_i`` or ``w_i * y_io``;
- ``y[j]`` (float64, regression only): ``y_io``.

``sample_weight`` keeps one entry per row. The number of outputs travels in the criterion
code (``jit.MULTI_OUTPUT``), so the builder needs no extra arguments: it dispatches to
:func:`multi_output_splits_worker` and computes node
statistics with :func:`stats_of_rows`.

The sweep gathers each row's codes (``n_outputs`` reads per row) rather than reading a
presorted code column, and scores every candidate threshold (the single-output sweep's
class-boundary skipping is not applied): multi-output trees are rarer and this keeps the
single-output kernels untouched. Missing values follow the rules of
``sweep_exact.best_splits_worker`` and the random splitter those of
``sweep_exact.random_split_in_segment``.
"""

from __future__ import annotations

import numpy as np

from .criterion import is_multi_output, multi_output_proxy, n_outputs_of
from .jit import FEATURE_THRESHOLD, callee_kernel, inline_kernel, kernel
from .sweep_exact import (
    NO_SPLIT,
    count_missing,
    first_position_above,
    segment_stats,
    start_sides,
    values_versus_missing_proxy,
)
from .work_queue import claim_item


@inline_kernel
def add_rows(idx, start, end, code, contrib, sample_weight, n_outputs, out, weight):
    """Add the sweep statistics of the rows ``idx[start:end]`` to ``out``.

    Returns ``weight`` plus their weights (summed in row order, like the single-output
    sweep). Cost O((end - start) * n_outputs).
    """
    for p in range(start, end):
        i = idx[p]
        first = i * n_outputs
        for j in range(first, first + n_outputs):
            out[code[j]] += contrib[j]
        weight += sample_weight[i]
    return weight


@inline_kernel
def add_squares_and_ranges(idx, start, end, contrib, y, n_outputs, out, y_min, y_max):
    """Add ``w * y_o**2`` of the rows ``idx[start:end]`` to ``out[n_outputs + o]``.

    Also widens each output's target range ``[y_min[o], y_max[o]]`` (regression only).
    """
    for p in range(start, end):
        first = idx[p] * n_outputs
        for o in range(n_outputs):
            out[n_outputs + o] += contrib[first + o] * y[first + o]
            y_min[o] = min(y_min[o], y[first + o])
            y_max[o] = max(y_max[o], y[first + o])


@kernel
def multi_output_segment_stats(
    idx, start, end, extra_start, extra_end, code, contrib, sample_weight, y, is_regression,
    n_outputs, out,
):  # fmt: skip
    """Full statistics of the rows ``idx[start:end]`` and ``idx[extra_start:extra_end]``.

    What ``sweep_exact.segment_stats`` computes, in the multi-output layout of
    ``criterion``: class counts per output, or per output ``sum(w*y)``, ``sum(w*y*y)`` and
    the range of ``y`` (so an output whose targets are all equal has impurity exactly 0).
    ``out`` is zeroed here. Returns the weight of the rows.
    """
    out[:] = 0.0
    weight = add_rows(idx, start, end, code, contrib, sample_weight, n_outputs, out, 0.0)
    weight = add_rows(
        idx, extra_start, extra_end, code, contrib, sample_weight, n_outputs, out, weight
    )
    if is_regression:
        y_min = np.full(n_outputs, np.inf)
        y_max = np.full(n_outputs, -np.inf)
        add_squares_and_ranges(idx, start, end, contrib, y, n_outputs, out, y_min, y_max)
        add_squares_and_ranges(
            idx, extra_start, extra_end, contrib, y, n_outputs, out, y_min, y_max
        )
        for o in range(n_outputs):
            out[2 * n_outputs + o] = y_max[o] - y_min[o]
    return weight


@callee_kernel
def stats_of_rows(
    criterion, multi_output_search, idx, start, end, extra_start, extra_end, code, contrib,
    sample_weight, y, is_regression, out,
):  # fmt: skip
    """Node statistics of some rows for any criterion (the builder's one entry point).

    Multi-output codes get :func:`multi_output_segment_stats`, the others
    ``sweep_exact.segment_stats``; parameters and return value are theirs.
    ``multi_output_search`` is the builder's switch (``grow.search_switches``): None
    leaves the multi-output path out of the compiled code.
    """
    if multi_output_search is not None and is_multi_output(criterion):
        return multi_output_segment_stats(
            idx, start, end, extra_start, extra_end, code, contrib, sample_weight, y,
            is_regression, n_outputs_of(criterion), out,
        )  # fmt: skip
    return segment_stats(
        idx, start, end, extra_start, extra_end, code, contrib, sample_weight, y,
        is_regression, out,
    )  # fmt: skip


@callee_kernel
def sweep_segment(
    idx, val, start, end, code, contrib, sample_weight, total, weight, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, n_missing, missing_go_left, missing_stats,
    missing_weight, left,
):  # fmt: skip
    """Best threshold of one feature over the node's non-missing rows ``[start, end)``.

    Parameters and results are those of ``sweep_exact.prepare_sweep`` and
    ``sweep_exact.general_sweep`` (their ``codes`` and ``unit_weight`` aside): the node's
    ``n_missing`` NaN rows, of statistics ``missing_stats`` and weight ``missing_weight``,
    count on the left if ``missing_go_left``, else on the right.

    Notes
    -----
    Candidates are the positions where the value changes by more than
    ``FEATURE_THRESHOLD``; the best is replaced only on a strictly greater proxy, so the
    lowest threshold wins ties. Rows are added one by one in sorted order, so the left
    statistics and weight are the same sums as in the single-output sweep. Cost
    O((end - start) * n_outputs) plus O(n_sweep) per candidate.
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    if val[end - 1] <= val[start] + FEATURE_THRESHOLD:
        return best_proxy, best_pos, threshold
    n_outputs = n_outputs_of(criterion)
    weight_left, _, min_left, min_right = start_sides(
        n_sweep, min_samples_leaf, n_missing, missing_go_left, missing_stats, missing_weight,
        left,
    )  # fmt: skip
    for p in range(start + 1, end):
        # Left = [start, p): add row p - 1, then score the cut if the value changes here.
        weight_left = add_rows(idx, p - 1, p, code, contrib, sample_weight, n_outputs, left,
                               weight_left)  # fmt: skip
        if val[p] <= val[p - 1] + FEATURE_THRESHOLD:
            continue
        if end - p < min_right or weight - weight_left < min_weight_leaf:
            break  # the right side only shrinks from here on
        if p - start < min_left or weight_left < min_weight_leaf:
            continue
        proxy = multi_output_proxy(
            criterion, left, total, n_sweep, weight_left, weight - weight_left
        )
        if proxy > best_proxy:
            best_proxy = proxy
            best_pos = p
            threshold = np.float64(val[p - 1]) / 2.0 + np.float64(val[p]) / 2.0
    return best_proxy, best_pos, threshold


@inline_kernel
def best_split_multi_output(
    idx, val, start, end, code, contrib, sample_weight, total, weight, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, left, missing_stats,
):  # fmt: skip
    """Best split of one feature for one node, NaN rows included.

    Returns ``proxy, pos, threshold, missing`` as ``sweep_exact.best_splits_worker``
    finds them for a node, with its rules: a sweep with the NaN rows on the right, the cut
    "every value | NaN" (threshold ``+inf``), a sweep with the NaN rows on the left; a later
    candidate wins only if strictly better.
    """
    n_missing = count_missing(val, start, end)
    end_values = end - n_missing
    if end_values == start:
        return NO_SPLIT, end, 0.0, -1
    for c in range(n_sweep):
        missing_stats[c] = 0.0
    missing_weight = add_rows(idx, end_values, end, code, contrib, sample_weight,
                              n_outputs_of(criterion), missing_stats, 0.0)  # fmt: skip
    proxy, pos, threshold = sweep_segment(
        idx, val, start, end_values, code, contrib, sample_weight, total, weight, n_sweep,
        criterion, min_samples_leaf, min_weight_leaf, n_missing, np.bool_(False), missing_stats,
        missing_weight, left,
    )  # fmt: skip
    if n_missing == 0:
        return proxy, pos, threshold, -1
    missing = 0
    proxy_inf = values_versus_missing_proxy(
        end_values - start, n_missing, weight, missing_weight, total, missing_stats, n_sweep,
        criterion, min_samples_leaf, min_weight_leaf, left,
    )  # fmt: skip
    if proxy_inf > proxy:
        proxy, pos, threshold = proxy_inf, end_values, np.inf
    proxy_left, pos_left, threshold_left = sweep_segment(
        idx, val, start, end_values, code, contrib, sample_weight, total, weight, n_sweep,
        criterion, min_samples_leaf, min_weight_leaf, n_missing, np.bool_(True), missing_stats,
        missing_weight, left,
    )  # fmt: skip
    if proxy_left > proxy:
        return proxy_left, pos_left, threshold_left, 1
    return proxy, pos, threshold, missing


@inline_kernel
def random_split_multi_output(
    idx, val, start, end, code, contrib, sample_weight, total, weight, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, threshold, missing_go_left, left,
):  # fmt: skip
    """Score the drawn ``threshold`` of one feature for one node (``splitter="random"``).

    Returns ``proxy, pos, threshold, missing`` as ``sweep_exact.random_split_in_segment``,
    with its rules (NaN rows on the drawn side; ``-inf`` if a child would be too small).
    """
    n_missing = count_missing(val, start, end)
    end_values = end - n_missing
    missing = (1 if missing_go_left else 0) if n_missing > 0 else -1
    pos = first_position_above(val, start, end_values, threshold)
    n_left = pos - start + (n_missing if missing == 1 else 0)
    if n_left < min_samples_leaf or end - start - n_left < min_samples_leaf:
        return NO_SPLIT, end, threshold, missing
    n_outputs = n_outputs_of(criterion)
    for c in range(n_sweep):
        left[c] = 0.0
    weight_left = 0.0
    if missing == 1:
        weight_left = add_rows(idx, end_values, end, code, contrib, sample_weight, n_outputs,
                               left, weight_left)  # fmt: skip
    weight_left = add_rows(idx, start, pos, code, contrib, sample_weight, n_outputs, left,
                           weight_left)  # fmt: skip
    weight_right = weight - weight_left
    if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
        return NO_SPLIT, end, threshold, missing
    proxy = multi_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right)
    return proxy, pos, threshold, missing


@callee_kernel
def multi_output_splits_of_feature(
    f, nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
    code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf,
    random_split, out_proxy, out_pos, out_threshold, out_missing,
):  # fmt: skip
    """Search feature ``f`` for every node of a batch; writes column ``f`` of the outputs only.

    As ``sweep_exact.best_splits_worker``: with ``random_split``, ``out_threshold[k, f]``
    and ``out_missing[k, f]`` hold the drawn threshold and NaN side on entry.
    """
    left = np.empty(n_sweep, dtype=np.float64)
    missing_stats = np.empty(n_sweep, dtype=np.float64)
    idx = sorted_idx[f]
    val = sorted_val[f]
    for k in range(nodes.shape[0]):
        node = nodes[k]
        if candidate[k, f] and random_split:
            proxy, pos, threshold, missing = random_split_multi_output(
                idx, val, node_start[node], node_end[node], code, contrib, sample_weight,
                node_stats[node], node_weight[node], n_sweep, criterion, min_samples_leaf,
                min_weight_leaf, out_threshold[k, f], out_missing[k, f] == 1, left,
            )  # fmt: skip
        elif candidate[k, f]:
            proxy, pos, threshold, missing = best_split_multi_output(
                idx, val, node_start[node], node_end[node], code, contrib, sample_weight,
                node_stats[node], node_weight[node], n_sweep, criterion, min_samples_leaf,
                min_weight_leaf, left, missing_stats,
            )  # fmt: skip
        else:
            proxy, pos, threshold, missing = NO_SPLIT, node_end[node], 0.0, -1
        out_proxy[k, f] = proxy
        out_pos[k, f] = pos
        out_threshold[k, f] = threshold
        out_missing[k, f] = missing


@kernel
def multi_output_splits_worker(
    queue, n_threads, nodes, candidate, node_start, node_end, node_stats, node_weight,
    sorted_idx, sorted_val, code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
    min_weight_leaf, random_split, out_proxy, out_pos, out_threshold, out_missing,
):  # fmt: skip
    """One thread's share of the best split of every (node, feature) pair of a batch.

    Called on ``n_threads`` threads at once (``threads.run_workers``); each claims features
    from ``queue``, and feature ``f`` writes only column ``f`` of the outputs: bit-identical
    whatever the thread count.
    """
    f = claim_item(queue)
    while f < sorted_idx.shape[0]:
        multi_output_splits_of_feature(
            f, nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx,
            sorted_val, code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
            min_weight_leaf, random_split, out_proxy, out_pos, out_threshold, out_missing,
        )  # fmt: skip
        f = claim_item(queue)
