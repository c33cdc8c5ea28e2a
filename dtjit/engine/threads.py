"""Threads for ``n_jobs``: serial kernels run at once from a small pool of Python threads.

The kernels release the GIL (``nogil``), so a step that pays for threads calls its serial
kernel once per thread, each call on its own share of the work: a block of rows, or the
items it claims from a shared counter (``work_queue``) as it comes free. numba's parallel
regions (``prange``) are not used: each would compile a twin of its kernel, several times
a serial kernel's compile, and numba's threading layers fail where users meet them without
asking for threads (GNU OpenMP kills a process forked after it started, the workqueue layer
aborts when two threads enter regions at once). Python threads need no layer, and the pool
is made anew in a forked child (:func:`_worker_pool`).
"""

from __future__ import annotations

import numbers
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numba
import numpy as np

T = TypeVar("T")


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Translate scikit-learn's ``n_jobs`` convention into a thread count.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` means 1; ``-1`` means every core (``numba.config.NUMBA_NUM_THREADS``, the
        CPUs the process may use unless ``NUMBA_NUM_THREADS`` says fewer); ``-k`` all but
        ``k - 1``.

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
    One call is a plain call, on this thread.

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
