"""Impurity and proxy kernels.

A node is summarised by a small statistics vector and its weight ``W``:

- classification: ``stats[c]`` is the weighted count of class ``c``;
- regression: ``stats[0] = sum(w * y)``, ``stats[1] = sum(w * y * y)`` and
  ``stats[2] = max(y) - min(y)`` (so a node of equal targets has impurity exactly 0); with
  ``absolute_error`` also ``stats[3]``, the weighted median.

Multi-output criteria (code ``base + MULTI_OUTPUT * k``, see ``jit``) lay the statistics out
per output: classification ``stats[o * width + c]`` is the weighted count of class ``c`` of
output ``o`` (``width``: the largest number of classes, smaller outputs padded with zeros);
regression ``stats[o]``, ``stats[k + o]`` and ``stats[2k + o]`` are ``sum(w * y_o)``,
``sum(w * y_o**2)`` and ``range(y_o)``. Their impurity and proxy are scikit-learn's: the mean
over outputs of each output's impurity.

``poisson`` and ``absolute_error`` impurities need the node's samples, not only its sums:
:func:`poisson_loss` and ``sweep_absolute_error.absolute_error_of_segment`` compute them (once per
node, for the chosen split's children).

During the split sweep only the "sweep statistics" are accumulated (the class counts, or
``sum(w * y)``); the impurity of the winner is computed once from the full statistics.

The formulas are written exactly as scikit-learn writes them (same operations in the same
order), so that the proxy of a candidate has the same floating-point value in both libraries
and near-ties resolve the same way.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import (
    ENTROPY,
    EPSILON,
    GAIN_RATIO,
    GINI,
    MULTI_OUTPUT,
    POISSON,
    SQUARED_ERROR,
    callee_kernel,
    inline_kernel,
    kernel,
)

LN2 = math.log(2.0)
# scikit-learn's Poisson criterion rejects children whose target sum is at most this (the
# right sum is a difference, so an exact 0 may come out as rounding noise).
POISSON_EPSILON = 10.0 * EPSILON


@inline_kernel
def is_classification(criterion):
    """Whether ``criterion`` scores class counts (the sweeps may skip same-class runs)."""
    return criterion == GINI or criterion == ENTROPY or criterion == GAIN_RATIO


@inline_kernel
def is_multi_output(criterion):
    """Whether ``criterion`` is a multi-output code (``base + MULTI_OUTPUT * n_outputs``)."""
    return criterion >= MULTI_OUTPUT


@inline_kernel
def n_outputs_of(criterion):
    """Return the number of outputs a criterion code scores (1 for single-output codes)."""
    return max(1, criterion // MULTI_OUTPUT)


@inline_kernel
def base_criterion(criterion):
    """Return the per-output criterion of a code: ``GINI``, ``ENTROPY`` or ``SQUARED_ERROR``."""
    return criterion % MULTI_OUTPUT


@inline_kernel
def log2(x):
    """Base-2 logarithm computed as ``ln(x) / ln(2)`` (scikit-learn's convention)."""
    return math.log(x) / LN2


@callee_kernel
def node_impurity(criterion, stats, weight, multi_output_search):
    """Impurity of a node from its statistics.

    Parameters
    ----------
    criterion : int
        A criterion code of ``jit``; a multi-output code only with ``multi_output_search``.
    stats : ndarray of float64, shape (n_stats,)
        Class counts (classification) or ``[sum(w*y), sum(w*y*y), range(y)]`` (regression).
    weight : float
        Weighted number of samples of the node, ``> 0``.
    multi_output_search : True or None
        None when the fit has one output: the multi-output impurity is then left out of
        the compiled code (``grow.search_switches``).

    Returns
    -------
    float
        Gini index, entropy in bits (also for ``gain_ratio``), or the weighted variance.
    """
    if multi_output_search is not None and is_multi_output(criterion):
        return multi_output_impurity(criterion, stats, weight)
    if criterion == GINI:
        sq_count = 0.0
        for c in range(stats.shape[0]):
            sq_count += stats[c] * stats[c]
        return gini_from_squares(sq_count, weight)
    if criterion == ENTROPY or criterion == GAIN_RATIO:
        entropy = 0.0
        for c in range(stats.shape[0]):
            entropy += entropy_term(stats[c], weight)
        return entropy
    if stats[2] == 0.0:
        return 0.0  # every target equal: pure, whatever the rounding of the formula below
    mean = stats[0] / weight
    return stats[1] / weight - mean * mean


@inline_kernel
def entropy_term(count, weight):
    """``-p * log2(p)`` of one class with ``p = count / weight`` (0 for an absent class)."""
    if count > 0.0:
        p = count / weight
        return -(p * log2(p))
    return 0.0


@inline_kernel
def gini_from_squares(sq_count, weight):
    """Gini index ``1 - sum(count**2) / W**2`` from the summed squared class counts."""
    return 1.0 - sq_count / (weight * weight)


@inline_kernel
def children_proxy(impurity_left, impurity_right, weight_left, weight_right):
    """Classification proxy of a split, larger is better: ``-W_r * I_r - W_l * I_l``.

    Notes
    -----
    It differs from the impurity improvement by terms constant within a node, so it ranks the
    node's candidates the same way. A side of weight zero yields NaN, which never compares
    greater than the best score. The split sweep computes the per-class sums itself and calls
    these scalar helpers: a helper taking arrays pays reference-count updates per call.
    """
    return -weight_right * impurity_right - weight_left * impurity_left


@inline_kernel
def squared_error_proxy(sum_left, sum_right, weight_left, weight_right):
    """Regression proxy ``s_l**2 / W_l + s_r**2 / W_r`` (larger is better)."""
    return sum_left * sum_left / weight_left + sum_right * sum_right / weight_right


@inline_kernel
def poisson_proxy(sum_left, sum_right, weight_left, weight_right):
    """scikit-learn's Poisson proxy ``s_l * log(s_l / W_l) + s_r * log(s_r / W_r)``.

    ``-inf`` (never chosen) when a child's target sum is at most ``POISSON_EPSILON``: its
    mean prediction would not be positive.
    """
    if sum_left <= POISSON_EPSILON or sum_right <= POISSON_EPSILON:
        return -np.inf
    return sum_left * math.log(sum_left / weight_left) + sum_right * math.log(
        sum_right / weight_right
    )


@callee_kernel
def poisson_loss(idx, start, end, y, sample_weight, y_sum, weight):
    """Half Poisson deviance ``sum(w * y * log(y / mean)) / W`` of the samples ``idx[start:end]``.

    Returns ``inf`` when ``y_sum <= POISSON_EPSILON`` (scikit-learn's ``poisson_loss``);
    ``y * log(y / mean)`` is 0 for ``y == 0``.
    """
    if y_sum <= POISSON_EPSILON:
        return np.inf
    y_mean = y_sum / weight
    loss = 0.0
    for p in range(start, end):
        i = idx[p]
        if y[i] != 0.0:
            loss += sample_weight[i] * (y[i] * math.log(y[i] / y_mean))
    return loss / weight


@inline_kernel
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
        impurity - weight_right / weight * impurity_right - weight_left / weight * impurity_left
    )


@inline_kernel
def split_proxy(criterion, left, total, n_sweep, weight_left, weight_right):
    """Proxy of one candidate split from its left sweep statistics (larger is better).

    Parameters
    ----------
    criterion : int
        Criterion code.
    left, total : ndarray of float64
        Sweep statistics of the left side and of the node; the right side is ``total - left``.
    n_sweep : int
        Number of sweep statistics.
    weight_left, weight_right : float
        Weights of the two sides.

    Notes
    -----
    The same operations in the same order as the exact sweep, which computes its proxies
    inline (it scores many more candidates, and a call taking arrays costs reference-count
    updates per candidate); the histogram and random splitters score few candidates per
    (node, feature) and share this helper.
    """
    if is_multi_output(criterion):
        return multi_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right)
    return single_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right)


@inline_kernel
def single_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right):
    """:func:`split_proxy` for a single-output criterion.

    The histogram sweep calls this one in its innermost loop: the multi-output branch of
    :func:`split_proxy` there made single-output hist fits 12-15 % slower (measured), and
    the hist splitter has no multi-output trees.
    """
    if criterion == SQUARED_ERROR:
        return squared_error_proxy(left[0], total[0] - left[0], weight_left, weight_right)
    if criterion == POISSON:
        return poisson_proxy(left[0], total[0] - left[0], weight_left, weight_right)
    if criterion == GINI:
        sq_left = 0.0
        sq_right = 0.0
        for c in range(n_sweep):
            count = left[c]
            sq_left += count * count
            count = total[c] - left[c]
            sq_right += count * count
        return children_proxy(
            gini_from_squares(sq_left, weight_left),
            gini_from_squares(sq_right, weight_right),
            weight_left,
            weight_right,
        )
    entropy_left = 0.0
    entropy_right = 0.0
    for c in range(n_sweep):
        entropy_left += entropy_term(left[c], weight_left)
        entropy_right += entropy_term(total[c] - left[c], weight_right)
    return children_proxy(entropy_left, entropy_right, weight_left, weight_right)


@kernel
def multi_output_impurity(criterion, stats, weight):
    """Impurity of a node for a multi-output criterion: the mean of the outputs' impurities.

    Parameters
    ----------
    criterion : int
        A multi-output code (``base + MULTI_OUTPUT * n_outputs``).
    stats : ndarray of float64
        The node's statistics in the multi-output layout (module docstring).
    weight : float
        Weighted number of samples of the node, ``> 0``.

    Returns
    -------
    float
        ``sum_o impurity_o / n_outputs`` (scikit-learn's multi-output impurity). An output
        whose targets are all equal contributes exactly 0, as in :func:`node_impurity`.
    """
    n_outputs = n_outputs_of(criterion)
    base = base_criterion(criterion)
    total = 0.0
    if base == SQUARED_ERROR:
        for o in range(n_outputs):
            if stats[2 * n_outputs + o] != 0.0:
                mean = stats[o] / weight
                total += stats[n_outputs + o] / weight - mean * mean
        return total / n_outputs
    width = stats.shape[0] // n_outputs
    for o in range(n_outputs):
        if base == GINI:
            sq_count = 0.0
            for c in range(o * width, (o + 1) * width):
                sq_count += stats[c] * stats[c]
            total += gini_from_squares(sq_count, weight)
        else:
            for c in range(o * width, (o + 1) * width):
                total += entropy_term(stats[c], weight)
    return total / n_outputs


@inline_kernel
def multi_output_proxy(criterion, left, total, n_sweep, weight_left, weight_right):
    """Proxy of a candidate split for a multi-output criterion (larger is better).

    Notes
    -----
    scikit-learn's operations in its order: squared error sums the squared sums of all
    outputs per side before dividing by the side's weight; Gini and entropy add the
    outputs' impurities per side and divide by ``n_outputs`` before weighting the sides.
    With one output each is the single-output proxy, bit for bit.
    """
    n_outputs = n_outputs_of(criterion)
    base = base_criterion(criterion)
    if base == SQUARED_ERROR:
        sq_left = 0.0
        sq_right = 0.0
        for o in range(n_outputs):
            sq_left += left[o] * left[o]
            right = total[o] - left[o]
            sq_right += right * right
        return sq_left / weight_left + sq_right / weight_right
    width = n_sweep // n_outputs
    impurity_left = 0.0
    impurity_right = 0.0
    for o in range(n_outputs):
        if base == GINI:
            sq_left = 0.0
            sq_right = 0.0
            for c in range(o * width, (o + 1) * width):
                count = left[c]
                sq_left += count * count
                count = total[c] - left[c]
                sq_right += count * count
            impurity_left += gini_from_squares(sq_left, weight_left)
            impurity_right += gini_from_squares(sq_right, weight_right)
        else:
            for c in range(o * width, (o + 1) * width):
                impurity_left += entropy_term(left[c], weight_left)
                impurity_right += entropy_term(total[c] - left[c], weight_right)
    return children_proxy(
        impurity_left / n_outputs, impurity_right / n_outputs, weight_left, weight_right
    )
