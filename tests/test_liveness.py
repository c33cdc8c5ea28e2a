"""numba's post-pass liveness analysis without the entry sets, for dtjit's code (``liveness``)."""

from __future__ import annotations

import pytest
from numba.core import analysis, postproc
from numba.core.compiler import run_frontend

from dtjit.engine import liveness
from dtjit.engine.sweep_exact import segment_stats


def _loops_and_branches(a, k):
    # Not defined in dtjit: numba's own run applies.
    total = 0.0
    for i in range(a.shape[0]):
        if a[i] > k:
            total += a[i]
        else:
            for j in range(i):
                total -= a[j]
    return total


def _dtjit_ir():
    # A kernel with loops, branches and many variables.
    return run_frontend(segment_stats.py_func)


def _numba_post_process(func_ir, emit_dels):
    liveness._numba_run(postproc.PostProcessor(func_ir), emit_dels)


def test_installed_for_this_numba():
    # Without it every path compiles seconds slower, silently: the CI's numba must have it.
    assert liveness.WITHOUT_ENTRY_SETS
    assert postproc.PostProcessor.run is liveness.run_without_entry_sets


@pytest.mark.parametrize("emit_dels", [False, True])
def test_same_ir_and_deletions_as_numba(emit_dels):
    ours, numbas = _dtjit_ir(), _dtjit_ir()
    postproc.PostProcessor(ours).run(emit_dels)
    _numba_post_process(numbas, emit_dels)
    assert ours.dump_to_string() == numbas.dump_to_string()
    assert ("del " in ours.dump_to_string()) is emit_dels
    assert ours.variable_lifetime.livemap == numbas.variable_lifetime.livemap
    assert ours.variable_lifetime.deadmaps == numbas.variable_lifetime.deadmaps
    assert ours.generator_info is None


def test_dtjit_code_skips_the_entry_sets(monkeypatch):
    func_ir = _dtjit_ir()
    before = dict(func_ir.block_entry_vars)

    def not_for_dtjit(*args, **kwargs):
        raise AssertionError("entry sets computed for dtjit's code")

    monkeypatch.setattr(analysis, "compute_live_variables", not_for_dtjit)
    postproc.PostProcessor(func_ir).run(True)
    assert func_ir.block_entry_vars == before


def test_other_code_gets_numbas_run():
    func_ir = run_frontend(_loops_and_branches)
    postproc.PostProcessor(func_ir).run()
    numbas = run_frontend(_loops_and_branches)
    _numba_post_process(numbas, False)
    entry = {offset: func_ir.get_block_entry_vars(b) for offset, b in func_ir.blocks.items()}
    assert entry == {offset: numbas.get_block_entry_vars(b) for offset, b in numbas.blocks.items()}
    assert any(entry.values())  # the loop's variables are live into its blocks
