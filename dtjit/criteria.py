"""Impurity measures for hand computations: entropy, Gini, the gains of a split, split scans.

These are the quantities the textbooks compute by hand (ID3 / C4.5 / CART). They are plain
numpy, meant for people; the compiled kernels have their own copies and the tests check the
two agree.

Every measure takes **class counts** (weighted counts are fine); a split is given by the
parent's counts and one count vector per branch. To start from label arrays, turn them into
counts first, so that a list of numbers is never mistaken for labels:

- :func:`class_counts` ``(y)``: one count per class, classes in sorted order;
- :func:`branch_counts` ``(x, y)``: the ID3 multiway partition of ``y`` by the values of a
  categorical column ``x``, one row of class counts per distinct value of ``x``;
- :func:`attribute_scores` ``(x, y)``: every measure of that partition at once;
- :func:`split_scan` ``(x, y)``: every threshold of a numeric column, with the arrays needed
  to draw them.

The logarithm base is 2 (bits) by default; ``base="e"`` or ``math.e`` gives nats, and any
other positive base except 1 works too. Gini indices and gain ratios do not depend on it.

Examples
--------
>>> from dtjit import criteria
>>> round(criteria.entropy([9, 5]), 4)         # play-tennis: 9 yes, 5 no
0.9403
>>> round(criteria.information_gain([4, 4], [[3, 0], [1, 4]]), 4)
0.5488
>>> outlook = ["sunny", "sunny", "overcast", "rainy", "rainy", "rainy", "overcast",
...            "sunny", "sunny", "rainy", "sunny", "overcast", "overcast", "rainy"]
>>> play = ["no", "no", "yes", "yes", "yes", "no", "yes",
...         "no", "yes", "yes", "yes", "yes", "yes", "no"]
>>> criteria.class_counts(play).tolist()       # classes sorted: no, yes
[5.0, 9.0]
>>> criteria.branch_counts(outlook, play).tolist()  # overcast, rainy, sunny
[[0.0, 4.0], [2.0, 3.0], [3.0, 2.0]]
>>> parent, branches = criteria.class_counts(play), criteria.branch_counts(outlook, play)
>>> round(criteria.gain_ratio(parent, branches), 4)
0.1564
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ArrayLike = Sequence[float] | np.ndarray
Base = float | str

__all__ = [
    "AttributeScores",
    "SplitScan",
    "attribute_scores",
    "branch_counts",
    "class_counts",
    "conditional_entropy",
    "entropy",
    "gain_ratio",
    "gini",
    "gini_gain",
    "information_gain",
    "split_information",
    "split_scan",
]


# ----------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------


def _counts(counts: ArrayLike, what: str = "counts") -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D sequence of class counts, got {c!r}.")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"{what} must be finite and non-negative, got {c.tolist()}.")
    if c.sum() <= 0:
        raise ValueError(f"{what} must not all be zero.")
    return c


def _log_base(base: Base) -> float:
    """Natural logarithm of ``base``; ``"e"`` means ``math.e``."""
    if isinstance(base, str):
        if base != "e":
            raise ValueError(f'base must be a positive number other than 1 or "e", got {base!r}.')
        return 1.0
    if isinstance(base, bool) or not isinstance(base, (int, float, np.integer, np.floating)):
        raise TypeError(f'base must be a positive number other than 1 or "e", got {base!r}.')
    if not (math.isfinite(base) and base > 0 and base != 1):
        raise ValueError(f'base must be a positive number other than 1 or "e", got {base!r}.')
    return math.log(base)


def _base_value(base: Base) -> float:
    """Return the base as a float: ``"e"`` becomes ``math.e``."""
    return math.e if isinstance(base, str) else float(base)


def _labels(y: Any, what: str = "y") -> np.ndarray:
    labels = np.asarray(y)
    if labels.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of labels, got shape {labels.shape}.")
    if labels.size == 0:
        raise ValueError(f"{what} is empty.")
    return labels


def _weights(sample_weight: Any, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n, dtype=np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(
            f"sample_weight has shape {w.shape}, expected one weight per label ({n},)."
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative.")
    return w


def _entropy_of_rows(counts: np.ndarray, log_base: float) -> np.ndarray:
    """Entropy of every row of a (m, n_classes) count matrix; rows of total 0 get 0."""
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / totals
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=1) / log_base + 0.0  # + 0.0 turns -0.0 into 0.0


# ----------------------------------------------------------------------------------------
# From labels to counts
# ----------------------------------------------------------------------------------------


def class_counts(y: Any, *, sample_weight: ArrayLike | None = None) -> np.ndarray:
    """Count (or weigh) the samples of each class of a label array.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels of any sortable type (strings, integers, ...).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weight of each sample; ``None`` counts every sample once.

    Returns
    -------
    ndarray of float64, shape (n_classes,)
        Count of each class present in ``y``, classes in sorted order (``np.unique(y)``).

    Examples
    --------
    >>> from dtjit.criteria import class_counts, entropy
    >>> class_counts(["b", "a", "b", "b"]).tolist()
    [1.0, 3.0]
    >>> round(entropy(class_counts(["b", "a", "b", "b"])), 4)
    0.8113
    """
    labels = _labels(y)
    w = _weights(sample_weight, labels.size)
    _, codes = np.unique(labels, return_inverse=True)
    return np.bincount(codes.ravel(), weights=w).astype(np.float64)


def branch_counts(x: Any, y: Any, *, sample_weight: ArrayLike | None = None) -> np.ndarray:
    """Class counts of each branch of the ID3 multiway split of ``y`` by the values of ``x``.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        A categorical (or discretised) attribute; every distinct value is one branch. It must
        have no missing values (drop those rows first).
    y : array-like of shape (n_samples,)
        Class labels.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weight of each sample.

    Returns
    -------
    ndarray of float64, shape (n_branches, n_classes)
        Row ``j`` holds the class counts of the samples with the ``j``-th smallest value of
        ``x``; columns are the classes of ``y`` in sorted order, as in :func:`class_counts`, so
        the rows add up to ``class_counts(y)``.
    """
    values = _labels(x, "x")
    labels = _labels(y)
    if values.size != labels.size:
        raise ValueError(f"x and y have different lengths: {values.size} and {labels.size}.")
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError("x has missing values (NaN); drop those rows first.")
    if values.dtype.kind == "O" and any(v is None or v != v for v in values):  # v != v: NaN
        raise ValueError("x has missing values (None/NaN); drop those rows first.")
    w = _weights(sample_weight, labels.size)
    _, branch = np.unique(values, return_inverse=True)
    classes, code = np.unique(labels, return_inverse=True)
    n_branches = int(branch.max()) + 1
    flat = branch.ravel() * classes.size + code.ravel()
    counts = np.bincount(flat, weights=w, minlength=n_branches * classes.size)
    return counts.reshape(n_branches, classes.size).astype(np.float64)


# ----------------------------------------------------------------------------------------
# Measures of one node
# ----------------------------------------------------------------------------------------


def entropy(counts: ArrayLike, base: Base = 2.0) -> float:
    """Shannon entropy of a class distribution given by (weighted) counts.

    Parameters
    ----------
    counts : sequence of float
        Number (or weight) of samples of each class; from labels use
        ``entropy(class_counts(y))``.
    base : float or "e", default=2.0
        Logarithm base: 2 gives bits, ``"e"`` or ``math.e`` gives nats.

    Returns
    -------
    float
        ``-sum(p * log(p))`` over classes with ``p > 0``.
    """
    log_base = _log_base(base)
    return float(_entropy_of_rows(_counts(counts)[None, :], log_base)[0])


def gini(counts: ArrayLike) -> float:
    """Gini index ``1 - sum(p**2)`` of a class distribution given by counts.

    Parameters
    ----------
    counts : sequence of float
        Number (or weight) of samples of each class; from labels use
        ``gini(class_counts(y))``.

    Returns
    -------
    float
    """
    c = _counts(counts)
    p = c / c.sum()
    return float(1.0 - (p * p).sum())


# ----------------------------------------------------------------------------------------
# Measures of a split
# ----------------------------------------------------------------------------------------


def _branches(children: Sequence[ArrayLike], min_children: int) -> list[np.ndarray]:
    kids = [_counts(child, "each child's counts") for child in children]
    if len(kids) < min_children:
        raise ValueError(
            "A split needs at least two children."
            if min_children == 2
            else "A partition needs at least one branch."
        )
    if any(k.shape != kids[0].shape for k in kids):
        raise ValueError("Every child must have one count per class.")
    return kids


def _children(parent: np.ndarray, children: Sequence[ArrayLike]) -> list[np.ndarray]:
    kids = _branches(children, min_children=2)
    if kids[0].shape != parent.shape:
        raise ValueError("Every child must have one count per class of the parent.")
    if not np.allclose(np.sum(kids, axis=0), parent):
        raise ValueError("The children's counts must add up to the parent's counts.")
    return kids


def _weighted_impurity(impurity, kids: list[np.ndarray]) -> float:
    """Size-weighted mean impurity of the children."""
    n = sum(k.sum() for k in kids)
    return float(sum(k.sum() / n * impurity(k) for k in kids))


def _decrease(impurity, parent: ArrayLike, children: Sequence[ArrayLike]) -> float:
    """Impurity of the parent minus the size-weighted impurity of its children."""
    p = _counts(parent, "parent counts")
    kids = _children(p, children)
    return float(impurity(p) - _weighted_impurity(impurity, kids))


def conditional_entropy(children: Sequence[ArrayLike], base: Base = 2.0) -> float:
    """Entropy of the class left once the branch is known: ``sum_j n_j / n * H(branch j)``.

    Parameters
    ----------
    children : sequence of sequences of float, or ndarray of shape (n_branches, n_classes)
        Class counts of each branch of a partition, e.g. ``branch_counts(x, y)`` for the ID3
        multiway split on a categorical column ``x``.
    base : float or "e", default=2.0
        Logarithm base.

    Returns
    -------
    float
        ``H(Y | X)``; ``information_gain = entropy(parent) - conditional_entropy(children)``.

    Examples
    --------
    >>> import math
    >>> round(conditional_entropy([[4, 4], [3, 0], [0, 3]], base="e"), 4)
    0.3961
    """
    _log_base(base)
    return _weighted_impurity(lambda c: entropy(c, base), _branches(children, min_children=1))


def information_gain(parent: ArrayLike, children: Sequence[ArrayLike], base: Base = 2.0) -> float:
    """Entropy of the parent minus the weighted entropy of its children (ID3's gain).

    Parameters
    ----------
    parent : sequence of float
        Class counts of the node, e.g. ``class_counts(y)``.
    children : sequence of sequences of float
        Class counts of each child, e.g. ``branch_counts(x, y)``; they must add up to
        ``parent``.
    base : float or "e", default=2.0
        Logarithm base.

    Returns
    -------
    float
    """
    _log_base(base)
    return _decrease(lambda counts: entropy(counts, base), parent, children)


def split_information(children: Sequence[ArrayLike], base: Base = 2.0) -> float:
    """Entropy of the branch sizes, C4.5's penalty for splits into many small branches.

    Parameters
    ----------
    children : sequence of sequences of float
        Class counts of each child (at least two).
    base : float or "e", default=2.0
        Logarithm base.

    Returns
    -------
    float
        ``-sum_j n_j / n * log(n_j / n)``.
    """
    kids = _branches(children, min_children=2)
    return entropy([k.sum() for k in kids], base)


def gain_ratio(parent: ArrayLike, children: Sequence[ArrayLike], base: Base = 2.0) -> float:
    """C4.5's gain ratio: information gain divided by split information.

    Parameters
    ----------
    parent : sequence of float
        Class counts of the node.
    children : sequence of sequences of float
        Class counts of each child (at least two, none empty); they must add up to
        ``parent``.
    base : float or "e", default=2.0
        Logarithm base; the ratio does not depend on it.

    Returns
    -------
    float
    """
    # Two or more non-empty children always have a positive split information.
    return information_gain(parent, children, base) / split_information(children, base)


def gini_gain(parent: ArrayLike, children: Sequence[ArrayLike]) -> float:
    """Gini index of the parent minus the weighted Gini index of its children (CART).

    Parameters
    ----------
    parent : sequence of float
        Class counts of the node.
    children : sequence of sequences of float
        Class counts of each child; they must add up to ``parent``.

    Returns
    -------
    float
    """
    return _decrease(gini, parent, children)


# ----------------------------------------------------------------------------------------
# Everything about one categorical attribute
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttributeScores:
    """Every measure of the ID3 multiway split on one categorical attribute.

    Attributes
    ----------
    values : ndarray of shape (n_branches,)
        The distinct values of the attribute, sorted: one branch each.
    classes : ndarray of shape (n_classes,)
        The classes, sorted.
    counts : ndarray of float64, shape (n_branches, n_classes)
        Class counts of each branch (:func:`branch_counts`).
    entropy : float
        Entropy of all samples.
    conditional_entropy : float
        Weighted entropy of the branches.
    information_gain : float
        ``entropy - conditional_entropy``.
    split_information : float
        Entropy of the branch sizes.
    gain_ratio : float
        ``information_gain / split_information``.
    gini : float
        Gini index of all samples.
    gini_gain : float
        Decrease of the weighted Gini index.
    base : float
        Logarithm base of the entropies.
    """

    values: np.ndarray
    classes: np.ndarray
    counts: np.ndarray
    entropy: float
    conditional_entropy: float
    information_gain: float
    split_information: float
    gain_ratio: float
    gini: float
    gini_gain: float
    base: float


def attribute_scores(
    x: Any, y: Any, *, base: Base = 2.0, sample_weight: ArrayLike | None = None
) -> AttributeScores:
    """Entropy, information gain, split information, gain ratio and Gini of one attribute.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        A categorical attribute with at least two distinct values and no missing values.
    y : array-like of shape (n_samples,)
        Class labels.
    base : float or "e", default=2.0
        Logarithm base of the entropies.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weight of each sample.

    Returns
    -------
    AttributeScores

    Examples
    --------
    >>> s = attribute_scores(["a", "a", "b", "b"], [0, 0, 0, 1])
    >>> round(s.information_gain, 4), round(s.gain_ratio, 4), round(s.gini_gain, 4)
    (0.3113, 0.3113, 0.125)
    """
    counts = branch_counts(x, y, sample_weight=sample_weight)
    if counts.shape[0] < 2:
        raise ValueError("x has a single distinct value: there is no split to score.")
    parent = counts.sum(axis=0)
    return AttributeScores(
        values=np.unique(np.asarray(x)),
        classes=np.unique(np.asarray(y)),
        counts=counts,
        entropy=entropy(parent, base),
        conditional_entropy=conditional_entropy(counts, base),
        information_gain=information_gain(parent, counts, base),
        split_information=split_information(counts, base),
        gain_ratio=gain_ratio(parent, counts, base),
        gini=gini(parent),
        gini_gain=gini_gain(parent, counts),
        base=_base_value(base),
    )


# ----------------------------------------------------------------------------------------
# Every threshold of one numeric feature
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitScan:
    """Every candidate threshold of one numeric feature, for the four classic panels.

    The panels: a histogram of ``x`` by class; the fraction of the positive class in the
    whole data ``D``, in ``T = {x <= t}`` and in ``F = {x > t}``; the entropies of D, T and F;
    and the information gain of each threshold. ``m`` is the number of candidates. All arrays
    are read-only.

    Attributes
    ----------
    x : ndarray of float64, shape (n,)
        The non-missing feature values, sorted (stably: tied values keep their input order).
    y : ndarray, shape (n,)
        The labels aligned with ``x``.
    thresholds : ndarray of float64, shape (m,)
        Midpoints ``a / 2 + b / 2`` between consecutive distinct values ``a < b`` of ``x``,
        increasing (``a`` itself in the rare case where the midpoint rounds to ``b``).
    n_left, n_right : ndarray of int64, shape (m,)
        Number of samples in T (``x <= t``) and in F (``x > t``).
    positive_class : object
        The class whose fraction ``ratio_*`` reports (a Python scalar for numpy labels).
    ratio_total : float
        Fraction of ``positive_class`` in D.
    ratio_left, ratio_right : ndarray of float64, shape (m,)
        Fraction of ``positive_class`` in T and in F.
    entropy_total : float
        Entropy of the class distribution of D (all classes, not only the positive one).
    entropy_left, entropy_right : ndarray of float64, shape (m,)
        Entropies of T and F.
    gain : ndarray of float64, shape (m,)
        Information gain ``H(D) - |T|/|D| H(T) - |F|/|D| H(F)``.
    best_index : int
        Index of the largest gain; the lowest threshold on ties.
    best_threshold : float
        ``thresholds[best_index]``.
    best_gain : float
        ``gain[best_index]``.
    base : float
        Logarithm base of the entropies (2.0 for bits, ``math.e`` for nats).
    n_missing : int
        Rows dropped because ``x`` was NaN.
    is_boundary : ndarray of bool, shape (m,)
        Whether the threshold is a class boundary point (Fayyad & Irani): False when all
        samples at ``a`` and at ``b`` belong to one and the same class. The best threshold
        is always a boundary point.
    classes : ndarray, shape (n_classes,)
        The classes present in ``y``, sorted.
    counts_left, counts_right : ndarray of float64, shape (m, n_classes)
        Class counts of T and F, columns in the order of ``classes``.
    """

    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray
    n_left: np.ndarray
    n_right: np.ndarray
    positive_class: Any
    ratio_total: float
    ratio_left: np.ndarray
    ratio_right: np.ndarray
    entropy_total: float
    entropy_left: np.ndarray
    entropy_right: np.ndarray
    gain: np.ndarray
    best_index: int
    best_threshold: float
    best_gain: float
    base: float
    n_missing: int
    is_boundary: np.ndarray
    classes: np.ndarray
    counts_left: np.ndarray
    counts_right: np.ndarray

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False


def _default_positive(classes: np.ndarray, totals: np.ndarray) -> Any:
    """Pick the larger of two labels, otherwise the most frequent (smallest on ties)."""
    if classes.size == 2:
        return classes[1]
    return classes[int(np.argmax(totals))]


def split_scan(x: Any, y: Any, *, positive: Any = None, base: Base = 2.0) -> SplitScan:
    """Score every threshold of one numeric feature by information gain.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        Numeric feature; NaN rows are dropped (and counted in ``n_missing``). Converted to
        float64: pass the float32 values a tree was fitted on to get its thresholds.
    y : array-like of shape (n_samples,)
        Class labels (two or more classes; one class scans too, with zero gains).
    positive : label, default=None
        The class whose fraction is reported in ``ratio_*``. By default the larger label of
        a binary ``y``, and the most frequent class (the smallest one on ties) otherwise.
    base : float or "e", default=2.0
        Logarithm base of the entropies and gains.

    Returns
    -------
    SplitScan

    Notes
    -----
    Candidates are the midpoints between consecutive distinct values, as in a dtjit or
    scikit-learn tree (which also skip values closer than ``1e-7`` in float32; this scan does
    not). With ``criterion="entropy"``, a depth-1 tree on ``x`` alone splits at
    ``best_threshold``. Cost: O(n log n) for the sort, then O(m * n_classes).

    Examples
    --------
    >>> scan = split_scan([100, 200, 800, 60, 40, 300, 300, 300],
    ...                   ["Yes", "No", "No", "Yes", "Yes", "Yes", "No", "No"])
    >>> scan.thresholds.tolist()
    [50.0, 80.0, 150.0, 250.0, 550.0]
    >>> scan.positive_class, scan.best_threshold, round(scan.best_gain, 4)
    ('Yes', 150.0, 0.5488)
    """
    values = _labels(x, "x")
    labels = _labels(y)
    if values.size != labels.size:
        raise ValueError(f"x and y have different lengths: {values.size} and {labels.size}.")
    try:
        values = values.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"x must be numeric, got dtype {values.dtype}.") from exc
    if np.isinf(values).any():
        raise ValueError("x has infinite values; only finite values and NaN are accepted.")
    log_base = _log_base(base)
    missing = np.isnan(values)
    order = np.argsort(values[~missing], kind="stable")
    xs = values[~missing][order]
    ys = labels[~missing][order]
    if xs.size == 0:
        raise ValueError("x has no non-missing value.")
    classes, code = np.unique(ys, return_inverse=True)
    code = code.ravel()
    n, k = xs.size, classes.size
    if positive is None:
        positive = _default_positive(classes, np.bincount(code, minlength=k))
    matches = np.flatnonzero(classes == positive)
    if matches.size != 1:
        raise ValueError(f"positive={positive!r} is not a class of y: {classes.tolist()}.")
    pos = int(matches[0])
    positive_class = classes[pos].item() if isinstance(classes[pos], np.generic) else classes[pos]

    # cumulative[p] = class counts of the first p sorted samples.
    cumulative = np.zeros((n + 1, k))
    np.cumsum(np.eye(k)[code], axis=0, out=cumulative[1:])
    cut = np.flatnonzero(xs[1:] != xs[:-1]) + 1  # left = xs[:p], right = xs[p:]
    if cut.size == 0:
        raise ValueError("x has fewer than two distinct non-missing values: nothing to scan.")
    total = cumulative[n]
    counts_left = cumulative[cut]
    counts_right = total - counts_left
    n_left = cut.astype(np.int64)
    n_right = n - n_left
    low, high = xs[cut - 1], xs[cut]
    thresholds = low / 2.0 + high / 2.0  # halves: the sum cannot overflow
    thresholds = np.where(thresholds < high, thresholds, low)  # keep x <= t for all of `low`

    entropy_total = float(_entropy_of_rows(total[None, :], log_base)[0])
    entropy_left = _entropy_of_rows(counts_left, log_base)
    entropy_right = _entropy_of_rows(counts_right, log_base)
    gain = entropy_total - (n_left / n * entropy_left + n_right / n * entropy_right)
    best = int(np.argmax(gain))  # first maximum: the lowest threshold wins ties

    # Groups of tied values: a candidate separates group j - 1 from group j.
    starts = np.concatenate(([0], cut))
    group_counts = cumulative[np.concatenate((cut, [n]))] - cumulative[starts]
    pure = (group_counts > 0).sum(axis=1) == 1
    group_class = np.argmax(group_counts, axis=1)
    same_pure_class = pure[:-1] & pure[1:] & (group_class[:-1] == group_class[1:])

    return SplitScan(
        x=xs,
        y=ys,
        thresholds=thresholds,
        n_left=n_left,
        n_right=n_right,
        positive_class=positive_class,
        ratio_total=float(total[pos] / n),
        ratio_left=counts_left[:, pos] / n_left,
        ratio_right=counts_right[:, pos] / n_right,
        entropy_total=entropy_total,
        entropy_left=entropy_left,
        entropy_right=entropy_right,
        gain=gain,
        best_index=best,
        best_threshold=float(thresholds[best]),
        best_gain=float(gain[best]),
        base=_base_value(base),
        n_missing=int(missing.sum()),
        is_boundary=~same_pure_class,
        classes=classes,
        counts_left=counts_left,
        counts_right=counts_right,
    )
