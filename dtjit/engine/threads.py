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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numba
import numpy as np

T = TypeVar("T")

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


# The threads of run_concurrently beside the caller's: created on first use, grown on demand,
# and created anew in a forked child (the parent's threads do not exist there).
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def _worker_pool(size: int) -> ThreadPoolExecutor:
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid() or _pool._max_workers < size:
            if _pool is not None and _pool_pid == os.getpid():
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="dtjit")
            _pool_pid = os.getpid()
        return _pool


def run_concurrently(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Run the ``calls`` at once, the first on this thread; return their results in order.

    The calls are serial kernels, which release the GIL, over disjoint parts of the work.
    Threads started from Python instead of a ``prange`` region spare numba's compile of a
    parallel twin of each kernel (several times a serial kernel's) and need no threading
    layer. One call is a plain call.

    Parameters
    ----------
    calls : sequence of callables without arguments
        Each must write only its own part of the outputs.

    Returns
    -------
    list
        The calls' results. An exception of one is raised once every call has ended.
    """
    if len(calls) == 1:
        return [calls[0]()]
    pool = _worker_pool(len(calls) - 1)
    others = [pool.submit(call) for call in calls[1:]]
    try:
        first = calls[0]()
    finally:
        errors = [other.exception() for other in others]  # waits for every call
    for error in errors:
        if error is not None:
            raise error
    return [first, *(other.result() for other in others)]


def even_ranges(n_items: int, n_parts: int) -> list[tuple[np.int64, np.int64]]:
    """Cut ``range(n_items)`` into ``n_parts`` contiguous ranges of about equal length.

    The bounds are ``np.int64``, as the kernels that take them are compiled for.
    """
    bounds = [np.int64(n_items * part // n_parts) for part in range(n_parts + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def run_workers(worker: Callable[..., Any], n_threads: int, *args: Any) -> None:
    """Call ``worker(queue, n_threads, *args)`` on ``n_threads`` threads at once.

    ``worker`` is a serial kernel that claims work items from ``queue``
    (``work_queue.claim_item``) until none is left, so the calling thread finishes every
    item alone if the others start late (another fit holding the pool's threads). With one
    thread the serial search and the threaded one are the same compiled code.

    Parameters
    ----------
    worker : callable
        The kernel; it must write only its own items' parts of the outputs.
    n_threads : int
        Calls made at once (the caller's included).
    *args
        The kernel's remaining arguments, shared by every call.
    """
    queue = np.zeros(1, dtype=np.int64)
    threads = np.int64(n_threads)
    run_concurrently([lambda: worker(queue, threads, *args)] * max(1, n_threads))
