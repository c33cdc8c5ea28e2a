"""The vector partition block (``dtjit.engine.simd``) and the partition that uses it, against numpy.

``partition_block`` is checked on any CPU (with LLVM 19 or later): where AVX-512 is missing
LLVM expands its intrinsics lane by lane, so the result must be the same.
``partition_worker`` takes the vector path only where ``simd.USE_COMPRESS`` holds (its test
prints which it ran).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from llvmlite import binding as llvm_binding

from dtjit.engine import simd, sweep_exact
from dtjit.engine.threads import run_workers

# The block's intrinsics need LLVM 19 or later: see ``simd._MIN_LLVM``.
needs_new_llvm = pytest.mark.skipif(
    llvm_binding.llvm_version_info < simd._MIN_LLVM,
    reason="partition_block's intrinsics need LLVM >= 19",
)


@numba.njit
def _partition_by_blocks(idx, val, codes, flags, flip, n_left, out_idx, out_val, out_codes):
    """Whole blocks of 16 rows through ``partition_block``; returns the rows it moved.

    The right part starts ``STORE_SLACK`` positions after the left part's end.
    """
    to_left = np.uint64(0)
    to_right = np.uint64(n_left) + np.uint64(simd.STORE_SLACK)
    p = np.uint64(0)
    while p + np.uint64(16) <= np.uint64(idx.shape[0]):
        n = simd.partition_block(idx, val, codes, p, flags, flip, out_idx, out_val, out_codes,
                                  to_left, to_right)  # fmt: skip
        to_left += n
        to_right += np.uint64(16) - n
        p += np.uint64(16)
    return p


def _side_flags(goes_left: np.ndarray) -> np.ndarray:
    flags = sweep_exact.new_side_flags(len(goes_left))
    flags[: (len(goes_left) + 7) // 8] = np.packbits(goes_left, bitorder="little")
    return flags


@needs_new_llvm
@pytest.mark.parametrize("code_dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("flip", [0, 1])
def test_partition_block_is_a_stable_partition(code_dtype, flip):
    """Rows whose bit differs from ``flip`` go left, the others right, each in row order.

    The blocks write at most ``STORE_SLACK`` positions past each part: the right part is
    intact after the left part's stores, and nothing after the right part's slack changes.
    """
    rng = np.random.default_rng(7 + flip)
    n = 16 * 40
    idx = rng.permutation(n).astype(np.int32)
    val = rng.random(n, dtype=np.float32)
    codes = rng.integers(0, np.iinfo(code_dtype).max, n).astype(code_dtype)
    bit = rng.random(n) < 0.3
    bit[idx[:16]] = True  # a block that goes one way only, then the other
    bit[idx[16:32]] = False
    flags = _side_flags(bit)
    left = bit[idx] != bool(flip)
    order = np.concatenate([np.flatnonzero(left), np.flatnonzero(~left)])
    slack = simd.STORE_SLACK
    size = n + 2 * slack + 8  # 8 positions that no store may reach
    out = (np.full(size, -1, np.int32), np.full(size, -1, np.float32), np.zeros(size, code_dtype))
    n_left = int(left.sum())
    moved = _partition_by_blocks(idx, val, codes, flags, np.uint64(flip), n_left, *out)
    assert moved == n
    kept = np.r_[0:n_left, n_left + slack : n + slack]  # the left part, then the right part
    for got, rows in zip(out, (idx, val, codes), strict=True):
        np.testing.assert_array_equal(got[kept], rows[order])
        assert np.all(got[n + 2 * slack :] == (0 if got.dtype == code_dtype else -1))


@pytest.mark.parametrize("vector_blocks", [True, False])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_partition_worker_against_numpy(n_threads, vector_blocks):
    """Segments of 1 to about 150 rows (whole blocks and row tails), 3 features, both flips;
    on one thread and shared by two; with the vector blocks and with the row loop alone."""
    rng = np.random.default_rng(3)
    n, n_features = 2000, 3
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n, 60)]))  # 1 to ~150 rows
    starts, ends = cuts[:-1], cuts[1:]
    X = rng.random((n, n_features), dtype=np.float32)
    y = rng.integers(0, 5, n)
    sample_of_position = rng.permutation(n)
    sorted_idx = np.empty((n_features, n), np.int32)
    for f in range(n_features):
        for s, e in zip(starts, ends, strict=True):
            ids = sample_of_position[s:e]
            sorted_idx[f, s:e] = ids[np.argsort(X[ids, f], kind="mergesort")]
    sorted_val = np.take_along_axis(X.T, sorted_idx, axis=1).copy()
    sorted_code = y[sorted_idx].astype(np.uint8)
    bit = rng.random(n) < 0.5
    flags = _side_flags(bit)
    nodes = np.arange(len(starts), dtype=np.int64)
    flip = (nodes % 2).astype(np.uint8)
    sides = zip(starts, ends, flip, strict=True)
    left_size = np.array([np.sum(bit[sample_of_position[s:e]] != bool(f)) for s, e, f in sides])
    expected = [a.copy() for a in (sorted_idx, sorted_val, sorted_code)]
    for f in range(n_features):
        for s, e, fl in zip(starts, ends, flip, strict=True):
            left = bit[sorted_idx[f, s:e]] != bool(fl)
            order = s + np.concatenate([np.flatnonzero(left), np.flatnonzero(~left)])
            for want, got in zip(expected, (sorted_idx, sorted_val, sorted_code), strict=True):
                want[f, s:e] = got[f, order]
    run_workers(
        sweep_exact.partition_worker, n_threads, nodes, starts.astype(np.int64),
        ends.astype(np.int64), np.full(len(nodes), -1, np.int32), flags, flip, left_size,
        sorted_idx, sorted_val, sorted_code,
        np.full(n_features, sweep_exact.UPKEEP_ALWAYS, np.uint8), np.empty((n, 0), np.uint64),
        np.int64((ends - starts).max()), vector_blocks,
    )  # fmt: skip
    for want, got in zip(expected, (sorted_idx, sorted_val, sorted_code), strict=True):
        np.testing.assert_array_equal(got, want)
    print(f"vector path: {simd.USE_COMPRESS and vector_blocks}")


@numba.njit
def _one_block(idx, val, codes, flags, out_idx, out_val, out_codes):
    zero = np.uint64(0)  # with flags of 0 and flip 0 every row goes right, from position 0
    return simd.partition_block(idx, val, codes, zero, flags, zero, out_idx, out_val, out_codes,
                                 zero, zero)  # fmt: skip


@needs_new_llvm
def test_partition_block_rejects_other_dtypes():
    """Its lanes are typed for int32 ids, float32 values and 8- or 16-bit codes: others fail to
    compile rather than being read as garbage."""
    ids, flags = np.arange(16, dtype=np.int32), np.zeros(8, np.uint8)
    good = (np.zeros(16, np.float32), np.zeros(16, np.uint8))
    assert _one_block(ids, good[0], good[1], flags, ids.copy(), *(a.copy() for a in good)) == 0
    for values, codes in ((np.zeros(16), good[1]), (good[0], np.zeros(16, np.int64))):
        with pytest.raises(numba.core.errors.TypingError):
            _one_block(ids, values, codes, flags, ids.copy(), values.copy(), codes.copy())
