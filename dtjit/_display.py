"""Jupyter display of a fitted tree: a small inline SVG drawing, pure Python.

A fitted estimator and a :class:`~dtjit.Tree` show themselves as a drawing of their top
levels (at most :data:`MAX_DRAWN_NODES` boxes; deeper subtrees become "..." boxes) with a
caption giving the node count and depth. Hovering a box shows all its numbers. An unfitted
estimator keeps scikit-learn's diagram, and plain-text front ends keep ``repr``.
"""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np

from ._layout import Layout, tree_layout
from ._view import TreeView, resolve_view

MAX_DRAWN_NODES = 40
DECIMALS = 2
FONT_PX = 11
LINE_PX = 14
CHAR_PX = 6.4  # average advance of an 11 px sans-serif character, rounded up
PAD_PX = 6
SLOT_GAP_PX = 10
LEVEL_GAP_PX = 28
MAX_LINE_CHARS = 24
CUT_COLOR = "#d9d9d9"


def display_depth(view: TreeView, max_nodes: int = MAX_DRAWN_NODES) -> int | None:
    """Deepest level to draw in full so that at most ``max_nodes`` boxes are drawn.

    Drawing levels ``0..d`` also draws the level below as leaves or "..." boxes. Returns
    None when the whole tree fits; at least the root is drawn (with two "..." boxes).
    """
    per_level = np.bincount(view.depth)
    if per_level.sum() <= max_nodes:
        return None
    drawn = np.cumsum(per_level)[:-1] + per_level[1:]  # boxes drawn when cutting below d
    fitting = np.flatnonzero(drawn <= max_nodes)
    return int(fitting[-1]) if fitting.size else 0


def tree_svg(view: TreeView, max_depth: int | None) -> str:
    """Draw an inline ``<svg>`` of the tree down to ``max_depth``, coloured by class or value."""
    layout = tree_layout(view, max_depth)
    labels = {node: _box_lines(view, layout, node) for node in layout.nodes}
    widest = max(len(line) for lines in labels.values() for line in lines)
    box_w = widest * CHAR_PX + 2 * PAD_PX
    slot_w = box_w + SLOT_GAP_PX
    box_h = max(len(lines) for lines in labels.values()) * LINE_PX + 2 * PAD_PX
    level_h = box_h + LEVEL_GAP_PX
    width = layout.n_slots * slot_w
    height = layout.n_levels * level_h - LEVEL_GAP_PX

    def centre(node: int) -> tuple[float, float]:
        return (layout.x[node] + 0.5) * slot_w, layout.depth[node] * level_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" '
        f'font-family="sans-serif" font-size="{FONT_PX}">'
    ]
    for parent, child, is_left in layout.edges:
        (px, py), (cx, cy) = centre(parent), centre(child)
        parts.append(
            f'<line x1="{px:.1f}" y1="{py + box_h:.1f}" x2="{cx:.1f}" y2="{cy:.1f}" '
            'stroke="#666" stroke-width="1"/>'
        )
        if parent == 0:
            mx, my = (px + cx) / 2, (py + box_h + cy) / 2
            anchor = "end" if is_left else "start"
            dx = -4 if is_left else 4
            parts.append(
                f'<text x="{mx + dx:.1f}" y="{my:.1f}" text-anchor="{anchor}" fill="#555">'
                f"{'yes' if is_left else 'no'}</text>"
            )
    for node in layout.nodes:
        x, y = centre(node)
        cut = node in layout.cut
        fill = CUT_COLOR if cut else view.color(node)
        hover = "subtree cut" if cut else "\n".join([f"node {node}", *view.node_lines(node, 4)])
        parts.append(f"<g><title>{escape(hover)}</title>")
        parts.append(
            f'<rect x="{x - box_w / 2:.1f}" y="{y:.1f}" width="{box_w:.1f}" height="{box_h:.1f}" '
            f'rx="5" fill="{fill}" stroke="#444"/>'
        )
        top = y + PAD_PX + (box_h - 2 * PAD_PX - len(labels[node]) * LINE_PX) / 2
        for i, line in enumerate(labels[node]):
            baseline = top + (i + 0.8) * LINE_PX
            parts.append(
                f'<text x="{x:.1f}" y="{baseline:.1f}" text-anchor="middle">{escape(line)}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _box_lines(view: TreeView, layout: Layout, node: int) -> list[str]:
    if node in layout.cut:
        return ["..."]
    # Only the split, the sample count and the prediction: the hover text has the rest.
    lines = view.node_lines(node, DECIMALS, impurity=False, fractions=False)
    return [_clip(line) for line in lines]


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "\u2026"


def tree_html(view: TreeView, max_nodes: int = MAX_DRAWN_NODES) -> str:
    """Return a captioned drawing of the tree (its top levels beyond ``max_nodes`` nodes)."""
    max_depth = display_depth(view, max_nodes)
    caption = (
        f"{escape(view.estimator_name)}: {view.node_count} nodes, {view.n_leaves} leaves, "
        f"depth {view.max_depth}"
    )
    if max_depth is not None:
        drawn = int(np.count_nonzero(view.depth <= max_depth + 1))
        caption += f"; drawn to depth {max_depth} ({drawn} of {view.node_count} nodes)"
    return (
        '<div class="dtjit-tree" style="overflow-x:auto">'
        f"{tree_svg(view, max_depth)}"
        f'<div style="font-family:sans-serif;font-size:12px;color:#444">{caption}</div>'
        "</div>"
    )


def estimator_html(estimator: Any) -> str:
    """scikit-learn's HTML hook for our estimators: the tree once fitted, then the diagram.

    An unfitted estimator, or one with several outputs (the drawing shows one output),
    shows scikit-learn's diagram alone.
    """
    from sklearn.utils import estimator_html_repr

    diagram = estimator_html_repr(estimator)
    if not hasattr(estimator, "tree_") or estimator.tree_.n_outputs != 1:
        return diagram
    return (
        tree_html(resolve_view(estimator))
        + f"<details><summary>parameters</summary>{diagram}</details>"
    )
