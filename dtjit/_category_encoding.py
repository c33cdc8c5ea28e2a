"""Categorical features at the Python boundary: which columns, their codes, their layout.

``categorical_features`` names the columns (indices, names, a boolean mask, or
``"from_dtype"``, the default: the pandas ``category`` columns of a DataFrame, none for any
other input, as LightGBM and scikit-learn's ``HistGradientBoostingClassifier`` do). A
categorical column holds

- non-negative integer codes (any numeric dtype; NaN is a missing value), used as they are;
  the known categories are the codes seen in fit; or
- in a pandas DataFrame, ``category`` or object/string values, mapped at fit time to codes
  ``0 .. k-1`` (the pandas categories, or the sorted distinct values) and remembered; at
  predict time the same mapping is applied and a value unseen in fit becomes a missing
  value, which follows the split's ``missing_left`` direction.

At most ``MAX_CATEGORIES`` codes (``0 .. MAX_CATEGORIES - 1``) per feature with the exact
splitter; with ``splitter="hist"`` a feature's codes and its missing-value bin share 256
bins (so 256 categories without missing values, 255 with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class CategoricalColumns:
    """What fit learned about the categorical columns.

    Attributes
    ----------
    features : ndarray of int64
        Column indices, ascending.
    categories : list of ndarray
        Per categorical feature, the known categories: the values mapped to codes
        ``0 .. k-1`` (``from_values``), or the integer codes seen in fit.
    from_values : list of bool
        Per categorical feature, whether its values were mapped to codes (pandas values)
        rather than taken as codes.
    """

    features: np.ndarray
    categories: list[np.ndarray]
    from_values: list[bool]

    @property
    def n_categories(self) -> int:
        """One more than the largest code of any categorical feature (0 without any)."""
        sizes = [
            len(c) if mapped else (int(c.max()) + 1 if len(c) else 0)
            for c, mapped in zip(self.categories, self.from_values, strict=True)
        ]
        return max(sizes, default=0)

    def mask(self, n_features: int) -> np.ndarray:
        """uint8 per column: 1 for the categorical ones."""
        out = np.zeros(n_features, dtype=np.uint8)
        out[self.features] = 1
        return out

    def category_labels(self, n_features: int) -> list[list[tuple[int, str]] | None]:
        """Per column: ``(code, label)`` of each known category, None for numeric columns."""
        out: list[list[tuple[int, str]] | None] = [None] * n_features
        for f, cats, mapped in zip(self.features, self.categories, self.from_values, strict=True):
            if mapped:
                out[int(f)] = [(code, str(value)) for code, value in enumerate(cats)]
            else:
                out[int(f)] = [(int(code), str(int(code))) for code in cats]
        return out


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _column_is_category(column: Any) -> bool:
    return str(column.dtype) == "category"


def _column_is_values(column: Any) -> bool:
    """Whether a DataFrame column holds values to map (category, object or string dtype)."""
    kind = getattr(column.dtype, "kind", "O")
    return _column_is_category(column) or kind in "OSU" or str(column.dtype).startswith("str")


def fit_features(spec: Any, X: Any, splitter: str) -> tuple[Any, np.ndarray]:
    """Resolve ``categorical_features`` for fit: X (2-D) and the categorical column indices.

    ``"from_dtype"`` picks a DataFrame's ``category`` columns and leaves any other input as
    it is (no categorical columns). A DataFrame column of strings that is not categorical
    gets an error naming ``categorical_features``, instead of numpy's "could not convert
    string to float".

    Raises
    ------
    ValueError
        For the errors of :func:`resolve_features`, a non-2-D X, categorical columns with
        ``splitter="random"``, or a string column left numeric.
    """
    if spec is None or (isinstance(spec, str) and spec == "from_dtype" and not _is_dataframe(X)):
        return X, np.zeros(0, dtype=np.int64)
    if not hasattr(X, "shape"):
        X = np.asarray(X, dtype=object)
    if len(X.shape) != 2:
        raise ValueError(f"Expected a 2-D X, got shape {X.shape}.")
    features = resolve_features(spec, X)
    by_default = isinstance(spec, str)
    if splitter == "random" and (features.size or not by_default):
        picked = (
            f"the pandas 'category' columns {_names_of(X, features)} are categorical by "
            "default (categorical_features='from_dtype')"
            if by_default
            else "categorical_features"
        )
        raise ValueError(
            f"{picked}; categorical features are not supported with splitter='random': use "
            "splitter='best' or 'hist'."
        )
    if _is_dataframe(X):
        _check_no_string_columns(X, features)
    return X, features


def _names_of(X: Any, features: np.ndarray) -> list[str]:
    return [str(X.columns[int(f)]) for f in features]


def _check_no_string_columns(X: Any, features: np.ndarray) -> None:
    """Raise ValueError for a DataFrame column of non-numbers left out of the categorical ones."""
    listed = set(features.tolist())
    for j in range(X.shape[1]):
        column = X.iloc[:, j]
        if j in listed or not _column_is_values(column):
            continue
        try:  # object columns of numbers are fine: scikit-learn's validation converts them
            np.asarray(column, dtype=np.float64)
        except (TypeError, ValueError):
            example = next((v for v in column if isinstance(v, str)), column.iloc[0])
            raise ValueError(
                f"column {str(X.columns[j])!r} (column {j}) holds {column.dtype} values such as "
                f"{example!r}, which are not numbers: make it categorical with "
                f"categorical_features (for example categorical_features="
                f"[{str(X.columns[j])!r}]), or convert it with .astype('category'), which "
                "the default categorical_features='from_dtype' picks up."
            ) from None


def resolve_features(spec: Any, X: Any) -> np.ndarray:
    """Translate ``categorical_features`` into sorted column indices (int64).

    Raises
    ------
    ValueError
        For an unknown name, an index out of range, a mask of the wrong length, a repeated
        column, or an unknown string.
    """
    n_features = X.shape[1]
    if spec is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise ValueError(
                f"categorical_features={spec!r}: use indices, names, a boolean mask, "
                "'from_dtype' or None."
            )
        if not _is_dataframe(X):
            return np.zeros(0, dtype=np.int64)
        return np.array(
            [j for j in range(n_features) if _column_is_category(X.iloc[:, j])], dtype=np.int64
        )
    items = list(np.asarray(spec, dtype=object).reshape(-1))
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != n_features:
            raise ValueError(
                f"categorical_features as a boolean mask needs {n_features} entries, got "
                f"{len(items)}."
            )
        return np.flatnonzero(np.asarray(items, dtype=bool)).astype(np.int64)
    names = [str(c) for c in X.columns] if _is_dataframe(X) else None
    indices = []
    for v in items:
        if isinstance(v, str):
            if names is None or v not in names:
                raise ValueError(
                    f"categorical_features names the column {v!r}, but X has no column of "
                    "that name" + ("" if names is not None else " (it is not a DataFrame)") + "."
                )
            indices.append(names.index(v))
        elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            if not -n_features <= v < n_features:
                raise ValueError(
                    f"categorical_features index {v} is out of range for {n_features} features."
                )
            indices.append(int(v) % n_features)
        else:
            raise ValueError(
                f"categorical_features entries must be column indices, names or booleans; "
                f"got {v!r}."
            )
    if len(set(indices)) != len(indices):
        raise ValueError("categorical_features lists a column twice.")
    return np.array(sorted(indices), dtype=np.int64)


def _column_name(X: Any, f: int) -> str:
    if _is_dataframe(X):
        return f"categorical feature {str(X.columns[f])!r} (column {f})"
    return f"categorical feature {f}"


def map_values_fit(X: Any, features: np.ndarray) -> tuple[Any, list[np.ndarray], list[bool]]:
    """Replace the value columns of a DataFrame by float codes (NaN: missing).

    Returns
    -------
    X : DataFrame or the input
        A copy with every categorical value column as float64 codes, or X itself when
        nothing needed mapping.
    categories : list of ndarray or None
        Per categorical feature, its categories when mapped (None for code columns).
    from_values : list of bool
    """
    categories: list[Any] = [None] * len(features)
    from_values = [False] * len(features)
    if not _is_dataframe(X):
        return X, categories, from_values
    import pandas as pd

    out = None
    for j, f in enumerate(features):
        column = X.iloc[:, int(f)]
        if not _column_is_values(column):
            continue
        if _column_is_category(column):
            cat = column.array
        else:
            values = column.dropna().unique()
            try:
                known = np.sort(np.asarray(values, dtype=object))
            except TypeError:  # values that do not compare (mixed types): sort by text
                known = np.asarray(sorted(values, key=str), dtype=object)
            cat = pd.Categorical(column, categories=known)
        if out is None:
            out = X.copy()
        out.isetitem(int(f), _codes_as_float(cat.codes))
        categories[j] = np.asarray(cat.categories, dtype=object)
        from_values[j] = True
    return (X if out is None else out), categories, from_values


class CategoryCodes(np.ndarray):
    """An array whose categorical value columns already hold the model's codes.

    ``dtjit predict`` maps each block of a table itself (:func:`map_values_predict`) and hands
    the estimator this view of the numeric result, which it takes as it is.
    """


def map_values_predict(
    X: Any, columns: CategoricalColumns, feature_names: Any = None, *, estimator: Any = None
) -> Any:
    """Apply the fit-time mapping to a DataFrame's value columns (unseen values: NaN).

    Raises ValueError for any other input when some column was mapped at fit: an array's
    numbers would be taken for codes (value 20 as code 20), silently routing rows wrong.
    ``feature_names`` (the fit's column names) name the columns in that message. With
    ``estimator``, a DataFrame's column names and count are first checked against it, with
    scikit-learn's messages (those a numeric model gives), before any column is read.
    """
    if not any(columns.from_values):
        return X
    if isinstance(X, CategoryCodes):
        return X.view(np.ndarray)
    if estimator is not None and _is_dataframe(X):
        from sklearn.utils.validation import validate_data

        # Names and width only; the values are validated after the mapping.
        validate_data(estimator, X, reset=False, skip_check_array=True)
    if not _is_dataframe(X):
        mapped = [
            f"categorical feature {_name(feature_names, int(f))} (categories {_preview(cats)})"
            for f, cats, by_value in zip(
                columns.features, columns.categories, columns.from_values, strict=True
            )
            if by_value
        ]
        raise ValueError(
            f"{'; '.join(mapped)}: fitted on a DataFrame's values, so X must be a DataFrame "
            f"with that column, not {type(X).__name__} (its numbers would be read as codes)."
        )
    import pandas as pd

    out = X.copy()
    for f, cats, mapped in zip(columns.features, columns.categories, columns.from_values,
                               strict=True):  # fmt: skip
        if not mapped:
            continue
        column = X.iloc[:, int(f)]
        values = column.astype(object) if _column_is_category(column) else column
        # -1 for a value not among the fit-time categories (and for NaN): missing.
        codes = pd.Index(cats, dtype=object).get_indexer(values.to_numpy(dtype=object))
        out.isetitem(int(f), _codes_as_float(codes))
    return out


def _name(feature_names: Any, f: int) -> str:
    return f"{str(feature_names[f])!r} (column {f})" if feature_names is not None else str(f)


def _preview(categories: np.ndarray, shown: int = 4) -> str:
    """``[10, 20, 30]``, or the first ``shown`` and a count of the rest."""
    head = ", ".join(repr(c) for c in categories[:shown])
    more = len(categories) - shown
    return f"[{head}{f', ... {more} more' if more > 0 else ''}]"


def _codes_as_float(codes: np.ndarray) -> np.ndarray:
    out = codes.astype(np.float64)
    out[codes < 0] = np.nan
    return out


# Dtypes float32 holds exactly: their codes were not rounded by the conversion.
_EXACT_IN_FLOAT32 = frozenset(np.dtype(t) for t in ("?", "i1", "u1", "i2", "u2", "f2", "f4"))


def _exact_source(unconverted: Any) -> Any:
    """Return where the codes can be read before the float32 conversion, or None.

    float32 rounds a code such as 4095.0001 or 3 + 1e-9 to an integer, so the codes are
    checked in the user's values: a DataFrame as it is, anything else as one array
    (converted once, not once per column). None when the conversion kept them exactly
    (float32 or narrower input: the converted columns are checked) or there is nothing
    to read.
    """
    if unconverted is None or _is_dataframe(unconverted):
        return unconverted
    try:
        values = np.asarray(unconverted)
    except (TypeError, ValueError):
        return None
    return None if values.dtype in _EXACT_IN_FLOAT32 or values.ndim != 2 else values


def _exact_column(source: Any, f: int) -> np.ndarray | None:
    """Return column ``f`` of :func:`_exact_source`'s result as float64, or None.

    One column at a time: a float64 copy of every categorical column at once cost 960 MB
    on 2M x 40 codes. None when the column is exact in float32 or not numeric.
    """
    try:
        if _is_dataframe(source):
            column = source.iloc[:, f]
            if column.dtype in _EXACT_IN_FLOAT32:
                return None
            return column.to_numpy(dtype=np.float64, na_value=np.nan)
        return np.asarray(source[:, f], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def check_codes(
    X: np.ndarray, features: np.ndarray, raw: Any, *, limit: int, unconverted: Any = None
) -> None:
    """Raise ValueError unless every categorical column holds codes in ``[0, limit)`` or NaN.

    ``raw`` is the input as the user gave it (for column names in the message);
    ``unconverted`` the input with mapped categories but before its conversion to ``X``'s
    float32, where the codes are read when it has them.
    """
    source = _exact_source(unconverted)
    for f in features:
        exact = None if source is None else _exact_column(source, int(f))
        column = X[:, int(f)] if exact is None else exact
        present = column[~np.isnan(column)]
        where = _column_name(raw, int(f))
        if np.isinf(present).any():
            raise ValueError(f"{where} contains infinity; codes must be integers >= 0.")
        if (present < 0).any():
            raise ValueError(f"{where} has negative codes; codes must be integers >= 0.")
        if (present != np.floor(present)).any():
            raise ValueError(f"{where} has non-integer codes; codes must be integers >= 0.")
        if present.size and present.max() >= limit:
            raise ValueError(
                f"{where} has code {present.max():.0f}; at most {limit} categories "
                f"(codes 0 .. {limit - 1}) are supported."
            )


def check_numeric_finite(X: np.ndarray, features: np.ndarray) -> None:
    """scikit-learn's errors for NaN / infinity in the non-categorical columns."""
    numeric = np.ones(X.shape[1], dtype=bool)
    numeric[features] = False
    block = X[:, numeric]
    if np.isinf(block).any():
        raise ValueError("Input X contains infinity or a value too large for dtype('float32').")
    if np.isnan(block).any():
        raise ValueError("Input X contains NaN.")


def learn_columns(
    X: np.ndarray, features: np.ndarray, categories: list[Any], from_values: list[bool]
) -> CategoricalColumns:
    """Complete the categories of code columns (the distinct codes seen in fit)."""
    known = []
    for f, cats, mapped in zip(features, categories, from_values, strict=True):
        if mapped:
            known.append(cats)
        else:
            column = X[:, int(f)]
            known.append(np.unique(column[~np.isnan(column)]).astype(np.int64))
    return CategoricalColumns(features=features, categories=known, from_values=list(from_values))


def split_layout(columns: CategoricalColumns, n_features: int) -> tuple[np.ndarray, int]:
    """``cat_slot`` (int32 per column, -1 numeric) and the bitset words for the builders."""
    cat_slot = np.full(n_features, -1, dtype=np.int32)
    cat_slot[columns.features] = np.arange(len(columns.features), dtype=np.int32)
    n_words = max(1, (columns.n_categories + 63) // 64)
    return cat_slot, n_words
