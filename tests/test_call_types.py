"""numba's typing of calls to its builtins, answered once per argument types (``call_types``)."""

from __future__ import annotations

import operator

import numba
import numpy as np
import pytest
from numba import types
from numba.core import errors
from numba.core.registry import cpu_target
from numba.core.types.functions import BaseFunction
from numba.extending import overload

from dtjit.engine import call_types
from dtjit.engine.jit import KERNEL_OPTIONS

FRESH = {**KERNEL_OPTIONS, "cache": False}
F64 = types.Array(types.float64, 1, "C")
F32_2D = types.Array(types.float32, 2, "C")
I64 = types.Array(types.int64, 1, "C")

# Questions of the kinds dtjit's kernels ask most: arithmetic and comparisons on scalars of
# mixed kinds, indexing and index assignment, numpy's ufunc rules on arrays, literals.
QUESTIONS = [
    (operator.add, (types.int64, types.int64)),
    (operator.add, (types.float64, types.int64)),
    (operator.add, (types.IntegerLiteral(1), types.int64)),
    (operator.sub, (types.uint8, types.int64)),
    (operator.mul, (F64, types.float64)),
    (operator.truediv, (types.int64, types.int64)),
    (operator.lt, (types.float32, types.float64)),
    (operator.eq, (types.int64, types.uint64)),
    (operator.rshift, (types.uint32, types.int64)),
    (operator.getitem, (F64, types.int64)),
    (operator.getitem, (F32_2D, types.UniTuple(types.int64, 2))),
    (operator.getitem, (I64, types.slice2_type)),
    (operator.setitem, (F64, types.int64, types.float32)),
    (bool, (types.int64,)),
    (abs, (types.float64,)),
]
# Typed by overloads in numba 0.68: answered afresh each time.
OVERLOADED = [(min, (types.int64, types.int64)), (np.empty, (types.int64,))]


def _function_type(func):
    cpu_target.typing_context.refresh()  # loads numba's registries, as a compile does first
    return cpu_target.typing_context.resolve_value_type(func)


def _ask(func, args):
    """Return the signature and implementation key the memoised method gives inside a compile."""
    context = cpu_target.typing_context
    fnty = _function_type(func)
    with call_types.memoised():
        signature = fnty.get_call_type(context, args, {})
    return signature, fnty.get_impl_key(signature)


def _numbas_answer(func, args):
    context = cpu_target.typing_context
    fnty = _function_type(func)
    signature = call_types._numba_get_call_type(fnty, context, args, {})
    return signature, fnty.get_impl_key(signature)


def test_installed_for_this_numba():
    # Without it every path compiles seconds slower, silently: the CI's numba must have it.
    assert call_types.MEMOISED
    assert BaseFunction.get_call_type is call_types.get_call_type_memoised


@pytest.mark.parametrize(("func", "args"), QUESTIONS, ids=lambda x: getattr(x, "__name__", ""))
def test_kept_answers_are_numbas(func, args):
    first = _ask(func, args)
    again = _ask(func, args)  # answered from the memo
    key = (_function_type(func), cpu_target.typing_context, args, ())
    assert key in call_types._ANSWERS
    numbas = _numbas_answer(func, args)
    assert first == again == numbas
    assert first[0].return_type == numbas[0].return_type
    assert first[0].args == numbas[0].args


def test_the_memo_answers_only_inside_a_compile(monkeypatch):
    # A planted answer shows which path answers: numba's outside, the memo's inside.
    context = cpu_target.typing_context
    fnty = _function_type(operator.add)
    args = (types.int16, types.int16)
    planted = numba.core.typing.signature(types.float32, *args)
    monkeypatch.setitem(call_types._ANSWERS, (fnty, context, args, ()), (planted, operator.add))
    assert fnty.get_call_type(context, args, {}).return_type == types.int64
    with call_types.memoised():
        assert fnty.get_call_type(context, args, {}) is planted
    assert fnty.get_call_type(context, args, {}).return_type == types.int64


def _doubled(x):
    return x * 2


@overload(_doubled, jit_options={"cache": False})
def _doubled_overload(x):
    return lambda x: x * 2


@pytest.mark.parametrize(("func", "args"), OVERLOADED, ids=lambda x: getattr(x, "__name__", ""))
def test_numbas_overloads_give_numbas_answers_and_are_not_kept(func, args):
    assert _ask(func, args) == _numbas_answer(func, args)
    key = (_function_type(func), cpu_target.typing_context, args, ())
    assert key not in call_types._ANSWERS


def test_overloads_and_failures_are_asked_every_time():
    context = cpu_target.typing_context
    overloaded = _function_type(_doubled)
    args = (types.int64,)
    with call_types.memoised():
        signature = overloaded.get_call_type(context, args, {})
    assert signature.return_type == types.int64
    # An overload's implementation key is its compiled code (flag-dependent): not kept.
    assert overloaded.get_impl_key(signature) is not _doubled
    assert (overloaded, context, args, ()) not in call_types._ANSWERS

    fnty = _function_type(operator.add)
    wrong = (types.unicode_type, types.float64)
    with call_types.memoised(), pytest.raises(errors.TypingError):
        fnty.get_call_type(context, wrong, {})
    assert (fnty, context, wrong, ()) not in call_types._ANSWERS


def _mixed_arithmetic(x, k):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > k:
            total += x[i] * 2 - k
        elif x[i] != x[i]:
            total -= 1
    return total


def test_a_kernel_compile_uses_the_memo_and_computes_the_same(monkeypatch):
    monkeypatch.setattr(call_types, "_ANSWERS", {})
    compiled = numba.njit(**FRESH)(_mixed_arithmetic)
    x = np.array([0.5, 3.0, np.nan, 7.25, -1.0])
    assert compiled(x, np.float64(1.0)) == _mixed_arithmetic(x, 1.0)
    kept = {key[0].typing_key for key in call_types._ANSWERS}
    assert {operator.getitem, operator.gt, operator.mul, operator.sub} <= kept
    assert call_types._depth == 0
