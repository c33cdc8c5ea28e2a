"""Two-valued features (0/1 indicators, one-hot blocks) searched from class counts, not sweeps.

A feature whose non-missing values over the whole training set are exactly two, ``low`` and
``high`` with ``high > low + FEATURE_THRESHOLD``, and which has no NaN, has one candidate
split in any node: all its ``low`` rows left, all its ``high`` rows right, at the threshold
``low / 2 + high / 2``. Its presorted segment only ever says how many rows of each class
take ``high``. The exact builder used to sweep and partition such a column like any other:
on covtype, whose 44 indicator columns have 2 rows set among 44 per sample, they cost more
than its 10 numeric columns.

Here, per node, one pass over the node's rows adds each row's class to the counts of the
features where it is ``high`` (a bit matrix ``high_bits``, one row of uint64 words per
sample, bit ``j % 64`` of word ``j // 64`` for slot ``j``), so the cost is that of the set
bits, not of the columns; their presorted segments are then neither
swept nor partitioned (they go stale, and nothing reads them). During the build the bit
rows follow the row feature's sorted positions (:func:`bits_in_row_order`) and move with its
partition, so the pass reads them in order: gathered by sample id they missed the cache on
every row, a third of covtype's split search.

Same splits as the sweep: the path is only taken for unweighted classification (Gini or
entropy, one output, every feature a candidate, no subset or random splits), where every
statistic is a row count, exact in float64, so the proxies are the same numbers computed by
the same expressions (``criterion.single_output_proxy`` mirrors the sweep's).
"""

from __future__ import annotations

import functools

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from .borrow import borrowed, keep_alive
from .criterion import single_output_proxy
from .jit import (
    FEATURE_THRESHOLD,
    PASS_PARALLEL_MIN_WORK,
    callee_kernel,
    inline_kernel,
    kernel,
    read_only,
)
from .shared_best import offer_best
from .sweep_exact import NO_SPLIT, set_side_flag
from .threads import run_concurrently
from .work_queue import claim_item

# Rows from which a fit looks for two-valued columns. The path is an accelerator (it gives
# the sweep's very splits): a smaller fit sweeps them like any column and does not compile
# the scan, the count and the side marking.
MIN_ROWS = 1 << 14

# What a scan of some rows knows of a column (``scan_rows``), and after the merge of the
# scans (``merge_scans``).
SEEN_NONE = 0  # no row scanned
SEEN_ONE = 1  # one value: low == high
SEEN_TWO = 2  # two values, low < high
RULED_OUT = 3  # a third value, a NaN, or not eligible


@inline_kernel
def scan_rows(X, start, end, eligible, low, high, state):
    """Read rows ``[start, end)`` of X into ``low, high, state`` (one row of each per scan).

    The common row, whose every live column takes a value already seen, costs one pass of
    compares without branches (``live`` masks the ruled-out columns), which the compiler
    vectorises; only a row with news (a second or third value, a NaN) takes the slow path.
    It stops early once every column is ruled out, within a few rows on continuous data.
    """
    n_features = X.shape[1]
    live = np.zeros(n_features, dtype=np.bool_)
    n_live = 0
    for f in range(n_features):
        state[f] = RULED_OUT if not eligible[f] else SEEN_NONE
        live[f] = eligible[f] != 0
        n_live += live[f]
    for i in range(start, end):
        if n_live == 0:
            break
        row = X[i]
        news = False
        for f in range(n_features):
            x = row[f]
            news |= live[f] & (x != low[f]) & (x != high[f])
        if not news and i > start:
            continue
        for f in range(n_features):
            x = row[f]
            if not live[f] or (state[f] != SEEN_NONE and (x == low[f] or x == high[f])):
                continue
            if x != x or state[f] == SEEN_TWO:
                state[f] = RULED_OUT
                live[f] = False
                n_live -= 1
            elif state[f] == SEEN_NONE:
                low[f] = x
                high[f] = x
                state[f] = SEEN_ONE
            else:
                low[f] = min(low[f], x)
                high[f] = max(high[f], x)
                state[f] = SEEN_TWO


@kernel
def scan_chunks(X, bounds, eligible, low, high, state):
    """Scan the row chunks ``bounds[t] : bounds[t + 1]`` into row ``t`` of the outputs.

    Threads each get one chunk: the bounds and output rows of theirs.
    """
    for t in range(bounds.shape[0] - 1):
        scan_rows(X, bounds[t], bounds[t + 1], eligible, low[t], high[t], state[t])


@kernel
def merge_scans(low, high, state, out_slot, out_threshold, out_high):
    """Merge the chunks' scans: mark the two-valued features; returns their number.

    Parameters
    ----------
    low, high, state : ndarray, shape (n_chunks, n_features)
        The scans of :func:`scan_rows`, in row order.
    out_slot : ndarray of int64, shape (n_features,)
        Receives the feature's column in ``high_bits``, or -1.
    out_threshold : ndarray of float64, shape (n_features,)
        Receives ``low / 2 + high / 2`` (the sweep's threshold) of the marked features.
    out_high : ndarray of float32, shape (n_features,)
        Receives ``high`` of the marked features.
    """
    n_chunks, n_features = state.shape
    n_two = 0
    for f in range(n_features):
        out_slot[f] = -1
        # The union of the chunks' values, while it has at most two.
        seen = SEEN_NONE
        lo = np.float32(0.0)
        hi = np.float32(0.0)
        for t in range(n_chunks):
            if state[t, f] == RULED_OUT:
                seen = RULED_OUT
                break
            if state[t, f] == SEEN_NONE:
                continue
            for x in (low[t, f], high[t, f]):
                if seen == SEEN_NONE:
                    lo = x
                    hi = x
                    seen = SEEN_ONE
                elif x != lo and x != hi:
                    if seen == SEEN_TWO:
                        seen = RULED_OUT
                    lo = min(lo, x)
                    hi = max(hi, x)
                    seen = max(seen, SEEN_TWO)
            if seen == RULED_OUT:
                break
        # Two values a tie apart are one group for the sweep: no candidate, not marked.
        if seen == SEEN_TWO and hi > lo + FEATURE_THRESHOLD:
            out_slot[f] = n_two
            out_threshold[f] = np.float64(lo) / 2.0 + np.float64(hi) / 2.0
            out_high[f] = hi
            n_two += 1
    return n_two


def find_two_valued(X, eligible, n_threads, out_slot, out_threshold, out_high):
    """Mark the features searched here; returns their number.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Training data.
    eligible : ndarray of uint8, shape (n_features,)
        Features that may take this path (not categorical).
    n_threads : int
        Threads to scan the rows with (in row chunks, merged afterwards).
    out_slot, out_threshold, out_high
        See :func:`merge_scans`.

    Notes
    -----
    Each chunk is read in memory order, every column at once (a column at a time would stride
    through X once per column).
    """
    n_features = X.shape[1]
    bounds = row_chunks(X, n_threads)
    n_chunks = bounds.shape[0] - 1
    low = np.zeros((n_chunks, n_features), dtype=np.float32)
    high = np.zeros((n_chunks, n_features), dtype=np.float32)
    state = np.zeros((n_chunks, n_features), dtype=np.uint8)
    # One call per chunk, on threads: chunk ``t`` writes only row ``t`` of the outputs.
    run_concurrently([
        functools.partial(scan_chunks, X, bounds[t : t + 2], eligible, low[t : t + 1],
                          high[t : t + 1], state[t : t + 1])
        for t in range(n_chunks)
    ])  # fmt: skip
    return merge_scans(low, high, state, out_slot, out_threshold, out_high)


def row_chunks(X, n_threads):
    """Return the bounds of the row chunks of a pass over X, one chunk per thread.

    A single chunk below ``PASS_PARALLEL_MIN_WORK`` cells. On covtype two threads halve both
    passes (the scan 4.0 to 2.1 ms, the bit fill 8.0 to 4.5 ms).
    """
    n_samples, n_features = X.shape
    threaded = n_threads > 1 and n_samples * n_features >= PASS_PARALLEL_MIN_WORK
    n_chunks = n_threads if threaded else 1
    return np.linspace(0, n_samples, n_chunks + 1).astype(np.int64)


@inline_kernel
def fill_high_bits_of_rows(X, start, end, slot, high, high_bits):
    """Write rows ``[start, end)`` of ``high_bits``: bit ``slot[f]`` where ``X[i, f] == high[f]``.

    Notes
    -----
    Slots are numbered in feature order (:func:`merge_scans`), so the features of one word
    of bits are a contiguous range of columns. A row's word is built in a register from a
    compare per column of that range, with no branch and no gather, and stored once: the
    compiler vectorises it. (A branch and a read-modify-write of the word per two-valued
    column took 1.35x the time on covtype, 25 against 18.5 ms on one thread; a loop over
    the slots gathering their columns, 2.2x.) The other columns of the range compare
    against NaN, which equals nothing.
    """
    n_features = X.shape[1]
    n_words = high_bits.shape[1]
    target = np.empty(n_features, dtype=np.float32)
    shift = np.zeros(n_features, dtype=np.uint64)
    first = np.full(n_words, n_features, dtype=np.int64)
    stop = np.zeros(n_words, dtype=np.int64)
    for f in range(n_features):
        j = slot[f]
        target[f] = np.nan
        if j >= 0:
            target[f] = high[f]
            shift[f] = np.uint64(j & 63)
            first[j >> 6] = min(first[j >> 6], f)
            stop[j >> 6] = f + 1
    for i in range(start, end):
        row = X[i]
        for b in range(n_words):
            word = np.uint64(0)
            # Unsigned: numba then drops the negative-index wraparound, which kept the loop
            # from vectorising (31 ms; see "Unsigned positions" in jit).
            for f in range(np.uint64(first[b]), np.uint64(stop[b])):
                word |= np.uint64(row[f] == target[f]) << shift[f]
            high_bits[i, b] = word


@kernel
def fill_high_bits(X, slot, high, high_bits, bounds):
    """Set the bits of the row chunks ``bounds[t] : bounds[t + 1]``, in turn.

    Threads each get one chunk (the bounds of theirs); every row is in one chunk.
    """
    for t in range(bounds.shape[0] - 1):
        fill_high_bits_of_rows(X, bounds[t], bounds[t + 1], slot, high, high_bits)


@inline_kernel
def bits_in_row_order(two_valued, rows):
    """Return ``two_valued`` with the rows of ``high_bits`` put in the order of ``rows``.

    ``rows`` is the row feature's presorted ids: row ``p`` of the result belongs to the
    sample at position ``p``, and ``sweep_exact.partition_worker`` keeps it so.
    """
    slot, threshold, high_bits = two_valued
    in_order = np.empty_like(high_bits)
    if high_bits.shape[1] > 0:
        # Word by word, unsigned row: a row slice per sample took 1.7-1.9x the time.
        for p in range(rows.shape[0]):
            row = np.uint64(rows[p])
            for b in range(high_bits.shape[1]):
                in_order[p, b] = high_bits[row, b]
    return slot, threshold, in_order


def lowest_set_bit(word):
    """Return the position of the lowest set bit of a non-zero uint64.

    This body runs only as plain Python (``NUMBA_DISABLE_JIT``, where numba's intrinsics
    cannot run); compiled callers get ``trailing_zeros`` (below), one instruction
    (``tzcnt``): with int64 counts, covtype's two-valued counting took 0.75x the time of a
    de Bruijn table lookup with float counts.
    """
    word = int(word)
    return np.int64((word & -word).bit_length() - 1)


@overload(lowest_set_bit, inline="always")
def _lowest_set_bit_compiled(word):
    return lambda word: np.int64(trailing_zeros(word))


@inline_kernel
def count_high_rows(codes, start, end, row_bits, counts):
    """Class counts of the rows taking ``high``, per two-valued feature: ``counts[j, class]``.

    Positions ``[start, end)`` are the node's segment of the row feature: ``codes`` its
    classes, ``row_bits`` the bits in the same order (:func:`bits_in_row_order`). Only set
    bits cost work. ``counts`` is int64: rows of one class and feature in a row chain their
    updates through memory, and an integer add takes one cycle where a float add takes
    three or four (as in ``sweep_exact.unit_gini_sweep``).
    """
    counts[:, :] = 0
    n_words = row_bits.shape[1]
    for p in range(np.uint64(start), np.uint64(end)):  # unsigned positions: see jit
        c = codes[p]
        for w in range(n_words):
            # One step per set bit, found by tzcnt, then cleared: no branch per bit, whose
            # outcome is random (a bit-by-bit loop cost covtype's pass 1.5x more).
            word = row_bits[p, w]
            while word != np.uint64(0):
                counts[(w << 6) + lowest_set_bit(word), c] += 1
                word &= word - np.uint64(1)


@inline_kernel
def two_valued_splits_of_node(
    s, node, slot, threshold, codes, node_start, node_end, node_stats, node_weight,
    row_bits, n_sweep, criterion, min_samples_leaf, min_weight_leaf, counts, left,
    out_proxy, out_pos, out_threshold, out_missing, node_best,
):  # fmt: skip
    """Score the two-valued features of one node: row ``s`` of the outputs, their columns only.

    Their best proxy is offered to ``node_best[s]`` (``shared_best``), where the sweep of
    the node's other features starts from it.

    The candidate and its feasibility are the sweep's (``sweep_exact.general_sweep``)
    for a segment whose ``low`` rows come first: left ``[start, start + n_low)``, right the
    ``n_high`` rows; a side under ``min_samples_leaf`` rows or ``min_weight_leaf`` (unit
    weights: the same count) leaves no split, and so does a feature constant in the node.
    """
    start = node_start[node]
    end = node_end[node]
    total = node_stats[node]
    weight = node_weight[node]
    count_high_rows(codes, start, end, row_bits, counts)
    for f in range(slot.shape[0]):
        j = slot[f]
        if j < 0:
            continue
        n_high = 0.0
        for c in range(n_sweep):
            high = np.float64(counts[j, c])  # exact: a row count
            n_high += high
            left[c] = total[c] - high
        n_low = weight - n_high
        proxy = NO_SPLIT
        if (
            n_high > 0.0
            and n_low > 0.0
            and min(n_low, n_high) >= min_samples_leaf
            and min(n_low, n_high) >= min_weight_leaf
        ):
            proxy = single_output_proxy(criterion, left, total, n_sweep, n_low, weight - n_low)
        offer_best(node_best, s, proxy)
        out_proxy[s, f] = proxy
        out_pos[s, f] = start + np.int64(n_low) if proxy > NO_SPLIT else end
        out_threshold[s, f] = threshold[f] if proxy > NO_SPLIT else 0.0
        out_missing[s, f] = -1


@kernel
def two_valued_splits_worker(
    queue, n_threads, nodes, slot, threshold, codes, node_start, node_end, node_stats,
    node_weight, row_bits, n_sweep, criterion, min_samples_leaf, min_weight_leaf, out_proxy,
    out_pos, out_threshold, out_missing, node_best,
):  # fmt: skip
    """One thread's share of scoring the two-valued features of every node of a batch.

    Called on ``n_threads`` threads at once (``threads.run_workers``); each claims the nodes
    one at a time from ``queue`` as it comes free, since a level's nodes come in all sizes,
    and a node writes only its own row of the outputs (see the module docstring).
    """
    # Uncounted views of the arguments for the loops below (``borrow``).
    (nodes, slot, threshold, codes, node_start, node_end, node_stats, node_weight, row_bits,
     out_proxy, out_pos, out_threshold, out_missing, node_best) = borrowed((
        nodes, slot, threshold, codes, node_start, node_end, node_stats, node_weight, row_bits,
        out_proxy, out_pos, out_threshold, out_missing, node_best))  # fmt: skip
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (
        np.empty((64 * row_bits.shape[1], n_sweep), dtype=np.int64),
        np.empty(n_sweep, dtype=np.float64),
    )
    counts, left = borrowed(owned)
    s = claim_item(queue)
    while s < nodes.shape[0]:
        two_valued_splits_of_node(
            s, nodes[s], slot, threshold, codes, node_start, node_end, node_stats,
            node_weight, row_bits, n_sweep, criterion, min_samples_leaf, min_weight_leaf,
            counts, left, out_proxy, out_pos, out_threshold, out_missing, node_best,
        )  # fmt: skip
        s = claim_item(queue)
    keep_alive(owned)


@callee_kernel
def high_side_counts(codes, start, end, row_bits, j, out_high):
    """Class counts of the segment [start, end) high in slot ``j``; returns their number."""
    out_high[:] = 0.0
    word = j >> 6
    shift = np.uint64(j & 63)
    n_high = np.uint64(0)
    # Branch-free (the bit is data, a branch on it mispredicts), unsigned positions (see jit).
    for p in range(np.uint64(start), np.uint64(end)):
        high = (row_bits[p, word] >> shift) & np.uint64(1)
        out_high[codes[p]] += np.float64(high)
        n_high += high
    return np.float64(n_high)


@callee_kernel
def mark_two_valued_sides(rows, start, end, row_bits, j, goes_left):
    """Set the side flags of a node's rows split on slot ``j``: ``low`` rows go left."""
    word = j >> 6
    bit = np.uint64(1) << np.uint64(j & 63)
    for p in range(np.uint64(start), np.uint64(end)):  # unsigned positions: see jit
        set_side_flag(goes_left, rows[p], (row_bits[p, word] & bit) == np.uint64(0))


def two_valued_layout(
    X: np.ndarray, eligible: np.ndarray | None, n_threads: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the builder's ``two_valued`` argument: ``slot, threshold, high_bits``.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Training data.
    eligible : ndarray of uint8, shape (n_features,), or None
        Features that may be searched here; ``None`` turns the path off (a fit it does not
        apply to, see the module docstring).
    n_threads : int, default=1
        Threads for the passes over X (used when X is large enough to repay them).

    Notes
    -----
    At least one feature keeps its sweep, since the builder reads a maintained feature's
    segments as the nodes' rows: when every feature is two-valued, feature 0 is swept. The
    others need no presort (``slot >= 0`` is the presort's ``skip``).
    """
    n_features = X.shape[1]
    slot = np.full(n_features, -1, dtype=np.int64)
    threshold = np.zeros(n_features, dtype=np.float64)
    if eligible is None or n_features == 0:
        return slot, threshold, np.zeros((0, 0), dtype=np.uint64)
    X = read_only(X)
    eligible = np.ascontiguousarray(eligible, dtype=np.uint8)
    high = np.zeros(n_features, dtype=np.float32)
    n_two = find_two_valued(X, eligible, n_threads, slot, threshold, high)
    if n_two == n_features:
        eligible = eligible.copy()
        eligible[0] = 0
        n_two = find_two_valued(X, eligible, n_threads, slot, threshold, high)
    if n_two == 0:
        return slot, threshold, np.zeros((0, 0), dtype=np.uint64)
    high_bits = np.zeros((X.shape[0], (n_two + 63) >> 6), dtype=np.uint64)
    bounds = row_chunks(X, n_threads)
    run_concurrently([  # one call per chunk of rows, on threads
        functools.partial(fill_high_bits, X, slot, high, high_bits, bounds[t : t + 2])
        for t in range(bounds.shape[0] - 1)
    ])  # fmt: skip
    return slot, threshold, high_bits
