"""Where to draw each node of a tree: leaves evenly spaced, parents centred over children.

Shared by :func:`dtjit.plotting.plot_tree` and the Jupyter display. Positions are in abstract
units: ``x`` counts leaf slots (0, 1, 2, ... from the left) and ``depth`` counts levels. Every
node's ``x`` lies inside the slot range of its own leaves and two nodes of the same depth own
disjoint ranges, so nodes of one level are at least one slot apart: boxes narrower than a slot
never overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._view import TreeView


@dataclass(frozen=True)
class Layout:
    """Drawn nodes, their positions and the edges between them.

    Attributes
    ----------
    nodes : list of int
        Node ids drawn, depth-first (left before right).
    x : dict of int to float
        Horizontal position of each drawn node, in leaf slots.
    depth : dict of int to int
        Level of each drawn node (the root is 0).
    cut : set of int
        Drawn nodes that stand for a whole subtree cut by ``max_depth`` (shown as "...").
    edges : list of (int, int, bool)
        ``(parent, child, is_left)`` for every drawn edge.
    n_slots : int
        Number of leaf slots (drawn leaves and cut subtrees).
    n_levels : int
        Number of drawn levels.
    """

    nodes: list[int]
    x: dict[int, float]
    depth: dict[int, int]
    cut: set[int]
    edges: list[tuple[int, int, bool]]
    n_slots: int
    n_levels: int


def tree_layout(view: TreeView, max_depth: int | None = None) -> Layout:
    """Lay out the nodes of depth <= ``max_depth``; deeper subtrees become one "..." slot.

    Parameters
    ----------
    view : TreeView
        The tree.
    max_depth : int or None
        Deepest level drawn in full; the children of split nodes at that level are drawn
        as cut markers. None draws everything.

    Returns
    -------
    Layout
    """
    nodes: list[int] = []
    depth: dict[int, int] = {}
    cut: set[int] = set()
    edges: list[tuple[int, int, bool]] = []
    x: dict[int, float] = {}
    slot = 0
    for node, d in view.preorder(max_depth):
        nodes.append(node)
        depth[node] = d
        if d > 0:
            parent = view.parent[node]
            edges.append((parent, node, view.children(parent)[0] == node))
        is_cut = max_depth is not None and d > max_depth
        if is_cut:
            cut.add(node)
        if is_cut or view.is_leaf(node):
            x[node] = float(slot)
            slot += 1
    # Preorder lists a parent before its children: walking it backwards places children first.
    for node in reversed(nodes):
        if node not in x:
            left, right = view.children(node)
            x[node] = (x[left] + x[right]) / 2.0
    return Layout(
        nodes=nodes,
        x=x,
        depth=depth,
        cut=cut,
        edges=edges,
        n_slots=slot,
        n_levels=max(depth.values()) + 1,
    )
