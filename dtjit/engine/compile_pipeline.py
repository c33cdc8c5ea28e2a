"""numba's compiler pipeline for dtjit's kernels, with each inline helper's front end built once.

Its lowering pass is ``kernel_calls.KernelLowering`` (calls to other kernels by symbol),
numba's liveness analysis after each IR pass leaves out what dtjit's code never reads
(``liveness``), and the typing of calls to numba's builtins is answered once per argument
types while it runs (``call_types``). Its flags compare faster (:class:`KernelFlags`); the
rest of this module is the inlining pass.

To inline a helper declared ``inline="always"``, numba's ``InlineInlinables`` pass builds the
helper's untyped IR (bytecode analysis and the untyped passes, its own inline helpers
included) at every call site, then copies that IR into the caller. The untyped IR depends
only on the helper's code and the compile flags, which every dtjit kernel shares
(``jit.KERNEL_OPTIONS``), so :class:`KernelCompiler` builds it once per helper and process
and gives each call site a copy under a fresh function identity, the same IR a rebuild
gives. ``dtjit compile`` built helpers' front ends 776 times for 125 helpers, nested
helpers included; the gain is in ``benchmarks/README.md``.

numba still copies the IR at each site (its ``inline_ir``), but once instead of twice
(:class:`SiteBlock`), and the helper's scope of variables faster (:class:`SiteCopyScope`); it
types and lowers the result as before: the kernels' machine code is unchanged. The stored
IR stays for the process (every path peaks 14-22 MB higher).

The pass subclasses numba's and hands its ``_do_work`` the worker below. These are private
parts of numba, the same in 0.59 and 0.68; where the installed numba lacks them,
:data:`MEMOISED` is False and dtjit compiles with numba's own pipeline.
"""

from __future__ import annotations

import collections
import copy
import inspect

from numba.core import ir
from numba.core.bytecode import FunctionIdentity
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
from numba.core.compiler_machinery import register_pass
from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
from numba.core.targetconfig import TargetConfig
from numba.core.typed_passes import NativeLowering
from numba.core.untyped_passes import InlineInlinables, ReconstructSSA

from . import call_types, kernel_calls, liveness, ssa  # noqa: F401  (liveness: installed on import)

# The untyped IR of each helper inlined so far, keyed by (Python function, enable_ssa).
# Never handed out itself: callers get copies, which numba's inliner mutates.
_FRONT_ENDS: dict = {}


class SiteCopyScope(ir.Scope):
    """A helper's variable scope whose deep copy shares its variables instead of copying them.

    numba's ``inline_ir`` deep-copies the helper's IR block by block, twice per call site,
    and every block's copy of a variable deep-copies the scope with all of the helper's
    variables: work that grows with blocks times variables. The site's copy of the scope is
    only read for the variables' names and locations, which numba then defines afresh in
    the caller's scope (step 2 of ``inline_ir``), and its new names go in its own maps. So
    the copy gets new maps holding the same ``Var`` objects, read but never changed. The
    copies' blocks and statements are still deep copies.
    """

    def __deepcopy__(self, memo):
        site = copy.copy(self)
        site.localvars = ir.VarMap()
        site.localvars._con = dict(self.localvars._con)
        site.redefined = collections.defaultdict(int, self.redefined)
        site.var_redefinitions = collections.defaultdict(
            set, {name: set(versions) for name, versions in self.var_redefinitions.items()}
        )
        memo[id(self)] = site
        return site


class SiteBlock(ir.Block):
    """A block of a call site's copy of a helper's IR, before numba copies it for the site.

    numba's ``inline_ir`` deep-copies the site's IR, then deep-copies that copy again to
    return an unmutated one, which ``InlineInlinables`` discards. The first copy of a
    ``SiteBlock`` is a :class:`CopiedSiteBlock`, which the second copy shares instead of
    copying; :meth:`FrontEndOnceWorker.inline_ir` makes the blocks plain ``ir.Block``
    again once they are in the caller.
    """

    def __deepcopy__(self, memo):
        copied = CopiedSiteBlock.__new__(CopiedSiteBlock)
        memo[id(self)] = copied
        copied.__dict__.update(copy.deepcopy(self.__dict__, memo))  # as copy.deepcopy does
        return copied


class CopiedSiteBlock(ir.Block):
    """numba's working copy of a :class:`SiteBlock`; copying it again shares it."""

    def __deepcopy__(self, memo):
        return self


class FrontEndOnceWorker(InlineWorker):
    """numba's inline worker, building a helper's untyped IR only the first time it is asked."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A helper's own inline helpers are inlined by this pass too, so each of them is
        # also built once, not once per helper that calls it.
        self._compiler_pipeline = untyped_pipeline

    def run_untyped_passes(self, func, enable_ssa=False):
        """Return a copy of ``func``'s untyped IR, built by numba on the first request.

        The copy has its own ``func_id`` (``derive`` draws a new unique name), so the
        variables numba renames at each call site stay distinct, as with a rebuilt IR.
        """
        key = (func, enable_ssa)
        front_end = _FRONT_ENDS.get(key)  # numba compiles under one lock: no race
        if front_end is None:
            front_end = _FRONT_ENDS[key] = super().run_untyped_passes(func, enable_ssa)
            for block in front_end.blocks.values():
                if type(block.scope) is ir.Scope:
                    block.scope.__class__ = SiteCopyScope  # its Vars hold the same object
        else:
            # A build sets the caller's flag (numba's side effect); a reuse does the same.
            self.flags.enable_ssa = enable_ssa
        site_copy = front_end.copy()  # new blocks, each with its own list of statements
        site_copy.func_id = front_end.func_id.derive()
        for block in site_copy.blocks.values():
            block.__class__ = SiteBlock
        return site_copy

    def inline_ir(self, caller_ir, block, i, callee_ir, callee_freevars, arg_typs=None):
        """Inline as numba's ``inline_ir`` does, copying the site's IR once, not twice.

        The unmutated copy it returns first (:class:`SiteBlock`) shares the blocks inlined
        into the caller; ``InlineInlinables`` discards it.
        """
        try:
            return super().inline_ir(caller_ir, block, i, callee_ir, callee_freevars, arg_typs)
        finally:
            for caller_block in caller_ir.blocks.values():
                if type(caller_block) is CopiedSiteBlock:
                    caller_block.__class__ = ir.Block


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineHelpersOnce(InlineInlinables):
    """numba's ``InlineInlinables``, with the front-end-once worker."""

    _name = "dtjit_inline_inlinables"

    def _do_work(self, state, work_list, block, i, expr, inline_worker):
        worker = FrontEndOnceWorker(
            state.typingctx,
            state.targetctx,
            state.locals,
            state.pipeline,
            state.flags,
            validator=callee_ir_validator,
        )
        return super()._do_work(state, work_list, block, i, expr, worker)


def _supported() -> bool:
    """Return whether this numba has the private parts the pass relies on (0.59 - 0.68 do)."""
    do_work = getattr(InlineInlinables, "_do_work", None)
    if do_work is None or not hasattr(FunctionIdentity, "derive"):
        return False
    expected = ["self", "state", "work_list", "block", "i", "expr", "inline_worker"]
    run = inspect.signature(InlineWorker.run_untyped_passes).parameters
    inline = ["self", "caller_ir", "block", "i", "callee_ir", "callee_freevars", "arg_typs"]
    scope_maps = {"localvars", "redefined", "var_redefinitions"}
    scope = ir.Scope(None, ir.Loc("", 0))
    return (
        list(inspect.signature(do_work).parameters) == expected
        and "enable_ssa" in run
        and list(inspect.signature(InlineWorker.inline_ir).parameters) == inline
        and scope_maps <= set(vars(scope))
        and hasattr(scope.localvars, "_con")
    )


MEMOISED = _supported()


def replace_pass(pipeline, numba_pass, ours):
    """Return ``pipeline``, a numba pass manager, running ``ours`` instead of ``numba_pass``."""
    pipeline.passes = [
        (ours if pass_class is numba_pass else pass_class, what)
        for pass_class, what in pipeline.passes
    ]
    return pipeline


def with_helpers_once(pipeline):
    """Return ``pipeline``, inlining with :class:`InlineHelpersOnce` where numba allows.

    Its SSA pass is ``ssa.ReconstructSSAByBlock`` too, where numba allows.
    """
    if ssa.BY_BLOCK:
        pipeline = replace_pass(pipeline, ReconstructSSA, ssa.ReconstructSSAByBlock)
    return replace_pass(pipeline, InlineInlinables, InlineHelpersOnce) if MEMOISED else pipeline


def with_calls_by_symbol(pipeline):
    """Return ``pipeline``, lowering with ``kernel_calls.KernelLowering`` where numba allows."""
    if not kernel_calls.BY_SYMBOL:
        return pipeline
    return replace_pass(pipeline, NativeLowering, kernel_calls.KernelLowering)


def untyped_pipeline(state, name="untyped"):
    """Return numba's untyped pipeline (a helper's front end), inlining with the pass above."""
    return with_helpers_once(DefaultPassBuilder.define_untyped_pipeline(state, name))


class KernelFlags(Flags):
    """numba's compile flags, compared by the options set instead of all of them.

    While a function compiles, numba's overload templates key their caches by its flags
    (``ConfigStack``): typing each call of an overloaded function (``np.empty``, ``min``,
    indexing ...) hashes the flags and compares them with a cached key's, and numba's
    ``__eq__`` builds a dict of every option (22 property reads) for each side: 5-9 %
    of compiling every path. Here equal flags are still equal, and the hash is numba's, which
    depends only on the options' names, so a ``KernelFlags`` and numba's ``Flags`` with equal
    values find each other's cache entries.
    """

    def __eq__(self, other):
        if not isinstance(other, TargetConfig):
            return NotImplemented
        if id(other.options) not in _FLAGS_OPTIONS:
            return super().__eq__(other)
        options = self.options
        mine, theirs = self._values, other._values  # each option's value, where set
        return mine == theirs or all(
            mine.get(name, options[name].default) == theirs.get(name, options[name].default)
            for name in mine.keys() | theirs.keys()
        )

    def __hash__(self):
        return _FLAGS_HASH

    def get_mangle_string(self) -> str:
        """Return numba's ABI tag for these flags (its text names the class: numba's)."""
        return Flags(self).get_mangle_string()


# numba's TargetConfig.__hash__ hashes the sorted keys of ``values()``: the options' names.
_FLAGS_HASH = hash(tuple(sorted(Flags.options)))
# The options of numba's Flags and of KernelFlags (each class gets its own mapping of them).
_FLAGS_OPTIONS = {id(Flags.options), id(KernelFlags.options)}


def _flags_as_known() -> bool:
    """Return whether numba's flags compare and hash as :class:`KernelFlags` assumes."""
    flags = Flags()
    return (
        dict(KernelFlags.options) == dict(Flags.options)
        and isinstance(getattr(flags, "_values", None), dict)
        and hash(flags) == _FLAGS_HASH
        and list(inspect.signature(CompilerBase.__init__).parameters)
        == ["self", "typingctx", "targetctx", "library", "args", "return_type", "flags", "locals"]
        and all(getattr(flags, name) == option.default for name, option in Flags.options.items())
    )


FAST_FLAGS = _flags_as_known()


class KernelCompiler(CompilerBase):
    """numba's nopython pipeline with dtjit's inlining and lowering passes.

    Inlining by :class:`InlineHelpersOnce`; lowering by ``kernel_calls.KernelLowering``, which
    calls other kernels by symbol.
    """

    # Read by ``kernel_calls.kernel_symbol``: kernels of this pipeline are called by symbol.
    calls_kernels_by_symbol = kernel_calls.BY_SYMBOL

    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        flags = KernelFlags(flags) if FAST_FLAGS else flags  # a copy: the caller's stays
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)

    def _compile_core(self):
        """Compile as numba does, reusing typing answers while it runs (``call_types``)."""
        with call_types.memoised():
            return super()._compile_core()

    def define_pipelines(self):
        """Return the one pipeline a dtjit kernel compiles with (nopython, no fallback)."""
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline = with_calls_by_symbol(with_helpers_once(pipeline))
        pipeline.finalize()  # again: numba's builder finalised the pass list it replaced
        return [pipeline]
