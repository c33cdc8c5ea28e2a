"""Parameter constraints in scikit-learn's vocabulary, checked without importing scikit-learn.

A constraint table maps each parameter to a list of constraints, any one of which the value
must satisfy: an :class:`Interval`, :class:`StrOptions`, ``None``, a type, or one of the
strings ``"boolean"``, ``"random_state"``, ``"array-like"``. Each constraint here accepts
exactly the values scikit-learn's namesake (``sklearn.utils._param_validation``, release
1.9) accepts, so a valid configuration is checked in microseconds with no scikit-learn
import. A value no constraint accepts is handed to scikit-learn's own validation, which
raises its ``InvalidParameterError`` with its usual message: the error path may pay for
the import, the fitting path does not. :func:`to_sklearn` translates a table for tools that
read ``_parameter_constraints`` (scikit-learn's parameter-validation checks).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind within bounds, as ``sklearn.utils._param_validation.Interval``.

    Parameters
    ----------
    kind : {"int", "real", "real_not_int"}
        ``"int"``: ``numbers.Integral`` (bool included, as in scikit-learn); ``"real"``:
        ``numbers.Real``; ``"real_not_int"``: scikit-learn's ``RealNotInt``, which only
        ``float`` and its subclasses (``np.float64``) satisfy.
    left, right : int, float or None
        Bounds; ``None`` is unbounded.
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    """

    kind: str
    left: float | None
    right: float | None
    closed: str

    def accepts(self, value: Any) -> bool:
        """Return whether ``value`` is of the kind and inside the bounds."""
        if self.kind == "int":
            if not isinstance(value, numbers.Integral):
                return False
        elif self.kind == "real":
            if not isinstance(value, numbers.Real):
                return False
        elif not isinstance(value, float):
            return False
        if not isinstance(value, numbers.Integral) and math.isnan(value):
            return False
        # A missing bound is an infinite one, open or closed as ``closed`` says (so
        # closed="left" with no right bound rejects +inf, as scikit-learn does).
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        if value < left or (value == left and self.closed in ("right", "neither")):
            return False
        return not (value > right or (value == right and self.closed in ("left", "neither")))

    def to_sklearn(self) -> Any:
        """Return the equivalent scikit-learn ``Interval``."""
        from sklearn.utils._param_validation import Interval as SklearnInterval
        from sklearn.utils._param_validation import RealNotInt

        kind = {"int": numbers.Integral, "real": numbers.Real, "real_not_int": RealNotInt}
        return SklearnInterval(kind[self.kind], self.left, self.right, closed=self.closed)


@dataclass(frozen=True)
class StrOptions:
    """One of a set of strings, as ``sklearn.utils._param_validation.StrOptions``."""

    options: frozenset[str]

    def accepts(self, value: Any) -> bool:
        """Return whether ``value`` is one of the strings."""
        return isinstance(value, str) and value in self.options

    def to_sklearn(self) -> Any:
        """Return the equivalent scikit-learn ``StrOptions`` (it wants a ``set``)."""
        from sklearn.utils._param_validation import StrOptions as SklearnStrOptions

        return SklearnStrOptions(set(self.options))


# The seeds scikit-learn's "random_state" constraint accepts (besides None and RandomState).
_SEEDS = Interval("int", 0, 2**32 - 1, "both")


def _is_array_like(value: Any) -> bool:
    """scikit-learn's ``_is_arraylike_not_scalar``: has a length, shape or array interface.

    Scalars (``np.isscalar``: str, numbers, numpy scalars) and sparse matrices are not.
    """
    if np.isscalar(value) or sparse.issparse(value):
        return False
    return hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")


def _accepts(constraint: Any, value: Any) -> bool:
    """Return whether one constraint of a table accepts ``value``."""
    if constraint is None:
        return value is None
    if isinstance(constraint, (Interval, StrOptions)):
        return constraint.accepts(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "random_state":
        return value is None or isinstance(value, np.random.RandomState) or _SEEDS.accepts(value)
    if constraint == "array-like":
        return _is_array_like(value)
    raise ValueError(f"Unknown parameter constraint {constraint!r}.")


def validate_parameters(table: dict[str, list], params: dict[str, Any], caller: str) -> None:
    """Raise scikit-learn's ``InvalidParameterError`` if a parameter breaks its constraints.

    Parameters
    ----------
    table : dict
        Parameter name to list of constraints (module docstring).
    params : dict
        Parameter name to value; names missing from ``table`` are not checked.
    caller : str
        The estimator's class name, for the message.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        A ``ValueError`` and ``TypeError``, raised by scikit-learn's own validation (imported
        only then) so that its type and message are the usual ones.
    """
    for name, value in params.items():
        constraints = table.get(name)
        if constraints is not None and not any(_accepts(c, value) for c in constraints):
            from sklearn.utils._param_validation import validate_parameter_constraints

            validate_parameter_constraints(to_sklearn(table), params, caller_name=caller)
            return  # scikit-learn accepted it after all: its verdict stands


def to_sklearn(table: dict[str, list]) -> dict[str, list]:
    """Return ``table`` with scikit-learn's constraint objects (imports scikit-learn)."""
    return {
        name: [c.to_sklearn() if isinstance(c, (Interval, StrOptions)) else c for c in constraints]
        for name, constraints in table.items()
    }
