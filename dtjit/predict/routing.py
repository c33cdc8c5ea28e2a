"""Rows to leaves: the Python side of batch prediction, shared by the estimators and ``Tree``.

The compiled traversals live in ``walk`` (numeric splits, packed nodes) and
``walk_categorical`` (trees with subset splits, or estimators with categorical columns);
this module picks one, feeds it X in float32 blocks and turns its scan result into
scikit-learn's errors.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import sparse

from .._tree import Tree
from ..engine.threads import run_concurrently
from . import blocks as _blocks
from . import walk, walk_categorical

# NaN in X is a missing value in fit and predict (infinity stays an error in both).
ALLOW_NAN = True


# Values (rows x features) from which a prediction runs on threads: below it the walk takes
# a few milliseconds, and handing work to sleeping threads saves too little of that.
PARALLEL_PREDICT_MIN_WORK = 1 << 21


def row_ranges(block: np.ndarray, n_threads: int) -> list[tuple[int, int]]:
    """Cut a block's rows into one contiguous range per thread, at whole walk tasks.

    One range (the whole block) below ``PARALLEL_PREDICT_MIN_WORK`` values or on one thread.
    """
    n_rows = block.shape[0]
    n_tasks = -(-n_rows // walk.ROWS_PER_TASK)
    n_ranges = min(n_threads, n_tasks) if block.size >= PARALLEL_PREDICT_MIN_WORK else 1
    bounds = [min(n_rows, t * n_tasks // n_ranges * walk.ROWS_PER_TASK) for t in range(n_ranges)]
    return list(zip(bounds, [*bounds[1:], n_rows], strict=True))


def raise_for_unroutable(found: int) -> None:
    """Raise the error scikit-learn gives for X holding values the traversal cannot route."""
    if found == walk.ROWS_HAVE_INF:
        raise ValueError("Input X contains infinity or a value too large for dtype('float32').")
    if found == walk.ROWS_HAVE_NAN and not ALLOW_NAN:
        raise ValueError("Input X contains NaN.")


def _categorical_args(tree: Tree, categorical_column: np.ndarray | None) -> tuple | None:
    """Return the categorical kernels' tree arguments, or None for the packed kernels.

    ``categorical_column`` (uint8 per feature) marks the columns whose NaN is a missing
    category; None when the model has no categorical columns.
    """
    if categorical_column is None and not tree.has_categorical_splits:
        return None
    if categorical_column is None:
        categorical_column = np.zeros(tree.n_features, dtype=np.uint8)
    return (
        tree.feature, tree.threshold, tree.left, tree.missing_left, tree.categorical_set,
        tree.category_bits, categorical_column,
    )  # fmt: skip


def route(
    tree: Tree,
    X: np.ndarray,
    payload: np.ndarray,
    n_threads: int,
    categorical_column: np.ndarray | None = None,
) -> np.ndarray:
    """Return ``payload[leaf]`` for the leaf each row of a validated X reaches.

    ``payload`` is int64 of shape (node_count,) or (node_count, width) (float64 values
    travel as their int64 bit patterns); the result has shape (n_samples,) or
    (n_samples, width) accordingly.

    Small inputs go straight to the serial kernel (no thread switching, at most one
    small copy); anything else is routed in blocks of about 16 MB, each converted to
    float32 on its own, in parallel on ``n_threads`` when the block is large.
    """
    flat = payload.ndim == 1
    payload = payload.reshape(len(payload), -1)  # a view: payloads are contiguous
    out = np.empty((X.shape[0], payload.shape[1]), dtype=np.int64)
    categorical = _categorical_args(tree, categorical_column)
    if categorical is not None:
        rows = _blocks.block_rows(X.shape[1], walk.ROWS_PER_TASK)
        for start, stop, block in _blocks.iter_float32_blocks(X, rows):
            block_out = out[start:stop]
            found = max(run_concurrently([
                functools.partial(walk_categorical.route_rows_categorical, block, first, end,
                                  *categorical, payload, block_out)
                for first, end in row_ranges(block, n_threads)
            ]))  # fmt: skip
            raise_for_unroutable(found)
        return out.reshape(-1) if flat else out
    if X.size <= walk.PLAIN_WALK_MAX_VALUES:
        plain = tree._derive(
            "plain",
            lambda: walk.plain_nodes(
                tree.feature, tree.threshold, tree.left, tree.right, tree.missing_left
            ),
        )
        found = walk.route_rows_plain(_blocks.float32_block(X), *plain, payload, out, ALLOW_NAN)
        raise_for_unroutable(found)
        return out.reshape(-1) if flat else out
    packed = tree.packed_nodes()
    if X.size < PARALLEL_PREDICT_MIN_WORK:
        found = walk.route_rows(_blocks.float32_block(X), packed, payload, out, ALLOW_NAN)
        raise_for_unroutable(found)
        return out.reshape(-1) if flat else out
    if _blocks.is_kernel_ready(X) and not _blocks.is_memory_mapped(X):
        rows = X.shape[0]  # already in memory in the kernels' layout: one call
    else:
        rows = _blocks.block_rows(X.shape[1], walk.ROWS_PER_TASK)
    for start, stop, block in _blocks.iter_float32_blocks(X, rows):
        block_out = out[start:stop]
        found = max(run_concurrently([
            functools.partial(walk.route_rows, block[first:end], packed,
                              payload, block_out[first:end], ALLOW_NAN)
            for first, end in row_ranges(block, n_threads)
        ]))  # fmt: skip
        raise_for_unroutable(found)
    return out.reshape(-1) if flat else out


def decision_path(
    tree: Tree, X: np.ndarray, categorical_column: np.ndarray | None = None
) -> sparse.csr_matrix:
    """Return the nodes each row of a validated X visits, as a CSR indicator matrix."""
    depth_bound = tree.max_depth + 1
    categorical = _categorical_args(tree, categorical_column)
    blocks = []
    rows = _blocks.block_rows(X.shape[1] + depth_bound, walk.ROWS_PER_TASK)
    for _, _, block in _blocks.iter_float32_blocks(X, rows):
        indptr = np.empty(block.shape[0] + 1, dtype=np.int64)
        indices = np.empty(block.shape[0] * depth_bound, dtype=np.int64)
        if categorical is not None:
            found, nnz = walk_categorical.decision_path_categorical(
                block, *categorical, depth_bound, indptr, indices
            )
        else:
            found, nnz = walk.decision_path_rows(
                block, *tree.packed_nodes(), depth_bound, indptr, indices
            )
        raise_for_unroutable(found)
        data = np.ones(nnz, dtype=np.int64)
        blocks.append(
            sparse.csr_matrix(
                (data, indices[:nnz], indptr), shape=(block.shape[0], tree.node_count)
            )
        )
    if not blocks:
        return sparse.csr_matrix((0, tree.node_count), dtype=np.int64)
    return sparse.vstack(blocks, format="csr")
