"""Calls from one kernel to another by symbol, so each kernel's machine code is built once.

numba compiles a call to another compiled function by linking the callee's whole LLVM module
(and, through it, the modules of the callee's own callees) into the caller's, then optimising
and emitting the result again: each kernel's code is optimised and emitted once for itself
and once more in every kernel that calls it, directly or down a chain. In dtjit most of the
LLVM instructions handed to the optimiser came from linked callees (``benchmarks/README.md``).

Kernels compiled by dtjit's pipeline instead call another dtjit kernel through an external
symbol, ``<module>.<name>.<hash of the argument types>``:

- the caller's module declares the symbol and calls it, with numba's calling convention,
  exactly as it would call the linked copy, but nothing of the callee is linked in;
- :class:`KernelSymbol` points the symbol at the callee's compiled entry
  (``llvmlite.binding.add_symbol``) before the caller's machine code is loaded: while
  lowering the call (the callee has just been compiled, for typing the call), and, when
  the caller comes from numba's on-disk cache, from the cache entry's ``reload_init``,
  which numba runs before it loads the caller's object code;
- a callee only reached by such calls is never linked anywhere, so its symbols resolve to
  its one copy.

What the callee's calls cost: a real call instead of LLVM's choice to inline, for kernels
that are called per node or per (node, feature), never per row (per-row helpers are inline
helpers, copied into the caller's IR before typing and untouched here).

A kernel only other kernels call (``jit.callee_kernel``, its Python function marked
:data:`CALLEE_ONLY`) is lowered without numba's CPython wrapper, which such calls never use.
It is left out here rather than by numba's ``no_cpython_wrapper`` flag: the flags key numba's
cache of its own overloads (``np.empty`` ...), which a flag of their own compiled again for
those kernels.

Calls to anything else (numba's own overloads, a function compiled outside dtjit) link as
usual. The lowering class also leaves out a size numba computes only for debug info
(:meth:`KernelCallLower.alloca_lltype`). This relies on private parts of numba, the same in
0.59 and 0.68; without them :data:`BY_SYMBOL` is False and every call links as numba does.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import NamedTuple

import llvmlite.binding as llvm
from numba.core import cgutils, lowering, types
from numba.core.compiler_machinery import register_pass
from numba.core.debuginfo import DummyDIBuilder
from numba.core.imputils import fix_returning_optional, impl_ret_new_ref
from numba.core.typed_passes import NativeLowering

from .numba_parts import written_as

# Set (True) on the Python function of a kernel that only other kernels call.
CALLEE_ONLY = "_dtjit_callee_only"

# Symbol -> address already given to llvmlite in this process; read and written under
# numba's compiler lock (lowering and cache loads both hold it).
_BOUND: dict[str, int] = {}


def _module_level(module: str | None, qualname: str):
    """Return the object named ``qualname`` in ``module``, or None."""
    try:
        target = importlib.import_module(module) if module else None
    except ImportError:  # e.g. a function compiled from code run by ``exec``
        return None
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


class KernelSymbol(NamedTuple):
    """One kernel specialisation called by symbol: the symbol and how to find its code.

    Stored with the caller's compile result (numba's ``reload_init``), so calling it binds
    the symbol again in a process that loads the caller from the cache. It must stay
    picklable and hashable: module and name strings and a tuple of numba types.
    """

    symbol: str
    module: str
    qualname: str
    argtypes: tuple

    def __call__(self) -> None:
        """Compile or load the callee for ``argtypes`` and point ``symbol`` at its entry."""
        dispatcher = _module_level(self.module, self.qualname)
        if dispatcher is None:
            raise RuntimeError(f"{self.module}.{self.qualname}: no such kernel to call")
        dispatcher.compile(self.argtypes)
        _bind(self.symbol, dispatcher.overloads[self.argtypes])


def _bind(symbol: str, cres) -> None:
    """Point ``symbol`` at the compiled entry of ``cres``, a finalised compile result."""
    address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    if not address:  # an unresolved symbol would abort the process when loaded
        raise RuntimeError(f"{cres.fndesc.qualname}: compiled entry not found for {symbol}")
    if _BOUND.get(symbol) != address:
        llvm.add_symbol(symbol, address)
        _BOUND[symbol] = address


def kernel_symbol(dispatcher, argtypes: tuple) -> KernelSymbol | None:
    """Return how a kernel calls ``dispatcher`` for ``argtypes``, or None to link it.

    Only dtjit kernels (compiled by a pipeline that calls by symbol) found under their own
    name at module level qualify: a process loading the caller from the cache finds the
    callee there.
    """
    pipeline_class = getattr(getattr(dispatcher, "_compiler", None), "pipeline_class", None)
    if not getattr(pipeline_class, "calls_kernels_by_symbol", False):
        return None
    py_func = dispatcher.py_func
    module, qualname = py_func.__module__, py_func.__qualname__
    if "<locals>" in qualname or _module_level(module, qualname) is not dispatcher:
        return None
    digest = hashlib.sha256(repr(argtypes).encode()).hexdigest()[:32]
    return KernelSymbol(f"{module}.{qualname}.{digest}", module, qualname, argtypes)


class KernelCallLower(lowering.Lower):
    """numba's lowering, calling dtjit kernels by symbol instead of linking their modules."""

    def _lower_call_normal(self, fnty, expr, signature):
        record = None
        if isinstance(fnty, types.Dispatcher) and expr.target is None:
            record = kernel_symbol(fnty.dispatcher, tuple(signature.args))
        if record is None:
            return super()._lower_call_normal(fnty, expr, signature)
        cres = fnty.dispatcher.overloads[record.argtypes]  # compiled when the call was typed
        _bind(record.symbol, cres)
        self.library._reload_init.add(record)
        argvals = self.fold_call_args(fnty, signature, expr.args, expr.vararg, expr.kws)
        return call_by_symbol(self.context, self.builder, cres.fndesc, record.symbol,
                              signature, argvals)  # fmt: skip

    def alloca_lltype(self, name, lltype, datamodel=None):
        """Allocate a variable as numba does, without the size only debug info would read.

        numba computes each named variable's ABI size for its debug-info builder, by
        printing and parsing a module holding the type (llvmlite's ``get_abi_size``), and
        hands it to a builder that does nothing when debug info is off, as it is for dtjit's
        kernels: one print and parse per named variable, for nothing.
        """
        if not (DEBUG_SIZES_SKIPPABLE and isinstance(self.debuginfo, DummyDIBuilder)):
            return super().alloca_lltype(name, lltype, datamodel)
        return cgutils.alloca_once(self.builder, lltype, name=name, zfill=False)

    def create_cpython_wrapper(self, release_gil=False):
        """Emit numba's CPython wrapper, except for a kernel that only kernels call."""
        if getattr(self.func_ir.func_id.func, CALLEE_ONLY, False):
            return
        super().create_cpython_wrapper(release_gil)


def call_by_symbol(context, builder, fndesc, symbol, signature, argvals):
    """Emit a call of ``fndesc``'s function under ``symbol``.

    The call sequence is numba's own (``imputils.user_function``), under another name.
    """
    call_conv = context.call_conv
    function_type = call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
    function = cgutils.get_or_insert_function(builder.module, function_type, symbol)
    call_conv.decorate_function(function, fndesc.args, fndesc.argtypes, noalias=fndesc.noalias)
    status, retval = call_conv.call_function(
        builder, function, fndesc.restype, fndesc.argtypes, argvals
    )
    with cgutils.if_unlikely(builder, status.is_error):
        call_conv.return_status_propagate(builder, status)
    retval = fix_returning_optional(context, builder, signature, status, retval)
    return impl_ret_new_ref(context, builder, fndesc.restype, retval)


@register_pass(mutates_CFG=True, analysis_only=False)
class KernelLowering(NativeLowering):
    """numba's native lowering pass with :class:`KernelCallLower`."""

    _name = "dtjit_native_lowering"

    @property
    def lowering_class(self):
        """The lowering class: numba's, calling dtjit kernels by symbol."""
        return KernelCallLower


def _supported() -> bool:
    """Return whether this numba has the private parts the calls rely on (0.59 - 0.68 do)."""
    lower_call = getattr(lowering.Lower, "_lower_call_normal", None)
    if lower_call is None or not hasattr(lowering.Lower, "fold_call_args"):
        return False
    return (
        list(inspect.signature(lower_call).parameters) == ["self", "fnty", "expr", "signature"]
        and list(inspect.signature(lowering.Lower.create_cpython_wrapper).parameters)
        == ["self", "release_gil"]
        and isinstance(inspect.getattr_static(NativeLowering, "lowering_class"), property)
        and hasattr(llvm, "add_symbol")
    )


BY_SYMBOL = _supported()


def _debug_sizes_skippable() -> bool:
    """Return whether numba's ``alloca_lltype`` is the one :class:`KernelCallLower` shortens."""
    method = lowering.Lower.alloca_lltype
    return (
        written_as(
            method,
            [
                "cgutils.alloca_once(self.builder, lltype,",
                "name=name, zfill=False)",
                "get_abi_sizeof",
            ],
            parameters=["self", "name", "lltype", "datamodel"],
        )
        # its only other effect is the debug info
        and inspect.getsource(method).count("self.debuginfo.") == 1
    )


DEBUG_SIZES_SKIPPABLE = _debug_sizes_skippable()
