"""numba's SSA reconstruction for dtjit's kernels, rewriting only the blocks that need it.

numba puts a function's IR in SSA form (``ReconstructSSA``) one variable at a time: for
each variable assigned more than once (loop counters, accumulators, the copies inlining
leaves), it rewrites every block twice, once to give each assignment a fresh name and once
to point each use at the assignment that reaches it, handing every statement of every
block to a handler. A statement that neither assigns nor reads the variable comes back
unchanged, and so does a block without one. In a kernel with its inline helpers copied in,
that is hundreds of variables times thousands of statements.

:func:`reconstruct_ssa` does numba's steps in numba's order, with numba's handlers, but
hands them only the blocks holding the variable; every other block is copied as numba's
rewrite would leave it. Which variables a block holds is read once, before the first
rewrite: rewriting one variable renames only that variable and adds phi nodes for it
alone, so the other variables stay where they were. The blocks, the names given and the
phi nodes are the ones numba makes, so the IR and the machine code are unchanged.

The pass replaces numba's in :class:`~dtjit.engine.compile_pipeline.KernelCompiler`'s
pipeline only. It mirrors private functions of numba's ``ssa`` module as written in numba
0.68; their source is checked on import, and where it differs :data:`BY_BLOCK` is False and
the pipeline keeps numba's pass.
"""

from __future__ import annotations

from collections import defaultdict

from numba.core import config, errors, ir, postproc
from numba.core import ssa as numba_ssa
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler_machinery import register_pass
from numba.core.ir_utils import build_definitions
from numba.core.untyped_passes import ReconstructSSA

from .numba_parts import written_as


def _labels_holding(blocks) -> dict:
    """Return, for each variable name, the labels of the blocks that assign or read it."""
    holding = defaultdict(set)
    for label, block in blocks.items():
        for stmt in block.body:
            for var in stmt.list_vars():  # an assignment's target included
                holding[var.name].add(label)
    return holding


def _rewrite(blocks, states, handler, labels):
    """Numba's block rewrite, running ``handler`` only on the blocks in ``labels``."""
    rewritten = {}
    for label, block in blocks.items():
        new_block = ir.Block(scope=block.scope, loc=block.loc)
        if label in labels:
            states["label"] = label
            states["block"] = block
            new_block.body = list(numba_ssa._run_ssa_block_pass(states, block, handler))
        else:  # the handler would return each statement as it is
            new_block.body = list(block.body)
        rewritten[label] = new_block
    return rewritten


def _fresh_vars(blocks, varname, labels):
    """Give each assignment of ``varname`` a fresh name, as numba's ``_fresh_vars`` does."""
    states = numba_ssa._make_states(blocks)
    states["varname"] = varname
    states["defmap"] = defmap = defaultdict(list)
    return _rewrite(blocks, states, numba_ssa._FreshVarHandler(), labels), defmap


def _fix_ssa_vars(blocks, varname, defmap, cfg, df_plus, cache_list_vars, labels):
    """Point each use of ``varname`` at its reaching assignment, as numba's ``_fix_ssa_vars``."""
    states = numba_ssa._make_states(blocks)
    states["varname"] = varname
    states["defmap"] = defmap
    states["phimap"] = phimap = defaultdict(list)
    states["cfg"] = cfg
    states["phi_locations"] = numba_ssa._compute_phi_locations(df_plus, defmap)
    handler = numba_ssa._FixSSAVars(cache_list_vars)
    rewritten = _rewrite(blocks, states, handler, labels)
    for label, phis in phimap.items():  # phi nodes first, in blocks rewritten or not
        block = rewritten[label]
        block.body = phis + block.body
    return rewritten


def run_ssa(blocks):
    """Return ``blocks`` in SSA form: numba's ``_run_ssa``, each variable's blocks only."""
    if not blocks:
        return {}
    cfg = compute_cfg_from_blocks(blocks)
    df_plus = numba_ssa._iterated_domfronts(cfg)
    violators = numba_ssa._find_defs_violators(blocks, cfg)
    cache_list_vars = numba_ssa._CacheListVars()
    holding = _labels_holding(blocks)
    for varname in violators:
        labels = holding[varname]
        blocks, defmap = _fresh_vars(blocks, varname, labels)
        blocks = _fix_ssa_vars(blocks, varname, defmap, cfg, df_plus, cache_list_vars, labels)
    if compute_cfg_from_blocks(blocks) != cfg:
        raise errors.CompilerError("CFG mutated in SSA pass")
    return blocks


@register_pass(mutates_CFG=True, analysis_only=False)
class ReconstructSSAByBlock(ReconstructSSA):
    """numba's ``ReconstructSSA`` pass, with :func:`run_ssa`."""

    _name = "dtjit_reconstruct_ssa"

    def run_pass(self, state):
        """Put the IR in SSA form and refresh what depends on it, as numba's pass does."""
        state.func_ir.blocks = run_ssa(state.func_ir.blocks)
        self._patch_locals(state)
        state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        postproc.PostProcessor(state.func_ir).run(emit_dels=False)
        if config.DEBUG or config.DUMP_SSA:
            print(f"SSA IR DUMP: {state.func_ir.func_id.func_qualname}".center(80, "-"))
            state.func_ir.dump()
        return True


def _supported() -> bool:
    """Return whether numba's SSA functions are the ones this module mirrors (numba 0.68)."""
    names = ("_run_ssa", "_fresh_vars", "_fix_ssa_vars", "_run_block_rewrite",
             "_run_ssa_block_pass", "_make_states", "_iterated_domfronts",
             "_find_defs_violators", "_compute_phi_locations", "_CacheListVars",
             "_FreshVarHandler", "_FixSSAVars", "reconstruct_ssa")  # fmt: skip
    if not all(hasattr(numba_ssa, name) for name in names):
        return False
    run_ssa_steps = [
        "blocks, defmap = _fresh_vars(blocks, varname)",
        "_fix_ssa_vars(blocks, varname, defmap, cfg, df_plus,",
    ]
    rewrite_steps = ["states['block'] = blk", "newblk = ir.Block(scope=blk.scope, loc=blk.loc)"]
    pass_steps = [
        "state.func_ir = reconstruct_ssa(state.func_ir)",
        "build_definitions(state.func_ir.blocks)",
        "post_proc.run(emit_dels=False)",
    ]
    return (
        written_as(numba_ssa._run_ssa, run_ssa_steps)
        and written_as(numba_ssa._run_block_rewrite, rewrite_steps)
        and written_as(numba_ssa._fix_ssa_vars, ["curblk.body = philist + curblk.body"])
        and written_as(ReconstructSSA.run_pass, pass_steps)
        and hasattr(ReconstructSSA, "_patch_locals")
    )


BY_BLOCK = _supported()
