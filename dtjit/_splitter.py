"""Exact split search on presorted segments (SLIQ-style) and the partition that keeps them sorted.

Data layout, shared by the whole build:

- ``sorted_idx[f]`` (int32) and ``sorted_val[f]`` (float32), shape ``(n_features, n_samples)``,
  hold the sample ids and values of feature ``f``. Every open node owns one segment
  ``[start, end)``, the same for all features, and inside it the ids are in increasing order of
  feature ``f``. Columns are sorted once; after each split a stable partition of every feature's
  segment preserves the order, so no node ever sorts.
- ``code[i]`` (int32) and ``contrib[i]`` (float64) say what sample ``i`` adds to the sweep
  statistics: ``stats[code[i]] += contrib[i]`` (class code and weight for classification,
  ``0`` and ``w * y`` for regression); ``sample_weight[i]`` is added to the side's weight.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._criterion import proxy_improvement
from ._jit import FEATURE_THRESHOLD, kernel, parallel_kernel

NO_SPLIT = -np.inf


@kernel
def segment_stats(idx, start, end, code, contrib, sample_weight, y, is_regression, out):
    """Accumulate the statistics of the samples ``idx[start:end]`` into ``out``.

    Parameters
    ----------
    idx : ndarray of int32
        One feature's sorted sample ids.
    start, end : int
        The segment.
    code, contrib, sample_weight : ndarray
        Per-sample sweep code, contribution and weight.
    y : ndarray of float64
        Regression target (unused for classification).
    is_regression : bool
        Whether ``out[1]`` receives ``sum(w * y * y)``.
    out : ndarray of float64, shape (n_stats,)
        Zeroed here, then filled.

    Returns
    -------
    float
        The weight of the segment.
    """
    out[:] = 0.0
    weight = 0.0
    for p in range(start, end):
        i = idx[p]
        out[code[i]] += contrib[i]
        if is_regression:
            out[1] += contrib[i] * y[i]
        weight += sample_weight[i]
    return weight


@kernel
def best_split_in_segment(
    idx,
    val,
    start,
    end,
    code,
    contrib,
    sample_weight,
    total,
    weight,
    n_sweep,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    left,
):
    """Best threshold of one feature for one node: a single sweep over its sorted segment.

    Parameters
    ----------
    idx, val : ndarray of int32 / float32
        The feature's sorted ids and values; only ``[start, end)`` is read.
    start, end : int
        The node's segment.
    code, contrib, sample_weight : ndarray
        Per-sample sweep data (see module docstring).
    total : ndarray of float64
        The node's statistics.
    weight : float
        The node's weight.
    n_sweep : int
        Number of sweep statistics.
    criterion : int
        Criterion code.
    min_samples_leaf : int
        Fewest samples a child may have.
    min_weight_leaf : float
        Least weight a child may have.
    left : ndarray of float64
        Scratch of at least ``n_sweep`` entries for the left statistics.

    Returns
    -------
    proxy : float
        Score of the best candidate, ``-inf`` when there is none.
    pos : int
        First position of the right child (``end`` when there is no candidate).
    threshold : float
        ``v[pos-1] / 2 + v[pos] / 2``: halves are added so the sum cannot overflow.

    Notes
    -----
    Candidates are the positions where the value changes by more than ``FEATURE_THRESHOLD``
    (added in float32, as scikit-learn does). The best is replaced only on a strictly greater
    proxy, so the lowest threshold wins ties. Cost: O(end - start) plus O(n_sweep) per
    candidate.
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    # Constant feature in this node: scikit-learn skips it the same way.
    if val[end - 1] <= val[start] + FEATURE_THRESHOLD:
        return best_proxy, best_pos, threshold
    for c in range(n_sweep):
        left[c] = 0.0
    weight_left = 0.0
    p = start
    while p < end:
        # Move the sample at p and every sample tied with it to the left side.
        i = idx[p]
        left[code[i]] += contrib[i]
        weight_left += sample_weight[i]
        p += 1
        while p < end and val[p] <= val[p - 1] + FEATURE_THRESHOLD:
            i = idx[p]
            left[code[i]] += contrib[i]
            weight_left += sample_weight[i]
            p += 1
        if p >= end:
            break
        if p - start < min_samples_leaf:
            continue
        if end - p < min_samples_leaf:
            break  # the right side only shrinks from here on
        if weight_left < min_weight_leaf or weight - weight_left < min_weight_leaf:
            continue
        proxy = proxy_improvement(criterion, left, total, n_sweep, weight_left, weight)
        if proxy > best_proxy:
            best_proxy = proxy
            best_pos = p
            threshold = np.float64(val[p - 1]) / 2.0 + np.float64(val[p]) / 2.0
    return best_proxy, best_pos, threshold


@kernel
def best_splits_of_feature(
    f,
    nodes,
    candidate,
    node_start,
    node_end,
    node_stats,
    node_weight,
    sorted_idx,
    sorted_val,
    code,
    contrib,
    sample_weight,
    n_sweep,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    out_proxy,
    out_pos,
    out_threshold,
):
    """Sweep feature ``f`` for every node of a batch; writes column ``f`` of the outputs only."""
    left = np.empty(n_sweep, dtype=np.float64)
    idx = sorted_idx[f]
    val = sorted_val[f]
    for k in range(nodes.shape[0]):
        node = nodes[k]
        if candidate[k, f]:
            proxy, pos, threshold = best_split_in_segment(
                idx,
                val,
                node_start[node],
                node_end[node],
                code,
                contrib,
                sample_weight,
                node_stats[node],
                node_weight[node],
                n_sweep,
                criterion,
                min_samples_leaf,
                min_weight_leaf,
                left,
            )
        else:
            proxy, pos, threshold = NO_SPLIT, node_end[node], 0.0
        out_proxy[k, f] = proxy
        out_pos[k, f] = pos
        out_threshold[k, f] = threshold


@kernel
def best_splits_serial(
    nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
    code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf,
    out_proxy, out_pos, out_threshold,
):  # fmt: skip
    """Best split of every (node, feature) pair of a batch, one feature after the other."""
    for f in range(sorted_idx.shape[0]):
        best_splits_of_feature(
            f, nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx,
            sorted_val, code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
            min_weight_leaf, out_proxy, out_pos, out_threshold,
        )  # fmt: skip


@parallel_kernel
def best_splits_parallel(
    nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
    code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf,
    out_proxy, out_pos, out_threshold,
):  # fmt: skip
    """Same as :func:`best_splits_serial`, features spread over threads.

    Notes
    -----
    Iteration ``f`` writes only column ``f`` of the outputs, so the loop is race-free, and the
    per-node reduction over features happens afterwards in feature order: results are
    bit-identical to the serial version.
    """
    for f in prange(sorted_idx.shape[0]):
        best_splits_of_feature(
            f, nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx,
            sorted_val, code, contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
            min_weight_leaf, out_proxy, out_pos, out_threshold,
        )  # fmt: skip


@kernel
def partition_feature(f, nodes, node_start, node_end, split_feature, goes_left, sorted_idx,
                      sorted_val, scratch_idx, scratch_val):  # fmt: skip
    """Stable partition of feature ``f``'s segments of the split nodes into left | right.

    Notes
    -----
    Left samples are compacted forward in place (the write cursor never passes the read
    cursor); right samples wait in the scratch buffers and are copied behind them. Stability
    keeps each child's segment sorted. The split feature itself is already partitioned: its
    left child is the first ``pos - start`` positions by construction.
    """
    idx = sorted_idx[f]
    val = sorted_val[f]
    for k in range(nodes.shape[0]):
        node = nodes[k]
        if split_feature[k] == f:
            continue
        start = node_start[node]
        end = node_end[node]
        write = start
        n_right = 0
        for p in range(start, end):
            i = idx[p]
            if goes_left[i]:
                idx[write] = i
                val[write] = val[p]
                write += 1
            else:
                scratch_idx[n_right] = i
                scratch_val[n_right] = val[p]
                n_right += 1
        for r in range(n_right):
            idx[write + r] = scratch_idx[r]
            val[write + r] = scratch_val[r]


@kernel
def partition_serial(nodes, node_start, node_end, split_feature, goes_left, sorted_idx,
                     sorted_val, max_segment):  # fmt: skip
    """Partition every feature's segments of the split nodes, one feature after the other."""
    scratch_idx = np.empty(max_segment, dtype=np.int32)
    scratch_val = np.empty(max_segment, dtype=np.float32)
    for f in range(sorted_idx.shape[0]):
        partition_feature(f, nodes, node_start, node_end, split_feature, goes_left,
                          sorted_idx, sorted_val, scratch_idx, scratch_val)  # fmt: skip


@parallel_kernel
def partition_parallel(nodes, node_start, node_end, split_feature, goes_left, sorted_idx,
                       sorted_val, max_segment, n_chunks):  # fmt: skip
    """Same as :func:`partition_serial`, features split into ``n_chunks`` contiguous chunks.

    Notes
    -----
    Each chunk owns its scratch buffers (allocated once per chunk, not per feature) and writes
    only its own features' rows, so chunks never touch the same memory.
    """
    n_features = sorted_idx.shape[0]
    for chunk in prange(n_chunks):
        scratch_idx = np.empty(max_segment, dtype=np.int32)
        scratch_val = np.empty(max_segment, dtype=np.float32)
        for f in range(chunk * n_features // n_chunks, (chunk + 1) * n_features // n_chunks):
            partition_feature(f, nodes, node_start, node_end, split_feature, goes_left,
                              sorted_idx, sorted_val, scratch_idx, scratch_val)  # fmt: skip


@kernel
def presort_column(x, out_idx, out_val):
    """Write the stable ascending order of ``x`` and the sorted values.

    Notes
    -----
    Mergesort keeps ties in sample order, which makes the whole build reproducible.
    """
    order = np.argsort(x, kind="mergesort")
    for p in range(order.shape[0]):
        out_idx[p] = order[p]
        out_val[p] = x[order[p]]


@parallel_kernel
def presort(X):
    """Sort every column of ``X`` (float32, C order) once; parallel over features.

    Returns
    -------
    sorted_idx : ndarray of int32, shape (n_features, n_samples)
    sorted_val : ndarray of float32, shape (n_features, n_samples)
    """
    n_samples, n_features = X.shape
    sorted_idx = np.empty((n_features, n_samples), dtype=np.int32)
    sorted_val = np.empty((n_features, n_samples), dtype=np.float32)
    for f in prange(n_features):
        column = np.ascontiguousarray(X[:, f])
        presort_column(column, sorted_idx[f], sorted_val[f])
    return sorted_idx, sorted_val


@kernel
def presort_serial(X):
    """Serial twin of :func:`presort` for small inputs and ``n_jobs=1``."""
    n_samples, n_features = X.shape
    sorted_idx = np.empty((n_features, n_samples), dtype=np.int32)
    sorted_val = np.empty((n_features, n_samples), dtype=np.float32)
    for f in range(n_features):
        column = np.ascontiguousarray(X[:, f])
        presort_column(column, sorted_idx[f], sorted_val[f])
    return sorted_idx, sorted_val


@kernel
def rand_below(rng_state, n):
    """Draw an integer in ``[0, n)`` from a xorshift64* generator held in ``rng_state[0]``.

    Notes
    -----
    The state is an explicit array seeded from ``random_state`` in Python, so builds are
    reproducible and independent of numba's global generator. Draws happen only in serial
    code, never inside ``prange``.
    """
    x = rng_state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng_state[0] = x
    return np.int64((x * np.uint64(2685821657736338717)) >> np.uint64(33)) % n


@kernel
def draw_candidate_features(
    f_order, max_features, start, end, sorted_val, rng_state, out_candidate
):
    """Choose the features searched at one node (scikit-learn's ``max_features`` rule).

    Features are drawn without replacement in random order; drawn constant features count
    towards ``max_features``, but drawing goes on until at least one non-constant feature was
    drawn (or none is left). With ``max_features == n_features`` every feature is a candidate
    and no random number is drawn.

    Parameters
    ----------
    f_order : ndarray of int64
        Scratch permutation of the features (modified).
    max_features : int
        Features to draw.
    start, end : int
        The node's segment.
    sorted_val : ndarray of float32
        Sorted values, to tell constant features.
    rng_state : ndarray of uint64, shape (1,)
        Generator state.
    out_candidate : ndarray of uint8, shape (n_features,)
        Set to 1 for the features to search.
    """
    n_features = f_order.shape[0]
    if max_features >= n_features:
        out_candidate[:] = 1
        return
    out_candidate[:] = 0
    for j in range(n_features):
        f_order[j] = j
    n_visited = 0
    n_constant = 0
    remaining = n_features
    while remaining > 0 and (n_visited < max_features or n_visited <= n_constant):
        j = rand_below(rng_state, remaining)
        f = f_order[j]
        remaining -= 1
        f_order[j] = f_order[remaining]
        f_order[remaining] = f
        n_visited += 1
        if sorted_val[f, end - 1] <= sorted_val[f, start] + FEATURE_THRESHOLD:
            n_constant += 1
        else:
            out_candidate[f] = 1
