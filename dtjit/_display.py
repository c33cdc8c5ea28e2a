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
from ._view import TreeView, resolve_view, wrap_line

MAX_DRAWN_NODES = 40
DECIMALS = 2
FONT_PX = 11
LINE_PX = 14
# Average advance of an 11 px sans-serif character, rounded up (DejaVu Sans, the widest
# common default, averages 6.6 px on split labels; Arial and Helvetica 6.1 px).
CHAR_PX = 6.8
PAD_PX = 6
BOX_GAP_PX = 12
LEVEL_GAP_PX = 28
# Longer lines (a category list) wrap after a comma or a space; nothing is cut.
WRAP_CHARS = 40
# The drawing shrinks to the cell's width down to this scale (11 px text at 8.8 px), then the
# cell scrolls sideways.
MIN_SCALE = 0.8
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


def _tidy_x(layout: Layout, box_w: dict[int, float]) -> tuple[dict[int, float], float]:
    """Centre (px) of every box, subtrees packed as close as their boxes allow; total width.

    The tidy-tree rule (Reingold and Tilford): a split node sits midway between its two
    children, whose subtrees are pushed apart until, on every level they share, the right
    edge of the left subtree is ``BOX_GAP_PX`` left of the right subtree's left edge. Boxes of
    one level therefore never overlap, and a narrow subtree takes little room.
    """
    children: dict[int, list[int]] = {}
    for parent, child, _ in layout.edges:
        children.setdefault(parent, []).append(child)
    # contour[n][k]: (left, right) extent, relative to n's centre, of n's subtree k levels down.
    contour: dict[int, list[tuple[float, float]]] = {}
    offset: dict[int, float] = {}  # a child's centre relative to its parent's
    for node in reversed(layout.nodes):  # preorder reversed: children before parents
        half = box_w[node] / 2
        if node not in children:
            contour[node] = [(-half, half)]
            continue
        left, right = sorted(children[node], key=lambda n: layout.x[n])
        cl, cr = contour.pop(left), contour.pop(right)
        gap = max(a[1] - b[0] for a, b in zip(cl, cr, strict=False)) + BOX_GAP_PX
        offset[left], offset[right] = -gap / 2, gap / 2
        merged = [(-half, half)]
        for k in range(max(len(cl), len(cr))):
            sides = [(lo - gap / 2, hi - gap / 2) for lo, hi in cl[k : k + 1]]
            sides += [(lo + gap / 2, hi + gap / 2) for lo, hi in cr[k : k + 1]]
            merged.append((min(lo for lo, _ in sides), max(hi for _, hi in sides)))
        contour[node] = merged
    root = layout.nodes[0]
    lowest = min(lo for lo, _ in contour[root])
    width = max(hi for _, hi in contour[root]) - lowest
    parent_of = {child: parent for parent, child, _ in layout.edges}
    x = {root: -lowest}
    for node in layout.nodes[1:]:  # preorder: parents before children
        x[node] = x[parent_of[node]] + offset[node]
    return x, width


def tree_svg(view: TreeView, max_depth: int | None) -> str:
    """Draw an inline ``<svg>`` of the tree down to ``max_depth``, coloured by class or value.

    Every box is as wide as its own text, and subtrees are packed as tightly as their boxes
    allow (:func:`_tidy_x`).
    The ``<svg>`` scales to its container's width (never above its natural size, never
    below :data:`MIN_SCALE` of it: a wider tree scrolls).
    """
    layout = tree_layout(view, max_depth)
    labels = {node: _box_lines(view, layout, node) for node in layout.nodes}
    box_w = {n: max(map(len, lines)) * CHAR_PX + 2 * PAD_PX for n, lines in labels.items()}
    x_px, width = _tidy_x(layout, box_w)
    # One height per level, so the edges between two levels all have the same length.
    level_lines = [0] * layout.n_levels
    for node, lines in labels.items():
        level_lines[layout.depth[node]] = max(level_lines[layout.depth[node]], len(lines))
    level_h = [n * LINE_PX + 2 * PAD_PX for n in level_lines]
    level_y = np.concatenate([[0.0], np.cumsum(np.add(level_h, LEVEL_GAP_PX))])
    height = level_y[-1] - LEVEL_GAP_PX

    def centre(node: int) -> tuple[float, float]:
        return x_px[node], float(level_y[layout.depth[node]])

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" preserveAspectRatio="xMinYMin meet" '
        f'style="width:100%;max-width:{width:.0f}px;min-width:{MIN_SCALE * width:.0f}px;'
        f'height:auto;display:block" role="img" font-family="sans-serif" font-size="{FONT_PX}">'
    ]
    for parent, child, is_left in layout.edges:
        (px, py), (cx, cy) = centre(parent), centre(child)
        bottom = py + level_h[layout.depth[parent]]
        parts.append(
            f'<line x1="{px:.1f}" y1="{bottom:.1f}" x2="{cx:.1f}" y2="{cy:.1f}" '
            'stroke="#666" stroke-width="1"/>'
        )
        if parent == 0:
            mx, my = (px + cx) / 2, (bottom + cy) / 2
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
        w, h = box_w[node], level_h[layout.depth[node]]
        parts.append(f"<g><title>{escape(hover)}</title>")
        parts.append(
            f'<rect x="{x - w / 2:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'rx="5" fill="{fill}" stroke="#444"/>'
        )
        top = y + (h - len(labels[node]) * LINE_PX) / 2
        for i, line in enumerate(labels[node]):
            baseline = top + (i + 0.75) * LINE_PX
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
    return [piece for line in lines for piece in wrap_line(line, WRAP_CHARS)]


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
