"""Base classes of the estimators: scikit-learn's estimator API without importing scikit-learn.

Importing ``sklearn.base`` costs most of a second (it pulls in scipy.stats and pandas), more
than ``import dtjit`` + fit + predict on a small data set is allowed in all. So the
estimators do not inherit from scikit-learn's classes at import time. Instead:

- :class:`SklearnEstimator` implements what a plain fit / predict / score session calls:
  ``get_params``, ``set_params`` and ``_validate_params`` with scikit-learn's semantics;
  :class:`ClassifierRole` and :class:`RegressorRole` add ``score``.
- When ``sklearn.base`` is imported, by the user or by a dtjit function that needs it,
  :func:`_adopt_sklearn_bases` makes scikit-learn's classes the bases of these
  classes (``BaseEstimator``, ``ClassifierMixin``, ``RegressorMixin``,
  ``MultiOutputMixin``) and runs the class set-up ``BaseEstimator`` would have run (the
  ``set_fit_request`` / ``set_score_request`` methods of metadata routing). From then on
  every estimator, old or new, is a scikit-learn estimator in every respect (``isinstance``,
  tags, HTML and text repr, clone, pickling), exactly as if it had been defined that way.
- Before that, asking for one of scikit-learn's estimator attributes (``repr``, Jupyter's
  ``_repr_html_``, ``get_metadata_routing``, ...) imports ``sklearn.base`` first.

Classes defined while ``sklearn.base`` is already imported get scikit-learn's bases at once.
"""

from __future__ import annotations

import inspect
import sys
from collections import defaultdict
from typing import Any

from . import _scores
from ._constraints import to_sklearn, validate_parameters
from ._sklearn_link import call_when_imported

SKLEARN_BASE = "sklearn.base"

# scikit-learn's estimator attributes (BaseEstimator and the mixins, release 1.9) that the
# classes below do not define themselves: reading one before scikit-learn is imported
# imports it (_ImportsSklearn). Dunder names are left out: pickle probes __setstate__,
# which must not import anything. tests/test_import_cost.py checks this list against the
# installed scikit-learn.
SKLEARN_ATTRIBUTES = frozenset(
    {
        "_doc_link_module",
        "_doc_link_template",
        "_doc_link_url_param_generator",
        "_get_class_level_metadata_request_values",
        "_get_default_requests",
        "_get_doc_link",
        "_get_fitted_attr_html",
        "_get_metadata_request",
        "_get_params_html",
        "_repr_html_",
        "_repr_html_inner",
        "_repr_mimebundle_",
        "get_metadata_routing",
        "set_fit_request",
        "set_score_request",
    }
)


class _Unadopted:
    """The stand-in base that :func:`_adopt_sklearn_bases` replaces.

    Python only lets ``__bases__`` change between classes of the same memory layout; a
    class deriving from ``object`` alone cannot take a Python class as its base later.
    """


def import_sklearn_base() -> None:
    """Import ``sklearn.base``, which gives the estimator classes scikit-learn's bases."""
    import sklearn.base  # noqa: F401


class SklearnEstimator(_Unadopted):
    """``sklearn.base.BaseEstimator``'s API, with scikit-learn imported only when needed.

    Subclasses declare their parameters as keyword arguments of ``__init__`` (stored
    unchanged) and their constraints in ``_parameter_table`` (:mod:`dtjit._constraints`).
    """

    _parameter_table: dict[str, list] = {}
    # Method arguments scikit-learn's metadata routing must leave out, by method name:
    # written as ``__metadata_request__{method}`` markers once scikit-learn is imported
    # (:func:`_mark_unrouted`).
    _unrouted_arguments: dict[str, tuple[str, ...]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass defined after scikit-learn's import reaches BaseEstimator's own hook
        # (it writes the set_{method}_request methods from the markers): mark it first.
        if SKLEARN_BASE in sys.modules:
            _mark_unrouted(cls)
        super().__init_subclass__(**kwargs)

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """Return the sorted parameter names of ``__init__`` (scikit-learn's rule)."""
        init = cls.__init__
        if init is object.__init__:
            return []
        parameters = [
            p
            for p in inspect.signature(init).parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        ]
        if any(p.kind == p.VAR_POSITIONAL for p in parameters):
            raise RuntimeError(
                f"scikit-learn estimators should always specify their parameters in the "
                f"signature of their __init__ (no varargs). {cls} doesn't follow this "
                f"convention."
            )
        return sorted(p.name for p in parameters)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Get the parameters of this estimator.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of parameters that are estimators, as
            ``<parameter>__<name>``.

        Returns
        -------
        dict
            Parameter names mapped to their values.
        """
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((key + "__" + k, v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> SklearnEstimator:
        """Set the parameters of this estimator.

        Parameters
        ----------
        **params : dict
            Parameter names and values; ``<parameter>__<name>`` sets a parameter of a
            parameter that is an estimator.

        Returns
        -------
        self
            This estimator.

        Raises
        ------
        ValueError
            If a name is not a parameter of this estimator.
        """
        if not params:
            return self
        valid_params = self.get_params(deep=True)
        nested_params: dict[str, dict[str, Any]] = defaultdict(dict)
        for key, value in params.items():
            key, delim, sub_key = key.partition("__")
            if key not in valid_params:
                raise ValueError(
                    f"Invalid parameter {key!r} for estimator {self}. "
                    f"Valid parameters are: {self._get_param_names()!r}."
                )
            if delim:
                nested_params[key][sub_key] = value
            else:
                setattr(self, key, value)
                valid_params[key] = value
        for key, sub_params in nested_params.items():
            valid_params[key].set_params(**sub_params)
        return self

    def _validate_params(self) -> None:
        """Raise scikit-learn's ``InvalidParameterError`` for a parameter out of its table."""
        validate_parameters(self._parameter_table, self.get_params(deep=False), type(self).__name__)

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:  # noqa: N803 (scikit-learn's name)
        import_sklearn_base()
        return super().__repr__(N_CHAR_MAX)

    def __sklearn_tags__(self) -> Any:  # noqa: D105
        if not _is_adopted():
            # Called before scikit-learn was imported: this call chain ran along the old
            # bases, so start it again along scikit-learn's (the subclasses' additions run
            # twice; they only set tags).
            import_sklearn_base()
            return self.__sklearn_tags__()
        return super().__sklearn_tags__()


class MultiOutputRole(_Unadopted):
    """Becomes ``sklearn.base.MultiOutputMixin`` (the ``multi_output`` target tag)."""


class ClassifierRole(_Unadopted):
    """Becomes a subclass of ``sklearn.base.ClassifierMixin``; scores by accuracy."""

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Return the (weighted) accuracy of ``self.predict(X)`` against ``y``.

        The value of :func:`sklearn.metrics.accuracy_score`, which is called for y other
        than a 1-D integer array: with several outputs, subset accuracy for binary
        (multilabel) outputs and an error for multiclass ones, as in scikit-learn.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        float
            Mean accuracy.
        """
        return _scores.accuracy(y, self.predict(X), sample_weight)


class RegressorRole(_Unadopted):
    """Becomes a subclass of ``sklearn.base.RegressorMixin``; scores by R^2."""

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Return the coefficient of determination R^2 of ``self.predict(X)``.

        The value of :func:`sklearn.metrics.r2_score` (``multioutput="uniform_average"``):
        ``1 - u / v`` with ``u`` the residual and ``v`` the total (weighted) sum of squares.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True values.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        float
            R^2 of the predictions.
        """
        return _scores.r2(y, self.predict(X), sample_weight)


class _ImportsSklearn:
    """Stands for scikit-learn's attribute of its name until ``sklearn.base`` is imported.

    Reading it imports ``sklearn.base``, whose adoption of the bases deletes these
    stand-ins; the read then finds scikit-learn's attribute. (Not ``__getattr__``: Python
    calls that when a property raises ``AttributeError``, and it would hide the
    ``NotFittedError`` of ``feature_importances_``.)
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type) -> Any:
        import_sklearn_base()
        return getattr(owner if instance is None else instance, self.name)


for _name in SKLEARN_ATTRIBUTES:
    setattr(SklearnEstimator, _name, _ImportsSklearn(_name))


class _ParameterConstraints:
    """``_parameter_constraints``: a class's ``_parameter_table`` in scikit-learn's objects.

    Built on demand (it imports scikit-learn) for the tools that read scikit-learn's name.
    """

    def __get__(self, instance: Any, owner: type) -> dict[str, list]:
        return to_sklearn(owner._parameter_table)


SklearnEstimator._parameter_constraints = _ParameterConstraints()


def _is_adopted() -> bool:
    return SklearnEstimator.__bases__ != (_Unadopted,)


def _subclasses_parents_first(cls: type) -> list[type]:
    """Return every subclass of ``cls`` (itself included), each after its bases."""
    order: list[type] = []
    pending = [cls]
    while pending:
        klass = pending.pop(0)
        if klass not in order:
            order.append(klass)
            pending.extend(klass.__subclasses__())
    return order


def _adopt_sklearn_bases(sklearn_base: Any) -> None:
    """Give the classes above scikit-learn's bases (see the module docstring)."""
    from sklearn.utils._metadata_requests import _MetadataRequester

    SklearnEstimator.__bases__ = (sklearn_base.BaseEstimator,)
    MultiOutputRole.__bases__ = (sklearn_base.MultiOutputMixin,)
    ClassifierRole.__bases__ = (sklearn_base.ClassifierMixin,)
    RegressorRole.__bases__ = (sklearn_base.RegressorMixin,)
    for name in SKLEARN_ATTRIBUTES:
        if isinstance(vars(SklearnEstimator).get(name), _ImportsSklearn):
            delattr(SklearnEstimator, name)
    # BaseEstimator's __init_subclass__ (from _MetadataRequester) writes each subclass's
    # set_{method}_request methods when the subclass is defined; these classes were defined
    # before it was their base.
    set_up = _MetadataRequester.__dict__["__init_subclass__"].__func__
    for cls in _subclasses_parents_first(SklearnEstimator):
        _mark_unrouted(cls)
        set_up(cls)


def _mark_unrouted(cls: type) -> None:
    """Write ``cls._unrouted_arguments`` as scikit-learn's ``__metadata_request__*`` markers.

    The marker is scikit-learn's ``UNUSED`` object itself: routing tests it by identity.
    """
    from sklearn.utils.metadata_routing import UNUSED

    for method, arguments in vars(cls).get("_unrouted_arguments", {}).items():
        setattr(cls, f"__metadata_request__{method}", dict.fromkeys(arguments, UNUSED))


call_when_imported(SKLEARN_BASE, _adopt_sklearn_bases)
