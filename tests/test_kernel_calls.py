"""Kernels calling kernels by symbol instead of linking their modules (``kernel_calls``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from _kernel_entry import via_kernel
from numba.core import codegen
from numba.core.base import BaseContext
from numba.core.typed_passes import NativeLowering

from dtjit.engine import compile_pipeline, kernel_calls
from dtjit.engine.compile_pipeline import KernelCompiler
from dtjit.engine.criterion import poisson_loss
from dtjit.engine.jit import KERNEL_OPTIONS, CalleeKernel
from dtjit.engine.kernel_calls import KernelLowering, KernelSymbol, kernel_symbol

FRESH = {**KERNEL_OPTIONS, "cache": False}


@numba.njit(**FRESH)
def _sum_and_count_above(values, limit):
    total = 0.0
    count = 0
    for v in values:
        if v > limit:
            total += v
            count += 1
    return total, count


@numba.njit(**FRESH)
def _fill_squares(out):
    for i in range(out.shape[0]):
        out[i] = i * i


@numba.njit(**FRESH)
def _checked_mean(values):
    if values.shape[0] == 0:
        raise ValueError("no values")
    return values.sum() / values.shape[0]


@numba.njit(**FRESH)
def _caller(values, limit, out):
    total, count = _sum_and_count_above(values, limit)
    _fill_squares(out)
    return total + count * 1000 + out[-1] + _checked_mean(values)


def _plain_caller(values, limit, out):
    total, count = _sum_and_count_above(values, limit)
    _fill_squares(out)
    return total + count * 1000 + out[-1] + _checked_mean(values)


def _python_reference(values, limit, n_out):
    above = values[values > limit]
    return above.sum() + above.size * 1000 + (n_out - 1) ** 2 + values.mean()


def _llvm(dispatcher):
    (cres,) = dispatcher.overloads.values()
    return cres.library.get_llvm_str()


def test_installed_numba_calls_kernels_by_symbol():
    assert kernel_calls.BY_SYMBOL and KernelCompiler.calls_kernels_by_symbol
    values, out = np.array([0.5, 2.0, 3.5, -1.0]), np.zeros(5)
    assert _caller(values, 1.0, out) == pytest.approx(_python_reference(values, 1.0, 5))
    np.testing.assert_array_equal(out, np.arange(5.0) ** 2)
    (cres,) = _caller.overloads.values()
    records = {r.qualname: r for r in cres.reload_init if isinstance(r, KernelSymbol)}
    assert set(records) == {"_sum_and_count_above", "_fill_squares", "_checked_mean"}
    llvm = _llvm(_caller)
    for callee in (_sum_and_count_above, _fill_squares, _checked_mean):
        # Declared under its symbol; none of its code, which numba's name would mark.
        symbol = re.escape(records[callee.__name__].symbol)
        assert re.search(rf'declare i32 @"?{symbol}"?\(', llvm), callee.__name__
        (callee_cres,) = callee.overloads.values()
        assert callee_cres.fndesc.mangled_name not in llvm


def test_a_numba_function_links_the_kernels_and_agrees():
    plain = numba.njit(cache=False)(_plain_caller)
    values = np.random.default_rng(0).normal(size=50)
    out_a, out_b = np.zeros(7), np.zeros(7)
    assert plain(values, 0.1, out_a) == _caller(values, 0.1, out_b)
    np.testing.assert_array_equal(out_a, out_b)
    (callee_cres,) = _sum_and_count_above.overloads.values()
    assert callee_cres.fndesc.mangled_name in _llvm(plain)  # linked, as numba does


def test_an_exception_raised_by_a_callee_reaches_python():
    with pytest.raises(ValueError, match="no values"):
        _caller(np.zeros(0), 1.0, np.zeros(3))


def test_only_module_level_dtjit_kernels_are_called_by_symbol():
    args = (numba.types.float64[:],)
    assert kernel_symbol(_checked_mean, args).symbol.startswith(f"{__name__}._checked_mean.")
    assert kernel_symbol(_checked_mean, args) != kernel_symbol(_checked_mean, (numba.float64,))
    local = numba.njit(**FRESH)(_checked_mean.py_func)  # not the module's object of that name
    assert kernel_symbol(local, args) is None
    assert kernel_symbol(numba.njit(cache=False)(_plain_caller), args) is None  # numba's pipeline
    namespace: dict = {}
    exec("def orphan(values):\n    return values.sum()\n", namespace)  # no module
    assert kernel_symbol(numba.njit(**FRESH)(namespace["orphan"]), args) is None


def test_without_the_private_parts_numba_lowering_stays(monkeypatch):
    class Pipeline:
        passes = [(NativeLowering, "native lowering")]

    monkeypatch.setattr(kernel_calls, "BY_SYMBOL", False)
    assert compile_pipeline.with_calls_by_symbol(Pipeline()).passes[0][0] is NativeLowering
    monkeypatch.setattr(kernel_calls, "BY_SYMBOL", True)
    assert compile_pipeline.with_calls_by_symbol(Pipeline()).passes[0][0] is KernelLowering


def _branches_and_locals(x, k):
    total = 0.0
    for i in range(x.shape[0]):
        scaled = x[i] * 2
        if scaled > k:
            total += scaled - k
    return total


def _lowered_ir(monkeypatch, skippable):
    """Return the kernel module numba lowers for ``_branches_and_locals``, before LLVM."""
    modules = []
    add_ir_module = codegen.CPUCodeLibrary.add_ir_module

    def recording(library, ir_module):
        modules.append(str(ir_module))
        return add_ir_module(library, ir_module)

    monkeypatch.setattr(kernel_calls, "DEBUG_SIZES_SKIPPABLE", skippable)
    monkeypatch.setattr(codegen.CPUCodeLibrary, "add_ir_module", recording)
    dispatcher = numba.njit(**FRESH)(_branches_and_locals)
    assert dispatcher(np.array([1.0, 3.0]), 1.5) == 5.0
    (kernel,) = [m for m in modules if "define i32 @" in m and "_branches_and_locals" in m]
    return re.sub(r"_branches_and_locals(\$\d+|B\d+v\d+)", "_branches_and_locals", kernel)


def test_variables_are_allocated_as_numba_does_without_debug_sizes(monkeypatch):
    assert kernel_calls.DEBUG_SIZES_SKIPPABLE  # the CI's numba: no size computed for nothing
    sizes = []
    get_abi_sizeof = BaseContext.get_abi_sizeof
    monkeypatch.setattr(
        BaseContext, "get_abi_sizeof", lambda ctx, ty: sizes.append(ty) or get_abi_sizeof(ctx, ty)
    )
    ours = _lowered_ir(monkeypatch, True)
    skipped = len(sizes)
    numbas = _lowered_ir(monkeypatch, False)
    assert ours == numbas
    assert "alloca" in ours
    assert len(sizes) - skipped > skipped  # numba's own way sized each named variable


def test_a_callee_kernel_serves_kernels_and_refuses_python_calls():
    y = np.array([0.0, 1.0, 3.0, 2.0, 5.0])
    weights = np.array([1.0, 2.0, 1.0, 0.5, 1.0])
    idx = np.array([4, 0, 2, 1, 3])
    args = (idx, np.int64(1), np.int64(4), y, weights)
    rows = idx[1:4]
    weight, y_sum = weights[rows].sum(), (weights[rows] * y[rows]).sum()
    mean = y_sum / weight
    positive = rows[y[rows] > 0]
    expected = (weights[positive] * y[positive] * np.log(y[positive] / mean)).sum() / weight

    assert isinstance(poisson_loss, CalleeKernel)
    assert via_kernel(poisson_loss)(*args, y_sum, weight) == pytest.approx(expected)
    assert poisson_loss.py_func(*args, y_sum, weight) == pytest.approx(expected)
    with pytest.raises(TypeError, match=r"criterion\.poisson_loss is compiled for calls from"):
        poisson_loss(*args, y_sum, weight)
    # Compiled without numba's CPython wrapper: its code (compiled or loaded from the
    # cache, whose LLVM text is not kept) has the kernel's own entry and no wrapper entry,
    # where a plain kernel has both.
    signature = tuple(numba.typeof(a) for a in (*args, y_sum, weight))
    assert _entries(poisson_loss.overloads[signature]) == (True, False)
    _checked_mean(y)
    assert _entries(_checked_mean.overloads[(numba.typeof(y),)]) == (True, True)


def _entries(cres):
    """Whether ``cres``'s code has the kernel's own entry and numba's CPython wrapper."""
    entry = cres.library.get_pointer_to_function
    return entry(cres.fndesc.llvm_func_name) != 0, entry(cres.fndesc.llvm_cpython_wrapper_name) != 0


CACHED_KERNELS = textwrap.dedent(
    """
    import numpy as np
    from dtjit.engine.jit import callee_kernel, kernel

    @{callee}
    def weighted_total(values, weights):
        total = 0.0
        for i in range(values.shape[0]):
            total += values[i] * weights[i]
        return total

    @kernel
    def caller(values):
        return weighted_total(values, np.ones_like(values)) + weighted_total(values, values)
    """
)

RUN_CACHED = textwrap.dedent(
    """
    import json
    import numpy as np
    import cached_kernels as k
    values = np.arange(6.0)
    result = k.caller(values)
    print(json.dumps({
        "result": result,
        "caller_hits": sum(k.caller.stats.cache_hits.values()),
        "callee_hits": sum(k.weighted_total.stats.cache_hits.values()),
    }))
    """
)


def _run_cached(folder):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-c", RUN_CACHED], cwd=folder, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("callee", ["kernel", "callee_kernel"])
def test_a_caller_loaded_from_the_cache_binds_its_callees(tmp_path, callee):
    (tmp_path / "cached_kernels.py").write_text(CACHED_KERNELS.replace("{callee}", callee))
    expected = 15.0 + 55.0
    first = _run_cached(tmp_path)
    assert first == {"result": expected, "caller_hits": 0, "callee_hits": 0}
    # A fresh process loads the caller's object code, which only names its callee: the
    # callee is loaded and its symbol bound before the caller's code is.
    assert _run_cached(tmp_path) == {"result": expected, "caller_hits": 1, "callee_hits": 1}
    # Without the callee's cache entry, it compiles again and the cached caller still runs.
    for index in (tmp_path / "cache").rglob("*weighted_total*.nbi"):
        index.unlink()
    assert _run_cached(tmp_path) == {"result": expected, "caller_hits": 1, "callee_hits": 0}
