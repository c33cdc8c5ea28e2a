"""Exact split search on presorted segments (SLIQ-style) and the partition that keeps them sorted.

Data layout, shared by the whole build:

- ``sorted_idx[f]`` (int32) and ``sorted_val[f]`` (float32), shape ``(n_features, n_samples)``,
  hold the sample ids and values of feature ``f``. Every open node owns one segment
  ``[start, end)``, the same for all features, and inside it the ids are in increasing order of
  feature ``f``. Columns are sorted once; after each split a stable partition of every feature's
  segment preserves the order, so no node ever sorts.
- ``sorted_code[f]`` (uint8, or uint16 past 256 classes), same shape, holds ``code[i]`` of
  those samples, so the sweep reads classes sequentially; it is partitioned with ids and
  values.
- ``code[i]`` (int32) and ``contrib[i]`` (float64) say what sample ``i`` adds to the sweep
  statistics: ``stats[code[i]] += contrib[i]`` (class code and weight for classification,
  ``0`` and ``w * y`` for regression); ``sample_weight[i]`` is added to the side's weight.
"""

from __future__ import annotations

import functools

import numpy as np

from .borrow import borrowed, keep_alive
from .criterion import (
    LN2,
    children_proxy,
    entropy_term,
    gini_from_squares,
    is_classification,
    poisson_proxy,
    single_output_proxy,
    split_proxy,
    squared_error_proxy,
)
from .jit import (
    ENTROPY,
    FEATURE_THRESHOLD,
    GAIN_RATIO,
    GINI,
    PARALLEL_MIN_WORK,
    POISSON,
    SQUARED_ERROR,
    callee_kernel,
    inline_kernel,
    kernel,
)
from .shared_best import offer_best, read_best
from .simd import BLOCK, SIDE_FLAG_PADDING, STORE_SLACK, USE_COMPRESS, partition_block
from .threads import even_ranges, run_concurrently
from .work_queue import claim_item

NO_SPLIT = -np.inf

# What the partition does to a feature's segments (``partition_worker``'s ``upkeep``).
UPKEEP_UNLESS_CONSTANT = 0
UPKEEP_ALWAYS = 1
UPKEEP_NEVER = 2


def new_side_flags(n_samples):
    """One bit per sample saying whether it goes to its node's left child (the partition's input).

    Bits rather than bytes: the partition reads one flag per row of every feature in
    sorted order, so at random sample ids. A million flags take 125 KB as bits, which stays
    in a core's L2 cache, against 1 MB as bytes, which did not (the read was the partition's
    hottest instruction). The array ends with ``simd.SIDE_FLAG_PADDING`` zero bytes, which
    the vector partition's gathers may read.
    """
    return np.zeros(((n_samples + 7) >> 3) + SIDE_FLAG_PADDING, dtype=np.uint8)


@inline_kernel
def set_side_flag(flags, i, goes_left):
    """Set sample ``i``'s flag of :func:`new_side_flags` to ``goes_left``.

    Branch-free: callers pass sides that depend on the data (a two-valued column's bit, a
    category), and a branch on them mispredicted about half of the time.
    """
    u = np.uint64(i)  # unsigned: see side_flag
    shift = np.uint8(u & np.uint64(7))
    byte = u >> np.uint64(3)
    flags[byte] = (flags[byte] & ~(np.uint8(1) << shift)) | (np.uint8(goes_left) << shift)


@inline_kernel
def raise_side_flags(idx, start, end, flags):
    """Set to 1 the flags (:func:`new_side_flags`) of the samples ``idx[start:end]``.

    For flags cleared beforehand: an OR per sample, where :func:`set_side_flag` also clears.
    """
    for u in range(np.uint64(start), np.uint64(end)):  # unsigned positions: see jit
        i = np.uint64(idx[u])  # unsigned: see side_flag
        flags[i >> np.uint64(3)] |= np.uint8(1) << np.uint8(i & np.uint64(7))


@inline_kernel
def side_flag(flags, i):
    """Sample ``i``'s flag of :func:`new_side_flags`: 1 if it goes left, else 0.

    ``i`` is a sample id (int32, never negative), made unsigned so that the byte index is
    too: a signed one gets numba's negative-index fix-up, three of the thirty-odd
    instructions per row of the partition loop (see "Unsigned positions" in jit).
    """
    u = np.uint64(i)
    return np.int64((flags[u >> np.uint64(3)] >> (u & np.uint64(7))) & np.uint64(1))


@kernel
def segment_stats(
    idx, start, end, extra_start, extra_end, code, contrib, sample_weight, y, is_regression, out
):
    """Accumulate the statistics of the samples ``idx[start:end]`` into ``out``.

    Parameters
    ----------
    idx : ndarray of int32
        One feature's sorted sample ids.
    start, end : int
        The segment.
    extra_start, extra_end : int
        A second range added after the first (empty if equal): the NaN rows at the end of
        a node's segment when a split sends them left.
    code, contrib, sample_weight : ndarray
        Per-sample sweep code, contribution and weight.
    y : ndarray of float64
        Regression target (unused for classification).
    is_regression : bool
        Whether ``out[1]`` receives ``sum(w * y * y)`` and ``out[2]`` the range of ``y``.
    out : ndarray of float64, shape (n_stats,)
        Zeroed here, then filled.

    Returns
    -------
    float
        The weight of the segment.

    Notes
    -----
    The target range lets a node whose targets are all equal have impurity exactly 0:
    ``sum(w*y*y)/W - mean**2`` leaves rounding noise above ``EPSILON`` there, and a tree
    would keep splitting a pure node.
    """
    out[:] = 0.0
    weight = 0.0
    y_min = np.inf
    y_max = -np.inf
    n_first = end - start
    for r in range(n_first + extra_end - extra_start):
        i = idx[start + r] if r < n_first else idx[extra_start + r - n_first]
        out[code[i]] += contrib[i]
        if is_regression:
            out[1] += contrib[i] * y[i]
            y_min = min(y_min, y[i])
            y_max = max(y_max, y[i])
        weight += sample_weight[i]
    if is_regression:
        out[2] = y_max - y_min
    return weight


@inline_kernel
def count_sorted_codes(codes, start, end, extra_start, extra_end, out):
    """Class counts of the positions ``[start, end)`` and ``[extra_start, extra_end)``.

    :func:`segment_stats` for unit weights, read from one feature's sorted class codes: a
    sequential pass instead of a gather ``code[idx[p]]`` per row, which misses the cache on
    large data (about 17 ms per million rows against 0.5 ms). Counts are exact, so the
    order of summation does not matter. Returns the row count (the weight).
    """
    out[:] = 0.0
    # Unsigned positions: see jit.
    for p in range(np.uint64(start), np.uint64(end)):
        out[codes[p]] += 1.0
    for p in range(np.uint64(extra_start), np.uint64(extra_end)):
        out[codes[p]] += 1.0
    return np.float64(end - start + extra_end - extra_start)


# Below this many rows in a node, every sum of squared class counts is an integer under
# 2**53 (n**2 < 2**52), so float64 holds it exactly (:func:`unit_gini_sweep`).
EXACT_SQUARES_LIMIT = 2.0**26


# The Gini proxy of a cut is P = -W_r * (1 - S_r / W_r**2) - W_l * (1 - S_l / W_l**2), which
# is S_l / W_l + S_r / W_r - W in exact arithmetic (S: a side's sum of squared class counts).
# So P can beat the best proxy B only if S_l * W_r + S_r * W_l > (B + W) * W_l * W_r: no
# division, and the sweep computes P (two divisions) only for cuts that pass. Rounding
# moves each side of that test by under 1e-15 * W (every quantity is at most W**3, exact
# integers below 2**53 rounded at most four times), so lowering the bound by this margin
# times W lets every cut that can win through: the proxies compared are the very ones
# computed before, and the splits are the same.
GINI_BOUND_MARGIN = 1e-12

# The squared-error proxy of a cut is P = s_l**2 / W_l + s_r**2 / W_r (s: a side's sum of
# w * y). P can beat the best proxy B only if s_l**2 * W_r + s_r**2 * W_l > B * W_l * W_r. Each
# term of P is at most the node's sum Q of w * y**2 (Cauchy-Schwarz), and both sides of the
# test and P itself round by a few float64 epsilons of Q once divided by W_l * W_r, so
# lowering B by this fraction of Q lets every cut that can win through.
SQUARED_BOUND_MARGIN = 1e-12


@inline_kernel
def skip_long_first_group(
    val, codes, start, end, total, n_sweep, n_missing, missing_stats, with_missing_left, left,
    weight_left,
):  # fmt: skip
    """Add a long first group of tied values to ``left`` by counting the rows after it.

    For the sweeps with unit weights, every statistic a row count, so exact in float64
    (:func:`prepare_sweep`). When the first tied group ``[start, b)`` holds at least half of
    the segment, as the zeros of a sparse 0/1 column do, its class counts are the node's
    minus those of ``[b, end)`` (and of the NaN rows): the sweep then reads ``end - b`` rows
    instead of ``end - start``, with the same counts, so the same splits.

    Returns
    -------
    p : int
        Where the sweep continues: ``b``, or ``start`` when the shortcut does not apply
        (``left`` and ``weight_left`` are then returned untouched).
    weight_left : float
        Left weight once the group is added.

    Notes
    -----
    The group's class purity is not needed: the candidate after the first group is always
    scored (the sweep's ``prev_left_feasible`` is still false there).
    """
    top = val[start] + FEATURE_THRESHOLD  # float32, as in the sweep's tie test
    if val[start + ((end - start) >> 1)] > top:
        return start, weight_left
    b = first_position_above(val, start, end, np.float64(top))
    # [start, b) is one chain of ties: every value is within top. It ends at b only if the
    # step to val[b] is a tie break (a value chained to val[b - 1] would extend the group).
    if b >= end or val[b] <= val[b - 1] + FEATURE_THRESHOLD:
        return start, weight_left
    for c in range(n_sweep):
        left[c] = 0.0
    for r in range(b, end):
        left[codes[r]] += 1.0
    for c in range(n_sweep):
        group = total[c] - left[c] - (missing_stats[c] if n_missing > 0 else 0.0)
        left[c] = group + (missing_stats[c] if with_missing_left else 0.0)
    return b, weight_left + (b - start)


# Above this many rows between its first and last scored cut, and on values mostly tied
# (:func:`mostly_distinct`), the Gini sweep on more than two classes tests for a step
# between values before anything else (a branch) and moves runs of tied rows to the left in
# blocks (``TIED_BLOCK``). Such segments are covtype's first levels (a few thousand distinct
# values in 465k rows): the step branch is predictable there and skips the pre-test's
# arithmetic, and the block sweep (:func:`gini_cuts_in_blocks`), which evaluates the
# pre-test at every row, was slower on them (covtype, one thread: fit 0.96-0.98x with it
# there, 0.88-0.92x without, against the row-by-row sweep of more than two classes). Every
# other segment takes the block sweep.
BRANCHY_SWEEP_MIN_ROWS = 4096


@inline_kernel
def add_row_to_left(c, counts, total, sq_left, sq_right):
    """Move a row of class ``c`` to the left side; returns the updated sums of squares."""
    count = counts[c]
    counts[c] = count + 1
    # (l + 1)^2 - l^2 = 2l + 1 on the left; (k - 1)^2 - k^2 = 1 - 2k on the right.
    return sq_left + 2 * count + 1, sq_right + 1 - 2 * (np.int64(total[c]) - count)


# Covtype's numeric columns hold a few dozen to a few thousand distinct values, so on its
# first levels the sweep walks runs of hundreds of tied rows where no cut is scored. The
# large-segment sweep moves such runs to the left in blocks of this many rows (see
# add_block_to_left), when every class code fits a byte lane of one uint64.
TIED_BLOCK = 32
TIED_BLOCK_MAX_CLASSES = 8


@inline_kernel
def add_block_to_left(codes, first, stop, counts, total, n_sweep, sq_left, sq_right):
    """Move the rows ``[first, stop)`` (uint64 positions) to the left; return the new sums.

    Same counts and sums of squares as :func:`add_row_to_left` row by row (integers), but
    without its chain through memory: the block's class counts are summed in the byte
    lanes of one register (at most 255 rows, at most ``TIED_BLOCK_MAX_CLASSES`` classes),
    then each class moves at once: ``(l + d)^2 - l^2 = d (2l + d)`` on the left and
    ``(k - d)^2 - k^2 = d (d - 2k)`` on the right.
    """
    lanes = np.uint64(0)
    for u in range(first, stop):
        lanes += np.uint64(1) << (np.uint64(codes[u]) << np.uint64(3))
    for c in range(n_sweep):
        d = np.int64((lanes >> np.uint64(8 * c)) & np.uint64(0xFF))
        count = counts[c]
        sq_left += d * (2 * count + d)
        sq_right += d * (d - 2 * (np.int64(total[c]) - count))
        counts[c] = count + d
    return sq_left, sq_right


@inline_kernel
def passes_gini_bound(r, sq_left, sq_right, weight, weight_p, bound):
    """Return whether the cut at ``r`` passes the division-free pre-test (``GINI_BOUND_MARGIN``)."""
    weight_left = weight_p + np.float64(r)
    weight_right = weight - weight_left
    return np.float64(sq_left) * weight_right + np.float64(sq_right) * weight_left > bound * (
        weight_left * weight_right
    )


@inline_kernel
def score_gini_cut(
    r, below, above, sq_left, sq_right, weight, weight_p, bound, best_proxy, best_pos,
    threshold,
):  # fmt: skip
    """Score the cut at ``r`` between values ``below`` and ``above`` if it passes the pre-test.

    Returns the best proxy, position, threshold and pre-test bound, updated when this cut
    is strictly better.
    """
    weight_left = weight_p + np.float64(r)
    weight_right = weight - weight_left
    if passes_gini_bound(r, sq_left, sq_right, weight, weight_p, bound):
        proxy = children_proxy(
            gini_from_squares(np.float64(sq_left), weight_left),
            gini_from_squares(np.float64(sq_right), weight_right),
            weight_left,
            weight_right,
        )
        if proxy > best_proxy:
            best_proxy = proxy
            best_pos = r
            threshold = np.float64(below) / 2.0 + np.float64(above) / 2.0
            # max: a bound from another feature's best (``known_proxy``) may be higher.
            bound = max(bound, best_proxy + weight - weight * GINI_BOUND_MARGIN)
    return best_proxy, best_pos, threshold, bound


@inline_kernel
def first_cut_of_weight(weight_p, weight, min_weight_leaf, lo, hi, right):
    """Return the first cut ``r`` in ``[lo, hi)`` whose left side weighs ``min_weight_leaf``.

    The left weight is ``weight_p + r`` and must reach ``min_weight_leaf``; with ``right``,
    the first cut whose right weight ``weight - weight_p - r`` falls below it instead.
    ``hi`` if none. Binary search with the sweep's own float expressions (both tests are
    monotone in r).
    """
    while lo < hi:
        mid = (lo + hi) >> 1
        weight_left = weight_p + np.float64(mid)
        if (weight - weight_left < min_weight_leaf) if right else (weight_left >= min_weight_leaf):
            hi = mid
        else:
            lo = mid + 1
    return lo


@inline_kernel
def scored_cut_range(start, p, end, min_left, min_right, min_weight_leaf, weight_p, weight):
    """Return the range ``[lo, stop)`` of cuts a row-count sweep may score.

    A cut needs a value before it and enough rows and weight on its left, and the first cut
    short of rows or weight on its right ends the sweep (both tests are monotone in r).
    Bounding the loop by them takes those tests out of it. The left weight at cut ``r`` is
    ``weight_p + r``.
    """
    lo = max(start + 1, start + min_left, p)
    stop = min(end, end - min_right + 1)
    if min_weight_leaf > 0.0:
        lo = first_cut_of_weight(weight_p, weight, min_weight_leaf, lo, stop, False)
        stop = first_cut_of_weight(weight_p, weight, min_weight_leaf, p, stop, True)
    return lo, stop


# The block sweep (:func:`gini_cuts_in_blocks`) works through its cuts this many rows at a
# time; its scratch (``block``) is a (4, SWEEP_BLOCK) int64 array. Below 256, so that a byte
# lane can count a block's rows of one class; a multiple of 8, the vector loops' width.
SWEEP_BLOCK = 248


@inline_kernel
def gini_cuts_in_blocks(
    val, codes, lo, stop, end, counts, total, n_sweep, sq_left, sq_right, weight, weight_p,
    bound, block,
):  # fmt: skip
    """Score the cuts ``[lo, stop)`` of :func:`unit_gini_sweep`, ``SWEEP_BLOCK`` rows at a time.

    ``counts``, ``sq_left`` and ``sq_right`` are the left class counts (int64) and both
    sides' sums of squared counts at ``lo``, ``total`` the node's class counts; the left row
    count at cut ``r`` is ``weight_p + r``. ``block`` is a (4, ``SWEEP_BLOCK``) int64
    scratch. Returns ``proxy, pos, threshold`` as the sweep does, and leaves ``counts``
    undefined.

    Notes
    -----
    The row-by-row sweep ran about 35 instructions per row, most of them the pre-test, at
    close to the core's peak rate: it was bound by their number, not by a chain. So each
    block goes in three passes:

    1. Both sides' sums of squares at every cut. With two classes the left count of
       class 0 is the left row count less that of class 1, so one running count (an integer
       add per row) gives both sums, computed in a second, vectorised loop. Up to
       ``TIED_BLOCK_MAX_CLASSES`` classes the block's own class counts are kept in the byte
       lanes of a register, so no row waits for the previous row of its class to be
       stored (:func:`add_row_to_left`'s chain through ``counts``), which the sweep of
       more classes still does. Covtype, one thread: this sweep took about 0.85x the time
       of the same pass with ``add_row_to_left`` (perf shares).
    2. The step test and the division-free pre-test of every cut, without a branch and
       with no dependence between rows, so LLVM vectorises the loop; it records which cuts
       pass.
    3. Run only when some cut passed: those cuts in order, with :func:`score_gini_cut`,
       which raises the bound as it goes and tests each cut again against it. Pass 2 used
       a lower bound, so it let through every cut the row-by-row sweep would score, and
       pass 3 scores the same ones.

    The sums are integers below 2**53 (counts below 2**26), exact in float64: the same
    numbers :func:`add_row_to_left` accumulates, so the same proxies and splits. They are
    stored as int64 (the two-class loop converts its float64 results), which spares the
    scalar first pass of the other class counts two conversions per row.

    Fits against the row-by-row sweep (one thread, full depth, before the byte lanes):
    binary 1M x 20 0.75-0.79x, 10 classes 1M x 20 0.84-0.92x, covtype 0.95-0.98x (median
    of 20 pairs 0.978x, paired ratio 0.946x; these runs moved by 15 % within minutes).
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    counts_1 = block[0]  # two classes: left count of class 1 at each cut
    sq_lefts = block[1]
    sq_rights = block[2]
    passed = block[3]
    # Read only with two classes: with one, total and counts have no second entry.
    two_classes = n_sweep == 2
    total_0_f = total[0]
    total_1_f = total[1] if two_classes else 0.0
    count_1 = counts[1] if two_classes else np.int64(0)
    # u indexes, i counts within the block (see "Unsigned positions" in jit).
    first = np.uint64(lo)
    u_stop = np.uint64(stop)
    while first < u_stop:
        n = min(u_stop - first, np.uint64(SWEEP_BLOCK))
        if two_classes:
            for i in range(n):
                counts_1[i] = count_1
                count_1 += np.int64(codes[first + i])
            for i in range(n):
                left_1 = np.float64(counts_1[i])
                left_0 = weight_p + np.float64(np.int64(first + i)) - left_1
                right_0 = total_0_f - left_0
                right_1 = total_1_f - left_1
                sq_lefts[i] = np.int64(left_0 * left_0 + left_1 * left_1)
                sq_rights[i] = np.int64(right_0 * right_0 + right_1 * right_1)
        elif n_sweep <= TIED_BLOCK_MAX_CLASSES:
            # The block's own class counts in the byte lanes of one register (fewer than
            # 256 rows): a row's class count is its count at the block's start, which the
            # loop does not write, plus its lane.
            lanes = np.uint64(0)
            for i in range(n):
                sq_lefts[i] = sq_left
                sq_rights[i] = sq_right
                c = np.uint64(codes[first + i])
                shift = c << np.uint64(3)
                count = counts[c] + np.int64((lanes >> shift) & np.uint64(0xFF))
                lanes += np.uint64(1) << shift
                sq_left += 2 * count + 1
                sq_right += 1 - 2 * (np.int64(total[c]) - count)
            for c in range(n_sweep):
                counts[c] += np.int64((lanes >> np.uint64(8 * c)) & np.uint64(0xFF))
        else:
            for i in range(n):
                sq_lefts[i] = sq_left
                sq_rights[i] = sq_right
                sq_left, sq_right = add_row_to_left(
                    codes[first + i], counts, total, sq_left, sq_right
                )
        any_passed = np.int64(0)
        for i in range(n):
            u = first + i
            # & on bools does not short-circuit: no branch.
            cut_passes = (val[u] > val[u - np.uint64(1)] + FEATURE_THRESHOLD) & passes_gini_bound(
                np.int64(u), sq_lefts[i], sq_rights[i], weight, weight_p, bound
            )
            passed[i] = np.int64(cut_passes)
            any_passed |= np.int64(cut_passes)
        if any_passed != 0:
            for i in range(n):
                if passed[i] != 0:
                    u = first + i
                    best_proxy, best_pos, threshold, bound = score_gini_cut(
                        np.int64(u), val[u - np.uint64(1)], val[u], sq_lefts[i], sq_rights[i],
                        weight, weight_p, bound, best_proxy, best_pos, threshold,
                    )  # fmt: skip
        first += n
    return best_proxy, best_pos, threshold


@inline_kernel
def unit_gini_sweep(
    val, codes, start, p, end, total, weight, weight_left, n_sweep, min_left, min_right,
    min_weight_leaf, left, known_proxy, block,
):  # fmt: skip
    """Sweep like :func:`general_sweep`, for Gini on row counts.

    ``left`` holds the class counts of the rows before position ``p`` (and of the NaN rows
    when they go left), ``weight_left`` their number; returns ``proxy, pos, threshold`` as
    the caller does, and leaves ``left`` as scratch (its bytes hold integer counts). The
    caller checks that the node has fewer than ``EXACT_SQUARES_LIMIT`` rows.

    ``known_proxy`` is a proxy that some split of the node is known to reach (another
    feature's best, see ``shared_best``; ``NO_SPLIT`` if none): the pre-test then starts
    from it instead of admitting the first cut, so it turns away the cuts that cannot reach
    it. Every cut reaching it is still scored, ties included, so the result is this
    feature's best whenever that best reaches ``known_proxy``; otherwise it is a lesser cut
    or none, which loses to the known one anyway.

    Notes
    -----
    The sums of squared class counts of both sides are kept up to date row by row, so a
    candidate costs O(1) instead of O(n_sweep) (10 classes: most of the sweep). Counts and
    their squares are integers below 2**53, so converted to float64 they are the very
    numbers the per-candidate loop of the general sweep sums: same proxies, same splits.

    The counts and sums are int64 (in ``left``'s own memory, viewed as int64) and the left
    weight is derived from the position at each candidate. Every row updates one class count
    and the two sums, and a run of rows of one class chains those updates through memory:
    integer adds take one cycle where float adds take three or four: the sweep of covtype's
    first levels ran 20 % faster per row (less on deep levels, where candidates dominate).

    Every boundary between distinct values that passes the pre-test is scored, with the
    same expression as the general sweep, so the same proxies. The general sweep skips the
    cuts inside runs of one class; that test depends on the labels and mispredicted about
    half of the time on mixed nodes, which cost more than the proxies it saved (two
    divisions, pipelined). The cuts are scored block by block (:func:`gini_cuts_in_blocks`),
    except on long segments of mostly tied values (``BRANCHY_SWEEP_MIN_ROWS``). The feasible
    cuts are one range of positions, found before the loop, so the loop tests neither the
    children's sizes nor their weights.
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    counts = left.view(np.int64)
    sq_left = np.int64(0)
    sq_right = np.int64(0)
    for c in range(n_sweep):
        count = np.int64(left[c])  # read before its bytes are overwritten
        counts[c] = count
        sq_left += count * count
        right = np.int64(total[c]) - count
        sq_right += right * right
    # weight_left at position r is weight_p + r: exact integers, no float chain.
    weight_p = weight_left - np.float64(p)
    lo, stop = scored_cut_range(
        start, p, end, min_left, min_right, min_weight_leaf, weight_p, weight
    )
    if lo >= stop:
        return best_proxy, best_pos, threshold
    for u in range(np.uint64(p), np.uint64(lo)):  # rows left of every scored cut
        sq_left, sq_right = add_row_to_left(codes[u], counts, total, sq_left, sq_right)
    # Division-free pre-test of a candidate (see GINI_BOUND_MARGIN); -inf admits the first.
    bound = -np.inf
    if known_proxy > NO_SPLIT:
        bound = known_proxy + weight - weight * GINI_BOUND_MARGIN
    if n_sweep == 2 or stop - lo <= BRANCHY_SWEEP_MIN_ROWS or mostly_distinct(val, lo, stop):
        return gini_cuts_in_blocks(
            val, codes, lo, stop, end, counts, total, n_sweep, sq_left, sq_right, weight,
            weight_p, bound, block,
        )  # fmt: skip
    # Long runs of ties (BRANCHY_SWEEP_MIN_ROWS). u indexes, r counts ("Unsigned positions").
    u = np.uint64(lo)
    u_stop = np.uint64(stop)
    blocks = n_sweep <= TIED_BLOCK_MAX_CLASSES
    next_block = u  # no block is tried before this position
    while u < u_stop:
        if val[u] > val[u - np.uint64(1)] + FEATURE_THRESHOLD:
            best_proxy, best_pos, threshold, bound = score_gini_cut(
                np.int64(u), val[u - np.uint64(1)], val[u], sq_left, sq_right, weight,
                weight_p, bound, best_proxy, best_pos, threshold,
            )  # fmt: skip
        elif blocks and u >= next_block:
            # Row u ties with u - 1. If the block's last value is within the tie test
            # of val[u], so is every step inside it (float32 rounding is monotone): no
            # cut to score before the block's end. Else wait a block before trying.
            block_end = u + np.uint64(TIED_BLOCK)
            if block_end <= u_stop and (
                val[block_end - np.uint64(1)] <= val[u] + FEATURE_THRESHOLD
            ):
                sq_left, sq_right = add_block_to_left(
                    codes, u, block_end, counts, total, n_sweep, sq_left, sq_right
                )
                u = block_end
                continue
            next_block = block_end
        sq_left, sq_right = add_row_to_left(codes[u], counts, total, sq_left, sq_right)
        u += np.uint64(1)
    return best_proxy, best_pos, threshold


# Entropy and gain ratio on row counts (:func:`unit_entropy_sweep`): the weighted entropy of
# both sides of a cut, in nats, is W_l ln W_l + W_r ln W_r - sum of c ln c over the classes of
# both sides (c: a class count), so it follows row by row from a table of n ln n. The table
# holds n ln n in fixed point (units of 2**-30, int64): the running sums are then exact
# integer sums of the table's entries, with no rounding that grows along the sweep. Below
# this many rows n ln n < 2**31, so every sum stays below 2**62.
XLOGX_ROWS_LIMIT = 2**26
XLOGX_SCALE = 2.0**30

# Bounds, in nats, on how far the fixed-point sum above may be from ln 2 times the proxy the
# sweep computes (sum of entropy_term, scikit-learn's expression), per class and side: each
# table entry is n ln n rounded (a few ulps of at most W ln W, and 2**-31), and each
# entropy_term and sum rounds by a few ulps of W. These are 3-10x what the rounding can
# reach; a looser margin only lets a few more cuts through to be scored exactly.
ENTROPY_BOUND_MARGIN = 1e-13
ENTROPY_BOUND_FLOOR = 2.0**-28
NO_ENTROPY_BOUND = np.int64(-(2**63))


@kernel
def xlogx_table(n_rows):
    """Return ``round(n * ln(n) * XLOGX_SCALE)`` as int64 for ``n = 0 .. n_rows``.

    An empty table when ``n_rows`` reaches ``XLOGX_ROWS_LIMIT`` (the sums could overflow);
    the sweep then takes the general path.
    """
    if n_rows >= XLOGX_ROWS_LIMIT:
        return np.zeros(0, dtype=np.int64)
    out = np.empty(n_rows + 1, dtype=np.int64)
    out[0] = 0
    for n in range(1, n_rows + 1):
        x = np.float64(n)
        out[n] = np.int64(np.round(x * np.log(x) * XLOGX_SCALE))
    return out


def screening_table(n_samples, unit_weight, criterion):
    """Return :func:`xlogx_table` of the fit's rows where the sweeps screen with it, else empty.

    Entropy and gain ratio on row counts, in the exact and histogram splitters.
    """
    if unit_weight and (criterion == ENTROPY or criterion == GAIN_RATIO):
        return xlogx_table(n_samples)
    return np.zeros(0, dtype=np.int64)


@inline_kernel
def entropy_margin(n_sweep, weight):
    """Margin, in nats, of the fixed-point screen of a node of ``weight`` rows (see above)."""
    return (n_sweep + 1) * (
        ENTROPY_BOUND_MARGIN * (weight * np.log(weight) + weight) + ENTROPY_BOUND_FLOOR
    )


@inline_kernel
def entropy_bound(proxy, margin):
    """Least fixed-point sum a cut needs to reach ``proxy`` (bits), less ``margin`` (nats)."""
    if proxy == NO_SPLIT:
        return NO_ENTROPY_BOUND
    return np.int64(np.floor((proxy * LN2 - margin) * XLOGX_SCALE)) - 1


@inline_kernel
def add_row_to_left_xlogx(c, counts, total, xlogx, sum_left, sum_right):
    """Move a row of class ``c`` to the left side; return the updated sums of ``n ln n``."""
    count = counts[c]
    counts[c] = count + 1
    right = np.int64(total[c]) - count
    return (
        sum_left + (xlogx[count + 1] - xlogx[count]),
        sum_right + (xlogx[right - 1] - xlogx[right]),
    )


@inline_kernel
def unit_entropy_proxy(counts, total, n_sweep, weight_left, weight):
    """Entropy proxy of a cut with the class counts ``counts`` (int64) on its left side.

    The expression of :func:`criterion.single_output_proxy` and the general sweep's, for
    the cuts the unit sweeps' screen lets through (this one's and ``sweep_hist``'s).
    """
    weight_right = weight - weight_left
    entropy_left = 0.0
    entropy_right = 0.0
    for c in range(n_sweep):
        count = np.float64(counts[c])
        entropy_left += entropy_term(count, weight_left)
        entropy_right += entropy_term(total[c] - count, weight_right)
    return children_proxy(entropy_left, entropy_right, weight_left, weight_right)


@callee_kernel
def unit_entropy_sweep(
    val, codes, start, p, end, total, weight, weight_left, n_sweep, min_left, min_right,
    min_weight_leaf, left, known_proxy, xlogx,
):  # fmt: skip
    """Sweep like :func:`general_sweep`, for entropy on row counts.

    Arguments and results as :func:`unit_gini_sweep`'s; ``xlogx`` is :func:`xlogx_table`
    for at least the node's rows. ``known_proxy`` must be ``NO_SPLIT`` for gain ratio, which
    needs every feature's own best.

    Notes
    -----
    A cut's proxy ``-W_r H_r - W_l H_l`` costs a division and a logarithm per class and side
    (10 classes: 40 per cut, the whole cost of the sweep). Here each cut is first screened
    in O(1): the fixed-point sums of ``n ln n`` of both sides (kept row by row, see
    ``XLOGX_SCALE``) give ``ln 2`` times the proxy within a bound on the rounding of both
    (``ENTROPY_BOUND_MARGIN``). Only a cut that may reach the best proxy so far is scored,
    with the general sweep's expression: same proxies, same splits.

    Every boundary between distinct values is screened, as scikit-learn scores every one;
    the general sweep skips the cuts inside runs of one class, which cannot win (the proxy
    is convex along such a run, so one of its ends is at least as good).

    A kernel, not inlined into :func:`best_splits_worker` (its only caller): the worker's
    accelerated specialisation compiles about 0.6 s faster with this kernel included, and
    entropy fits run no slower for the call per (node, feature) (200k x 20: 0.95-0.99x).
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    counts = left.view(np.int64)
    sum_left = np.int64(0)
    sum_right = np.int64(0)
    for c in range(n_sweep):
        count = np.int64(left[c])  # read before its bytes are overwritten
        counts[c] = count
        sum_left += xlogx[count]
        sum_right += xlogx[np.int64(total[c]) - count]
    n_rows = np.int64(weight)
    weight_p = weight_left - np.float64(p)  # left rows at position r: weight_p + r
    rows_p = np.int64(weight_p)
    lo, stop = scored_cut_range(
        start, p, end, min_left, min_right, min_weight_leaf, weight_p, weight
    )
    if lo >= stop:
        return best_proxy, best_pos, threshold
    for u in range(np.uint64(p), np.uint64(lo)):  # rows left of every scored cut
        sum_left, sum_right = add_row_to_left_xlogx(
            codes[u], counts, total, xlogx, sum_left, sum_right
        )
    margin = entropy_margin(n_sweep, weight)
    bound = entropy_bound(known_proxy, margin)
    below = val[lo - 1]  # lo > start
    for u in range(np.uint64(lo), np.uint64(stop)):
        above = val[u]
        rows_left = rows_p + np.int64(u)
        # ln 2 times the cut's proxy, in fixed point; the subtractions in this order keep
        # every partial sum within a side's own range.
        screen = (sum_left - xlogx[rows_left]) + (sum_right - xlogx[n_rows - rows_left])
        if (above > below + FEATURE_THRESHOLD) & (screen > bound):
            proxy = unit_entropy_proxy(counts, total, n_sweep, np.float64(rows_left), weight)
            if proxy > best_proxy:
                best_proxy = proxy
                best_pos = np.int64(u)
                threshold = np.float64(below) / 2.0 + np.float64(above) / 2.0
                # max: a bound from another feature's best (known_proxy) may be higher.
                bound = max(bound, entropy_bound(best_proxy, margin))
        below = above
        sum_left, sum_right = add_row_to_left_xlogx(
            codes[u], counts, total, xlogx, sum_left, sum_right
        )
    return best_proxy, best_pos, threshold


# Entropy and gain ratio on weights (:func:`weighted_entropy_sweep`): the same identity in
# floating point, from cached x ln x terms of each class's weight on each side. The running
# sums of those terms round at each update (at most one per row): per row swept, this
# fraction of (number of classes + 1) * (|W ln W| + W + 1) bounds their drift (a few ulps
# per update) and the gap between the weight summed row by row and the sum of the class
# weights (both sums of the same weights, in different orders). About 6x what three
# roundings per row can reach.
ENTROPY_DRIFT_MARGIN = 4e-15
# Fewer classes than this, or a segment of mostly tied values (:func:`mostly_distinct`), take
# the general sweep, which scores a cut with 2 * n_sweep logarithms. On make_classification
# data (300k x 20, weighted, old and new alternating) the screen takes 0.86x the time at 3
# classes, 0.62x at 5, 0.37x at 10; binary data gained 1-4 %, not worth a kernel call. On
# Covertype (long runs of tied values, 3 % of the fit in logarithms) this sweep was 1.12-1.22x
# slower in every form tried, also with the screen turned off: the cost of being a kernel of
# its own (see its Notes). The tie test keeps Covertype on the general sweep (0.96x).
WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES = 3


@inline_kernel
def x_ln_x(x):
    """``x * ln(x)``, 0 for ``x <= 0`` (an absent class, or a weight rounded below zero)."""
    if x > 0.0:
        return x * np.log(x)
    return 0.0


@inline_kernel
def mostly_distinct(val, p, end):
    """Whether at most 4 rows tie with the row before, of those at a stride of ``(end - p) // 16``.

    That is 16 to 31 rows spread over ``[p, end)``, or every row of a segment of 16 or
    fewer. A cheap look at a segment before choosing :func:`weighted_entropy_sweep`: on values with
    long runs of ties (Covertype's columns) the general sweep scores few cuts, and the
    screen's kernel was 1.18x slower there (10 classes); with this test, 1.00x.
    """
    step = max((end - p) // 16, 1)
    n_tied = 0
    for u in range(p + 1, end, step):
        if val[u] <= val[u - 1] + FEATURE_THRESHOLD:
            n_tied += 1
    return n_tied * 4 <= 16


@inline_kernel
def tied_group(idx, val, codes, p, end, sample_weight, unit_sample_weight, weight_left):
    """Return the end ``q`` of the group of values tied with ``val[p]`` and its class purity.

    Also returns the group's code and the left weight once the group is added, summed row by
    row in the order the sweeps add the rows.
    """
    group_code = codes[p]
    pure = True
    next_weight_left = weight_left + (1.0 if unit_sample_weight else sample_weight[idx[p]])
    u_end = np.uint64(end)  # unsigned positions (see jit)
    u = np.uint64(p + 1)
    while u < u_end and val[u] <= val[u - np.uint64(1)] + FEATURE_THRESHOLD:
        if codes[u] != group_code:
            pure = False
        next_weight_left += 1.0 if unit_sample_weight else sample_weight[idx[u]]
        u += np.uint64(1)
    return np.int64(u), pure, group_code, next_weight_left


@inline_kernel
def cut_to_score(
    p, q, start, end, weight, weight_left, next_weight_left, min_left, min_right,
    min_weight_leaf, skip_same_class, pure, prev_pure, group_code, prev_code,
    prev_left_feasible,
):  # fmt: skip
    """Apply the group sweeps' rules to the cut before the group ``[p, q)`` (``p > start``).

    Returns ``stop`` (the right side is too small, and only shrinks from here on),
    ``left_feasible`` and ``score``: a feasible cut is scored unless it lies between two
    groups pure in the same class (``skip_same_class``), where only the ends of the feasible
    range can win.
    """
    if end - p < min_right or weight - weight_left < min_weight_leaf:
        return True, False, False
    left_feasible = p - start >= min_left and weight_left >= min_weight_leaf
    score = left_feasible and (
        not (skip_same_class and pure and prev_pure and group_code == prev_code)
        or not prev_left_feasible
        or q >= end
        or end - q < min_right
        or weight - next_weight_left < min_weight_leaf
    )
    return False, left_feasible, score


@callee_kernel
def weighted_entropy_sweep(
    idx, val, codes, start, p, end, contrib, sample_weight, total, weight, weight_left,
    n_sweep, min_left, min_right, min_weight_leaf, left, known_proxy,
):  # fmt: skip
    """Sweep like :func:`general_sweep`, for weighted entropy and gain ratio.

    Arguments and results as :func:`general_sweep`'s; ``left`` holds the class
    weights of the NaN rows when they go left (else zeros) and has ``5 * n_sweep`` entries:
    the sweep keeps its caches after them (see the layout below).
    ``known_proxy`` must be ``NO_SPLIT`` for gain ratio, which needs every feature's own best.

    Notes
    -----
    As :func:`unit_entropy_sweep`, in floating point: ``ln 2`` times a cut's proxy is the sum
    over both sides of the classes' ``x ln x`` less the side's ``W ln W``. The sweep caches
    each class's two terms and keeps their sums; before a cut is screened it refreshes the
    terms of the classes whose weight changed since the last screened cut (two logarithms
    each), so a cut costs two logarithms per class moved plus two, instead of a division
    and a logarithm per class and side (10 classes: 40), and the rows inside runs of one
    class, whose cuts are not scored, cost none. The margin (``ENTROPY_BOUND_MARGIN`` for
    the scoring, ``ENTROPY_DRIFT_MARGIN`` per row for the running sums) only lets through
    more cuts; the ones let through are scored with the general sweep's expression. The
    groups, the cuts between groups pure in one class and the feasibility tests are the
    general sweep's: same proxies, same splits.

    A kernel, not inlined: inlined into :func:`best_splits_worker` next to the general
    sweep, it made weighted Gini and regression fits 3-8 % slower (the general loop's code
    changed with it; 300k x 20, old and new alternating); as a call it costs them nothing
    measurable. The call has a cost of its own on some data (see
    ``WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES``).
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    # Layout of ``left`` (K = n_sweep): [0, K) the class weights of the left side; [K, 2K)
    # and [2K, 3K) the cached x ln x of each class's left and right weight; [3K, 4K) the
    # classes moved since the last screened cut (as floats), [4K, 5K) 1.0 for those.
    term_left = n_sweep
    term_right = 2 * n_sweep
    moved = 3 * n_sweep
    is_moved = 4 * n_sweep
    n_moved = 0
    sum_left = 0.0
    sum_right = 0.0
    for c in range(n_sweep):
        term = x_ln_x(left[c])
        left[term_left + c] = term
        sum_left += term
        term = x_ln_x(total[c] - left[c])
        left[term_right + c] = term
        sum_right += term
        left[is_moved + c] = 0.0
    margin = (n_sweep + 1) * (
        (ENTROPY_BOUND_MARGIN + (end - start + n_sweep) * ENTROPY_DRIFT_MARGIN)
        * (abs(weight * np.log(weight)) + weight + 1.0)
        + ENTROPY_BOUND_FLOOR
    )
    bound = known_proxy * LN2 - margin if known_proxy > NO_SPLIT else -np.inf
    prev_pure = False
    prev_code = -1
    prev_left_feasible = False
    while p < end:
        q, pure, group_code, next_weight_left = tied_group(
            idx, val, codes, p, end, sample_weight, False, weight_left
        )
        # Candidate: left = [start, p), right = [p, end).
        if p > start:
            stop, left_feasible, score = cut_to_score(
                p, q, start, end, weight, weight_left, next_weight_left, min_left, min_right,
                min_weight_leaf, True, pure, prev_pure, group_code, prev_code,
                prev_left_feasible,
            )  # fmt: skip
            if stop:
                break
            if score:
                for k in range(n_moved):
                    c = np.int64(left[moved + k])
                    left[is_moved + c] = 0.0
                    term = x_ln_x(left[c])
                    sum_left += term - left[term_left + c]
                    left[term_left + c] = term
                    term = x_ln_x(total[c] - left[c])
                    sum_right += term - left[term_right + c]
                    left[term_right + c] = term
                n_moved = 0
                weight_right = weight - weight_left
                screen = (sum_left - x_ln_x(weight_left)) + (sum_right - x_ln_x(weight_right))
                if screen > bound:
                    entropy_left = 0.0
                    entropy_right = 0.0
                    for c in range(n_sweep):
                        entropy_left += entropy_term(left[c], weight_left)
                        entropy_right += entropy_term(total[c] - left[c], weight_right)
                    proxy = children_proxy(entropy_left, entropy_right, weight_left, weight_right)
                    if proxy > best_proxy:
                        best_proxy = proxy
                        best_pos = p
                        threshold = np.float64(val[p - 1]) / 2.0 + np.float64(val[p]) / 2.0
                        bound = max(bound, best_proxy * LN2 - margin)
            prev_left_feasible = left_feasible
        for u in range(np.uint64(p), np.uint64(q)):
            c = codes[u]
            left[c] += contrib[idx[u]]
            if left[is_moved + c] == 0.0:
                left[is_moved + c] = 1.0
                left[moved + n_moved] = c
                n_moved += 1
        weight_left = next_weight_left
        prev_pure = pure
        prev_code = group_code
        p = q
    return best_proxy, best_pos, threshold


@inline_kernel
def start_sides(
    n_sweep, min_samples_leaf, n_missing, missing_go_left, missing_stats, missing_weight, left
):
    """Start a sweep's left side: the node's NaN rows if they go left, else nothing.

    Fills ``left[:n_sweep]`` (``missing_stats`` is read only when the NaN rows go left).

    Returns
    -------
    weight_left : float
        The left side's weight.
    with_missing_left : bool
        Whether the node has NaN rows and they are on the left.
    min_left, min_right : int
        Fewest non-missing rows each side needs: the NaN rows count on one side, so folding
        them into the limits once leaves the sweeps the same with and without missing values.
    """
    min_left = min_samples_leaf - (n_missing if missing_go_left else 0)
    min_right = min_samples_leaf - (0 if missing_go_left else n_missing)
    with_missing_left = missing_go_left and n_missing > 0
    for c in range(n_sweep):
        left[c] = missing_stats[c] if with_missing_left else 0.0
    weight_left = missing_weight if with_missing_left else 0.0
    return weight_left, with_missing_left, min_left, min_right


@inline_kernel
def prepare_sweep(
    val, codes, start, end, total, n_sweep, min_samples_leaf, n_missing, missing_go_left,
    missing_stats, missing_weight, unit_weight, left,
):  # fmt: skip
    """Set up the sweep of one feature's sorted segment ``[start, end)`` for one node.

    Parameters are those of :func:`general_sweep` and :func:`start_sides`. Fills ``left`` with
    the statistics of the rows left of the first cut (the NaN rows when they go left, and
    with unit weights a long first group of tied values: :func:`skip_long_first_group`).

    Returns
    -------
    p : int
        The position the sweep starts from.
    weight_left : float
        Weight of the rows ``left`` holds.
    min_left, min_right : int
        As :func:`start_sides` returns them.
    """
    weight_left, with_missing_left, min_left, min_right = start_sides(
        n_sweep, min_samples_leaf, n_missing, missing_go_left, missing_stats, missing_weight,
        left,
    )  # fmt: skip
    p = start
    if unit_weight:
        p, weight_left = skip_long_first_group(
            val, codes, start, end, total, n_sweep, n_missing, missing_stats, with_missing_left,
            left, weight_left,
        )  # fmt: skip
    return p, weight_left, min_left, min_right


@callee_kernel
def general_sweep(
    idx, val, codes, start, p, end, contrib, sample_weight, unit_weight, unit_sample_weight,
    total, weight, weight_left, n_sweep, criterion, min_left, min_right, min_weight_leaf, left,
    known_proxy,
):  # fmt: skip
    """Best threshold of one feature for one node: a single sweep over its sorted segment.

    The sweep of every criterion and weighting that has no specialised one
    (:func:`unit_gini_sweep`, :func:`unit_entropy_sweep`, :func:`weighted_entropy_sweep`;
    :func:`best_splits_worker` picks). The rows before ``p`` are already in ``left``
    and ``weight_left`` (:func:`prepare_sweep`).

    Parameters
    ----------
    idx, val, codes : ndarray of int32 / float32 / int32
        The feature's sorted ids, values and sweep codes; only ``[start, end)`` is read.
    start, end : int
        The node's segment of non-missing values.
    p : int
        Position the sweep starts from (:func:`prepare_sweep`).
    contrib, sample_weight : ndarray
        Per-sample contribution and weight (see module docstring).
    unit_weight : bool
        Every contribution and weight is 1 (unweighted classification): nothing is gathered,
        so the sweep reads memory only sequentially.
    unit_sample_weight : bool
        Every weight is 1 (true with ``unit_weight``, and for unweighted regression): the
        side weights are row counts, and only the contributions are gathered.
    total : ndarray of float64
        The node's statistics (for squared error ``total[1]``, its sum of ``w * y**2``, is
        read too).
    weight : float
        The node's weight.
    weight_left : float
        Weight of the rows before ``p`` (NaN rows included when they go left).
    n_sweep : int
        Number of sweep statistics.
    criterion : int
        Criterion code.
    min_left, min_right : int
        Fewest non-missing rows each side needs (:func:`prepare_sweep`).
    min_weight_leaf : float
        Least weight a child may have.
    left : ndarray of float64
        The statistics of the rows before ``p`` on entry (at least ``n_sweep`` entries);
        the sweep adds the others' as it goes.
    known_proxy : float
        A proxy some split of the node reaches, or ``NO_SPLIT``. The Gini and squared-error
        pre-test starts from it, so cuts that cannot reach it are not scored (a losing
        feature may report a lesser cut or none); the other criteria ignore it.

    Returns
    -------
    proxy : float
        Score of the best candidate, ``-inf`` when there is none (or, with ``known_proxy``,
        when no candidate reaches it).
    pos : int
        First non-missing position of the right child (``end`` when there is no candidate).
    threshold : float
        ``v[pos-1] / 2 + v[pos] / 2``: halves are added so the sum cannot overflow.

    Notes
    -----
    Candidates are the positions where the value changes by more than ``FEATURE_THRESHOLD``
    (added in float32, as scikit-learn does). The best is replaced only on a strictly greater
    proxy, so the lowest threshold wins ties.

    For classification only *class boundary points* are scored: a cut between two groups of
    tied values that are both pure in the same class cannot beat the cuts at the ends of that
    run, because weighted entropy and Gini are concave along it (Fayyad & Irani 1992; Breiman
    et al. 1984). With ``min_samples_leaf`` / ``min_weight_leaf`` the ends of the feasible
    range are ends of such runs too, so the first and last feasible cuts are always scored.
    Skipping the rest saves most proxy evaluations in nearly pure nodes.
    Cost: O(end - start) plus O(n_sweep) per scored candidate.
    """
    best_proxy = NO_SPLIT
    best_pos = end
    threshold = 0.0
    skip_same_class = is_classification(criterion)
    prev_pure = False
    prev_code = -1
    prev_left_feasible = False
    # Division-free pre-test of a cut, as in unit_gini_sweep. Gini and squared error both
    # test a_l * W_r + a_r * W_l > bound * W_l * W_r (a: a side's sum of squared class weights,
    # or its squared sum of w * y), with bound = best proxy + bound_offset: the proxy's
    # constant term, less a margin for rounding (GINI_BOUND_MARGIN: with fractional weights
    # a side's sum of squares is still at most its weight squared; SQUARED_BOUND_MARGIN:
    # total[1] is the node's sum of w * y**2). -inf admits the first cut.
    if criterion == SQUARED_ERROR:
        bound_offset = -total[1] * SQUARED_BOUND_MARGIN
    else:
        bound_offset = weight - weight * GINI_BOUND_MARGIN
    bound = known_proxy + bound_offset if known_proxy > NO_SPLIT else -np.inf
    while p < end:
        # The group of values tied with val[p] is [p, q): its class purity, and the left
        # weight once it is added (summed in the same order as the real update below).
        q, pure, group_code, next_weight_left = tied_group(
            idx, val, codes, p, end, sample_weight, unit_sample_weight, weight_left
        )
        # Candidate: left = [start, p), right = [p, end).
        if p > start:
            stop, left_feasible, score = cut_to_score(
                p, q, start, end, weight, weight_left, next_weight_left, min_left, min_right,
                min_weight_leaf, skip_same_class, pure, prev_pure, group_code, prev_code,
                prev_left_feasible,
            )  # fmt: skip
            if stop:
                break  # the right side only shrinks from here on
            if score:
                # The proxy is computed here rather than in a helper taking the
                # arrays: such a call costs reference-count updates per candidate.
                weight_right = weight - weight_left
                if criterion == SQUARED_ERROR:
                    sum_left = left[0]
                    sum_right = total[0] - left[0]
                    proxy = NO_SPLIT
                    if (
                        sum_left * sum_left * weight_right + sum_right * sum_right * weight_left
                        > bound * (weight_left * weight_right)
                    ):
                        proxy = squared_error_proxy(sum_left, sum_right, weight_left, weight_right)
                elif criterion == POISSON:
                    proxy = poisson_proxy(left[0], total[0] - left[0], weight_left, weight_right)
                elif criterion == GINI:
                    sq_left = 0.0
                    sq_right = 0.0
                    for c in range(n_sweep):
                        count = left[c]
                        sq_left += count * count
                        count = total[c] - left[c]
                        sq_right += count * count
                    proxy = NO_SPLIT
                    if sq_left * weight_right + sq_right * weight_left > bound * (
                        weight_left * weight_right
                    ):
                        proxy = children_proxy(
                            gini_from_squares(sq_left, weight_left),
                            gini_from_squares(sq_right, weight_right),
                            weight_left,
                            weight_right,
                        )
                else:
                    entropy_left = 0.0
                    entropy_right = 0.0
                    for c in range(n_sweep):
                        entropy_left += entropy_term(left[c], weight_left)
                        entropy_right += entropy_term(total[c] - left[c], weight_right)
                    proxy = children_proxy(entropy_left, entropy_right, weight_left, weight_right)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best_pos = p
                    threshold = np.float64(val[p - 1]) / 2.0 + np.float64(val[p]) / 2.0
                    bound = max(bound, best_proxy + bound_offset)
            prev_left_feasible = left_feasible
        for u in range(np.uint64(p), np.uint64(q)):
            left[codes[u]] += 1.0 if unit_weight else contrib[idx[u]]
        weight_left = next_weight_left
        prev_pure = pure
        prev_code = group_code
        p = q
    return best_proxy, best_pos, threshold


@inline_kernel
def count_missing(val, start, end):
    """Count the NaN values of the sorted segment ``val[start:end]``.

    Notes
    -----
    NaN sorts last (:func:`sortable_key`) and the stable partition keeps it last in every
    child, so the NaN values of a segment are its tail. A feature without NaN in the node
    costs one comparison. Cost O(1 + n_missing).
    """
    end_non_missing = end
    while end_non_missing > start and np.isnan(val[end_non_missing - 1]):
        end_non_missing -= 1
    return end - end_non_missing


@inline_kernel
def tail_stats(
    idx, codes, start, end, contrib, sample_weight, unit_weight, unit_sample_weight, n_sweep, out
):
    """Sweep statistics and weight of positions ``start .. end - 1`` (the NaN tail)."""
    for c in range(n_sweep):
        out[c] = 0.0
    weight = 0.0
    for p in range(start, end):
        out[codes[p]] += 1.0 if unit_weight else contrib[idx[p]]
        weight += 1.0 if unit_sample_weight else sample_weight[idx[p]]
    return weight


@inline_kernel
def values_versus_missing_sides(
    n_values, n_missing, weight, missing_weight, total, missing_stats, n_sweep,
    min_samples_leaf, min_weight_leaf, left,
):  # fmt: skip
    """Whether the split "every value left, NaN right" is allowed; if so, fills ``left``.

    The arguments are those of :func:`values_versus_missing_proxy`; ``left[:n_sweep]``
    receives the values' side statistics (``total`` minus the NaN rows').
    """
    if (
        n_values < min_samples_leaf
        or n_missing < min_samples_leaf
        or weight - missing_weight < min_weight_leaf
        or missing_weight < min_weight_leaf
    ):
        return False
    for c in range(n_sweep):
        left[c] = total[c] - missing_stats[c]
    return True


@callee_kernel
def values_versus_missing_proxy(
    n_values, n_missing, weight, missing_weight, total, missing_stats, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, left,
):  # fmt: skip
    """Proxy of the split "every value left, NaN right" (threshold ``+inf``), or ``-inf``.

    ``n_values`` / ``n_missing`` rows and ``weight - missing_weight`` / ``missing_weight``
    on the two sides; ``missing_stats`` holds the NaN rows' sweep statistics (its first
    ``n_sweep`` entries are read) and ``left`` is scratch. The single-output searches
    call :func:`values_versus_missing_single_output`, the same operations.

    A kernel, not inlined: it runs once per (node, feature) with NaN rows. Inlined, it was
    copied into each of its callers with :func:`criterion.split_proxy` inside. Every caller
    passes the row counts as int64.
    """
    if not values_versus_missing_sides(
        n_values, n_missing, weight, missing_weight, total, missing_stats, n_sweep,
        min_samples_leaf, min_weight_leaf, left,
    ):  # fmt: skip
        return NO_SPLIT
    return split_proxy(criterion, left, total, n_sweep, weight - missing_weight, missing_weight)


@inline_kernel
def values_versus_missing_single_output(
    n_values, n_missing, weight, missing_weight, total, missing_stats, n_sweep, criterion,
    min_samples_leaf, min_weight_leaf, left,
):  # fmt: skip
    """:func:`values_versus_missing_proxy` for a single-output criterion.

    The same operations (``split_proxy`` calls ``single_output_proxy`` for these criteria),
    without compiling the multi-output scores into the exact and histogram searches.
    """
    if not values_versus_missing_sides(
        n_values, n_missing, weight, missing_weight, total, missing_stats, n_sweep,
        min_samples_leaf, min_weight_leaf, left,
    ):  # fmt: skip
        return NO_SPLIT
    return single_output_proxy(
        criterion, left, total, n_sweep, weight - missing_weight, missing_weight
    )


@callee_kernel
def missing_tail_split(
    idx, codes, start, end_non_missing, end, contrib, sample_weight, unit_weight,
    unit_sample_weight, n_sweep, total, weight, criterion, min_samples_leaf, min_weight_leaf,
    missing_stats, left,
):  # fmt: skip
    """Score the NaN tail ``[end_non_missing, end)`` of a segment: its statistics and cut.

    Fills ``missing_stats[:n_sweep]`` (:func:`tail_stats`) and returns the tail's weight and
    the proxy of the cut "every value left, NaN right"
    (:func:`values_versus_missing_single_output`); ``left`` is scratch.

    A kernel, called for the (node, feature) pairs that hold NaN only: one copy per class
    code dtype serves every specialisation of :func:`best_splits_worker` (inlined, it was
    compiled into each of them, 0.5 s a copy).
    """
    missing_weight = tail_stats(
        idx, codes, end_non_missing, end, contrib, sample_weight, unit_weight,
        unit_sample_weight, n_sweep, missing_stats,
    )  # fmt: skip
    proxy = values_versus_missing_single_output(
        end_non_missing - start, end - end_non_missing, weight, missing_weight, total,
        missing_stats, n_sweep, criterion, min_samples_leaf, min_weight_leaf, left,
    )  # fmt: skip
    return missing_weight, proxy


@inline_kernel
def first_position_above(val, start, end, threshold):
    """First position of the sorted segment ``val[start:end]`` whose value exceeds ``threshold``.

    Binary search, O(log(end - start)); ``end`` if none does.
    """
    lo = start
    hi = end
    while lo < hi:
        mid = (lo + hi) >> 1
        if np.float64(val[mid]) <= threshold:
            lo = mid + 1
        else:
            hi = mid
    return lo


@callee_kernel
def random_split_in_segment(
    idx, val, codes, start, end, contrib, sample_weight, unit_weight, unit_sample_weight, total,
    weight, n_sweep, criterion, min_samples_leaf, min_weight_leaf, threshold, missing_go_left,
    left, missing_stats,
):  # fmt: skip
    """Score the drawn ``threshold`` of one feature for one node (``splitter="random"``).

    Parameters are those of :func:`prepare_sweep` and :func:`general_sweep` for the segment
    ``[start, end)``, whose NaN values form its tail (``missing_stats`` is scratch like
    ``left``), plus ``threshold`` (float64), drawn uniformly between the node's smallest and
    largest non-missing value of the feature, and ``missing_go_left``, the side drawn for
    the node's NaN rows (read only if it has some). As in scikit-learn, the cut "all values
    | NaN" is not scored separately.

    Returns
    -------
    proxy : float
        Score of the split, ``-inf`` if a child would break ``min_samples_leaf`` or
        ``min_weight_leaf`` (scikit-learn then drops the feature; it draws no second threshold).
    pos : int
        First non-missing position of the right child: values ``<= threshold`` go left.
    threshold : float
        The drawn threshold.
    missing : int
        ``missing_go_left`` if the node has NaN rows in this feature, else ``-1``.

    Notes
    -----
    The segment is sorted, so the cut is found by binary search, and the left statistics are
    summed over ``[start, pos)`` only. Cost: O(log(end - start) + pos - start + n_sweep +
    n_missing).
    """
    n_missing = count_missing(val, start, end)
    end_non_missing = end - n_missing
    missing = (1 if missing_go_left else 0) if n_missing > 0 else -1
    pos = first_position_above(val, start, end_non_missing, threshold)
    n_left = pos - start + (n_missing if missing == 1 else 0)
    if n_left < min_samples_leaf or end - start - n_left < min_samples_leaf:
        return NO_SPLIT, end, threshold, missing
    weight_left = 0.0
    if missing == 1:
        weight_left = tail_stats(idx, codes, end_non_missing, end, contrib, sample_weight,
                                 unit_weight, unit_sample_weight, n_sweep, left)  # fmt: skip
    else:
        for c in range(n_sweep):
            left[c] = 0.0
    for p in range(start, pos):
        left[codes[p]] += 1.0 if unit_weight else contrib[idx[p]]
        weight_left += 1.0 if unit_sample_weight else sample_weight[idx[p]]
    weight_right = weight - weight_left
    if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
        return NO_SPLIT, end, threshold, missing
    proxy = single_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right)
    return proxy, pos, threshold, missing


# Rows from which a fit uses the accelerators of the exact splitter: the block and screened
# sweeps (the general sweep's very proxies and splits, faster on large nodes). A smaller fit
# runs the general sweep, which compiles in a fraction of the time (the unit Gini sweep
# alone was about 2.6 s of a cold first fit), unless its classes make it slow there
# (``grow.takes_accelerators``).
ACCELERATE_MIN_ROWS = 1 << 16


def sweep_switches(accelerate):
    """Return which sweeps of :func:`best_splits_worker` a fit can reach (its switches).

    Each is True or None. Without ``accelerate`` (a fit below ``ACCELERATE_MIN_ROWS`` rows)
    every node takes the general sweep. With it, every sweep is switched on and the kernel
    picks one per node at run time, by the criterion, the weights and the node's weight (see
    the kernel): one specialisation serves every large fit. One per criterion family, each
    with its sweeps inlined, compiled as much again as the sweeps themselves, and the
    general and weighted entropy sweeps are kernels that the variants share.
    (``splitter="random"`` searches with :func:`random_splits_worker` instead.)

    Returns
    -------
    tuple
        ``unit_gini_search, unit_entropy_search, weighted_entropy_search, general_search``.
    """
    accelerated = True if accelerate else None
    return accelerated, accelerated, accelerated, True


@kernel
def best_splits_worker(
    queue,
    n_threads,
    nodes,
    candidate,
    node_start,
    node_end,
    node_stats,
    node_weight,
    sorted_idx,
    sorted_val,
    sorted_code,
    contrib,
    sample_weight,
    unit_weight,
    unit_sample_weight,
    xlogx,
    n_sweep,
    criterion,
    min_samples_leaf,
    min_weight_leaf,
    out_proxy,
    out_pos,
    out_threshold,
    out_missing,
    node_best,
    unit_gini_search,
    unit_entropy_search,
    weighted_entropy_search,
    general_search,
):
    """One thread's share of the best split of every (node, feature) pair of a batch.

    Called on ``n_threads`` threads at once (``threads.run_workers``), each claiming work
    items from ``queue`` until none is left: an item is feature ``f`` on a part of the
    batch's nodes (:func:`parts_of_batch`, one part per thread). With one thread, the
    features one after the other over the whole batch.

    For feature ``f`` and each node ``k`` of the part with ``candidate[k, f]`` (the caller
    fills ``out_proxy`` with ``NO_SPLIT`` first) it writes ``out_proxy[k, f]``,
    ``out_pos[k, f]`` and ``out_threshold[k, f]`` as :func:`general_sweep` returns
    them for node ``k``'s segment (``pos`` is the first non-missing position of the right
    child; the threshold is ``+inf`` for the split "every value | NaN"), ``out_missing[k, f]``
    where the node's NaN rows go: ``1`` left, ``0`` right, ``-1`` when it has none (the
    builder then sends NaN to the larger child). ``splitter="random"`` scores drawn
    thresholds with :func:`random_splits_worker` instead, over the same work items.

    ``node_best[k]`` is the best proxy reached so far by node ``k``'s other features
    (``shared_best``, shared with the threads searching them): each sweep starts its
    pre-test from it, and the proxy this feature reaches is offered back. So a feature that
    loses may report a lesser cut or none (``-inf``) in column ``f``; the winner of the
    builder's reduction over features (in feature order, afterwards), and its cut, are the
    same as without it: trees are bit-identical whatever the thread count.

    The ``*_search`` switches (True or None, :func:`sweep_switches`) say which sweeps a fit
    can reach: numba removes every branch on a None switch, so a fit compiles only its own
    sweep family. The NaN passes are compiled for every fit: a switch for them compiled
    each family twice, the large fits' with NaN 6.5 s more.

    Notes
    -----
    Missing values follow scikit-learn 1.9's ``node_split_best``. A node's NaN values are the
    tail of its segment. Without NaN in the node this is one sweep, as before missing values
    were supported. With NaN: a sweep with the NaN rows on the right, then the cut "all
    values left, NaN right" (threshold ``+inf``: ``NaN <= inf`` is false), then a sweep with
    the NaN rows on the left. A later candidate replaces the best only if strictly better,
    so ties go to NaN right, and within a sweep to the lowest threshold. The cut "NaN left,
    all values right" is not scored: it is the ``+inf`` cut mirrored. A feature whose
    non-missing values are all equal can still split them from the NaN rows; a feature that
    is all NaN in the node cannot split.

    One kernel over the batch's work items (see ``jit``): as a kernel of its own the
    per-node search was called once per (node, feature), and a kernel per feature under a
    serial and a threaded caller compiled three kernels per variant instead of one. The
    Gini sweep on row counts is inlined into it; the general sweep and both entropy sweeps
    are kernels it calls. The general sweep serves four of its specialisations (plain,
    NaN, two-byte class codes, weighted entropy), and inlined it was compiled into each of
    them; a call per (node, feature) cost nothing measurable (50,000 x 20, A/B). The Gini
    sweep as a kernel (with or without its block sweep as another) compiled faster but made
    Gini fits slower (10 classes, 200k x 20: 1.03-1.05x).
    The NaN handling and the choice of sweep are written here rather than in inline helpers
    because numba copies an inlined callee whole, scope included, block by block, at a cost
    that grows with the callee's blocks times its variables: a helper holding the NaN
    handling cost 3-4 s of this kernel's cold compile, and the copy of one holding the
    choice of sweep, with the four sweeps inlined into it, 5.9 s.

    Items dealt in a fixed pattern left the threads unequal by the items' costs (covtype's
    ten numeric columns cost from one to several times each other, its 44 sparse 0/1
    columns nearly nothing); two parts per thread were slower (1.01x on covtype).
    """
    # Scratch held in ``owned`` until the loop is done; the loop hands the sweeps
    # uncounted views (``borrow``) of it and of every array argument: counted ones cost a
    # reference-count update per node and array. The scratch alone (perf, 10 classes 1M x 20,
    # full depth): the runtime's count calls fell from 6.0 % to 3.6 % of the samples. The
    # arguments too, with the partition's (perf, Covertype, one thread, full depth):
    # from 3.2 % to 1.1 %; fit A/B 0.95-0.99x (20 pairs).
    owned = (
        np.empty(5 * n_sweep, dtype=np.float64),  # 5 x: weighted_entropy_sweep's caches
        np.empty(n_sweep, dtype=np.float64),
        np.empty((4, SWEEP_BLOCK), dtype=np.int64),
    )
    left, missing_stats, block = borrowed(owned)
    (nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
     sorted_code, contrib, sample_weight, xlogx, out_proxy, out_pos, out_threshold, out_missing,
     node_best) = borrowed((
        nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
        sorted_code, contrib, sample_weight, xlogx, out_proxy, out_pos, out_threshold,
        out_missing, node_best))  # fmt: skip
    cuts = parts_of_batch(nodes, node_start, node_end, n_threads)
    while True:
        f, first, stop = claim_feature_part(queue, cuts, sorted_idx.shape[0])
        if f < 0:
            break
        idx = sorted_idx[f]
        val = sorted_val[f]
        codes = sorted_code[f]
        for k in range(first, stop):
            if not candidate[k, f]:
                continue  # another search's column, or NO_SPLIT from the caller
            node = nodes[k]
            start = node_start[node]
            end = node_end[node]
            total = node_stats[node]
            weight = node_weight[node]
            n_missing = count_missing(val, start, end)
            end_non_missing = end - n_missing
            missing_weight, proxy_inf = 0.0, NO_SPLIT
            if n_missing > 0 and end_non_missing > start:
                missing_weight, proxy_inf = missing_tail_split(
                    idx, codes, start, end_non_missing, end, contrib, sample_weight,
                    unit_weight, unit_sample_weight, n_sweep, total, weight, criterion,
                    min_samples_leaf, min_weight_leaf, missing_stats, left,
                )  # fmt: skip
            proxy, pos, threshold, missing = NO_SPLIT, end, 0.0, -1
            # One call site of each sweep, run once without NaN rows and twice with them
            # (NaN right, then NaN left): three call sites compiled three copies of the
            # inlined sweeps. None when every value is NaN.
            n_passes = 0 if end_non_missing == start else (2 if n_missing > 0 else 1)
            for nan_pass in range(n_passes):
                pass_proxy, pass_pos, pass_threshold = NO_SPLIT, end_non_missing, 0.0
                # Constant feature in this node: scikit-learn skips it the same way.
                if val[end_non_missing - 1] > val[start] + FEATURE_THRESHOLD:
                    p, weight_left, min_left, min_right = prepare_sweep(
                        val, codes, start, end_non_missing, total, n_sweep, min_samples_leaf,
                        n_missing, nan_pass == 1, missing_stats, missing_weight, unit_weight,
                        left,
                    )  # fmt: skip
                    known_proxy = read_best(node_best, k)
                    # The sweeps are picked here, not in a helper of their own, so that each
                    # is copied once (see the Notes).
                    if (
                        unit_gini_search is not None
                        and unit_weight
                        and criterion == GINI
                        and weight < EXACT_SQUARES_LIMIT
                    ):
                        pass_proxy, pass_pos, pass_threshold = unit_gini_sweep(
                            val, codes, start, p, end_non_missing, total, weight, weight_left,
                            n_sweep, min_left, min_right, min_weight_leaf, left, known_proxy,
                            block,
                        )  # fmt: skip
                    elif unit_entropy_search is not None and unit_weight and xlogx.shape[0] > 0:
                        # entropy or gain ratio, rows
                        pass_proxy, pass_pos, pass_threshold = unit_entropy_sweep(
                            val, codes, start, p, end_non_missing, total, weight, weight_left,
                            n_sweep, min_left, min_right, min_weight_leaf, left,
                            NO_SPLIT if criterion == GAIN_RATIO else known_proxy, xlogx,
                        )  # fmt: skip
                    elif (
                        weighted_entropy_search is not None
                        and not unit_weight
                        and (criterion == ENTROPY or criterion == GAIN_RATIO)
                        and n_sweep >= WEIGHTED_ENTROPY_SCREEN_MIN_CLASSES
                        and mostly_distinct(val, p, end_non_missing)
                    ):
                        pass_proxy, pass_pos, pass_threshold = weighted_entropy_sweep(
                            idx, val, codes, start, p, end_non_missing, contrib, sample_weight,
                            total, weight, weight_left, n_sweep, min_left, min_right,
                            min_weight_leaf, left,
                            NO_SPLIT if criterion == GAIN_RATIO else known_proxy,
                        )  # fmt: skip
                    elif general_search is not None:
                        pass_proxy, pass_pos, pass_threshold = general_sweep(
                            idx, val, codes, start, p, end_non_missing, contrib, sample_weight,
                            unit_weight, unit_sample_weight, total, weight, weight_left,
                            n_sweep, criterion, min_left, min_right, min_weight_leaf, left,
                            known_proxy,
                        )  # fmt: skip
                if nan_pass == 0:
                    proxy, pos, threshold = pass_proxy, pass_pos, pass_threshold
                    if n_missing > 0:
                        missing = 0
                        if proxy_inf > proxy:
                            proxy, pos, threshold = proxy_inf, end_non_missing, np.inf
                elif pass_proxy > proxy:
                    proxy, pos, threshold, missing = pass_proxy, pass_pos, pass_threshold, 1
            offer_best(node_best, k, proxy)
            out_proxy[k, f] = proxy
            out_pos[k, f] = pos
            out_threshold[k, f] = threshold
            out_missing[k, f] = missing
    keep_alive(owned)


@kernel
def random_splits_worker(
    queue, n_threads, nodes, candidate, node_start, node_end, node_stats, node_weight,
    sorted_idx, sorted_val, sorted_code, contrib, sample_weight, unit_weight, unit_sample_weight,
    n_sweep, criterion, min_samples_leaf, min_weight_leaf, out_proxy, out_pos, out_threshold,
    out_missing,
):  # fmt: skip
    """One thread's share of the random splits of a batch (``splitter="random"``).

    The work items, arguments and outputs of :func:`best_splits_worker` (without the
    sweeps' switches, table and shared bests), but no feature is swept: on entry
    ``out_threshold[k, f]`` and ``out_missing[k, f]`` hold the threshold and NaN side drawn
    for node ``k``, and only that split is scored (:func:`random_split_in_segment`), which
    writes ``out_*[k, f]`` for every ``candidate[k, f]``.

    Notes
    -----
    A kernel of its own rather than a switch of :func:`best_splits_worker`: that
    specialisation compiled the worker's whole scaffolding (NaN passes, sweep set-up) for a
    loop that calls one kernel per item, and it draws nothing from ``node_best``.
    """
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (np.empty(n_sweep, dtype=np.float64), np.empty(n_sweep, dtype=np.float64))
    left, missing_stats = borrowed(owned)
    (nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
     sorted_code, contrib, sample_weight, out_proxy, out_pos, out_threshold,
     out_missing) = borrowed((
        nodes, candidate, node_start, node_end, node_stats, node_weight, sorted_idx, sorted_val,
        sorted_code, contrib, sample_weight, out_proxy, out_pos, out_threshold,
        out_missing))  # fmt: skip
    cuts = parts_of_batch(nodes, node_start, node_end, n_threads)
    while True:
        f, first, stop = claim_feature_part(queue, cuts, sorted_idx.shape[0])
        if f < 0:
            break
        idx = sorted_idx[f]
        val = sorted_val[f]
        codes = sorted_code[f]
        for k in range(first, stop):
            if not candidate[k, f]:
                continue  # another search's column, or NO_SPLIT from the caller
            node = nodes[k]
            proxy, pos, threshold, missing = random_split_in_segment(
                idx, val, codes, node_start[node], node_end[node], contrib, sample_weight,
                unit_weight, unit_sample_weight, node_stats[node], node_weight[node], n_sweep,
                criterion, min_samples_leaf, min_weight_leaf, out_threshold[k, f],
                out_missing[k, f] == 1, left, missing_stats,
            )  # fmt: skip
            out_proxy[k, f] = proxy
            out_pos[k, f] = pos
            out_threshold[k, f] = threshold
            out_missing[k, f] = missing
    keep_alive(owned)


@inline_kernel
def claim_feature_part(queue, cuts, n_features):
    """Claim the next work item of ``queue``: return ``f, first, stop`` (:func:`feature_part`).

    ``f`` is -1 when every item of the ``n_features`` features' parts has been claimed.
    """
    item = claim_item(queue)
    if item >= n_features * (cuts.shape[0] - 1):
        return np.int64(-1), np.int64(0), np.int64(0)
    return feature_part(item, cuts)


@inline_kernel
def feature_part(item, cuts):
    """Return ``f, first, stop``: item ``item`` is feature ``f`` on batch nodes ``[first, stop)``.

    Items number the parts of :func:`parts_of_batch` (cut positions ``cuts``) feature by
    feature, so consecutive items share a feature's arrays.
    """
    n_parts = cuts.shape[0] - 1
    return item // n_parts, cuts[item % n_parts], cuts[item % n_parts + 1]


@inline_kernel
def parts_of_batch(nodes, node_start, node_end, n_parts):
    """Cut a batch into ``n_parts`` runs of nodes of about equal rows; returns the cut positions.

    Part ``j`` is ``nodes[cuts[j]:cuts[j + 1]]``; a part may be empty (a batch of one node
    gives one part and empty ones), and each node lies in exactly one part.
    """
    total = 0
    for k in range(nodes.shape[0]):
        total += node_end[nodes[k]] - node_start[nodes[k]]
    cuts = np.empty(n_parts + 1, dtype=np.int64)
    cuts[0] = 0
    j = 1
    rows = 0
    for k in range(nodes.shape[0]):
        rows += node_end[nodes[k]] - node_start[nodes[k]]
        # Part j ends at the first node that takes the rows to j / n_parts of the total.
        while j < n_parts and rows * n_parts >= total * j:
            cuts[j] = k + 1
            j += 1
    while j <= n_parts:
        cuts[j] = nodes.shape[0]
        j += 1
    return cuts


@kernel
def partition_worker(queue, n_threads, nodes, node_start, node_end, split_feature, goes_left,
                     flip, left_size, sorted_idx, sorted_val, sorted_code, upkeep, row_bits,
                     max_segment, vector_blocks):  # fmt: skip
    """One thread's share of the stable partition of the split nodes' segments into left | right.

    Called on ``n_threads`` threads at once (``threads.run_workers``); the work items are
    those of :func:`best_splits_worker` (feature ``f`` on a part of the nodes), claimed as
    threads come free, and with one thread the features one after the other. An item writes
    only its own segments; each call owns its scratch buffers (allocated once, not per item).

    A sample of node ``k`` goes left when its flag in ``goes_left`` differs from ``flip[k]``:
    with ``flip[k] == 0`` the flags mark the left child, with 1 the right one (the builder
    may mark only the smaller child, see ``grow.apply_splits``). ``left_size[k]`` is the
    number of samples that go left: every feature's segment holds the node's samples, so it
    is the left child's size for all of them.

    Notes
    -----
    Each sample is written once, to its place in the scratch buffers: the left cursor starts
    at 0, the right one at ``left_size[k] + STORE_SLACK`` (the vector blocks write past the
    rows they keep, see ``simd``; the scratch has ``PARTITION_SCRATCH_SLACK`` positions more
    than the largest segment). Both parts are then copied back, one array at a time, reading
    and writing in order. Stability keeps each child's segment sorted. The split feature
    itself is already partitioned: its left child is the first ``pos - start`` positions by
    construction. (Compacting the left samples in place and parking the right ones in the
    scratch, as before, wrote every sample twice, to both places, then the right ones a
    third time. One write per sample took 0.73-0.88x the time in isolation, 581k rows in
    segments of 50 to 20,000, and Covertype's partition about 0.82x in a profile of its
    fit.) ``vector_blocks``: where it is true and ``simd.USE_COMPRESS`` holds (AVX-512), the
    whole blocks of 16 rows go through ``simd.partition_block`` (compress, the same result)
    and only the tail row by row: the loop 0.41-0.58x the time (Intel Xeon, with compress
    stores to memory); a Covertype fit on one thread 0.88x (AMD Zen 4, compress into a
    register, paired median of 8; with compress stores to memory it had been 2.07x). The
    builder passes True for every fit: the block loop is compiled into this kernel either
    way (a switch was a specialisation of its own), and fits of 500 to 60,000 rows took
    0.93-0.98x the row loop's time with it (20 features, full depth). False (the row loop
    alone) is for tests.

    A feature that is constant in a node (no NaN, ``max <= min + FEATURE_THRESHOLD``: the
    searches' own test) is constant in every descendant, and no search reads more of such a
    segment than that test. So its segment is not partitioned: each child's part then holds
    ids of both children (stale, never read) but values from the same constant range, so the
    test still holds for the child and the feature stays skipped below it. On data with many
    sparse 0/1 columns (covtype's 44) most columns are constant in most nodes after a few
    levels, and the partition was half of the fit. ``upkeep[f]`` says what feature ``f``
    gets: ``UPKEEP_UNLESS_CONSTANT`` the above; ``UPKEEP_ALWAYS`` a partition even where it is
    constant, for the feature whose segments are read as the nodes' row sets
    (``sweep_absolute_error.rank_targets``, ``sweep_two_valued``); ``UPKEEP_NEVER`` nothing, for the
    features ``sweep_two_valued`` searches without their segments. The rows of ``row_bits``
    follow the ``UPKEEP_ALWAYS`` feature's positions and move with them. That path is
    compiled into every specialisation and taken where ``row_bits`` has columns: as a switch
    it was a specialisation of its own (about 1.3 s of CPU) for about 0.4 s of code.
    """
    # Scratch held in ``owned`` until the loop is done; the loop passes uncounted views.
    owned = (
        np.empty(max_segment + PARTITION_SCRATCH_SLACK, dtype=np.int32),
        np.empty(max_segment + PARTITION_SCRATCH_SLACK, dtype=np.float32),
        np.empty(max_segment + PARTITION_SCRATCH_SLACK, dtype=sorted_code.dtype),
        np.empty((max_segment, row_bits.shape[1]), dtype=row_bits.dtype),
    )
    scratch_idx, scratch_val, scratch_code, scratch_bits = borrowed(owned)
    # Uncounted views (``borrow``): the loop below passes arrays to inlined helpers per node.
    (nodes, node_start, node_end, split_feature, goes_left, flip, left_size, sorted_idx,
     sorted_val, sorted_code, upkeep, row_bits) = borrowed((
        nodes, node_start, node_end, split_feature, goes_left, flip, left_size, sorted_idx,
        sorted_val, sorted_code, upkeep, row_bits))  # fmt: skip
    cuts = parts_of_batch(nodes, node_start, node_end, n_threads)
    while True:
        f, first, stop = claim_feature_part(queue, cuts, sorted_idx.shape[0])
        if f < 0:
            break
        if upkeep[f] == UPKEEP_NEVER:
            continue
        idx = sorted_idx[f]
        val = sorted_val[f]
        codes = sorted_code[f]
        for k in range(first, stop):
            node = nodes[k]
            if split_feature[k] == f:
                continue
            start = node_start[node]
            end = node_end[node]
            if upkeep[f] != UPKEEP_ALWAYS and val[end - 1] <= val[start] + FEATURE_THRESHOLD:
                continue
            flip_k = np.uint64(flip[k])
            n_left = np.uint64(left_size[k])
            if row_bits.shape[1] > 0 and upkeep[f] == UPKEEP_ALWAYS:
                partition_rows(idx, start, end, goes_left, flip_k, n_left, row_bits, scratch_bits)
            # Unsigned positions and cursors (see "Unsigned positions" in jit).
            to_left = np.uint64(0)
            right_part = n_left + np.uint64(STORE_SLACK)
            to_right = right_part
            first = np.uint64(start)
            if USE_COMPRESS and vector_blocks:
                # 16 rows at a time with compress (``simd``), the same order and result.
                while first + np.uint64(BLOCK) <= np.uint64(end):
                    n_block_left = partition_block(
                        idx, val, codes, first, goes_left, flip_k, scratch_idx, scratch_val,
                        scratch_code, to_left, to_right,
                    )  # fmt: skip
                    to_left += n_block_left
                    to_right += np.uint64(BLOCK) - n_block_left
                    first += np.uint64(BLOCK)
            for p in range(first, np.uint64(end)):
                i = idx[p]
                go = np.uint64(side_flag(goes_left, i)) ^ flip_k
                # A select, not a branch (the goes_left pattern is random: a branch would
                # mispredict half the time). Written as arithmetic on the cursors it was slower.
                w = to_left if go else to_right
                scratch_idx[w] = i
                scratch_val[w] = val[p]
                scratch_code[w] = codes[p]
                to_left += go
                to_right += np.uint64(1) - go
            # One array at a time: each copy is a plain sequential one.
            n_right = np.uint64(end - start) - n_left
            copy_parts_back(idx, start, scratch_idx, n_left, right_part, n_right)
            copy_parts_back(val, start, scratch_val, n_left, right_part, n_right)
            copy_parts_back(codes, start, scratch_code, n_left, right_part, n_right)
    keep_alive(owned)


# Positions the partition's scratch buffers hold beyond the largest segment: the free
# positions after each part (``STORE_SLACK``).
PARTITION_SCRATCH_SLACK = 2 * STORE_SLACK


@inline_kernel
def copy_rows(src, first, stop, dst, at):
    """Copy ``src[first:stop]`` to ``dst[at:]``; returns the position after the last copied.

    The positions may be signed or unsigned; the loop indexes unsigned (see "Unsigned
    positions" in ``jit``: the partition copies back every row it moves), and the result
    is an int64.
    """
    begin = np.uint64(first)
    to = np.uint64(at)
    n = np.uint64(stop) - begin if stop > first else np.uint64(0)
    for q in range(n):  # one counter for both arrays: a plain sequential copy
        dst[to + q] = src[begin + q]
    return np.int64(to + n)


@inline_kernel
def copy_parts_back(out, start, scratch, n_left, right_part, n_right):
    """Copy the partition's two parts from ``scratch`` to ``out[start:]``, left then right.

    The left part is ``scratch[:n_left]``, the right one ``n_right`` positions from
    ``right_part`` (uint64 positions; ``start`` an int64).
    """
    at = copy_rows(scratch, np.uint64(0), n_left, out, start)
    copy_rows(scratch, right_part, right_part + n_right, out, at)


@inline_kernel
def partition_rows(idx, start, end, goes_left, flip, n_left, rows, scratch):
    """Stable partition of the rows ``rows[start:end]`` by the side of the ids ``idx[start:end]``.

    Sides as in :func:`partition_worker`, ``flip`` (uint64) being the node's and ``n_left``
    (uint64) the number of ids that go left.

    Run before ``idx`` itself is partitioned; the same one write per row as
    :func:`partition_worker`, a row of ``rows.shape[1]`` words at a time.
    """
    to_left = np.uint64(0)
    to_right = n_left
    offset = np.uint64(start)
    if rows.shape[1] == 1:
        # One word per row (up to 64 two-valued features, covtype's 44): a loop over the
        # words of a row cost twice this one.
        for p in range(np.uint64(start), np.uint64(end)):
            go = np.uint64(side_flag(goes_left, idx[p])) ^ flip
            w = to_left if go else to_right
            scratch[w, 0] = rows[p, 0]
            to_left += go
            to_right += np.uint64(1) - go
        for q in range(np.uint64(end - start)):
            rows[offset + q, 0] = scratch[q, 0]
        return
    for p in range(np.uint64(start), np.uint64(end)):
        go = np.uint64(side_flag(goes_left, idx[p])) ^ flip
        w = to_left if go else to_right
        for b in range(rows.shape[1]):
            scratch[w, b] = rows[p, b]
        to_left += go
        to_right += np.uint64(1) - go
    for q in range(np.uint64(end - start)):
        for b in range(rows.shape[1]):
            rows[offset + q, b] = scratch[q, b]


@kernel
def renumber_samples(sorted_idx, row_feature, upkeep, code, contrib, sample_weight, y):
    """Give each sample the id of its position in feature ``row_feature``'s order.

    Rewrites ``sorted_idx`` in place (every feature whose ``upkeep`` is not
    ``UPKEEP_NEVER``: the others' rows are not ids) and returns ``code, contrib,
    sample_weight, y`` reordered to the new ids (``y`` only if it has one entry per sample).
    Positions, values and codes do not move, so the sweeps and partitions that follow see the
    same segments in the same order and sum the same numbers in the same order.

    Notes
    -----
    Every open node owns one segment ``[start, end)`` of positions, the same for all
    features, so afterwards its samples, and all its descendants', have ids in
    ``[start, end)``. The sweep's reads of ``contrib[i]`` and ``sample_weight[i]`` then stay
    inside that window instead of spreading over the whole array, and a deep node's window
    fits in the cache. Cost O(n_features * n_samples), one random read per (feature, row)
    into the id map.
    """
    n_samples = sorted_idx.shape[1]
    rows = sorted_idx[row_feature]
    new_id = np.empty(n_samples, dtype=np.int32)
    new_code = np.empty_like(code)
    new_contrib = np.empty_like(contrib)
    new_weight = np.empty_like(sample_weight)
    has_y = y.shape[0] == n_samples
    new_y = np.empty_like(y) if has_y else y.copy()
    for p in range(n_samples):
        i = rows[p]
        new_id[i] = p
        new_code[p] = code[i]
        new_contrib[p] = contrib[i]
        new_weight[p] = sample_weight[i]
        if has_y:
            new_y[p] = y[i]
    for f in range(sorted_idx.shape[0]):
        if upkeep[f] == UPKEEP_NEVER:
            continue
        ids = sorted_idx[f]
        for p in range(n_samples):
            ids[p] = new_id[ids[p]]
    return new_code, new_contrib, new_weight, new_y


RADIX_BITS = 11
RADIX_PASSES = 3  # 3 x 11 bits cover a 32-bit key
# Fewer rows are presorted by numpy (:func:`presort_small`): at this size its sort costs
# well under a millisecond per column, and a small fit does not compile the radix sort.
PRESORT_KERNEL_MIN_ROWS = 1 << 12
# The NaN of a sorted column: value_of_key's for the largest key.
SORTED_NAN = np.uint32(0x7FFFFFFF).view(np.float32)


@inline_kernel
def sortable_key(x):
    """Map a float32 to a uint32 whose unsigned order is the float order (NaN last).

    Notes
    -----
    Positive floats keep their bits with the sign bit set; negative floats have all bits
    flipped. ``-0.0`` is mapped to ``0.0`` first, so equal values get equal keys and the
    stable sort keeps them in sample order, exactly like ``np.argsort(kind="stable")``.
    Every NaN, whatever its sign bit and payload, gets the largest key: the NaN values of a
    sorted segment are its tail, which the split search relies on.
    """
    if x != x:
        return np.uint32(0xFFFFFFFF)
    if x == 0.0:
        x = np.float32(0.0)
    bits = np.uint32(np.float32(x).view(np.uint32))
    if bits & np.uint32(0x80000000):
        return ~bits
    return bits | np.uint32(0x80000000)


@inline_kernel
def value_of_key(key):
    """Return the float32 whose :func:`sortable_key` is ``key`` (-0.0 gives 0.0, NaN a NaN)."""
    if key & np.uint32(0x80000000):
        bits = key ^ np.uint32(0x80000000)
    else:
        bits = ~key
    return np.uint32(bits).view(np.float32)


@callee_kernel
def presort_column(x, out_idx, out_val, entries, tmp_entries):
    """Write the stable ascending order of ``x`` (float32) and the sorted values.

    Notes
    -----
    LSD radix sort on 32-bit order-preserving keys, three passes of 11 bits: O(n) per column
    and stable, so tied values stay in sample order and the build is reproducible. It is
    several times faster than a comparison sort at 10^5-10^6 rows. ``entries`` and
    ``tmp_entries`` are uint64 scratch buffers of ``len(x)`` entries.

    Each entry packs a key (high half) with its sample id (low half), so a scatter moves
    one 8-byte word instead of a key and an id from two arrays: 1.2-1.5x faster per
    column than separate arrays (covtype's columns and random floats, 465k rows).

    A pass whose digit is the same for every key would move nothing, so it is skipped,
    count included: the bits in which keys differ are the OR of the keys XOR their AND,
    taken as the keys are built. Columns of small integers stored as float32 (covtype's:
    their low mantissa bits are zero) skip one or two of their three passes. Skipping only
    the scatter, after a count whose every increment hit one counter (a chain through
    memory), took 1.28x the time on covtype's ten columns (77 against 60 ms); random floats
    are unchanged. Counting the three histograms in one pass was tried: 1.2x slower on
    random floats (three scattered increments per key).
    """
    n = x.shape[0]
    key_or = np.uint64(0)
    key_and = np.uint64(0xFFFFFFFF)
    for i in range(n):
        key = np.uint64(sortable_key(x[i]))
        key_or |= key
        key_and &= key
        entries[i] = (key << np.uint64(32)) | np.uint64(i)
    varying = (key_or ^ key_and) << np.uint64(32)  # in the entries' key half
    counts = np.empty(1 << RADIX_BITS, dtype=np.uint64)
    mask = np.uint64((1 << RADIX_BITS) - 1)
    src, dst = entries, tmp_entries
    for r in range(RADIX_PASSES):
        shift = np.uint64(32 + r * RADIX_BITS)
        if (varying >> shift) & mask == np.uint64(0):
            continue
        counts[:] = 0
        for i in range(n):
            counts[(src[i] >> shift) & mask] += np.uint64(1)
        total = np.uint64(0)
        for d in range(1 << RADIX_BITS):
            c = counts[d]
            counts[d] = total
            total += c
        for i in range(n):
            entry = src[i]
            d = (entry >> shift) & mask
            dst[counts[d]] = entry
            counts[d] += np.uint64(1)
        src, dst = dst, src
    # Ids and values from the sorted entries, read in order (not gathered through the ids):
    # x is not read again, so it may be out_val itself.
    for p in range(n):
        entry = src[p]
        out_idx[p] = np.int32(entry & np.uint64(0xFFFFFFFF))
        out_val[p] = value_of_key(np.uint32(entry >> np.uint64(32)))


@kernel
def copy_columns(X, columns, start, end, out):
    """Copy rows ``start .. end - 1`` of the ``columns`` of ``X`` to ``out[f, start:end]``.

    One pass over those rows of X: a column at a time would read a cache line per value,
    i.e. all of X once per column (1M x 20: 20 passes over 80 MB). The column is unsigned
    so that numba drops the negative-index wraparound on both arrays: 0.70x the time on
    1M x 20 random floats, 0.83x on covtype (see "Unsigned positions" in ``jit``).
    """
    for i in range(start, end):
        for k in range(columns.shape[0]):
            f = np.uint64(columns[k])
            out[f, i] = X[i, f]


@kernel
def sort_columns(columns, sorted_idx, sorted_val, queue):
    """Sort the rows ``sorted_val[f]`` of ``columns`` in place; their orders go to ``sorted_idx``.

    The columns are claimed one at a time from ``queue`` (``work_queue``): called on several
    threads with one queue, the threads share them; called alone with a fresh queue, it
    sorts them all. One set of scratch buffers serves all of a caller's
    columns (see :func:`presort_column`).
    """
    n_samples = sorted_val.shape[1]
    entries = np.empty(n_samples, dtype=np.uint64)
    tmp_entries = np.empty(n_samples, dtype=np.uint64)
    k = claim_item(queue)
    while k < columns.shape[0]:
        f = columns[k]
        presort_column(sorted_val[f], sorted_idx[f], sorted_val[f], entries, tmp_entries)
        k = claim_item(queue)


def presort(X, skip, n_threads):
    """Sort every column of ``X`` but those with ``skip[f]`` set.

    ``X`` is float32 in C order. Returns ``sorted_idx, sorted_val`` of shape
    ``(n_features, n_samples)``: each feature's stable ascending order (int32) and its sorted
    values (float32), computed on ``n_threads`` threads when the work pays for them. The rows
    of skipped features are uninitialised (the two-valued columns of ``sweep_two_valued``,
    which nothing reads there).

    Notes
    -----
    The outputs are allocated here, by numpy, rather than in a kernel: numpy asks the kernel
    for transparent huge pages on large arrays (``madvise``), numba's allocator does not,
    and the sort's first writes then fault 2 MB at a time instead of 4 kB. Sorting covtype's
    ten numeric columns on one thread took 50-57 ms into numpy's arrays, 75-79 ms into the
    kernel's.
    """
    n_samples, n_features = X.shape
    columns = np.flatnonzero(skip == 0).astype(np.int64)
    sorted_idx = np.empty((n_features, n_samples), dtype=np.int32)
    sorted_val = np.empty((n_features, n_samples), dtype=np.float32)
    if n_samples < PRESORT_KERNEL_MIN_ROWS:
        presort_small(X, columns, sorted_idx, sorted_val)
    else:
        n_threads = n_threads if X.size >= PARALLEL_MIN_WORK else 1
        # The columns are first copied by blocks of rows, so X is read once in all: each
        # thread picking its own columns out of every row read all of X per thread, and the
        # two threads then competed for memory bandwidth. Then the threads claim the columns
        # one at a time as they come free (``sort_columns``): a column costs one to three
        # radix passes, so columns dealt in a fixed pattern left one thread waiting.
        run_concurrently([
            functools.partial(copy_columns, X, columns, first, stop, sorted_val)
            for first, stop in even_ranges(n_samples, n_threads)
        ])  # fmt: skip
        queue = np.zeros(1, dtype=np.int64)  # new_work_queue's counter, made here
        run_concurrently(
            [functools.partial(sort_columns, columns, sorted_idx, sorted_val, queue)] * n_threads
        )
    return sorted_idx, sorted_val


def presort_small(X, columns, sorted_idx, sorted_val):
    """:func:`presort` of a small ``X`` by numpy, into the rows ``columns`` of the outputs.

    The kernels' very result: numpy's stable sort puts every NaN last and keeps ``-0.0``
    and ``0.0`` in sample order, and the values are stored as :func:`value_of_key` gives
    them back (``-0.0`` as ``0.0``, every NaN as one NaN).
    """
    values = np.ascontiguousarray(X[:, columns].T)
    order = np.argsort(values, axis=1, kind="stable")
    values = np.take_along_axis(values, order, axis=1)
    values[values == 0.0] = 0.0
    values[np.isnan(values)] = SORTED_NAN
    sorted_idx[columns] = order
    sorted_val[columns] = values


@kernel
def sorted_codes(sorted_idx, code, skip, start, end, out):
    """Write each feature's sweep codes in its sorted order: ``out[f, p] = code[sorted_idx[f, p]]``.

    Positions ``start .. end - 1`` of every feature but those with ``skip[f]`` set (not
    presorted), which are left out.

    Notes
    -----
    Kept next to the sorted values and moved by the same partition, so the sweep reads the
    class of each sample sequentially instead of gathering it (a cache miss per sample once
    the label array outgrows the cache: measured ~30 ns vs ~14 ns per sample step). ``out``
    is uint8 or uint16 (see the estimator's ``_sorted_codes``).
    """
    for f in range(sorted_idx.shape[0]):
        if skip[f]:
            continue
        for p in range(start, end):
            # Unsigned id: no wraparound test per gather (0.84-0.87x the time).
            out[f, p] = code[np.uint64(sorted_idx[f, p])]


@inline_kernel
def rand_below(rng_state, n):
    """Draw an integer in ``[0, n)`` from a xorshift64* generator held in ``rng_state[0]``.

    Notes
    -----
    The state is an explicit array seeded from ``random_state`` in Python, so builds are
    reproducible and independent of numba's global generator. Draws happen only on the
    fit's own thread, never in a threaded step.
    """
    x = rng_state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng_state[0] = x
    return np.int64((x * np.uint64(2685821657736338717)) >> np.uint64(33)) % n


@inline_kernel
def rand_uniform(rng_state, low, high):
    """Draw a float64 in ``[low, high)`` from the generator of :func:`rand_below`.

    Notes
    -----
    ``low + (high - low) * u`` with ``u`` a multiple of ``2**-31`` in ``[0, 1)`` (the 31 bits
    :func:`rand_below` produces), as scikit-learn's ``rand_uniform``; rounding can give
    ``high`` itself, which the caller maps back to ``low`` as scikit-learn does.
    """
    u = np.float64(rand_below(rng_state, np.int64(1 << 31))) / np.float64(1 << 31)
    return (high - low) * u + low


@callee_kernel
def presorted_constant_features(start, end, sorted_val, out):
    """Mark the features constant on the segment ``[start, end)``: ``out[f] = 1``.

    Notes
    -----
    Constant means ``max <= min + FEATURE_THRESHOLD`` (float32), scikit-learn's test, over
    the non-missing values and only if there is no NaN; a feature that is all NaN in the
    segment is constant too (scikit-learn 1.9). NaN sorts last, so ``max`` is the last
    non-NaN value.
    """
    for f in range(sorted_val.shape[0]):
        val = sorted_val[f]
        if np.isnan(val[end - 1]):
            out[f] = np.isnan(val[start])  # NaN rows can be split from the others
        else:
            out[f] = val[end - 1] <= val[start] + FEATURE_THRESHOLD


@callee_kernel
def draw_candidate_features(f_order, max_features, constant, rng_state, out_candidate):
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
    constant : ndarray of uint8, shape (n_features,)
        1 for the features constant in the node (only read when drawing).
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
        if constant[f]:
            n_constant += 1
        else:
            out_candidate[f] = 1
