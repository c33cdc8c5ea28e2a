"""Traversal kernels for trees with categorical (subset) splits.

The fast kernels of ``_predict`` read a packed 8-byte node with a float32 threshold; a subset
split needs a bitset lookup instead, so trees holding one are routed here. Inputs are
float32, C-contiguous blocks as in ``_predict``; the same scan reports infinity anywhere and
NaN in a *numeric* column (NaN in a categorical column is a missing category and routes by
``missing_left``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._categorical import category_goes_left
from ._jit import TREE_LEAF, inline_kernel, kernel, parallel_kernel
from ._predict import ROWS_FINITE, ROWS_HAVE_INF, ROWS_HAVE_NAN, ROWS_PER_TASK


@inline_kernel
def next_node(x, node, threshold, left, missing_left, categorical_set, category_bits):
    """Return the child of split ``node`` that a row with split value ``x`` goes to."""
    k = categorical_set[node]
    if k >= 0:
        go_left = category_goes_left(x, category_bits[k], missing_left[node])
    elif math.isnan(x):
        go_left = missing_left[node] != 0
    else:
        # float32 x against the float64 threshold: exact, like the packed kernels'
        # rounded-down float32 thresholds.
        go_left = np.float64(x) <= threshold[node]
    return left[node] if go_left else left[node] + 1


@inline_kernel
def scan_rows(X, start, stop, categorical_column):
    """``ROWS_HAVE_INF`` if any value is infinite, ``ROWS_HAVE_NAN`` for NaN in a numeric column."""
    found = ROWS_FINITE
    for i in range(start, stop):
        for j in range(X.shape[1]):
            x = X[i, j]
            if math.isinf(x):
                return ROWS_HAVE_INF
            if math.isnan(x) and not categorical_column[j]:
                found = ROWS_HAVE_NAN
    return found


@kernel
def route_block_categorical(X, start, stop, feature, threshold, left, missing_left,
                            categorical_set, category_bits, categorical_column, payload,
                            out):  # fmt: skip
    """Route rows ``[start, stop)``: ``out[i] = payload[leaf(i)]``; returns what the scan found.

    Notes
    -----
    Cost O((stop - start) * depth); writes only rows ``[start, stop)`` of ``out``.
    """
    found = scan_rows(X, start, stop, categorical_column)
    if found == ROWS_HAVE_INF:
        return found
    for i in range(start, stop):
        node = 0
        while left[node] != TREE_LEAF:
            node = next_node(X[i, feature[node]], node, threshold, left, missing_left,
                             categorical_set, category_bits)  # fmt: skip
        out[i] = payload[node]
    return found


@parallel_kernel
def route_rows_categorical(X, feature, threshold, left, missing_left, categorical_set,
                           category_bits, categorical_column, payload, out):  # fmt: skip
    """Route every row of ``X``; blocks of ``ROWS_PER_TASK`` rows spread over threads.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Rows to route.
    feature, threshold, left, missing_left, categorical_set, category_bits : ndarray
        The tree's arrays (see ``Tree``).
    categorical_column : ndarray of uint8, shape (n_features,)
        1 for the columns whose NaN is a missing category (not reported).
    payload : ndarray of int64, shape (node_count, width)
        What to write per leaf.
    out : ndarray of int64, shape (n_samples, width)
        Output.

    Returns
    -------
    int
        The worst of ``ROWS_FINITE``, ``ROWS_HAVE_NAN``, ``ROWS_HAVE_INF`` over the blocks.

    Notes
    -----
    Task ``t`` writes only its own rows of ``out``, so the loop is race-free.
    """
    n = X.shape[0]
    n_tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    found = np.zeros(max(n_tasks, 1), dtype=np.int64)
    for t in prange(n_tasks):
        found[t] = route_block_categorical(
            X, t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK), feature, threshold, left,
            missing_left, categorical_set, category_bits, categorical_column, payload, out,
        )  # fmt: skip
    return found.max()


@kernel
def decision_path_categorical(X, feature, threshold, left, missing_left, categorical_set,
                              category_bits, categorical_column, depth_bound, indptr,
                              indices):  # fmt: skip
    """Write the CSR structure of the nodes each row visits (root to leaf, in order).

    Returns
    -------
    found : int
        What the scan of the rows found (see :func:`route_rows_categorical`).
    nnz : int
        Entries written to ``indices`` (at most ``n_samples * depth_bound``).
    """
    found = scan_rows(X, 0, X.shape[0], categorical_column)
    nnz = 0
    indptr[0] = 0
    if found == ROWS_HAVE_INF:
        return found, nnz
    for i in range(X.shape[0]):
        node = 0
        indices[nnz] = node
        nnz += 1
        while left[node] != TREE_LEAF:
            node = next_node(X[i, feature[node]], node, threshold, left, missing_left,
                             categorical_set, category_bits)  # fmt: skip
            indices[nnz] = node
            nnz += 1
        indptr[i + 1] = nnz
    return found, nnz
