"""Slow, obvious reference of the multi-output split search of one node (no numba).

scikit-learn's rules for a y of several columns: a node's impurity is the mean over outputs
of each output's impurity (Gini or entropy on that output's classes, or the variance of
that output's target); a split is scored by the weighted impurity of its children. Every
candidate recomputes its impurities from scratch with :func:`math.fsum`.

Candidates of one feature, in scikit-learn's order of preference (an earlier one is kept on
ties): every cut between consecutive distinct values (``v_b > v_a + FEATURE_THRESHOLD`` in
float32, threshold ``v_a / 2 + v_b / 2``) with the NaN rows on the right; then, when the
node has NaN rows, the cut "every value | NaN" (threshold ``+inf``); then every cut with the
NaN rows on the left. Both children need ``min_samples_leaf`` rows and ``min_weight_leaf``
weight.
"""

from __future__ import annotations

import math

import numpy as np

FEATURE_THRESHOLD = np.float32(1e-7)


def node_impurity(Y, w, criterion, n_classes):
    """Mean over the outputs (columns of ``Y``) of each output's impurity of the rows."""
    weight = math.fsum(w)
    per_output = []
    for o in range(Y.shape[1]):
        y = Y[:, o]
        if criterion == "squared_error":
            mean = math.fsum(w * y) / weight
            per_output.append(math.fsum(w * (y - mean) ** 2) / weight)
            continue
        p = np.array([math.fsum(w[y == c]) for c in range(n_classes[o])]) / weight
        p = p[p > 0]
        if criterion == "gini":
            per_output.append(1.0 - math.fsum(p * p))
        else:
            per_output.append(-math.fsum(p * np.log2(p)))
    return math.fsum(per_output) / len(per_output)


def split_quality(go_left, Y, w, criterion, n_classes):
    """Impurity decrease within the node of sending the rows ``go_left`` left."""
    weight = math.fsum(w)
    out = node_impurity(Y, w, criterion, n_classes)
    for side in (go_left, ~go_left):
        out -= math.fsum(w[side]) / weight * node_impurity(Y[side], w[side], criterion, n_classes)
    return out


def candidates(x):
    """Yield ``(threshold, missing, go_left)`` of every cut of one feature, in order.

    ``missing`` is where the NaN rows go: 1 left, 0 right, -1 when the node has none.
    """
    x = np.asarray(x, dtype=np.float32)
    nan = np.isnan(x)
    values = np.unique(x[~nan])
    cuts = [
        float(a) / 2.0 + float(b) / 2.0
        for a, b in zip(values[:-1], values[1:], strict=True)
        if b > np.float32(a + FEATURE_THRESHOLD)
    ]
    if not nan.any():
        for t in cuts:
            yield t, -1, x <= t
        return
    for t in cuts:
        yield t, 0, x <= t
    yield np.inf, 0, ~nan
    for t in cuts:
        yield t, 1, (x <= t) | nan


def best_split_of_feature(x, Y, w, criterion, n_classes, min_samples_leaf=1, min_weight_leaf=0.0):
    """Best feasible cut of one feature: ``(quality, threshold, missing)``, None if none."""
    best = None
    for threshold, missing, go_left in candidates(x):
        n_left = int(go_left.sum())
        if min(n_left, len(x) - n_left) < min_samples_leaf:
            continue
        if min(math.fsum(w[go_left]), math.fsum(w[~go_left])) < min_weight_leaf:
            continue
        quality = split_quality(go_left, Y, w, criterion, n_classes)
        if best is None or quality > best[0]:
            best = (quality, threshold, missing)
    return best
