"""Decorator presets, sentinels and criterion codes shared by every kernel module.

Every compiled function in dtjit is declared with :data:`kernel`, :func:`callee_kernel` or
:data:`inline_kernel`, so the flags are set in one place and a test can check them:

- ``cache=True``: compiled code is written next to the module and reused by later processes.
  The cache is keyed on the *defining* file: after editing a kernel that another module's
  kernel calls, clear ``__pycache__`` (``make clean-cache``).
- ``fastmath=False``: missing values are NaN and the split search compares infinities,
  so the no-NaN / no-inf assumptions of fastmath would silently change results.
- ``nogil=True``: kernels release the GIL, so the threads of ``n_jobs`` (``threads``) and a
  user's own threads run them at once. No kernel is ``parallel``: ``threads`` says why.
- ``error_model="numpy"``: division by zero gives inf/NaN like numpy instead of raising,
  which keeps the compiled loops free of Python-exception checks.
- ``no_cfunc_wrapper=True``: numba otherwise compiles, next to each kernel, a C-callable
  entry (for use by address, as ``@cfunc``) that nothing in dtjit calls: compile time for
  nothing (``benchmarks/README.md``). Python calls go through the CPython wrapper, kept.
- ``pipeline_class``: numba's pipeline, but an inline helper's front end is built once per
  process instead of at every call site, and a kernel calls another by symbol instead of
  linking a copy of it (``compile_pipeline``, ``kernel_calls``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

# Both register numba:compile listeners: the collector's thresholds during a compile, and
# the warning at the first compile of a process.
from . import (
    compile_gc,  # noqa: F401
    compile_notice,  # noqa: F401
)
from .compile_pipeline import KernelCompiler
from .kernel_calls import CALLEE_ONLY

KERNEL_OPTIONS = {
    "cache": True,
    "fastmath": False,
    "nogil": True,
    "error_model": "numpy",
    "no_cfunc_wrapper": True,
    "pipeline_class": KernelCompiler,
}

kernel = numba.njit(**KERNEL_OPTIONS)
# Small helpers called in the innermost loops. Numba does not inline a call to another
# compiled function by itself, and a call that passes arrays pays reference-count updates:
# measured 5x slower traversal and ~25 ns per split candidate before inlining them.
# Inlined, a helper still updates the counts of the arrays it is given, once per call; the
# serial kernels' loops over nodes therefore pass uncounted views (``borrow``).
# Under NUMBA_BOUNDSCHECK (the bounds-checked lane) they are plain calls: the checks are the
# same, and typing each helper once instead of at every call site cut the lane's cold compile
# from 186 s to 151 s.
inline_kernel = numba.njit(
    inline="never" if numba.config.BOUNDSCHECK else "always", **KERNEL_OPTIONS
)
# Both choices cost compile time. Inlining re-runs the callee's front end and copies its IR at
# every call site (numba copies it block by block, which grows with the square of its size):
# the exact sweep with its handling of NaN rows, inlined into every builder, cost seconds of
# a cold fit. As a kernel of its own it was called once per (node, feature), and on covtype's
# full-depth tree (48k nodes, most of them small) those calls cost 2.5-4 % of the fit; so
# it is written into one kernel, ``best_splits_worker``, whose loop over work items (a
# feature's nodes) serves one thread and many. (As an inline helper of that kernel, the NaN
# handling's copy of the sweep alone cost 3-4 s of a cold first fit.)
# A kernel has a fixed cost instead (its own typing and LLVM module; callers reach it by
# symbol, ``kernel_calls``), so per-node helpers and tiny ones stay inline.
# Copies multiply down a chain of inline helpers: three inlined calls of a helper that itself
# inlines a pass four times compile twelve copies of the pass. The absolute-error search
# compiled in 39 s that way, 1 s with its two O(n log n) helpers as kernels (about 5 % on an
# absolute-error fit); the multi-output sweep went from 12.6 s to 4.3 s the same way.
# ``benchmarks/bench_startup.py`` and ``numba.core.event`` ("numba:compile") show where
# compile time goes, kernel by kernel.
# Unsigned positions: numba maps a negative *signed* index to ``index + len`` (a compare and
# a select per array access, which also keeps LLVM from treating the address as a plain
# induction variable); an unsigned index gets no such fix-up. The hottest loops therefore
# walk ``range(np.uint64(start), np.uint64(end))`` and keep their write cursors uint64:
# the stable partition of a 465k-row segment went from 4.2 to 2.5 ns per row and feature,
# and covtype's full-depth fit 20-25 % faster (partition and Gini sweep). Keep every term of
# such arithmetic unsigned (``u - np.uint64(1)``, not ``u - 1``): numba types uint64 mixed
# with int64 as float64. Signed copies (``np.int64(u)``) serve comparisons and results.
# Constant integer arguments of kernel calls are written ``np.int64(0)``, not ``0``, and
# counters start as ``np.int64(0)``: numba types a bare constant as Literal[int](0) and
# compiles the callee once more next to its int64 version (measured: 15 kernels compiled
# twice, about 11 s of a 79 s cold compile). ``benchmarks/bench_startup.py`` lists offenders.


class CalleeKernel(CPUDispatcher):
    """A kernel that only other kernels call: compiled without numba's CPython wrapper.

    numba compiles, next to each kernel, the wrapper that converts Python arguments and
    results; kernels call each other by symbol (``kernel_calls``) and never use it, so
    dtjit's lowering leaves it out. Without it, a call from Python would jump to a null
    address, so this class refuses the call (also where numba lacks the parts dtjit's
    lowering needs and the wrapper is compiled after all).
    """

    def __call__(self, *args, **kwargs):
        """Refuse a call from Python: the kernel has no Python entry."""
        raise TypeError(
            f"{self.py_func.__module__}.{self.py_func.__qualname__} is compiled for calls "
            "from other kernels only and cannot be called from Python; call it from a "
            "compiled function (tests: a numba.njit function calling it), or run its .py_func"
        )


def callee_kernel(func):
    """Declare ``func`` a kernel that only other kernels call (no Python entry).

    The CPython wrapper is compile time spent for nothing on such a kernel (a few hundredths
    of a second per specialisation; ``benchmarks/README.md`` has the total). The kernel has
    every option of :data:`kernel`; its lowering leaves the wrapper out
    (``kernel_calls.CALLEE_ONLY``), and its dispatcher's class is :class:`CalleeKernel`,
    which has the same layout.
    """
    setattr(func, CALLEE_ONLY, True)
    dispatcher = kernel(func)
    if isinstance(dispatcher, CPUDispatcher):  # a plain function under NUMBA_DISABLE_JIT
        dispatcher.__class__ = CalleeKernel
    return dispatcher


# scikit-learn's sentinels: ``children_left == TREE_LEAF`` marks a leaf and leaves have
# ``feature == threshold == TREE_UNDEFINED``.
TREE_LEAF = -1
TREE_UNDEFINED = -2

# Adjacent feature values closer than this are not split (scikit-learn's FEATURE_THRESHOLD).
# scikit-learn declares it float32 and adds it to float32 values, so the sum is rounded to
# float32: above |x| ~ 1 only exactly equal values are merged. We reproduce that.
FEATURE_THRESHOLD = np.float32(1e-7)

# Tolerance of the leaf tests ``impurity <= EPSILON`` and
# ``improvement + EPSILON < min_impurity_decrease`` (scikit-learn's EPSILON).
EPSILON = float(np.finfo(np.float64).eps)

# Criterion codes: compiled code sees integers, never strings.
GINI = 0
ENTROPY = 1
SQUARED_ERROR = 2
# C4.5: thresholds chosen by information gain (the entropy sweep), features by gain ratio.
GAIN_RATIO = 3
POISSON = 4
ABSOLUTE_ERROR = 5

# A criterion scoring k > 1 outputs at once (scikit-learn's multi-output trees: the node
# impurity is the mean over outputs of each output's impurity) has the code
# ``base + MULTI_OUTPUT * k``: the kernels learn the number of outputs from the code, as
# scikit-learn's Criterion objects are built with n_outputs, and no kernel signature grows.
# Single-output codes are below MULTI_OUTPUT. Only GINI, ENTROPY and SQUARED_ERROR have
# multi-output forms (``sweep_multioutput``).
MULTI_OUTPUT = 8


def multi_output_criterion(criterion: int, n_outputs: int) -> int:
    """Return the code of ``criterion`` scoring ``n_outputs`` outputs (itself for one)."""
    return criterion if n_outputs == 1 else criterion + MULTI_OUTPUT * n_outputs


CRITERION_CODES = {
    "gini": GINI,
    "entropy": ENTROPY,
    "log_loss": ENTROPY,
    "gain_ratio": GAIN_RATIO,
    "squared_error": SQUARED_ERROR,
    "poisson": POISSON,
    "absolute_error": ABSOLUTE_ERROR,
}

# Work (rows x features) below which running a step on threads costs more than it saves:
# handing a call to a sleeping thread and waiting for it costs tens of microseconds
# (``threads.run_concurrently``, 2 vCPUs).
PARALLEL_MIN_WORK = 1 << 17
# Cells from which a single sequential pass over X (the two-valued scan and bit fill) runs
# threaded: at a fraction of a nanosecond per cell, below this it saves well under a
# millisecond.
PASS_PARALLEL_MIN_WORK = 1 << 22


def read_only(X: np.ndarray) -> np.ndarray:
    """Return a read-only view of ``X`` (no copy), the form fit kernels read X in.

    numba types a read-only array apart from a writeable one and compiles a kernel once for
    each: a read-only X (``np.load(mmap_mode="r")``, pandas' ``to_numpy`` under
    copy-on-write) compiled the presort and the two-valued scans a second time (about
    1.3 s of a cold process), and the histogram binning copied it whole to avoid that.
    Every entry kernel that only reads X gets this view instead, whatever X's flag.

    Parameters
    ----------
    X : ndarray

    Returns
    -------
    ndarray
        ``X``'s data, not writeable.
    """
    view = X.view()
    view.flags.writeable = False
    return view
