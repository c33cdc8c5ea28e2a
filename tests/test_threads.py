"""The threads of ``n_jobs`` (``dtjit.engine.threads``): serial kernels on a Python pool."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time

import numba
import numpy as np
import pytest

from dtjit.engine import threads as _threads
from dtjit.engine import work_queue as _work_queue

# Models of every kind that has threaded paths (presort, sweeps, partition, subset search,
# routing), on data large enough to take them at n_jobs=2: numeric and categorical, exact and
# hist. fit_all returns each model's node count and predict_proba.
MODELS = """
import numpy as np
from sklearn.datasets import make_classification
from dtjit import DecisionTreeClassifier

X, y = make_classification(
    n_samples=30_000, n_features=10, n_informative=6, n_classes=3, random_state=0
)
X_cat = X.copy()
X_cat[:, :6] = np.clip(np.floor(X[:, :6]) + 2.0, 0.0, 4.0)  # 6 columns of 5 categories
CATEGORICAL = {"categorical_features": [0, 1, 2, 3, 4, 5], "max_depth": 8}
CASES = [
    (X, {}), (X, {"splitter": "hist"}),
    (X_cat, CATEGORICAL), (X_cat, {**CATEGORICAL, "splitter": "hist"}),
]


def fit_all(n_jobs):
    out = []
    for data, params in CASES:
        model = DecisionTreeClassifier(n_jobs=n_jobs, random_state=0, **params).fit(data, y)
        out.append((model.tree_.node_count, model.predict_proba(data)))
    return out


def same(a, b):
    return all(na == nb and np.array_equal(pa, pb) for (na, pa), (nb, pb) in zip(a, b))
"""

# The parent fits on threads, then forks; the child fits serially and on two threads. With
# numba's GNU OpenMP threads this killed the child (SIGTERM) and a multiprocessing pool
# waited forever; the pool of Python threads is made anew in the child. The parent reports
# how the child ended (it must not hang).
FORK_SCRIPT = (
    MODELS
    + """
import os, signal, sys, time, traceback, warnings

expected = fit_all(None)
assert same(fit_all(2), expected)  # the parent's pool exists
pid = os.fork()
if pid == 0:
    code = 2
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            serial = fit_all(None)
            threaded = fit_all(2)
        checks = [same(serial, expected), same(threaded, expected), not seen]
        print("child checks", checks, flush=True)
        code = 0 if all(checks) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)
deadline = time.monotonic() + 240
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() > deadline:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        sys.exit("the forked child hung")
    time.sleep(0.05)
if os.WIFSIGNALED(status):
    sys.exit(f"the forked child was killed by signal {os.WTERMSIG(status)}")
sys.exit(os.WEXITSTATUS(status))
"""
)


def _run(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )  # fmt: skip


# Four user threads fit and predict at once, two of them on two threads each: they share
# the pool, and a call whose pool threads are busy finishes its work on its own thread.
USER_THREADS_SCRIPT = (
    MODELS
    + """
import threading

expected = fit_all(None)
results = {}


def work(k):
    results[k] = fit_all(2 if k % 2 == 0 else None)


threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("same", [same(results[k], expected) for k in range(4)], flush=True)
"""
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_fits_on_threads():
    proc = _run(FORK_SCRIPT)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "child checks [True, True, True]" in proc.stdout


def test_user_threads_fitting_at_once_share_the_pool():
    proc = _run(USER_THREADS_SCRIPT)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "same [True, True, True, True]" in proc.stdout


def test_n_jobs_follows_scikit_learns_convention():
    available = numba.config.NUMBA_NUM_THREADS
    assert _threads.resolve_n_jobs(None) == 1
    assert _threads.resolve_n_jobs(-1) == available
    assert _threads.resolve_n_jobs(1) == 1
    assert _threads.resolve_n_jobs(available + 5) == available
    assert _threads.resolve_n_jobs(-available - 5) == 1
    for bad in (0, 1.5, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            _threads.resolve_n_jobs(bad)


# Python threads over serial kernels (``run_concurrently``, ``run_workers``).


@numba.njit(nogil=True)
def _claim_items(queue, n_threads, claims, spin):
    """A worker: counts each item it claims, spinning a while per item to let others in."""
    item = _work_queue.claim_item(queue)
    while item < claims.shape[0]:
        total = 0.0
        for k in range(spin):
            total += k * 1e-9
        claims[item] += 1 + (total < 0)  # ``total`` keeps the loop; it is never negative
        item = _work_queue.claim_item(queue)


@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_workers_claim_every_item_once(n_threads):
    for n_items in (0, 1, 7, 5_000):
        claims = np.zeros(n_items, dtype=np.int64)
        _threads.run_workers(_claim_items, n_threads, claims, 2_000)
        np.testing.assert_array_equal(claims, np.ones(n_items, dtype=np.int64))


def test_calls_run_at_once_and_return_in_order():
    barrier = threading.Barrier(3, timeout=30)  # returns only if all three wait at once

    def call(k):
        barrier.wait()
        return k, threading.get_ident()

    results = _threads.run_concurrently([functools.partial(call, k) for k in range(3)])
    assert [k for k, _ in results] == [0, 1, 2]
    assert results[0][1] == threading.get_ident()  # the first runs on the caller's thread
    assert len({ident for _, ident in results}) == 3


def test_an_error_is_raised_after_every_call_has_ended():
    ended = []

    def fails():
        raise RuntimeError("call failed")

    def slow():
        time.sleep(0.2)
        ended.append(True)

    with pytest.raises(RuntimeError, match="call failed"):
        _threads.run_concurrently([slow, fails, slow])
    assert ended == [True, True]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_gets_threads_of_its_own():
    """The parent's pool has no threads in a forked child: the child must not wait on it."""
    _threads.run_concurrently([lambda: None, lambda: None])  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if threaded calls complete
        code = 1
        try:
            out = _threads.run_concurrently([lambda: 1, lambda: 2, lambda: 3])
            code = 0 if out == [1, 2, 3] else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail("the forked child's threaded call hung")
