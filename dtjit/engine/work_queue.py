"""Dynamic sharing of a step's work items between the threads running it.

Items dealt to the threads in a fixed pattern leave a thread idle whenever its items happen
to cost less than another's (features of unequal cost, nodes of unequal size). Instead each
thread's call of a worker kernel (``threads.run_workers``, all calls given one counter)
claims the next unclaimed item until none is left::

    item = claim_item(queue)
    while item < n_items:
        ...  # work on item
        item = claim_item(queue)

Which thread computes an item then varies from run to run, so an item must write only its
own part of the outputs: the results stay bit-identical to a serial loop over the items.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from .jit import inline_kernel


@intrinsic
def _fetch_and_increment(typingctx, counter):
    """Atomically add one to ``counter[0]`` (an int64 array); return its value before."""
    if not (
        isinstance(counter, types.Array) and counter.dtype == types.int64 and counter.ndim == 1
    ):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        # Monotonic order suffices: the counter only hands out distinct numbers, the items'
        # data is published when the threads' calls end (``run_workers`` waits for them).
        return builder.atomic_rmw("add", array.data, ir.Constant(ir.IntType(64), 1), "monotonic")

    return types.int64(counter), codegen


@inline_kernel
def new_work_queue():
    """Return a fresh counter for :func:`claim_item` (one per threaded step)."""
    return np.zeros(1, dtype=np.int64)


def claim_item(queue):
    """Return the next unclaimed item number of ``queue`` (0, 1, 2, ... over all threads).

    This body runs only as plain Python (``NUMBA_DISABLE_JIT``, where ``prange`` is a serial
    loop); compiled callers get the atomic version below.
    """
    item = queue[0]
    queue[0] = item + 1
    return item


@overload(claim_item, inline="always")
def _claim_item_compiled(queue):
    return lambda queue: _fetch_and_increment(queue)
