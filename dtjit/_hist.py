"""Histogram split search over binned data (``splitter="hist"``).

Data layout:

- ``codes`` (uint8, ``(n_samples, n_features)``, row-major; see ``_binning``) and the flat bin
  axis: feature ``f`` owns bins ``bin_offset[f] .. bin_offset[f + 1] - 1``, whose smallest and
  largest training values are ``bin_min`` / ``bin_max``.
- ``rows`` (int32): the sample ids, every open node owning the segment ``[start, end)``;
  a split stably partitions its node's segment into left | right.
- A histogram is a ``(n_total_bins, n_sweep + 2)`` float64 array: per bin the sweep
  statistics (weighted class counts, or ``sum(w * y)``), then the weight and the number of
  rows (``WEIGHT`` / ``COUNT`` columns relative to ``n_sweep``). Row counts are exact in
  float64, so an empty bin is recognised even after a subtraction.

Large nodes keep their histogram in a slot of a pool while they are open; the smaller child's
histogram is built from its rows and the larger one's is the parent's minus it. Small nodes
build a histogram in a per-thread scratch array, sweep it, and clear the bins they touched.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._criterion import split_proxy
from ._jit import SQUARED_ERROR, kernel, parallel_kernel

NO_SPLIT = -np.inf


@kernel
def add_rows(rows, start, end, codes, bin_offset, f_first, f_stop, code, contrib, sample_weight,
             unit_weight, n_sweep, hist):  # fmt: skip
    """Add the rows ``rows[start:end]`` of features ``f_first .. f_stop - 1`` to ``hist``.

    Notes
    -----
    One pass over the rows; each row's codes are one cache line, and its label statistics are
    gathered once for all features. Cost O((end - start) * (f_stop - f_first)).
    """
    for p in range(start, end):
        i = rows[p]
        c = code[i]
        a = 1.0 if unit_weight else contrib[i]
        w = 1.0 if unit_weight else sample_weight[i]
        for f in range(f_first, f_stop):
            b = bin_offset[f] + codes[i, f]
            hist[b, c] += a
            hist[b, n_sweep] += w
            hist[b, n_sweep + 1] += 1.0


@kernel
def clear_rows(rows, start, end, codes, bin_offset, hist):
    """Zero the bins of ``hist`` that the rows ``rows[start:end]`` touch (cheaper than all)."""
    n_features = codes.shape[1]
    for p in range(start, end):
        i = rows[p]
        for f in range(n_features):
            hist[bin_offset[f] + codes[i, f]] = 0.0


@kernel
def best_bin_split(hist, first_bin, stop_bin, bin_min, bin_max, total, weight, n_rows, n_sweep,
                   criterion, min_samples_leaf, min_weight_leaf, left):  # fmt: skip
    """Best cut of one feature for one node: a sweep over its bins ``first_bin .. stop_bin - 1``.

    Parameters
    ----------
    hist : ndarray of float64, shape (n_total_bins, n_sweep + 2)
        The node's histogram.
    first_bin, stop_bin : int
        The feature's bins (any sub-range holding all of the node's non-empty bins).
    bin_min, bin_max : ndarray of float64
        Smallest and largest training value of each bin.
    total : ndarray of float64
        The node's statistics; ``weight`` and ``n_rows`` its weight and row count.
    n_sweep, criterion, min_samples_leaf, min_weight_leaf
        As in the exact sweep.
    left : ndarray of float64
        Scratch of ``n_sweep`` entries.

    Returns
    -------
    proxy : float
        Score of the best cut, ``-inf`` if none.
    cut : int
        Last bin of the left side.
    threshold : float
        ``bin_max[left bin] / 2 + bin_min[right bin] / 2`` over the nearest non-empty bins:
        the exact splitter's midpoint when each bin holds one distinct value.

    Notes
    -----
    The same rules as the exact sweep, with a bin in the role of a group of tied values:
    empty bins are skipped, the best is replaced only on a strictly greater proxy, and for
    classification a cut between two bins pure in the same class is scored only at the ends
    of the feasible range. Cost O(n_bins * n_sweep).
    """
    best_proxy = NO_SPLIT
    best_cut = -1
    threshold = 0.0
    skip_same_class = criterion != SQUARED_ERROR
    for c in range(n_sweep):
        left[c] = 0.0
    weight_left = 0.0
    n_left = 0.0
    prev_pure = False
    prev_code = -1
    prev_left_feasible = False
    prev_bin = -1
    for b in range(first_bin, stop_bin):
        n_bin = hist[b, n_sweep + 1]
        if n_bin == 0.0:
            continue
        weight_bin = hist[b, n_sweep]
        pure = True
        bin_code = -1
        if skip_same_class:
            for c in range(n_sweep):
                if hist[b, c] > 0.0:
                    if bin_code >= 0:
                        pure = False
                    bin_code = c
        if prev_bin >= 0:
            if n_rows - n_left < min_samples_leaf or weight - weight_left < min_weight_leaf:
                break  # the right side only shrinks from here on
            left_feasible = n_left >= min_samples_leaf and weight_left >= min_weight_leaf
            if left_feasible:
                last_feasible = (
                    n_left + n_bin >= n_rows
                    or n_rows - n_left - n_bin < min_samples_leaf
                    or weight - (weight_left + weight_bin) < min_weight_leaf
                )
                if (
                    not (skip_same_class and pure and prev_pure and bin_code == prev_code)
                    or not prev_left_feasible
                    or last_feasible
                ):
                    proxy = split_proxy(
                        criterion, left, total, n_sweep, weight_left, weight - weight_left
                    )
                    if proxy > best_proxy:
                        best_proxy = proxy
                        best_cut = prev_bin
                        threshold = bin_max[prev_bin] / 2.0 + bin_min[b] / 2.0
            prev_left_feasible = left_feasible
        for c in range(n_sweep):
            left[c] += hist[b, c]
        weight_left += weight_bin
        n_left += n_bin
        prev_pure = pure
        prev_code = bin_code
        prev_bin = b
    return best_proxy, best_cut, threshold


@kernel
def sweep_node(s, hist, first_bin, stop_bin, candidate, bin_offset, bin_min, bin_max, total,
               weight, n_rows, n_sweep, criterion, min_samples_leaf, min_weight_leaf, left,
               out_proxy, out_cut, out_threshold):  # fmt: skip
    """Sweep every candidate feature of batch node ``s``; writes row ``s`` of the outputs.

    ``first_bin[f] .. stop_bin[f] - 1`` is the range of feature ``f``'s bins to sweep.
    """
    for f in range(candidate.shape[1]):
        if candidate[s, f]:
            proxy, cut, threshold = best_bin_split(
                hist, first_bin[f], stop_bin[f], bin_min, bin_max, total, weight, n_rows,
                n_sweep, criterion, min_samples_leaf, min_weight_leaf, left,
            )  # fmt: skip
        else:
            proxy, cut, threshold = NO_SPLIT, -1, 0.0
        out_proxy[s, f] = proxy
        out_cut[s, f] = cut
        out_threshold[s, f] = threshold


@kernel
def sweep_small_nodes(first, stop, searched_nodes, node_slot, node_start, node_end, node_stats,
                      node_weight, rows, codes, bin_offset, bin_min, bin_max, code, contrib,
                      sample_weight, unit_weight, n_sweep, criterion, min_samples_leaf,
                      min_weight_leaf, candidate, out_proxy, out_cut,
                      out_threshold):  # fmt: skip
    """Sweep the batch nodes ``first .. stop - 1`` that have no stored histogram.

    Each is built in one scratch histogram, swept over the range of codes it actually has
    (a small node touches few bins), and cleared again. Writes rows of the outputs only.
    """
    n_features = codes.shape[1]
    n_total = bin_offset[n_features]
    scratch = np.zeros((n_total, n_sweep + 2), dtype=np.float64)
    first_bin = np.empty(n_features, dtype=np.int64)
    stop_bin = np.empty(n_features, dtype=np.int64)
    left = np.empty(n_sweep, dtype=np.float64)
    for s in range(first, stop):
        node = searched_nodes[s]
        if node_slot[node] >= 0:
            continue
        start = node_start[node]
        end = node_end[node]
        add_rows(rows, start, end, codes, bin_offset, 0, n_features, code, contrib,
                 sample_weight, unit_weight, n_sweep, scratch)  # fmt: skip
        node_code_range(rows, start, end, codes, bin_offset, first_bin, stop_bin)
        sweep_node(s, scratch, first_bin, stop_bin, candidate, bin_offset, bin_min, bin_max,
                   node_stats[node], node_weight[node], end - start, n_sweep, criterion,
                   min_samples_leaf, min_weight_leaf, left, out_proxy, out_cut,
                   out_threshold)  # fmt: skip
        clear_rows(rows, start, end, codes, bin_offset, scratch)


@kernel
def node_code_range(rows, start, end, codes, bin_offset, first_bin, stop_bin):
    """Per feature, the flat bin range ``[first_bin, stop_bin)`` spanned by a node's rows."""
    n_features = codes.shape[1]
    for f in range(n_features):
        first_bin[f] = 255
        stop_bin[f] = 0
    for p in range(start, end):
        i = rows[p]
        for f in range(n_features):
            b = np.int64(codes[i, f])
            if b < first_bin[f]:
                first_bin[f] = b
            if b >= stop_bin[f]:
                stop_bin[f] = b + 1
    for f in range(n_features):
        first_bin[f] += bin_offset[f]
        stop_bin[f] += bin_offset[f]


@kernel
def sweep_stored_node(s, searched_nodes, node_slot, node_start, node_end, node_stats,
                      node_weight, hist_pool, bin_offset, bin_min, bin_max, n_sweep, criterion,
                      min_samples_leaf, min_weight_leaf, candidate, out_proxy, out_cut,
                      out_threshold):  # fmt: skip
    """Sweep batch node ``s`` from its stored histogram (all bins of each feature)."""
    node = searched_nodes[s]
    left = np.empty(n_sweep, dtype=np.float64)
    sweep_node(s, hist_pool[node_slot[node]], bin_offset[:-1], bin_offset[1:], candidate,
               bin_offset, bin_min, bin_max, node_stats[node], node_weight[node],
               node_end[node] - node_start[node], n_sweep, criterion, min_samples_leaf,
               min_weight_leaf, left, out_proxy, out_cut, out_threshold)  # fmt: skip


@kernel
def sweep_serial(searched_nodes, node_slot, node_start, node_end, node_stats, node_weight,
                 hist_pool, rows, codes, bin_offset, bin_min, bin_max, code, contrib,
                 sample_weight, unit_weight, n_sweep, criterion, min_samples_leaf,
                 min_weight_leaf, candidate, out_proxy, out_cut, out_threshold):  # fmt: skip
    """Best cut of every (searched node, candidate feature) pair, on one thread."""
    for s in range(searched_nodes.shape[0]):
        if node_slot[searched_nodes[s]] >= 0:
            sweep_stored_node(s, searched_nodes, node_slot, node_start, node_end, node_stats,
                              node_weight, hist_pool, bin_offset, bin_min, bin_max, n_sweep,
                              criterion, min_samples_leaf, min_weight_leaf, candidate,
                              out_proxy, out_cut, out_threshold)  # fmt: skip
    sweep_small_nodes(0, searched_nodes.shape[0], searched_nodes, node_slot, node_start,
                      node_end, node_stats, node_weight, rows, codes, bin_offset, bin_min,
                      bin_max, code, contrib, sample_weight, unit_weight, n_sweep, criterion,
                      min_samples_leaf, min_weight_leaf, candidate, out_proxy, out_cut,
                      out_threshold)  # fmt: skip


@parallel_kernel
def sweep_parallel(searched_nodes, node_slot, node_start, node_end, node_stats, node_weight,
                   hist_pool, rows, codes, bin_offset, bin_min, bin_max, code, contrib,
                   sample_weight, unit_weight, n_sweep, criterion, min_samples_leaf,
                   min_weight_leaf, candidate, out_proxy, out_cut, out_threshold,
                   n_chunks):  # fmt: skip
    """Compute what :func:`sweep_serial` does on threads.

    Notes
    -----
    Stored-histogram nodes are spread over threads one node per iteration; small nodes in
    ``n_chunks`` contiguous chunks, each with its own scratch histogram. Every iteration
    writes only its own nodes' rows of the outputs, so results equal the serial ones.
    """
    n_searched = searched_nodes.shape[0]
    for s in prange(n_searched):
        if node_slot[searched_nodes[s]] >= 0:
            sweep_stored_node(s, searched_nodes, node_slot, node_start, node_end, node_stats,
                              node_weight, hist_pool, bin_offset, bin_min, bin_max, n_sweep,
                              criterion, min_samples_leaf, min_weight_leaf, candidate,
                              out_proxy, out_cut, out_threshold)  # fmt: skip
    for t in prange(n_chunks):
        sweep_small_nodes(t * n_searched // n_chunks, (t + 1) * n_searched // n_chunks,
                          searched_nodes, node_slot, node_start, node_end, node_stats,
                          node_weight, rows, codes, bin_offset, bin_min, bin_max, code, contrib,
                          sample_weight, unit_weight, n_sweep, criterion, min_samples_leaf,
                          min_weight_leaf, candidate, out_proxy, out_cut,
                          out_threshold)  # fmt: skip


@kernel
def build_histograms_serial(task_slot, task_start, task_end, rows, codes, bin_offset, code,
                            contrib, sample_weight, unit_weight, n_sweep,
                            hist_pool):  # fmt: skip
    """Fill slot ``task_slot[t]`` (zeroed here) with the rows ``task_start[t] .. task_end[t]``."""
    n_features = codes.shape[1]
    for t in range(task_slot.shape[0]):
        hist = hist_pool[task_slot[t]]
        hist[:] = 0.0
        add_rows(rows, task_start[t], task_end[t], codes, bin_offset, 0, n_features, code,
                 contrib, sample_weight, unit_weight, n_sweep, hist)  # fmt: skip


@parallel_kernel
def build_histograms_parallel(task_slot, task_start, task_end, rows, codes, bin_offset, code,
                              contrib, sample_weight, unit_weight, n_sweep, hist_pool,
                              n_feature_chunks):  # fmt: skip
    """Compute what :func:`build_histograms_serial` does on threads.

    Notes
    -----
    Work items are (task, feature chunk) pairs: with few large nodes (the top of the tree)
    each node's features are split over the threads. An item writes only its own slot's bins
    of its own features, and every bin is summed in row order whatever the chunking, so the
    histograms are bit-identical to the serial ones.
    """
    n_features = codes.shape[1]
    n_items = task_slot.shape[0] * n_feature_chunks
    for item in prange(n_items):
        t = item // n_feature_chunks
        chunk = item % n_feature_chunks
        f_first = chunk * n_features // n_feature_chunks
        f_stop = (chunk + 1) * n_features // n_feature_chunks
        hist = hist_pool[task_slot[t]]
        hist[bin_offset[f_first] : bin_offset[f_stop]] = 0.0
        add_rows(rows, task_start[t], task_end[t], codes, bin_offset, f_first, f_stop, code,
                 contrib, sample_weight, unit_weight, n_sweep, hist)  # fmt: skip


@kernel
def subtract_histograms(derive_dst, derive_parent, derive_src, hist_pool):
    """``hist_pool[dst] = hist_pool[parent] - hist_pool[src]`` for every derive task.

    ``dst`` may equal ``src``; the operation is elementwise, so that is safe.
    """
    for t in range(derive_dst.shape[0]):
        dst = hist_pool[derive_dst[t]]
        parent = hist_pool[derive_parent[t]]
        src = hist_pool[derive_src[t]]
        for b in range(dst.shape[0]):
            for j in range(dst.shape[1]):
                dst[b, j] = parent[b, j] - src[b, j]


@kernel
def partition_rows(rows, start, end, codes, f, cut, code, contrib, sample_weight, y,
                   is_regression, scratch, out_left, out_right):  # fmt: skip
    """Stably partition ``rows[start:end]`` by ``codes[i, f] <= cut``; sum both children.

    Parameters
    ----------
    rows : ndarray of int32
        Sample ids; the node's segment is rewritten as left | right, each in its old order.
    cut : int
        Last code of feature ``f`` going left.
    scratch : ndarray of int32
        Room for the right rows.
    out_left, out_right : ndarray of float64, shape (n_stats,)
        The children's statistics (as ``_splitter.segment_stats`` computes them).

    Returns
    -------
    pos : int
        First position of the right child.
    weight_left, weight_right : float
    """
    for j in range(out_left.shape[0]):
        out_left[j] = 0.0
        out_right[j] = 0.0
    weight_left = 0.0
    weight_right = 0.0
    y_range = np.array([np.inf, -np.inf, np.inf, -np.inf])
    write = start
    n_right = 0
    for p in range(start, end):
        i = rows[p]
        if codes[i, f] <= cut:
            rows[write] = i
            write += 1
            out = out_left
            weight_left += sample_weight[i]
            side = 0
        else:
            scratch[n_right] = i
            n_right += 1
            out = out_right
            weight_right += sample_weight[i]
            side = 2
        out[code[i]] += contrib[i]
        if is_regression:
            out[1] += contrib[i] * y[i]
            y_range[side] = min(y_range[side], y[i])
            y_range[side + 1] = max(y_range[side + 1], y[i])
    for r in range(n_right):
        rows[write + r] = scratch[r]
    if is_regression:
        out_left[2] = y_range[1] - y_range[0]
        out_right[2] = y_range[3] - y_range[2]
    return write, weight_left, weight_right


@kernel
def constant_features(hist_pool, slot, rows, start, end, codes, bin_offset, n_sweep, out):
    """Mark the features on which a node's rows all share one bin: ``out[f] = 1``.

    From the stored histogram when ``slot >= 0`` (count the non-empty bins), else from the
    rows' codes.
    """
    n_features = codes.shape[1]
    if slot >= 0:
        hist = hist_pool[slot]
        for f in range(n_features):
            n_nonempty = 0
            for b in range(bin_offset[f], bin_offset[f + 1]):
                if hist[b, n_sweep + 1] > 0.0:
                    n_nonempty += 1
            out[f] = n_nonempty <= 1
        return
    i0 = rows[start]
    for f in range(n_features):
        out[f] = 1
        for p in range(start + 1, end):
            if codes[rows[p], f] != codes[i0, f]:
                out[f] = 0
                break
