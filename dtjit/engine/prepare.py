"""Prepare a fit's data for the builders: weighted rows, presorted or binned columns.

The first step of :func:`dtjit.engine.fit`. The rows of zero weight are dropped, weights
and targets rescaled where the criteria's squares would leave float64, and each row's
contribution to the node statistics laid out (:func:`weighted_rows`); then the exact
splitters get every column sorted once with the class codes in sorted order
(:func:`presorted_columns`), the histogram splitter quantile bins
(:func:`binned_columns`).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from . import binning, sweep_exact, sweep_two_valued
from .compile_notice import caller_stacklevel
from .jit import ABSOLUTE_ERROR, ENTROPY, GINI, SQUARED_ERROR, read_only
from .records import BinnedColumns, FitSpec, PresortedColumns, WeightedRows
from .sweep_absolute_error import MEDIAN_STAT
from .threads import even_ranges, run_concurrently

# Classes the exact and random splitters can sweep: their presorted class codes are at most
# uint16 (uint8 up to 256 classes).
MAX_SORTED_CODES = 1 << 16
# Bins of a feature with splitter="hist": a uint8 code per value.
HIST_MAX_BINS = 256


# Cells from which the sorted class codes are gathered on threads: a gather through the
# sorted ids costs about 1 ns per cell on shuffled data (4 ms for 200,000 x 20), so below
# this it takes under a millisecond, and a small threaded fit compiles no threaded gather.
GATHER_PARALLEL_MIN_WORK = 1 << 20


def weighted_rows(
    spec: FitSpec, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray
) -> tuple[np.ndarray, WeightedRows]:
    """Return the rows of positive weight of ``X`` and what the split searches read of them.

    Parameters
    ----------
    spec : FitSpec
        The fit's settings.
    X : ndarray of float32, shape (n_samples, n_features), C order
        Training data.
    y : ndarray, shape (n_samples,) or (n_samples, n_outputs)
        int32 class codes, or float64 targets (C order, writable) for regression.
    sample_weight : ndarray of float64, shape (n_samples,)
        Non-negative weights with a positive, finite sum.

    Returns
    -------
    X : ndarray
        ``X`` without its rows of zero weight (``X`` itself when there are none).
    rows : WeightedRows
        The kept rows' sweep codes, contributions, rescaled weights and targets.

    Raises
    ------
    ValueError
        If the weights span more than float64 holds once rescaled.
    """
    min_weight_leaf = float(spec.min_weight_leaf)
    # Like scikit-learn, rows of zero weight take no part at all: they count in no node's
    # n_node_samples and cannot satisfy min_samples_leaf.
    keep = sample_weight != 0.0
    if not keep.all():
        X, sample_weight, y = X[keep], sample_weight[keep], y[keep]
    n_samples = X.shape[0]
    # Gini needs W*W and squared error w*y*y: rescale weights and targets by exact powers
    # of two when those would overflow or underflow float64. Nothing changes for data of
    # ordinary magnitude (scale 1), and a power of two changes no rounding elsewhere.
    weight_scale = power_of_two_scale(sample_weight)
    # Only squared error squares the targets (the other criteria are scale-free sums).
    target_scale = 1.0 if spec.criterion != SQUARED_ERROR else power_of_two_scale(y)
    if weight_scale != 1.0:
        sample_weight = sample_weight * weight_scale
        if not (sample_weight > 0.0).all():
            raise ValueError(
                "sample_weight spans more than float64 can hold once rescaled for the "
                "criterion's squares (its largest and smallest positive weights differ by "
                "a factor near 1e300 or more); clip the smallest weights or drop them."
            )
        min_weight_leaf *= weight_scale
    if spec.mdl_stop and n_samples > 1 and sample_weight.sum() < 2.0:
        warnings.warn(
            f"mdl_stop counts sample weights as rows, and these sum to "
            f"{sample_weight.sum() / weight_scale:.3g}: the MDL test splits no node "
            "weighing less than 2, so the tree is one leaf. Scale relative weights to "
            "the row count (w * n / w.sum()).",
            UserWarning,
            stacklevel=caller_stacklevel(),
        )
    if target_scale != 1.0:
        y = y * target_scale
    if spec.is_regression:
        code, contrib, y_kernel, n_stats, n_sweep = regression_sweep(
            y, sample_weight, spec.criterion
        )
    else:
        code, contrib, n_stats = classification_sweep(y, sample_weight, spec.n_classes)
        y_kernel = np.zeros(1, dtype=np.float64)  # unused by classification kernels
        n_sweep = n_stats
    # In squared target units: scaled like the impurities (inf if it overflows: no split
    # can then reach it, as none could in the original units either).
    min_impurity_decrease = float(spec.min_impurity_decrease)
    if min_impurity_decrease > 0.0:
        with np.errstate(over="ignore"):
            min_impurity_decrease = float(
                np.float64(min_impurity_decrease) * target_scale * target_scale
            )
    return X, WeightedRows(
        code=code,
        contrib=contrib,
        sample_weight=sample_weight,
        y=y_kernel,
        # Unweighted classification: every contribution is 1, so the sweep gathers nothing.
        unit_weight=not spec.is_regression and bool(np.all(sample_weight == 1.0)),
        n_stats=n_stats,
        n_sweep=n_sweep,
        weight_scale=weight_scale,
        target_scale=target_scale,
        min_weight_leaf=min_weight_leaf,
        min_impurity_decrease=min_impurity_decrease,
    )


def power_of_two_scale(a: np.ndarray) -> float:
    """Return a power of two bringing ``max(|a|)`` near 1 if it is outside [2**-400, 2**400].

    Squares of the rescaled values cannot overflow or underflow float64; values of ordinary
    magnitude get 1.0, so their arithmetic is untouched.
    """
    largest = float(np.max(np.abs(a))) if a.size else 0.0
    if largest == 0.0 or 2.0**-400 <= largest <= 2.0**400:
        return 1.0
    # Below 2**-1023 (subnormal values) the exact factor would overflow: 2**1023 brings the
    # largest value to at least 2**-51, far enough from underflow for its square.
    return float(np.ldexp(1.0, min(int(-np.round(np.log2(largest))), 1023)))


def classification_sweep(
    y_encoded: np.ndarray, sample_weight: np.ndarray, n_classes: int | np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Return ``code, contrib, n_stats``: what each row adds to the class-count statistics.

    One output: the class code and the weight (``sweep_exact``). Several: for row ``i`` and
    output ``o`` the slot ``o * width + class`` and the weight, flattened row by row
    (``sweep_multioutput``), where ``width`` is the largest of ``n_classes``.
    """
    width = int(np.max(n_classes))
    if y_encoded.ndim == 1:
        return y_encoded, sample_weight, width
    n_outputs = y_encoded.shape[1]
    slots = y_encoded + np.arange(n_outputs, dtype=np.int32) * np.int32(width)
    contrib = np.repeat(sample_weight, n_outputs)
    return np.ascontiguousarray(slots, dtype=np.int32).ravel(), contrib, n_outputs * width


def regression_sweep(
    y: np.ndarray, sample_weight: np.ndarray, criterion: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Return ``code, contrib, y, n_stats, n_sweep`` for the regression kernels.

    One output: statistics ``sum(w*y), sum(w*y*y), range(y)`` (and the weighted median for
    absolute error), swept ``sum(w*y)``. Several: those three per output, swept the
    ``n_outputs`` sums; per-row arrays flattened row by row (``sweep_multioutput``).
    """
    n_samples = sample_weight.shape[0]
    if y.ndim == 1:
        n_stats = MEDIAN_STAT + 1 if criterion == ABSOLUTE_ERROR else 3
        return np.zeros(n_samples, dtype=np.int32), sample_weight * y, y, n_stats, 1
    n_outputs = y.shape[1]
    code = np.tile(np.arange(n_outputs, dtype=np.int32), n_samples)
    contrib = np.ascontiguousarray(sample_weight[:, None] * y).ravel()
    return code, contrib, np.ascontiguousarray(y).ravel(), 3 * n_outputs, n_outputs


def presorted_columns(spec: FitSpec, X: np.ndarray, rows: WeightedRows) -> PresortedColumns:
    """Return the exact splitters' data: every column sorted once, class codes in that order.

    Raises
    ------
    ValueError
        If a single-output classification has more classes than the presorted codes hold.
    """
    check_sorted_code_range(rows.n_sweep, spec.n_outputs, spec.splitter)
    n_samples, n_features = X.shape
    # 0/1 and other two-valued columns are searched from class counts where that gives the
    # sweep's very splits: unweighted Gini or entropy, one output, every feature searched by
    # the best splitter (sweep_two_valued). They need no presort. MIN_ROWS is read here, at
    # call time: tests lower it.
    two_valued_applies = (
        n_samples >= sweep_two_valued.MIN_ROWS
        and rows.unit_weight
        and spec.criterion in (GINI, ENTROPY)
        and spec.n_outputs == 1
        and spec.splitter == "best"
        and spec.max_features >= n_features
        and not spec.mdl_stop
    )
    X = read_only(X)  # one compiled presort for writeable and read-only X
    two_valued = sweep_two_valued.two_valued_layout(
        X, (spec.cat_slot < 0) if two_valued_applies else None, spec.n_threads
    )
    unsorted = (two_valued[0] >= 0).astype(np.uint8)
    sorted_idx, sorted_val = sweep_exact.presort(X, unsorted, spec.n_threads)
    return PresortedColumns(
        sorted_idx=sorted_idx,
        sorted_val=sorted_val,
        sorted_code=sorted_class_codes(
            sorted_idx, rows.code, spec.n_outputs, unsorted, spec.n_threads
        ),
        two_valued=two_valued,
        # NaN sorts last in each presorted feature (read before the build partitions the
        # columns in place) instead of scanning X again; the two-valued columns have none.
        features_with_missing=np.isnan(sorted_val[:, -1]) & (unsorted == 0),
    )


def sorted_class_codes(
    sorted_idx: np.ndarray,
    code: np.ndarray,
    n_outputs: int,
    unsorted: np.ndarray,
    n_threads: int,
) -> np.ndarray:
    """Return the exact builder's ``sorted_code`` (``sweep_exact``): uint8, uint16 past 256 codes.

    The partition moves these codes with every id and value, and the sweep reads them, so
    their width is memory traffic on every level: one byte instead of two made covtype's
    full-depth fit 0.97-0.98x the time and the binary 1M x 20 one 0.96x. More than 256
    classes take uint16, a second compiled variant of the split search and partition (about
    a minute once, on a cold cache) for those fits only; regression (code 0) and several outputs
    (their sweep gathers per-row codes; zeros to partition) take uint8.
    :func:`check_sorted_code_range` has checked that the codes fit. The rows of ``unsorted``
    features are left uninitialised.
    Written on ``n_threads`` threads when the work pays for them.
    """
    if n_outputs > 1:
        return np.zeros(sorted_idx.shape, dtype=np.uint8)
    # The codes are 0 .. n_classes - 1 (or all 0 for regression).
    dtype = np.uint8 if code.size == 0 or code.max() <= np.iinfo(np.uint8).max else np.uint16
    out = np.empty(sorted_idx.shape, dtype=dtype)
    n_threads = n_threads if sorted_idx.size >= GATHER_PARALLEL_MIN_WORK else 1
    run_concurrently([  # blocks of positions, one per thread
        functools.partial(sweep_exact.sorted_codes, sorted_idx, code, unsorted, first, stop, out)
        for first, stop in even_ranges(sorted_idx.shape[1], n_threads)
    ])  # fmt: skip
    return out


def check_sorted_code_range(n_sweep: int, n_outputs: int, splitter: str) -> None:
    """Raise if a single-output classification has more classes than uint16 codes hold."""
    if n_outputs == 1 and n_sweep > MAX_SORTED_CODES:
        raise ValueError(
            f"splitter={splitter!r} supports at most {MAX_SORTED_CODES} classes (its presorted "
            f"columns carry 16-bit class codes), got {n_sweep}."
        )


def binned_columns(spec: FitSpec, X: np.ndarray) -> BinnedColumns:
    """Return the histogram splitter's data: numeric columns binned, categories as codes.

    A numeric column gets at most ``spec.max_bins`` quantile bins plus a NaN bin, its last
    (``binning.bin_features``); a categorical column's bin is its code, and a missing value
    gets the bin after the largest code.

    Raises
    ------
    ValueError
        If a categorical column needs more than ``HIST_MAX_BINS`` bins.
    """
    n_samples, n_features = X.shape
    max_bins = int(spec.max_bins)
    is_cat = spec.cat_slot >= 0
    if not is_cat.any():
        # No categories: the numeric binning's arrays as they are. Selecting the numeric
        # columns would copy X (and its codes) whole: +0.1 s and +1x X of peak memory
        # on 1M x 20 rows.
        binned = binning.bin_features(X, max_bins, spec.n_threads)
        nan_bin = np.full(n_features, -1, dtype=np.int64)
        return _binned(*binned, nan_bin)
    numeric = np.flatnonzero(~is_cat)
    codes = np.empty((n_samples, n_features), dtype=np.uint8)
    n_bins = np.zeros(n_features, dtype=np.int64)
    lows: list[np.ndarray] = [np.zeros(0)] * n_features
    highs: list[np.ndarray] = [np.zeros(0)] * n_features
    if numeric.size:
        sub = binning.bin_features(np.ascontiguousarray(X[:, numeric]), max_bins, spec.n_threads)
        codes[:, numeric] = sub.codes
        for j, f in enumerate(numeric):
            first, stop = sub.bin_offset[j], sub.bin_offset[j + 1]
            n_bins[f] = stop - first
            lows[f], highs[f] = sub.bin_min[first:stop], sub.bin_max[first:stop]
    nan_bin = np.full(n_features, -1, dtype=np.int64)
    for f in np.flatnonzero(is_cat):
        column = X[:, f]
        missing = np.isnan(column)
        n_codes = int(np.nanmax(column)) + 1 if (~missing).any() else 0
        total = n_codes + int(missing.any())
        if total > HIST_MAX_BINS:
            raise ValueError(
                f"categorical feature {f} needs {total} bins ({n_codes} codes"
                f"{' plus missing values' if missing.any() else ''}); splitter='hist' holds "
                f"at most {HIST_MAX_BINS} bins per feature; use splitter='best'."
            )
        bins = np.where(missing, n_codes, np.nan_to_num(column)).astype(np.uint8)
        codes[:, f] = bins
        if missing.any():
            nan_bin[f] = n_codes
        n_bins[f] = max(total, 1)
        lows[f] = highs[f] = np.arange(n_bins[f], dtype=np.float64)
    bin_offset = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(n_bins, out=bin_offset[1:])
    return _binned(
        codes,
        bin_offset,
        np.concatenate(lows).astype(np.float64),
        np.concatenate(highs).astype(np.float64),
        nan_bin,
    )


def _binned(
    codes: np.ndarray,
    bin_offset: np.ndarray,
    bin_min: np.ndarray,
    bin_max: np.ndarray,
    nan_bin: np.ndarray,
) -> BinnedColumns:
    """Return the binned columns with the features that hold missing values."""
    # A numeric feature's NaN bin is its last, where bin_min is NaN: reading the bins
    # saves a scan of X.
    last_bin_nan = np.isnan(bin_min[bin_offset[1:] - 1])
    return BinnedColumns(
        codes=codes,
        bin_offset=bin_offset,
        bin_min=bin_min,
        bin_max=bin_max,
        nan_bin=nan_bin,
        features_with_missing=last_bin_nan | (nan_bin >= 0),
    )
