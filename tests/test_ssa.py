"""numba's SSA reconstruction, rewriting only the blocks that hold each variable (``ssa``)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba.core import ir
from numba.core import ssa as numba_ssa
from numba.core.compiler import run_frontend

from dtjit.engine import ssa
from dtjit.engine.jit import KERNEL_OPTIONS
from dtjit.engine.sweep_exact import best_splits_worker, segment_stats


def _loops_and_branches(a, k):
    total = 0.0
    count = 0
    for i in range(a.shape[0]):
        if a[i] > k:
            total += a[i]
            last = i
        elif a[i] != a[i]:
            continue
        else:
            j = 0
            while j < i:
                total -= a[j]
                j += 1
                if total < -k:
                    break
        count += 1
    return total, count, last  # last may be undefined: numba's handling is kept too


def _early_returns(x, n):
    acc = x
    for step in range(n):
        if acc > 100:
            return acc
        acc = acc * 2 + step
        if acc < 0:
            acc = -acc
    return acc


FUNCTIONS = [_loops_and_branches, _early_returns, segment_stats.py_func, best_splits_worker.py_func]


_run_ssa = ssa.run_ssa
FRESH = {**KERNEL_OPTIONS, "cache": False}


def _numba_ssa(func_ir):
    func_ir.blocks = numba_ssa._run_ssa(func_ir.blocks)
    return func_ir


def _ours(func_ir):
    func_ir.blocks = ssa.run_ssa(func_ir.blocks)
    return func_ir


def test_installed_for_this_numba(monkeypatch):
    # Without it every path compiles seconds slower, silently: the CI's numba must have it.
    assert ssa.BY_BLOCK
    runs = []
    monkeypatch.setattr(ssa, "run_ssa", lambda blocks: runs.append(1) or _run_ssa(blocks))
    kernel = numba.njit(**FRESH)(_early_returns)
    assert kernel(1.0, 3) == _early_returns(1.0, 3)
    assert runs  # the kernel pipeline's SSA pass is this module's


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
def test_same_ssa_ir_as_numba(func):
    ours, numbas = _ours(run_frontend(func)), _numba_ssa(run_frontend(func))
    assert ours.dump_to_string() == numbas.dump_to_string()
    phis = [
        stmt
        for block in ours.blocks.values()
        for stmt in block.body
        if isinstance(stmt, ir.Assign)
        and isinstance(stmt.value, ir.Expr)
        and stmt.value.op == "phi"
    ]
    assert phis  # each function has variables assigned on several paths
    assert {label: len(b.body) for label, b in ours.blocks.items()} == {
        label: len(b.body) for label, b in numbas.blocks.items()
    }


def test_only_blocks_holding_the_variable_are_visited(monkeypatch):
    visits = []
    numba_pass = numba_ssa._run_ssa_block_pass

    def counting(states, block, handler):
        visits.append(len(block.body))
        return numba_pass(states, block, handler)

    monkeypatch.setattr(numba_ssa, "_run_ssa_block_pass", counting)
    _ours(run_frontend(best_splits_worker.py_func))
    ours = sum(visits)
    visits.clear()
    _numba_ssa(run_frontend(best_splits_worker.py_func))
    assert ours * 5 < sum(visits)


def test_a_kernel_compiled_with_the_pass_computes_as_python():
    compiled = numba.njit(**FRESH)(_early_returns)
    for x, n in [(1.0, 10), (-3.0, 4), (7.5, 0), (200.0, 3)]:
        assert compiled(x, n) == _early_returns(x, n)
    values = np.array([0.5, 3.0, -2.0, np.nan, 4.0])
    jitted = numba.njit(**FRESH)(_loops_and_branches)
    assert jitted(values, 1.0) == _loops_and_branches(values, 1.0)
