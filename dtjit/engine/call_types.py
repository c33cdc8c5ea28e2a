"""numba's typing of calls to its builtin functions, answered once per argument types.

numba types each call of a function (``a + b``, ``x[i]``, ``x[i] = v``, ``min``, ``bool`` ...)
by asking each of the function's typing templates in turn (``BaseFunction.get_call_type``),
and asks again for every statement, on every round of type inference and once more while
lowering. For the operators the first template is numpy's ufunc rules, which resolve a
ufunc loop even for two integers before giving up. Over every path, 9 of every 10 such
questions had been asked before with the same function and argument types (the share of
compile time it saves is in ``benchmarks/README.md``).

While a dtjit kernel compiles (:func:`memoised`), :func:`get_call_type_memoised` keeps
the answer for a function type and its argument types when it came from a template whose
answer depends only on them: one that leaves numba's default implementation key (the
function itself) in ``_impl_keys``. Overloads and intrinsics set keys of their own (their
compiled implementation, which depends on the compile flags) and are asked every time, as
are questions that fail. A repeated question gets the same signature and sets the same
implementation key as a fresh one, so the typed IR and the kernels' machine code are
unchanged. Registering new templates for a function gives it a new function type, with no
answers kept. The answers stay for the process: a few thousand small entries over every path.

This replaces a method of a private numba class, read from numba 0.68: its signature and
the attributes it relies on are checked on import, and where they differ :data:`MEMOISED`
is False and numba's method is left alone. Compiles run under numba's global compiler
lock, so the depth counter and the memo need no lock of their own.
"""

from __future__ import annotations

import contextlib
import functools

from numba.core import types
from numba.core.types.functions import BaseFunction

from .numba_parts import written_as

_numba_get_call_type = BaseFunction.get_call_type

# (function type, typing context, argument types, keyword types) -> (signature, impl key).
_ANSWERS: dict = {}
# Depth of dtjit kernel compiles in progress: the memo is used only inside one.
_depth = 0


@contextlib.contextmanager
def memoised():
    """Keep and reuse answers of plain typing templates while the block runs (a compile)."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


@functools.wraps(_numba_get_call_type)
def get_call_type_memoised(self, context, args, kws):
    """Return numba's signature for calling ``self`` with ``args``, asked once per types."""
    if not _depth or type(self) is not types.Function:
        return _numba_get_call_type(self, context, args, kws)
    try:
        key = (self, context, tuple(args), tuple(sorted(kws.items())))
        answer = _ANSWERS.get(key)
    except TypeError:  # an argument type that does not hash: ask numba
        return _numba_get_call_type(self, context, args, kws)
    if answer is not None:
        signature, impl_key = answer
        self._impl_keys[signature.args] = impl_key  # as the template sets it
        return signature
    signature = _numba_get_call_type(self, context, args, kws)
    impl_key = self._impl_keys.get(signature.args)
    if impl_key is self.typing_key:  # a plain template's: the types decide it
        _ANSWERS[key] = (signature, impl_key)
    return signature


def _supported() -> bool:
    """Return whether numba's method has the signature and the steps this module assumes."""
    # the template that answers sets the implementation key, in numba's words
    return written_as(
        _numba_get_call_type,
        ["self._impl_keys[sig.args] = temp.get_impl_key(sig)", "return sig"],
        parameters=["self", "context", "args", "kws"],
    )


MEMOISED = _supported()
if MEMOISED:
    BaseFunction.get_call_type = get_call_type_memoised
