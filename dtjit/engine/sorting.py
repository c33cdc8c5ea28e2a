"""A stable argsort for kernels, compiled in a fraction of numba's own.

numba's ``np.argsort(kind="mergesort")`` compiles its generic timsort for every key type,
about 3 s of CPU at a first use; the subset search orders categories and the absolute-error
criterion ranks targets with this one instead.
"""

from __future__ import annotations

import numpy as np

from .jit import callee_kernel, inline_kernel

# Runs of this many keys are sorted by insertion before the merges.
RUN = 16


@inline_kernel
def before(a, b):
    """Whether key ``a`` sorts strictly before key ``b``: ascending, NaN after every number."""
    return a < b or (b != b and a == a)


@callee_kernel
def stable_order(key):
    """Return the positions of ``key`` in ascending key order, ties in position order, NaN last.

    ``np.argsort(key, kind="stable")``'s result: insertion sort within runs of :data:`RUN`
    positions, then bottom-up merges of the runs. O(n log n), one scratch array.
    """
    n = key.shape[0]
    order = np.empty(n, dtype=np.int64)
    merged = np.empty(n, dtype=np.int64)
    for low in range(0, n, RUN):
        high = min(low + RUN, n)
        for j in range(low, high):
            # Shift the larger keys right; an equal key stays behind (stable).
            q = j
            while q > low and before(key[j], key[order[q - 1]]):
                order[q] = order[q - 1]
                q -= 1
            order[q] = j
    width = RUN
    while width < n:
        for low in range(0, n, 2 * width):
            middle = min(low + width, n)
            high = min(low + 2 * width, n)
            a, b = low, middle
            for out in range(low, high):
                # The right run's key goes first only if strictly before (stable).
                if a < middle and (b >= high or not before(key[order[b]], key[order[a]])):
                    merged[out] = order[a]
                    a += 1
                else:
                    merged[out] = order[b]
                    b += 1
        order, merged = merged, order
        width *= 2
    return order
