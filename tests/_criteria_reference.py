"""Slow, obvious references for the gain-ratio choice, the MDLP stop and the MAE criterion.

Each function works on the rows of one node, in plain Python / numpy, and follows the
textbook definition. The entropy arithmetic mirrors the kernels' (``-(p * log2(p))`` per class
in class order, ``log2 = ln / ln 2``, the proxy ``-W_r H_r - W_l H_l``), so that with integer
weights the reference and the kernels compute bit-identical gains and break ties alike.
"""

from __future__ import annotations

import math

import numpy as np

FEATURE_THRESHOLD = np.float32(1e-7)
LN2 = math.log(2.0)


def entropy_bits(counts, weight):
    """Entropy in bits of class counts whose sum is ``weight``."""
    out = 0.0
    for count in counts:
        if count > 0.0:
            p = count / weight
            out += -(p * (math.log(p) / LN2))
    return out


def candidate_positions(xs):
    """Positions ``p`` of a sorted float32 column where a threshold may go (before ``p``)."""
    return [p for p in range(1, len(xs)) if xs[p] > xs[p - 1] + FEATURE_THRESHOLD]


def best_entropy_split(x, y, w, n_classes):
    """Best threshold of one feature by information gain (the entropy sweep).

    Returns ``(proxy, threshold, left_weight)`` or ``None`` if the feature is constant.
    The proxy is ``-W_r H_r - W_l H_l``; the lowest threshold wins ties.
    """
    order = np.argsort(x, kind="stable")
    xs = x[order].astype(np.float32)
    total = np.bincount(y, weights=w, minlength=n_classes)
    weight = float(w.sum())
    best = None
    for p in candidate_positions(xs):
        left = np.bincount(y[order[:p]], weights=w[order[:p]], minlength=n_classes)
        w_left = float(left.sum())
        w_right = weight - w_left
        h_left = entropy_bits(left, w_left)
        h_right = entropy_bits(total - left, w_right)
        proxy = -w_right * h_right - w_left * h_left
        if best is None or proxy > best[0]:
            best = (proxy, float(xs[p - 1]) / 2.0 + float(xs[p]) / 2.0, w_left)
    return best


def c45_choice(X, y, w, n_classes, with_penalty=False):
    """C4.5's split of a node: ``(feature, threshold)``, or ``None``.

    Per feature the threshold of largest gain; among the features whose gain is at least the
    average gain, the largest gain ratio (lowest feature index on ties). With
    ``with_penalty`` the gain of every feature first loses ``log2(n_thresholds) / N`` (C4.5
    release 8), which dtjit deliberately does not do.
    """
    weight = float(w.sum())
    impurity = entropy_bits(np.bincount(y, weights=w, minlength=n_classes), weight)
    splits = {}
    for f in range(X.shape[1]):
        best = best_entropy_split(X[:, f], y, w, n_classes)
        if best is None:
            continue
        proxy, threshold, w_left = best
        gain = impurity + proxy / weight
        if with_penalty:
            n_thresholds = len(candidate_positions(np.sort(X[:, f].astype(np.float32))))
            gain -= math.log2(n_thresholds) / weight
        splits[f] = (gain, threshold, w_left)
    if not splits:
        return None
    average = sum(g for g, _, _ in splits.values()) / len(splits)
    best_f, best_ratio = None, -math.inf
    for f, (gain, _, w_left) in splits.items():
        if gain < average - 1e-12:
            continue
        split_info = entropy_bits([w_left, weight - w_left], weight)
        if gain / split_info > best_ratio:
            best_f, best_ratio = f, gain / split_info
    return best_f, splits[best_f][1]


def mdlp_accepts(left_counts, right_counts):
    """Fayyad & Irani's test, written out: Gain > log2(N-1)/N + Delta/N (bits)."""
    left = np.asarray(left_counts, dtype=float)
    right = np.asarray(right_counts, dtype=float)
    parent = left + right
    n, n_left, n_right = parent.sum(), left.sum(), right.sum()

    def ent(c):
        p = c[c > 0] / c.sum()
        return float(-(p * np.log2(p)).sum())

    gain = ent(parent) - n_left / n * ent(left) - n_right / n * ent(right)
    k, k1, k2 = (int((c > 0).sum()) for c in (parent, left, right))
    delta = math.log2(3**k - 2) - (k * ent(parent) - k1 * ent(left) - k2 * ent(right))
    return gain > (math.log2(n - 1) + delta) / n


def weighted_median(y, w):
    """scikit-learn's weighted median: the target at the smallest rank whose cumulative weight
    exceeds half the total; the midpoint with the next target when some rank's cumulative
    weight is exactly half."""
    order = np.argsort(y, kind="stable")
    ys, ws = y[order], w[order]
    half = 0.5 * ws.sum()
    cumulative = 0.0
    for r in range(len(ys)):
        if cumulative + ws[r] > half:
            if cumulative == half and r > 0:
                return (ys[r - 1] + ys[r]) / 2
            return ys[r]
        cumulative += ws[r]
    return ys[-1]


def absolute_error(y, w):
    """``sum(w * |y - median|)`` of a set."""
    return float(np.sum(w * np.abs(y - weighted_median(y, w))))


def absolute_error_splits(x, y, w):
    """Every candidate threshold of one feature with the summed absolute error of its children.

    Returns a list of ``(threshold, error)`` in increasing threshold order.
    """
    order = np.argsort(x, kind="stable")
    xs = x[order].astype(np.float32)
    out = []
    for p in candidate_positions(xs):
        left, right = order[:p], order[p:]
        error = absolute_error(y[left], w[left]) + absolute_error(y[right], w[right])
        out.append((float(xs[p - 1]) / 2.0 + float(xs[p]) / 2.0, error))
    return out


def node_rows(tree, X):
    """Rows of ``X`` reaching each node: a dict node id -> row indices (X as float32).

    Subset splits (``tree.categorical_set[node] >= 0``) send left the codes whose bit is set
    in ``tree.category_bits``; NaN and codes beyond the bitset follow ``missing_left``.
    """
    X32 = np.asarray(X, dtype=np.float32)
    categorical_set = getattr(tree, "categorical_set", None)
    rows = {0: np.arange(X32.shape[0])}
    for node in range(tree.node_count):
        if tree.children_left[node] == -1:
            continue
        r = rows[node]
        x = X32[r, tree.feature[node]]
        missing = np.isnan(x)
        k = -1 if categorical_set is None else int(categorical_set[node])
        if k >= 0:
            words = [int(word) for word in tree.category_bits[k]]
            codes = np.where(missing, -1, x).astype(np.int64).tolist()
            known = np.array([0 <= c < 64 * len(words) for c in codes], dtype=bool)
            in_set = np.array(
                [0 <= c < 64 * len(words) and bool((words[c // 64] >> (c % 64)) & 1)
                 for c in codes], dtype=bool,
            )  # fmt: skip
            go_left = np.where(known, in_set, tree.missing_left[node] == 1)
        else:
            go_left = (x <= tree.threshold[node]) | (missing & (tree.missing_left[node] == 1))
        rows[tree.children_left[node]] = r[go_left]
        rows[tree.children_right[node]] = r[~go_left]
    return rows
