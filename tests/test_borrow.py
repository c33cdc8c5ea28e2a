"""Uncounted array views (``dtjit.engine.borrow``): what they do, and the rule of their use.

A borrowed view keeps nothing alive. Used on an array its kernel does not hold for the whole
loop, it reads freed memory: the trees change, or worse, and nothing raises. So the rule of
``_borrow``'s docstring is checked on the source of every module here, where a slip fails
a test instead of a fit.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import dtjit
from dtjit.engine.borrow import borrowed, keep_alive
from dtjit.engine.jit import KERNEL_OPTIONS

# Every module of the package and its subpackages (the engine's kernels are in dtjit.engine).
SOURCES = {
    info.name: inspect.getsource(importlib.import_module(info.name))
    for info in pkgutil.walk_packages(dtjit.__path__, "dtjit.")
    if not info.name.endswith("__main__")
}
assert "dtjit.engine.sweep_exact" in SOURCES and "dtjit.predict.walk" in SOURCES


def _call_name(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _target_names(target):
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple):
        return set().union(*(_target_names(t) for t in target.elts))
    return set()


def _borrowing_functions():
    for module, source in SOURCES.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and any(
                _call_name(call) == "borrowed" for call in ast.walk(node)
            ):
                yield f"{module}.{node.name}", node


def _check_borrowing_function(name, function):
    """Raise AssertionError where ``function`` breaks the rule of ``_borrow``."""
    decorators = {d.id for d in function.decorator_list if isinstance(d, ast.Name)}
    # An inlined body's arguments are the caller's variables: numba may free one right after
    # the borrowed call if the caller does not use it again (it did: candidate flags of
    # the split search read from freed memory changed every tree).
    assert decorators & {"kernel", "callee_kernel"}, (
        f"{name} borrows but is not a kernel of its own (inline helpers may not borrow)"
    )
    # Arguments, and what is unpacked or indexed out of them before any other work.
    held = {a.arg for a in function.args.args}
    views = set()
    checked = 0
    body = function.body
    for at, statement in enumerate(body):
        if not isinstance(statement, ast.Assign):
            continue
        value = statement.value
        targets = set().union(*(_target_names(t) for t in statement.targets))
        if _call_name(value) == "borrowed":
            (argument,) = value.args
            if isinstance(argument, ast.Tuple):
                for item in argument.elts:
                    # An argument, or a field of one (a record's array: the caller holds
                    # the record, and so the array, for the whole call).
                    field = isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name)
                    base = item.value if field else item
                    assert isinstance(base, ast.Name) and base.id in held, (
                        f"{name} borrows {ast.unparse(item)}, which is not an argument"
                    )
            else:
                # Arrays made here: the tuple holding them must be used after the loop.
                assert isinstance(argument, ast.Name), f"{name}: borrowed({ast.unparse(argument)})"
                kept = [
                    s
                    for s in body[at + 1 :]
                    if isinstance(s, ast.Expr)
                    and _call_name(s.value) == "keep_alive"
                    and _names(s.value.args[0]) == {argument.id}
                ]
                assert kept, f"{name} borrows {argument.id} but never calls keep_alive on it"
            views |= targets
            checked += 1
        elif isinstance(value, (ast.Name, ast.Subscript, ast.Attribute)) and _names(value) <= held:
            held |= targets
    # Only a plain statement of the kernel's body is checked above (not one in a loop or a
    # branch, where what it borrows and what keeps that alive cannot be read off).
    calls = sum(_call_name(node) == "borrowed" for node in ast.walk(function))
    assert calls == checked, f"{name} borrows outside a statement of its body's top level"
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            escaped = _names(node.value) & views
            assert not escaped, f"{name} returns the borrowed views {sorted(escaped)}"


def test_borrowing_follows_the_rule_everywhere():
    found = dict(_borrowing_functions())
    # The serial paths of both splitters borrow (a rename must not empty this check).
    assert {
        "dtjit.engine.sweep_hist.sweep_worker",
        "dtjit.engine.grow.split_nodes",
        "dtjit.engine.sweep_exact.partition_worker",
    } <= set(found)
    for name, function in found.items():
        _check_borrowing_function(name, function)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "@inline_kernel\ndef f(a):\n    (a,) = borrowed((a,))\n",
            "not a kernel of its own",
        ),
        (
            "@kernel\ndef f(a):\n    b = a + 1\n    (b,) = borrowed((b,))\n",
            "which is not an argument",
        ),
        (
            "@kernel\ndef f(n):\n    owned = (np.empty(n),)\n    (b,) = borrowed(owned)\n",
            "never calls keep_alive",
        ),
        (
            "@kernel\ndef f(a):\n    (a,) = borrowed((a,))\n    return a[1:]\n",
            "returns the borrowed views",
        ),
        (
            "@kernel\ndef f(a, n):\n    for i in range(n):\n        (b,) = borrowed((a,))\n",
            "outside a statement of its body's top level",
        ),
    ],
)
def test_the_rule_check_catches_each_breach(source, message):
    function = ast.parse(source).body[0]
    with pytest.raises(AssertionError, match=message):
        _check_borrowing_function("f", function)


def test_the_rule_check_accepts_arguments_their_parts_and_kept_arrays():
    source = (
        "@kernel\ndef f(a, pair, n):\n    first, second = pair\n    part = a[0]\n"
        "    (a, first, part) = borrowed((a, first, part))\n"
        "    owned = (np.empty(n),)\n    (scratch,) = borrowed(owned)\n"
        "    total = a.sum() + scratch.sum()\n    keep_alive(owned)\n    return total\n"
    )
    _check_borrowing_function("f", ast.parse(source).body[0])


@numba.njit(**{**KERNEL_OPTIONS, "cache": False})
def _write_through_views(a, b, scale, pair):
    (a, b, scale, pair) = borrowed((a, b, scale, pair))
    a[0] = 7.0
    b[1, 1] = 3
    return a.sum() * scale + b.sum() + pair[0].sum() + pair[1]


@numba.njit(**{**KERNEL_OPTIONS, "cache": False})
def _scratch_kept_alive(n):
    owned = (np.ones(n), np.arange(n))
    ones, ramp = borrowed(owned)
    total = 0.0
    for i in range(n):
        total += ones[i] * ramp[i]
    keep_alive(owned)
    return total


def test_views_share_data_and_scalars_pass_through():
    a = np.arange(4.0)
    b = np.zeros((2, 3), dtype=np.int64)
    pair = (np.full(2, 0.5), 5)
    got = _write_through_views(a, b, 2.0, pair)
    assert a[0] == 7.0 and b[1, 1] == 3  # the views write the callers' arrays
    assert got == (7.0 + 1 + 2 + 3) * 2.0 + 3 + 1.0 + 5
    # In Python (NUMBA_DISABLE_JIT, the pure-Python lane) both are no-ops.
    assert borrowed((a, 1)) == (a, 1) and keep_alive((a,)) is None


def test_views_neither_leak_nor_free_their_arrays():
    a = np.arange(4.0)
    b = np.zeros((2, 3), dtype=np.int64)
    pair = (np.full(2, 0.5), 5)
    _write_through_views(a, b, 1.0, pair)
    _scratch_kept_alive(10)
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(3):
            _write_through_views(a, b, 1.0, pair)
            assert _scratch_kept_alive(10) == sum(range(10))
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    # Balanced: the tuple passed through is released once, the scratch arrays freed once.
    assert after.alloc - before.alloc == after.free - before.free > 0
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
