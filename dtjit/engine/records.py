"""Named records passed between the builders' Python driver and their kernels.

numba compiles a named tuple as a tuple whose fields are read by name at no cost, so a
kernel takes one record instead of a dozen positional arrays and nobody reads a result by
position. Every record holds arrays (or scalars) only: a kernel compiles once per
combination of field types, and the driver builds the fields with fixed dtypes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .jit import TREE_LEAF, TREE_UNDEFINED


class NodeArrays(NamedTuple):
    """The growing tree, one entry per node id (storage grows by doubling).

    A node's samples are the positions ``[start, end)`` of every presorted feature (or of
    the binned rows); ``stats`` is its statistics vector (class weights, or sums for
    regression), ``weight`` its total weight, ``impurity`` its criterion value.
    ``missing_left`` may carry ``grow.LEARNED_FLAG`` on top of the side.
    """

    feature: np.ndarray  # int32, TREE_UNDEFINED at leaves
    threshold: np.ndarray  # float64
    left: np.ndarray  # int32, TREE_LEAF at leaves
    right: np.ndarray  # int32
    missing_left: np.ndarray  # uint8
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    depth: np.ndarray  # int64
    stats: np.ndarray  # float64, (capacity, n_stats)
    weight: np.ndarray  # float64
    impurity: np.ndarray  # float64


class SplitBatch(NamedTuple):
    """The split chosen for every node of a batch; ``feature[k] == -1``: node ``k`` is a leaf.

    ``pos`` is the end of the left child's segment once the node is partitioned;
    ``missing`` where the node's NaN rows go (1 left, 0 right, -1 none in the node).
    """

    feature: np.ndarray  # int32
    pos: np.ndarray  # int64
    threshold: np.ndarray  # float64
    improvement: np.ndarray  # float64
    child_stats: np.ndarray  # float64, (n_batch, 2, n_stats)
    child_weight: np.ndarray  # float64, (n_batch, 2)
    child_impurity: np.ndarray  # float64, (n_batch, 2)
    missing: np.ndarray  # int8


class BatchSearch(NamedTuple):
    """The best cut of every (searched node, feature) pair of a batch.

    Row ``s`` belongs to batch position ``searched[s]``, node id ``nodes[s]``. ``proxy`` is
    ``sweep_exact.NO_SPLIT`` where a feature has no valid cut; ``pos`` the cut's position (a
    bin cut for the histogram splitter); ``bits`` one subset row per categorical feature.
    """

    searched: np.ndarray  # int64
    nodes: np.ndarray  # int64
    proxy: np.ndarray  # float64, (n_searched, n_features)
    pos: np.ndarray  # int64
    threshold: np.ndarray  # float64
    missing: np.ndarray  # int8
    bits: np.ndarray  # uint64, (n_searched, n_categorical, n_words + 1)


class StoppingRules(NamedTuple):
    """The resolved stopping rules of a fit (scikit-learn's, in its units)."""

    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    min_impurity_decrease: float


def new_nodes(capacity: int, n_stats: int) -> NodeArrays:
    """Return storage for ``capacity`` nodes, every node a leaf with an empty segment."""
    return NodeArrays(
        feature=np.full(capacity, TREE_UNDEFINED, dtype=np.int32),
        threshold=np.full(capacity, float(TREE_UNDEFINED), dtype=np.float64),
        left=np.full(capacity, TREE_LEAF, dtype=np.int32),
        right=np.full(capacity, TREE_LEAF, dtype=np.int32),
        missing_left=np.zeros(capacity, dtype=np.uint8),
        start=np.zeros(capacity, dtype=np.int64),
        end=np.zeros(capacity, dtype=np.int64),
        depth=np.zeros(capacity, dtype=np.int64),
        stats=np.zeros((capacity, n_stats), dtype=np.float64),
        weight=np.zeros(capacity, dtype=np.float64),
        impurity=np.zeros(capacity, dtype=np.float64),
    )


def new_splits(n_batch: int, n_stats: int) -> SplitBatch:
    """Return a batch's split record, every node a leaf until a split is accepted."""
    return SplitBatch(
        feature=np.full(n_batch, -1, dtype=np.int32),
        pos=np.zeros(n_batch, dtype=np.int64),
        threshold=np.zeros(n_batch, dtype=np.float64),
        improvement=np.zeros(n_batch, dtype=np.float64),
        child_stats=np.zeros((n_batch, 2, n_stats), dtype=np.float64),
        child_weight=np.zeros((n_batch, 2), dtype=np.float64),
        child_impurity=np.zeros((n_batch, 2), dtype=np.float64),
        missing=np.full(n_batch, -1, dtype=np.int8),
    )


def grown(a: np.ndarray, capacity: int, fill: float | None = None) -> np.ndarray:
    """Return ``a`` copied into ``capacity`` rows; new rows set to ``fill`` or unwritten.

    Unwritten rows of a large array are not resident until written, so node storage grown
    this way costs no memory for its spare capacity; every field of a node is written when
    the node is created.
    """
    if fill is None:
        out = np.empty((capacity,) + a.shape[1:], dtype=a.dtype)
    else:
        out = np.full((capacity,) + a.shape[1:], fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out
