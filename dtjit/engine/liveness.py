"""numba's liveness analysis after its IR passes, computed only when read, for dtjit's code.

After most of its IR passes numba runs ``PostProcessor.run``, which

1. canonicalises the control-flow graph,
2. sets the variables' lifetimes (numba's ``VariableLifetime``, whose maps are computed on
   first read),
3. computes the variables live on entry to each block, which forces every map of step 2,
4. inserts the ``ir.Del`` statements lowering needs, in the runs that ask for them.

Step 3's sets are read only by object-mode lowering and by generators, neither of which
dtjit compiles, yet the step ran about ten times per function: 5-8 % of the CPU time of
compiling every path (``benchmarks/README.md``). :func:`run_without_entry_sets` keeps steps 1,
2 and 4 for functions defined in dtjit and leaves step 3 out; every other function (numba's
own overloads, a user's) gets numba's ``run``. The IR each pass sees is the same, and so is
the kernels' machine code.

The lifetimes' maps are then computed when read, from the blocks as they are at that time,
not as they were at the end of the pass. What reads them later (loop lifting, ``with``
contexts, ``literal_unroll``) is object mode or is not used in dtjit's code; the runs that
insert deletions read them at once, as before.

This replaces a method of a private class of numba, as written in numba 0.68; its signature
and steps are checked on import, and where the installed numba's differ,
:data:`WITHOUT_ENTRY_SETS` is False and numba's ``run`` is left alone.
"""

from __future__ import annotations

import functools

from numba.core import postproc, transforms

from .numba_parts import written_as

_numba_run = postproc.PostProcessor.run


def _defined_in_dtjit(func_ir) -> bool:
    """Return whether ``func_ir`` is the IR of a kernel or helper defined in dtjit."""
    modname = getattr(func_ir.func_id, "modname", None) or ""
    return modname == "dtjit" or modname.startswith("dtjit.")


@functools.wraps(_numba_run)
def run_without_entry_sets(self, emit_dels: bool = False, extend_lifetimes: bool = False):
    """Run numba's ``PostProcessor.run``, without the entry sets for functions defined in dtjit."""
    func_ir = self.func_ir
    if func_ir.is_generator or not _defined_in_dtjit(func_ir):
        return _numba_run(self, emit_dels, extend_lifetimes)
    func_ir.blocks = transforms.canonicalize_cfg(func_ir.blocks)
    func_ir.variable_lifetime = postproc.VariableLifetime(func_ir.blocks)
    func_ir.generator_info = None
    if emit_dels:
        self._insert_var_dels(extend_lifetimes=extend_lifetimes)
    return None


def _supported() -> bool:
    """Return whether numba's ``run`` has the signature and steps this module knows."""
    return (
        hasattr(postproc.PostProcessor, "_insert_var_dels")
        and hasattr(postproc, "VariableLifetime")
        and hasattr(transforms, "canonicalize_cfg")
        # the steps above, in numba's words
        and written_as(
            _numba_run,
            ["canonicalize_cfg", "compute_live_variables", "block_entry_vars"],
            parameters=["self", "emit_dels", "extend_lifetimes"],
        )
    )


WITHOUT_ENTRY_SETS = _supported()
if WITHOUT_ENTRY_SETS:
    postproc.PostProcessor.run = run_without_entry_sets
