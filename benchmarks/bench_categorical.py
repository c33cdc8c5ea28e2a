"""Categorical benchmark: dtjit native categorical splits against scikit-learn on one-hot data.

Data:

- ``adult``: UCI Adult (``../shared/data/adult.data.gz`` for training, ``adult.test.gz``
  held out), 6 numeric and 8 categorical columns (``?`` is a missing value: a category of
  its own for dtjit, the level ``"?"`` in the one-hot encoding);
- ``covtype``: UCI Covertype (``covtype.csv.gz``), its one-hot blocks re-encoded as two
  categorical columns (``Wilderness_Area1..4`` -> ``wilderness`` with 4 codes,
  ``Soil_Type1..40`` -> ``soil`` with 40 codes) next to the 10 numeric columns; shuffled
  with seed 0 and split 80 / 20. scikit-learn gets the original 54 columns.

``--rows`` caps the training rows of each data set (the held-out set is kept whole for adult,
cut to ``rows // 4`` for covtype).

Contenders, full depth and ``max_depth=10``, gini, ``random_state=0``: dtjit
``splitter="best"`` and ``splitter="hist"`` with ``categorical_features`` (``n_jobs=1``), and
scikit-learn's ``DecisionTreeClassifier`` on the one-hot columns. Each is warmed up on a
slice (compilation is not timed), then the runs are interleaved (``_common.run_interleaved``)
and the median fit time reported, with node counts and held-out accuracy.

Results: ``benchmarks/results/categorical.json`` and ``categorical.md``.

Usage::

    .venv/bin/python benchmarks/bench_categorical.py                 # full size
    .venv/bin/python benchmarks/bench_categorical.py --rows 2000 --repeats 1   # does it work?
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
import pandas as pd
from _common import (
    RESULTS_DIR,
    SEED,
    SHARED_DATA_DIR,
    log,
    publish,
    run_interleaved,
)
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier as SklearnTree

from dtjit import DecisionTreeClassifier
from dtjit.cli import int_at_least

JSON_PATH = RESULTS_DIR / "categorical.json"
MD_PATH = RESULTS_DIR / "categorical.md"
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip
DEPTHS = (None, 10)


def adult(rows: int | None) -> dict[str, Any]:
    """Adult as DataFrames (native) and one-hot float32 arrays (scikit-learn)."""
    kw = dict(header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    train = pd.read_csv(SHARED_DATA_DIR / "adult.data.gz", **kw)
    test = pd.read_csv(SHARED_DATA_DIR / "adult.test.gz", skiprows=1, **kw)
    test["income"] = test["income"].str.rstrip(".")
    if rows is not None:
        train = train.iloc[:rows]
    y_train, y_test = train.pop("income").to_numpy(), test.pop("income").to_numpy()
    cats = [c for c in train.columns if not pd.api.types.is_numeric_dtype(train[c])]
    numeric = [c for c in train.columns if c not in cats]
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float32)
    encoder.fit(train[cats].fillna("?"))

    def one_hot(frame):
        return np.hstack(
            [frame[numeric].to_numpy(np.float32), encoder.transform(frame[cats].fillna("?"))]
        )

    return {
        "native": (train, test, cats),
        "one_hot": (one_hot(train), one_hot(test)),
        "y": (y_train, y_test),
    }


def covtype(rows: int | None) -> dict[str, Any]:
    """Covertype: native (10 numeric + 2 categorical) and the original 54 one-hot columns."""
    df = pd.read_csv(SHARED_DATA_DIR / "covtype.csv.gz")
    y = df.pop("Cover_Type").to_numpy()
    X = df.to_numpy(np.float32)
    wilderness = X[:, 10:14].argmax(axis=1)  # exactly one column is set per row
    soil = X[:, 14:54].argmax(axis=1)
    native = np.c_[X[:, :10], wilderness, soil].astype(np.float32)
    order = np.random.default_rng(SEED).permutation(len(y))
    n_train = int(0.8 * len(y))
    train, test = order[:n_train], order[n_train:]
    if rows is not None:
        train, test = train[:rows], test[: max(rows // 4, 1)]
    return {
        "native": (native[train], native[test], [10, 11]),
        "one_hot": (X[train], X[test]),
        "y": (y[train], y[test]),
    }


def run_case(name: str, data: dict[str, Any], max_depth: int | None, repeats: int) -> dict:
    X_train, X_test, cats = data["native"]
    oh_train, oh_test = data["one_hot"]
    y_train, y_test = data["y"]
    models = {
        "dtjit best": lambda: DecisionTreeClassifier(
            max_depth=max_depth, random_state=0, categorical_features=cats
        ),
        "dtjit hist": lambda: DecisionTreeClassifier(
            max_depth=max_depth, random_state=0, splitter="hist", categorical_features=cats
        ),
    }
    warm = slice(0, min(2000, len(y_train)))
    for make in models.values():  # compile outside the clock
        make().fit(_rows(X_train, warm), y_train[warm])
    tasks = {
        label: (lambda make=make: make().fit(X_train, y_train)) for label, make in models.items()
    }
    tasks["scikit-learn one-hot"] = lambda: SklearnTree(max_depth=max_depth, random_state=0).fit(
        oh_train, y_train
    )
    times, fitted = run_interleaved(tasks, {label: repeats for label in tasks})
    results = {}
    for label, model in fitted.items():
        X_eval = oh_test if label.startswith("scikit") else X_test
        results[label] = {
            "fit_s": statistics.median(times[label]),
            "fit_s_all": times[label],
            "node_count": int(model.tree_.node_count),
            "depth": int(model.get_depth()),
            "test_accuracy": float(np.mean(model.predict(X_eval) == y_test)),
        }
        log(f"{name} max_depth={max_depth} {label}: {results[label]}")
    return {
        "data": name,
        "max_depth": max_depth,
        "n_train": int(len(y_train)),
        "n_test": int(len(y_test)),
        "n_native_features": int(X_train.shape[1]),
        "n_one_hot_features": int(oh_train.shape[1]),
        "results": results,
    }


def _rows(X: Any, rows: slice) -> Any:
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Native categorical splits vs scikit-learn on one-hot columns",
        "",
        f"Rows cap: {report['rows']}; repeats: {report['repeats']} (median fit time).",
        "",
        "| data | max_depth | train rows | contender | features | fit s | nodes | depth | "
        "held-out acc |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in report["cases"]:
        for label, r in case["results"].items():
            width = (
                case["n_one_hot_features"] if label.startswith("scikit")
                else case["n_native_features"]
            )  # fmt: skip
            lines.append(
                f"| {case['data']} | {case['max_depth']} | {case['n_train']} | {label} | "
                f"{width} | {r['fit_s']:.3f} | {r['node_count']} | {r['depth']} | "
                f"{r['test_accuracy']:.4f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int_at_least(100), default=None,
                        help="cap on training rows (at least 100)")  # fmt: skip
    parser.add_argument("--repeats", type=int_at_least(1), default=3, help="fits per contender")
    args = parser.parse_args()
    started = time.perf_counter()
    report: dict[str, Any] = {"rows": args.rows, "repeats": args.repeats, "cases": []}
    for name, load in (("adult", adult), ("covtype", covtype)):
        data = load(args.rows)
        for max_depth in DEPTHS:
            report["cases"].append(run_case(name, data, max_depth, args.repeats))
    publish(report, markdown, JSON_PATH, MD_PATH, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
