"""Parameter checks and conversions that scikit-learn's validation does not provide.

scikit-learn's ``_parameter_constraints`` check a parameter's type and range, and its
``compute_sample_weight`` applies ``class_weight`` as given. Two things are left to us:

- :func:`kernel_count`: an integer parameter may be any Python int, but the compiled
  kernels take int64;
- :func:`check_class_weight_values`: ``compute_sample_weight`` accepts negative and
  infinite class weights, which would fit negative probabilities or overflow every sum.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

# Above every count of rows, nodes or depth a fit can have, and twice it still fits int64.
COUNT_CAP = 2**61


def kernel_count(value: numbers.Integral, cap: int = COUNT_CAP) -> int:
    """Return an integer parameter as a Python int of at most ``cap``.

    Parameters such as ``max_depth`` or ``min_samples_leaf`` accept any int; past the number
    of rows every larger value means the same. Capping keeps the value an int64 for the
    kernels: 2**63 would compile a uint64 copy of the builder, and 2**64 fail numba's typing.

    Parameters
    ----------
    value : int
        A validated integer parameter (numpy integers included).
    cap : int, default=COUNT_CAP
        The largest value returned.

    Returns
    -------
    int
        ``min(int(value), cap)``.
    """
    return min(int(value), cap)


def check_class_weight_values(class_weight: Any) -> None:
    """Raise ``ValueError`` unless every weight a ``class_weight`` dict gives is finite and >= 0.

    ``sample_weight`` gets the same check from scikit-learn's ``_check_sample_weight``. A list
    (one dict per output) is checked output by output, before the outputs' weights are
    multiplied (two negative weights would multiply to a positive one). Values that are not
    numbers are left to scikit-learn's ``compute_sample_weight``.

    Parameters
    ----------
    class_weight : dict, list of dict, str or None
        The estimator's ``class_weight`` parameter.

    Raises
    ------
    ValueError
        Naming the class (and output) whose weight is negative, infinite or NaN.
    """
    per_output = class_weight if isinstance(class_weight, list) else [class_weight]
    for k, weights in enumerate(per_output):
        if not isinstance(weights, dict):
            continue
        for label, weight in weights.items():
            if isinstance(weight, numbers.Real) and not (np.isfinite(weight) and weight >= 0):
                if len(per_output) > 1:
                    where = f"output {k} gives class {label!r}"
                else:
                    where = f"class {label!r} gets"
                raise ValueError(
                    f"class_weight must be finite and non-negative; {where} the weight "
                    f"{float(weight)!r}."
                )
