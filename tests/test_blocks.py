"""Block-wise reading of X for prediction: conversion, coverage, and bounded memory."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import dtjit
from dtjit.predict import blocks as _blocks


def _rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.parametrize(
    "make",
    [
        lambda X: X,
        lambda X: X.astype(np.float64),
        lambda X: np.asfortranarray(X),
        lambda X: X[:, ::-1],
        lambda X: X.astype(np.int16),
    ],
    ids=["float32-C", "float64", "F-order", "strided", "int16"],
)
def test_blocks_cover_every_row_once_as_float32_C(make):
    rng = np.random.default_rng(0)
    X = make(rng.integers(-50, 50, size=(10_001, 7)).astype(np.float32))
    seen = []
    for start, stop, block in _blocks.iter_float32_blocks(X, 4096):
        assert block.dtype == np.float32 and block.flags.c_contiguous and block.flags.writeable
        np.testing.assert_array_equal(block, X[start:stop].astype(np.float32))
        seen.append((start, stop))
    assert seen == [(0, 4096), (4096, 8192), (8192, 10_001)]


def test_kernel_ready_blocks_are_views_not_copies():
    X = np.zeros((5000, 3), dtype=np.float32)
    (_, _, first), *_ = _blocks.iter_float32_blocks(X, 4096)
    assert np.shares_memory(first, X)


def test_block_rows_is_a_multiple_of_the_task_size():
    for n_features in (1, 20, 54, 1000, 10**6):
        rows = _blocks.block_rows(n_features, 4096)
        assert rows % 4096 == 0 and rows >= 4096
        assert n_features * rows * 4 <= max(_blocks.BLOCK_BYTES, 4096 * n_features * 4)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("order", ["C", "F", "C reversed"])
def test_predicting_on_a_memmap_keeps_the_resident_set_bounded(tmp_path, order):
    """A 320 MB memory-mapped X is scored with far less than 320 MB of extra RSS.

    Without releasing finished blocks, every page read stays mapped into the process and
    the resident set grows by the whole file; a reversed view (``X[::-1]``) too.
    """
    rng = np.random.default_rng(1)
    X_train = rng.normal(size=(2000, 20)).astype(np.float32)
    y = (X_train[:, 0] > 0).astype(int)
    est = dtjit.DecisionTreeClassifier(max_depth=6, random_state=0).fit(X_train, y)
    n_rows = 4_000_000
    path = tmp_path / "X.npy"
    X = np.lib.format.open_memmap(
        path, mode="w+", dtype=np.float32, shape=(n_rows, 20), fortran_order=order == "F"
    )
    for start in range(0, n_rows, 500_000):
        X[start : start + 500_000] = rng.normal(size=(500_000, 20))
    X.flush()
    del X
    X = np.load(path, mmap_mode="r")
    if order == "C reversed":
        X = X[::-1]
    before = _rss_bytes()
    predicted = est.predict(X)
    grown = _rss_bytes() - before
    assert grown < 120 * 2**20, f"RSS grew by {grown / 2**20:.0f} MB for a 320 MB file"
    expected = est.predict(np.array(X[:100_000]))
    np.testing.assert_array_equal(predicted[:100_000], expected)


def test_copy_on_write_memmap_keeps_its_edits(tmp_path):
    """Pages of a private ("c") map are never dropped: they may hold the user's edits."""
    rng = np.random.default_rng(2)
    X_train = rng.normal(size=(500, 3)).astype(np.float32)
    est = dtjit.DecisionTreeRegressor(max_depth=3).fit(X_train, X_train[:, 0])
    path = tmp_path / "X.npy"
    np.save(path, rng.normal(size=(300_000, 3)).astype(np.float32))
    X = np.load(path, mmap_mode="c")
    X[:, 0] = 100.0  # edits live only in this process's private pages
    predicted = est.predict(X)
    assert (X[:, 0] == 100.0).all()
    np.testing.assert_array_equal(predicted, est.predict(np.array(X)))
