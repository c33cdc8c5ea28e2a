"""``dtjit.save`` / ``dtjit.load``: estimators as ``.npz`` arrays plus a JSON header, no pickle."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted as check_fitted

from . import __version__
from ._estimators import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor
from ._threads import resolve_n_jobs
from ._tree import (
    FORMAT_NAME,
    FORMAT_VERSION,
    TreeFormatError,
    read_model_file,
    tree_from_arrays,
    write_model_file,
)

CLASS_WEIGHT_PAIRS = "__pairs__"
CATEGORY_TYPES = (str, int, float, bool)  # the category values a model file can hold
ESTIMATORS = {cls.__name__: cls for cls in (DecisionTreeClassifier, DecisionTreeRegressor)}


def save(model: BaseDecisionTree, path: str | os.PathLike) -> None:
    """Save a fitted dtjit estimator to ``path`` (an ``.npz`` file).

    The file holds the tree's arrays and a JSON header (format version, estimator class,
    parameters, classes, feature names). A ``random_state`` given as a ``RandomState``
    instance is saved as ``None`` (its draws are already spent on the fitted tree). Nothing
    is pickled, so loading a file can never run code. The file is written under a temporary
    name and renamed, so a failure leaves no half-written model.

    Parameters
    ----------
    model : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted estimator.
    path : str or path-like
        Destination file.

    Raises
    ------
    TypeError
        If ``model`` is not a dtjit estimator.
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    ValueError
        If ``model.n_jobs`` is 0 (no thread count: it was set after fitting).
    """
    if not isinstance(model, BaseDecisionTree):
        raise TypeError(f"dtjit.save expects a dtjit estimator, got {type(model).__name__}.")
    check_fitted(model, "tree_")
    resolve_n_jobs(model.n_jobs)  # set_params(n_jobs=0) after fit: load would refuse the file
    tree = model.tree_
    params = {name: _jsonable(value) for name, value in model.get_params(deep=False).items()}
    header: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "dtjit_version": __version__,
        "estimator": type(model).__name__,
        "params": params,
        "n_features": tree.n_features,
        "n_classes": [int(c) for c in tree.n_classes],
        "max_features_": int(model.max_features_),
        "features_with_missing": [int(f) for f in np.flatnonzero(model.features_with_missing_)],
        "feature_names_in": (
            [str(n) for n in model.feature_names_in_]
            if hasattr(model, "feature_names_in_")
            else None
        ),
    }
    header["categorical"] = _categorical_header(model)
    arrays = {**tree.to_arrays(), **tree.categorical_arrays(), **tree.optional_arrays()}
    if hasattr(model, "classes_"):
        # One output: member "classes"; several: "classes_0", "classes_1", ... (one per
        # output, each with its own dtype).
        one_output = model.n_outputs_ == 1
        per_output = [model.classes_] if one_output else model.classes_
        dtypes = []
        for o, labels in enumerate(per_output):
            classes = np.asarray(labels)
            dtypes.append("object" if classes.dtype == object else None)
            if classes.dtype == object:
                classes = classes.astype(str)
            arrays["classes" if one_output else f"classes_{o}"] = classes
        header["classes_dtype"] = dtypes[0] if one_output else dtypes
    write_model_file(path, header, arrays)


def load(path: str | os.PathLike) -> BaseDecisionTree:
    """Load an estimator saved by :func:`save`, validating every array first.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`dtjit.save`.

    Returns
    -------
    DecisionTreeClassifier or DecisionTreeRegressor
        A fitted estimator, ready to predict.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    TreeFormatError
        (a ``ValueError``) if the file is corrupted, crafted, or of another format version:
        every index is checked before any compiled code sees the tree.
    """
    header, arrays = read_model_file(path)
    try:
        return _model_from(header, arrays)
    except TreeFormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        # Each header entry is checked below; this catches a crafted combination none of
        # those checks foresaw, so that a bad file never surfaces as another exception type.
        raise TreeFormatError(f"Model file header is malformed: {exc!r}") from exc


def _model_from(header: dict, arrays: dict[str, np.ndarray]) -> BaseDecisionTree:
    """Build the estimator of a model file's header and arrays, checking each entry."""
    name = header.get("estimator")
    if not isinstance(name, str) or name not in ESTIMATORS:
        raise TreeFormatError(f"Unknown estimator {name!r} in model file.")
    params = header.get("params")
    if not isinstance(params, dict):
        raise TreeFormatError("Model file header has no parameter table.")
    params = {k: _from_json(v) for k, v in params.items()}
    cls = ESTIMATORS[name]
    try:
        model = cls(**params)
        model._validate_params()
        resolve_n_jobs(model.n_jobs)  # n_jobs=0 passes the type check, and every predict fails
    except (TypeError, ValueError) as exc:
        raise TreeFormatError(f"Model file parameters do not fit {name}: {exc}") from exc
    tree = tree_from_arrays(header.get("n_features"), header.get("n_classes"), arrays)
    if cls is DecisionTreeClassifier:
        _restore_classes(model, tree, header, arrays)
    elif tree.max_n_classes != 1:
        raise TreeFormatError("A regression tree must have one value column.")
    names = header.get("feature_names_in")
    if names is not None:
        if (
            not isinstance(names, list)
            or len(names) != tree.n_features
            or not all(isinstance(n, str) for n in names)
        ):
            raise TreeFormatError("Model file's feature names do not match n_features.")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    max_features = header.get("max_features_")
    if not isinstance(max_features, int) or max_features < 1:  # above n_features: all
        raise TreeFormatError(f"Invalid max_features_ {max_features!r} in model file.")
    model.max_features_ = max_features
    with_missing = header.get("features_with_missing", [])  # absent in files before NaN support
    if not isinstance(with_missing, list) or not all(
        _is_int(f) and 0 <= f < tree.n_features for f in with_missing
    ):
        raise TreeFormatError(f"Invalid features_with_missing {with_missing!r} in model file.")
    model.features_with_missing_ = np.zeros(tree.n_features, dtype=bool)
    model.features_with_missing_[with_missing] = True
    _restore_categorical(model, header.get("categorical"), tree.n_features)
    model.n_features_in_ = tree.n_features
    model.n_outputs_ = tree.n_outputs
    model.tree_ = tree
    return model


def _restore_classes(
    model: BaseDecisionTree, tree: Any, header: dict, arrays: dict[str, np.ndarray]
) -> None:
    """Set ``classes_`` and ``n_classes_`` from the file, checked against the tree."""
    n_outputs = tree.n_outputs
    names = ["classes"] if n_outputs == 1 else [f"classes_{o}" for o in range(n_outputs)]
    dtypes = header.get("classes_dtype")
    dtypes = [dtypes] if n_outputs == 1 else dtypes
    if not isinstance(dtypes, list) or len(dtypes) != n_outputs:
        raise TreeFormatError("Model file's classes_dtype does not match the tree's outputs.")
    per_output = []
    for name, n_classes, dtype in zip(names, tree.n_classes, dtypes, strict=True):
        classes = arrays.get(name)
        if classes is None or classes.ndim != 1 or classes.shape[0] != n_classes:
            raise TreeFormatError("Model file's classes do not match the tree's value array.")
        if dtype == "object":
            classes = classes.astype(object)  # labels were Python strings at fit time
        per_output.append(classes)
    _check_class_fractions(tree)
    if n_outputs == 1:
        model.classes_ = per_output[0]
        model.n_classes_ = int(per_output[0].shape[0])
    else:
        model.classes_ = per_output
        model.n_classes_ = np.array([len(c) for c in per_output], dtype=np.intp)


# A classifier's value rows are class fractions; the estimator's own sum to 1 within 1e-13.
FRACTION_SUM_TOLERANCE = 1e-9


def _check_class_fractions(tree: Any) -> None:
    """Check that each node's value row of each output holds class fractions.

    Fractions are non-negative, sum to 1, and the padding columns of an output with fewer
    classes than the widest one are 0: ``predict_proba`` returns these rows as they are.
    """
    value = tree.value
    for output, n_classes in enumerate(tree.n_classes):
        rows = value[:, output, :]
        negative = np.flatnonzero((rows < 0).any(axis=1))
        off = np.flatnonzero(np.abs(rows[:, :n_classes].sum(axis=1) - 1.0) > FRACTION_SUM_TOLERANCE)
        padded = np.flatnonzero((rows[:, n_classes:] != 0).any(axis=1))
        for nodes, what in (
            (negative, "a negative class fraction"),
            (off, "class fractions that do not sum to 1"),
            (padded, f"a non-zero fraction past its output's {n_classes} classes"),
        ):
            if nodes.size:
                raise TreeFormatError(
                    f"Invalid tree at node {int(nodes[0])}: output {output} has {what}."
                )


def _categorical_header(model: BaseDecisionTree) -> dict[str, Any]:
    """Return the categorical columns and their categories as JSON (str/int/float/bool)."""
    features = getattr(model, "categorical_features_", np.zeros(0, dtype=np.int64))
    categories = []
    for cats in getattr(model, "categories_", []):
        values = [v.item() if isinstance(v, np.generic) else v for v in cats]
        if not all(isinstance(v, CATEGORY_TYPES) for v in values):
            raise TypeError(
                "Only str, int, float or bool category values can be saved; got "
                f"{sorted({type(v).__name__ for v in values})}."
            )
        categories.append(values)
    return {
        "features": [int(f) for f in features],
        "categories": categories,
        "from_values": [bool(v) for v in getattr(model, "categories_from_values_", [])],
    }


def _restore_categorical(model: BaseDecisionTree, entry: Any, n_features: int) -> None:
    """Set the categorical attributes from a header entry (absent in older files: none)."""
    if entry is None:
        entry = {"features": [], "categories": [], "from_values": []}
    try:
        features, categories, from_values = (
            entry["features"], entry["categories"], entry["from_values"]
        )  # fmt: skip
        valid = (
            isinstance(features, list)
            and all(_is_int(f) and 0 <= f < n_features for f in features)
            and features == sorted(set(features))
            and len(categories) == len(from_values) == len(features)
            and all(isinstance(c, list) for c in categories)
            and all(isinstance(v, bool) for v in from_values)
            # an integer column's categories are ints; a mapped column's, what save() writes
            and all(
                all(isinstance(v, CATEGORY_TYPES) if mapped else _is_int(v) for v in c)
                for c, mapped in zip(categories, from_values, strict=True)
            )
        )
    except (KeyError, TypeError) as exc:
        raise TreeFormatError(f"Model file has a malformed categorical entry: {exc}") from exc
    if not valid:
        raise TreeFormatError("Model file has a malformed categorical entry.")
    model.categorical_features_ = np.asarray(features, dtype=np.int64).reshape(-1)
    model.categories_ = [
        np.asarray(c, dtype=object) if mapped else np.asarray(c, dtype=np.int64)
        for c, mapped in zip(categories, from_values, strict=True)
    ]
    model.categories_from_values_ = list(from_values)


def _from_json(value: Any) -> Any:
    """Undo :func:`_jsonable` for a parameter value."""
    if isinstance(value, dict) and set(value) == {CLASS_WEIGHT_PAIRS}:
        pairs = value[CLASS_WEIGHT_PAIRS]
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], (str, int, float))
            for p in pairs
        ):
            raise TreeFormatError("Model file has a malformed class_weight.")
        return {k: w for k, w in pairs}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def _is_int(value: Any) -> bool:
    """Tell whether ``value`` is a JSON integer (``bool`` is an ``int`` subclass, not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _jsonable(value: Any) -> Any:
    """Parameters as JSON: numbers, strings, None; dict keys and random states simplified."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        # class_weight: keyed by class labels, which JSON objects would turn into strings.
        # Stored as [label, weight] pairs so labels keep their type.
        return {CLASS_WEIGHT_PAIRS: [[_jsonable(k), _jsonable(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    # A RandomState instance cannot be written as JSON; its draws are already spent on the
    # fitted tree. The loaded estimator gets random_state=None (documented in save()).
    return None
