"""The paths of a first use: one small workload per kind of fit, each compiling its own kernels.

Each :class:`FirstUse` is what a user does the first time they need that kind of fit (a fit
and a predict, or the call the path is about). Run one after another in one process, each
compiles only what the ones before it have not: ``benchmarks/bench_startup.py`` times them
that way on an empty numba cache (compile budget: issue 50's goals), and
``tests/test_compile_budget.py`` counts the kernel specialisations each one adds. The first
one, the plain classifier on iris, is the first thing almost every user runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

SEED = 0  # of the generated rows
PARALLEL_ROWS = 20_000  # x 20 features: well above the threshold of the parallel kernels
MANY_CLASSES = 300  # past 256 classes the presorted class codes take two bytes


class FirstUse(NamedTuple):
    """One path: a short key (``--paths``), its name in tables and the function running it."""

    key: str
    name: str
    run: Callable[[], Any]


class Data(NamedTuple):
    """The workloads' data, built once (outside any timing) by :func:`load_data`."""

    iris_X: np.ndarray
    iris_y: np.ndarray
    diabetes_X: np.ndarray
    diabetes_y: np.ndarray
    large_X: np.ndarray
    large_y: np.ndarray


def load_data() -> Data:
    """Return iris, diabetes and 20,000 x 20 generated rows (scikit-learn's loaders)."""
    from sklearn.datasets import load_diabetes, load_iris, make_classification

    iris_X, iris_y = load_iris(return_X_y=True)
    diabetes_X, diabetes_y = load_diabetes(return_X_y=True)
    large_X, large_y = make_classification(
        n_samples=PARALLEL_ROWS, n_features=20, n_informative=10, random_state=SEED
    )
    return Data(iris_X, iris_y, diabetes_X, diabetes_y, large_X.astype(np.float32), large_y)


def first_uses(data: Data) -> list[FirstUse]:
    """Return the paths in the order they are measured; the plain iris fit comes first.

    Parameters
    ----------
    data : Data
        From :func:`load_data`.

    Returns
    -------
    list of FirstUse
        Names are unique; every function fits (and predicts) from scratch, so any subset
        runs in any order, each path then adding what the ones before it did not compile.
    """
    from ._estimators import DecisionTreeClassifier as Classifier
    from ._estimators import DecisionTreeRegressor as Regressor
    from .discretize import MDLPDiscretizer

    X, y = data.iris_X, data.iris_y
    DX, Dy = data.diabetes_X, data.diabetes_y
    X_nan = X.copy()
    X_nan[::7, 0] = np.nan
    X_nan[3::11, 2] = np.nan
    X_cat = X.copy()
    X_cat[:, 0] = np.floor((X[:, 0] - 4.3) * 2.0)  # integer codes: 8 categories
    y_two = np.column_stack([y, y == 1])
    n_many = 3 * MANY_CLASSES
    X_many, y_many = data.large_X[:n_many], np.arange(n_many) % MANY_CLASSES

    def classifier(X_fit: np.ndarray, y_fit: np.ndarray, **params: Any) -> Callable[[], Any]:
        return lambda: Classifier(**params).fit(X_fit, y_fit).predict(X_fit)

    def regressor(X_fit: np.ndarray, y_fit: np.ndarray, **params: Any) -> Callable[[], Any]:
        return lambda: Regressor(**params).fit(X_fit, y_fit).predict(X_fit)

    def pruning() -> None:
        Classifier(ccp_alpha=0.01).fit(X, y).cost_complexity_pruning_path(X, y)

    def many_classes() -> None:
        Classifier().fit(X_many, y_many).predict_proba(X_many)

    return [
        FirstUse("iris", "first fit + predict (iris)", classifier(X, y)),
        FirstUse("regressor", "regressor", regressor(DX, Dy)),
        FirstUse("hist", "splitter='hist'", classifier(X, y, splitter="hist")),
        FirstUse("random", "splitter='random'", classifier(X, y, splitter="random")),
        FirstUse("entropy", "criterion='entropy'", classifier(X, y, criterion="entropy")),
        FirstUse("gain_ratio", "criterion='gain_ratio'", classifier(X, y, criterion="gain_ratio")),
        FirstUse("poisson", "criterion='poisson'",
                 regressor(DX, Dy / Dy.mean(), criterion="poisson")),
        FirstUse("absolute_error", "criterion='absolute_error'",
                 regressor(DX, Dy, criterion="absolute_error")),
        FirstUse("nan", "NaN in X", classifier(X_nan, y)),
        FirstUse("categorical", "categorical feature",
                 classifier(X_cat, y, categorical_features=[0])),
        FirstUse("multi-output", "multi-output y", classifier(X, y_two)),
        FirstUse("many-classes", f"{MANY_CLASSES} classes", many_classes),
        FirstUse("n_jobs", f"n_jobs=-1 ({PARALLEL_ROWS:,} x 20)",
                 classifier(data.large_X, data.large_y, n_jobs=-1)),
        FirstUse("pruning", "pruning (ccp_alpha, cost_complexity_pruning_path)", pruning),
        FirstUse("mdlp", "MDLPDiscretizer", lambda: MDLPDiscretizer().fit(X, y).transform(X)),
        FirstUse("decision_path", "decision_path",
                 lambda: Classifier().fit(X, y).decision_path(X)),
    ]  # fmt: skip


def select(paths: list[FirstUse], keys: list[str] | None) -> list[FirstUse]:
    """Return the paths whose keys are given (all for None), in the list's order.

    An unknown key raises ``ValueError`` naming the known ones.
    """
    if keys is None:
        return list(paths)
    known = [p.key for p in paths]
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise ValueError(f"unknown path {unknown[0]!r}; the paths are: {', '.join(known)}")
    return [p for p in paths if p.key in keys]
