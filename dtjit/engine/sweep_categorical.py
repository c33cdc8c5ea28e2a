"""Subset splits of categorical features: the search, the bitsets, and the row membership.

A categorical feature holds non-negative integer codes (float32 in the presorted or raw
columns, the bin code itself in the histogram splitter) or NaN for a missing value. A split
sends the rows whose category is in a *left set* to the left child.

Layout shared with the builders:

- ``cat_slot[f]`` (int32): the position of feature ``f`` among the categorical features,
  ``-1`` for a numeric feature.
- A *split row* is ``n_words + 1`` uint64: bit ``c`` of word ``c >> 6`` is set iff category
  ``c`` goes left, and the last word is 1 iff a missing value goes left. Categories with no
  training row in the node (including every code never seen in fit) have their bit set to
  the missing side, so "unseen goes where NaN goes" needs no extra test at predict time.
- The builders keep one split row per node id (``node_bits``) and store the node id as the
  split's ``threshold`` until the estimator turns the rows into the tree's bitset table.

The search, per (node, categorical feature), over the ``m`` categories present in the node
(a missing value counts as one more category, placed last):

- regression and binary classification: categories sorted by mean target / by the
  weighted rate of class 1 (stable: ties keep ascending code order, missing last), then the
  ``m - 1`` prefixes of that order are scanned. For squared error and for any concave
  impurity of two classes (Gini, entropy) the best subset is such a prefix (Fisher 1958;
  Breiman et al. 1984, Theorem 4.5), so this finds the optimal subset in O(m log m).
  Poisson deviance too: its proxy ``W_l phi(mean_l) + W_r phi(mean_r)`` with the convex
  ``phi(m) = m log m`` is the squared-error proxy with ``phi(m) = m**2``, and the theorem's
  argument needs only a convex ``phi`` of the mean (Chou 1991). Children whose target sum is
  (about) zero are invalid for Poisson, like children below ``min_samples_leaf``: the search
  is then optimal among the prefixes. Absolute error is not supported: its impurity is not
  a function of the mean, and ordering by median does not give the optimal subset.
- multiclass with ``m <= MAX_EXHAUSTIVE_CATEGORIES``: every one of the ``2**(m-1) - 1``
  subsets that leave the last present category on the right, in increasing bitmask order
  (bit ``j`` = the ``j``-th present category in ascending code order).
- multiclass with more categories: one ordering per class, by that class's weighted rate,
  and the best prefix over all orderings (classes in index order). A heuristic: not
  guaranteed optimal.

Ties between candidates keep the first one met (a candidate replaces the best only when
strictly better), so results are deterministic. Both children must keep at least
``min_samples_leaf`` rows and ``min_weight_leaf`` weight, exactly the numeric rule: a
category with fewer than ``min_samples_leaf`` rows can never be a child on its own, it can
only go with others. With a binding ``min_samples_leaf`` the binary / regression search is
optimal among the prefixes of the ordering (the theorem speaks of unconstrained splits).
"""

from __future__ import annotations

import math

import numpy as np

from .borrow import borrowed, keep_alive
from .criterion import single_output_proxy
from .jit import FEATURE_THRESHOLD, POISSON, SQUARED_ERROR, callee_kernel, inline_kernel, kernel
from .sorting import stable_order
from .sweep_exact import set_side_flag
from .threads import run_workers
from .work_queue import claim_item

NO_SPLIT = -np.inf

# Present categories (missing counted as one) up to which multiclass splits are searched
# exhaustively: 2**11 - 1 = 2047 subsets, each summed over at most 12 categories.
MAX_EXHAUSTIVE_CATEGORIES = 12

# Largest number of categories (codes 0 .. MAX_CATEGORIES - 1) a feature may have.
MAX_CATEGORIES = 4096

MISSING_CODE = -1


@inline_kernel
def n_category_words(n_categories):
    """uint64 words of a bitset holding ``n_categories`` bits (at least one)."""
    return max(1, (n_categories + 63) // 64)


@inline_kernel
def category_bit(x, n_words):
    """Bit of category value ``x`` (float) in a bitset of ``n_words`` words; -1 if it has none.

    NaN and codes beyond the bitset have none: they follow the split's missing side.
    """
    if math.isnan(x):
        return np.int64(-1)
    c = np.int64(x)
    if c < 0 or c >= 64 * n_words:
        return np.int64(-1)
    return c


@inline_kernel
def bit_is_set(word, bit):
    """Whether bit ``bit & 63`` of the uint64 ``word`` is set."""
    return ((word >> np.uint64(bit & 63)) & np.uint64(1)) != 0


@inline_kernel
def category_goes_left(x, bits, missing_left):
    """Whether a row whose category value is ``x`` (float) goes left at a subset split.

    ``bits`` holds the left set (bit ``c`` of word ``c >> 6``); NaN, and codes beyond the
    bitset, follow ``missing_left``.
    """
    c = category_bit(x, bits.shape[0])
    if c < 0:
        return missing_left != 0
    return bit_is_set(bits[c >> 6], c)


@inline_kernel
def valid_split_proxy(left, total, weight_left, weight, n_left, n_rows, n_sweep, criterion,
                      min_samples_leaf, min_weight_leaf):  # fmt: skip
    """Proxy of a left side, or ``-inf`` when a child breaks the leaf rules."""
    weight_right = weight - weight_left
    if (
        n_left < min_samples_leaf
        or n_rows - n_left < min_samples_leaf
        or weight_left < min_weight_leaf
        or weight_right < min_weight_leaf
    ):
        return NO_SPLIT
    # Categorical features are refused with multi-output y: the single-output proxy.
    return single_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right)


@inline_kernel
def scan_prefixes(
    order, m, cat_stats, cat_weight, cat_count, total, weight, n_rows, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, left, best_proxy, side,
):  # fmt: skip
    """Score the ``m - 1`` prefixes of ``order`` as left sets; keep a strictly better one.

    On improvement ``side[j]`` is rewritten (1: category ``j`` goes left). Returns the best
    proxy so far.
    """
    for c in range(n_sweep):
        left[c] = 0.0
    weight_left = 0.0
    n_left = 0
    best_t = -1
    for t in range(m - 1):
        j = order[t]
        for c in range(n_sweep):
            left[c] += cat_stats[j, c]
        weight_left += cat_weight[j]
        n_left += cat_count[j]
        proxy = valid_split_proxy(
            left, total, weight_left, weight, n_left, n_rows, n_sweep, criterion,
            min_samples_leaf, min_weight_leaf,
        )  # fmt: skip
        if proxy > best_proxy:
            best_proxy = proxy
            best_t = t
    if best_t >= 0:
        for t in range(m):
            side[order[t]] = 1 if t <= best_t else 0
    return best_proxy


@inline_kernel
def scan_subsets(m, cat_stats, cat_weight, cat_count, total, weight, n_rows, n_sweep, criterion,
                 min_samples_leaf, min_weight_leaf, left, side):  # fmt: skip
    """Score every subset of the first ``m - 1`` categories as the left set; returns the best.

    Notes
    -----
    Each subset is summed from scratch in ascending category order (no incremental updates)
    so its proxy does not depend on the enumeration path and ties resolve by the smallest
    mask. Cost O(2**(m-1) * m * n_sweep).
    """
    best_proxy = NO_SPLIT
    best_mask = 0
    for mask in range(1, 1 << (m - 1)):
        for c in range(n_sweep):
            left[c] = 0.0
        weight_left = 0.0
        n_left = 0
        for j in range(m - 1):
            if (mask >> j) & 1:
                for c in range(n_sweep):
                    left[c] += cat_stats[j, c]
                weight_left += cat_weight[j]
                n_left += cat_count[j]
        proxy = valid_split_proxy(
            left, total, weight_left, weight, n_left, n_rows, n_sweep, criterion,
            min_samples_leaf, min_weight_leaf,
        )  # fmt: skip
        if proxy > best_proxy:
            best_proxy = proxy
            best_mask = mask
    if best_mask > 0:
        for j in range(m):
            side[j] = (best_mask >> j) & 1
    return best_proxy


@callee_kernel
def best_category_subset(m, cat_stats, cat_weight, cat_count, total, weight, n_sweep, criterion,
                         min_samples_leaf, min_weight_leaf, side):  # fmt: skip
    """Best left set over ``m`` present categories (see the module docstring for the method).

    Parameters
    ----------
    m : int
        Present categories; entry ``j < m`` of the arrays below describes the ``j``-th in
        ascending code order, a missing-value category last.
    cat_stats : ndarray of float64, shape (>= m, n_sweep)
        Per category: weighted class counts, or ``sum(w * y)`` (regression).
    cat_weight : ndarray of float64
        Per category weight.
    cat_count : ndarray of int64
        Per category row count.
    total : ndarray of float64
        The node's statistics (the right side is ``total - left``).
    weight : float
        The node's weight.
    n_sweep, criterion, min_samples_leaf, min_weight_leaf
        As in the numeric sweep.
    side : ndarray of uint8, shape (>= m,)
        Output: 1 where the category goes left (undefined when there is no split).

    Returns
    -------
    proxy : float
        The split's proxy (the numeric splitter's scale), ``-inf`` when no split is valid.
    n_left : int
        Rows going left.
    """
    if m < 2:
        return NO_SPLIT, 0
    n_rows = 0
    for j in range(m):
        n_rows += cat_count[j]
    left = np.zeros(n_sweep, dtype=np.float64)
    key = np.empty(m, dtype=np.float64)
    best_proxy = NO_SPLIT
    is_regression = criterion == SQUARED_ERROR or criterion == POISSON
    one_ordering = is_regression or n_sweep == 2
    if one_ordering or m > MAX_EXHAUSTIVE_CATEGORIES:
        # Orderings by one column's weighted rate: sum(w * y) for regression, the weight of
        # class 1 for two classes, else each class in turn. One loop, so the prefix scan is
        # compiled once.
        first = 1 if one_ordering and not is_regression else 0
        for column in range(first, first + 1 if one_ordering else n_sweep):
            for j in range(m):
                key[j] = cat_stats[j, column] / cat_weight[j]
            order = stable_order(key)
            best_proxy = scan_prefixes(
                order, m, cat_stats, cat_weight, cat_count, total, weight, n_rows, n_sweep,
                criterion, min_samples_leaf, min_weight_leaf, left, best_proxy, side,
            )  # fmt: skip
    else:
        best_proxy = scan_subsets(
            m, cat_stats, cat_weight, cat_count, total, weight, n_rows, n_sweep, criterion,
            min_samples_leaf, min_weight_leaf, left, side,
        )  # fmt: skip
    if best_proxy == NO_SPLIT:
        return NO_SPLIT, 0
    n_left = 0
    for j in range(m):
        if side[j]:
            n_left += cat_count[j]
    return best_proxy, n_left


@inline_kernel
def write_split_row(m, cat_code, side, n_left, n_rows, out):
    """Fill a split row (``n_words`` bitset words and the missing flag) from a chosen side.

    Missing values go where the missing-value category went when the node had any, else
    to the child with more rows (the right one on a tie, as for numeric splits). Every
    category absent from the node follows them.
    """
    n_words = out.shape[0] - 1
    missing_left = 1 if n_left > n_rows - n_left else 0
    for j in range(m):
        if cat_code[j] == MISSING_CODE:
            missing_left = side[j]
    fill = ~np.uint64(0) if missing_left else np.uint64(0)
    for w in range(n_words):
        out[w] = fill
    for j in range(m):
        c = cat_code[j]
        if c == MISSING_CODE:
            continue
        bit = np.uint64(1) << np.uint64(c & 63)
        if side[j]:
            out[c >> 6] |= bit
        else:
            out[c >> 6] &= ~bit
    out[n_words] = missing_left


@inline_kernel
def search_node_feature(m, cat_code, cat_stats, cat_weight, cat_count, total, weight, n_sweep,
                        criterion, min_samples_leaf, min_weight_leaf, side, out_row):  # fmt: skip
    """Search one (node, feature) from its per-category statistics; returns (proxy, n_left)."""
    proxy, n_left = best_category_subset(
        m, cat_stats, cat_weight, cat_count, total, weight, n_sweep, criterion,
        min_samples_leaf, min_weight_leaf, side,
    )  # fmt: skip
    if proxy != NO_SPLIT:
        n_rows = 0
        for j in range(m):
            n_rows += cat_count[j]
        write_split_row(m, cat_code, side, n_left, n_rows, out_row)
    return proxy, n_left


@callee_kernel
def presorted_category_stats(idx, val, codes, start, end, contrib, sample_weight, cat_code,
                             cat_stats, cat_weight, cat_count):  # fmt: skip
    """Per-category statistics of a presorted segment; returns the number of categories ``m``.

    Notes
    -----
    The segment is sorted by code with NaN last, so each category is one run: the pass is
    sequential and the categories come out in ascending code order, missing last.
    """
    m = 0
    for p in range(start, end):
        v = val[p]
        cat = MISSING_CODE if math.isnan(v) else np.int64(v)
        if m == 0 or cat != cat_code[m - 1]:
            cat_code[m] = cat
            cat_stats[m, :] = 0.0
            cat_weight[m] = 0.0
            cat_count[m] = 0
            m += 1
        i = idx[p]
        cat_stats[m - 1, codes[p]] += contrib[i]
        cat_weight[m - 1] += sample_weight[i]
        cat_count[m - 1] += 1
    return m


@callee_kernel
def binned_category_stats(rows, start, end, codes, f, nan_bin, n_bins, code, contrib,
                          sample_weight, cat_code, cat_stats, cat_weight, cat_count):  # fmt: skip
    """Per-category statistics of a node's rows in the histogram layout; returns ``m``.

    ``codes[p, f]`` is the category code itself, or ``nan_bin`` for a missing value (the
    largest bin of the feature). Categories come out in ascending code order, missing last.
    Cost O(end - start + n_bins).
    """
    n_sweep = cat_stats.shape[1]
    dense_stats = np.zeros((n_bins, n_sweep), dtype=np.float64)
    dense_weight = np.zeros(n_bins, dtype=np.float64)
    dense_count = np.zeros(n_bins, dtype=np.int64)
    for p in range(start, end):
        b = np.int64(codes[p, f])
        i = rows[p]
        dense_stats[b, code[p]] += contrib[i]
        dense_weight[b] += sample_weight[i]
        dense_count[b] += 1
    m = 0
    for b in range(n_bins):
        if dense_count[b] == 0:
            continue
        cat_code[m] = MISSING_CODE if b == nan_bin else b
        for c in range(n_sweep):  # a loop: row assignment compiles numba's shape-error text
            cat_stats[m, c] = dense_stats[b, c]
        cat_weight[m] = dense_weight[b]
        cat_count[m] = dense_count[b]
        m += 1
    return m


@inline_kernel
def new_category_scratch(n, n_sweep):
    """Return the scratch of one node's search over at most ``n`` categories.

    Per category: its code, statistics, weight, row count and side.
    """
    return (
        np.empty(n, dtype=np.int64),
        np.empty((n, n_sweep), dtype=np.float64),
        np.empty(n, dtype=np.float64),
        np.empty(n, dtype=np.int64),
        np.zeros(n, dtype=np.uint8),
    )


@callee_kernel
def categorical_splits_presorted_node(s, node, candidate, cat_slot, node_start, node_end,
                                      node_stats, node_weight, sorted_idx, sorted_val,
                                      sorted_code, contrib, sample_weight, n_sweep, criterion,
                                      min_samples_leaf, min_weight_leaf, out_proxy, out_pos,
                                      out_bits):  # fmt: skip
    """Search every categorical candidate feature of one node (row ``s`` of the outputs)."""
    # Uncounted views of the arguments for the loops below (``borrow``).
    (candidate, cat_slot, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
     sorted_code, contrib, sample_weight, out_proxy, out_pos, out_bits) = borrowed((
        candidate, cat_slot, node_start, node_end, node_stats, node_weight, sorted_idx,
        sorted_val, sorted_code, contrib, sample_weight, out_proxy, out_pos,
        out_bits))  # fmt: skip
    start = node_start[node]
    end = node_end[node]
    n = end - start
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = new_category_scratch(n, n_sweep)
    cat_code, cat_stats, cat_weight, cat_count, side = borrowed(owned)
    for f in range(cat_slot.shape[0]):
        if cat_slot[f] < 0 or not candidate[s, f]:
            continue
        if sorted_val[f, end - 1] <= sorted_val[f, start] + FEATURE_THRESHOLD:
            # One category and no NaN: no subset split. The segment may be left unpartitioned
            # (``sweep_exact.partition_worker``), so nothing else of it is read.
            continue
        m = presorted_category_stats(
            sorted_idx[f], sorted_val[f], sorted_code[f], start, end, contrib, sample_weight,
            cat_code, cat_stats, cat_weight, cat_count,
        )  # fmt: skip
        proxy, n_left = search_node_feature(
            m, cat_code, cat_stats, cat_weight, cat_count, node_stats[node], node_weight[node],
            n_sweep, criterion, min_samples_leaf, min_weight_leaf, side, out_bits[s, cat_slot[f]],
        )  # fmt: skip
        out_proxy[s, f] = proxy
        out_pos[s, f] = start + n_left
    keep_alive(owned)


def categorical_splits_presorted(n_threads, nodes, candidate, cat_slot, node_start, node_end,
                                 node_stats, node_weight, sorted_idx, sorted_val, sorted_code,
                                 contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
                                 min_weight_leaf, out_proxy, out_pos, out_bits):  # fmt: skip
    """Best subset split of every (node, categorical candidate feature) of a batch.

    Writes ``out_proxy[s, f]``, ``out_pos[s, f]`` (``start`` plus the rows going left) and
    the split row ``out_bits[s, cat_slot[f]]`` for the categorical columns only. The nodes
    are shared by ``n_threads`` threads (``threads.run_workers``).
    """
    run_workers(
        categorical_splits_presorted_worker, n_threads, nodes, candidate, cat_slot, node_start,
        node_end, node_stats, node_weight, sorted_idx, sorted_val, sorted_code, contrib,
        sample_weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf, out_proxy,
        out_pos, out_bits,
    )  # fmt: skip


@kernel
def categorical_splits_presorted_worker(queue, n_threads, nodes, candidate, cat_slot,
                                        node_start, node_end, node_stats, node_weight,
                                        sorted_idx, sorted_val, sorted_code, contrib,
                                        sample_weight, n_sweep, criterion, min_samples_leaf,
                                        min_weight_leaf, out_proxy, out_pos,
                                        out_bits):  # fmt: skip
    """One thread's share of :func:`categorical_splits_presorted`: the nodes it claims.

    Node ``s`` writes only row ``s`` of the outputs, so the threads need no other care.
    """
    s = claim_item(queue)
    while s < nodes.shape[0]:
        categorical_splits_presorted_node(
            s, nodes[s], candidate, cat_slot, node_start, node_end, node_stats, node_weight,
            sorted_idx, sorted_val, sorted_code, contrib, sample_weight, n_sweep, criterion,
            min_samples_leaf, min_weight_leaf, out_proxy, out_pos, out_bits,
        )  # fmt: skip
        s = claim_item(queue)


@callee_kernel
def categorical_splits_binned_node(s, node, candidate, cat_slot, nan_bin, bin_offset,
                                   node_start, node_end, node_stats, node_weight, rows, codes,
                                   code, contrib, sample_weight, n_sweep, criterion,
                                   min_samples_leaf, min_weight_leaf, out_proxy,
                                   out_bits):  # fmt: skip
    """Search every categorical candidate feature of one node in the histogram layout."""
    # Uncounted views of the arguments for the loops below (``borrow``).
    (candidate, cat_slot, nan_bin, bin_offset, node_start, node_end, node_stats, node_weight,
     rows, codes, code, contrib, sample_weight, out_proxy, out_bits) = borrowed((
        candidate, cat_slot, nan_bin, bin_offset, node_start, node_end, node_stats, node_weight,
        rows, codes, code, contrib, sample_weight, out_proxy, out_bits))  # fmt: skip
    max_bins = 0
    for f in range(cat_slot.shape[0]):
        max_bins = max(max_bins, bin_offset[f + 1] - bin_offset[f])
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = new_category_scratch(max_bins, n_sweep)
    cat_code, cat_stats, cat_weight, cat_count, side = borrowed(owned)
    for f in range(cat_slot.shape[0]):
        if cat_slot[f] < 0 or not candidate[s, f]:
            continue
        m = binned_category_stats(
            rows, node_start[node], node_end[node], codes, f, nan_bin[f],
            bin_offset[f + 1] - bin_offset[f], code, contrib, sample_weight, cat_code,
            cat_stats, cat_weight, cat_count,
        )  # fmt: skip
        proxy, _ = search_node_feature(
            m, cat_code, cat_stats, cat_weight, cat_count, node_stats[node], node_weight[node],
            n_sweep, criterion, min_samples_leaf, min_weight_leaf, side, out_bits[s, cat_slot[f]],
        )  # fmt: skip
        out_proxy[s, f] = proxy
    keep_alive(owned)


def categorical_splits_binned(n_threads, nodes, candidate, cat_slot, nan_bin, bin_offset,
                              node_start, node_end, node_stats, node_weight, rows, codes, code,
                              contrib, sample_weight, n_sweep, criterion, min_samples_leaf,
                              min_weight_leaf, out_proxy, out_bits):  # fmt: skip
    """Do what :func:`categorical_splits_presorted` does, over binned rows (``splitter="hist"``).

    Notes
    -----
    The statistics are summed from the node's rows, not read from its histogram: O(rows)
    per (node, categorical feature), the cost of building that histogram once more.
    """
    run_workers(
        categorical_splits_binned_worker, n_threads, nodes, candidate, cat_slot, nan_bin,
        bin_offset, node_start, node_end, node_stats, node_weight, rows, codes, code, contrib,
        sample_weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf, out_proxy,
        out_bits,
    )  # fmt: skip


@kernel
def categorical_splits_binned_worker(queue, n_threads, nodes, candidate, cat_slot, nan_bin,
                                     bin_offset, node_start, node_end, node_stats, node_weight,
                                     rows, codes, code, contrib, sample_weight, n_sweep,
                                     criterion, min_samples_leaf, min_weight_leaf, out_proxy,
                                     out_bits):  # fmt: skip
    """One thread's share of :func:`categorical_splits_binned`: the nodes it claims."""
    s = claim_item(queue)
    while s < nodes.shape[0]:
        categorical_splits_binned_node(
            s, nodes[s], candidate, cat_slot, nan_bin, bin_offset, node_start, node_end,
            node_stats, node_weight, rows, codes, code, contrib, sample_weight, n_sweep,
            criterion, min_samples_leaf, min_weight_leaf, out_proxy, out_bits,
        )  # fmt: skip
        s = claim_item(queue)


@callee_kernel
def split_segment_ids(idx, val, start, end, split_row):
    """Sample ids of a presorted segment going left and right at a subset split.

    Returns
    -------
    left_ids, right_ids : ndarray of int32
        Each in segment order.
    """
    n_words = split_row.shape[0] - 1
    bits = split_row[:n_words]
    missing_left = split_row[n_words]
    left_ids = np.empty(end - start, dtype=np.int32)
    right_ids = np.empty(end - start, dtype=np.int32)
    n_left = 0
    n_right = 0
    for p in range(start, end):
        if category_goes_left(val[p], bits, missing_left):
            left_ids[n_left] = idx[p]
            n_left += 1
        else:
            right_ids[n_right] = idx[p]
            n_right += 1
    return left_ids[:n_left], right_ids[:n_right]


@inline_kernel
def subset_left_weight_presorted(idx, val, start, end, split_row, sample_weight):
    """Weight of the samples of a presorted segment that go left at a subset split."""
    n_words = split_row.shape[0] - 1
    bits = split_row[:n_words]
    weight_left = 0.0
    for p in range(start, end):
        if category_goes_left(val[p], bits, split_row[n_words]):
            weight_left += sample_weight[idx[p]]
    return weight_left


@inline_kernel
def subset_left_weight_binned(rows, codes, f, start, end, nan_bin, split_row, sample_weight):
    """Weight of a node's binned rows ``start .. end - 1`` that go left at a subset split.

    ``codes[p, f]`` is the category code, or ``nan_bin`` for a missing value.
    """
    n_words = split_row.shape[0] - 1
    bits = split_row[:n_words]
    weight_left = 0.0
    for p in range(start, end):
        b = np.int64(codes[p, f])
        x = np.nan if b == nan_bin else np.float64(b)
        if category_goes_left(x, bits, split_row[n_words]):
            weight_left += sample_weight[rows[p]]
    return weight_left


@callee_kernel
def mark_goes_left(idx, val, start, end, split_row, goes_left):
    """Set the side flags (``sweep_exact.set_side_flag``) of a segment's rows at a subset split."""
    n_words = split_row.shape[0] - 1
    bits = split_row[:n_words]
    missing_left = split_row[n_words]
    for p in range(start, end):
        set_side_flag(goes_left, idx[p], category_goes_left(val[p], bits, missing_left))


@callee_kernel
def order_bins_left_first(codes, start, end, f, nan_bin, split_row):
    """Recode feature ``f`` of a binned segment so the left categories come first.

    Bins going left get ranks ``0 .. L-1``, the others ``L ..`` (each group in ascending
    bin order), so a threshold partition on ``codes[p, f] <= L - 1`` performs the subset
    split. Returns ``L - 1`` and the inverse map, which :func:`restore_bins` applies after
    the partition.
    """
    n_words = split_row.shape[0] - 1
    bits = split_row[:n_words]
    missing_left = split_row[n_words]
    rank = np.empty(256, dtype=np.uint8)
    inverse = np.empty(256, dtype=np.uint8)
    r = 0
    n_left_bins = 0
    for phase in range(2):
        for b in range(256):
            x = np.nan if b == nan_bin else np.float64(b)
            if category_goes_left(x, bits, missing_left) == (phase == 0):
                rank[b] = r
                inverse[r] = b
                r += 1
        if phase == 0:
            n_left_bins = r
    for p in range(start, end):
        codes[p, f] = rank[codes[p, f]]
    return n_left_bins - 1, inverse


@callee_kernel
def restore_bins(codes, start, end, f, inverse):
    """Undo :func:`order_bins_left_first` on the (now partitioned) segment."""
    for p in range(start, end):
        codes[p, f] = inverse[codes[p, f]]
