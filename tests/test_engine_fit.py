"""The engine's entry point: ``dtjit.engine.fit(FitSpec, X, y, sample_weight)``.

A spec written out by hand gives the very tree the estimator builds (the estimator resolves
its parameters into the same record), and the engine's modules import nothing from dtjit
outside ``dtjit.engine``, nor scikit-learn.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import numpy as np
import pytest

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor, engine
from dtjit._estimators import MAX_DEPTH_UNLIMITED
from dtjit._tree import Tree
from dtjit.engine.jit import CRITERION_CODES

N_FEATURES = 5
CAT = 3  # the column of category codes
N_CATEGORIES = 7


def _data(n: int = 600, seed: int = 0):
    """X (float32, C order, NaN in two columns), 3 classes, a target, positive weights."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.integers(0, 30, n),
            rng.normal(size=n),
            rng.random(n) < 0.3,
            rng.integers(0, N_CATEGORIES, n),
            rng.normal(size=n),
        ]
    ).astype(np.float32)
    X[rng.random(n) < 0.06, 1] = np.nan
    X[rng.random(n) < 0.04, CAT] = np.nan
    labels = (X[:, 0] // 8 + X[:, 2] + (X[:, CAT] % 3 == 1) + (rng.random(n) < 0.2)) % 3
    target = X[:, 0] * 0.1 + np.nan_to_num(X[:, 1]) + 2.0 * (X[:, CAT] == 2) + rng.normal(size=n)
    weight = rng.uniform(0.5, 2.0, n)
    return X, labels.astype(np.int64), target.astype(np.float64), weight


def _spec(**settings) -> engine.FitSpec:
    """A spec with the estimators' defaults (gini, best splitter, no limits), then ``settings``."""
    base = {
        "splitter": "best",
        "criterion": CRITERION_CODES["gini"],
        "is_regression": False,
        "n_outputs": 1,
        "n_classes": np.array([3], dtype=np.intp),
        "max_depth": MAX_DEPTH_UNLIMITED,
        "min_samples_split": 2,
        "min_samples_leaf": 1,
        "min_weight_leaf": 0.0,
        "min_impurity_decrease": 0.0,
        "max_features": N_FEATURES,
        "max_leaf_nodes": -1,
        "max_bins": 255,
        "mdl_stop": False,
        "rng_state": np.array([1], dtype=np.uint64),
        "n_threads": 1,
        "cat_slot": np.full(N_FEATURES, -1, dtype=np.int32),
        "n_words": 1,
    }
    base.update(settings)
    return engine.FitSpec(**base)


def _categorical_slots() -> np.ndarray:
    cat_slot = np.full(N_FEATURES, -1, dtype=np.int32)
    cat_slot[CAT] = 0
    return cat_slot


def _seed_state(random_state: int) -> np.ndarray:
    """The generator state the estimators draw from ``random_state``."""
    seed = np.random.RandomState(random_state).randint(1, np.iinfo(np.int64).max, dtype=np.int64)
    return np.array([seed], dtype=np.uint64)


def _assert_same_tree(result: engine.FitResult, est) -> None:
    """Every array of the engine's result equals the estimator's tree bit for bit."""
    tree = est.tree_
    expected = {**tree.to_arrays(), **tree.categorical_arrays(), **tree.optional_arrays()}
    got = result.tree._asdict()
    assert set(got) == set(expected)
    for name, array in got.items():
        assert array.dtype == expected[name].dtype, name
        assert array.shape == expected[name].shape, name
        assert array.tobytes() == expected[name].tobytes(), name
    np.testing.assert_array_equal(result.features_with_missing, est.features_with_missing_)
    # The arrays are Tree's keyword arguments: they pass its invariant checker.
    Tree(n_features=N_FEATURES, n_classes=tree.n_classes, **got)


def _codes(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].astype(np.int32)


# name -> (estimator, spec settings, task): task picks y and sample_weight from _data.
CASES = {
    "exact": (DecisionTreeClassifier(), {}, "class"),
    "exact_weighted_best_first": (
        DecisionTreeClassifier(criterion="entropy", max_leaf_nodes=20),
        {"criterion": CRITERION_CODES["entropy"], "max_leaf_nodes": 20},
        "class_weighted",
    ),
    "random": (
        DecisionTreeClassifier(splitter="random", random_state=7, max_depth=6),
        {"splitter": "random", "rng_state": _seed_state(7), "max_depth": 6},
        "class",
    ),
    "hist": (
        DecisionTreeClassifier(splitter="hist", max_bins=16, min_samples_leaf=3),
        {"splitter": "hist", "max_bins": 16, "min_samples_leaf": 3, "min_samples_split": 6},
        "class",
    ),
    "regression": (
        DecisionTreeRegressor(max_depth=7, min_impurity_decrease=1e-3),
        {
            "criterion": CRITERION_CODES["squared_error"],
            "is_regression": True,
            "n_classes": np.ones(1, dtype=np.intp),
            "max_depth": 7,
            "min_impurity_decrease": 1e-3,
        },
        "regression_weighted",
    ),
    "regression_hist": (
        DecisionTreeRegressor(splitter="hist", max_depth=6),
        {
            "splitter": "hist",
            "criterion": CRITERION_CODES["squared_error"],
            "is_regression": True,
            "n_classes": np.ones(1, dtype=np.intp),
            "max_depth": 6,
        },
        "regression",
    ),
    "categorical": (
        DecisionTreeClassifier(categorical_features=[CAT], max_depth=8),
        {"cat_slot": _categorical_slots(), "max_depth": 8},
        "class",
    ),
    "categorical_hist": (
        DecisionTreeRegressor(categorical_features=[CAT], splitter="hist", max_depth=8),
        {
            "splitter": "hist",
            "criterion": CRITERION_CODES["squared_error"],
            "is_regression": True,
            "n_classes": np.ones(1, dtype=np.intp),
            "cat_slot": _categorical_slots(),
            "max_depth": 8,
        },
        "regression",
    ),
    "multi_output": (
        DecisionTreeClassifier(max_depth=8),
        {"n_outputs": 2, "n_classes": np.array([3, 2], dtype=np.intp), "max_depth": 8},
        "class_two_outputs",
    ),
    "multi_output_regression": (
        DecisionTreeRegressor(max_leaf_nodes=15),
        {
            "criterion": CRITERION_CODES["squared_error"],
            "is_regression": True,
            "n_outputs": 2,
            "n_classes": np.ones(2, dtype=np.intp),
            "max_leaf_nodes": 15,
        },
        "regression_two_outputs",
    ),
}


def _task(task: str, labels, target, weight):
    """Return ``(y for the estimator, y for the engine, sample_weight or None)``."""
    if task.startswith("class"):
        if task == "class_two_outputs":
            y = np.column_stack([labels, labels % 2])
            codes = np.column_stack([_codes(y[:, 0]), _codes(y[:, 1])]).astype(np.int32)
            return y, codes, None
        return labels, _codes(labels), weight if task == "class_weighted" else None
    if task == "regression_two_outputs":
        y = np.column_stack([target, -2.0 * target + 1.0])
        return y, np.ascontiguousarray(y), None
    return target, target, weight if task == "regression_weighted" else None


@pytest.mark.parametrize("case", list(CASES))
def test_engine_fit_grows_the_estimators_tree(case):
    est, settings, task = CASES[case]
    X, labels, target, weight = _data()
    y_est, y_engine, w = _task(task, labels, target, weight)
    est.fit(X, y_est, sample_weight=w)
    w_engine = np.ones(X.shape[0]) if w is None else w.copy()
    result = engine.fit(_spec(**settings), X, y_engine, w_engine)
    _assert_same_tree(result, est)


def test_engine_fit_drops_rows_of_zero_weight_and_keeps_weights_units():
    X, _, target, weight = _data(seed=1)
    weight[::4] = 0.0
    spec = _spec(
        criterion=CRITERION_CODES["squared_error"],
        is_regression=True,
        n_classes=np.ones(1, dtype=np.intp),
        max_depth=4,
    )
    result = engine.fit(spec, X, target, weight)
    assert result.tree.n_node_samples[0] == np.count_nonzero(weight)
    np.testing.assert_allclose(result.tree.weighted_n_node_samples[0], weight.sum())
    est = DecisionTreeRegressor(max_depth=4).fit(X, target, sample_weight=weight)
    _assert_same_tree(result, est)


def test_engine_fit_rescales_extreme_weights_and_reports_them_in_their_units():
    """Weights near 1e300 are rescaled by a power of two inside and back outside."""
    X, labels, _, weight = _data(seed=2)
    huge = weight * 1e300
    result = engine.fit(_spec(max_depth=3), X, _codes(labels), huge)
    assert np.isfinite(result.tree.impurity).all()
    np.testing.assert_allclose(result.tree.weighted_n_node_samples[0], huge.sum(), rtol=1e-12)
    est = DecisionTreeClassifier(max_depth=3).fit(X, labels, sample_weight=huge)
    _assert_same_tree(result, est)


def test_engine_fit_refuses_an_unknown_splitter():
    X, labels, _, _ = _data(n=20)
    with pytest.raises(ValueError, match="FitSpec.splitter must be one of"):
        engine.fit(_spec(splitter="exact"), X, _codes(labels), np.ones(20))


def test_engine_errors_keep_their_messages():
    X, labels, _, _ = _data(n=8)
    weight = np.array([1e-310, 1.0, 1e300, 1.0, 1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="sample_weight spans more than float64 can hold"):
        engine.fit(_spec(), X, _codes(labels), weight)
    cat_slot = np.zeros(N_FEATURES, dtype=np.int32) - 1
    cat_slot[0] = 0
    X_codes = np.c_[np.arange(300.0), np.zeros((300, N_FEATURES - 1))].astype(np.float32)
    with pytest.raises(ValueError, match="categorical feature 0 needs 300 bins"):
        engine.fit(
            _spec(splitter="hist", cat_slot=cat_slot, n_words=5),
            X_codes,
            np.zeros(300, dtype=np.int32),
            np.ones(300),
        )


# -- the layer rule: the engine imports numpy, numba (llvmlite), the standard library and
# itself only -------------------------------------------------------------------------------
ENGINE = pathlib.Path(dtjit.__file__).parent / "engine"
ALLOWED_ROOTS = {"numpy", "numba", "llvmlite"} | set(sys.stdlib_module_names)


def _outside_imports(source: str) -> list[str]:
    """Return the imports of a dtjit.engine module's source that leave the engine."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1:
                continue  # from . / from .module: inside dtjit.engine
            if node.level > 1:
                bad.append("." * node.level + (node.module or ""))
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            root = name.split(".")[0]
            if root == "dtjit":
                if name != "dtjit.engine" and not name.startswith("dtjit.engine."):
                    bad.append(name)
            elif root not in ALLOWED_ROOTS:
                bad.append(name)
    return bad


def test_import_scan_flags_imports_that_leave_the_engine():
    source = (
        "import numpy as np\nfrom numba import prange\nfrom . import grow\n"
        "from .records import FitSpec\nimport dtjit.engine.jit\nimport warnings\n"
        "from .. import _tree\nfrom ..predict import walk\nimport sklearn.tree\n"
        "from dtjit import _estimators\nimport scipy\n"
        "def f():\n    from dtjit._tree import Tree\n"
    )
    assert _outside_imports(source) == [
        "..",
        "..predict",
        "sklearn.tree",
        "dtjit",
        "scipy",
        "dtjit._tree",
    ]


def test_engine_imports_nothing_outside_the_engine():
    modules = sorted(ENGINE.glob("*.py"))
    assert {"pipeline.py", "prepare.py", "finish.py", "grow.py"} <= {m.name for m in modules}
    found = {m.name: _outside_imports(m.read_text()) for m in modules}
    assert {name: bad for name, bad in found.items() if bad} == {}
