"""Slow, obvious pure-Python MDLP discretisation (Fayyad & Irani 1993), the oracle of ``_mdlp``.

It follows the paper literally: a recursive function receives a list of ``(value, label)``
pairs, looks at every cut between two consecutive distinct values, keeps the class boundary
points, takes the one with the smallest class-information entropy (the first on ties) and
recurses into both halves iff the MDL test accepts the cut. Everything is recounted from
scratch at every step; meant for a few hundred rows at most.

Entropies are written ``-(p * (ln p / ln 2))``, summed over the classes in sorted order,
which is the order of operations of the compiled kernel, so both give the same floats and
the cut points can be compared exactly.
"""

from __future__ import annotations

import math

LN2 = math.log(2.0)


def entropy_bits(labels: list, classes: list) -> float:
    """Entropy in bits of a list of labels."""
    n = len(labels)
    h = 0.0
    for c in classes:
        count = labels.count(c)
        if count > 0:
            p = count / n
            h += -(p * (math.log(p) / LN2))
    return h


def is_boundary_point(rows: list, a: float, b: float) -> bool:
    """False iff every sample at ``a`` and at ``b`` has one and the same class."""
    classes_at_a = {label for value, label in rows if value == a}
    classes_at_b = {label for value, label in rows if value == b}
    return not (len(classes_at_a) == 1 and classes_at_a == classes_at_b)


def mdlp_cut_points(values, labels, *, min_samples_split=2, max_depth=None) -> list[float]:
    """Increasing MDLP cut points of one feature; NaN values are ignored."""
    rows = [(float(v), label) for v, label in zip(values, labels, strict=True) if v == v]
    classes = sorted({label for _, label in rows})
    cuts: list[float] = []

    def split(rows: list, depth: int) -> None:
        n = len(rows)
        if n < min_samples_split or (max_depth is not None and depth >= max_depth):
            return
        labels = [label for _, label in rows]
        distinct = sorted({value for value, _ in rows})
        best = None
        for a, b in zip(distinct[:-1], distinct[1:], strict=True):
            if not is_boundary_point(rows, a, b):
                continue
            left = [label for value, label in rows if value <= a]
            right = [label for value, label in rows if value >= b]
            e = len(left) / n * entropy_bits(left, classes) + len(right) / n * entropy_bits(
                right, classes
            )
            if best is None or e < best[0]:
                best = (e, a, b, left, right)
        if best is None:
            return
        e, a, b, left, right = best
        h = entropy_bits(labels, classes)
        k, k1, k2 = len(set(labels)), len(set(left)), len(set(right))
        delta = math.log2(3**k - 2) - (
            k * h - k1 * entropy_bits(left, classes) - k2 * entropy_bits(right, classes)
        )
        if h - e > (math.log2(n - 1) + delta) / n:
            cut = a / 2 + b / 2
            cuts.append(cut if cut < b else a)
            split([r for r in rows if r[0] <= a], depth + 1)
            split([r for r in rows if r[0] >= b], depth + 1)

    split(rows, 0)
    return sorted(cuts)
