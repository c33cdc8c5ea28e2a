"""Traversal kernels: rows of X walk from the root to a leaf.

Inputs reach these kernels as float32, C-contiguous, writeable arrays (the estimator layer
converts block by block), so each kernel compiles once per node layout (see
:func:`pack_nodes`; the compact layout is the usual one, the wide one exists only for trees
too big for it).

Each kernel also checks the rows it routes for NaN and infinity, block by block right after
walking them (while they are still in the cache), and reports what it found: the caller
raises. That check replaces scikit-learn's separate whole-array scan.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from ._jit import TREE_LEAF, inline_kernel, kernel, parallel_kernel

# Rows per parallel task: large enough that scheduling is negligible, small enough (about
# 4096 x 20 float32 = 320 KB) that a task's rows stay in L2 between the scan and the walk.
ROWS_PER_TASK = 4096

# Rows walked in lock-step by one thread: their independent memory accesses overlap, hiding
# the latency of each node lookup (measured on 1M rows, 26k nodes: 4 rows 63 ms, 8 rows
# 48 ms, 16 rows 82 ms). The eight lanes are written out as scalar variables in
# :func:`walk_group`, so they live in registers (see there).
ROWS_IN_FLIGHT = 8

# What the scan of a block found (the kernels return the worst of their blocks).
ROWS_FINITE = 0
ROWS_HAVE_NAN = 1
ROWS_HAVE_INF = 2

# A node in 8 bytes: the float32 threshold, and ``left << shift | feature << 1 | nan_right``
# in one uint32. Half the 16 bytes of separate float64/int32 fields: twice as many nodes per
# cache line and the whole of a 100k-node tree in L2 (measured 1.4x faster on a 74k-node
# tree, 10M rows). ``right == left + 1`` is an invariant of breadth-first storage, so no
# right child is stored. Leaves are self-loops (threshold +inf, left = the leaf itself), so
# a row that reached its leaf stays there and rows can walk in lock-step without exits.
COMPACT_NODE_DTYPE = np.dtype([("threshold", np.float32), ("packed", np.uint32)])
# The same fields, with 64 bits of packing, for trees whose node count times feature count
# does not fit in 32 bits (e.g. 100k features and 64k nodes). Same kernel source; numba
# compiles it a second time, only for users who need it.
WIDE_NODE_DTYPE = np.dtype(
    [("threshold", np.float32), ("unused", np.uint32), ("packed", np.uint64)]
)


class PackedTree(NamedTuple):
    """A tree in the form the traversal kernels read (see :func:`pack_nodes`)."""

    nodes: np.ndarray
    shift: int
    feature_mask: int


def round_down_to_float32(threshold: np.ndarray) -> np.ndarray:
    """Return the largest float32 ``<=`` each float64 threshold.

    For every float32 ``x``, ``x > t32`` holds exactly when ``x > t``: the next float32
    above ``t32`` is already above ``t``. Comparisons on float32 rows stay exact.
    """
    with np.errstate(over="ignore"):  # beyond float32's range: rounded to +-inf, fixed below
        t32 = threshold.astype(np.float32)
    above = t32.astype(np.float64) > threshold
    t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
    return t32


def pack_nodes(
    feature: np.ndarray,
    threshold: np.ndarray,
    left: np.ndarray,
    missing_left: np.ndarray,
    n_features: int,
    *,
    wide: bool = False,
) -> PackedTree:
    """Pack a breadth-first tree's arrays into 8-byte (or, if needed, 16-byte) records.

    Parameters
    ----------
    feature, threshold, left, missing_left : ndarray
        The tree's arrays (``left == -1`` at leaves).
    n_features : int
        Number of columns of the rows to route.
    wide : bool, default=False
        Use the 16-byte layout even when the compact one fits (for tests).

    Returns
    -------
    PackedTree
        ``nodes`` (``COMPACT_NODE_DTYPE`` or ``WIDE_NODE_DTYPE``), and ``shift`` /
        ``feature_mask`` to decode ``packed``: ``left = packed >> shift``,
        ``feature = (packed >> 1) & feature_mask``, ``nan_right = packed & 1``.
    """
    n_nodes = len(left)
    feature_bits = max(int(n_features) - 1, 0).bit_length()
    shift = feature_bits + 1
    wide = wide or (max(n_nodes - 1, 0) >> (32 - shift)) > 0
    is_leaf = left == TREE_LEAF
    own_id = np.arange(n_nodes, dtype=np.uint64)
    child = np.where(is_leaf, own_id, left.astype(np.uint64))
    column = np.where(is_leaf, 0, feature).astype(np.uint64)
    nan_right = np.where(is_leaf, 0, 1 - missing_left.astype(np.int64)).astype(np.uint64)
    nodes = np.zeros(n_nodes, dtype=WIDE_NODE_DTYPE if wide else COMPACT_NODE_DTYPE)
    nodes["threshold"] = np.where(is_leaf, np.float32(np.inf), round_down_to_float32(threshold))
    nodes["packed"] = (child << np.uint64(shift)) | (column << np.uint64(1)) | nan_right
    return PackedTree(nodes, shift, (1 << feature_bits) - 1)


@inline_kernel
def classify_rows(X, start, stop):
    """Return ``ROWS_FINITE``, ``ROWS_HAVE_NAN`` or ``ROWS_HAVE_INF`` for rows [start, stop)."""
    found = ROWS_FINITE
    for i in range(start, stop):
        for j in range(X.shape[1]):
            if np.isinf(X[i, j]):
                return ROWS_HAVE_INF
            if X[i, j] != X[i, j]:
                found = ROWS_HAVE_NAN
    return found


@inline_kernel
def rows_all_finite(bits, n_columns, start, stop):
    """Return True if rows [start, stop) of ``bits`` (X as flat uint32) hold no NaN or inf.

    Notes
    -----
    A float32 is NaN or infinite exactly when its 8 exponent bits are all ones. Testing the
    bits is integer work that the compiler vectorises (a float test cannot be, without
    fastmath), and the rows were just walked, so they are in the cache.
    """
    exponent = np.uint32(0x7F800000)
    carry = np.uint32(0x00800000)
    special = np.uint32(0)
    # An index loop over the slice: its index is provably non-negative, so there is no
    # wraparound test and LLVM vectorises the OR reduction. Iterating the slice itself
    # ("for word in words") runs 5x slower (4 vs 21 G words/s measured).
    words = bits[start * n_columns : stop * n_columns]
    for i in range(words.shape[0]):
        special |= (words[i] & exponent) + carry
    return (special & np.uint32(0x80000000)) == 0


@inline_kernel
def column_of(record, feature_mask):
    """Feature index tested at a packed node (a record, passed without its array)."""
    return (np.int64(record["packed"]) >> 1) & feature_mask


@inline_kernel
def child_of(x, record, shift, with_nan):
    """Node a value ``x`` moves to from a packed node (leaves map to themselves).

    Notes
    -----
    No array arguments: a helper receiving arrays pays reference-count updates on every
    call, even inlined (measured 5x slower); a record element is a plain pointer. NaN
    compares false, so it goes left unless the node's ``nan_right`` bit is set; callers pass
    a literal ``with_nan``, so rows known to hold no NaN run without that test (it costs
    13 % on deep trees).
    """
    packed = np.int64(record["packed"])
    right = np.int64(x > record["threshold"])
    if with_nan:
        right |= packed & np.int64(x != x)
    return (packed >> shift) + right


@inline_kernel
def walk_group(X, i, last, nodes, shift, feature_mask, with_nan):
    """Return the leaves reached by rows ``i .. i + 7`` (capped at row ``last``).

    Notes
    -----
    The eight rows advance one level per sweep until all of them stand still (their leaves
    are self-loops). The lanes are eight scalar variables, written out rather than indexed:
    LLVM keeps them in registers, where an array of lanes goes through memory on every step
    (measured 2.3x faster on a depth-10 tree, 1.3x on a 70k-node tree, 4M rows). Lanes past
    ``last`` repeat the last row, so every group runs the same straight-line code.
    """
    r0, r1, r2, r3 = i, min(i + 1, last), min(i + 2, last), min(i + 3, last)
    r4, r5, r6, r7 = min(i + 4, last), min(i + 5, last), min(i + 6, last), min(i + 7, last)
    c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = np.int64(0)
    moved = True
    while moved:
        n0 = child_of(X[r0, column_of(nodes[c0], feature_mask)], nodes[c0], shift, with_nan)
        n1 = child_of(X[r1, column_of(nodes[c1], feature_mask)], nodes[c1], shift, with_nan)
        n2 = child_of(X[r2, column_of(nodes[c2], feature_mask)], nodes[c2], shift, with_nan)
        n3 = child_of(X[r3, column_of(nodes[c3], feature_mask)], nodes[c3], shift, with_nan)
        n4 = child_of(X[r4, column_of(nodes[c4], feature_mask)], nodes[c4], shift, with_nan)
        n5 = child_of(X[r5, column_of(nodes[c5], feature_mask)], nodes[c5], shift, with_nan)
        n6 = child_of(X[r6, column_of(nodes[c6], feature_mask)], nodes[c6], shift, with_nan)
        n7 = child_of(X[r7, column_of(nodes[c7], feature_mask)], nodes[c7], shift, with_nan)
        moved = (
            (n0 != c0) | (n1 != c1) | (n2 != c2) | (n3 != c3)
            | (n4 != c4) | (n5 != c5) | (n6 != c6) | (n7 != c7)
        )  # fmt: skip
        c0, c1, c2, c3, c4, c5, c6, c7 = n0, n1, n2, n3, n4, n5, n6, n7
    return c0, c1, c2, c3, c4, c5, c6, c7


@inline_kernel
def walk_rows(X, start, stop, nodes, shift, feature_mask, payload, out, with_nan):
    """Write ``payload[leaf]`` for each row ``i`` in ``[start, stop)`` into ``out[i]``."""
    last = stop - 1
    for i in range(start, stop, ROWS_IN_FLIGHT):
        leaves = walk_group(X, i, last, nodes, shift, feature_mask, with_nan)
        # Lanes past the block's end repeat its last row: writing their (equal) result to
        # out[last] again is harmless and keeps this free of width tests.
        for k in range(ROWS_IN_FLIGHT):
            row = min(i + k, last)
            for w in range(payload.shape[1]):
                out[row, w] = payload[leaves[k], w]


@kernel
def route_block(X, start, stop, nodes, shift, feature_mask, payload, out, allow_nan):
    """Route rows ``[start, stop)`` of ``X``, checking them for NaN and infinity on the way.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Rows to route.
    start, stop : int
        The block of rows.
    nodes : ndarray of COMPACT_NODE_DTYPE or WIDE_NODE_DTYPE
        The packed tree; ``shift`` and ``feature_mask`` decode it (see :func:`pack_nodes`).
    payload : ndarray of int64, shape (n_nodes, width), C order
        What to write for a row reaching each node: node ids, class labels, or float64
        values (means, class fractions) reinterpreted as int64 (the kernel only copies the
        8 bytes). Writing them here, by the thread that found the leaf, replaces a second
        gather pass over the output (``np.take`` of 10M x 10 fractions: 0.17 s).
    out : ndarray of int64, shape (n_samples, width), C order
        Written at rows ``[start, stop)``.
    allow_nan : bool
        Route rows holding NaN (along each node's ``nan_right`` bit) instead of stopping.

    Returns
    -------
    int
        ``ROWS_FINITE``, ``ROWS_HAVE_NAN`` or ``ROWS_HAVE_INF``: what the rows hold. Unless
        it is ``ROWS_FINITE``, or ``ROWS_HAVE_NAN`` with ``allow_nan``, ``out`` is undefined.

    Notes
    -----
    The block is walked assuming finite values, then checked while it is still in the
    cache; a block holding NaN is walked again with the NaN test. Checking after walking
    reads X from memory once: a separate scan first cost a second pass over memory, as long
    as the walk itself on shallow trees. Cost O(rows * depth).
    """
    walk_rows(X, start, stop, nodes, shift, feature_mask, payload, out, False)
    bits = X.view(np.uint32).reshape(-1)  # a view: X is C-contiguous
    if rows_all_finite(bits, X.shape[1], start, stop):
        return ROWS_FINITE
    found = classify_rows(X, start, stop)
    if found == ROWS_HAVE_NAN and allow_nan:
        walk_rows(X, start, stop, nodes, shift, feature_mask, payload, out, True)
    return found


@kernel
def route_rows_serial(X, nodes, shift, feature_mask, payload, out, allow_nan):
    """Route every row of ``X`` (see :func:`route_block`), one thread.

    Notes
    -----
    Block by block, as the parallel twin does: each block is checked right after its walk,
    while it is still in the cache, so X is read from memory once.
    """
    n = X.shape[0]
    found = ROWS_FINITE
    for start in range(0, n, ROWS_PER_TASK):
        stop = min(n, start + ROWS_PER_TASK)
        found = max(
            found, route_block(X, start, stop, nodes, shift, feature_mask, payload, out, allow_nan)
        )
        if found == ROWS_HAVE_INF or (found == ROWS_HAVE_NAN and not allow_nan):
            break
    return found


@parallel_kernel
def route_rows_parallel(X, nodes, shift, feature_mask, payload, out, allow_nan):
    """Parallel twin of :func:`route_rows_serial`.

    Notes
    -----
    Task ``t`` writes only rows ``[t * ROWS_PER_TASK, (t + 1) * ROWS_PER_TASK)`` of ``out``
    and its own slot of ``found``: disjoint memory, so the result equals the serial one.
    """
    n = X.shape[0]
    n_tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    found = np.zeros(n_tasks, dtype=np.int64)
    for t in prange(n_tasks):
        found[t] = route_block(
            X,
            t * ROWS_PER_TASK,
            min(n, (t + 1) * ROWS_PER_TASK),
            nodes,
            shift,
            feature_mask,
            payload,
            out,
            allow_nan,
        )
    return found.max() if n_tasks > 0 else ROWS_FINITE


@kernel
def decision_path_rows(X, nodes, shift, feature_mask, depth_bound, indptr, indices):
    """Fill CSR ``indptr`` / ``indices`` with the nodes each row visits, root to leaf.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Rows to route; NaN follows each node's ``nan_right`` bit.
    nodes, shift, feature_mask :
        The packed tree, as for :func:`route_block`.
    depth_bound : int
        Tree depth + 1: the most nodes a path can hold; ``indices`` must have
        ``X.shape[0] * depth_bound`` entries.
    indptr, indices : ndarray of int64
        Outputs.

    Returns
    -------
    found : int
        What the rows hold (see :func:`route_block`); paths are written in any case.
    nnz : int
        Number of entries written to ``indices``.
    """
    found = classify_rows(X, 0, X.shape[0])
    nnz = 0
    indptr[0] = 0
    for i in range(X.shape[0]):
        node = 0
        indices[nnz] = 0
        nnz += 1
        while True:
            nxt = child_of(X[i, column_of(nodes[node], feature_mask)], nodes[node], shift, True)
            if nxt == node:
                break
            node = nxt
            indices[nnz] = node
            nnz += 1
        indptr[i + 1] = nnz
    return found, nnz
