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


class FitSpec(NamedTuple):
    """Every setting of a fit, resolved by the estimator: the engine reads no other parameter.

    The estimator validates the parameters and the data, then hands this record with
    ``X, y, sample_weight`` to :func:`dtjit.engine.fit`. Counts are plain ints and rules plain
    floats (a numpy scalar would compile a second copy of the builder's kernels).
    """

    splitter: str  # "best", "random" (one random threshold per feature) or "hist"
    criterion: int  # single-output code of jit.CRITERION_CODES
    is_regression: bool  # targets are float64 values, not int32 class codes
    n_outputs: int
    n_classes: np.ndarray  # intp per output: the class count (classification), else 1
    max_depth: int  # jit-sized: the estimator maps None to a value no tree reaches
    min_samples_split: int  # at least 2 * min_samples_leaf
    min_samples_leaf: int
    min_weight_leaf: float  # in sample_weight's units (the engine rescales it with them)
    min_impurity_decrease: float  # in the criterion's units of the given targets
    max_features: int  # features drawn per node, 1 .. n_features
    max_leaf_nodes: int  # -1: unlimited, grown level-wise; else best-first
    max_bins: int  # splitter="hist": bins per numeric feature, at most 255
    mdl_stop: bool  # leaf where the best split fails the MDLP test (classification)
    rng_state: np.ndarray  # uint64, shape (1,): max_features and random thresholds; advanced
    n_threads: int  # threads the fit may use (already checked usable)
    cat_slot: np.ndarray  # int32 per feature: position among the categorical ones, -1 numeric
    n_words: int  # uint64 words of a category bitset (at least 1)


class TreeArrays(NamedTuple):
    """A finished tree's arrays, named as ``Tree``'s keyword arguments (its contract).

    Node ids are breadth-first; values are class fractions or means in the targets' units,
    weights in ``sample_weight``'s units.
    """

    feature: np.ndarray  # int32
    threshold: np.ndarray  # float64, NaN at categorical splits
    left: np.ndarray  # int32
    right: np.ndarray  # int32
    value: np.ndarray  # float64, (node_count, n_outputs, n_classes)
    impurity: np.ndarray  # float64
    n_node_samples: np.ndarray  # int64
    weighted_n_node_samples: np.ndarray  # float64
    missing_left: np.ndarray  # uint8
    missing_learned: np.ndarray  # uint8: the NaN side was learned from NaN rows
    categorical_set: np.ndarray  # int32, row of category_bits, -1 at other nodes
    category_bits: np.ndarray  # uint64, (n_categorical_splits, n_words)


class FitResult(NamedTuple):
    """What :func:`dtjit.engine.fit` returns."""

    tree: TreeArrays
    features_with_missing: np.ndarray  # bool per feature: NaN among its training values


class WeightedRows(NamedTuple):
    """The training rows as the split searches read them (``prepare.weighted_rows``).

    Weights and targets are rescaled by exact powers of two (``weight_scale``,
    ``target_scale``, 1.0 for data of ordinary magnitude) so that the criteria's squares stay
    within float64; the stopping rules in weight or impurity units are rescaled with them.
    """

    code: np.ndarray  # int32 sweep code per row (per row and output with several outputs)
    contrib: np.ndarray  # float64: what the row adds to the swept statistics
    sample_weight: np.ndarray  # float64, rescaled, every entry > 0
    y: np.ndarray  # float64 rescaled targets (regression), unused placeholder otherwise
    unit_weight: bool  # classification with every weight 1: the sweeps gather nothing
    n_stats: int  # length of a node's statistics vector
    n_sweep: int  # its swept prefix
    weight_scale: float
    target_scale: float
    min_weight_leaf: float  # rescaled by weight_scale
    min_impurity_decrease: float  # rescaled by target_scale squared


class PresortedColumns(NamedTuple):
    """The exact splitters' data (``prepare.presorted_columns``); see ``grow.build``."""

    sorted_idx: np.ndarray  # int32, (n_features, n_samples)
    sorted_val: np.ndarray  # float32, (n_features, n_samples)
    sorted_code: np.ndarray  # uint8 or uint16, (n_features, n_samples)
    two_valued: tuple  # slot, threshold, high_bits of sweep_two_valued.two_valued_layout
    features_with_missing: np.ndarray  # bool per feature


class BinnedColumns(NamedTuple):
    """The histogram splitter's data (``prepare.binned_columns``); see ``grow.build_hist``."""

    codes: np.ndarray  # uint8, (n_samples, n_features), C order
    bin_offset: np.ndarray  # int64, (n_features + 1,)
    bin_min: np.ndarray  # float64, (n_total_bins,)
    bin_max: np.ndarray  # float64, (n_total_bins,)
    nan_bin: np.ndarray  # int64 per feature: a categorical feature's missing bin, else -1
    features_with_missing: np.ndarray  # bool per feature
