"""Slow, obvious twins of the traversal's planning steps in :mod:`dtjit.predict.walk`.

- :func:`reference_line_layout`: the cache-line placement of
  :func:`dtjit.predict.walk.lay_out_lines`,
  with Python lists and a queue.
- :func:`reference_phase_cost` / :func:`best_phase_cost_by_brute_force`: the cost model of
  :func:`dtjit.predict.walk.phase_lengths` and its optimum over every way to cut the depth.
- :func:`reference_depths`: node depths by following ``left`` from the root.
"""

from __future__ import annotations

import itertools
from collections import deque

import numpy as np

TREE_LEAF = -1


def reference_depths(left, right=None) -> np.ndarray:
    """Depth of every node, walking down from the root (``right`` defaults to ``left + 1``)."""
    depth = np.zeros(len(left), dtype=np.int64)
    stack = [0]
    while stack:
        node = stack.pop()
        if left[node] != TREE_LEAF:
            second = left[node] + 1 if right is None else right[node]
            for child in (left[node], second):
                depth[child] = depth[node] + 1
                stack.append(child)
    return depth


def reference_line_layout(left, rows_at_node, slots_per_line: int) -> tuple[np.ndarray, int]:
    """Return ``(slot_of, n_slots)``: sibling pairs filled into lines, heaviest pair first.

    A line starts with the next pending unit (the root alone, or a sibling pair); while it
    has room, the child pair of its units reached by most rows (the first one on ties)
    joins it. Pairs that do not fit are pending, in the order found. A unit whose subtree
    is placed before its line is full leaves the rest of the line to the next unit.
    """
    slot_of = np.full(len(left), -1, dtype=np.int64)
    pending = deque([(0,)])
    pos = 0
    while pending:
        unit = pending.popleft()
        candidates: list[int] = []
        while True:
            for k, node in enumerate(unit):
                slot_of[node] = pos + k
            pos += 2  # the root's unit is padded to a pair
            candidates += [int(left[v]) for v in unit if left[v] != TREE_LEAF]
            if pos % slots_per_line == 0 or not candidates:
                break
            best = max(candidates, key=lambda c: rows_at_node[c] + rows_at_node[c + 1])
            candidates.remove(best)
            unit = (best, best + 1)
        pending.extend((c, c + 1) for c in candidates)
    n_slots = -(-pos // slots_per_line) * slots_per_line
    return slot_of, n_slots


def reference_phase_cost(lengths, leaf_depth, rows_at_leaf, phase_cost: float) -> float:
    """Expected steps per row: every row deeper than a phase's start pays its length + cost."""
    total = float(np.sum(rows_at_leaf))
    cost, start = 0.0, 0
    for length in lengths:
        deeper = float(np.sum(rows_at_leaf[leaf_depth > start])) / total
        cost += deeper * (length + phase_cost)
        start += length
    return cost


def best_phase_cost_by_brute_force(leaf_depth, rows_at_leaf, phase_cost: float) -> float:
    """Lowest :func:`reference_phase_cost` over every cut of the depth into phases."""
    depth = int(np.max(leaf_depth))
    best = np.inf
    for cuts in itertools.product([False, True], repeat=depth - 1):
        lengths, run = [], 1
        for cut in cuts:
            if cut:
                lengths.append(run)
                run = 1
            else:
                run += 1
        lengths.append(run)
        best = min(best, reference_phase_cost(lengths, leaf_depth, rows_at_leaf, phase_cost))
    return best


def best_phase_cost(leaf_depth, rows_at_leaf, phase_cost: float) -> float:
    """Lowest :func:`reference_phase_cost` with phases of any length, by recursion on the
    start of the last phase (O(depth^2): for depths too large for the brute force)."""
    depth = int(np.max(leaf_depth))
    total = float(np.sum(rows_at_leaf))
    deeper = [float(np.sum(rows_at_leaf[leaf_depth > start])) / total for start in range(depth)]
    best = [0.0] * (depth + 1)  # best[e]: cheapest walk of the first e levels
    for end in range(1, depth + 1):
        best[end] = min(
            best[start] + deeper[start] * (end - start + phase_cost) for start in range(end)
        )
    return best[depth]
