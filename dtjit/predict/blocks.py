"""Reading a large X block by block: conversion to the kernels' dtype, bounded memory.

Prediction never converts or copies X whole. Rows are read in blocks of about
``BLOCK_BYTES``; a block that is not already float32, C-ordered and writeable is copied into
one that is (the only layout the traversal kernels are compiled for). When X lives in a
shared memory map (``np.memmap`` / ``np.load(mmap_mode="r")``), the pages of each finished
block are handed back to the operating system, so scoring a file far larger than memory
keeps the resident set bounded by a few blocks instead of growing with the file.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator

import numpy as np

# About 16 MB of float32 per block: large enough that each thread gets thousands of rows
# of it, small enough to bound the memory of a conversion.
BLOCK_BYTES = 16 << 20

# Copy-on-write maps ("c") must keep their pages: dropping them would discard the user's
# in-memory edits. Shared maps lose nothing: their pages are re-read from the file.
_SHARED_MEMMAP_MODES = frozenset({"r", "r+", "w+"})


def block_rows(n_features: int, rows_multiple: int) -> int:
    """Return the rows per block for ``n_features`` columns, a multiple of ``rows_multiple``."""
    rows = BLOCK_BYTES // (4 * max(n_features, 1))
    return max(rows_multiple, rows // rows_multiple * rows_multiple)


def is_kernel_ready(X: np.ndarray) -> bool:
    """Return True if the kernels can read ``X`` as it is (float32, C order, writeable)."""
    return X.dtype == np.float32 and X.flags.c_contiguous and X.flags.writeable


def float32_block(block: np.ndarray) -> np.ndarray:
    """Return ``block`` as a float32, C-ordered, writeable array (a copy unless it already is).

    Values beyond float32's range become infinities here (numpy warns, as it does for
    scikit-learn's own float32 conversion); the kernels' scan then reports them
    ("infinity or a value too large for dtype('float32')"). No ``np.errstate`` around the
    cast: entering one costs more than converting 100 rows (1.7 us against 1.2 us).
    """
    if is_kernel_ready(block):
        return block
    return np.array(block, dtype=np.float32, order="C", copy=True)


def iter_float32_blocks(X: np.ndarray, rows: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield ``(start, stop, block)`` for consecutive row blocks of ``X``, kernel-ready.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Any dtype the kernels' conversion accepts, any layout, possibly memory-mapped.
    rows : int
        Rows per block.

    Yields
    ------
    start, stop : int
        The block's rows in ``X``.
    block : ndarray of float32, C order
        ``X[start:stop]``, a view when already kernel-ready, else a fresh copy.
    """
    release = _page_releaser(X)
    for start in range(0, X.shape[0], rows):
        stop = min(X.shape[0], start + rows)
        yield start, stop, float32_block(X[start:stop])
        release(stop)


def _memmap_chain(X: np.ndarray) -> tuple[np.memmap | None, object]:
    """Follow ``X.base``: return the innermost ``np.memmap`` on the way and the final base."""
    base: object = X
    found = None
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap):
            found = base
        base = base.base
    return found, base


def is_memory_mapped(X: np.ndarray) -> bool:
    """Return True if ``X`` is a view of an ``np.memmap``."""
    return _memmap_chain(X)[0] is not None


def _shared_map(X: np.ndarray) -> mmap.mmap | None:
    """Return the shared ``mmap`` behind ``X``, or None (not mapped, or copy-on-write)."""
    memmap, base = _memmap_chain(X)
    shared = memmap is not None and getattr(memmap, "mode", None) in _SHARED_MEMMAP_MODES
    return base if shared and isinstance(base, mmap.mmap) else None


def _page_releaser(X: np.ndarray) -> Callable[[int], None]:
    """Return ``release(stop)``: drop the mapped pages of rows ``[0, stop)`` of ``X``.

    A no-op unless ``X`` is a view of a shared memory map on a system with ``madvise``
    whose finished rows fill whole spans of memory: C- or F-contiguous, or rows one after
    another in reverse (``X[::-1]``, a negative row stride). Only whole pages inside finished
    rows are released, each once.
    """
    mapping = _shared_map(X)
    if mapping is None or not hasattr(mmap, "MADV_DONTNEED") or X.size == 0:
        return lambda stop: None
    row_length = X.shape[1] * X.itemsize
    if X.ndim == 2 and X.strides[1] == X.itemsize and X.strides[0] == -row_length:
        return _reversed_rows_releaser(X, mapping, row_length)
    if X.flags.c_contiguous:
        # One span: rows follow each other.
        starts, row_bytes = [0], X.strides[0]
    elif X.flags.f_contiguous:
        # One span per column: a column's rows follow each other.
        starts, row_bytes = [j * X.strides[1] for j in range(X.shape[1])], X.itemsize
    else:
        return lambda stop: None
    map_address = np.frombuffer(mapping, dtype=np.uint8).ctypes.data
    offset = X.ctypes.data - map_address
    page = mmap.PAGESIZE
    released = [(offset + s) // page * page for s in starts]  # first page not yet released

    def release(stop: int) -> None:
        for k, s in enumerate(starts):
            end = (offset + s + stop * row_bytes) // page * page
            if end > released[k]:
                mapping.madvise(mmap.MADV_DONTNEED, released[k], end - released[k])
                released[k] = end

    return release


def _reversed_rows_releaser(
    X: np.ndarray, mapping: mmap.mmap, row_length: int
) -> Callable[[int], None]:
    """``release(stop)`` for rows stored one after another in reverse (``X[::-1]``).

    Row 0 is the last in memory, so the finished rows ``[0, stop)`` are the span from the
    start of row ``stop - 1`` to the end of row 0, growing towards lower addresses.
    """
    map_address = np.frombuffer(mapping, dtype=np.uint8).ctypes.data
    row0_end = X.ctypes.data - map_address + row_length  # byte after row 0
    page = mmap.PAGESIZE
    released = [row0_end // page * page]  # lowest address released so far (none yet)

    def release(stop: int) -> None:
        first = row0_end - stop * row_length  # start of row stop - 1
        begin = -(-first // page) * page  # the first whole page inside the finished rows
        if begin < released[0]:
            mapping.madvise(mmap.MADV_DONTNEED, begin, released[0] - begin)
            released[0] = begin

    return release
