"""One fit, start to end: prepare -> grow -> finish (the engine's entry point, ``engine.fit``)."""

from __future__ import annotations

import numpy as np

from . import grow, prepare
from .finish import finish
from .jit import multi_output_criterion
from .records import FitResult, FitSpec, WeightedRows

SPLITTERS = ("best", "random", "hist")


def fit(spec: FitSpec, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> FitResult:
    """Grow one tree on validated data, as scikit-learn's ``_fit`` calls ``builder.build``.

    Parameters
    ----------
    spec : FitSpec
        Every setting of the fit, resolved by the caller.
    X : ndarray of float32, shape (n_samples, n_features), C order
        Training data; NaN is a missing value, no infinities. Categorical columns (those
        with ``spec.cat_slot >= 0``) hold non-negative integer codes or NaN.
    y : ndarray, shape (n_samples,) or (n_samples, n_outputs)
        Classification: int32 class codes ``0 .. n_classes - 1`` per output. Regression:
        float64 targets, C order and writable (a read-only array would compile a second copy
        of the builder).
    sample_weight : ndarray of float64, shape (n_samples,)
        Non-negative finite weights with a positive, finite sum; C order and writable.

    Returns
    -------
    FitResult
        The finished tree's arrays (``Tree``'s keyword arguments) and the features that
        hold missing values.

    Raises
    ------
    ValueError
        For an unknown ``spec.splitter``, and where the data leave what the engine can
        represent: weights spanning more than float64 holds, more classes than the exact
        splitters' codes hold, a categorical column with more bins than ``splitter="hist"``
        holds, node values overflowing float64.

    Notes
    -----
    The engine returns arrays, not a ``Tree``: ``Tree`` (``dtjit._tree``) depends on the
    prediction layer for its packed nodes, and the engine imports nothing outside
    ``dtjit.engine``, so the caller wraps the arrays.
    """
    if spec.splitter not in SPLITTERS:
        raise ValueError(f"FitSpec.splitter must be one of {SPLITTERS}, got {spec.splitter!r}.")
    X, rows = prepare.weighted_rows(spec, X, y, sample_weight)
    built, node_bits, features_with_missing = _grow(spec, X, rows)
    return FitResult(
        tree=finish(spec, built, node_bits, rows), features_with_missing=features_with_missing
    )


def _grow(spec: FitSpec, X: np.ndarray, rows: WeightedRows) -> tuple:
    """Return the builder's result and the features with missing values.

    The presorted or binned columns live only in this call: they are freed before the tree
    is finished, which keeps them out of the fit's peak memory there.
    """
    criterion = multi_output_criterion(spec.criterion, spec.n_outputs)
    switches = grow.search_switches(criterion, bool((spec.cat_slot >= 0).any()))
    if spec.splitter == "hist":
        binned = prepare.binned_columns(spec, X)
        built, node_bits = grow.build_hist(spec, rows, binned, criterion, switches[0])
        return built, node_bits, binned.features_with_missing
    presorted = prepare.presorted_columns(spec, X, rows)
    built, node_bits = grow.build(spec, rows, presorted, criterion, switches)
    return built, node_bits, presorted.features_with_missing
