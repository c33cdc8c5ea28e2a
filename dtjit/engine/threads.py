"""numba's threads in dtjit's calls: ``n_jobs``, the count in force, where threads cannot run.

numba's threading layer fails in two situations a user meets without asking for threads,
and in both it kills the process instead of raising:

- **A process forked from one where numba's GNU OpenMP layer has started.** That layer (the
  default where libgomp is installed and TBB is not) records the process that started it and
  sends SIGTERM to a child of that process as soon as the child enters a parallel region
  ("Terminating: fork() called from a process already using GNU OpenMP, this is unsafe."):
  GNU OpenMP's thread pool does not survive ``fork``. numba starts its layer at the first
  ``numba.get_num_threads``, which every dtjit fit and predict calls, so after any fit a
  ``multiprocessing`` pool with the ``fork`` start method (Linux's default up to Python 3.13)
  lost every worker that fitted or predicted on threads, and waited for them forever.
  Such a process (and its own children) now runs dtjit on one thread, with a warning
  (:func:`usable_threads`); the results are the same, since serial and threaded fits and
  predictions are bit-identical.
- **Two threads in parallel regions at once under the ``workqueue`` layer** (numba's fallback
  without OpenMP or TBB, as with pip's numba on macOS): it aborts the process. There, calls
  on more than one thread take turns (:func:`numba_threads`).

Both rely on one invariant of the kernels' callers: a call on one thread never enters a
parallel region (every ``parallel_kernel`` is called only when more than one thread is in
force), so serial calls run safely in a forked child and alongside a threaded call.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
import threading
import warnings
from collections.abc import Iterator

import numba

# True in a process forked from one in which numba's GNU OpenMP layer had started (and, since
# the flag is inherited, in that process's own children): a parallel region would kill it.
_forked_from_gnu_openmp = False

# Taken by calls on more than one thread when numba's layer is not thread-safe. Re-entrant,
# so a threaded call made inside another on the same thread cannot deadlock.
_parallel_turn = threading.RLock()


def started_layer() -> str | None:
    """Return numba's threading layer (``"omp"``, ``"tbb"``, ``"workqueue"``), None if not started.

    A forked child reports its parent's layer: numba's record of it is inherited.
    """
    try:
        return numba.threading_layer()
    except ValueError:  # numba raises until its layer is started
        return None


def _is_gnu_openmp(layer: str | None) -> bool:
    """Whether ``layer`` is numba's OpenMP layer built on GNU OpenMP (not fork-safe)."""
    if layer != "omp":
        return False
    omppool = sys.modules.get("numba.np.ufunc.omppool")
    # numba builds the layer on GNU OpenMP on Linux; assume it when the module does not say.
    return getattr(omppool, "openmp_vendor", "GNU") == "GNU"


def _note_fork() -> None:
    """In a freshly forked child: remember whether the parent had started GNU OpenMP."""
    global _forked_from_gnu_openmp
    if _is_gnu_openmp(started_layer()):
        _forked_from_gnu_openmp = True


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_note_fork)


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Translate scikit-learn's ``n_jobs`` convention into a thread count.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` means 1; ``-1`` means all cores numba may use; ``-k`` means all but ``k - 1``.

    Returns
    -------
    int
        A thread count between 1 and ``numba.config.NUMBA_NUM_THREADS``.

    Raises
    ------
    ValueError
        If ``n_jobs`` is 0 or not an int.
    """
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return 1
    # fit validates its parameters; predict after set_params(n_jobs=...) arrives here unchecked
    if not isinstance(n_jobs, numbers.Integral):
        raise ValueError(f"n_jobs must be None or an int, got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, a positive int or -1.")
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return min(int(n_jobs), available)


def usable_threads(n_jobs: int | None) -> int:
    """Return the threads a fit or predict asked to use ``n_jobs`` runs on.

    :func:`resolve_n_jobs`'s count, except in a process forked from one where numba's GNU
    OpenMP threads had started, where parallel regions would be killed: there, 1, with a
    ``RuntimeWarning`` when more were asked for (see the module's docstring).

    Parameters
    ----------
    n_jobs : int or None
        scikit-learn's convention, as in :func:`resolve_n_jobs`.

    Returns
    -------
    int
        The thread count to run on.
    """
    n_threads = resolve_n_jobs(n_jobs)
    if n_threads > 1 and _forked_from_gnu_openmp:
        warnings.warn(
            f"dtjit runs on 1 thread instead of {n_threads}: this process was forked from one "
            "in which numba had started GNU OpenMP threads, which cannot run in a forked "
            "child (numba would terminate it). To use threads in worker processes, start them "
            "with the 'spawn' or 'forkserver' method, or install tbb so that numba uses it.",
            RuntimeWarning,
            stacklevel=4,
        )
        return 1
    return n_threads


@contextlib.contextmanager
def numba_threads(n_threads: int) -> Iterator[int]:
    """Run a block with numba's thread count set to ``n_threads``, restoring it afterwards.

    With more than one thread under a layer that is not thread-safe (``workqueue``), the
    block waits for any other thread's such block to finish first.

    Parameters
    ----------
    n_threads : int
        Threads the parallel kernels of the block may use.

    Yields
    ------
    int
        The thread count in force.
    """
    previous = numba.get_num_threads()  # starts numba's layer if it has not started
    numba.set_num_threads(n_threads)
    take_turn = n_threads > 1 and started_layer() == "workqueue"
    try:
        with _parallel_turn if take_turn else contextlib.nullcontext():
            yield n_threads
    finally:
        numba.set_num_threads(previous)
