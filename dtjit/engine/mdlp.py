"""Fayyad & Irani's MDLP discretisation of one sorted column (compiled).

Fayyad, U. M. & Irani, K. B. (1993), *Multi-interval discretization of continuous-valued
attributes for classification learning*, IJCAI-93, 1022-1027.

A column arrives sorted, without missing values, with the class code of each sample. It is
collapsed into *groups* of equal values with prefix class counts, so an interval of groups
``[lo, hi)`` has class counts ``prefix[hi] - prefix[lo]`` in O(n_classes). The interval is
split at the boundary point minimising the class-information entropy

    E(A, T; S) = |S1| / |S| * Ent(S1) + |S2| / |S| * Ent(S2)

and the cut is kept iff

    Gain(A, T; S) > log2(N - 1) / N + Delta(A, T; S) / N,
    Delta = log2(3^k - 2) - [k * Ent(S) - k1 * Ent(S1) - k2 * Ent(S2)],

with entropies in bits and k, k1, k2 the numbers of classes present in S, S1, S2. Accepted
cuts split both halves again; an explicit stack replaces the paper's recursion.
"""

from __future__ import annotations

import math

import numpy as np

from .criterion import entropy_term
from .jit import callee_kernel, inline_kernel, kernel
from .sorting import stable_order

LOG2_3 = math.log2(3.0)


@callee_kernel
def value_groups(sorted_values, sorted_codes, n_classes):
    """Collapse a sorted column into groups of equal values.

    Parameters
    ----------
    sorted_values : ndarray of float64, shape (n,)
        The column's values in increasing order, no NaN.
    sorted_codes : ndarray of int32, shape (n,)
        Class code (``0 .. n_classes - 1``) of each sorted value.
    n_classes : int
        Number of classes.

    Returns
    -------
    group_value : ndarray of float64, shape (n_groups,)
        The distinct values, increasing.
    prefix : ndarray of float64, shape (n_groups + 1, n_classes)
        ``prefix[g, c]`` is the number of samples of class ``c`` in groups ``0 .. g - 1``.
    boundary : ndarray of bool, shape (n_groups,)
        ``boundary[g]`` (``g >= 1``): the cut between groups ``g - 1`` and ``g`` is a class
        boundary point, i.e. the two groups are not both pure in one and the same class.
        ``boundary[0]`` is False.

    Notes
    -----
    Cuts are only ever placed between groups, so whether a cut is a boundary point does not
    depend on the interval it is evaluated in: it is computed once here. O(n + G * k).
    """
    n = sorted_values.shape[0]
    n_groups = 0
    for p in range(n):
        if p == 0 or sorted_values[p] != sorted_values[p - 1]:
            n_groups += 1
    group_value = np.empty(n_groups, dtype=np.float64)
    prefix = np.zeros((n_groups + 1, n_classes), dtype=np.float64)
    # The class of each group if it is pure, -1 if it holds several classes.
    pure_class = np.empty(n_groups, dtype=np.int64)
    g = -1
    for p in range(n):
        c = sorted_codes[p]
        if p == 0 or sorted_values[p] != sorted_values[p - 1]:
            g += 1
            group_value[g] = sorted_values[p]
            pure_class[g] = c
            for k in range(n_classes):
                prefix[g + 1, k] = prefix[g, k]
        elif pure_class[g] != c:
            pure_class[g] = -1
        prefix[g + 1, c] += 1.0
    boundary = np.zeros(n_groups, dtype=np.bool_)
    for g in range(1, n_groups):
        boundary[g] = pure_class[g] == -1 or pure_class[g] != pure_class[g - 1]
    return group_value, prefix, boundary


@inline_kernel
def interval_entropy(prefix, lo, hi, n_classes):
    """Entropy in bits, size and number of classes present of the groups ``[lo, hi)``."""
    size = 0.0
    for c in range(n_classes):
        size += prefix[hi, c] - prefix[lo, c]
    entropy = 0.0
    present = 0
    for c in range(n_classes):
        count = prefix[hi, c] - prefix[lo, c]
        entropy += entropy_term(count, size)
        if count > 0.0:
            present += 1
    return entropy, size, present


@inline_kernel
def mdlp_accepts(gain, size, k, entropy, k_left, entropy_left, k_right, entropy_right):
    """Fayyad & Irani's MDL acceptance test of one binary cut.

    Notes
    -----
    ``log2(3^k - 2)`` is written ``k log2(3) + log2(1 - 2 / 3^k)`` so that it stays finite
    for any number of classes (``3.0 ** k`` overflows to inf past k = 646, and then
    ``2 / inf = 0`` is exact enough).

    A cut of fewer than 2 samples is refused: ``log2(N - 1)`` is -inf at ``N = 1`` (which
    accepted any cut) and NaN below (which refused every one). Only weighted counts (a tree's
    ``mdl_stop`` with sample weights) reach it: an interval of one row has no cut.
    """
    if size < 2.0:
        return False
    log2_3k_minus_2 = k * LOG2_3 + math.log2(1.0 - 2.0 / 3.0**k)
    delta = log2_3k_minus_2 - (k * entropy - k_left * entropy_left - k_right * entropy_right)
    return gain > (math.log2(size - 1.0) + delta) / size


@callee_kernel
def mdlp_cut_groups(prefix, boundary, min_samples_split, max_depth):
    """Find the groups at which MDLP cuts a column, in increasing order.

    Parameters
    ----------
    prefix : ndarray of float64, shape (n_groups + 1, n_classes)
        Prefix class counts of the groups (:func:`value_groups`).
    boundary : ndarray of bool, shape (n_groups,)
        Which cuts are class boundary points.
    min_samples_split : int
        Intervals with fewer samples are not split (2 disables the limit).
    max_depth : int
        Intervals at this depth of the recursion are not split (the whole column has depth
        0); a huge value disables the limit.

    Returns
    -------
    ndarray of int64, shape (n_cuts,)
        Group ``g`` in the output means a cut between groups ``g - 1`` and ``g``.

    Notes
    -----
    Depth-first with an explicit stack of ``(lo, hi, depth)`` intervals. Every accepted cut
    pushes two intervals and there are fewer than ``n_groups`` cuts, so ``2 * n_groups + 1``
    entries always suffice. Among the boundary points of an interval the one with the smallest
    E(A, T; S) wins; the lowest one on ties. Cost: O(n_groups * n_classes) per level of the
    recursion.
    """
    n_groups = prefix.shape[0] - 1
    n_classes = prefix.shape[1]
    cuts = np.empty(max(n_groups - 1, 0), dtype=np.int64)
    n_cuts = 0
    stack = np.empty((2 * n_groups + 1, 3), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n_groups
    stack[0, 2] = 0
    top = 1
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        depth = stack[top, 2]
        if hi - lo < 2 or depth >= max_depth:
            continue
        entropy, size, k = interval_entropy(prefix, lo, hi, n_classes)
        if k < 2 or size < min_samples_split:
            continue  # a pure interval gains nothing from any cut
        best_e = np.inf
        best_cut = -1
        best_entropy_left = 0.0
        best_entropy_right = 0.0
        best_k_left = 0
        best_k_right = 0
        for b in range(lo + 1, hi):
            if not boundary[b]:
                continue  # the minimum of E is always at a boundary point (Fayyad & Irani)
            entropy_left, size_left, k_left = interval_entropy(prefix, lo, b, n_classes)
            entropy_right, size_right, k_right = interval_entropy(prefix, b, hi, n_classes)
            e = size_left / size * entropy_left + size_right / size * entropy_right
            if e < best_e:
                best_e = e
                best_cut = b
                best_entropy_left = entropy_left
                best_entropy_right = entropy_right
                best_k_left = k_left
                best_k_right = k_right
        if best_cut < 0:
            continue
        if not mdlp_accepts(
            entropy - best_e,
            size,
            k,
            entropy,
            best_k_left,
            best_entropy_left,
            best_k_right,
            best_entropy_right,
        ):
            continue
        cuts[n_cuts] = best_cut
        n_cuts += 1
        stack[top, 0] = lo
        stack[top, 1] = best_cut
        stack[top, 2] = depth + 1
        stack[top + 1, 0] = best_cut
        stack[top + 1, 1] = hi
        stack[top + 1, 2] = depth + 1
        top += 2
    # Ascending: the engine's sort, not np.sort (numba's quicksort compiles for seconds), on
    # float64 keys (exact: group indices) as the other callers' keys, so it compiles once.
    keys = np.empty(n_cuts, dtype=np.float64)
    for j in range(n_cuts):
        keys[j] = cuts[j]
    order = stable_order(keys)
    ascending = np.empty(n_cuts, dtype=cuts.dtype)
    for j in range(n_cuts):
        ascending[j] = cuts[order[j]]
    return ascending


@kernel
def mdlp_cut_points(sorted_values, sorted_codes, n_classes, min_samples_split, max_depth):
    """MDLP cut points of one sorted column.

    Parameters
    ----------
    sorted_values : ndarray of float64, shape (n,)
        Non-missing values in increasing order.
    sorted_codes : ndarray of int32, shape (n,)
        Class code of each sorted value.
    n_classes : int
        Number of classes.
    min_samples_split, max_depth : int
        Safety limits of :func:`mdlp_cut_groups`.

    Returns
    -------
    ndarray of float64, shape (n_cuts,)
        Increasing cut points; each is the midpoint ``a / 2 + b / 2`` of the two distinct
        values ``a < b`` it separates (``a`` itself if the midpoint rounds up to ``b``), so
        ``x <= cut`` holds exactly for the values up to ``a``.
    """
    group_value, prefix, boundary = value_groups(sorted_values, sorted_codes, n_classes)
    groups = mdlp_cut_groups(prefix, boundary, min_samples_split, max_depth)
    out = np.empty(groups.shape[0], dtype=np.float64)
    for j in range(groups.shape[0]):
        low = group_value[groups[j] - 1]
        high = group_value[groups[j]]
        cut = low / 2.0 + high / 2.0  # halves: the sum cannot overflow
        out[j] = cut if cut < high else low
    return out


@inline_kernel
def mdlp_accepts_split(left, right, weight_left, weight_right):
    """:func:`mdlp_accepts` for a binary split given its children's (weighted) class counts.

    Parameters
    ----------
    left, right : ndarray of float64, shape (n_classes,)
        Class counts of the two children.
    weight_left, weight_right : float
        Their weights (sums of the counts).

    Notes
    -----
    ``N`` is the node's weight, so integer sample weights act as repeated rows; with unit
    weights it is the number of samples, as in the paper. The gain is computed as in
    :func:`mdlp_cut_groups`, so a tree and the discretiser accept the same cuts.
    """
    weight = weight_left + weight_right
    entropy = 0.0
    entropy_left = 0.0
    entropy_right = 0.0
    k = 0
    k_left = 0
    k_right = 0
    for c in range(left.shape[0]):
        count = left[c] + right[c]
        entropy += entropy_term(count, weight)
        entropy_left += entropy_term(left[c], weight_left)
        entropy_right += entropy_term(right[c], weight_right)
        k += count > 0.0
        k_left += left[c] > 0.0
        k_right += right[c] > 0.0
    e = weight_left / weight * entropy_left + weight_right / weight * entropy_right
    return mdlp_accepts(
        entropy - e, weight, k, entropy, k_left, entropy_left, k_right, entropy_right
    )
