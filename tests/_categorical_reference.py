"""Slow, obvious twins of the categorical kernels: brute-force subset search and routing."""

from __future__ import annotations

import itertools
import math

import numpy as np

POISSON_EPSILON = 10.0 * float(np.finfo(np.float64).eps)


def proxy(criterion: str, left: np.ndarray, total: np.ndarray, w_left: float, w_right: float):
    """The split proxy (larger is better) of a left side, as ``_criterion.split_proxy``."""
    right = total - left
    if criterion == "squared_error":
        return left[0] ** 2 / w_left + right[0] ** 2 / w_right
    if criterion == "poisson":
        # A child whose target sum is (about) zero would predict 0: never chosen.
        if left[0] <= POISSON_EPSILON or right[0] <= POISSON_EPSILON:
            return -math.inf
        return left[0] * math.log(left[0] / w_left) + right[0] * math.log(right[0] / w_right)
    if criterion == "gini":
        gini_left = 1.0 - float(np.sum(left**2)) / w_left**2
        gini_right = 1.0 - float(np.sum(right**2)) / w_right**2
        return -w_right * gini_right - w_left * gini_left

    def entropy(counts, w):
        return -sum(c / w * math.log2(c / w) for c in counts if c > 0)

    return -w_right * entropy(right, w_right) - w_left * entropy(left, w_left)


def brute_force_subsets(cat_stats, cat_weight, cat_count, criterion, min_samples_leaf=1,
                        min_weight_leaf=0.0):  # fmt: skip
    """Score every proper subset of the categories that leaves the last one on the right.

    Returns
    -------
    list of (proxy, frozenset of category positions going left)
        One entry per subset whose children satisfy the leaf rules.
    """
    m = len(cat_weight)
    total = cat_stats.sum(axis=0)
    weight = float(np.sum(cat_weight))
    n = int(np.sum(cat_count))
    out = []
    for size in range(1, m):
        for subset in itertools.combinations(range(m - 1), size):
            chosen = list(subset)
            left = cat_stats[chosen].sum(axis=0)
            w_left = float(np.sum(cat_weight[chosen]))
            n_left = int(np.sum(cat_count[chosen]))
            if n_left < min_samples_leaf or n - n_left < min_samples_leaf:
                continue
            if w_left < min_weight_leaf or weight - w_left < min_weight_leaf:
                continue
            out.append((proxy(criterion, left, total, w_left, weight - w_left), frozenset(chosen)))
    return out


def route_row(tree, x: np.ndarray) -> list[int]:
    """The nodes a row visits, root to leaf, following ``Tree``'s documented rules."""
    node = 0
    path = [0]
    while tree.left[node] != -1:
        value = float(x[tree.feature[node]])
        k = int(tree.categorical_set[node])
        if math.isnan(value):
            go_left = bool(tree.missing_left[node])
        elif k >= 0:
            code = int(value)
            words = tree.category_bits[k]
            if code >= 64 * len(words):
                go_left = bool(tree.missing_left[node])
            else:
                go_left = bool((int(words[code // 64]) >> (code % 64)) & 1)
        else:
            go_left = value <= tree.threshold[node]
        node = int(tree.left[node]) if go_left else int(tree.right[node])
        path.append(node)
    return path
