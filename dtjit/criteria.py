"""Impurity measures for hand computations: entropy, Gini and the gains of a split.

These are the quantities the textbooks compute by hand (ID3 / C4.5 / CART), from class
counts. They are plain numpy, meant for people; the compiled kernels have their own copies
and the tests check the two agree.

Examples
--------
>>> from dtjit import criteria
>>> round(criteria.entropy([9, 5]), 4)         # play-tennis: 9 yes, 5 no
0.9403
>>> round(criteria.information_gain([4, 4], [[3, 0], [1, 4]]), 4)
0.5488
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ArrayLike = Sequence[float] | np.ndarray


def _counts(counts: ArrayLike, what: str = "counts") -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D sequence of class counts, got {c!r}.")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"{what} must be finite and non-negative, got {c.tolist()}.")
    if c.sum() <= 0:
        raise ValueError(f"{what} must not all be zero.")
    return c


def entropy(counts: ArrayLike, base: float = 2.0) -> float:
    """Shannon entropy of a class distribution given by (weighted) counts.

    Parameters
    ----------
    counts : sequence of float
        Number (or weight) of samples of each class.
    base : float, default=2.0
        Logarithm base: 2 gives bits, ``math.e`` gives nats.

    Returns
    -------
    float
        ``-sum(p * log(p))`` over classes with ``p > 0``.
    """
    c = _counts(counts)
    p = c[c > 0] / c.sum()
    return float(-(p * np.log(p)).sum() / np.log(base)) + 0.0  # + 0.0 turns -0.0 into 0.0


def gini(counts: ArrayLike) -> float:
    """Gini index ``1 - sum(p**2)`` of a class distribution given by counts.

    Parameters
    ----------
    counts : sequence of float
        Number (or weight) of samples of each class.

    Returns
    -------
    float
    """
    c = _counts(counts)
    p = c / c.sum()
    return float(1.0 - (p * p).sum())


def _children(parent: np.ndarray, children: Sequence[ArrayLike]) -> list[np.ndarray]:
    kids = [_counts(child, "each child's counts") for child in children]
    if len(kids) < 2:
        raise ValueError("A split needs at least two children.")
    if any(k.shape != parent.shape for k in kids):
        raise ValueError("Every child must have one count per class of the parent.")
    if not np.allclose(np.sum(kids, axis=0), parent):
        raise ValueError("The children's counts must add up to the parent's counts.")
    return kids


def _decrease(impurity, parent: ArrayLike, children: Sequence[ArrayLike]) -> float:
    """Impurity of the parent minus the size-weighted impurity of its children."""
    p = _counts(parent, "parent counts")
    kids = _children(p, children)
    n = p.sum()
    return float(impurity(p) - sum(k.sum() / n * impurity(k) for k in kids))


def information_gain(parent: ArrayLike, children: Sequence[ArrayLike], base: float = 2.0) -> float:
    """Entropy of the parent minus the weighted entropy of its children (ID3's gain).

    Parameters
    ----------
    parent : sequence of float
        Class counts of the node.
    children : sequence of sequences of float
        Class counts of each child; they must add up to ``parent``.
    base : float, default=2.0
        Logarithm base.

    Returns
    -------
    float
    """
    return _decrease(lambda counts: entropy(counts, base), parent, children)


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
