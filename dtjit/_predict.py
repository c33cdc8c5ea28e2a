"""Traversal kernels: rows of X walk from the root to a leaf.

Inputs reach these kernels as float32, C-contiguous, writeable blocks (the estimator layer
converts block by block), so each kernel has exactly one compiled signature.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import TREE_LEAF, inline_kernel, kernel, parallel_kernel

# Rows per parallel task: large enough that scheduling is negligible, small enough that
# both threads get work on modest inputs.
ROWS_PER_TASK = 4096


@kernel
def leaf_of_row(X, i, feature, threshold, left, right, missing_left):
    """Leaf id reached by row ``i``.

    Notes
    -----
    A row goes left iff ``x <= threshold``; a NaN compares false and goes where
    ``missing_left`` says. The float32 value is compared to the float64 threshold exactly.
    Cost O(depth).
    """
    node = 0
    while left[node] != TREE_LEAF:
        node = child_of(
            X[i, feature[node]], threshold[node], left[node], right[node], missing_left[node]
        )
    return node


@inline_kernel
def child_of(x, threshold, left, right, missing_left):
    """Child a value ``x`` goes to at a split (NaN follows ``missing_left``).

    Notes
    -----
    Takes scalars on purpose: a helper that receives arrays pays reference-count updates on
    every call, even when inlined (measured 5x slower traversal).
    """
    if x <= threshold:
        return left
    if np.isnan(x) and missing_left:
        return left
    return right


@kernel
def apply_rows_serial(X, feature, threshold, left, right, missing_left, out):
    """Write into ``out[i]`` the leaf id reached by each row ``i`` of ``X``."""
    for i in range(X.shape[0]):
        out[i] = leaf_of_row(X, i, feature, threshold, left, right, missing_left)


@parallel_kernel
def apply_rows_parallel(X, feature, threshold, left, right, missing_left, out):
    """Parallel twin of :func:`apply_rows_serial`.

    Notes
    -----
    Task ``t`` writes only ``out[t * ROWS_PER_TASK : (t + 1) * ROWS_PER_TASK]``: disjoint
    memory, so the result equals the serial one.
    """
    n = X.shape[0]
    n_tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    for t in prange(n_tasks):
        stop = min(n, (t + 1) * ROWS_PER_TASK)
        for i in range(t * ROWS_PER_TASK, stop):
            out[i] = leaf_of_row(X, i, feature, threshold, left, right, missing_left)


@kernel
def decision_path_rows(X, feature, threshold, left, right, missing_left, depth_bound, indptr,
                       indices):  # fmt: skip
    """Fill CSR ``indptr`` / ``indices`` with the nodes each row visits, root to leaf.

    Parameters
    ----------
    depth_bound : int
        Tree depth + 1: the most nodes a path can hold; ``indices`` must have
        ``X.shape[0] * depth_bound`` entries.

    Returns
    -------
    int
        Number of entries written to ``indices``.
    """
    nnz = 0
    indptr[0] = 0
    for i in range(X.shape[0]):
        node = 0
        indices[nnz] = 0
        nnz += 1
        while left[node] != TREE_LEAF:
            node = child_of(
                X[i, feature[node]], threshold[node], left[node], right[node], missing_left[node]
            )
            indices[nnz] = node
            nnz += 1
        indptr[i + 1] = nnz
    return nnz
