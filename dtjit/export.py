"""Human-facing views of a fitted tree: text, if-then rules, Graphviz, Mermaid and JSON.

Every function takes a fitted :class:`~dtjit.DecisionTreeClassifier` or
:class:`~dtjit.DecisionTreeRegressor` (a bare :class:`~dtjit.Tree` works too), reads only the
tree's flat arrays, and words every split through one function
(:func:`dtjit._view.edge_condition`).

Names: ``feature_names`` default to the estimator's ``feature_names_in_`` (set when it was
fitted on a DataFrame), else ``x0, x1, ...``; ``class_names`` default to ``classes_``.

Examples
--------
>>> from sklearn.datasets import load_iris
>>> import dtjit
>>> iris = load_iris(as_frame=True)
>>> clf = dtjit.DecisionTreeClassifier(max_depth=2).fit(iris.data, iris.target)
>>> names = list(iris.target_names)
>>> print(dtjit.export_text(clf, class_names=names))
|--- petal length (cm) <= 2.45
|   |--- class: setosa
|--- petal length (cm) >  2.45
|   |--- petal width (cm) <= 1.75
|   |   |--- class: versicolor
|   |--- petal width (cm) >  1.75
|   |   |--- class: virginica
<BLANKLINE>
>>> dtjit.export_rules(clf, class_names=names)[0]
'IF petal length (cm) <= 2.45 THEN class = setosa (support 50, confidence 1.00)'
>>> print(dtjit.export_mermaid(clf, class_names=names).splitlines()[0])
flowchart TD
"""

from __future__ import annotations

import html
import itertools
import json
import numbers
import os
import re
from collections.abc import Sequence
from typing import Any

from ._view import (
    Condition,
    NodeLabel,
    TreeView,
    check_decimals,
    check_max_depth,
    edge_condition,
    format_numbers,
    resolve_view,
)

SORT_KEYS = (None, "support", "confidence")
DICT_FORMAT = "dtjit.tree"
DICT_FORMAT_VERSION = 1


# ------------------------------------------------------------------------------------ text
def export_text(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    max_depth: int = 10,
    spacing: int = 3,
    decimals: int = 2,
    show_weights: bool = False,
) -> str:
    """Write the tree as indented text, in the layout of :func:`sklearn.tree.export_text`.

    Same signature and options as scikit-learn's function, so switching the import is enough.
    Unlike it, a categorical (subset) split is written with its categories (``island in
    {Biscoe, Dream}``): scikit-learn's ``export_text``, ``export_graphviz`` and ``plot_tree``
    read only thresholds and print ``island <= nan`` for such a split.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names : sequence of str, default=None
        Feature names; defaults to ``feature_names_in_``, else ``x0, x1, ...``.
    class_names : sequence of str, default=None
        Class names; defaults to ``classes_``.
    max_depth : int, default=10
        Deepest split printed; a deeper subtree is printed as ``truncated branch of depth
        k`` (or as its leaf when it is a single leaf).
    spacing : int, default=3
        Width of each level's indentation (``|---`` is ``spacing=3``).
    decimals : int, default=2
        Digits after the decimal point of thresholds, weights and values.
    show_weights : bool, default=False
        Print each leaf's weighted class counts (classifiers).

    Returns
    -------
    str
        One line per edge and per leaf, each ending in a newline.

    Notes
    -----
    With the same ``feature_names`` and ``class_names`` the output equals scikit-learn's.
    The only differences are the defaults: scikit-learn names unnamed features
    ``feature_0, ...`` and ignores ``feature_names_in_``.
    """
    view = resolve_view(model, feature_names, class_names)
    max_depth = check_max_depth(max_depth, allow_none=False)
    decimals = check_decimals(decimals)
    if isinstance(spacing, bool) or not isinstance(spacing, numbers.Integral) or spacing < 1:
        raise ValueError(f"spacing must be an int >= 1, got {spacing!r}.")
    lines: list[str] = []
    # A stack of pending lines and nodes keeps the output in preorder without recursion.
    stack: list[tuple[int, int] | str] = [(0, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        node, depth = item
        indent = ("|" + " " * spacing) * depth + "|" + "-" * spacing
        if depth > max_depth and not view.is_leaf(node):
            lines.append(f"{indent} truncated branch of depth {view.subtree_depth(node)}")
        elif view.is_leaf(node):
            lines.append(indent + _text_leaf(view, node, decimals, show_weights))
        else:
            left, right = view.children(node)
            stack.append((right, depth + 1))
            stack.append(f"{indent} {_edge_text(view, node, False, decimals)}")
            stack.append((left, depth + 1))
            lines.append(f"{indent} {_edge_text(view, node, True, decimals)}")
    return "\n".join(lines) + "\n"


def _edge_text(view: TreeView, node: int, left: bool, decimals: int) -> str:
    return edge_condition(view, node, left=left).text(decimals, align=True)


def _text_leaf(view: TreeView, node: int, decimals: int, show_weights: bool) -> str:
    if not view.is_classifier:
        return " value: " + format_numbers(view.values(node), decimals)
    assert view.class_names is not None
    label = f" class: {view.class_names[view.majority(node)]}"
    if show_weights:
        counts = view.values(node) * view.weighted_samples(node)
        return " weights: " + format_numbers(counts, decimals) + label
    return label


# ----------------------------------------------------------------------------------- rules
def _leaf_conditions(view: TreeView) -> list[tuple[int, list[Condition]]]:
    """(leaf, conditions) for every leaf in id order, tightest bounds only.

    Along a path a feature may be tested several times; ``x <= 3`` and ``x <= 5`` read as
    ``x <= 3``. Two conditions merge when they have the same feature and direction; a
    missing value then satisfies the merged one only if it satisfied both.
    """
    paths: dict[int, dict[tuple[int, str], Condition]] = {0: {}}
    out = []
    for node in range(view.node_count):  # parents come before children
        path = paths.pop(node)
        if view.is_leaf(node):
            conditions = sorted(path.values(), key=lambda c: (c.feature, c.op != ">"))
            out.append((node, conditions))
            continue
        for child, is_left in zip(view.children(node), (True, False), strict=True):
            cond = edge_condition(view, node, left=is_left)
            # Subsets of known categories merge whatever their wording; others by direction.
            key = (cond.feature, "subset" if cond.known is not None else cond.op)
            if key in path:
                cond = _tighter(path[key], cond)
            paths[child] = {**path, key: cond}
    return out


def _tighter(a: Condition, b: Condition) -> Condition:
    missing = a.missing and b.missing
    allowed_a, allowed_b = a.allowed, b.allowed
    if allowed_a is not None and allowed_b is not None and a.known is not None:
        # Both must hold: the known categories in both, worded by the shorter side again.
        both = [c for c in allowed_a if c in allowed_b]
        return Condition.subset(a.feature, a.name, both, a.known, missing)
    if a.categories is not None and b.categories is not None:
        if a.op == "in":  # both must hold: the categories in both sets
            kept = tuple(c for c in a.categories if c in b.categories)
        else:  # "not in" both: excluded from either
            kept = a.categories + tuple(c for c in b.categories if c not in a.categories)
        return Condition(a.feature, a.name, a.op, a.threshold, missing, kept)
    if a.op == "<=":
        threshold = min(a.threshold, b.threshold)
    else:
        threshold = max(a.threshold, b.threshold)
    return Condition(a.feature, a.name, a.op, threshold, a.missing and b.missing)


def _records(view: TreeView, decimals: int, sort_by: str | None) -> list[dict[str, Any]]:
    if sort_by not in SORT_KEYS:
        raise ValueError(f"sort_by must be None, 'support' or 'confidence', got {sort_by!r}.")
    if sort_by == "confidence" and not view.is_classifier:
        raise ValueError("sort_by='confidence' needs a classifier; a regression rule has none.")
    records = []
    for leaf, conditions in _leaf_conditions(view):
        record: dict[str, Any] = {
            "leaf": leaf,
            "conditions": [c.to_record() for c in conditions],
            "rule": " AND ".join(c.text(decimals) for c in conditions) or "TRUE",
            "prediction": view.prediction(leaf),
        }
        if view.is_classifier:
            assert view.class_names is not None
            record["class_name"] = view.class_names[view.majority(leaf)]
            record["confidence"] = view.confidence(leaf)
        record["support"] = view.samples(leaf)
        record["weight"] = view.weighted_samples(leaf)
        records.append(record)
    if sort_by is not None:
        records.sort(key=lambda r: -r[sort_by])  # stable: ties keep leaf order
    return records


def rule_records(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    decimals: int = 2,
    sort_by: str | None = None,
) -> list[dict[str, Any]]:
    """One record (a dict of plain Python values) per leaf: the rule that leads to it.

    The rules are mutually exclusive and exhaustive: every sample satisfies the conditions
    of exactly one record, and the tree predicts that record's ``prediction`` for it; that
    holds for missing values where a split learned their direction (their training rows had
    NaN in its feature). At a split that saw no NaN, a NaN goes to the child with more
    training rows (``tree_.missing_go_to_left``), which the rules leave unsaid, as
    scikit-learn's exports do: such a sample matches no record.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names, class_names : sequence of str, default=None
        Display names (see the module docstring).
    decimals : int, default=2
        Digits after the decimal point in the ``rule`` text (the conditions keep the exact
        thresholds).
    sort_by : {None, "support", "confidence"}, default=None
        ``None`` keeps leaf id order (breadth-first); otherwise largest first.

    Returns
    -------
    list of dict
        Keys: ``leaf`` (node id); ``conditions``, a list of ``{"feature": int, "name": str,
        "op": "<=" or ">", "threshold": float, "missing": bool}`` (all must hold;
        ``missing`` says whether a missing value satisfies the condition; at a categorical
        feature ``op`` is ``"in"`` or ``"not in"``, ``threshold`` None, and ``categories``
        lists the shorter side of the known categories; a category unseen in fit counts as
        missing); ``rule``, the
        conditions as text (``"TRUE"`` for a single-leaf tree); ``prediction`` (the class
        label or the mean value); for classifiers ``class_name`` and ``confidence`` (the
        weighted fraction of the predicted class); ``support`` (training rows) and
        ``weight`` (their total sample weight).
    """
    view = resolve_view(model, feature_names, class_names)
    return _records(view, check_decimals(decimals), sort_by)


def rules_frame(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    decimals: int = 2,
    sort_by: str | None = None,
) -> Any:
    """Return the rules of :func:`rule_records` as a pandas DataFrame, one row per leaf.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names, class_names : sequence of str, default=None
        Display names (see the module docstring).
    decimals : int, default=2
        Digits after the decimal point in the ``rule`` column.
    sort_by : {None, "support", "confidence"}, default=None
        ``None`` keeps leaf id order; otherwise largest first.

    Returns
    -------
    pandas.DataFrame
        Columns ``leaf``, ``rule``, then ``class`` and ``confidence`` (classifiers) or
        ``value`` (regressors), then ``support`` and ``weight``.

    Raises
    ------
    ImportError
        If pandas is not installed.
    """
    try:
        import pandas as pd
    except ImportError as exc:  # pandas is optional: only this function needs it
        raise ImportError("rules_frame needs pandas: pip install pandas") from exc
    view = resolve_view(model, feature_names, class_names)
    records = _records(view, check_decimals(decimals), sort_by)
    if view.is_classifier:
        columns = {"class_name": "class", "confidence": "confidence"}
    else:
        columns = {"prediction": "value"}
    frame = pd.DataFrame.from_records(
        records, columns=["leaf", "rule", *columns, "support", "weight"]
    )
    return frame.rename(columns=columns)


def export_rules(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    decimals: int = 2,
    sort_by: str | None = None,
) -> list[str]:
    """One if-then rule per leaf of a fitted tree.

    The rules are mutually exclusive and exhaustive: every sample satisfies exactly one
    (missing values: see :func:`rule_records`). On
    each feature only the tightest bounds of the path are kept (``x <= 3`` and ``x <= 5``
    read as ``x <= 3``). :func:`rule_records` and :func:`rules_frame` give the same rules
    as data.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names : sequence of str, default=None
        Names of the features; defaults to ``feature_names_in_`` or ``x0, x1, ...``.
    class_names : sequence of str, default=None
        Names of the classes; defaults to ``classes_``.
    decimals : int, default=2
        Digits after the decimal point of thresholds and confidences.
    sort_by : {None, "support", "confidence"}, default=None
        ``None`` keeps breadth-first leaf order; otherwise largest first.

    Returns
    -------
    list of str
        Rules such as ``IF petal width (cm) <= 0.80 THEN class = 0 (support 50,
        confidence 1.00)``, or ``IF ... THEN value = 1.23 (support 12)`` for regressors.
    """
    view = resolve_view(model, feature_names, class_names)
    decimals = check_decimals(decimals)
    rules = []
    for r in _records(view, decimals, sort_by):
        if view.is_classifier:
            then = (
                f"class = {r['class_name']} "
                f"(support {r['support']}, confidence {r['confidence']:.{decimals}f})"
            )
        else:
            then = f"value = {r['prediction']:.{decimals}f} (support {r['support']})"
        rules.append(f"IF {r['rule']} THEN {then}")
    return rules


# ------------------------------------------------------------------------------- graphviz
def export_graphviz(
    model: Any,
    out_file: Any = None,
    *,
    max_depth: int | None = None,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | bool | None = None,
    label: str = "all",
    filled: bool = False,
    leaves_parallel: bool = False,
    impurity: bool = True,
    node_ids: bool = False,
    proportion: bool = False,
    rotate: bool = False,
    rounded: bool = False,
    special_characters: bool = False,
    precision: int | None = 3,
    fontname: str = "helvetica",
    decimals: int | None = None,
) -> str | None:
    """Write the tree in Graphviz's DOT language, as :func:`sklearn.tree.export_graphviz` does.

    Same signature, options and output as scikit-learn's function, so switching the import is
    enough; unlike it, a categorical (subset) split is written with its categories
    (``island in {Biscoe, Dream}``), where scikit-learn's prints ``island <= nan``. Render with
    ``dot -Tsvg tree.dot > tree.svg``, or with the ``graphviz`` Python package.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    out_file : str, file object or None, default=None
        Where to write the DOT source (a path is written in UTF-8); None returns it.
    max_depth : int, default=None
        Deepest level drawn; each deeper subtree is drawn as one ``(...)`` node.
    feature_names : sequence of str, default=None
        Feature names; defaults to ``feature_names_in_``, else ``x0, x1, ...``.
    class_names : sequence of str, bool or None, default=None
        Names of the classes in each node's ``class = `` line; None uses ``classes_``, True
        writes ``y[k]``, False leaves the line out.
    label : {"all", "root", "none"}, default="all"
        Where the ``gini = `` / ``samples = `` ... prefixes are written.
    filled : bool, default=False
        Fill nodes with their majority class's colour, lighter when the node is less pure,
        or for regression a shade that deepens with the node's mean.
    leaves_parallel : bool, default=False
        Draw all leaves at the bottom.
    impurity : bool, default=True
        Show each node's impurity.
    node_ids : bool, default=False
        Show each node's id (``node #k``; ``k`` is dtjit's breadth-first id).
    proportion : bool, default=False
        Show samples as a percentage of the root's and class values as fractions.
    rotate : bool, default=False
        Draw the tree left to right.
    rounded : bool, default=False
        Rounded node corners.
    special_characters : bool, default=False
        Write HTML-like labels (``&le;``, subscripts) instead of plain ones.
    precision : int, default=3
        Digits the numbers are rounded to (thresholds, impurity, values).
    fontname : str, default="helvetica"
        Font of the nodes and edges.
    decimals : int, default=None
        The same as ``precision`` (dtjit's name in its other exports); give one or the other.

    Returns
    -------
    str or None
        The DOT source of a ``digraph`` named ``Tree`` (node ``k`` is tree node ``k``) when
        ``out_file`` is None; else None.

    Notes
    -----
    With the same ``feature_names`` and ``class_names`` the source equals scikit-learn's for a
    tree with numeric splits, but for three things: the node ids are dtjit's (breadth-first,
    scikit-learn's are depth-first); ``filled`` uses dtjit's palette (the colours of
    :func:`dtjit.plot_tree` and the Jupyter display); and names are escaped fully for DOT
    (backslashes and line breaks too; ``&``, ``<`` and ``>`` in HTML-like labels), where
    scikit-learn escapes only quotes. Without ``class_names`` dtjit writes the class line
    with ``classes_``, scikit-learn leaves it out. A split that learned where missing values
    go says ``or missing``.
    """
    labels = NodeLabel.from_options(
        label=label,
        node_ids=node_ids,
        impurity=impurity,
        proportion=proportion,
        precision=precision,
        decimals=decimals,
        class_names=class_names,
    )
    view = resolve_view(model, feature_names, NodeLabel.names_of(class_names))
    max_depth = check_max_depth(max_depth, allow_none=True)
    if special_characters:
        opening, closing, line_break = "<", ">", "<br/>"

        def escape(text: str) -> str:
            text = html.escape(text, quote=False).replace("&lt;=", "&le;")
            return re.sub(r"\b([xy])\[(\d+)\]", r"\1<SUB>\2</SUB>", text)

        def node_id(line: str) -> str:
            return line.replace("#", "&#35;")
    else:
        opening, closing, line_break = '"', '"', "\\n"
        escape = _dot_escape

        def node_id(line: str) -> str:
            return line

    style = [s for s, on in (("filled", filled), ("rounded", rounded)) if on]
    out = ["digraph Tree {\n", "node [shape=box"]
    if style:
        out.append(f', style="{", ".join(style)}", color="black"')
    out.append(f', fontname="{fontname}"] ;\n')
    if leaves_parallel:
        out.append("graph [ranksep=equally, splines=polyline] ;\n")
    out.append(f'edge [fontname="{fontname}"] ;\n')
    if rotate:
        out.append("rankdir=LR ;\n")
    ranks: dict[str, list[str]] = {"leaves": []}
    angle = 45 if not rotate else -45
    for node, depth in view.preorder(max_depth):
        parent = int(view.parent[node]) if depth > 0 else None
        if max_depth is not None and depth > max_depth:
            ranks["leaves"].append(str(node))
            out.append(f'{node} [label="(...)"' + (', fillcolor="#C0C0C0"' if filled else ""))
            out.append("] ;\n")
            out.append(f"{parent} -> {node} ;\n")
            continue
        ranks.setdefault("leaves" if view.is_leaf(node) else str(depth), []).append(str(node))
        lines = [escape(line) for line in labels.lines(view, node)]
        if labels.node_ids:
            lines[0] = node_id(lines[0])
        out.append(f"{node} [label={opening}{line_break.join(lines)}{closing}")
        if filled:
            out.append(f', fillcolor="{view.color(node)}"')
        out.append("] ;\n")
        if parent is not None:
            out.append(f"{parent} -> {node}")
            if parent == 0:
                if view.children(0)[0] == node:
                    out.append(f' [labeldistance=2.5, labelangle={angle}, headlabel="True"]')
                else:
                    out.append(f' [labeldistance=2.5, labelangle={-angle}, headlabel="False"]')
            out.append(" ;\n")
    if leaves_parallel:
        for rank in sorted(ranks):
            out.append("{rank=same ; " + "; ".join(ranks[rank]) + "} ;\n")
    out.append("}")
    dot = "".join(out)
    if out_file is None:
        return dot
    if isinstance(out_file, (str, os.PathLike)):
        with open(out_file, "w", encoding="utf-8") as handle:
            handle.write(dot)
    elif hasattr(out_file, "write"):
        out_file.write(dot)
    else:
        raise TypeError(
            f"out_file must be None, a path or a file object, got {type(out_file).__name__}."
        )
    return None


def _edge_word(view: TreeView, parent: int, child: int) -> str:
    """Graph edges say whether the parent's condition holds: "yes" left, "no" right."""
    return "yes" if view.children(parent)[0] == child else "no"


def _dot_attributes(attrs: dict[str, str]) -> str:
    return ", ".join(f'{key}="{_dot_escape(value)}"' for key, value in attrs.items())


def _dot_escape(text: str) -> str:
    """Quote for DOT: backslashes and quotes escaped, newlines as centred line breaks."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# -------------------------------------------------------------------------------- mermaid
# Mermaid entity codes for the characters that would end a quoted label or be read as markup
# (``#`` first, since every code starts with it).
_MERMAID_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "|": "#124;",
    "`": "#96;",
    "&": "#amp;",
}


def _mermaid_escape(text: str) -> str:
    return "".join(_MERMAID_ENTITIES.get(ch, ch) for ch in text)


def export_mermaid(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    max_depth: int | None = None,
    decimals: int = 2,
) -> str:
    """Write the tree as a Mermaid ``flowchart TD`` (GitHub, GitLab, Jupyter Markdown).

    One Mermaid node per tree node (``n0`` is the root), its split, impurity, samples and
    prediction on separate lines, filled like :func:`export_graphviz`; edges are labelled
    ``yes`` (the node's condition holds: left child) and ``no``. Names are escaped with
    Mermaid's entity codes, so quotes, brackets, ``<`` and ``>`` are shown as written.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names, class_names : sequence of str, default=None
        Display names (see the module docstring).
    max_depth : int, default=None
        Deepest level drawn; each deeper subtree is drawn as one ``...`` node.
    decimals : int, default=2
        Digits after the decimal point.

    Returns
    -------
    str
        Mermaid source.

    Notes
    -----
    Mermaid refuses diagrams beyond its ``maxTextSize`` (50,000 characters by default),
    roughly 400 nodes here: use ``max_depth`` for large trees.
    """
    view = resolve_view(model, feature_names, class_names)
    max_depth = check_max_depth(max_depth, allow_none=True)
    decimals = check_decimals(decimals)
    out = ["flowchart TD"]
    styles = []
    for node, depth in view.preorder(max_depth):
        if max_depth is not None and depth > max_depth:
            out.append(f'    n{node}["..."]')
        else:
            lines = view.node_lines(node, decimals, fractions=False)
            label = "<br/>".join(_mermaid_escape(line) for line in lines)
            out.append(f'    n{node}["{label}"]')
            styles.append(f"    style n{node} fill:{view.color(node)}")
        if depth > 0:
            parent = int(view.parent[node])
            out.append(f"    n{parent} -->|{_edge_word(view, parent, node)}| n{node}")
    return "\n".join(out + styles) + "\n"


# ----------------------------------------------------------------------------------- JSON
def to_dict(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Return the tree as nested dicts of plain Python values, ready for :func:`json.dumps`.

    :func:`json.dumps` recurses, and fails on trees deeper than about 490 levels;
    :func:`to_json` writes any depth.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names, class_names : sequence of str, default=None
        Display names (see the module docstring).

    Returns
    -------
    dict
        Metadata: ``format`` (``"dtjit.tree"``), ``format_version``, ``estimator``,
        ``task`` (``"classification"`` or ``"regression"``), ``criterion``,
        ``n_features``, ``feature_names``, ``classes`` and ``class_names`` (None for
        regression), ``node_count``, ``n_leaves``, ``max_depth``; and ``tree``, the root
        node. Every node has ``id``, ``depth``, ``samples``, ``weighted_samples``,
        ``impurity``, ``value`` (class fractions, or ``[mean]``) and ``prediction``; a split
        node also has ``feature`` (column index), ``feature_name``, ``threshold`` (a sample
        goes to the first child iff ``x[feature] <= threshold``; None at a categorical split,
        which has ``categories_left`` and ``categories_op`` instead: a sample with a known
        category goes to the first child iff it is ``"in"`` (or ``"not in"``) that list, the
        shorter side; a missing value or a category unseen in fit follows
        ``missing_go_to_left``), ``missing_go_to_left``
        and ``children`` (``[left, right]``); a leaf has ``children == []``.
    """
    view = resolve_view(model, feature_names, class_names)
    nodes: list[dict[str, Any]] = []
    for node in range(view.node_count):  # parents before children: attach as we go
        entry: dict[str, Any] = {
            "id": node,
            "depth": int(view.depth[node]),
            "samples": view.samples(node),
            "weighted_samples": view.weighted_samples(node),
            "impurity": view.impurity(node),
            "value": view.values(node).tolist(),
            "prediction": view.prediction(node),
        }
        if not view.is_leaf(node):
            cond = edge_condition(view, node, left=True)
            entry["feature"] = cond.feature
            entry["feature_name"] = cond.name
            if cond.categories is not None:
                # A subset split: no threshold; the categories of the first child.
                entry["threshold"] = None
                entry["categories_left"] = list(cond.categories)
                entry["categories_op"] = cond.op
            else:
                entry["threshold"] = cond.threshold
            entry["missing_go_to_left"] = bool(view.tree.missing_go_to_left[node])
        entry["children"] = []
        nodes.append(entry)
        if node > 0:
            nodes[int(view.parent[node])]["children"].append(entry)
    return {
        "format": DICT_FORMAT,
        "format_version": DICT_FORMAT_VERSION,
        "estimator": view.estimator_name,
        "task": "classification" if view.is_classifier else "regression",
        "criterion": view.criterion,
        "n_features": len(view.feature_names),
        "feature_names": list(view.feature_names),
        "classes": None if view.classes is None else list(view.classes),
        "class_names": None if view.class_names is None else list(view.class_names),
        "node_count": view.node_count,
        "n_leaves": view.n_leaves,
        "max_depth": view.max_depth,
        "tree": nodes[0],
    }


def to_json(
    model: Any,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    indent: int | None = None,
) -> str:
    """:func:`to_dict` as a JSON string.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree.
    feature_names, class_names : sequence of str, default=None
        Display names (see the module docstring).
    indent : int, default=None
        Indentation of the JSON text; None writes one line.

    Returns
    -------
    str
        The text of ``json.dumps(to_dict(model, ...), indent=indent)``, byte for byte, for a
        tree of any depth: it is written without recursion.

    Notes
    -----
    Reading the text back is another matter: :func:`json.loads` recurses, two levels per tree
    level. On Python 3.10 and 3.11, under the default recursion limit (1000), it reads trees
    up to 494 levels deep when called from a script's top level, fewer from deeper in the
    stack; deeper trees need :func:`sys.setrecursionlimit` raised past twice their depth. On
    3.12.1 and 3.13.0 its limit is fixed in C, whatever :func:`sys.setrecursionlimit` says:
    747 and 4997 tree levels.
    """
    tree = to_dict(model, feature_names=feature_names, class_names=class_names)
    if indent is None and tree["max_depth"] < _JSON_DUMPS_SAFE_DEPTH:
        # json's C encoder: half the time of _dumps on a 49k-node tree. With an indent json
        # uses its Python encoder, slower than _dumps (5.2 s against 2.9-3.9 s on that tree).
        return json.dumps(tree)
    return _dumps(tree, indent)


# Trees below this depth nest 2 * depth levels: json.dumps stays far below the default
# recursion limit (1000) even when called from deep in a stack.
_JSON_DUMPS_SAFE_DEPTH = 200


# json writes tuples as lists; _dumps walks all three kinds of container itself.
_CONTAINERS = (dict, list, tuple)


def _holds_containers(value: Any) -> bool:
    """Whether ``value`` is a dict, list or tuple with a dict, list or tuple inside."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        return False
    return any(isinstance(v, _CONTAINERS) for v in value)


def _dumps(obj: Any, indent: int | str | None) -> str:
    """Return ``json.dumps(obj, indent=indent)``, written without recursion.

    Parameters
    ----------
    obj : dict, list, tuple or JSON scalar
        Nested to any depth.
    indent : int, str or None
        As for :func:`json.dumps`.

    Returns
    -------
    str
        The text of :func:`json.dumps`, byte for byte.

    Notes
    -----
    :func:`json.dumps` recurses once per level of nesting, two per tree level (a node and
    its ``children`` list): past about 490 tree levels it raises RecursionError. Here a stack
    of pending text and containers writes, in order, every container that holds containers.
    Each run of its items that hold none (scalars, and containers of scalars such as a node's
    ``value``) is one :func:`json.dumps` call, re-indented for its level and cut out of its
    brackets, so numbers, strings and separators are json's own. Cost is linear in the text.
    """
    if not _holds_containers(obj):
        return json.dumps(obj, indent=indent)
    pad = None if indent is None else indent if isinstance(indent, str) else " " * indent
    out: list[str] = []
    stack: list[Any] = [(obj, 0)]  # text to write, or (container holding containers, level)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        container, level = item
        # Around and between the items: json.dumps's separators, ", " without indent.
        last = "" if pad is None else "\n" + pad * level
        first = "" if pad is None else last + pad
        sep = ", " if pad is None else "," + first
        is_dict = isinstance(container, dict)
        pairs = container.items() if is_dict else ((None, v) for v in container)
        pieces: list[Any] = []
        for deep, run in itertools.groupby(pairs, key=lambda pair: _holds_containers(pair[1])):
            if deep:
                for key, value in run:
                    # '"key": ' as json writes it, int, float, bool and None keys included.
                    name = json.dumps({key: None})[1:-5] if is_dict else ""
                    pieces += [sep, name, (value, level + 1)]
            else:
                text = json.dumps(dict(run) if is_dict else [v for _, v in run], indent=indent)
                # Written at level 0: re-indent to this level, then cut the brackets.
                pieces += [sep, text.replace("\n", last)[1 + len(first) : -1 - len(last)]]
        pieces[0] = ("{" if is_dict else "[") + first  # no separator before the first item
        pieces.append(last + ("}" if is_dict else "]"))
        stack.extend(reversed(pieces))
    return "".join(out)
