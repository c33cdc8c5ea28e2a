"""The collector's thresholds while numba compiles dtjit's kernels (``dtjit.engine.compile_gc``)."""

from __future__ import annotations

import gc

import numba
import numpy as np
import pytest
from numba.core import event

from dtjit.engine import compile_gc, sweep_exact
from dtjit.engine.compile_gc import COMPILE_GC_THRESHOLDS, CompileCollectionDeferral


class _Recorder(event.Listener):
    """Record the collector's thresholds at the start of every compile."""

    def __init__(self) -> None:
        self.thresholds: list[tuple[str, tuple[int, ...]]] = []

    def on_start(self, ev: event.Event) -> None:
        self.thresholds.append((ev.data["dispatcher"].py_func.__module__, gc.get_threshold()))

    def on_end(self, ev: event.Event) -> None:
        pass


def _not_in_dtjit(values):
    total = 0.0
    for v in values:
        total += v
    return total


@pytest.fixture
def default_thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*saved)


def test_a_dtjit_compile_raises_the_thresholds_and_restores_them(default_thresholds):
    # A new dispatcher of a dtjit function: compiled here, whatever numba's cache holds.
    fresh = numba.njit(cache=False)(sweep_exact.first_position_above.py_func)
    recorder = _Recorder()
    with event.install_listener("numba:compile", recorder):
        assert fresh(np.arange(10, dtype=np.float32), 0, 10, 4.5) == 5
    assert recorder.thresholds[0] == ("dtjit.engine.sweep_exact", COMPILE_GC_THRESHOLDS)
    assert gc.get_threshold() == default_thresholds
    assert compile_gc.DEFERRAL.depth == 0


def test_other_compiles_keep_the_thresholds(default_thresholds):
    fresh = numba.njit(cache=False)(_not_in_dtjit)
    recorder = _Recorder()
    with event.install_listener("numba:compile", recorder):
        assert fresh(np.ones(3)) == 3.0
    assert recorder.thresholds[0] == (__name__, default_thresholds)
    assert gc.get_threshold() == default_thresholds


class _Dispatcher:
    def __init__(self, module: str) -> None:
        self.py_func = type("F", (), {"__module__": module})()


def _event(module: str, end: bool = False) -> event.Event:
    status = event.EventStatus.END if end else event.EventStatus.START
    return event.Event("numba:compile", status, data={"dispatcher": _Dispatcher(module)})


def test_nested_compiles_restore_once_at_the_outermost_end(default_thresholds):
    deferral = CompileCollectionDeferral()
    deferral.on_start(_event("dtjit.engine.grow"))
    deferral.on_start(_event("numba.np.arrayobj"))  # numba's overload, compiled inside
    deferral.on_start(_event("dtjit.engine.sweep_exact"))
    deferral.on_end(_event("dtjit.engine.sweep_exact", end=True))
    deferral.on_end(_event("numba.np.arrayobj", end=True))
    assert gc.get_threshold() == COMPILE_GC_THRESHOLDS
    deferral.on_end(_event("dtjit.engine.grow", end=True))  # also what an error ends with
    assert gc.get_threshold() == default_thresholds
    assert deferral.depth == 0


def test_a_dtjit_compile_inside_another_compile_raises_them_for_its_own_span(
    default_thresholds,
):
    deferral = CompileCollectionDeferral()
    deferral.on_start(_event("user_module"))
    assert gc.get_threshold() == default_thresholds
    deferral.on_start(_event("dtjit.predict.walk"))
    assert gc.get_threshold() == COMPILE_GC_THRESHOLDS
    deferral.on_end(_event("dtjit.predict.walk", end=True))
    assert gc.get_threshold() == default_thresholds
    deferral.on_end(_event("user_module", end=True))
    assert gc.get_threshold() == default_thresholds
    assert deferral.depth == 0
