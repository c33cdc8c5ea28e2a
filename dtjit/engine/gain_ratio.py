"""C4.5's choice of the split feature by gain ratio (``criterion="gain_ratio"``).

Quinlan (1993), *C4.5: Programs for Machine Learning*, ch. 2: for a numeric feature the
threshold is the one of largest information gain (dtjit's entropy sweep finds it); among the
features, the split chosen is the one of largest *gain ratio* ``gain / split_info`` among the
candidates whose gain is at least the average gain of the candidates at that node. Here

- the candidates are the node's searched features (all, or the ``max_features`` drawn)
  that have a valid split;
- ``gain = H(S) - W_l / W * H(S_l) - W_r / W * H(S_r)`` in bits, and
  ``split_info = -(W_l / W) log2(W_l / W) - (W_r / W) log2(W_r / W)``, both with sample
  weights;
- ties go to the lowest feature index.

Deviation from C4.5 release 8, stated and tested: no ``log2(N - 1) / |D|`` penalty is
subtracted from the gain of numeric thresholds. That penalty (Quinlan 1996) is an MDL
correction for choosing among ``N - 1`` thresholds; dtjit offers the MDL idea separately as
``mdl_stop``. The book's rule is applied as written.

Categorical features (``categorical_features``) take part like numeric ones: their subset
split is the one of largest information gain (``sweep_categorical``'s search with the entropy
proxy: optimal for two classes, see there for more), and its split information is that of
the two sides of the subset, NaN rows counted on the side they go to. A categorical feature
is not split multiway as in C4.5's default for discrete attributes: every split is binary.

The gain is read from the sweep's proxy ``-W_r H_r - W_l H_l`` (``gain = H + proxy / W``),
so only the split information costs extra: one pass over each qualifying feature's left
child to sum its weight (nothing when unweighted), or over the node's rows for a subset
split.
"""

from __future__ import annotations

import numpy as np

from .criterion import entropy_term
from .jit import inline_kernel, kernel
from .sweep_categorical import subset_left_weight_binned, subset_left_weight_presorted
from .sweep_exact import count_missing

NO_SPLIT = -np.inf
# Gains of equally good features summed and averaged may round a few ulps above each of
# them; without slack none of them would qualify. Gains are in bits (at most log2 n_classes).
GAIN_TOLERANCE = 1e-12


@inline_kernel
def average_gain(proxies, impurity, weight):
    """Average information gain of the features with a valid split (``inf`` if none)."""
    total = 0.0
    n_valid = 0
    for f in range(proxies.shape[0]):
        if proxies[f] > NO_SPLIT:
            total += impurity + proxies[f] / weight
            n_valid += 1
    return total / n_valid if n_valid > 0 else np.inf


@inline_kernel
def qualifies(proxy, impurity, weight, average):
    """Whether a feature's best split has a gain of at least the average (C4.5's filter)."""
    return proxy > NO_SPLIT and impurity + proxy / weight >= average - GAIN_TOLERANCE


@inline_kernel
def gain_ratio_feature(proxies, left_weights, impurity, weight, average):
    """Feature of the largest gain ratio among the qualifying ones; -1 if none.

    Parameters
    ----------
    proxies : ndarray of float64, shape (n_features,)
        Best entropy proxy of each feature (``-inf``: no valid split).
    left_weights : ndarray of float64, shape (n_features,)
        Weight of the left child of each qualifying feature's split (others are not read).
    impurity, weight : float
        The node's entropy (bits) and weight.
    average : float
        :func:`average_gain` of the node.
    """
    best_f = -1
    best_ratio = NO_SPLIT
    for f in range(proxies.shape[0]):
        if not qualifies(proxies[f], impurity, weight, average):
            continue
        split_info = entropy_term(left_weights[f], weight) + entropy_term(
            weight - left_weights[f], weight
        )
        ratio = (impurity + proxies[f] / weight) / split_info
        if ratio > best_ratio:
            best_ratio = ratio
            best_f = f
    return best_f


@inline_kernel
def gain_ratio_feature_presorted(proxies, positions, missing, sorted_idx, sorted_val, start, end,
                                 sample_weight, unit_weight, impurity, weight, cat_slot,
                                 split_rows, left_weights):  # fmt: skip
    """:func:`gain_ratio_feature` for the exact and random splitters.

    ``positions[f]`` is the first non-missing position of feature ``f``'s right child in the
    node's segment ``[start, end)``; ``missing[f] == 1`` when the node's NaN rows, the tail
    of the segment, go left. The left weight is summed in the sweep's order. A categorical
    feature (``cat_slot[f] >= 0``) sends left the rows its split row
    ``split_rows[cat_slot[f]]`` selects.

    ``left_weights`` is scratch of one entry per feature.
    """
    average = average_gain(proxies, impurity, weight)
    left_weights[:] = 0.0
    for f in range(proxies.shape[0]):
        if qualifies(proxies[f], impurity, weight, average):
            if cat_slot[f] >= 0:
                left_weights[f] = subset_left_weight_presorted(
                    sorted_idx[f], sorted_val[f], start, end, split_rows[cat_slot[f]],
                    sample_weight,
                )  # fmt: skip
                continue
            tail = count_missing(sorted_val[f], start, end) if missing[f] == 1 else 0
            if unit_weight:
                left_weights[f] = positions[f] - start + tail
            else:
                for p in range(start, positions[f]):
                    left_weights[f] += sample_weight[sorted_idx[f, p]]
                for p in range(end - tail, end):
                    left_weights[f] += sample_weight[sorted_idx[f, p]]
    return gain_ratio_feature(proxies, left_weights, impurity, weight, average)


@inline_kernel
def gain_ratio_feature_binned(proxies, cuts, missing, bin_offset, rows, codes, start, end,
                              sample_weight, impurity, weight, cat_slot, nan_bin,
                              split_rows, left_weights):  # fmt: skip
    """:func:`gain_ratio_feature` for the histogram splitter.

    ``cuts[f]`` is the last (flat) bin of feature ``f``'s left side, and ``missing[f] == 1``
    when its NaN bin (the feature's last) goes left too; the left weight is summed over the
    node's rows ``start .. end - 1`` on that side. A categorical feature's left side is the
    one its split row ``split_rows[cat_slot[f]]`` selects (``nan_bin[f]``: its NaN bin).
    ``left_weights`` is scratch of one entry per feature.
    """
    average = average_gain(proxies, impurity, weight)
    left_weights[:] = 0.0
    for f in range(proxies.shape[0]):
        if qualifies(proxies[f], impurity, weight, average):
            if cat_slot[f] >= 0:
                left_weights[f] = subset_left_weight_binned(
                    rows, codes, f, start, end, nan_bin[f], split_rows[cat_slot[f]],
                    sample_weight,
                )  # fmt: skip
                continue
            cut = cuts[f] - bin_offset[f]
            nan_code = bin_offset[f + 1] - bin_offset[f] - 1 if missing[f] == 1 else -1
            for p in range(start, end):
                if codes[p, f] <= cut or codes[p, f] == nan_code:
                    left_weights[f] += sample_weight[rows[p]]
    return gain_ratio_feature(proxies, left_weights, impurity, weight, average)


@kernel
def gain_ratio_features_presorted(search, nodes, sorted_idx, sorted_val, sample_weight,
                                  unit_weight, cat_slot, feature):  # fmt: skip
    """:func:`gain_ratio_feature_presorted` of every searched node; writes ``feature[s]``.

    ``search`` is the batch's ``records.BatchSearch`` (its ``pos``, ``missing`` and ``bits``
    rows are the per-node arguments), ``nodes`` the ``records.NodeArrays``. A kernel of its
    own, called once per level and only for ``gain_ratio``, so no other fit compiles it.
    """
    left_weights = np.empty(sorted_idx.shape[0], dtype=np.float64)
    for s in range(search.nodes.shape[0]):
        node = search.nodes[s]
        feature[s] = gain_ratio_feature_presorted(
            search.proxy[s], search.pos[s], search.missing[s], sorted_idx, sorted_val,
            nodes.start[node], nodes.end[node], sample_weight, unit_weight,
            nodes.impurity[node], nodes.weight[node], cat_slot, search.bits[s], left_weights,
        )  # fmt: skip


@kernel
def gain_ratio_features_binned(search, nodes, bin_offset, rows, codes, sample_weight, cat_slot,
                               nan_bin, feature):  # fmt: skip
    """:func:`gain_ratio_feature_binned` of every searched node; writes ``feature[s]``.

    As :func:`gain_ratio_features_presorted`, for the histogram splitter (``search.pos``
    holds bin cuts).
    """
    left_weights = np.empty(codes.shape[1], dtype=np.float64)
    for s in range(search.nodes.shape[0]):
        node = search.nodes[s]
        feature[s] = gain_ratio_feature_binned(
            search.proxy[s], search.pos[s], search.missing[s], bin_offset, rows, codes,
            nodes.start[node], nodes.end[node], sample_weight, nodes.impurity[node],
            nodes.weight[node], cat_slot, nan_bin, search.bits[s], left_weights,
        )  # fmt: skip
