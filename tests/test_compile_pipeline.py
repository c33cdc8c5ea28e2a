"""dtjit's compiler pipeline: each inline helper's front end built once (``compile_pipeline``)."""

from __future__ import annotations

import collections
import copy

import numba
import numpy as np
import pytest
from numba.core import targetconfig
from numba.core.compiler import Flags
from numba.core.inline_closurecall import InlineWorker
from numba.extending import overload

from dtjit.engine import compile_pipeline
from dtjit.engine.compile_pipeline import InlineHelpersOnce, KernelCompiler, KernelFlags
from dtjit.engine.jit import KERNEL_OPTIONS

FRESH = {**KERNEL_OPTIONS, "cache": False}


def _scaled_plus(a, b):
    # Locals named like the callers' own: each call site's copy must keep them apart.
    t = a * 2
    return t + b


def _twice(a):
    t = a + 1
    return _scaled_plus_inline(t, t)


_scaled_plus_inline = numba.njit(inline="always", **FRESH)(_scaled_plus)
_twice_inline = numba.njit(inline="always", **FRESH)(_twice)


def _two_sites(a, b):
    t = _scaled_plus_inline(a, 1)
    u = _scaled_plus_inline(b, 10)
    return t * 100 + u


def _nested_sites(a):
    t = _twice_inline(a)
    return t + _scaled_plus_inline(a, a)


@pytest.fixture
def builds(monkeypatch):
    """Count numba's own front-end builds of each helper (the inner, unmemoised call)."""
    counts = collections.Counter()
    numba_build = InlineWorker.run_untyped_passes

    def counting(self, func, enable_ssa=False):
        counts[func.__name__] += 1
        return numba_build(self, func, enable_ssa)

    monkeypatch.setattr(InlineWorker, "run_untyped_passes", counting)
    # Helpers built by earlier tests of this process would not be built again.
    monkeypatch.setattr(compile_pipeline, "_FRONT_ENDS", {})
    return counts


def test_installed_numba_runs_the_memoised_pass():
    # A numba without the parts the pass needs compiles with its own pipeline; this one has them.
    assert compile_pipeline.MEMOISED
    kernel = numba.njit(**FRESH)(_two_sites)
    assert kernel(3, 4) == 7 * 100 + 18
    passes = kernel.overloads[kernel.signatures[0]].metadata["pipeline_times"]["nopython"]
    names = [name.split("_", 1)[1] for name in passes]
    assert InlineHelpersOnce._name in names
    assert "inline_inlinables" not in names


def test_a_helper_front_end_is_built_once_for_every_call_site(builds):
    first = numba.njit(**FRESH)(_two_sites)
    second = numba.njit(**FRESH)(_two_sites)
    assert first(3, 4) == 7 * 100 + 18
    assert first(-2.5, 0.5) == -4.0 * 100 + 11.0  # a second specialisation
    assert second(1, 1) == 3 * 100 + 12
    # Five call sites in three compiles, one build.
    assert builds["_scaled_plus"] == 1


def test_nested_helpers_and_their_copies_stay_apart(builds):
    kernel = numba.njit(**FRESH)(_nested_sites)
    # _twice(5) = 2 * 6 + 6 = 18; _scaled_plus(5, 5) = 15.
    assert kernel(5) == 33
    # _scaled_plus is inlined into _twice's front end and into _nested_sites: one build.
    assert builds == {"_twice": 1, "_scaled_plus": 1}
    again = numba.njit(**FRESH)(_nested_sites)
    assert again(0) == 3  # _twice(0) = 2 * 1 + 1
    assert builds == {"_twice": 1, "_scaled_plus": 1}


def test_the_stored_front_end_is_never_handed_out(builds):
    kernel = numba.njit(**FRESH)(_two_sites)
    kernel(1, 2)
    front_ends = compile_pipeline._FRONT_ENDS
    (stored,) = [ir for (func, _), ir in front_ends.items() if func is _scaled_plus]
    names = sorted(stored.blocks[min(stored.blocks)].scope.localvars._con)
    numba.njit(**FRESH)(_two_sites)(5, 6)
    # numba renames a site copy's variables into the caller: the stored IR keeps its own.
    assert sorted(stored.blocks[min(stored.blocks)].scope.localvars._con) == names
    worker = compile_pipeline.FrontEndOnceWorker.__new__(compile_pipeline.FrontEndOnceWorker)
    worker.flags = numba.core.compiler.Flags()
    one, two = worker.run_untyped_passes(_scaled_plus), worker.run_untyped_passes(_scaled_plus)
    assert one is not stored and two is not stored and one.blocks is not two.blocks
    assert one.func_id.unique_name != two.func_id.unique_name != stored.func_id.unique_name


def test_without_the_needed_numba_parts_numba_pipeline_is_used(monkeypatch):
    monkeypatch.setattr(compile_pipeline, "MEMOISED", False)
    kernel = numba.njit(**{**FRESH, "pipeline_class": KernelCompiler})(_two_sites)
    assert kernel(3, 4) == 718
    passes = kernel.overloads[kernel.signatures[0]].metadata["pipeline_times"]["nopython"]
    names = [name.split("_", 1)[1] for name in passes]
    assert "inline_inlinables" in names
    assert InlineHelpersOnce._name not in names


def test_a_site_copy_of_the_scope_has_the_variables_in_maps_of_its_own(builds):
    assert numba.njit(**FRESH)(_nested_sites)(1) == 9  # (2 * 2 + 2) + (2 * 1 + 1)
    (stored,) = [ir for (func, _), ir in compile_pipeline._FRONT_ENDS.items() if func is _twice]
    scope = stored.blocks[min(stored.blocks)].scope
    assert type(scope) is compile_pipeline.SiteCopyScope
    first_block = stored.blocks[min(stored.blocks)]
    block_copy = copy.deepcopy(first_block)
    site = block_copy.scope
    assert site is not scope and type(site) is type(scope)
    # Every Var of the copied block refers to the block's copy of the scope (one memo).
    copied_vars = [v for stmt in block_copy.body for v in stmt.list_vars()]
    assert copied_vars and all(var.scope is site for var in copied_vars)
    assert site == scope and list(site.localvars._con) == list(scope.localvars._con)
    before = dict(scope.localvars._con)
    redefined = dict(scope.redefined)
    renamed = site.redefine(next(iter(before)), site.loc)
    site.define("only_in_the_copy", site.loc)
    assert renamed.name not in before and "only_in_the_copy" in site.localvars._con
    assert scope.localvars._con == before and dict(scope.redefined) == redefined


def test_a_site_is_copied_once_and_its_blocks_end_plain(builds, monkeypatch):
    numba_inline = InlineWorker.inline_ir
    seen = []

    def watching(self, caller_ir, block, i, callee_ir, *args, **kwargs):
        seen.append({type(b) for b in callee_ir.blocks.values()})
        return numba_inline(self, caller_ir, block, i, callee_ir, *args, **kwargs)

    monkeypatch.setattr(InlineWorker, "inline_ir", watching)
    kernel = numba.njit(**FRESH)(_nested_sites)
    assert kernel(2) == 15  # (2 * 3 + 3) + (2 * 2 + 2)
    # Every site's IR came from the stored front end, as SiteBlocks.
    assert seen and all(types == {compile_pipeline.SiteBlock} for types in seen)
    # A deep copy of a SiteBlock is a working copy, which a second copy shares.
    site = compile_pipeline.FrontEndOnceWorker.__new__(compile_pipeline.FrontEndOnceWorker)
    site.flags = numba.core.compiler.Flags()
    block = next(iter(site.run_untyped_passes(_scaled_plus).blocks.values()))
    working = copy.deepcopy(block)
    assert type(working) is compile_pipeline.CopiedSiteBlock and working is not block
    assert working.body is not block.body and copy.deepcopy(working) is working
    # No special block is left in the stored front ends or the compiled kernel's IR.
    blocks = kernel.overloads[kernel.signatures[0]].type_annotation.blocks
    stored = [b for ir in compile_pipeline._FRONT_ENDS.values() for b in ir.blocks.values()]
    assert {type(b) for b in [*stored, *blocks.values()]} == {numba.core.ir.Block}


# Values to set each option of numba's flags to: its default and another (options of
# numba's own types are left unset: their setters convert strings, not their defaults).
_FLAG_VALUES = {
    name: [option.default, not option.default] if option.type is bool else []
    for name, option in Flags.options.items()
}
_FLAG_VALUES["error_model"] = ["python", "numpy"]


def _random_flags(rng, cls):
    # Each option unset, set to its default, or set to another value.
    flags = cls()
    for name, values in _FLAG_VALUES.items():
        pick = rng.integers(len(values) + 1)
        if pick < len(values):
            setattr(flags, name, values[pick])
    return flags


def test_kernel_flags_compare_and_hash_as_numbas():
    assert compile_pipeline.FAST_FLAGS
    rng = np.random.default_rng(0)
    unequal = 0
    for _ in range(400):
        a, b = _random_flags(rng, Flags), _random_flags(rng, Flags)
        if rng.random() < 0.3:  # equal values, set differently: b leaves defaults unset
            b = Flags()
            for name, value in a.values().items():
                if value != Flags.options[name].default:
                    setattr(b, name, value)
        equal = a == b
        unequal += not equal
        ours_a, ours_b = KernelFlags(a), KernelFlags(b)
        assert (ours_a == ours_b) is equal and (ours_a == b) is equal and (a == ours_b) is equal
        assert hash(ours_a) == hash(a) == hash(ours_b)
        assert ours_a.get_mangle_string() == a.get_mangle_string()
        assert ours_a.copy().__class__ is KernelFlags and ours_a.copy() == a
    assert 50 < unequal < 350  # both outcomes were tried
    assert KernelFlags() != object() and KernelFlags() == Flags()


def test_kernels_compile_under_kernel_flags():
    seen = []

    def probe(x):
        return x

    @overload(probe)
    def _probe(x):
        seen.append(type(targetconfig.ConfigStack().top()))
        return lambda x: x + 1

    def calls_probe(x):
        return probe(x)

    assert numba.njit(**FRESH)(calls_probe)(1) == 2
    assert seen == [KernelFlags]
