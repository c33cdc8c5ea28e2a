"""Calling from a test a kernel that has no Python entry (``jit.callee_kernel``)."""

from __future__ import annotations

import functools

import numba


@functools.cache
def via_kernel(kernel):
    """Return a numba function that calls ``kernel`` with its own arguments.

    A callee kernel refuses calls from Python; this compiled caller links the kernel's code
    (numba's own pipeline, as a user's ``numba.njit`` function would) and passes its
    arguments and result through, so a test compares the kernel itself with a reference.
    """

    @numba.njit(cache=False)
    def call(*args):
        return kernel(*args)

    return call
