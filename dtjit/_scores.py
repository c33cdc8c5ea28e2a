"""``score`` of the estimators: scikit-learn's accuracy and R^2, without importing scikit-learn.

For plain numpy inputs (1-D integer labels; numeric, finite regression targets; finite
weights) the value is computed here with the same numpy operations, in the same order, as
:func:`sklearn.metrics.accuracy_score` and :func:`sklearn.metrics.r2_score` (release 1.9),
so it is the same float. Anything else (lists, pandas, string or float labels, several
classification outputs, NaN, degenerate weights, fewer than two regression samples) is
passed to scikit-learn itself, which gives its usual result, warning or error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_INTEGER_KINDS = "biu"
_NUMERIC_KINDS = "biuf"
_WEIGHT_KINDS = "iuf"


def _is_plain_weights(sample_weight: Any, n_samples: int) -> bool:
    """Whether scikit-learn would take ``sample_weight`` unchanged: None or a usable 1-D array."""
    if sample_weight is None:
        return True
    return (
        type(sample_weight) is np.ndarray
        and sample_weight.ndim == 1
        and sample_weight.shape[0] == n_samples
        and sample_weight.dtype.kind in _WEIGHT_KINDS
        and bool(np.isfinite(sample_weight).all())
        and bool(sample_weight.sum() != 0)
        and bool(np.any(sample_weight != 0))
    )


def accuracy(y_true: Any, y_pred: np.ndarray, sample_weight: Any = None) -> float:
    """Return :func:`sklearn.metrics.accuracy_score` of ``y_pred`` against ``y_true``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True labels.
    y_pred : ndarray
        Predicted labels.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    float
        The (weighted) fraction of correct predictions.
    """
    if (
        type(y_true) is np.ndarray
        and y_true.ndim == 1
        and y_pred.ndim == 1
        and y_true.dtype.kind in _INTEGER_KINDS
        and y_pred.dtype.kind in _INTEGER_KINDS
        and 0 < y_true.shape[0] == y_pred.shape[0]
        and _is_plain_weights(sample_weight, y_true.shape[0])
    ):
        # Integer labels are "binary" or "multiclass" for scikit-learn: it compares them
        # as they are and averages the matches.
        return float(np.average(y_true == y_pred, weights=sample_weight))
    from sklearn.metrics import accuracy_score

    return accuracy_score(y_true, y_pred, sample_weight=sample_weight)


def r2(y_true: Any, y_pred: np.ndarray, sample_weight: Any = None) -> float:
    """Return :func:`sklearn.metrics.r2_score` of ``y_pred`` (float64) against ``y_true``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True values.
    y_pred : ndarray of float64
        Predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    float
        R^2, averaged uniformly over outputs; 1.0 for a perfect prediction and 0.0 for an
        imperfect one of a constant target (scikit-learn's ``force_finite``).
    """
    if (
        type(y_true) is np.ndarray
        and y_true.ndim in (1, 2)
        and y_true.dtype.kind in _NUMERIC_KINDS
        and y_pred.dtype == np.float64
        and y_true.shape[0] == y_pred.shape[0] >= 2
        and bool(np.isfinite(y_true).all())
        and _is_plain_weights(sample_weight, y_true.shape[0])
    ):
        truth = y_true.astype(np.float64).reshape(y_true.shape[0], -1)
        pred = y_pred.reshape(y_pred.shape[0], -1)
        if truth.shape[1] == pred.shape[1]:
            return _r2_of_columns(truth, pred, sample_weight)
    from sklearn.metrics import r2_score

    return r2_score(y_true, y_pred, sample_weight=sample_weight)


def _r2_of_columns(truth: np.ndarray, pred: np.ndarray, sample_weight: Any) -> float:
    """scikit-learn's R^2 arithmetic on validated 2-D float64 arrays, step for step."""
    if sample_weight is not None:
        sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        weight = sample_weight[:, None]
    else:
        weight = 1.0
    numerator = np.sum(weight * (truth - pred) ** 2, axis=0)
    mean = np.average(truth, axis=0, weights=sample_weight)
    denominator = np.sum(weight * (truth - mean) ** 2, axis=0)
    nonzero_numerator = numerator != 0
    nonzero_denominator = denominator != 0
    scores = np.ones(truth.shape[1], dtype=numerator.dtype)
    valid = nonzero_denominator & nonzero_numerator
    scores[valid] = 1 - (numerator[valid] / denominator[valid])
    scores[nonzero_numerator & ~nonzero_denominator] = 0.0
    return float(np.average(scores))
