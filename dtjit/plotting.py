"""Matplotlib figures of a fitted tree: the tree, feature importances, a split scan, pruning.

matplotlib is optional (``pip install matplotlib``, or ``pip install dtjit[plot]``): it is
imported when a function is called, never when dtjit is imported. Every function draws on
the Axes (or Figure) it is given, or on a new one, and returns it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._layout import tree_layout
from ._view import NodeLabel, check_max_depth, resolve_view

# Room between two boxes of one level, and between levels, as a fraction of what is free.
_GAP = 0.08
_MAX_FIT_ROUNDS = 6
# Smallest automatic font size: below it the drawing is unreadable anyway, and rasterising
# text smaller than a pixel fails in FreeType (1.5 pt is a pixel at 48 dpi). Trees of more
# than ~400 nodes then overlap in the default 40-inch-wide figure: draw them with max_depth
# or on a larger Axes.
_MIN_FONTSIZE = 1.5
_CUT_COLOR = "#d9d9d9"
_WRAP_CATEGORIES = 40


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "dtjit.plotting needs matplotlib: pip install matplotlib (or dtjit[plot])"
        ) from exc
    return plt


def plot_tree(
    model: Any,
    *,
    max_depth: int | None = None,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | bool | None = None,
    label: str = "all",
    filled: bool = False,
    impurity: bool = True,
    node_ids: bool = False,
    proportion: bool = False,
    rounded: bool = False,
    precision: int | None = 3,
    ax: Any = None,
    fontsize: float | None = None,
    decimals: int | None = None,
) -> Any:
    """Draw the tree: one box per node, leaves evenly spaced, parents centred above.

    Same signature, options and box text as :func:`sklearn.tree.plot_tree`, so switching the
    import is enough; unlike it, a categorical (subset) split shows its categories
    (``island in {Biscoe, Dream}``), where scikit-learn's shows ``island <= nan``. Boxes of one
    level never overlap: leaves get equal slots, every node sits within the slots of its own
    leaves, and unless ``fontsize`` is given the text is shrunk until every box fits its slot.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    max_depth : int, default=None
        Deepest level drawn; each deeper subtree is drawn as one ``(...)`` box.
    feature_names : sequence of str, default=None
        Feature names; default to ``feature_names_in_``, else ``x0, x1, ...``.
    class_names : sequence of str, bool or None, default=None
        Names in each box's ``class = `` line; None uses ``classes_``, True writes ``y[k]``,
        False leaves the line out.
    label : {"all", "root", "none"}, default="all"
        Where the ``gini = `` / ``samples = `` ... prefixes are written.
    filled : bool, default=False
        Colour boxes by majority class (lighter when less pure) or by value (regression),
        as :func:`dtjit.export_graphviz` does.
    impurity : bool, default=True
        Show each node's impurity.
    node_ids : bool, default=False
        Show each node's id (dtjit's breadth-first id).
    proportion : bool, default=False
        Show samples as a percentage of the root's and class values as fractions.
    rounded : bool, default=False
        Rounded box corners.
    precision : int, default=3
        Digits the numbers are rounded to.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure sized to the tree when None.
    fontsize : float, default=None
        Text size in points; by default the largest size (up to 10, at least 1.5) at which
        no boxes overlap. In the default figure that holds for binary trees up to about 300
        nodes; with many classes the ``value = [...]`` lines are longer and fewer boxes fit
        (a 300-node seven-class tree overlaps): pass ``max_depth`` or a larger ``ax``.
    decimals : int, default=None
        The same as ``precision`` (dtjit's name in its other exports); give one or the other.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on; ``ax.texts`` holds one box per drawn node, in depth-first order.

    Notes
    -----
    Where scikit-learn's function differs: it returns the list of box annotations and, with
    ``ax=None``, draws on the current Axes (cleared) with boxes that may overlap; this one
    returns the Axes and, with ``ax=None``, opens a figure sized to the tree. Without
    ``class_names`` dtjit writes the class line with ``classes_``, scikit-learn leaves it
    out. Colours are dtjit's palette.
    """
    plt = _pyplot()
    labels = NodeLabel.from_options(
        label=label,
        node_ids=node_ids,
        impurity=impurity,
        proportion=proportion,
        precision=precision,
        decimals=decimals,
        class_names=class_names,
    )
    # A long category list wraps: on one line it would shrink the font of the whole drawing.
    labels = dataclasses.replace(labels, wrap_categories=_WRAP_CATEGORIES)
    view = resolve_view(model, feature_names, NodeLabel.names_of(class_names))
    max_depth = check_max_depth(max_depth, allow_none=True)
    layout = tree_layout(view, max_depth)
    if ax is None:
        width = float(np.clip(1.6 * layout.n_slots, 4.0, 40.0))
        height = float(np.clip(1.3 * layout.n_levels, 2.5, 20.0))
        # The whole figure is the drawing: no axes frame, ticks or margins to leave room for.
        ax = plt.figure(figsize=(width, height)).add_axes((0.01, 0.01, 0.98, 0.98))
    ax.set_axis_off()
    ax.set_xlim(-0.5, layout.n_slots - 0.5)
    ax.set_ylim(-(layout.n_levels - 0.5), 0.5)

    boxes = {}
    for node in layout.nodes:
        if node in layout.cut:
            text, color = "(...)", _CUT_COLOR
        else:
            text = "\n".join(labels.lines(view, node))
            color = view.color(node) if filled else "white"
        boxes[node] = ax.text(
            layout.x[node],
            -layout.depth[node],
            text,
            ha="center",
            va="center",
            fontsize=fontsize if fontsize is not None else 10.0,
            bbox={
                "boxstyle": "round,pad=0.3" if rounded else "square,pad=0.3",
                "facecolor": color,
                "edgecolor": "0.3",
            },
            zorder=3,
        )
    for parent, child, is_left in layout.edges:
        # Centre to centre, under the opaque boxes: only the part between boxes shows.
        px, cx = layout.x[parent], layout.x[child]
        py, cy = -layout.depth[parent], -layout.depth[child]
        ax.plot([px, cx], [py, cy], color="0.4", linewidth=0.8, zorder=1)
        if parent == 0:
            ax.annotate(
                "True" if is_left else "False",
                xy=((px + cx) / 2, (py + cy) / 2),
                ha="right" if is_left else "left",
                va="bottom",
                xytext=(-4 if is_left else 4, 0),
                textcoords="offset points",
                fontsize=8 if fontsize is None else fontsize,
                color="0.3",
                zorder=2,
            )
    if fontsize is None:
        _shrink_to_fit(ax, layout, boxes)
    return ax


def _shrink_to_fit(ax: Any, layout: Any, boxes: dict[int, Any]) -> None:
    """Scale every box's font down until neighbours on a level and across levels are apart."""
    fig = ax.figure
    for _ in range(_MAX_FIT_ROUNDS):
        fig.draw_without_rendering()  # box patches get their size only when drawn
        renderer = fig.canvas.get_renderer()
        scale = _fit_scale(ax, layout, boxes, renderer)
        if scale >= 1.0 or boxes[layout.nodes[0]].get_fontsize() <= _MIN_FONTSIZE:
            return
        size = max(boxes[layout.nodes[0]].get_fontsize() * scale * 0.97, _MIN_FONTSIZE)
        for text in boxes.values():
            text.set_fontsize(size)
        for text in ax.texts:  # the yes/no labels follow, a little smaller
            if text not in boxes.values():
                text.set_fontsize(size * 0.8)


def _fit_scale(ax: Any, layout: Any, boxes: dict[int, Any], renderer: Any) -> float:
    """Largest factor <= 1 by which all boxes may grow (or must shrink) to fit their room."""
    extents = {n: box.get_bbox_patch().get_window_extent(renderer) for n, box in boxes.items()}
    to_pixels = ax.transData.transform
    slot_px = abs(to_pixels((1.0, 0.0))[0] - to_pixels((0.0, 0.0))[0])
    level_px = abs(to_pixels((0.0, 1.0))[1] - to_pixels((0.0, 0.0))[1])
    scale = np.inf
    levels: dict[int, list[int]] = {}
    for node in layout.nodes:
        levels.setdefault(layout.depth[node], []).append(node)
    for nodes in levels.values():
        nodes.sort(key=lambda n: layout.x[n])
        for a, b in zip(nodes[:-1], nodes[1:], strict=True):
            room = (layout.x[b] - layout.x[a]) * slot_px * (1.0 - _GAP)
            scale = min(scale, room / (extents[a].width / 2 + extents[b].width / 2))
        # The outermost boxes stay inside the axes (which end half a slot past the slots).
        first, last = nodes[0], nodes[-1]
        scale = min(scale, (layout.x[first] + 0.5) * slot_px / (extents[first].width / 2))
        room_right = (layout.n_slots - 0.5 - layout.x[last]) * slot_px
        scale = min(scale, room_right / (extents[last].width / 2))
    tallest = {d: max(extents[n].height for n in nodes) for d, nodes in levels.items()}
    for d in range(len(levels) - 1):
        need = tallest[d] / 2 + tallest[d + 1] / 2
        scale = min(scale, level_px * (1.0 - _GAP) / need)
    # Half a box hangs above the top level and below the bottom one.
    scale = min(scale, level_px / tallest[0], level_px / tallest[len(levels) - 1])
    return float(scale)


def plot_importances(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    top: int = 20,
    ax: Any = None,
) -> Any:
    """Horizontal bars of the ``top`` most important features (mean decrease in impurity).

    Features the tree never splits on (importance 0) are left out.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names : sequence of str, default=None
        Display names; default to ``feature_names_in_`` (else ``x0, x1, ...``).
    top : int, default=20
        Number of features shown at most.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    plt = _pyplot()
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise ValueError(f"top must be an int >= 1, got {top!r}.")
    view = resolve_view(model, feature_names)
    importances = view.tree.compute_feature_importances()
    order = np.argsort(-importances, kind="stable")[:top]
    order = order[importances[order] > 0]
    if ax is None:
        # Constrained layout leaves room for the feature names, also in savefig.
        _, ax = plt.subplots(figsize=(6.0, 1.0 + 0.3 * max(len(order), 1)), layout="constrained")
    positions = np.arange(len(order))
    ax.barh(positions, importances[order], color="#4e79a7")
    ax.set_yticks(positions, [view.feature_names[f] for f in order])
    ax.invert_yaxis()  # most important on top
    ax.set_xlabel("importance (share of the total impurity decrease)")
    if len(order) == 0:
        ax.set_title("no splits: every importance is 0")
    return ax


def plot_split_scan(scan: Any, *, feature_name: str | None = None, fig: Any = None) -> Any:
    """Four panels of one feature's candidate splits for a binary target.

    1. Histogram of the feature, one colour per class;
    2. share of the positive class in the whole data D, in the true branch T
       (``x <= threshold``) and in the false branch F, against the threshold;
    3. entropy of D, T and F against the threshold;
    4. information gain against the threshold, the best threshold marked (also as a dashed
       line in the other panels).

    Parameters
    ----------
    scan : SplitScan
        The result of :func:`dtjit.criteria.split_scan`: any object with the attributes
        ``x``, ``y``, ``thresholds``, ``positive_class``, ``ratio_total``, ``ratio_left``,
        ``ratio_right``, ``entropy_total``, ``entropy_left``, ``entropy_right``, ``gain``,
        ``best_threshold``, ``best_gain`` and ``base``.
    feature_name : str, default=None
        Name of the feature on the x axes.
    fig : matplotlib Figure, default=None
        Figure to draw into (its contents are kept; four subplots are added); a new figure
        when None.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    required = (
        "x y thresholds positive_class ratio_total ratio_left ratio_right entropy_total "
        "entropy_left entropy_right gain best_threshold best_gain base"
    ).split()
    missing = [name for name in required if not hasattr(scan, name)]
    if missing:
        raise TypeError(f"scan lacks {missing}: pass the result of dtjit.criteria.split_scan.")
    if fig is None:
        fig = plt.figure(figsize=(11.0, 7.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True).ravel()
    name = feature_name or "feature value"
    x, y = np.asarray(scan.x), np.asarray(scan.y)
    t = np.asarray(scan.thresholds)

    hist_ax, ratio_ax, entropy_ax, gain_ax = axes
    classes = np.unique(y)
    bins = np.histogram_bin_edges(x, bins="auto") if x.size else 10
    hist_ax.hist(
        [x[y == c] for c in classes], bins=bins, stacked=True, label=[str(c) for c in classes]
    )
    hist_ax.set_ylabel("samples")
    hist_ax.set_title(f"distribution of {name} by class")
    hist_ax.legend(title="class", fontsize="small")

    ratio_ax.axhline(scan.ratio_total, color="0.3", label="D (all)")
    ratio_ax.plot(t, scan.ratio_left, label=f"T ({name} <= t)")
    ratio_ax.plot(t, scan.ratio_right, label=f"F ({name} > t)")
    ratio_ax.set_ylabel(f"share of class {scan.positive_class}")
    ratio_ax.set_ylim(-0.02, 1.02)
    ratio_ax.set_title("positive-class share")
    ratio_ax.legend(fontsize="small")

    unit = "bits" if scan.base == 2 else "nats"
    entropy_ax.axhline(scan.entropy_total, color="0.3", label="D (all)")
    entropy_ax.plot(t, scan.entropy_left, label="T")
    entropy_ax.plot(t, scan.entropy_right, label="F")
    entropy_ax.set_ylabel(f"entropy ({unit})")
    entropy_ax.set_xlabel(f"threshold t on {name}")
    entropy_ax.set_title("entropy of each part")
    entropy_ax.legend(fontsize="small")

    gain_ax.plot(t, scan.gain, color="#59a14f")
    gain_ax.plot([scan.best_threshold], [scan.best_gain], "o", color="#e15759")
    gain_ax.set_ylabel(f"information gain ({unit})")
    gain_ax.set_xlabel(f"threshold t on {name}")
    # The best split in the title: a note beside the marker would sit on the curve's peak.
    gain_ax.set_title(
        f"information gain: best t = {scan.best_threshold:.4g}, gain = {scan.best_gain:.4f}"
    )
    for ax in axes:
        ax.axvline(scan.best_threshold, color="#e15759", linestyle="--", linewidth=0.8)
    return fig


def plot_pruning_path(path_or_selection: Any, *, ax: Any = None) -> Any:
    """Total leaf impurity against alpha; with a selection, the held-out error and the choice.

    Given a pruning path (``cost_complexity_pruning_path`` or
    :func:`dtjit.pruning.pruning_path`), draws the total weighted leaf impurity ``R(T)`` of
    the subtree at each effective alpha as a step curve: it rises as alpha prunes more.
    Given the result of :func:`dtjit.select_ccp_alpha`, draws each candidate's validation or
    cross-validation error with one standard error as a band, the minimum, the one-SE limit
    (for ``rule="1se"``) and the chosen alpha, with ``R(T)`` on a second y axis.

    The alpha axis is linear up to the smallest positive alpha and logarithmic above, so
    the many small alphas of a deep tree stay apart.

    Parameters
    ----------
    path_or_selection : Bunch or PruningSelection
        Anything with ``ccp_alphas`` and ``impurities``, or with ``ccp_alphas``, ``errors``,
        ``standard_errors``, ``min_index``, ``best_index``, ``ccp_alpha``, ``rule``,
        ``method`` and ``path``.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes of the main curve (the impurity curve of a selection is on its twin).
    """
    plt = _pyplot()
    selection = path_or_selection if hasattr(path_or_selection, "errors") else None
    path = selection.path if selection is not None else path_or_selection
    try:
        alphas = np.asarray(path["ccp_alphas"], dtype=np.float64)
        impurities = np.asarray(path["impurities"], dtype=np.float64)
    except (KeyError, TypeError) as exc:
        raise TypeError(
            "plot_pruning_path expects a pruning path (ccp_alphas, impurities) or the result "
            f"of dtjit.select_ccp_alpha, got {type(path_or_selection).__name__}."
        ) from exc
    if alphas.ndim != 1 or alphas.shape != impurities.shape or alphas.size == 0:
        raise ValueError("ccp_alphas and impurities must be 1-D arrays of the same length.")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
    positive = alphas[alphas > 0]
    scale = {"linthresh": float(positive.min())} if positive.size else None

    if selection is None:
        ax.plot(alphas, impurities, marker="o", markersize=3, drawstyle="steps-post")
        ax.set_ylabel("total leaf impurity R(T)")
        ax.set_title("cost-complexity pruning path")
    else:
        candidates = np.asarray(selection.ccp_alphas, dtype=np.float64)
        errors = np.asarray(selection.errors, dtype=np.float64)
        se = np.asarray(selection.standard_errors, dtype=np.float64)
        label = "validation error" if selection.method == "validation" else "CV error"
        ax.fill_between(candidates, errors - se, errors + se, step="post", alpha=0.25,
                        color="#4e79a7", label="± 1 standard error")  # fmt: skip
        ax.plot(candidates, errors, drawstyle="steps-post", marker="o", markersize=3,
                color="#4e79a7", label=label)  # fmt: skip
        low = selection.min_index
        ax.plot([candidates[low]], [errors[low]], "s", color="#59a14f", label="minimum")
        if selection.rule == "1se":
            ax.axhline(errors[low] + se[low], color="#59a14f", linestyle=":", linewidth=1,
                       label="minimum + 1 SE")  # fmt: skip
        best = selection.best_index
        ax.axvline(selection.ccp_alpha, color="#e15759", linestyle="--", linewidth=1)
        ax.plot([candidates[best]], [errors[best]], "o", color="#e15759", markersize=7,
                label=f"chosen alpha = {selection.ccp_alpha:.3g} ({selection.rule})")  # fmt: skip
        ax.set_ylabel(label)
        ax.set_title(f"choosing ccp_alpha: {label} of each pruned subtree")
        twin = ax.twinx()
        twin.plot(alphas, impurities, drawstyle="steps-post", color="0.5", linewidth=1,
                  label="training R(T)")  # fmt: skip
        twin.set_ylabel("total leaf impurity R(T)", color="0.4")
        if scale is not None:
            twin.set_xscale("symlog", **scale)
        handles, labels = ax.get_legend_handles_labels()
        twin_handles, twin_labels = twin.get_legend_handles_labels()
        ax.legend(handles + twin_handles, labels + twin_labels, fontsize="small")
    if scale is not None:
        ax.set_xscale("symlog", **scale)
        _alpha_ticks(ax, scale["linthresh"], float(alphas.max()))
    ax.set_xlabel("effective alpha")
    return ax


def _alpha_ticks(ax: Any, linthresh: float, largest: float) -> None:
    """Ticks at 0 and at the powers of ten at least half a decade's width away from 0.

    On the symlog axis ``[0, linthresh]`` is linear and one decade wide, so a power of ten
    below ``linthresh`` sits at ``10**k / linthresh`` of that width: matplotlib's default
    ticks put one right next to 0 and their labels overlap.
    """
    from matplotlib.ticker import FixedLocator

    first = int(np.ceil(np.log10(0.5 * linthresh)))
    last = int(np.ceil(np.log10(max(largest, linthresh))))
    ax.xaxis.set_major_locator(FixedLocator([0.0, *(10.0**k for k in range(first, last + 1))]))
