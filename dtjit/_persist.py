"""The model file: ``dtjit.save`` / ``dtjit.load``, the format, its limits and every check.

This module owns the format (``docs/model-file.md`` states it): an uncompressed ``.npz``
archive of the tree's arrays (:data:`dtjit._tree.NODE_ARRAYS` and the optional ones), the
classes, and a JSON ``header``. Nothing is pickled. A file is untrusted input: every member
and header field is checked here, and every array by :func:`dtjit._tree.check_tree`, before
any compiled code sees the tree; any failure is a :class:`TreeFormatError` naming the member
or field and the problem. Every size the header declares is bounded by what the arrays show
or by the limits below, so no call on a loaded model allocates beyond what its file holds.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import zipfile
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted as check_fitted

from . import __version__
from ._atomic import atomic_output
from ._estimators import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor
from ._tree import (
    CATEGORICAL_ARRAYS,
    MISSING_LEARNED,
    NODE_ARRAYS,
    Tree,
    TreeFormatError,
)
from .engine.jit import TREE_LEAF
from .engine.sweep_categorical import MAX_CATEGORIES
from .engine.threads import resolve_n_jobs

FORMAT_NAME = "dtjit-model"
# Bumped whenever a reader of the old version would misread a new file; a reader refuses
# every version but its own. Optional members added since version 1 (categorical arrays,
# missing_learned, features_with_missing, categorical) are read as absent in older files.
FORMAT_VERSION = 1

# Limits of a model file (docs/model-file.md). A loaded model's exports, importances and
# predictions allocate in proportion to these and to the file's own arrays.
MAX_N_FEATURES = 2**20
MAX_CATEGORY_WORDS = math.ceil(MAX_CATEGORIES / 64)  # uint64 words per category bitset
MAX_HEADER_DEPTH = 16  # JSON nesting; dtjit writes at most 5 levels

# Members a model file may hold; anything else in the archive is ignored unread.
KNOWN_MEMBERS = (
    frozenset(NODE_ARRAYS) | frozenset(CATEGORICAL_ARRAYS) | {MISSING_LEARNED, "header", "classes"}
)
# A multi-output classifier stores its labels per output: classes_0, classes_1, ...
OUTPUT_CLASSES_MEMBER = re.compile(r"classes_[0-9]{1,6}")
# dtype kinds a classes member may have: bool, integers, floats, unicode strings.
CLASS_KINDS = frozenset("biufU")

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
        If ``model`` is not a dtjit estimator, or its class labels or categories are of a
        type a model file cannot hold.
    ValueError
        If the model has more than ``MAX_N_FEATURES`` (2**20) features.
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
        Also if ``model.n_jobs`` is 0 (no thread count: it was set after fitting).
    OSError
        If ``path`` cannot be written (the error names ``path``).
    """
    if not isinstance(model, BaseDecisionTree):
        raise TypeError(f"dtjit.save expects a dtjit estimator, got {type(model).__name__}.")
    check_fitted(model, "tree_")
    resolve_n_jobs(model.n_jobs)  # set_params(n_jobs=0) after fit: load would refuse the file
    tree = model.tree_
    if tree.n_features > MAX_N_FEATURES:  # load would refuse the file
        raise ValueError(
            f"A model file holds at most {MAX_N_FEATURES} features; this model has "
            f"{tree.n_features}."
        )
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
            if classes.dtype.kind not in CLASS_KINDS:  # load would refuse the file
                raise TypeError(f"Class labels of dtype {classes.dtype} cannot be saved.")
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
        every index is checked before any compiled code sees the tree. The message names
        the file, the member or header field, and the problem (docs/model-file.md lists
        every check).
    """
    header, arrays = read_model_file(path)
    try:
        return _model_from(header, arrays)
    except TreeFormatError as exc:
        raise TreeFormatError(f"{os.fspath(path)!r}: {exc}") from exc
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        # Each header entry is checked below; this catches a crafted combination none of
        # those checks foresaw, so that a bad file never surfaces as another exception type.
        raise TreeFormatError(
            f"{os.fspath(path)!r}: header is malformed: {type(exc).__name__}: {exc}"
        ) from exc


def _model_from(header: dict, arrays: dict[str, np.ndarray]) -> BaseDecisionTree:
    """Build the estimator of a model file's header and arrays, checking each entry."""
    name = header.get("estimator")
    if not isinstance(name, str) or name not in ESTIMATORS:
        raise TreeFormatError(
            f"header field 'estimator': Unknown estimator {_short(name)} in model file."
        )
    params = header.get("params")
    if not isinstance(params, dict):
        raise TreeFormatError("header field 'params': model file header has no parameter table.")
    params = {k: _from_json(v) for k, v in params.items()}
    cls = ESTIMATORS[name]
    try:
        model = cls(**params)
        model._validate_params()
        resolve_n_jobs(model.n_jobs)  # n_jobs=0 passes the type check, and every predict fails
    except (TypeError, ValueError) as exc:
        raise TreeFormatError(
            f"header field 'params': Model file parameters do not fit {name}: {exc}"
        ) from exc
    tree = tree_from_arrays(header.get("n_features"), header.get("n_classes"), arrays)
    if cls is DecisionTreeClassifier:
        _restore_classes(model, tree, header, arrays)
    elif tree.max_n_classes != 1:
        raise TreeFormatError("member 'value': a regression tree must have one value column.")
    names = header.get("feature_names_in")
    if names is not None:
        if (
            not isinstance(names, list)
            or len(names) != tree.n_features
            or not all(isinstance(n, str) for n in names)
        ):
            raise TreeFormatError(
                "header field 'feature_names_in': Model file's feature names do not match "
                "n_features."
            )
        model.feature_names_in_ = np.asarray(names, dtype=object)
    max_features = header.get("max_features_")
    if not isinstance(max_features, int) or max_features < 1:  # above n_features: all
        raise TreeFormatError(
            f"header field 'max_features_': Invalid max_features_ {_short(max_features)} "
            "in model file."
        )
    model.max_features_ = max_features
    with_missing = header.get("features_with_missing", [])  # absent in files before NaN support
    if (
        not isinstance(with_missing, list)
        or len(with_missing) > tree.n_features
        or not all(_is_int(f) and 0 <= f < tree.n_features for f in with_missing)
    ):
        raise TreeFormatError(
            f"header field 'features_with_missing': Invalid features_with_missing "
            f"{_short(with_missing)}: expected a list of feature indices in [0, {tree.n_features})."
        )
    model.features_with_missing_ = np.zeros(tree.n_features, dtype=bool)
    model.features_with_missing_[with_missing] = True
    _restore_categorical(model, header.get("categorical"), tree)
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
    if (
        not isinstance(dtypes, list)
        or len(dtypes) != n_outputs
        or not all(d in (None, "object") for d in dtypes)
    ):
        raise TreeFormatError(
            "header field 'classes_dtype': must be None or 'object' for each of the tree's "
            f"{n_outputs} outputs."
        )
    per_output = []
    for name, n_classes, dtype in zip(names, tree.n_classes, dtypes, strict=True):
        classes = arrays.get(name)
        if classes is None or classes.ndim != 1 or classes.shape[0] != n_classes:
            raise TreeFormatError(
                f"member {name!r}: classes do not match the tree's value array "
                f"(expected {n_classes} labels)."
            )
        _check_classes(name, classes, sorted_=dtype != "object")
        if dtype == "object":
            classes = classes.astype(object)  # labels were Python strings at fit time
        per_output.append(classes)
    for name, classes in zip(names[1:], per_output[1:], strict=True):
        # fit takes every output's labels from the columns of one y array: one dtype (and
        # predict writes all outputs into one array of output 0's dtype)
        if classes.dtype != per_output[0].dtype:
            raise TreeFormatError(
                f"member {name!r}: labels of dtype {classes.dtype}, but output 0's are "
                f"{per_output[0].dtype}; all outputs share one dtype."
            )
    _check_class_fractions(tree)
    if n_outputs == 1:
        model.classes_ = per_output[0]
        model.n_classes_ = int(per_output[0].shape[0])
    else:
        model.classes_ = per_output
        model.n_classes_ = np.array([len(c) for c in per_output], dtype=np.intp)


def _check_classes(name: str, classes: np.ndarray, sorted_: bool) -> None:
    """Check a classes member: a supported dtype, finite, unique, and sorted as fit sorts.

    Labels that were Python objects at fit time (``classes_dtype`` "object") are stored as
    their ``str``; fit sorted the objects, not the strings, so only uniqueness is checked.
    """
    if classes.dtype.kind not in CLASS_KINDS:
        raise TreeFormatError(
            f"member {name!r}: labels of dtype {classes.dtype} are not supported "
            "(bool, integer, float or str)."
        )
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        raise TreeFormatError(f"member {name!r}: labels must be finite.")
    if sorted_:
        if not (classes[1:] > classes[:-1]).all():
            raise TreeFormatError(f"member {name!r}: labels must be unique and sorted.")
    elif np.unique(classes).shape[0] != classes.shape[0]:
        raise TreeFormatError(f"member {name!r}: labels must be unique.")


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
                    f"member 'value': invalid tree at node {int(nodes[0])}: output {output} "
                    f"has {what}."
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


def _restore_categorical(model: BaseDecisionTree, entry: Any, tree: Tree) -> None:
    """Set the categorical attributes from a header entry (absent in older files: none).

    Checked: sorted unique column indices in range; per column at most ``MAX_CATEGORIES``
    categories, without duplicates (``1``, ``1.0`` and ``True`` are one pandas key), integer
    codes in ``[0, MAX_CATEGORIES)`` ascending, finite floats; and the tree's
    categorical splits are exactly its splits on the columns listed here.
    """
    field = "header field 'categorical'"
    if entry is None:
        entry = {"features": [], "categories": [], "from_values": []}
    if not isinstance(entry, dict) or set(entry) != {"features", "categories", "from_values"}:
        raise _malformed(field, "must hold exactly features, categories, from_values.")
    features, categories, from_values = (
        entry["features"], entry["categories"], entry["from_values"]
    )  # fmt: skip
    if not (
        isinstance(features, list)
        and all(_is_int(f) and 0 <= f < tree.n_features for f in features)
        and features == sorted(set(features))
    ):
        raise _malformed(
            field, f"features must be ascending unique indices in [0, {tree.n_features})."
        )
    if not (
        isinstance(categories, list)
        and isinstance(from_values, list)
        and len(categories) == len(from_values) == len(features)
        and all(isinstance(c, list) for c in categories)
        and all(isinstance(v, bool) for v in from_values)
    ):
        raise _malformed(field, "one category list and one from_values flag per feature.")
    for f, values, mapped in zip(features, categories, from_values, strict=True):
        _check_categories(f"{field}, feature {f}", values, mapped)
    declared = np.asarray(features, dtype=np.int64)
    is_split = tree.left != TREE_LEAF
    subset = np.unique(tree.feature[is_split & (tree.categorical_set >= 0)])
    undeclared = np.setdiff1d(subset, declared)
    if undeclared.size:
        raise TreeFormatError(
            f"member 'categorical_set': a categorical split on feature {int(undeclared[0])}, "
            "which the header does not mark as categorical."
        )
    threshold = np.unique(tree.feature[is_split & (tree.categorical_set < 0)])
    on_codes = np.intersect1d(threshold, declared)
    if on_codes.size:  # fit splits a categorical column by subsets only
        raise TreeFormatError(
            f"member 'categorical_set': a threshold split on feature {int(on_codes[0])}, "
            "which the header marks as categorical."
        )
    model.categorical_features_ = np.asarray(features, dtype=np.int64).reshape(-1)
    model.categories_ = [
        np.asarray(c, dtype=object) if mapped else np.asarray(c, dtype=np.int64)
        for c, mapped in zip(categories, from_values, strict=True)
    ]
    model.categories_from_values_ = list(from_values)


def _check_categories(where: str, values: list, mapped: bool) -> None:
    """Check one column's categories (see :func:`_restore_categorical`)."""
    if len(values) > MAX_CATEGORIES:
        raise _malformed(
            where, f"{len(values)} categories, more than the limit of {MAX_CATEGORIES}."
        )
    if not mapped:  # the integer codes seen in fit, ascending
        if not all(_is_int(v) and 0 <= v < MAX_CATEGORIES for v in values):
            raise _malformed(where, f"codes must be integers in [0, {MAX_CATEGORIES}).")
        if any(b <= a for a, b in zip(values, values[1:], strict=False)):
            raise _malformed(where, "codes must be ascending and unique.")
        return
    if not all(isinstance(v, CATEGORY_TYPES) for v in values):
        raise _malformed(where, "categories must be str, int, float or bool.")
    if not all(math.isfinite(v) for v in values if isinstance(v, float)):
        raise _malformed(where, "a category is NaN or infinite.")
    if not all(-(2**63) <= v < 2**63 for v in values if isinstance(v, int)):
        raise _malformed(where, "an integer category is out of the int64 range.")
    if len(set(values)) != len(values):
        raise _malformed(where, "duplicate categories.")


def _malformed(where: str, problem: str) -> TreeFormatError:
    """Return the error of a bad ``categorical`` header entry (in the words of older files)."""
    return TreeFormatError(f"{where}: malformed categorical entry: {problem}")


def _from_json(value: Any) -> Any:
    """Undo :func:`_jsonable` for a parameter value."""
    if isinstance(value, dict) and set(value) == {CLASS_WEIGHT_PAIRS}:
        pairs = value[CLASS_WEIGHT_PAIRS]
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], (str, int, float))
            for p in pairs
        ):
            raise TreeFormatError("header field 'params': malformed class_weight.")
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


# ----------------------------------------------------------------------------- the archive
def write_model_file(path: str | os.PathLike, header: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``header`` (JSON) and ``arrays`` to an uncompressed ``.npz`` file, atomically.

    The file is written next to ``path`` under a temporary name and renamed into place, so a
    failure never leaves a half-written model behind; an ``OSError`` names ``path``.
    """
    path = os.fspath(path)
    payload = {"header": np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)}
    for name, a in arrays.items():
        if a.dtype == object:
            raise TypeError(f"Cannot save array {name!r} of dtype object (no pickle in files).")
        payload[name] = a
    with atomic_output(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **payload)


def read_model_file(path: str | os.PathLike) -> tuple[dict, dict[str, np.ndarray]]:
    """Read the header and the known members of a model file, never unpickling anything.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    TreeFormatError
        If the file is not a readable dtjit model of a supported format version.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model file at {path!r}.")
    if not stat.S_ISREG(os.stat(path).st_mode):  # a directory, a FIFO, /dev/zero ...
        raise TreeFormatError(f"{path!r} is not a regular file, not a readable dtjit model file.")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        arrays = _read_npz_members(raw)
    except TreeFormatError as exc:
        raise TreeFormatError(f"{path!r} is not a readable dtjit model file: {exc}") from exc
    except Exception as exc:  # zipfile/numpy raise many types on corrupted input
        raise TreeFormatError(
            f"{path!r} is not a readable dtjit model file: {type(exc).__name__}: {exc}"
        ) from exc
    header_bytes = arrays.pop("header", None)
    if header_bytes is None or header_bytes.dtype != np.uint8 or header_bytes.ndim != 1:
        raise TreeFormatError(f"{path!r} is not a dtjit model file: no header.")
    try:
        header = json.loads(header_bytes.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError: JSON syntax, and integers past Python's digit limit; RecursionError:
        # arrays or objects nested thousands deep.
        raise TreeFormatError(
            f"{path!r} has a corrupted header: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise TreeFormatError(f"{path!r} is not a dtjit model file (format marker missing).")
    depth = _nesting_depth(header)
    if depth > MAX_HEADER_DEPTH:
        raise TreeFormatError(
            f"{path!r}: header is nested {depth} levels deep; the limit is {MAX_HEADER_DEPTH}."
        )
    version = header.get("format_version")
    if not _is_int(version) or version != FORMAT_VERSION:
        raise TreeFormatError(
            f"{path!r} has format version {version!r}; this dtjit reads version {FORMAT_VERSION}."
        )
    return header, arrays


def _nesting_depth(value: Any) -> int:
    """Depth of nested lists and dicts in a parsed JSON value (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth += 1
            deepest = max(deepest, depth)
            if depth <= MAX_HEADER_DEPTH:  # deeper is refused anyway: stop walking
                stack.extend((v, depth) for v in item)
    return deepest


def _read_npz_members(raw: bytes) -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` held in memory, checking each header first.

    Only the members a model file may hold are read, they must be stored uncompressed, and
    each one's declared shape and dtype are read before its data: a member whose data would
    be larger than its stored bytes, or of dtype object, is refused. So reading allocates at
    most about the file's own size and never unpickles anything.
    """
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise TreeFormatError("not an .npz archive")
    arrays = {}
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if name not in KNOWN_MEMBERS and not OUTPUT_CLASSES_MEMBER.fullmatch(name):
                continue  # never decompressed, never allocated
            if name in arrays:
                raise TreeFormatError(f"member {name!r} appears twice")
            if info.compress_type != zipfile.ZIP_STORED:
                # dtjit writes uncompressed members; a compressed one could expand ~1000x.
                raise TreeFormatError(f"member {name!r} is compressed; dtjit files never are")
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise TreeFormatError(f"member {name!r} has unsupported .npy version {version}")
                if dtype.hasobject:
                    raise TreeFormatError(f"member {name!r} has dtype object (pickle refused)")
                n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if n_bytes > info.file_size:
                    raise TreeFormatError(
                        f"member {name!r} claims {n_bytes} bytes but stores {info.file_size}"
                    )
            with archive.open(info) as member:
                arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
    return arrays


def tree_from_arrays(n_features: Any, n_classes: Any, arrays: dict[str, np.ndarray]) -> Tree:
    """Build a :class:`Tree` from untrusted arrays (a file), validating everything first."""
    if not _is_int(n_features) or not 1 <= n_features <= MAX_N_FEATURES:
        raise TreeFormatError(
            f"header field 'n_features': n_features must be an int in [1, {MAX_N_FEATURES}], "
            f"got {_short(n_features)}."
        )
    if not isinstance(n_classes, list) or not all(_is_int(c) for c in n_classes):
        raise TreeFormatError(
            f"header field 'n_classes': n_classes must be a list of ints, got {_short(n_classes)}."
        )
    node_arrays = {}
    for name in NODE_ARRAYS:
        if name not in arrays:
            raise TreeFormatError(f"member {name!r}: missing (the file lacks the array {name!r}).")
        node_arrays[name] = arrays[name]
    # Files written before categorical splits existed have neither array: all numeric.
    present = [name for name in CATEGORICAL_ARRAYS if name in arrays]
    if len(present) == 1:
        raise TreeFormatError(f"member {present[0]!r}: present without its companion array.")
    for name in present:
        node_arrays[name] = arrays[name]
    bits = arrays.get("category_bits")
    if bits is not None and bits.ndim == 2 and bits.shape[1] > MAX_CATEGORY_WORDS:
        raise TreeFormatError(
            f"member 'category_bits': {bits.shape[1]} words per set; {MAX_CATEGORIES} "
            f"categories need at most {MAX_CATEGORY_WORDS}."
        )
    if MISSING_LEARNED in arrays:  # absent in files written before it was recorded
        node_arrays[MISSING_LEARNED] = arrays[MISSING_LEARNED]
    return Tree(n_features=n_features, n_classes=n_classes, **node_arrays)


def _short(value: Any) -> str:
    """``repr`` of a header value, cut to 60 characters (a crafted value can be huge)."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's digit limit for str()
        text = "an integer too long to print"
    return text if len(text) <= 60 else text[:57] + "..."
