"""The check that a private numba function is the one a compile-time shortcut was read from."""

from __future__ import annotations

from dtjit.engine.numba_parts import written_as


def _sample(self, blocks, varname):
    blocks = dict(blocks)  # a copy, then the steps
    return blocks, varname


def test_phrases_and_parameters_must_all_match():
    assert written_as(_sample, ["blocks = dict(blocks)", "return blocks, varname"])
    assert written_as(_sample, ["dict(blocks)"], parameters=["self", "blocks", "varname"])
    assert not written_as(_sample, ["dict(blocks)", "a line it lacks"])
    assert not written_as(_sample, ["dict(blocks)"], parameters=["self", "blocks"])


def test_a_function_without_source_never_matches():
    assert not written_as(len, [])  # a C function: no source to check
