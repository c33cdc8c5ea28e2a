"""Finish a grown tree: node values in the targets' units, breadth-first ids, split sets.

The last step of :func:`dtjit.engine.fit`. The builders return node statistics in the
rescaled units of ``prepare.weighted_rows`` and, for best-first growth, ids in creation
order; the finished arrays are ``Tree``'s contract (see :class:`records.TreeArrays`).
"""

from __future__ import annotations

import numpy as np

from . import grow
from .jit import ABSOLUTE_ERROR, TREE_LEAF
from .records import FitSpec, TreeArrays, WeightedRows
from .sweep_absolute_error import MEDIAN_STAT


def finish(spec: FitSpec, built: tuple, node_bits: np.ndarray, rows: WeightedRows) -> TreeArrays:
    """Return the finished tree's arrays from a builder's result.

    Parameters
    ----------
    spec : FitSpec
        The fit's settings.
    built, node_bits
        What ``grow.build`` or ``grow.build_hist`` returned.
    rows : WeightedRows
        The rows the tree was grown on (their scales).

    Returns
    -------
    TreeArrays

    Raises
    ------
    ValueError
        If a node's value or impurity overflows float64.
    """
    (
        feature, threshold, left, right, missing_left, _depth,
        node_stats, weight, impurity, n_node_samples,
    ) = built  # fmt: skip
    missing_learned = (missing_left >= grow.LEARNED_FLAG).astype(np.uint8)
    missing_left = missing_left % grow.LEARNED_FLAG
    value, impurity = node_values(spec, node_stats, weight, impurity, rows)
    arrays = {
        "feature": feature,
        "threshold": threshold,
        "left": left,
        "right": right,
        "value": value,
        "impurity": impurity,
        "n_node_samples": n_node_samples,
        "weighted_n_node_samples": weight / rows.weight_scale,
        "missing_left": missing_left,
        "missing_learned": missing_learned,
    }
    if spec.max_leaf_nodes > 0:  # best-first ids are in creation order
        arrays = renumber_breadth_first(arrays)
    categorical = categorical_split_arrays(arrays, node_bits, spec.cat_slot)
    # A subset split's NaN side is in its split row; exports always show it.
    arrays["missing_learned"][categorical["categorical_set"] >= 0] = 0
    return TreeArrays(**arrays, **categorical)


def node_values(
    spec: FitSpec,
    node_stats: np.ndarray,
    weight: np.ndarray,
    impurity: np.ndarray,
    rows: WeightedRows,
) -> tuple[np.ndarray, np.ndarray]:
    """Return every node's ``value`` (n_nodes, n_outputs, n_classes) and impurity, unscaled.

    Class fractions for classification, the weighted median for absolute error, means for
    the other regression criteria.
    """
    n_outputs = spec.n_outputs
    if spec.criterion == ABSOLUTE_ERROR:
        value = node_stats[:, MEDIAN_STAT].reshape(-1, 1, 1)
        if not (np.isfinite(value).all() and np.isfinite(impurity).all()):
            raise ValueError(
                "criterion='absolute_error' overflows float64 on this y (a median of two "
                "values or a mean absolute deviation passes 1.8e308: |y| is near 9e307 or "
                "larger); rescale y before fitting."
            )
        return value, impurity
    if not spec.is_regression:
        n_classes = rows.n_stats // n_outputs
        return (node_stats / weight[:, None]).reshape(-1, n_outputs, n_classes), impurity
    target_scale = rows.target_scale
    # The first n_outputs statistics are the sums of w * y (sweep_multioutput's layout).
    value = (node_stats[:, :n_outputs] / weight[:, None] / target_scale).reshape(-1, n_outputs, 1)
    with np.errstate(over="ignore"):
        # Two divisions: the squared factor alone leaves float64's range for targets below
        # 1e-154 (2**-530 squared), and its 0 or inf would turn every impurity into 0 or a
        # false "overflows".
        impurity = impurity / target_scale / target_scale
    if not np.isfinite(impurity).all():
        raise ValueError(
            "The variance of y overflows float64 (|y| is near 1e154 or larger); "
            "rescale y before fitting."
        )
    return value, impurity


def renumber_breadth_first(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Reorder a tree's arrays so node ids are breadth-first (children left before right)."""
    order = grow.breadth_first_order(arrays["left"], arrays["right"])
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.shape[0])
    out = {name: a[order] for name, a in arrays.items()}
    for side in ("left", "right"):
        child = out[side]
        is_split = child != TREE_LEAF
        child[is_split] = new_id[child[is_split]].astype(np.int32)
    return out


def categorical_split_arrays(
    arrays: dict[str, np.ndarray], node_bits: np.ndarray, cat_slot: np.ndarray
) -> dict[str, np.ndarray]:
    """Turn the builders' split rows into the tree's ``categorical_set`` / ``category_bits``.

    The builders store a categorical split's split-row index (its creation id) as the
    node's ``threshold``; here each such node gets the next row of the bitset table (in node
    order), its learned ``missing_left``, and the threshold NaN (``Tree``'s contract).
    ``arrays`` (already in breadth-first order) is modified in place.
    """
    feature = arrays["feature"]
    n_words = node_bits.shape[1] - 1
    is_cat = np.zeros(feature.shape[0], dtype=bool)
    split = feature >= 0
    is_cat[split] = cat_slot[feature[split]] >= 0
    rows = node_bits[arrays["threshold"][is_cat].astype(np.int64)]
    categorical_set = np.full(feature.shape[0], -1, dtype=np.int32)
    categorical_set[is_cat] = np.arange(rows.shape[0], dtype=np.int32)
    arrays["missing_left"][is_cat] = rows[:, n_words].astype(np.uint8)
    arrays["threshold"][is_cat] = np.nan
    return {
        "categorical_set": categorical_set,
        "category_bits": np.ascontiguousarray(rows[:, :n_words]),
    }
