"""Shared assertions: lockstep comparison of a dtjit tree with a scikit-learn tree."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from _criteria_reference import absolute_error

import dtjit


@dataclass
class Comparison:
    """Outcome of walking a dtjit tree and a scikit-learn tree side by side."""

    same_nodes: int = 0
    ties: list = field(default_factory=list)  # (dtjit node, sklearn node, quality)
    # Pure nodes (one class, or equal targets): dtjit makes them leaves (impurity 0);
    # scikit-learn may split them when its impurity, computed by subtraction, rounds above
    # EPSILON.
    pure_splits: list = field(default_factory=list)  # (dtjit node, sklearn node)
    mismatches: list = field(default_factory=list)  # human-readable reasons

    @property
    def identical(self) -> bool:
        return not self.ties and not self.mismatches and not self.pure_splits


def _impurity(y, w, criterion, n_classes):
    if y.ndim == 2:  # several outputs: the mean of the outputs' impurities (scikit-learn's)
        return np.mean([_impurity(y[:, o], w, criterion, n_classes[o]) for o in range(y.shape[1])])
    W = w.sum()
    if criterion == "squared_error":
        mean = (w * y).sum() / W
        return (w * y * y).sum() / W - mean * mean
    if criterion == "poisson":
        mean = (w * y).sum() / W
        if not mean > 0.0:
            return np.inf  # scikit-learn never makes such a child
        positive = y > 0
        return (w[positive] * y[positive] * np.log(y[positive] / mean)).sum() / W
    if criterion == "absolute_error":
        return absolute_error(y, w) / W
    counts = np.bincount(y, weights=w, minlength=n_classes)
    p = counts[counts > 0] / W
    if criterion == "gini":
        return 1.0 - (p * p).sum()
    return -(p * np.log2(p)).sum()


def split_quality(x, y, w, threshold, criterion, n_classes, missing_left=False):
    """Weighted impurity decrease (within the node) of splitting rows at ``threshold``.

    NaN values go left iff ``missing_left``.
    """
    go_left = (x <= threshold) | (np.isnan(x) & bool(missing_left))
    W = w.sum()
    parent = _impurity(y, w, criterion, n_classes)
    out = parent
    for side in (go_left, ~go_left):
        if not side.any():
            return -np.inf
        out -= w[side].sum() / W * _impurity(y[side], w[side], criterion, n_classes)
    return out


def compare_with_sklearn(
    ours, theirs, X, y, sample_weight=None, rtol=1e-9, impurity_atol=None
) -> Comparison:
    """Walk ``ours.tree_`` and ``theirs.tree_`` from the roots in lockstep.

    Where both split the same way, recurse. Where they split differently, the node counts as a
    *tie* if both splits are equally good on the node's rows (scikit-learn then picks among
    them at random, dtjit deterministically) and as a *mismatch* otherwise; the subtrees
    below a tie are not compared.
    """
    a, b = ours.tree_, theirs.tree_
    X32 = np.asarray(X, dtype=np.float32)
    is_clf = hasattr(ours, "classes_")
    if is_clf and ours.n_outputs_ > 1:
        y_code = np.column_stack([np.searchsorted(c, y[:, o]) for o, c in enumerate(ours.classes_)])
        n_classes = [len(c) for c in ours.classes_]
    elif is_clf:
        y_code = np.searchsorted(ours.classes_, y)
        n_classes = len(ours.classes_)
    else:
        y_code = np.asarray(y, dtype=np.float64)
        n_classes = [1] * y_code.shape[1] if y_code.ndim == 2 else 1
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if getattr(ours, "class_weight", None) is not None:
        from sklearn.utils import compute_sample_weight

        w = w * compute_sample_weight(ours.class_weight, y)
    if impurity_atol is None:
        impurity_atol = 1e-12 if is_clf else 1e-10 * float(np.mean(np.square(y))) + 1e-12
    criterion = {"log_loss": "entropy"}.get(ours.criterion, ours.criterion)
    out = Comparison()
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        na, nb, rows = stack.pop()
        if a.n_node_samples[na] != b.n_node_samples[nb]:
            out.mismatches.append(
                f"node {na}/{nb}: n_node_samples {a.n_node_samples[na]} vs {b.n_node_samples[nb]}"
            )
            continue
        if not np.allclose(a.value[na], b.value[nb], rtol=rtol, atol=1e-12):
            out.mismatches.append(f"node {na}/{nb}: value {a.value[na]} vs {b.value[nb]}")
        if not np.isclose(a.impurity[na], b.impurity[nb], rtol=rtol, atol=impurity_atol):
            out.mismatches.append(f"node {na}/{nb}: impurity {a.impurity[na]} vs {b.impurity[nb]}")
        a_leaf, b_leaf = a.children_left[na] == -1, b.children_left[nb] == -1
        if a_leaf and b_leaf:
            out.same_nodes += 1
            continue
        if a_leaf and np.ptp(y_code[rows], axis=0).max() == 0:
            # A pure node: scikit-learn may split it when its subtraction-based impurity
            # rounds above EPSILON (regression; classification with fractional weights).
            out.pure_splits.append((na, nb))
            continue
        if a_leaf != b_leaf:
            out.mismatches.append(f"node {na}/{nb}: leaf in one tree only")
            continue
        fa, ta, ma = a.feature[na], a.threshold[na], bool(a.missing_go_to_left[na])
        fb, tb, mb = b.feature[nb], b.threshold[nb], bool(b.missing_go_to_left[nb])
        if fa == fb and ta == tb and ma == mb:
            out.same_nodes += 1
            x = X32[rows, fa]
            go_left = (x <= ta) | (np.isnan(x) & ma)
            stack.append((a.children_left[na], b.children_left[nb], rows[go_left]))
            stack.append((a.children_right[na], b.children_right[nb], rows[~go_left]))
            continue
        args = (y_code[rows], w[rows])
        qa = split_quality(X32[rows, fa], *args, ta, criterion, n_classes, ma)
        qb = split_quality(X32[rows, fb], *args, tb, criterion, n_classes, mb)
        if np.isclose(qa, qb, rtol=1e-7, atol=1e-12):
            out.ties.append((na, nb, qa))
        else:
            out.mismatches.append(
                f"node {na}/{nb}: dtjit splits x{fa} <= {ta} NaN-left={ma} (quality {qa!r}), "
                f"scikit-learn x{fb} <= {tb} NaN-left={mb} (quality {qb!r})"
            )
    return out


def assert_same_as_sklearn(ours, theirs, X, y, sample_weight=None, allow_ties=False):
    """Assert dtjit built scikit-learn's tree: identical, or different only at proven ties."""
    cmp = compare_with_sklearn(ours, theirs, X, y, sample_weight)
    assert not cmp.mismatches, "\n".join(cmp.mismatches[:5])
    if not allow_ties:
        assert not cmp.ties, f"unexpected tie(s) at nodes {cmp.ties[:5]}"
    if cmp.identical:
        assert ours.tree_.node_count == theirs.tree_.node_count
        if hasattr(ours, "classes_"):
            np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        else:  # leaf means: the same rows summed in another order
            np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    return cmp


def assert_trees_identical(a, b):
    """Bit-for-bit equality of two trees (estimators or ``Tree``s): every array, same dtype."""
    from dtjit._tree import NODE_ARRAYS

    ta, tb = getattr(a, "tree_", a), getattr(b, "tree_", b)
    assert ta.node_count == tb.node_count
    assert ta.n_features == tb.n_features
    np.testing.assert_array_equal(ta.n_classes, tb.n_classes)
    for name in NODE_ARRAYS:
        x, y = getattr(ta, name), getattr(tb, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)


def check_tree_invariants(est):
    """The storage contract holds (delegates to the package's single checker)."""
    dtjit.check_tree(est.tree_)


def count_overlaps(x0, y0, x1, y1):
    """Number of pairs of axis-aligned boxes (corner arrays) whose interiors intersect."""
    x0, y0, x1, y1 = (np.asarray(a, dtype=np.float64) for a in (x0, y0, x1, y1))
    overlap = (
        (x0[:, None] < x1[None, :])
        & (x0[None, :] < x1[:, None])
        & (y0[:, None] < y1[None, :])
        & (y0[None, :] < y1[:, None])
    )
    np.fill_diagonal(overlap, False)
    return int(overlap.sum() // 2)
