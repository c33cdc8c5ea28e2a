"""Traversal kernels: rows of X walk from the root to a leaf.

Inputs reach these kernels as float32, C-contiguous, writeable arrays (the estimator layer
converts block by block), so each kernel compiles once per node layout (see
:func:`pack_nodes`; the compact layout is the usual one, the wide one exists only for trees
too big for it).

Each kernel also checks the rows it routes for NaN and infinity, block by block right after
walking them (while they are still in the cache), and reports what it found: the caller
raises. That check replaces scikit-learn's separate whole-array scan.

The walk is planned once per tree (:func:`pack_nodes`, cached by ``Tree.packed_nodes``):
nodes are placed so that a path stays two or three steps in a cache line
(:func:`lay_out_lines`), and rows walk in phases of a few levels after which those at their
leaf drop out (:func:`phase_lengths`, :func:`walk_phase`). ``tree_node`` maps the slots back
to the tree's breadth-first ids, which payloads and ``decision_path`` use.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..engine.jit import TREE_LEAF, callee_kernel, inline_kernel, kernel

# Rows per parallel task: large enough that scheduling is negligible, small enough (about
# 4096 x 20 float32 = 320 KB) that a task's rows stay in L2 between the scan and the walk.
ROWS_PER_TASK = 4096

# Rows walked together by one thread: their independent lookups overlap, hiding the latency
# of each (a step is a chain of two dependent loads and a compare). Measured against 8 on
# 500k rows: 12 rows 0.89-0.91x the time on a 70k-node tree, 0.94x on a 336k-node tree,
# equal at depth 10; 6 rows 1.15x, 16 rows 0.9x but 1.13x at depth 10. The lanes are
# written out as scalar variables in :func:`walk_phase` (see there).
ROWS_IN_FLIGHT = 12

NON_NEGATIVE = np.int64(0x7FFFFFFFFFFFFFFF)

# What the scan of a block found (the kernels return the worst of their blocks).
ROWS_FINITE = 0
ROWS_HAVE_NAN = 1
ROWS_HAVE_INF = 2

# A node in 8 bytes: the float32 threshold, and ``left << shift | nan_right << (shift - 1) |
# feature`` in one uint32. Half the 16 bytes of separate float64/int32 fields: twice as many
# nodes per cache line and the whole of a 100k-node tree in L2 (measured 1.4x faster on a
# 74k-node tree, 10M rows). Siblings are stored next to each other (``right == left + 1``),
# so no right child is stored. Leaves are self-loops (threshold +inf, left = the leaf
# itself), so a row that reached its leaf stays there and rows can walk without exits.
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
    phases: np.ndarray
    tree_node: np.ndarray


# Bytes the nodes are grouped by (see :func:`lay_out_lines`): a cache line.
LINE_BYTES = 64

# Cost of one phase of the walk for each row taking part, in node steps: reading its
# offset and node, storing them back and the compaction (see :func:`phase_lengths`).
PHASE_COST_IN_STEPS = 2
# Longest phase :func:`phase_lengths` considers. Cutting a longer phase in pieces of this
# length adds at most PHASE_COST_IN_STEPS / MAX_PHASE_LEVELS (0.8 %) to the walk, and bounds
# the search at O(depth * MAX_PHASE_LEVELS): unbounded, it took 15 s on a depth-80k chain.
MAX_PHASE_LEVELS = 256


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


def node_depths(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Return the depth of every node reachable from the root (``-1`` children at leaves).

    Any node order (breadth-first, scikit-learn's preorder): one vectorised pass per level.
    """
    depth = np.zeros(len(left), dtype=np.int64)
    level = np.zeros(min(len(left), 1), dtype=np.int64)
    d = 0
    while level.size:
        split = left[level] != TREE_LEAF
        level = np.concatenate([left[level[split]], right[level[split]]])
        d += 1
        depth[level] = d
    return depth


def phase_lengths(leaf_depth: np.ndarray, rows_at_leaf: np.ndarray) -> np.ndarray:
    """Choose the levels walked in each phase of the traversal, for rows like the training rows.

    Parameters
    ----------
    leaf_depth : ndarray of int
        Depth of each leaf.
    rows_at_leaf : ndarray of float
        How many rows reach each leaf (training counts: the best guess of where new rows go).

    Returns
    -------
    ndarray of int64
        Phase lengths, summing to the tree's depth (``[1]`` for a single leaf).

    Notes
    -----
    A phase of ``L`` levels starting at depth ``b`` costs ``L + PHASE_COST_IN_STEPS`` steps
    for every row deeper than ``b``. Dynamic programming over the phase boundaries gives
    the cheapest sequence of phases of at most ``MAX_PHASE_LEVELS`` levels, in
    O(depth * MAX_PHASE_LEVELS). Short phases waste little on rows stopping inside them but
    pay the phase cost more often; the optimum for the deep benchmark tree starts with about
    20 levels (where few rows stop), then phases of 3-7.
    """
    max_depth = int(leaf_depth.max(initial=0))
    if max_depth == 0:
        return np.ones(1, dtype=np.int64)
    weight = np.bincount(leaf_depth, weights=rows_at_leaf, minlength=max_depth + 1)
    total = weight.sum()
    # deeper[b]: share of rows whose leaf is deeper than b (still walking after b levels).
    deeper = (total - np.cumsum(weight)) / total if total > 0 else np.ones(max_depth + 1)
    cost = np.zeros(max_depth + 1)
    next_boundary = np.zeros(max_depth + 1, dtype=np.int64)
    for b in range(max_depth - 1, -1, -1):
        ends = np.arange(b + 1, min(b + MAX_PHASE_LEVELS, max_depth) + 1)
        options = deeper[b] * (ends - b + PHASE_COST_IN_STEPS) + cost[ends]
        best = int(np.argmin(options))
        cost[b], next_boundary[b] = options[best], ends[best]
    lengths = []
    b = 0
    while b < max_depth:
        lengths.append(next_boundary[b] - b)
        b = next_boundary[b]
    return np.array(lengths, dtype=np.int64)


@kernel
def lay_out_lines(left, rows_at_node, slots_per_line, slot_of):
    """Place the nodes of a breadth-first tree so that a row's path crosses few cache lines.

    Parameters
    ----------
    left : ndarray of int64, shape (n_nodes,)
        Left children (``-1`` at leaves); the right child is ``left + 1``.
    rows_at_node : ndarray of float64, shape (n_nodes,)
        Training rows through each node: which paths are worth keeping in one line.
    slots_per_line : int
        Nodes per cache line (even).
    slot_of : ndarray of int64, shape (n_nodes,)
        Output: the slot of each node.

    Returns
    -------
    int
        Slots used, a multiple of ``slots_per_line``; slots no node took are padding
        (the slot after the root, and the end of the last line).

    Notes
    -----
    The unit of placement is a sibling pair, kept adjacent (slots ``s`` and ``s + 1``) so
    the walk still steps to ``left + (x > threshold)``; the root is a unit of its own. A
    line starts with a pending unit and is filled greedily with the child pairs of the
    units already in it, the pair reached by most training rows first; child pairs left
    over start later lines, in the order found (so the top of the tree comes first).
    When a unit's subtree is placed whole before its line is full, the next pending unit
    goes on in the same line: lines are full and the layout is as small as the tree.

    In breadth-first order a path below the first levels touches a new line at every
    step; here it stays two or three steps in a line, and lookups hit L1 instead of L2
    (measured 1.15-1.25x faster on trees of 70k and 336k nodes, 4M rows).
    Cost O(n_nodes * slots_per_line).
    """
    n_nodes = left.shape[0]
    # Pending units, by their first node (a left child, or the root).
    pending = np.empty(n_nodes // 2 + 1, dtype=np.int64)
    pending[0] = 0
    n_pending = np.int64(1)
    # Left children of the pairs that may join the current line.
    candidates = np.empty(slots_per_line + 2, dtype=np.int64)
    pos = np.int64(0)
    for head in range(n_nodes // 2 + 1):
        if head == n_pending:
            break
        first = pending[head]
        n_candidates = 0
        while True:
            slot_of[first] = pos
            last = first if first == 0 else first + 1  # the root has no sibling
            if last != first:
                slot_of[last] = pos + 1
            pos += 2
            for node in range(first, last + 1):
                if left[node] != TREE_LEAF:
                    candidates[n_candidates] = left[node]
                    n_candidates += 1
            if pos % slots_per_line == 0 or n_candidates == 0:
                break
            best = 0
            for k in range(1, n_candidates):
                if rows_through(rows_at_node, candidates[k]) > rows_through(
                    rows_at_node, candidates[best]
                ):
                    best = k
            first = candidates[best]
            for k in range(best, n_candidates - 1):  # keep the others in order
                candidates[k] = candidates[k + 1]
            n_candidates -= 1
        for k in range(n_candidates):
            pending[n_pending] = candidates[k]
            n_pending += 1
    return (pos + slots_per_line - 1) // slots_per_line * slots_per_line


@inline_kernel
def rows_through(rows_at_node, first):
    """Training rows reaching the sibling pair whose left node is ``first``."""
    return rows_at_node[first] + rows_at_node[first + 1]


def aligned_empty(n: int, dtype: np.dtype, alignment: int) -> np.ndarray:
    """Return an uninitialised array of ``n`` items whose data starts on ``alignment`` bytes."""
    dtype = np.dtype(dtype)
    raw = np.empty(n * dtype.itemsize + alignment, dtype=np.uint8)
    offset = -raw.ctypes.data % alignment
    return raw[offset : offset + n * dtype.itemsize].view(dtype)


def pack_nodes(
    feature: np.ndarray,
    threshold: np.ndarray,
    left: np.ndarray,
    missing_left: np.ndarray,
    n_features: int,
    rows_at_node: np.ndarray | None = None,
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
    rows_at_node : ndarray, optional
        Training rows per node (``n_node_samples``), to plan the walk's phases; without
        it every leaf counts the same.
    wide : bool, default=False
        Use the 16-byte layout even when the compact one fits (for tests).

    Returns
    -------
    PackedTree
        ``nodes`` (``COMPACT_NODE_DTYPE`` or ``WIDE_NODE_DTYPE``, in the order of
        :func:`lay_out_lines`, starting on a cache line), ``shift`` / ``feature_mask`` to
        decode ``packed``: ``left = packed >> shift``, ``feature = packed & feature_mask``,
        ``nan_right = (packed >> (shift - 1)) & 1``; ``phases`` (see
        :func:`phase_lengths`); and ``tree_node``, the tree's (breadth-first) id of the
        node in each slot, which is what payloads are indexed by.
    """
    n_nodes = len(left)
    feature_bits = max(int(n_features) - 1, 0).bit_length()
    shift = feature_bits + 1
    # Slots: the nodes, the root's padding and at most one line of padding at the end.
    max_slots = n_nodes + 1 + LINE_BYTES // COMPACT_NODE_DTYPE.itemsize
    wide = wide or (max(max_slots - 1, 0) >> (32 - shift)) > 0
    dtype = WIDE_NODE_DTYPE if wide else COMPACT_NODE_DTYPE
    left = np.asarray(left, dtype=np.int64)
    rows = np.ones(n_nodes) if rows_at_node is None else np.asarray(rows_at_node, dtype=float)
    slot_of = np.full(n_nodes, -1, dtype=np.int64)
    n_slots = lay_out_lines(left, rows, np.int64(LINE_BYTES // dtype.itemsize), slot_of)
    if n_nodes and (slot_of < 0).any():
        raise ValueError("the tree has nodes that cannot be reached from the root.")
    is_leaf = left == TREE_LEAF
    child = np.where(is_leaf, slot_of, slot_of[np.where(is_leaf, 0, left)]).astype(np.uint64)
    column = np.where(is_leaf, 0, feature).astype(np.uint64)
    nan_right = np.where(is_leaf, 0, 1 - missing_left.astype(np.int64)).astype(np.uint64)
    # Padding slots are leaves of their own that no row reaches.
    own_slot = np.arange(n_slots, dtype=np.uint64)
    nodes = aligned_empty(n_slots, dtype, LINE_BYTES)
    nodes[:] = np.zeros(1, dtype=dtype)
    nodes["threshold"] = np.inf
    nodes["packed"] = own_slot << np.uint64(shift)
    nodes["threshold"][slot_of] = np.where(
        is_leaf, np.float32(np.inf), round_down_to_float32(threshold)
    )
    nodes["packed"][slot_of] = (
        (child << np.uint64(shift)) | (nan_right << np.uint64(feature_bits)) | column
    )
    tree_node = np.zeros(n_slots, dtype=np.int64)
    tree_node[slot_of] = np.arange(n_nodes)
    # Children are adjacent in the packed trees' node order: right == left + 1.
    phases = phase_lengths(node_depths(left, left + 1)[is_leaf], rows[is_leaf])
    return PackedTree(nodes, shift, (1 << feature_bits) - 1, phases, tree_node)


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
    return np.int64(record["packed"]) & feature_mask


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
        right |= (packed >> (shift - 1)) & np.int64(x != x)
    return (packed >> shift) + right


@inline_kernel
def is_inner(record, node, shift):
    """Return True unless ``node`` (whose record is given) is a leaf, i.e. its own child."""
    return (np.int64(record["packed"]) >> shift) != node


@callee_kernel
def walk_phase(
    X,
    start,
    active,
    n_active,
    node_of,
    steps,
    nodes,
    shift,
    feature_mask,
    tree_node,
    payload,
    out,
    with_nan,
    first,
    last_phase,
):
    """Walk the rows listed in ``active[:n_active]`` ``steps`` levels down; compact the list.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
    start : int
        Row of ``X`` that offset 0 of the block stands for.
    active : ndarray of int64
        Offsets (rows ``start + offset``) still walking; rewritten in place to hold, in
        ``active[:returned]``, those that have not reached their leaf after this phase.
    n_active : int
    node_of : ndarray of int64
        Slot each offset stands at; updated.
    steps : int
        Levels to walk.
    nodes, shift, feature_mask, tree_node, payload, out, with_nan :
        As for :func:`walk_rows`.
    first : bool
        First phase: ``active`` and ``node_of`` are not read; every offset
        ``0 .. n_active - 1`` starts at the root.
    last_phase : bool
        ``steps`` reaches below the deepest leaf: write ``out`` directly (``node_of`` and
        ``active`` are left alone) and return 0.

    Returns
    -------
    int
        Number of offsets still walking.

    Notes
    -----
    Twelve rows (``ROWS_IN_FLIGHT``) walk together, ``steps`` sweeps without any test:
    their lookups are independent, so their memory accesses overlap, and a row that
    reached its leaf just stays there (leaves are self-loops). The lanes are scalar
    variables, written out rather than indexed: LLVM keeps the nodes in registers, where an
    array of lanes goes through memory on every step (measured 2.3x faster on a depth-10
    tree, 1.3x on a 70k-node tree, 4M rows); the row pointers it spills are reloaded off
    the dependency chain. Lanes past ``n_active`` repeat the last offset, so every group
    runs the same straight-line code; they store the same slot as the real lane and are
    not listed again. Compacting in place is safe: the offset written at position
    ``kept <= j + k`` has already been read. ``kept`` reaches ``n_active`` when every row
    walks on, so ``active`` needs one slot past ``n_active``.

    A kernel of its own, not inlined: it is called once per phase, and inlining its three
    uses into the block kernel took 36 s to compile (6.6 s as a separate kernel, with one
    variant per ``with_nan``; ``first`` and ``last_phase`` are tested once per group, which
    costs nothing measurable).
    """
    last = n_active - 1
    kept = np.int64(0)
    for j in range(0, n_active, ROWS_IN_FLIGHT):
        if first:
            a0, a1, a2, a3 = j, min(j + 1, last), min(j + 2, last), min(j + 3, last)
            a4, a5, a6, a7 = min(j + 4, last), min(j + 5, last), min(j + 6, last), min(j + 7, last)
            a8, a9, a10, a11 = (
                min(j + 8, last),
                min(j + 9, last),
                min(j + 10, last),
                min(j + 11, last),
            )
            c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = c8 = c9 = c10 = c11 = np.int64(0)
        else:
            a0, a1, a2, a3 = (
                active[j],
                active[min(j + 1, last)],
                active[min(j + 2, last)],
                active[min(j + 3, last)],
            )
            a4, a5, a6, a7 = (
                active[min(j + 4, last)],
                active[min(j + 5, last)],
                active[min(j + 6, last)],
                active[min(j + 7, last)],
            )
            a8, a9, a10, a11 = (
                active[min(j + 8, last)],
                active[min(j + 9, last)],
                active[min(j + 10, last)],
                active[min(j + 11, last)],
            )
            # Masking off the sign bit (a no-op on valid indices) lets LLVM prove the
            # indices non-negative, which drops numba's negative-index fix-up from every
            # step: three instructions per lane and step.
            c0, c1 = node_of[a0] & NON_NEGATIVE, node_of[a1] & NON_NEGATIVE
            c2, c3 = node_of[a2] & NON_NEGATIVE, node_of[a3] & NON_NEGATIVE
            c4, c5 = node_of[a4] & NON_NEGATIVE, node_of[a5] & NON_NEGATIVE
            c6, c7 = node_of[a6] & NON_NEGATIVE, node_of[a7] & NON_NEGATIVE
            c8, c9 = node_of[a8] & NON_NEGATIVE, node_of[a9] & NON_NEGATIVE
            c10, c11 = node_of[a10] & NON_NEGATIVE, node_of[a11] & NON_NEGATIVE
        r0, r1 = (start + a0) & NON_NEGATIVE, (start + a1) & NON_NEGATIVE
        r2, r3 = (start + a2) & NON_NEGATIVE, (start + a3) & NON_NEGATIVE
        r4, r5 = (start + a4) & NON_NEGATIVE, (start + a5) & NON_NEGATIVE
        r6, r7 = (start + a6) & NON_NEGATIVE, (start + a7) & NON_NEGATIVE
        r8, r9 = (start + a8) & NON_NEGATIVE, (start + a9) & NON_NEGATIVE
        r10, r11 = (start + a10) & NON_NEGATIVE, (start + a11) & NON_NEGATIVE
        for _ in range(steps):
            c0 = child_of(X[r0, column_of(nodes[c0], feature_mask)], nodes[c0], shift, with_nan)
            c1 = child_of(X[r1, column_of(nodes[c1], feature_mask)], nodes[c1], shift, with_nan)
            c2 = child_of(X[r2, column_of(nodes[c2], feature_mask)], nodes[c2], shift, with_nan)
            c3 = child_of(X[r3, column_of(nodes[c3], feature_mask)], nodes[c3], shift, with_nan)
            c4 = child_of(X[r4, column_of(nodes[c4], feature_mask)], nodes[c4], shift, with_nan)
            c5 = child_of(X[r5, column_of(nodes[c5], feature_mask)], nodes[c5], shift, with_nan)
            c6 = child_of(X[r6, column_of(nodes[c6], feature_mask)], nodes[c6], shift, with_nan)
            c7 = child_of(X[r7, column_of(nodes[c7], feature_mask)], nodes[c7], shift, with_nan)
            c8 = child_of(X[r8, column_of(nodes[c8], feature_mask)], nodes[c8], shift, with_nan)
            c9 = child_of(X[r9, column_of(nodes[c9], feature_mask)], nodes[c9], shift, with_nan)
            c10 = child_of(X[r10, column_of(nodes[c10], feature_mask)], nodes[c10], shift, with_nan)
            c11 = child_of(X[r11, column_of(nodes[c11], feature_mask)], nodes[c11], shift, with_nan)
        if last_phase:
            # Lanes past the end write their row's payload again: harmless. Written out per
            # lane: a loop over the group's rows reading the slots back from node_of was
            # 1.23x slower on a depth-10 tree.
            for w in range(payload.shape[1]):
                out[start + a0, w] = payload[tree_node[c0], w]
            for w in range(payload.shape[1]):
                out[start + a1, w] = payload[tree_node[c1], w]
            for w in range(payload.shape[1]):
                out[start + a2, w] = payload[tree_node[c2], w]
            for w in range(payload.shape[1]):
                out[start + a3, w] = payload[tree_node[c3], w]
            for w in range(payload.shape[1]):
                out[start + a4, w] = payload[tree_node[c4], w]
            for w in range(payload.shape[1]):
                out[start + a5, w] = payload[tree_node[c5], w]
            for w in range(payload.shape[1]):
                out[start + a6, w] = payload[tree_node[c6], w]
            for w in range(payload.shape[1]):
                out[start + a7, w] = payload[tree_node[c7], w]
            for w in range(payload.shape[1]):
                out[start + a8, w] = payload[tree_node[c8], w]
            for w in range(payload.shape[1]):
                out[start + a9, w] = payload[tree_node[c9], w]
            for w in range(payload.shape[1]):
                out[start + a10, w] = payload[tree_node[c10], w]
            for w in range(payload.shape[1]):
                out[start + a11, w] = payload[tree_node[c11], w]
            continue
        node_of[a0], node_of[a1], node_of[a2], node_of[a3] = c0, c1, c2, c3
        node_of[a4], node_of[a5], node_of[a6], node_of[a7] = c4, c5, c6, c7
        node_of[a8], node_of[a9], node_of[a10], node_of[a11] = c8, c9, c10, c11
        # Branch-free compaction: always write, advance past rows still walking only.
        active[kept] = a0
        kept += is_inner(nodes[c0], c0, shift)
        active[kept] = a1
        kept += is_inner(nodes[c1], c1, shift) & (j + 1 <= last)
        active[kept] = a2
        kept += is_inner(nodes[c2], c2, shift) & (j + 2 <= last)
        active[kept] = a3
        kept += is_inner(nodes[c3], c3, shift) & (j + 3 <= last)
        active[kept] = a4
        kept += is_inner(nodes[c4], c4, shift) & (j + 4 <= last)
        active[kept] = a5
        kept += is_inner(nodes[c5], c5, shift) & (j + 5 <= last)
        active[kept] = a6
        kept += is_inner(nodes[c6], c6, shift) & (j + 6 <= last)
        active[kept] = a7
        kept += is_inner(nodes[c7], c7, shift) & (j + 7 <= last)
        active[kept] = a8
        kept += is_inner(nodes[c8], c8, shift) & (j + 8 <= last)
        active[kept] = a9
        kept += is_inner(nodes[c9], c9, shift) & (j + 9 <= last)
        active[kept] = a10
        kept += is_inner(nodes[c10], c10, shift) & (j + 10 <= last)
        active[kept] = a11
        kept += is_inner(nodes[c11], c11, shift) & (j + 11 <= last)
    return kept


@inline_kernel
def walk_rows(
    X, start, stop, nodes, shift, feature_mask, phases, tree_node, payload, out, with_nan
):
    """Write ``payload[leaf]`` for each row ``i`` in ``[start, stop)`` into ``out[i]``.

    Notes
    -----
    The rows walk in phases of ``phases[p]`` levels (see :func:`phase_lengths`); after each
    phase only the rows that have not reached their leaf walk on. Rows walking until the
    deepest of eight stops wasted a third of the steps on a deep tree (39 steps per row
    for 26 levels); phases waste only the rest of the phase in which a row stops. The last
    phase length repeats until every row stands at a leaf.

    A one-phase plan (shallow or balanced trees, e.g. the depth-10 benchmark tree) writes
    the payloads inside the phase (filing the rows to write them later cost 30 % there);
    otherwise they are written at the end, in row order: sequential writes to ``out``.
    Writing each row's payload as soon as it stops (rows in scattered order, within the
    walk) was 1.2-1.4x slower on a 10-class ``predict_proba``.
    """
    n = stop - start
    # One slot more than rows: walk_phase's branch-free compaction always writes
    # active[kept], and kept reaches n when every row of the block walks on (it wrote one
    # slot past the array: a heap write on any tree deeper than its first phase).
    active = np.empty(n + 1, dtype=np.int64)
    node_of = np.empty(n, dtype=np.int64)
    # A single phase adds up to the tree's depth: it takes every row to its leaf.
    single = phases.shape[0] == 1
    n_active = n
    p = 0
    while n_active > 0:
        steps = phases[min(p, phases.shape[0] - 1)]
        n_active = walk_phase(
            X, start, active, n_active, node_of, steps, nodes, shift, feature_mask, tree_node,
            payload, out, with_nan, p == 0, single,
        )  # fmt: skip
        p += 1
    if not single:
        for i in range(n):
            node = tree_node[node_of[i]]
            for w in range(payload.shape[1]):
                out[start + i, w] = payload[node, w]


@callee_kernel
def route_block(
    X, start, stop, nodes, shift, feature_mask, phases, tree_node, payload, out, allow_nan,
    nan_walk,
):  # fmt: skip
    """Route rows ``[start, stop)`` of ``X``, checking them for NaN and infinity on the way.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Rows to route.
    start, stop : int
        The block of rows.
    nodes : ndarray of COMPACT_NODE_DTYPE or WIDE_NODE_DTYPE
        The packed tree; ``shift`` and ``feature_mask`` decode it (see :func:`pack_nodes`).
    phases : ndarray of int64
        Levels walked per phase (see :func:`phase_lengths`).
    tree_node : ndarray of int64
        The tree's id of the node in each slot of ``nodes``.
    payload : ndarray of int64, shape (n_nodes, width), C order
        What to write for a row reaching each node (by the tree's ids): node ids, class
        labels, or float64 values (means, class fractions) reinterpreted as int64 (the
        kernel only copies the 8 bytes). Writing them here, by the thread that found the
        leaf, replaces a second gather pass over the output (``np.take`` of 10M x 10
        fractions: 0.17 s).
    out : ndarray of int64, shape (n_samples, width), C order
        Written at rows ``[start, stop)``.
    allow_nan : bool
        Route rows holding NaN (along each node's ``nan_right`` bit) instead of stopping.
    nan_walk : True or None
        None leaves the walk with the NaN test out of the compiled code: a block holding
        NaN then reports ``ROWS_HAVE_NAN`` without being routed, and the caller routes
        again with True (:func:`route_rows`). Data without NaN never compiles that walk.

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
    walk_rows(X, start, stop, nodes, shift, feature_mask, phases, tree_node, payload, out, False)
    bits = X.view(np.uint32).reshape(-1)  # a view: X is C-contiguous
    if rows_all_finite(bits, X.shape[1], start, stop):
        return ROWS_FINITE
    found = classify_rows(X, start, stop)
    if nan_walk is not None and found == ROWS_HAVE_NAN and allow_nan:
        walk_rows(X, start, stop, nodes, shift, feature_mask, phases, tree_node, payload, out, True)
    return found


class PlainTree(NamedTuple):
    """A tree's arrays as :func:`route_rows_plain` reads them (fixed dtypes: one compile)."""

    feature: np.ndarray  # int64
    threshold: np.ndarray  # float32, rounded down (see round_down_to_float32)
    left: np.ndarray  # int64, TREE_LEAF at leaves
    right: np.ndarray  # int64
    nan_right: np.ndarray  # uint8: where a NaN goes at each split


def plain_nodes(feature, threshold, left, right, missing_left) -> PlainTree:
    """Return the tree's arrays in the form :func:`route_rows_plain` reads."""
    is_leaf = np.asarray(left) == TREE_LEAF
    return PlainTree(
        np.where(is_leaf, 0, feature).astype(np.int64),
        round_down_to_float32(np.asarray(threshold, dtype=np.float64)),
        np.asarray(left, dtype=np.int64),
        np.asarray(right, dtype=np.int64),
        (1 - np.asarray(missing_left, dtype=np.int64)).astype(np.uint8),
    )


# Values (rows x features) up to which an input takes the plain walk: a one-row call costs
# little more than the kernel call, and a first predict compiles only the plain walk. Larger
# inputs take the packed, phased walk, several times faster per row on deep trees.
PLAIN_WALK_MAX_VALUES = 4096


@kernel
def route_rows_plain(X, feature, threshold, left, right, nan_right, payload, out, allow_nan):
    """Route every row of ``X`` by a plain walk of the tree's arrays: the small-input path.

    The tree's arrays are a :class:`PlainTree`'s, passed one by one (an array argument
    costs the call less than a record's field); ``payload`` and ``out`` as for
    :func:`route_block`,
    and the same result (``ROWS_FINITE`` ...) and routes, bit for bit: a row goes right
    where ``x > threshold`` (float32, rounded down), or where ``x`` is NaN and
    ``nan_right``. The packed, phased walk (:func:`route_rows_serial`) is an accelerator of
    large inputs; this loop compiles in a fraction of its time and serves the rest.

    Notes
    -----
    The rows are checked for NaN and infinity first (an input this small is in the cache).
    Cost O(rows * depth).
    """
    found = classify_rows(X, 0, X.shape[0])
    if found == ROWS_HAVE_INF or (found == ROWS_HAVE_NAN and not allow_nan):
        return found
    for i in range(X.shape[0]):
        node = 0
        while left[node] != TREE_LEAF:
            x = X[i, feature[node]]
            if x > threshold[node] or (x != x and nan_right[node]):
                node = right[node]
            else:
                node = left[node]
        for w in range(payload.shape[1]):
            out[i, w] = payload[node, w]
    return found


@kernel
def route_rows_serial(
    X, nodes, shift, feature_mask, phases, tree_node, payload, out, allow_nan, nan_walk
):
    """Route every row of ``X`` (see :func:`route_block`), one thread.

    Notes
    -----
    Block by block: each block is checked right after its walk, while it is still in the
    cache, so X is read from memory once. Threaded predictions call it on each thread's
    share of the rows (``routing.row_ranges``).
    """
    n = X.shape[0]
    found = ROWS_FINITE
    for start in range(0, n, ROWS_PER_TASK):
        stop = min(n, start + ROWS_PER_TASK)
        found = max(
            found,
            route_block(
                X,
                start,
                stop,
                nodes,
                shift,
                feature_mask,
                phases,
                tree_node,
                payload,
                out,
                allow_nan,
                nan_walk,
            ),
        )
        if found == ROWS_HAVE_INF or (
            found == ROWS_HAVE_NAN and (nan_walk is None or not allow_nan)
        ):
            break
    return found


def route_rows(X, packed, payload, out, allow_nan):
    """Run :func:`route_rows_serial` over ``X`` (``packed``: :meth:`Tree.packed_nodes`).

    Rows are walked without the NaN test first; only when some hold NaN that ``allow_nan``
    routes are they all walked again with it, so the NaN walk compiles on first use.
    """
    found = route_rows_serial(X, *packed, payload, out, allow_nan, None)
    if found == ROWS_HAVE_NAN and allow_nan:
        found = route_rows_serial(X, *packed, payload, out, allow_nan, True)
    return found


@kernel
def decision_path_rows(
    X, nodes, shift, feature_mask, phases, tree_node, depth_bound, indptr, indices
):
    """Fill CSR ``indptr`` / ``indices`` with the nodes each row visits, root to leaf.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Rows to route; NaN follows each node's ``nan_right`` bit.
    nodes, shift, feature_mask, phases, tree_node :
        The packed tree, as for :func:`route_block` (``phases`` unused: rows walk one by one).
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
        node = 0  # the root's slot
        indices[nnz] = tree_node[node]
        nnz += 1
        while True:
            nxt = child_of(X[i, column_of(nodes[node], feature_mask)], nodes[node], shift, True)
            if nxt == node:
                break
            node = nxt
            indices[nnz] = tree_node[node]
            nnz += 1
        indptr[i + 1] = nnz
    return found, nnz
