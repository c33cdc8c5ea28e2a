"""Human-facing views of a fitted tree: if-then rules and indented text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._jit import TREE_LEAF


def _names(model: Any, feature_names: Sequence[str] | None) -> list[str]:
    n_features = model.tree_.n_features
    if feature_names is None:
        if hasattr(model, "feature_names_in_"):
            return [str(n) for n in model.feature_names_in_]
        return [f"x{f}" for f in range(n_features)]
    names = [str(n) for n in feature_names]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names, the tree has {n_features}.")
    return names


def _conclusion(model: Any, node: int, class_names: Sequence[str] | None, decimals: int) -> str:
    tree = model.tree_
    support = int(tree.n_node_samples[node])
    value = tree.value[node, 0]
    if hasattr(model, "classes_"):
        labels = model.classes_ if class_names is None else class_names
        best = int(np.argmax(value))
        return (
            f"THEN class = {labels[best]} "
            f"(support {support}, confidence {value[best]:.{decimals}f})"
        )
    return f"THEN value = {value[0]:.{decimals}f} (support {support})"


def export_rules(
    model: Any,
    *,
    feature_names: Sequence[str] | None = None,
    class_names: Sequence[str] | None = None,
    decimals: int = 2,
    sort_by: str | None = None,
) -> list[str]:
    """One if-then rule per leaf of a fitted tree.

    The rules are mutually exclusive and exhaustive: every sample satisfies exactly one. On
    each feature only the tightest bounds of the path are kept (``x <= 3`` and ``x <= 5``
    read as ``x <= 3``).

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
        The estimator.
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
        confidence 1.00)``.
    """
    check_is_fitted(model, "tree_")
    if sort_by not in (None, "support", "confidence"):
        raise ValueError(f"sort_by must be None, 'support' or 'confidence', got {sort_by!r}.")
    tree = model.tree_
    names = _names(model, feature_names)
    # bounds[node] = {feature: [lower (exclusive), upper (inclusive)]} along the root path.
    bounds: list[dict[int, list[float]]] = [dict() for _ in range(tree.node_count)]
    rules = []
    for node in range(tree.node_count):  # breadth-first: parents come before children
        if tree.left[node] == TREE_LEAF:
            parts = []
            for f in sorted(bounds[node]):
                low, high = bounds[node][f]
                if low > -np.inf:
                    parts.append(f"{names[f]} > {low:.{decimals}f}")
                if high < np.inf:
                    parts.append(f"{names[f]} <= {high:.{decimals}f}")
            condition = " AND ".join(parts) if parts else "TRUE"
            value = tree.value[node, 0]
            key = (tree.n_node_samples[node], float(value.max()))
            rules.append((key, f"IF {condition} {_conclusion(model, node, class_names, decimals)}"))
            continue
        f, t = int(tree.feature[node]), float(tree.threshold[node])
        for child, is_left in ((tree.left[node], True), (tree.right[node], False)):
            b = {k: list(v) for k, v in bounds[node].items()}
            low, high = b.get(f, [-np.inf, np.inf])
            b[f] = [low, min(high, t)] if is_left else [max(low, t), high]
            bounds[child] = b
    if sort_by == "support":
        rules.sort(key=lambda r: -r[0][0])
    elif sort_by == "confidence":
        rules.sort(key=lambda r: -r[0][1])
    return [text for _, text in rules]
