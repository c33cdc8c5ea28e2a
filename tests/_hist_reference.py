"""Slow, obvious references for the histogram splitter: binning, histograms, bin sweeps.

- :func:`reference_bins` bins every feature with numpy (one bin per distinct value, or
  quantile cuts by cumulative counts over distinct values merged by ``FEATURE_THRESHOLD``,
  codes by ``np.searchsorted``), for data of at most ``BIN_SAMPLE_ROWS`` rows (no sampling).
- :func:`reference_histogram` is ``np.add.at`` over a node's rows.
- :func:`reference_hist_build` grows a tree with :mod:`_reference`'s growth rules, but each
  node's split is found by sweeping the bins of a histogram built from scratch for that node
  (no subtraction, no class-boundary skipping; neighbouring non-empty bins within
  ``FEATURE_THRESHOLD`` are tied values, not cut), with thresholds midway between the largest
  training value left and the smallest right of the cut.
"""

from __future__ import annotations

import math

import numpy as np
from _reference import FEATURE_THRESHOLD, _proxy, _Split, _stats, finish_split, reference_build


def _distinct_groups(sorted_values):
    """Runs of sorted float32 values closer than ``FEATURE_THRESHOLD``: list of (lo, hi) slices."""
    groups = []
    start = 0
    for p in range(1, len(sorted_values)):
        if sorted_values[p] > sorted_values[p - 1] + FEATURE_THRESHOLD:
            groups.append((start, p))
            start = p
    groups.append((start, len(sorted_values)))
    return groups


def _bin_slices(sorted_values, max_bins):
    """Bins of one feature as slices of its sorted values.

    One bin per distinct value when there are at most ``max_bins`` (near-ties included),
    else quantile bins over the runs of near-ties.
    """
    changes = np.flatnonzero(sorted_values[1:] > sorted_values[:-1]) + 1
    if len(changes) + 1 <= max_bins:
        bounds = [0, *changes.tolist(), len(sorted_values)]
        return list(zip(bounds[:-1], bounds[1:], strict=True))
    groups = _distinct_groups(sorted_values)
    if len(groups) <= max_bins:
        return groups
    n = len(sorted_values)
    bins = []
    start = 0
    k = 1
    for g, (_, end) in enumerate(groups):
        last = g == len(groups) - 1
        if last or end * max_bins >= k * n:
            bins.append((start, end))
            start = end
            while k < max_bins and end * max_bins >= k * n:
                k += 1
            if len(bins) == max_bins - 1 and not last:
                bins.append((start, n))
                return bins
    return bins


def reference_bins(X, max_bins):
    """Bin ``X`` like ``dtjit.engine.binning.bin_features`` (without sampling).

    Returns
    -------
    codes : ndarray of uint8, shape (n_samples, n_features)
    bin_offset : ndarray of int64, shape (n_features + 1,)
    bin_min, bin_max : ndarray of float64
        Smallest / largest value of each bin, features one after the other.
    """
    X = np.asarray(X, dtype=np.float32)
    codes = np.empty(X.shape, dtype=np.uint8)
    offsets = [0]
    lows, highs = [], []
    for f in range(X.shape[1]):
        v = np.sort(X[:, f])
        slices = _bin_slices(v, max_bins)
        low = np.array([v[a] for a, _ in slices], dtype=np.float32)
        high = np.array([v[b - 1] for _, b in slices], dtype=np.float32)
        edges = high[:-1].astype(np.float64) / 2.0 + low[1:].astype(np.float64) / 2.0
        codes[:, f] = np.searchsorted(edges, X[:, f].astype(np.float64), side="left")
        lows.append(low.astype(np.float64))
        highs.append(high.astype(np.float64))
        offsets.append(offsets[-1] + len(slices))
    return codes, np.array(offsets, dtype=np.int64), np.concatenate(lows), np.concatenate(highs)


def reference_histogram(codes, rows, labels, weights, n_bins, n_classes):
    """Weighted class counts per bin of one feature over ``rows``: shape (n_bins, n_classes)."""
    hist = np.zeros((n_bins, n_classes), dtype=np.float64)
    np.add.at(hist, (codes[rows], labels[rows]), weights[rows])
    return hist


def _hist_split_finder(codes, bin_offset, bin_min, bin_max):
    """A ``split_finder`` for :func:`_reference.reference_build` sweeping histogram bins."""

    def find(rows, stats, impurity, prm):
        n = len(rows)
        best = None
        best_proxy = -math.inf
        for f in range(codes.shape[1]):
            node_codes = codes[rows, f].astype(np.int64)
            present = np.unique(node_codes)  # the non-empty bins, increasing
            for j in range(1, len(present)):
                lo_bin = bin_offset[f] + present[j - 1]
                hi_bin = bin_offset[f] + present[j]
                if (
                    not np.float32(bin_min[hi_bin])
                    > np.float32(bin_max[lo_bin]) + FEATURE_THRESHOLD
                ):
                    continue  # tied values, as in _reference's exact sweep (float32)
                # left = bins up to present[j - 1]; computed from scratch, as in _reference
                left_rows = rows[node_codes <= present[j - 1]]
                p = len(left_rows)
                if p < prm.min_samples_leaf or n - p < prm.min_samples_leaf:
                    continue
                left = _stats(left_rows, prm.y, prm.w, prm.is_classifier, prm.n_classes)
                if (
                    left.weight < prm.min_weight_leaf
                    or stats.weight - left.weight < prm.min_weight_leaf
                ):
                    continue
                proxy = _proxy(left, stats, prm.criterion)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best = _Split(
                        feature=f,
                        threshold=bin_max[lo_bin] / 2.0 + bin_min[hi_bin] / 2.0,
                        proxy=proxy,
                        left_rows=np.sort(left_rows),
                        right_rows=np.sort(rows[node_codes > present[j - 1]]),
                    )
        return finish_split(best, stats, impurity, prm)

    return find


def reference_hist_build(X, y, *, max_bins=255, **kwargs):
    """Build a tree like ``splitter="hist"``, slowly; keyword arguments of ``reference_build``."""
    codes, bin_offset, bin_min, bin_max = reference_bins(X, max_bins)
    return reference_build(
        X, y, split_finder=_hist_split_finder(codes, bin_offset, bin_min, bin_max), **kwargs
    )
