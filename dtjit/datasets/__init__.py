"""Small textbook tables shipped with dtjit, for examples, notebooks and the command line.

Each loader reads a CSV file installed with the package (under 20 KB together), so it needs
no network and nothing beside the checkout:

- :func:`load_play_tennis`: Quinlan's 14 days of "play tennis" weather, all nominal
  (``numeric=False``, the ID3 example) or with numeric temperature and humidity
  (``numeric=True``, the C4.5 / Witten & Frank example);
- :func:`load_spam_words`: eight e-mails with a numeric, a categorical and a binary attribute,
  the worked CART example of entropy, gains and subset splits;
- :func:`load_penguins`: the Palmer penguins, 344 birds of 3 species with a categorical
  ``island``, a categorical ``sex`` and missing values;
- :func:`csv_path`: the path of a shipped CSV file, for ``dtjit fit`` or any other reader.

Text attributes come as pandas ``category`` columns, so ``categorical_features="from_dtype"``
picks them up; yes/no flags with two values come as ``bool``. As with scikit-learn's loaders,
``return_X_y=True`` returns the features and the target separately, and ``as_frame=False``
returns them as numpy arrays (categories then as their integer codes, missing as NaN).

Sources and licences (details in ``dtjit/datasets/NOTICE.md``):

- play tennis: J. R. Quinlan (1986), *Induction of decision trees*, Machine Learning 1:81-106,
  Table 1; the numeric variant from I. H. Witten & E. Frank, *Data Mining* (Morgan Kaufmann).
  Fourteen rows of a published textbook example, with no licence of their own; the rows were
  checked against the copies in Weka's example files (``weather.nominal.arff``,
  ``weather.numeric.arff``; Weka is GPL-2+, none of its code is included).
- spam words: an eight-row teaching example typed in for this project; distributed under
  dtjit's BSD-3-Clause licence.
- penguins: K. B. Gorman, T. D. Williams & W. R. Fraser (2014), PLoS ONE 9(3):e90081, as
  published by the palmerpenguins R package under CC0 1.0 (public domain dedication); this
  copy is OpenML dataset 42585 converted to CSV (column names ``culmen_*`` as there; the one
  ``sex`` of ``_`` there, NA in palmerpenguins, is an empty cell here).

Examples
--------
>>> from dtjit.datasets import load_play_tennis
>>> weather = load_play_tennis()
>>> weather.shape
(14, 5)
>>> X, y = load_play_tennis(return_X_y=True)
>>> list(X.columns), y.value_counts().to_dict()
(['outlook', 'temperature', 'humidity', 'windy'], {'yes': 9, 'no': 5})
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["csv_path", "load_penguins", "load_play_tennis", "load_spam_words", "names"]


@dataclass(frozen=True)
class _Table:
    """How to read one shipped CSV file."""

    file: str
    target: str
    # Text columns and their categories, in the order the textbook lists them.
    categories: dict[str, tuple[str, ...]]
    # Yes/no columns read as bool: column -> the text that means True.
    flags: dict[str, str]


_TABLES = {
    "play_tennis": _Table(
        file="play_tennis.csv",
        target="play",
        categories={
            "outlook": ("sunny", "overcast", "rainy"),
            "temperature": ("hot", "mild", "cool"),
            "humidity": ("high", "normal"),
        },
        flags={"windy": "TRUE"},
    ),
    "play_tennis_numeric": _Table(
        file="play_tennis_numeric.csv",
        target="play",
        categories={"outlook": ("sunny", "overcast", "rainy")},
        flags={"windy": "TRUE"},
    ),
    "spam_words": _Table(
        file="spam_words.csv",
        target="spam",
        categories={"sender_domain": ("Edu", "Com", "Org")},
        flags={"contains_free": "Yes"},
    ),
    "penguins": _Table(
        file="penguins.csv",
        target="species",
        categories={
            "island": ("Biscoe", "Dream", "Torgersen"),
            "sex": ("FEMALE", "MALE"),
        },
        flags={},
    ),
}


def names() -> list[str]:
    """Return the names of the shipped tables, as :func:`csv_path` takes them.

    Returns
    -------
    list of str
        ``"penguins"``, ``"play_tennis"``, ``"play_tennis_numeric"``, ``"spam_words"``.
    """
    return sorted(_TABLES)


def csv_path(name: str) -> Path:
    """Return the path of a shipped table's CSV file.

    The file is the one installed with dtjit: read it, copy it, or hand it to the command
    line (``dtjit fit "$(python -m dtjit.datasets play_tennis_numeric)" --target play``).
    Missing cells are empty.

    Parameters
    ----------
    name : str
        One of :func:`names`.

    Returns
    -------
    pathlib.Path
        The file's absolute path.

    Raises
    ------
    ValueError
        If ``name`` is not a shipped table.
    """
    table = _table(name)
    path = resources.files(__name__) / "data" / table.file
    return Path(str(path)).resolve()


def _table(name: str) -> _Table:
    try:
        return _TABLES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"no shipped table named {name!r}; the tables are: {', '.join(names())}"
        ) from None


def _load(name: str, return_X_y: bool, as_frame: bool) -> Any:
    """Read a shipped table and return it in the form the loaders document."""
    import pandas as pd  # a dependency of dtjit, imported here to keep `import` cheap

    table = _table(name)
    if not as_frame and not return_X_y:
        raise ValueError(
            "as_frame=False needs return_X_y=True: the whole table, text and numbers, "
            "is returned only as a DataFrame"
        )
    frame = pd.read_csv(
        csv_path(name),
        dtype={column: str for column in (*table.categories, *table.flags)},
        keep_default_na=False,
        na_values=[""],
    )
    for column, categories in table.categories.items():
        unknown = set(frame[column].dropna()) - set(categories)
        if unknown:  # the files ship with the package: this is a packaging error
            raise RuntimeError(f"{table.file}: unexpected {column} values {sorted(unknown)}")
        frame[column] = pd.Categorical(frame[column], categories=list(categories))
    for column, true_text in table.flags.items():
        frame[column] = frame[column] == true_text
    if not return_X_y:
        return frame
    X = frame.drop(columns=table.target)
    y = frame[table.target]
    if as_frame:
        return X, y
    codes = {
        column: X[column].cat.codes.to_numpy(np.float64)
        for column in X.columns
        if isinstance(X[column].dtype, pd.CategoricalDtype)
    }
    for column, values in codes.items():
        values[values < 0] = np.nan  # pandas codes a missing category as -1
        X[column] = values
    return X.to_numpy(np.float64), y.to_numpy(dtype=object)


def load_play_tennis(
    *, numeric: bool = False, return_X_y: bool = False, as_frame: bool = True
) -> Any:
    """Load Quinlan's "play tennis" table: 14 days, 4 weather attributes, play yes / no.

    The classic example of ID3 (``numeric=False``: every attribute nominal; the root split
    of largest information gain is ``outlook``, 0.2467 bits) and of C4.5's numeric
    thresholds (``numeric=True``: temperature and humidity in degrees Fahrenheit and
    percent). Rows are in the textbook's order, days D1 to D14; 9 days play, 5 do not.

    Parameters
    ----------
    numeric : bool, default=False
        Give ``temperature`` and ``humidity`` as numbers (Witten & Frank's variant) instead
        of the categories hot / mild / cool and high / normal.
    return_X_y : bool, default=False
        Return ``(X, y)``, the four attributes and the ``play`` column, instead of the
        whole table.
    as_frame : bool, default=True
        With ``return_X_y``, ``False`` returns numpy arrays: ``X`` as float64 (a category
        as its integer code in the order listed below, ``windy`` as 0 / 1) and ``y`` as an
        object array of ``"yes"`` / ``"no"``.

    Returns
    -------
    pandas.DataFrame or tuple
        The table (columns ``outlook``, ``temperature``, ``humidity``, ``windy``, ``play``),
        or ``(X, y)``. ``outlook`` (sunny, overcast, rainy), and in the nominal table
        ``temperature`` (hot, mild, cool) and ``humidity`` (high, normal), are ``category``
        columns; ``windy`` is ``bool``.

    Examples
    --------
    >>> from dtjit import criteria
    >>> from dtjit.datasets import load_play_tennis
    >>> weather = load_play_tennis()
    >>> branches = criteria.branch_counts(weather["outlook"], weather["play"])
    >>> round(criteria.information_gain(criteria.class_counts(weather["play"]), branches), 4)
    0.2467
    """
    name = "play_tennis_numeric" if numeric else "play_tennis"
    return _load(name, return_X_y, as_frame)


def load_spam_words(*, return_X_y: bool = False, as_frame: bool = True) -> Any:
    """Load the eight e-mails of the spam example: word count, sender domain, "free".

    A worked example for the three kinds of split: ``word_count`` is numeric (best
    threshold 150, information gain 0.5488 bits), ``sender_domain`` categorical (Edu, Com,
    Org; best subset {Com} against {Edu, Org}, gain 0.3113) and ``contains_free`` binary
    (gain 0.5488). Half the e-mails are spam, so the root entropy is 1 bit.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)``, the three attributes and the ``spam`` column, instead of the
        whole table.
    as_frame : bool, default=True
        With ``return_X_y``, ``False`` returns numpy arrays: ``X`` as float64
        (``sender_domain`` as its code 0, 1, 2 for Edu, Com, Org; ``contains_free`` as
        0 / 1) and ``y`` as an object array of ``"Yes"`` / ``"No"``.

    Returns
    -------
    pandas.DataFrame or tuple
        The table (columns ``word_count`` int, ``sender_domain`` category,
        ``contains_free`` bool, ``spam``), or ``(X, y)``.

    Examples
    --------
    >>> from dtjit.datasets import load_spam_words
    >>> load_spam_words()["spam"].value_counts().to_dict()
    {'Yes': 4, 'No': 4}
    """
    return _load("spam_words", return_X_y, as_frame)


def load_penguins(*, return_X_y: bool = False, as_frame: bool = True) -> Any:
    """Load the Palmer penguins: 344 birds, 3 species, 2 categorical attributes, missing values.

    Adelie (152), Chinstrap (68) and Gentoo (124) penguins from three islands of the
    Palmer Archipelago, Antarctica, measured 2007-2009. ``island`` (Biscoe, Dream,
    Torgersen) and ``sex`` (FEMALE, MALE) are categories; two birds have no measurements,
    and 11 have no recorded sex, all given as missing (NaN).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)``, the six attributes and the ``species`` column, instead of the
        whole table.
    as_frame : bool, default=True
        With ``return_X_y``, ``False`` returns numpy arrays: ``X`` as float64 (``island``
        and ``sex`` as their codes in the order above, missing as NaN) and ``y`` as an
        object array of species names.

    Returns
    -------
    pandas.DataFrame or tuple
        The table (columns ``species``, ``island``, ``culmen_length_mm``,
        ``culmen_depth_mm``, ``flipper_length_mm``, ``body_mass_g``, ``sex``), or
        ``(X, y)``.

    Examples
    --------
    >>> from dtjit.datasets import load_penguins
    >>> X, y = load_penguins(return_X_y=True)
    >>> X.shape, sorted(y.unique())
    ((344, 6), ['Adelie', 'Chinstrap', 'Gentoo'])
    """
    return _load("penguins", return_X_y, as_frame)
