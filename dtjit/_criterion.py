"""Impurity and proxy kernels.

A node is summarised by a small statistics vector and its weight ``W``:

- classification: ``stats[c]`` is the weighted count of class ``c``;
- regression (``squared_error``): ``stats[0] = sum(w * y)`` and ``stats[1] = sum(w * y * y)``.

During the split sweep only the "sweep statistics" are accumulated (the class counts, or
``sum(w * y)``); the impurity of the winner is computed once from the full statistics.

The formulas are written exactly as scikit-learn writes them (same operations in the same
order), so that the proxy of a candidate has the same floating-point value in both libraries
and near-ties resolve the same way.
"""

from __future__ import annotations

import math

from ._jit import ENTROPY, GINI, kernel

LN2 = math.log(2.0)


@kernel
def log2(x):
    """Base-2 logarithm computed as ``ln(x) / ln(2)`` (scikit-learn's convention)."""
    return math.log(x) / LN2


@kernel
def node_impurity(criterion, stats, weight):
    """Impurity of a node from its statistics.

    Parameters
    ----------
    criterion : int
        A criterion code of ``_jit``.
    stats : ndarray of float64, shape (n_stats,)
        Class counts (classification) or ``[sum(w*y), sum(w*y*y)]`` (regression).
    weight : float
        Weighted number of samples of the node, ``> 0``.

    Returns
    -------
    float
        Gini index, entropy in bits, or the weighted variance.
    """
    if criterion == GINI:
        sq_count = 0.0
        for c in range(stats.shape[0]):
            sq_count += stats[c] * stats[c]
        return 1.0 - sq_count / (weight * weight)
    if criterion == ENTROPY:
        entropy = 0.0
        for c in range(stats.shape[0]):
            if stats[c] > 0.0:
                p = stats[c] / weight
                entropy -= p * log2(p)
        return entropy
    mean = stats[0] / weight
    return stats[1] / weight - mean * mean


@kernel
def proxy_improvement(criterion, left, total, n_sweep, weight_left, weight):
    """Cheap score of a candidate split, larger is better.

    Parameters
    ----------
    criterion : int
        A criterion code.
    left : ndarray of float64
        Sweep statistics of the left side (first ``n_sweep`` entries are used).
    total : ndarray of float64
        Statistics of the node; the right side is ``total - left``.
    n_sweep : int
        Number of sweep statistics (classes, or 1 for regression).
    weight_left, weight : float
        Weight of the left side and of the node.

    Returns
    -------
    float
        ``-W_r * impurity_r - W_l * impurity_l`` for classification and
        ``s_l^2 / W_l + s_r^2 / W_r`` for squared error: both differ from the impurity
        improvement by terms constant within a node, so they rank candidates the same way.

    Notes
    -----
    A side of weight zero yields NaN, which never compares greater than the best score, so
    such candidates are never chosen.
    """
    weight_right = weight - weight_left
    if criterion == GINI:
        sq_left = 0.0
        sq_right = 0.0
        for c in range(n_sweep):
            count = left[c]
            sq_left += count * count
            count = total[c] - left[c]
            sq_right += count * count
        gini_left = 1.0 - sq_left / (weight_left * weight_left)
        gini_right = 1.0 - sq_right / (weight_right * weight_right)
        return -weight_right * gini_right - weight_left * gini_left
    if criterion == ENTROPY:
        entropy_left = 0.0
        entropy_right = 0.0
        for c in range(n_sweep):
            count = left[c]
            if count > 0.0:
                count /= weight_left
                entropy_left -= count * log2(count)
            count = total[c] - left[c]
            if count > 0.0:
                count /= weight_right
                entropy_right -= count * log2(count)
        return -weight_right * entropy_right - weight_left * entropy_left
    sum_left = left[0]
    sum_right = total[0] - left[0]
    return sum_left * sum_left / weight_left + sum_right * sum_right / weight_right


@kernel
def impurity_improvement(
    impurity, impurity_left, impurity_right, weight_left, weight_right, weight, weight_root
):
    """Weighted impurity decrease of a split, as used by ``min_impurity_decrease``.

    Returns
    -------
    float
        ``W / W_root * (impurity - W_r / W * impurity_r - W_l / W * impurity_l)``.
    """
    return (weight / weight_root) * (
        impurity
        - weight_right / weight * impurity_right
        - weight_left / weight * impurity_left
    )
