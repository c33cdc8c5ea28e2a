"""A best score per node, shared by the threads of a threaded split search.

The exact Gini sweep skips, with a cheap pre-test, every cut that cannot beat the best cut
it has scored so far. Started from the best score some *other* feature already reached in
the same node, the pre-test turns away most cuts of the features that lose (on covtype's
deep levels, scoring was about a third of the sweep). Features of one node are searched by
different threads at once, so that best is shared between them (each thread's call of
``sweep_exact.best_splits_worker`` gets the same array)::

    known = read_best(best, k)  # search feature f of node k, skipping what cannot reach known
    offer_best(best, k, proxy)  # what feature f reached

Why the results stay bit-identical to a serial search whatever the threads' timing: a value
read is always a score some split of the node really reaches, so it is at most the node's
best; the sweep's pre-test lets through every cut reaching the value read (ties included),
so the winning feature still finds its best cut exactly, and a losing feature reports at
most what it would have (maybe nothing), which loses as before. Loads and stores are
relaxed atomics: a thread may read a stale value (still a reached score), never a torn one.
:func:`offer_best` is a load then a store, not a read-modify-write: a concurrent offer may
overwrite a larger value with a smaller reached one, which only weakens the next bound.
"""

from __future__ import annotations

import numpy as np
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .jit import inline_kernel


def _float64_slot(context, builder, array_type, array, index_type, k):
    """Pointer to ``array[k]`` of a 1-D float64 array, any layout.

    Bounds-checked like an indexing under ``NUMBA_BOUNDSCHECK`` (the bounds-checked lane of
    the tests), unchecked otherwise.
    """
    view = context.make_array(array_type)(context, builder, array)
    k = context.cast(builder, k, index_type, types.intp)
    return cgutils.get_item_pointer(
        context, builder, array_type, view, [k], wraparound=False,
        boundscheck=config.BOUNDSCHECK,
    )  # fmt: skip


def _is_float64_vector(array):
    return isinstance(array, types.Array) and array.dtype == types.float64 and array.ndim == 1


@intrinsic
def _load_relaxed(typingctx, array, k):
    """``array[k]`` read as one relaxed (monotonic) atomic load."""
    if not (_is_float64_vector(array) and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        slot = _float64_slot(
            context, builder, signature.args[0], args[0], signature.args[1], args[1]
        )
        return builder.load_atomic(slot, "monotonic", 8)

    return types.float64(array, k), codegen


@intrinsic
def _store_relaxed(typingctx, array, k, value):
    """``array[k] = value`` as one relaxed (monotonic) atomic store."""
    if not (
        _is_float64_vector(array)
        and isinstance(k, types.Integer)
        and isinstance(value, types.Float)
    ):
        return None

    def codegen(context, builder, signature, args):
        slot = _float64_slot(
            context, builder, signature.args[0], args[0], signature.args[1], args[1]
        )
        value = context.cast(builder, args[2], signature.args[2], types.float64)
        builder.store_atomic(value, slot, "monotonic", 8)
        return context.get_dummy_value()

    return types.void(array, k, value), codegen


@inline_kernel
def new_shared_best(n_nodes):
    """Return the shared bests of ``n_nodes`` nodes, all ``-inf`` (nothing reached yet)."""
    return np.full(n_nodes, -np.inf)


def read_best(best, k):
    """Return the best score offered so far for node ``k`` (``-inf``: none).

    This body and :func:`offer_best`'s run only as plain Python (``NUMBA_DISABLE_JIT``,
    where ``prange`` is a serial loop); compiled callers get the atomic versions below.
    """
    return best[k]


def offer_best(best, k, proxy):
    """Record that a split of node ``k`` reaches ``proxy``, if it beats the value held."""
    if proxy > best[k]:
        best[k] = proxy


@overload(read_best, inline="always")
def _read_best_compiled(best, k):
    return lambda best, k: _load_relaxed(best, k)


@overload(offer_best, inline="always")
def _offer_best_compiled(best, k, proxy):
    def offer(best, k, proxy):
        if proxy > _load_relaxed(best, k):
            _store_relaxed(best, k, proxy)

    return offer
