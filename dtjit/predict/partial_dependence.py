"""Partial dependence of a fitted regression tree by weighted traversal (the 'recursion' method).

scikit-learn's ``sklearn.inspection.partial_dependence`` picks its ``method="recursion"`` for
regression trees (``DecisionTreeRegressor``, which dtjit's regressor registers as) and asks the
estimator for ``_compute_partial_dependence_recursion(grid, target_features)``. For each grid
point the tree is walked from the root with weight 1: at a split on a target feature the walk
follows the side the grid value takes; at any other split it follows both children, each
weighted by the fraction of the node's training weight that went to it. The partial dependence
is the weighted sum of the leaves' values reached (the weights of a point sum to 1), the mean
prediction over the training rows with the target features set to the grid point. No training
row is read: the fractions are the nodes' ``weighted_n_node_samples``.

A split on a target feature routes the grid value as ``predict`` would: ``x <= threshold`` with
x as float32 (scikit-learn's grid dtype), NaN to the node's missing side, categories by the
split's bitset (``walk_categorical.child_of_split``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.jit import TREE_LEAF, kernel
from .walk_categorical import child_of_split


@kernel
def partial_dependence_of_grid(
    grid, target_features, feature, threshold, left, missing_left, categorical_set,
    category_bits, node_weight, values, out,
):  # fmt: skip
    """Add each grid point's partial dependence to ``out`` (zeroed by the caller).

    Parameters
    ----------
    grid : ndarray of float32, shape (n_points, n_targets)
        Column ``j`` holds values of feature ``target_features[j]``.
    target_features : ndarray of int64, shape (n_targets,)
        Feature indices, each below the tree's feature count.
    feature, threshold, left, missing_left, categorical_set, category_bits : ndarray
        The tree's arrays (``_tree.Tree``); the right child of ``node`` is ``left[node] + 1``.
    node_weight : ndarray of float64, shape (n_nodes,)
        ``weighted_n_node_samples``: positive at every node.
    values : ndarray of float64, shape (n_nodes, n_values)
        What a leaf contributes (one column per output).
    out : ndarray of float64, shape (n_points, n_values)

    Notes
    -----
    One walk per grid point with an explicit stack: a pop pushes at most two children, so
    the stack never holds more entries than the tree has nodes.
    """
    n_nodes = feature.shape[0]
    stack_node = np.empty(n_nodes, dtype=np.int64)
    stack_weight = np.empty(n_nodes, dtype=np.float64)
    for g in range(grid.shape[0]):
        stack_node[0] = 0
        stack_weight[0] = 1.0
        size = 1
        while size > 0:
            size -= 1
            node = stack_node[size]
            weight = stack_weight[size]
            if left[node] == TREE_LEAF:
                for v in range(values.shape[1]):
                    out[g, v] += weight * values[node, v]
                continue
            column = -1
            for j in range(target_features.shape[0]):
                if target_features[j] == feature[node]:
                    column = j
                    break
            if column >= 0:
                stack_node[size] = child_of_split(
                    grid[g, column], categorical_set[node], category_bits, missing_left[node],
                    threshold[node], left[node],
                )  # fmt: skip
                stack_weight[size] = weight
                size += 1
            else:
                for child in range(left[node], left[node] + 2):
                    stack_node[size] = child
                    stack_weight[size] = weight * (node_weight[child] / node_weight[node])
                    size += 1


def partial_dependence_recursion(estimator: Any, grid: Any, target_features: Any) -> np.ndarray:
    """Return a fitted regressor's partial dependence on ``target_features`` at ``grid``.

    Parameters
    ----------
    estimator : DecisionTreeRegressor
        A fitted dtjit regressor.
    grid : array-like of shape (n_points, n_targets)
        Values of the target features, one column per feature.
    target_features : array-like of int, shape (n_targets,)
        Indices of the target features.

    Returns
    -------
    ndarray of float64, shape (n_points,), or (n_outputs, n_points) for several outputs
        The shapes scikit-learn's ``partial_dependence`` expects from a tree.
    """
    tree = estimator.tree_
    target_features = np.asarray(target_features)
    if target_features.ndim != 1 or not np.issubdtype(target_features.dtype, np.integer):
        raise ValueError(
            f"target_features must be a 1-d array of feature indices, got {target_features!r}."
        )
    target_features = target_features.astype(np.int64)
    bad = (target_features < 0) | (target_features >= tree.n_features)
    if bad.any():
        raise ValueError(
            f"target feature {int(target_features[bad][0])} is out of range: the tree has "
            f"{tree.n_features} features."
        )
    grid = np.ascontiguousarray(grid, dtype=np.float32)
    if grid.ndim != 2 or grid.shape[1] != target_features.shape[0]:
        raise ValueError(
            f"grid must have shape (n_points, {target_features.shape[0]}), one column per "
            f"target feature; got shape {grid.shape}."
        )
    mapped = set(_features_with_mapped_categories(estimator))
    if mapped & set(target_features.tolist()):
        raise ValueError(
            f"features {sorted(mapped)} hold categories mapped from the training data's values; "
            "the 'recursion' method reads category codes: use method='brute'."
        )
    values = tree.value.reshape(tree.node_count, -1)  # regression: one value per output
    out = np.zeros((grid.shape[0], values.shape[1]), dtype=np.float64)
    partial_dependence_of_grid(
        grid, target_features, tree.feature, tree.threshold, tree.left, tree.missing_left,
        tree.categorical_set, tree.category_bits, tree.weighted_n_node_samples,
        np.ascontiguousarray(values, dtype=np.float64), out,
    )  # fmt: skip
    return out[:, 0] if values.shape[1] == 1 else out.T


def _features_with_mapped_categories(estimator: Any) -> list[int]:
    """Features whose categories were mapped from values (a DataFrame's) at fit time."""
    features = getattr(estimator, "categorical_features_", None)
    if features is None:
        return []
    from_values = estimator.categories_from_values_
    return [int(f) for f, mapped in zip(features, from_values, strict=True) if mapped]
