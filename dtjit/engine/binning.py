"""Quantile binning of X into uint8 codes for the histogram splitter.

Bins of a feature are runs of consecutive distinct values. When a feature has at most
``max_bins`` distinct values every one gets its own bin, so the histogram splitter sees
exactly the candidate cuts of the exact splitter (it treats neighbouring bins closer than
``FEATURE_THRESHOLD`` as tied values, node by node, as the exact splitter does); otherwise
bins hold about equally many rows (quantiles over the distinct values, like LightGBM and
scikit-learn's HistGradientBoosting), and values chained closer than ``FEATURE_THRESHOLD``
(added in float32, as in the exact splitter) stay in one bin.

Bins are found on a sample of at most ``BIN_SAMPLE_ROWS`` rows (sorted with the exact
splitter's radix presort), then every row is coded by binary search over the edges
``edge[b] = high[b] / 2 + low[b + 1] / 2`` (one comparison for a feature of at most two
bins): ``x`` gets the number of edges below it, so ``code <= b`` iff ``x <= edge[b]``, the
routing rule of prediction. The coding pass also records each bin's smallest and largest
value in the *full* data: the histogram splitter places a threshold midway between the
largest value left and the smallest value right of a cut, exactly where the exact splitter
puts it. A feature whose sample showed at most ``max_bins`` distinct values but whose full
column has a value the sample missed is binned again from the full column, so the "one bin
per distinct value" promise holds.

Missing values (NaN) get a bin of their own after the feature's value bins, code
``n_bins[f]``, in every feature that has NaN in the training data (and only there, so the
sweep of a NaN-free feature is unchanged); its ``bin_min`` / ``bin_max`` are NaN, which is
how the histogram splitter recognises it. With at most 255 value bins the NaN code still
fits in a uint8.

Codes are stored row-major, shape ``(n_samples, n_features)``: the histogram build walks a
node's rows and adds every feature of a row at once, and a row's codes share one cache line;
the histogram builder also moves a row's codes as one contiguous block when it partitions
them with the rows, which keeps every later pass over a node sequential. Column-major codes
would make both the build and the partition touch ``n_features`` scattered bytes per row.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .jit import (
    FEATURE_THRESHOLD,
    PARALLEL_MIN_WORK,
    inline_kernel,
    kernel,
    read_only,
)
from .sweep_exact import presort
from .threads import even_ranges, run_concurrently

BIN_SAMPLE_ROWS = 200_000
SAMPLE_SEED = 0  # fixed: the bins depend on the data only, not on random_state


@inline_kernel
def bins_from_sorted(values, max_bins, out_low, out_high):
    """Bins of one feature from its sorted values; returns their number.

    Parameters
    ----------
    values : ndarray of float32
        The feature's values, sorted ascending.
    max_bins : int
        Most bins allowed (<= 255).
    out_low, out_high : ndarray of float32, shape (>= max_bins,)
        Receive the smallest and largest value of each bin.

    Returns
    -------
    int
        Number of bins, between 1 and ``max_bins``.

    Notes
    -----
    With at most ``max_bins`` distinct values, each gets its own bin, even values closer
    than ``FEATURE_THRESHOLD``: whether such neighbours are tied depends on the values a node
    holds (a node can lack the middle of a run of near-ties), so the histogram splitter
    decides it per node, as the exact splitter does. With more distinct values, bins are
    made of groups of values chained closer than ``FEATURE_THRESHOLD`` (never split, as
    the exact splitter never cuts inside such a run when it is whole): bin ``k`` ends after
    the first group whose cumulative count reaches ``k * n / max_bins``, so a heavy value
    fills a bin alone and no bin is empty. Cost O(n).
    """
    n = values.shape[0]
    group_end = np.empty(n, dtype=np.int64)  # one past each group's last position
    n_groups = 0
    n_distinct = 1
    for p in range(1, n):
        if values[p] > values[p - 1]:
            n_distinct += 1
        if values[p] > values[p - 1] + FEATURE_THRESHOLD:
            group_end[n_groups] = p
            n_groups += 1
    group_end[n_groups] = n
    n_groups += 1
    n_bins = 0
    start = 0
    if n_distinct <= max_bins:
        for p in range(1, n + 1):
            if p == n or values[p] > values[p - 1]:
                out_low[n_bins] = values[start]
                out_high[n_bins] = values[p - 1]
                start = p
                n_bins += 1
        return n_bins
    if n_groups <= max_bins:
        for g in range(n_groups):
            out_low[n_bins] = values[start]
            out_high[n_bins] = values[group_end[g] - 1]
            start = group_end[g]
            n_bins += 1
        return n_bins
    k = 1
    for g in range(n_groups):
        # Close the current bin after group g once it reaches the next quantile (or at the end).
        if g == n_groups - 1 or group_end[g] * max_bins >= k * n:
            out_low[n_bins] = values[start]
            out_high[n_bins] = values[group_end[g] - 1]
            start = group_end[g]
            n_bins += 1
            while k < max_bins and group_end[g] * max_bins >= k * n:
                k += 1
            if n_bins == max_bins - 1 and g < n_groups - 1:
                out_low[n_bins] = values[start]
                out_high[n_bins] = values[n - 1]
                return n_bins + 1
    return n_bins


def feature_bins(sorted_val, max_bins):
    """Bins of every feature from its sorted (sampled) values.

    Returns
    -------
    low, high : ndarray of float32, shape (n_features, max_bins)
        Smallest and largest sampled value of each bin.
    n_bins : ndarray of int64, shape (n_features,)
        Value bins (NaN, sorted last, is left out); 0 for a feature whose sample is all NaN.
    edges : ndarray of float64, shape (n_features, 255)
        ``edges[f, b] = high[f, b] / 2 + low[f, b + 1] / 2`` for ``b < n_bins[f] - 1``,
        ``+inf`` after.
    """
    # Allocated here: numba compiles its np.zeros / np.full for each dtype and shape.
    n_features = sorted_val.shape[0]
    low = np.zeros((n_features, max_bins), dtype=np.float32)
    high = np.zeros((n_features, max_bins), dtype=np.float32)
    n_bins = np.zeros(n_features, dtype=np.int64)
    edges = np.full((n_features, 255), np.inf, dtype=np.float64)
    fill_feature_bins(sorted_val, max_bins, low, high, n_bins, edges)
    return low, high, n_bins, edges


@kernel
def fill_feature_bins(sorted_val, max_bins, low, high, n_bins, edges):
    """Fill :func:`feature_bins`' outputs, given zeroed (``edges``: ``+inf``)."""
    n_features = sorted_val.shape[0]
    for f in range(n_features):
        n_valid = sorted_val.shape[1]
        while n_valid > 0 and np.isnan(sorted_val[f, n_valid - 1]):
            n_valid -= 1
        if n_valid == 0:
            # No value in the sample: an empty range, so any value of the full column
            # counts as missed and the feature is binned again from it.
            low[f, 0] = np.inf
            high[f, 0] = -np.inf
            continue
        n_bins[f] = bins_from_sorted(sorted_val[f, :n_valid], max_bins, low[f], high[f])
        for b in range(n_bins[f] - 1):
            edges[f, b] = np.float64(high[f, b]) / 2.0 + np.float64(low[f, b + 1]) / 2.0


@kernel
def code_rows(X, first, stop, edges, n_bins, low, high, check, codes, bin_min, bin_max, missed,
              has_nan, two_bin_search):  # fmt: skip
    """Code rows ``first .. stop - 1`` of ``X``; record per-bin extremes, missed values, NaN.

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
    first, stop : int
        The rows to code.
    edges, n_bins, low, high : ndarray
        Output of :func:`feature_bins`.
    check : ndarray of uint8, shape (n_features,)
        1 where every distinct value should have its own bin: a value outside its bin's
        sampled range ``[low, high]`` is then a distinct value the sample missed.
    codes : ndarray of uint8, shape (n_samples, n_features)
        Receives the codes of the rows.
    bin_min, bin_max : ndarray of float32, shape (n_features, max_bins)
        Running extremes of each bin (start at +inf / -inf).
    missed : ndarray of uint8, shape (n_features,)
        Set to 1 for a checked feature with a missed value.
    has_nan : ndarray of uint8, shape (n_features,)
        Set to 1 for a feature with a NaN, which gets code ``n_bins[f]`` (the NaN bin).
    two_bin_search : True or None
        True when some feature has at most two bins: those are coded by one comparison.
        None compiles the kernel without that test (see :func:`two_bin_switch`).

    Notes
    -----
    Cost O((stop - first) * n_features * log(max_bins)).
    """
    n_features = X.shape[1]
    for i in range(first, stop):
        for f in range(n_features):
            x = X[i, f]
            if x != x:
                codes[i, f] = n_bins[f]
                has_nan[f] = 1
                continue
            if two_bin_search is not None and n_bins[f] <= 2:
                # At most one finite edge, edges[f, 0]: the search below would compare x
                # with +inf seven times first. 0/1 and one-hot columns (covtype's 44 of 54)
                # were coded 2.5x slower per value than this.
                lo = 1 if edges[f, 0] < x else 0
            else:
                # Number of edges strictly below x, by a branch-free binary search over the
                # 255 edge slots (unused ones are +inf): eight steps whose outcome is a
                # conditional add, not a mispredicted branch (3-4x faster on random data).
                lo = 0
                step = 128
                while step > 0:
                    lo += step if edges[f, lo + step - 1] < x else 0
                    step >>= 1
            codes[i, f] = lo
            if x < bin_min[f, lo]:
                bin_min[f, lo] = x
            if x > bin_max[f, lo]:
                bin_max[f, lo] = x
            if check[f] and not (low[f, lo] <= x <= high[f, lo]):
                missed[f] = 1


class BinnedData(NamedTuple):
    """X coded into bins, with what the histogram splitter needs to place thresholds.

    Attributes
    ----------
    codes : ndarray of uint8, shape (n_samples, n_features), C order
        Bin of every value.
    bin_offset : ndarray of int64, shape (n_features + 1,)
        Feature ``f``'s bins are ``bin_offset[f] .. bin_offset[f + 1] - 1`` in the flat arrays.
    bin_min, bin_max : ndarray of float64, shape (bin_offset[-1],)
        Smallest and largest training value of each bin (float32 values, widened); NaN for
        a feature's NaN bin, its last, present only if the feature has NaN.
    """

    codes: np.ndarray
    bin_offset: np.ndarray
    bin_min: np.ndarray
    bin_max: np.ndarray


def _code(X, max_bins, sorted_val, n_threads, check_all):
    """Bins from ``sorted_val`` and codes of ``X`` (per-bin extremes merged over chunks).

    The extremes have ``max_bins + 1`` columns: room for a NaN bin after 255 value bins.
    """
    low, high, n_bins, edges = feature_bins(sorted_val, max_bins)
    n_features = X.shape[1]
    check = (n_bins < max_bins).astype(np.uint8) if check_all else np.zeros(n_features, np.uint8)
    n_chunks = n_threads if n_threads > 1 and X.size >= PARALLEL_MIN_WORK else 1
    codes = np.empty(X.shape, dtype=np.uint8)
    bin_min = np.full((n_chunks, n_features, max_bins + 1), np.inf, dtype=np.float32)
    bin_max = np.full((n_chunks, n_features, max_bins + 1), -np.inf, dtype=np.float32)
    missed = np.zeros((n_chunks, n_features), dtype=np.uint8)
    has_nan = np.zeros((n_chunks, n_features), dtype=np.uint8)
    # Chunk ``t`` writes only its own rows of ``codes`` and its own ``bin_min[t]``,
    # ``bin_max[t]``, ``missed[t]``, ``has_nan[t]``, merged below with min / max / or, which
    # do not depend on the order: the result is the same on any number of threads.
    two_bin_search = two_bin_switch(n_bins)
    run_concurrently([
        functools.partial(code_rows, X, first, stop, edges, n_bins, low, high, check, codes,
                          bin_min[t], bin_max[t], missed[t], has_nan[t], two_bin_search)
        for t, (first, stop) in enumerate(even_ranges(X.shape[0], n_chunks))
    ])  # fmt: skip
    return (codes, n_bins, bin_min.min(axis=0), bin_max.max(axis=0), missed.any(axis=0),
            has_nan.any(axis=0))  # fmt: skip


def two_bin_switch(n_bins: np.ndarray) -> bool | None:
    """``code_rows``'s ``two_bin_search``: True if some feature has at most two bins, else None.

    A compile-time choice (numba prunes the test when it is None): with the test compiled
    in, columns of many bins were coded 8-10 % slower per value (1M x 20 continuous).
    """
    return True if (n_bins <= 2).any() else None


def _presort_values(X, n_threads):
    return presort(X, np.zeros(X.shape[1], dtype=np.uint8), n_threads)[1]


def bin_features(X: np.ndarray, max_bins: int, n_threads: int) -> BinnedData:
    """Bin every feature of ``X`` (float32, C order, no inf) into at most ``max_bins`` bins.

    NaN values get one more bin per feature that has them (see the module docstring).

    Parameters
    ----------
    X : ndarray of float32, shape (n_samples, n_features), C order
        Training data.
    max_bins : int
        Most bins per feature, 2 to 255.
    n_threads : int
        Threads the kernels may use.

    Returns
    -------
    BinnedData
    """
    X = read_only(X)
    n_samples, n_features = X.shape
    sampled = n_samples > BIN_SAMPLE_ROWS
    if sampled:
        rows = np.random.default_rng(SAMPLE_SEED).choice(n_samples, BIN_SAMPLE_ROWS, replace=False)
        sample = read_only(np.ascontiguousarray(X[np.sort(rows)]))
    else:
        sample = X
    codes, n_bins, bin_min, bin_max, missed, has_nan = _code(
        X, max_bins, _presort_values(sample, n_threads), n_threads, sampled
    )
    # A low-cardinality feature with a value the sample missed: bin its full column. The
    # columns go n_threads at a time, so the presort sorts one per thread (it sorts a column
    # on one thread) while its scratch stays that of n_threads columns.
    again = np.flatnonzero(missed)
    for first in range(0, len(again), n_threads):
        group = again[first : first + n_threads]
        columns = np.ascontiguousarray(X[:, group])
        codes_g, n_bins_g, min_g, max_g, _, _ = _code(
            columns, max_bins, _presort_values(columns, n_threads), n_threads, False
        )
        codes[:, group] = codes_g
        n_bins[group] = n_bins_g
        bin_min[group], bin_max[group] = min_g, max_g
    nan_features = np.flatnonzero(has_nan)
    bin_min[nan_features, n_bins[nan_features]] = np.nan
    bin_max[nan_features, n_bins[nan_features]] = np.nan
    n_bins = n_bins + has_nan
    bin_offset = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(n_bins, out=bin_offset[1:])
    used = np.arange(max_bins + 1)[None, :] < n_bins[:, None]
    return BinnedData(
        codes=codes,
        bin_offset=bin_offset,
        bin_min=bin_min[used].astype(np.float64),
        bin_max=bin_max[used].astype(np.float64),
    )
