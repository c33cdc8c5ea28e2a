"""The estimator layer: input validation, input kinds, threads, pickling, fitted attributes."""

from __future__ import annotations

import inspect
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numba
import numpy as np
import pandas as pd
import pytest
from _assertions import assert_trees_identical
from scipy import sparse
from sklearn import tree as sklearn_tree
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.utils import compute_sample_weight

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
from dtjit._estimators import _encode_labels
from dtjit.engine.prepare import MAX_SORTED_CODES
from dtjit.engine.prepare import sorted_class_codes as _sorted_codes

ESTIMATORS = [DecisionTreeClassifier, DecisionTreeRegressor]


def iris_task(iris_data, est_class):
    """Iris with the class labels as target, or petal width as a regression target."""
    X, y = iris_data
    if est_class is DecisionTreeRegressor:
        return X[:, :3], X[:, 3]
    return X, y


# ------------------------------------------------------------------------- (a) bad input
def _with_value(X, row, col, value):
    X = X.astype(np.float64, copy=True)
    X[row, col] = value
    return X


BAD_FIT_DATA = [
    # id, make (X, y) from iris (X, y), expected match
    ("inf-in-X", lambda X, y: (_with_value(X, 3, 1, np.inf), y), "Input X contains infinity"),
    ("-inf-in-X", lambda X, y: (_with_value(X, 0, 0, -np.inf), y), "Input X contains infinity"),
    (
        "X-too-large-for-float32",
        lambda X, y: (_with_value(X, 0, 0, 1e39), y),
        "too large for dtype\\('float32'\\)",
    ),
    (
        "nan-in-y",
        lambda X, y: (X, np.where(np.arange(len(y)) == 7, np.nan, y)),
        "Input y contains NaN",
    ),
    ("1-D-X", lambda X, y: (X[:, 0], y), "Expected 2D array, got 1D array"),
    ("3-D-X", lambda X, y: (X.reshape(len(X), 2, 2), y), "Found array with dim 3"),
    ("X-y-lengths", lambda X, y: (X, y[:-1]), "inconsistent numbers of samples: \\[150, 149\\]"),
    (
        "object-strings-X",
        lambda X, y: (np.array([["a", "b"], ["c", "d"]], dtype=object), y[:2]),
        "could not convert string to float",
    ),
    (
        "unicode-X",
        lambda X, y: (np.array([["a", "b"], ["c", "d"]]), y[:2]),
        "could not convert string to float",
    ),
    ("empty-X", lambda X, y: (np.empty((0, 4)), y[:0]), "0 sample\\(s\\)"),
    ("no-features", lambda X, y: (np.empty((150, 0)), y), "0 feature\\(s\\)"),
    ("complex-X", lambda X, y: (X.astype(complex), y), "Complex data not supported"),
    ("3-D-y", lambda X, y: (X, y.reshape(-1, 1, 1)), "Found array with dim 3"),
]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "make_data, match", [(m, p) for _, m, p in BAD_FIT_DATA], ids=[i for i, _, _ in BAD_FIT_DATA]
)
def test_fit_rejects_bad_data(iris_data, est_class, make_data, match):
    X, y = make_data(*iris_data)
    with pytest.raises(ValueError, match=match):
        est_class().fit(X, y)


@pytest.mark.parametrize("splitter", ["best", "random", "hist"])
def test_one_sample_fits_one_leaf_like_sklearn(iris_data, splitter):
    X, y = iris_data
    for ours, theirs, target in (
        (DecisionTreeClassifier, sklearn_tree.DecisionTreeClassifier, y[100:101]),
        (DecisionTreeRegressor, sklearn_tree.DecisionTreeRegressor, X[100:101, 0]),
    ):
        est = ours(splitter=splitter).fit(X[100:101], target)
        ref = theirs(splitter="random" if splitter == "random" else "best")
        ref.fit(X[100:101], target)
        assert est.tree_.node_count == ref.tree_.node_count == 1
        np.testing.assert_array_equal(est.predict(X), ref.predict(X))
        np.testing.assert_array_equal(est.tree_.value, ref.tree_.value)


def test_fit_rejects_sparse_X(iris_data):
    X, y = iris_data
    with pytest.raises(TypeError, match="Sparse data was passed"):
        DecisionTreeClassifier().fit(sparse.csr_matrix(X), y)


def test_classifier_rejects_continuous_target(iris_data):
    X, _ = iris_data
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        DecisionTreeClassifier().fit(X, X[:, 0] + 0.01)


def test_regressor_rejects_string_target(iris_data):
    X, y = iris_data
    with pytest.raises(ValueError, match="could not convert string to float"):
        DecisionTreeRegressor().fit(X, np.array(["a", "b", "c"])[y])


BAD_PARAMS = [
    ({"criterion": "foo"}, "'criterion' parameter"),
    ({"splitter": "foo"}, "'splitter' parameter"),
    ({"splitter": "Hist"}, "'splitter' parameter"),
    ({"max_bins": 1}, "'max_bins' parameter"),
    ({"max_bins": 256}, "'max_bins' parameter"),
    ({"max_bins": 16.0}, "'max_bins' parameter"),
    ({"max_depth": 0}, "'max_depth' parameter"),
    ({"max_depth": -1}, "'max_depth' parameter"),
    ({"max_depth": 1.5}, "'max_depth' parameter"),
    ({"min_samples_split": 1}, "'min_samples_split' parameter"),
    ({"min_samples_split": 0.0}, "'min_samples_split' parameter"),
    ({"min_samples_split": 1.5}, "'min_samples_split' parameter"),
    ({"min_samples_leaf": 0}, "'min_samples_leaf' parameter"),
    ({"min_samples_leaf": 1.0}, "'min_samples_leaf' parameter"),
    ({"min_weight_fraction_leaf": 0.6}, "'min_weight_fraction_leaf' parameter"),
    ({"min_weight_fraction_leaf": -0.1}, "'min_weight_fraction_leaf' parameter"),
    ({"max_features": 0}, "'max_features' parameter"),
    ({"max_features": "foo"}, "'max_features' parameter"),
    ({"max_features": 0.0}, "'max_features' parameter"),
    ({"max_features": 1.5}, "'max_features' parameter"),
    ({"max_leaf_nodes": 1}, "'max_leaf_nodes' parameter"),
    ({"min_impurity_decrease": -1}, "'min_impurity_decrease' parameter"),
    ({"n_jobs": 0}, "n_jobs == 0 has no meaning"),
    ({"n_jobs": 1.5}, "'n_jobs' parameter"),
    ({"random_state": "seed"}, "'random_state' parameter"),
]


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "params, match", BAD_PARAMS, ids=[f"{k}={v!r}" for p, _ in BAD_PARAMS for k, v in p.items()]
)
def test_fit_rejects_bad_parameters(iris_data, est_class, params, match):
    X, y = iris_data
    est = est_class(**params)  # __init__ only stores
    assert est.get_params()[next(iter(params))] is next(iter(params.values()))
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


@pytest.mark.parametrize(
    "est_class, params",
    [
        (DecisionTreeClassifier, {"criterion": "squared_error"}),
        (DecisionTreeRegressor, {"criterion": "gini"}),
        (DecisionTreeClassifier, {"class_weight": "foo"}),
    ],
    ids=["clf-squared_error", "reg-gini", "class_weight=foo"],
)
def test_fit_rejects_criterion_of_other_task(iris_data, est_class, params):
    X, y = iris_data
    with pytest.raises(ValueError, match=f"'{next(iter(params))}' parameter"):
        est_class(**params).fit(X, y)


BAD_WEIGHTS = [
    ("negative", lambda n: np.r_[-1.0, np.ones(n - 1)], "Negative values .*sample_weight"),
    ("all-zero", lambda n: np.zeros(n), "at least one non-zero"),
    ("too-short", lambda n: np.ones(n - 1), "sample_weight.shape == \\(149,\\), expected"),
    ("too-long", lambda n: np.ones(n + 1), "sample_weight.shape == \\(151,\\), expected"),
    ("nan", lambda n: np.r_[np.nan, np.ones(n - 1)], "sample_weight contains NaN"),
    ("inf", lambda n: np.r_[np.inf, np.ones(n - 1)], "sample_weight contains infinity"),
    ("2-D", lambda n: np.ones((n, 1)), "Sample weights must be 1D"),
]


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "make_weight, match", [(m, p) for _, m, p in BAD_WEIGHTS], ids=[i for i, _, _ in BAD_WEIGHTS]
)
def test_fit_rejects_bad_sample_weight(iris_data, est_class, make_weight, match):
    X, y = iris_data
    with pytest.raises(ValueError, match=match):
        est_class().fit(X, y, sample_weight=make_weight(len(y)))


@pytest.mark.parametrize(
    "est_class, method",
    [(DecisionTreeClassifier, m) for m in ("predict_proba", "predict_log_proba")]
    + [(c, m) for c in ESTIMATORS for m in ("predict", "apply", "decision_path", "score")],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_methods_before_fit_raise_not_fitted(iris_data, est_class, method):
    X, y = iris_data
    args = (X, y) if method == "score" else (X,)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        getattr(est_class(), method)(*args)


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "inspect",
    [
        lambda e: e.get_depth(),
        lambda e: e.get_n_leaves(),
        lambda e: e.feature_importances_,
        lambda e: dtjit.export_rules(e),
    ],
    ids=["get_depth", "get_n_leaves", "feature_importances_", "export_rules"],
)
def test_inspection_before_fit_raises_not_fitted(est_class, inspect):
    with pytest.raises(NotFittedError):
        inspect(est_class())


BAD_PREDICT_DATA = [
    ("inf-in-X", lambda X: _with_value(X, 3, 1, np.inf), "Input X contains infinity"),
    ("too-few-features", lambda X: X[:, :3], "X has 3 features, but .* is expecting 4"),
    ("too-many-features", lambda X: np.c_[X, X], "X has 8 features, but .* is expecting 4"),
    ("1-D-X", lambda X: X[0], "Expected 2D array, got 1D array"),
    ("3-D-X", lambda X: X.reshape(len(X), 2, 2), "Found array with dim 3"),
    ("empty-X", lambda X: X[:0], "0 sample\\(s\\)"),
    ("strings", lambda X: X.astype(str), "could not convert string to float|dtype"),
]


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("method", ["predict", "apply", "decision_path"])
@pytest.mark.parametrize(
    "make_X, match",
    [(m, p) for _, m, p in BAD_PREDICT_DATA],
    ids=[i for i, _, _ in BAD_PREDICT_DATA],
)
def test_predict_rejects_bad_data(iris_data, est_class, method, make_X, match):
    X, y = iris_data
    est = est_class(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match=match):
        getattr(est, method)(make_X(X))


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "columns, match",
    [
        (["a", "b", "c", "z"], "Feature names unseen at fit time:\n- z"),
        (["b", "a", "c", "d"], "must be in the same order"),
    ],
    ids=["renamed", "reordered"],
)
def test_predict_rejects_other_dataframe_columns(iris_data, est_class, columns, match):
    X, y = iris_data
    est = est_class(max_depth=3).fit(pd.DataFrame(X, columns=list("abcd")), y)
    with pytest.raises(ValueError, match=match):
        est.predict(pd.DataFrame(X, columns=columns))


# ------------------------------------------------------------------------- (b) input kinds
def _input_kinds(X, tmp_path, tag):
    """The same matrix as every kind of input a user may pass; all must give the same trees."""
    X = np.asarray(X, dtype=np.float64)
    doubled = np.empty((2 * X.shape[0], X.shape[1]), dtype=np.float64)
    doubled[::2] = X
    doubled[1::2] = -1.0
    readonly = X.copy()
    readonly.setflags(write=False)
    readonly32 = X.astype(np.float32)
    readonly32.setflags(write=False)
    mm64 = np.memmap(tmp_path / f"{tag}64.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mm64[:] = X
    mm64.flush()
    mm32 = np.memmap(tmp_path / f"{tag}32.dat", dtype=np.float32, mode="w+", shape=X.shape)
    mm32[:] = X
    mm32.flush()
    return {
        "float64": X,
        "float32": X.astype(np.float32),
        "int64": X.astype(np.int64),
        "int32": X.astype(np.int32),
        "uint8": X.astype(np.uint8),
        "F-order": np.asfortranarray(X),
        "F-order-float32": np.asfortranarray(X, dtype=np.float32),
        "sliced": doubled[::2],
        "column-sliced": np.c_[X, X][:, : X.shape[1]],
        "read-only": readonly,
        "read-only-float32": readonly32,
        "memmap-r": np.memmap(tmp_path / f"{tag}64.dat", dtype=np.float64, mode="r", shape=X.shape),
        "memmap-r+-float32": mm32,
        "list": X.tolist(),
        "DataFrame": pd.DataFrame(X),
        "DataFrame-mixed-dtypes": pd.DataFrame(
            {f: (X[:, f].astype(np.int64) if f % 2 else X[:, f]) for f in range(X.shape[1])}
        ),
    }


@pytest.fixture(scope="module")
def integer_valued_data(iris_data, diabetes_data):
    """Iris and diabetes scaled to integer values, so every dtype holds them exactly."""
    Xc, yc = iris_data
    Xr, yr = diabetes_data
    return {
        DecisionTreeClassifier: (np.rint(Xc * 10), yc),
        DecisionTreeRegressor: (np.rint(Xr * 1000) % 256, yr),  # uint8-representable
    }


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_input_kind_gives_the_same_fit_and_predictions(
    integer_valued_data, est_class, tmp_path
):
    X, y = integer_valued_data[est_class]
    kinds = _input_kinds(X, tmp_path, "x")
    reference = est_class(random_state=0).fit(X, y)
    expected = {"apply": reference.apply(X), "predict": reference.predict(X)}
    if est_class is DecisionTreeClassifier:
        expected["predict_proba"] = reference.predict_proba(X)
    expected_path = reference.decision_path(X).toarray()
    for name, Xk in kinds.items():
        est = est_class(random_state=0).fit(Xk, y)
        assert_trees_identical(est, reference)
        for method, want in expected.items():
            got = getattr(reference, method)(Xk)
            np.testing.assert_array_equal(got, want, err_msg=f"{method} on {name}")
        np.testing.assert_array_equal(reference.decision_path(Xk).toarray(), expected_path)


def test_input_kinds_reach_each_kernel_with_one_signature(tmp_path):
    """Inputs are normalised at the boundary: one compiled signature per entry kernel.

    Runs in a fresh interpreter so that kernels compiled by other tests do not count.
    """
    script = textwrap.dedent(
        """
        import pathlib, sys
        import numpy as np
        sys.path.insert(0, {tests!r})
        from test_estimators import _input_kinds
        from sklearn.datasets import load_iris, load_diabetes
        from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
        from dtjit.engine import binning
        from dtjit.engine import choose
        from dtjit.engine import grow
        from dtjit.predict import walk
        from dtjit.engine import sweep_exact
        from dtjit.engine import sweep_two_valued

        tmp = pathlib.Path(sys.argv[1])
        sweep_two_valued.MIN_ROWS = 0  # the 0/1 column below is searched from bits at any size
        sweep_exact.PRESORT_KERNEL_MIN_ROWS = 0  # the radix presort at any size
        Xc, yc = load_iris(return_X_y=True)
        Xr, yr = load_diabetes(return_X_y=True)
        # The last column is 0/1: the classifier searches it from bits (sweep_two_valued).
        Xc = np.c_[np.rint(Xc * 10), Xc[:, 0] > 5.8]
        for est, X, y in [
            (DecisionTreeClassifier(), Xc, yc),
            (DecisionTreeRegressor(max_depth=6), np.rint(Xr * 1000) % 256, yr),
            (DecisionTreeClassifier(splitter="hist", max_bins=np.int64(40)), Xc, yc),
            (DecisionTreeRegressor(splitter="hist", max_depth=4), np.rint(Xr * 1000) % 256, yr),
            (DecisionTreeRegressor(splitter="random", random_state=0), np.rint(Xr * 1000), yr),
        ]:
            for name, Xk in _input_kinds(X, tmp, type(est).__name__).items():
                est.fit(Xk, y)
                est.predict(Xk)
                est.apply(Xk)
                est.decision_path(Xk)
                if hasattr(est, "predict_proba"):
                    est.predict_proba(Xk)
        # Read-only targets and weights (pandas' to_numpy under copy-on-write) are no new kind.
        y_ro, w_ro = yr.copy(), np.linspace(0.5, 2.0, len(yr))
        y_ro.setflags(write=False)
        w_ro.setflags(write=False)
        for splitter in ("best", "hist"):
            DecisionTreeRegressor(splitter=splitter, max_depth=4).fit(Xr, y_ro, w_ro)
        modules = {{"walk": walk, "grow": grow, "choose": choose, "binning": binning,
                    "sweep_exact": sweep_exact, "sweep_two_valued": sweep_two_valued}}
        # Trailing arguments that are switches (True or None): each value a fit uses is a
        # signature of its own, on purpose, so they are left out of the count.
        for kernel, switches in (("walk.route_rows_serial", 1),
                                 ("walk.decision_path_rows", 0),
                                 ("choose.count_children", 0), ("choose.sum_children", 1),
                                 ("choose.accept_splits", 1), ("grow.mark_sides", 0),
                                 ("grow.split_nodes", 1),
                                 ("binning.code_rows", 0), ("sweep_exact.sort_columns", 0),
                                 ("sweep_two_valued.scan_chunks", 0),
                                 ("sweep_two_valued.fill_high_bits", 0)):
            module, attr = kernel.split(".")
            dispatcher = getattr(modules[module], attr)
            kinds = {{s[:len(s) - switches] for s in dispatcher.signatures}}
            print(kernel, len(kinds), dispatcher.signatures)
        """
    ).format(tests=os.path.dirname(os.path.abspath(__file__)))
    out = _run_python(script, str(tmp_path))
    counts = {line.split()[0]: int(line.split()[1]) for line in out.splitlines() if line}
    assert counts == {
        "walk.route_rows_serial": 1,
        "walk.decision_path_rows": 1,
        "choose.count_children": 1,
        "choose.sum_children": 1,
        "choose.accept_splits": 1,
        "grow.mark_sides": 1,
        "grow.split_nodes": 1,
        "binning.code_rows": 1,
        "sweep_exact.sort_columns": 1,
        "sweep_two_valued.scan_chunks": 1,
        "sweep_two_valued.fill_high_bits": 1,
    }, out


def test_numpy_scalar_parameters_do_not_add_builder_signatures():
    script = textwrap.dedent(
        """
        import numpy as np
        from sklearn.datasets import load_iris
        from dtjit import DecisionTreeClassifier
        from dtjit.engine import grow

        X, y = load_iris(return_X_y=True)
        DecisionTreeClassifier(max_depth=3).fit(X, y)
        DecisionTreeClassifier(max_depth=np.int32(3)).fit(X, y)
        DecisionTreeClassifier(max_depth=np.int64(3), min_impurity_decrease=np.float32(0.0),
                               max_leaf_nodes=np.int32(5)).fit(X, y)
        print(len(grow.mark_sides.signatures))
        """
    )
    assert _run_python(script).strip() == "1"


def _run_python(script: str, *args: str, timeout: float = 300) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# --------------------------------------------------------------------------- (c) threads
needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has a single thread here"
)


@pytest.fixture(scope="module")
def large_classification():
    # 600_000 cells: above PARALLEL_MIN_WORK, so presort, split search, partition and
    # prediction all take their parallel paths at n_jobs=2.
    return make_classification(
        n_samples=60_000, n_features=10, n_informative=6, n_classes=3, random_state=0
    )


@pytest.fixture(scope="module")
def large_regression():
    return make_regression(n_samples=60_000, n_features=10, noise=5.0, random_state=0)


@needs_two_threads
@pytest.mark.parametrize(
    "params",
    [{}, {"max_leaf_nodes": 400}, {"max_features": 4, "random_state": 3}, {"max_depth": 8}],
    ids=["default", "best-first", "max_features", "max_depth"],
)
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_parallel_fit_is_bit_identical_to_serial(
    large_classification, large_regression, params, task
):
    if task == "classification":
        X, y = large_classification
        est_class = DecisionTreeClassifier
    else:
        X, y = large_regression
        est_class = DecisionTreeRegressor
    serial = est_class(n_jobs=1, **params).fit(X, y)
    parallel = est_class(n_jobs=2, **params).fit(X, y)
    assert_trees_identical(parallel, serial)
    assert serial.tree_.node_count > 100
    np.testing.assert_array_equal(parallel.apply(X), serial.apply(X))
    np.testing.assert_array_equal(parallel.predict(X), serial.predict(X))
    if task == "classification":
        np.testing.assert_array_equal(parallel.predict_proba(X), serial.predict_proba(X))
    # Prediction threads are independent of fitting threads.
    serial.set_params(n_jobs=-1)
    np.testing.assert_array_equal(serial.apply(X), parallel.apply(X))


@needs_two_threads
def test_n_jobs_restores_numba_thread_count(large_classification):
    X, y = large_classification
    before = numba.get_num_threads()
    est = DecisionTreeClassifier(n_jobs=2, max_depth=3).fit(X[:20_000], y[:20_000])
    assert numba.get_num_threads() == before
    est.set_params(n_jobs=1).predict(X)
    assert numba.get_num_threads() == before
    # set_params after fit is not validated until predict uses the value, small X included
    for bad in ("2", 1.5, 0):
        est.set_params(n_jobs=bad)
        for rows in (X[:5], X):
            with pytest.raises(ValueError, match="n_jobs"):
                est.predict(rows)
            assert numba.get_num_threads() == before


# -------------------------------------------------------------------------- (d) pickling
@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("params", [{}, {"max_leaf_nodes": 7}], ids=["level-wise", "best-first"])
def test_pickle_round_trip(breast_cancer_data, est_class, params):
    X, y = breast_cancer_data
    if est_class is DecisionTreeRegressor:
        y = X[:, 0] * 3 + y
        X = X[:, 1:]
    est = est_class(random_state=0, **params).fit(X, y)
    clone = pickle.loads(pickle.dumps(est))
    assert_trees_identical(clone, est)
    assert clone.get_params() == est.get_params()
    np.testing.assert_array_equal(clone.predict(X), est.predict(X))
    np.testing.assert_array_equal(clone.apply(X), est.apply(X))
    if est_class is DecisionTreeClassifier:
        np.testing.assert_array_equal(clone.predict_proba(X), est.predict_proba(X))
        np.testing.assert_array_equal(clone.classes_, est.classes_)


# ------------------------------------------------------------------- (e) fitted attributes
def test_fitted_attributes_of_classifier(iris_data):
    X, y = iris_data
    est = DecisionTreeClassifier(max_depth=3).fit(X, y)
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    assert est.n_classes_ == 3
    assert est.n_features_in_ == 4
    assert est.n_outputs_ == 1
    assert est.max_features_ == 4
    assert not hasattr(est, "feature_names_in_")
    tree = est.tree_
    assert isinstance(tree, dtjit.Tree)
    assert tree.n_features == 4
    assert tree.n_outputs == 1
    np.testing.assert_array_equal(tree.n_classes, [3])
    assert tree.max_n_classes == 3
    assert tree.value.shape == (tree.node_count, 1, 3)
    assert tree.children_left is tree.left and tree.children_right is tree.right


def test_fitted_attributes_of_regressor(diabetes_data):
    X, y = diabetes_data
    est = DecisionTreeRegressor(max_depth=3).fit(X, y)
    assert est.n_features_in_ == 10
    assert est.n_outputs_ == 1
    assert not hasattr(est, "classes_")
    assert est.tree_.value.shape == (est.tree_.node_count, 1, 1)
    np.testing.assert_array_equal(est.tree_.n_classes, [1])
    assert est.get_depth() == 3 and est.get_n_leaves() == 8


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_feature_names_in_with_dataframe(iris_data, est_class):
    X, y = iris_data
    columns = ["sepal length", "sepal width", "petal length", "petal width"]
    est = est_class(max_depth=2).fit(pd.DataFrame(X, columns=columns), y)
    assert est.feature_names_in_.dtype == object
    np.testing.assert_array_equal(est.feature_names_in_, columns)
    # Refitting on an array forgets the names.
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize(
    "max_features, expected",
    [
        (None, 30),
        ("sqrt", 5),
        ("log2", 4),
        (0.5, 15),
        (0.01, 1),
        (3, 3),
        (30, 30),
        (1.0, 30),
        (40, 40),
    ],
)
@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_max_features_resolution(breast_cancer_data, est_class, max_features, expected):
    X, y = breast_cancer_data
    est = est_class(max_features=max_features, random_state=0, max_depth=2).fit(X, y)
    assert est.max_features_ == expected
    sk_class = getattr(sklearn_tree, est_class.__name__)
    sk = sk_class(max_features=max_features, random_state=0, max_depth=2).fit(X, y)
    assert est.max_features_ == sk.max_features_


def _depth_and_leaves_by_walking(tree):
    depth, leaves, stack = 0, 0, [(0, 0)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        if tree.children_left[node] == -1:
            leaves += 1
        else:
            stack += [(tree.children_left[node], d + 1), (tree.children_right[node], d + 1)]
    return depth, leaves


@pytest.mark.parametrize(
    "params", [{}, {"max_depth": 4}, {"max_leaf_nodes": 9}, {"min_samples_leaf": 20}]
)
@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_get_depth_and_n_leaves_agree_with_tree(breast_cancer_data, est_class, params):
    X, y = breast_cancer_data
    est = est_class(**params).fit(X, y)
    tree = est.tree_
    depth, leaves = _depth_and_leaves_by_walking(tree)
    assert est.get_depth() == tree.max_depth == depth == tree.node_depth.max()
    assert est.get_n_leaves() == tree.n_leaves == leaves
    assert tree.node_count == 2 * leaves - 1
    assert len(tree.children_left) == len(tree.children_right) == tree.node_count
    if "max_leaf_nodes" in params:
        assert leaves <= params["max_leaf_nodes"]
    if "max_depth" in params:
        assert depth <= params["max_depth"]


@pytest.fixture(scope="module")
def tie_free_iris(iris_data):
    """Iris without petal width: at depth 2 no two splits tie, and DFS == BFS numbering.

    (With petal width, ``petal length <= 2.45`` and ``petal width <= 0.8`` tie at the root:
    scikit-learn picks one at random, dtjit the lowest feature index.)
    """
    X, y = iris_data
    return X[:, :3], y


@pytest.mark.parametrize("sklearn_seed", [0, 1, 2, 3])
def test_tie_free_iris_depth_2_matches_sklearn_exactly(tie_free_iris, sklearn_seed):
    X, y = tie_free_iris
    est = DecisionTreeClassifier(max_depth=2).fit(X, y)
    sk = sklearn_tree.DecisionTreeClassifier(max_depth=2, random_state=sklearn_seed).fit(X, y)
    ours, theirs = est.tree_, sk.tree_
    assert ours.node_count == theirs.node_count == 5
    assert ours.max_depth == theirs.max_depth == 2
    assert ours.n_leaves == theirs.n_leaves == 3
    np.testing.assert_array_equal(ours.children_left, theirs.children_left)
    np.testing.assert_array_equal(ours.children_right, theirs.children_right)
    np.testing.assert_array_equal(ours.feature, theirs.feature)
    np.testing.assert_array_equal(ours.threshold, theirs.threshold)
    np.testing.assert_array_equal(ours.n_node_samples, theirs.n_node_samples)
    np.testing.assert_allclose(ours.impurity, theirs.impurity, rtol=1e-12)
    np.testing.assert_allclose(ours.value, theirs.value, rtol=1e-12)
    np.testing.assert_allclose(est.feature_importances_, sk.feature_importances_, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), sk.predict(X))
    np.testing.assert_allclose(est.predict_proba(X), sk.predict_proba(X), rtol=1e-12)
    assert sklearn_tree.export_text(est) == sklearn_tree.export_text(sk)


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_feature_importances_sum_to_one(breast_cancer_data, est_class):
    X, y = breast_cancer_data
    est = est_class(max_depth=5).fit(X, y)
    importances = est.feature_importances_
    assert importances.shape == (30,)
    assert (importances >= 0).all()
    np.testing.assert_allclose(importances.sum(), 1.0, rtol=1e-12)
    used = np.unique(est.tree_.feature[est.tree_.feature >= 0])
    assert set(np.flatnonzero(importances)) <= set(used)


def test_feature_importances_of_a_single_leaf_are_zero(iris_data):
    X, _ = iris_data
    est = DecisionTreeClassifier().fit(X, np.zeros(len(X), dtype=int))
    assert est.tree_.node_count == 1
    np.testing.assert_array_equal(est.feature_importances_, np.zeros(4))
    np.testing.assert_array_equal(est.predict_proba(X), np.ones((len(X), 1)))


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_predict_proba_and_log_proba(breast_cancer_data, criterion):
    X, y = breast_cancer_data
    est = DecisionTreeClassifier(criterion=criterion, min_samples_leaf=5).fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 2) and proba.dtype == np.float64
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert (proba == 0).any(), "expect pure leaves, to exercise log(0)"
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(est.predict_log_proba(X), np.log(proba))
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("params", [{}, {"max_leaf_nodes": 12}], ids=["level-wise", "best-first"])
def test_decision_path_is_the_root_to_leaf_path(breast_cancer_data, est_class, params):
    X, y = breast_cancer_data
    est = est_class(random_state=0, **params).fit(X, y)
    tree = est.tree_
    path = est.decision_path(X)
    assert sparse.issparse(path) and path.format == "csr"
    assert path.shape == (len(X), tree.node_count)
    np.testing.assert_array_equal(path.data, 1)
    leaves = est.apply(X)
    X32 = X.astype(np.float32)
    for i in range(len(X)):
        expected, node = [0], 0
        while tree.children_left[node] != -1:
            go_left = X32[i, tree.feature[node]] <= tree.threshold[node]
            node = tree.children_left[node] if go_left else tree.children_right[node]
            expected.append(node)
        row = path.indices[path.indptr[i] : path.indptr[i + 1]]
        np.testing.assert_array_equal(row, expected)
        assert row[-1] == leaves[i]
    assert path.sum(axis=1).max() == tree.max_depth + 1


@pytest.mark.parametrize("as_series", [False, True], ids=["ndarray", "Series"])
def test_string_class_labels(iris_data, as_series):
    X, y = iris_data
    names = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    labels = pd.Series(names) if as_series else names
    est = DecisionTreeClassifier(max_depth=3).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["setosa", "versicolor", "virginica"])
    numeric = DecisionTreeClassifier(max_depth=3).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), est.classes_[numeric.predict(X)])
    np.testing.assert_array_equal(est.predict_proba(X), numeric.predict_proba(X))
    assert est.score(X, labels) == numeric.score(X, y)


def test_unsorted_and_sparse_integer_labels(iris_data):
    X, y = iris_data
    labels = np.array([7, -3, 100])[y]
    est = DecisionTreeClassifier(max_depth=3).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, [-3, 7, 100])
    proba = est.predict_proba(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(proba, axis=1)])
    assert est.score(X, labels) > 0.95


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 5.0}])
def test_class_weight_equals_equivalent_sample_weight(breast_cancer_data, class_weight):
    X, y = breast_cancer_data
    by_class = DecisionTreeClassifier(class_weight=class_weight, max_depth=6).fit(X, y)
    by_sample = DecisionTreeClassifier(max_depth=6).fit(
        X, y, sample_weight=compute_sample_weight(class_weight, y)
    )
    assert_trees_identical(by_class, by_sample)
    unweighted = DecisionTreeClassifier(max_depth=6).fit(X, y)
    assert not np.array_equal(by_class.tree_.value, unweighted.tree_.value)


def test_class_weight_multiplies_sample_weight(breast_cancer_data):
    X, y = breast_cancer_data
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    a = DecisionTreeClassifier(class_weight="balanced", max_depth=5).fit(X, y, sample_weight=w)
    b = DecisionTreeClassifier(max_depth=5).fit(
        X, y, sample_weight=w * compute_sample_weight("balanced", y)
    )
    assert_trees_identical(a, b)


def test_integer_sample_weights_equal_repeated_rows(breast_cancer_data):
    X, y = breast_cancer_data
    w = np.random.default_rng(0).integers(0, 4, len(y))
    weighted = DecisionTreeClassifier(max_depth=4).fit(X, y, sample_weight=w)
    repeated = DecisionTreeClassifier(max_depth=4).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    tw, tr = weighted.tree_, repeated.tree_
    np.testing.assert_array_equal(tw.feature, tr.feature)
    np.testing.assert_array_equal(tw.threshold, tr.threshold)
    np.testing.assert_allclose(tw.value, tr.value, rtol=1e-12)
    np.testing.assert_array_equal(tw.weighted_n_node_samples, tr.n_node_samples)


@pytest.mark.parametrize(
    "fraction_param", [{"min_samples_leaf": 0.1}, {"min_samples_split": 0.3}], ids=lambda p: str(p)
)
def test_fractions_resolve_against_all_rows_without_zero_weights(
    breast_cancer_data, fraction_param
):
    X, y = breast_cancer_data
    ((name, fraction),) = fraction_param.items()
    as_int = {name: int(np.ceil(fraction * len(y)))}
    assert_trees_identical(
        DecisionTreeClassifier(**fraction_param).fit(X, y),
        DecisionTreeClassifier(**as_int).fit(X, y),
    )


@pytest.mark.parametrize(
    "fraction_param", [{"min_samples_leaf": 0.1}, {"min_samples_split": 0.3}], ids=lambda p: str(p)
)
def test_fractions_resolve_against_all_rows_with_zero_weights(breast_cancer_data, fraction_param):
    X, y = breast_cancer_data
    w = np.ones(len(y))
    w[::2] = 0.0
    ((name, fraction),) = fraction_param.items()
    as_int = {name: int(np.ceil(fraction * len(y)))}  # scikit-learn: ceil(fraction * n_samples)
    assert_trees_identical(
        DecisionTreeClassifier(**fraction_param).fit(X, y, sample_weight=w),
        DecisionTreeClassifier(**as_int).fit(X, y, sample_weight=w),
    )


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_sklearn_export_functions_accept_dtjit_estimators(iris_data, est_class):
    X, y = iris_data
    names = ["sl", "sw", "pl", "pw"]
    est = est_class(max_depth=3).fit(X, y)
    text = sklearn_tree.export_text(est, feature_names=names)
    assert text.count("|---") == est.tree_.node_count - 1 + est.get_n_leaves()
    assert "pl <=" in text or "pw <=" in text
    dot = sklearn_tree.export_graphviz(est, feature_names=names, filled=True)
    assert dot.startswith("digraph Tree {")
    assert dot.count(" [label=") == est.tree_.node_count


def test_estimators_are_scikit_learn_estimators(iris_data):
    """scikit-learn's bases and tools take dtjit's trees as their own."""
    from sklearn.base import (
        BaseEstimator,
        ClassifierMixin,
        MultiOutputMixin,
        RegressorMixin,
        clone,
        is_classifier,
        is_regressor,
    )
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.utils import estimator_html_repr

    X, y = iris_data
    clf, reg = DecisionTreeClassifier(max_depth=2), DecisionTreeRegressor()
    assert isinstance(clf, BaseEstimator) and isinstance(clf, ClassifierMixin)
    assert isinstance(reg, RegressorMixin) and isinstance(reg, MultiOutputMixin)
    assert is_classifier(clf) and is_regressor(reg) and not is_classifier(reg)
    # Virtual subclasses of scikit-learn's trees, for its exporters' isinstance checks.
    assert isinstance(clf, sklearn_tree.DecisionTreeClassifier)
    assert isinstance(reg, sklearn_tree.DecisionTreeRegressor)
    assert not isinstance(reg, sklearn_tree.DecisionTreeClassifier)
    assert repr(clf) == "DecisionTreeClassifier(max_depth=2)"
    clf.fit(X, y)
    assert clone(clf).get_params() == clf.get_params()
    assert "dtjit-tree" in clf._repr_html_()  # the tree drawing, then the diagram
    assert "dtjit-tree" in clf._repr_mimebundle_()["text/html"]
    assert "DecisionTreeClassifier" in estimator_html_repr(clf)
    search = GridSearchCV(
        make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)),
        {"decisiontreeclassifier__max_depth": [1, 3]},
        cv=3,
    ).fit(X, y)
    assert search.best_params_ == {"decisiontreeclassifier__max_depth": 3}


@pytest.mark.parametrize(
    "make_X, as_is",
    [
        (lambda X: X, True),
        (lambda X: np.asfortranarray(X, dtype=np.float32), True),
        (lambda X: X[::2, :], True),  # a strided view
        (lambda X: X.astype(np.int64), True),
        (lambda X: X.astype(np.uint8), True),
        (lambda X: X > 3, True),  # bool
        (lambda X: X[:1], True),
        (lambda X: X.tolist(), False),
        (lambda X: X.astype(object), False),
        (lambda X: X.astype(np.complex128), False),
        (lambda X: X[:, :3], False),
        (lambda X: X[:0], False),
        (lambda X: X[0], False),
        (lambda X: pd.DataFrame(X), False),
    ],
)
def test_predict_skips_validate_data_only_where_it_returns_X_unchanged(iris_data, make_X, as_is):
    """The predict fast path is exactly the case where scikit-learn's check is a no-op."""
    from sklearn.utils.validation import validate_data

    from dtjit._estimators import _validate_data_returns_as_is

    X, y = iris_data
    est = DecisionTreeClassifier(max_depth=2).fit(X, y)
    candidate = make_X(X)
    assert _validate_data_returns_as_is(est, candidate) == as_is
    if as_is:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            checked = validate_data(
                est, candidate, reset=False, dtype="numeric", order=None, ensure_all_finite=False
            )
        assert checked is candidate
        # The same predictions as through validate_data (a list takes that path).
        np.testing.assert_array_equal(est.predict(candidate), est.predict(candidate.tolist()))


def test_predict_on_an_array_after_a_fit_with_names_warns_as_sklearn(iris_data):
    X, y = iris_data
    est = DecisionTreeClassifier(max_depth=2).fit(pd.DataFrame(X, columns=list("abcd")), y)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.predict(X)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, 1, 2, 1]),
        np.array([True, False, True, True]),
        np.array([[0, 5], [1, 7], [2, 5], [3, 9]], dtype=np.uint16),  # multiclass-multioutput
        np.array([[0, 1], [1, 1], [1, 0], [0, 0]], dtype=np.int8),  # multilabel
    ],
)
def test_integer_labels_are_classes_for_sklearn_too(y):
    """Integer and boolean y skip scikit-learn's target check, which they always pass."""
    from sklearn.utils.multiclass import check_classification_targets

    check_classification_targets(y)
    X = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(DecisionTreeClassifier().fit(X, y).predict(X), y)


def test_tags_say_what_each_configuration_supports():
    tags = DecisionTreeClassifier().__sklearn_tags__()
    assert tags.estimator_type == "classifier" and tags.input_tags.allow_nan
    assert tags.classifier_tags.multi_label and tags.target_tags.multi_output
    hist = DecisionTreeRegressor(splitter="hist").__sklearn_tags__()
    assert hist.estimator_type == "regressor" and not hist.target_tags.multi_output


@pytest.mark.parametrize(
    "params", [{"max_depth": 0}, {"splitter": "fast"}, {"min_samples_leaf": 1.0}, {"n_jobs": 1.5}]
)
def test_bad_parameter_raises_sklearns_error(params, iris_data):
    from sklearn.utils._param_validation import InvalidParameterError

    name = next(iter(params))
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of Decision"):
        DecisionTreeClassifier(**params).fit(*iris_data)


def test_set_params_rejects_unknown_and_sets_known():
    est = DecisionTreeClassifier()
    with pytest.raises(ValueError, match="Invalid parameter 'depth' for estimator"):
        est.set_params(depth=3)
    assert est.set_params(max_depth=3, ccp_alpha=0.1).get_params()["max_depth"] == 3


def test_check_input_is_left_out_of_metadata_routing():
    """fit / predict / predict_proba take check_input, which routing ignores as for
    scikit-learn's trees; sample_weight is routed."""
    from sklearn import config_context

    with config_context(enable_metadata_routing=True):
        for ours in ESTIMATORS:
            theirs = getattr(sklearn_tree, ours.__name__)
            mine, sklearns = ours().get_metadata_routing(), theirs().get_metadata_routing()
            for method in ("fit", "predict", "predict_proba", "score"):
                assert getattr(mine, method).requests == getattr(sklearns, method).requests
            routed = ours().set_fit_request(sample_weight=True)
            assert routed.get_metadata_routing().fit.requests == {"sample_weight": True}


def test_export_graphviz_same_as_sklearn_on_tie_free_tree(tie_free_iris):
    X, y = tie_free_iris
    est = DecisionTreeClassifier(max_depth=2).fit(X, y)
    sk = sklearn_tree.DecisionTreeClassifier(max_depth=2).fit(X, y)
    assert sklearn_tree.export_graphviz(est) == sklearn_tree.export_graphviz(sk)


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_max_features_is_reproducible_and_seeded(breast_cancer_data, est_class):
    X, y = breast_cancer_data
    a = est_class(max_features="sqrt", random_state=0).fit(X, y)
    b = est_class(max_features="sqrt", random_state=0).fit(X, y)
    assert_trees_identical(a, b)
    c = est_class(max_features="sqrt", random_state=1).fit(X, y)
    assert not np.array_equal(a.tree_.feature, c.tree_.feature) or not np.array_equal(
        a.tree_.threshold, c.tree_.threshold
    )
    d = est_class(max_features="sqrt", random_state=np.random.RandomState(0)).fit(X, y)
    assert_trees_identical(a, d)  # a RandomState seeded like the int draws the same seed
    full = est_class(max_features=None).fit(X, y)
    assert not np.array_equal(full.tree_.feature, a.tree_.feature)


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_max_features_above_the_feature_count_searches_every_feature(
    breast_cancer_data, est_class, tmp_path
):
    """scikit-learn accepts it (a grid over max_features may pass the feature count)."""
    X, y = breast_cancer_data
    above = est_class(max_features=45, random_state=0).fit(X, y)
    assert_trees_identical(above, est_class().fit(X, y))
    dtjit.save(above, tmp_path / "m.npz")
    assert dtjit.load(tmp_path / "m.npz").max_features_ == 45


def test_max_features_all_constant_but_one_still_splits():
    # Constant features drawn count towards max_features but drawing continues until a
    # non-constant one is found (scikit-learn's rule), so the tree still splits.
    rng = np.random.default_rng(0)
    X = np.zeros((200, 20))
    X[:, 13] = rng.normal(size=200)
    y = (X[:, 13] > 0).astype(int)
    for seed in range(5):
        est = DecisionTreeClassifier(max_features=1, random_state=seed).fit(X, y)
        assert est.tree_.feature[0] == 13
        assert est.score(X, y) == 1.0


# ------------------------------------------------------------ (f) a degenerate, deep chain
@pytest.mark.slow
def test_alternating_labels_on_one_sorted_feature_build_a_deep_chain():
    # Every split peels a single sample off one end (the only splits that gain anything),
    # so the tree is a chain n - 1 levels deep: any recursion in the builder would overflow,
    # and its 2n - 1 = 65,999 nodes pass 16-bit node ids. Exact CART is O(n * depth) = O(n^2)
    # here; the fit takes about 5 s (50k rows took 12 s, 100k 48 s of the suite's time
    # budget): speed is measured in benchmarks, this test checks the structure.
    n = 33_000
    X = np.arange(n, dtype=np.float64).reshape(-1, 1)
    y = np.arange(n) % 2
    est = DecisionTreeClassifier().fit(X, y)
    tree = est.tree_
    assert tree.node_count == 2 * n - 1
    assert est.get_n_leaves() == n
    assert est.get_depth() == n - 1
    assert (tree.n_node_samples[tree.children_left == -1] == 1).all()
    dtjit.check_tree(tree)
    rows = np.linspace(0, n - 1, 2_000).astype(int)
    assert (est.predict(X[rows]) == y[rows]).all()


# ------------------------------------------------------------- fixes from the code review
@pytest.mark.parametrize("scale", [1e160, 1e-170, 1e-310])  # 1e-310: subnormal weights
def test_extreme_sample_weights_give_the_unit_weight_tree(scale):
    """W*W in Gini would overflow/underflow: weights are rescaled by an exact power of two."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    plain = DecisionTreeClassifier().fit(X, y)
    scaled = DecisionTreeClassifier().fit(X, y, sample_weight=np.full(300, scale))
    np.testing.assert_array_equal(scaled.tree_.feature, plain.tree_.feature)
    np.testing.assert_array_equal(scaled.tree_.threshold, plain.tree_.threshold)
    np.testing.assert_allclose(
        scaled.tree_.weighted_n_node_samples, plain.tree_.weighted_n_node_samples * scale
    )


def test_huge_targets_fit_and_unrepresentable_variance_is_a_clear_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    base = X[:, 0] + X[:, 1]
    small = DecisionTreeRegressor(max_depth=3).fit(X, base)
    big = DecisionTreeRegressor(max_depth=3).fit(X, base * 1e150)
    np.testing.assert_array_equal(big.tree_.feature, small.tree_.feature)
    np.testing.assert_allclose(big.predict(X), small.predict(X) * 1e150, rtol=1e-12)
    with pytest.raises(ValueError, match="variance of y overflows"):
        DecisionTreeRegressor().fit(X, base * 1e160)
    # Subnormal targets: their scale factor (beyond float64's range) is capped at 2**1023.
    tiny = DecisionTreeRegressor(max_depth=3).fit(X, base * 1e-310)
    np.testing.assert_array_equal(tiny.tree_.feature, small.tree_.feature)
    np.testing.assert_allclose(tiny.predict(X), small.predict(X) * 1e-310, rtol=1e-6)
    # Below 1e-154 the variance is subnormal: the impurities keep it (the squared scale
    # factor underflowed to 0 and every impurity, and so every importance, was 0).
    small_y = DecisionTreeRegressor(max_depth=3).fit(X, base * 1e-160)
    np.testing.assert_array_equal(small_y.tree_.feature, small.tree_.feature)
    assert (small_y.tree_.impurity[small_y.tree_.impurity > 0] < 1e-300).all()
    assert small_y.tree_.impurity[0] > 0
    np.testing.assert_allclose(small_y.feature_importances_, small.feature_importances_, atol=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the refusal comes without RuntimeWarnings
        with pytest.raises(ValueError, match="variance of y overflows"):
            DecisionTreeRegressor().fit(X, base * 1e200)


@pytest.mark.parametrize("bad", [-0.5, np.nan, np.inf])
def test_class_weight_is_checked_like_sample_weight(breast_cancer_data, bad):
    """Negative class weights fitted negative probabilities; NaN and inf failed obscurely."""
    X, y = breast_cancer_data
    with pytest.raises(ValueError, match=r"non-negative; class 0 gets the weight"):
        DecisionTreeClassifier(class_weight={0: bad, 1: 1.0}).fit(X, y)
    # Output by output, before the product (two negative weights multiply into a positive).
    Y = np.c_[y, y]
    with pytest.raises(ValueError, match=r"non-negative; output 1 gives class 1 the weight"):
        DecisionTreeClassifier(class_weight=[{0: 1.0, 1: 2.0}, {0: 1.0, 1: bad}]).fit(X, Y)
    # A weight of zero is allowed, as for sample_weight: the class's rows take no part.
    zero = DecisionTreeClassifier(class_weight={0: 0.0, 1: 1.0}).fit(X, y)
    assert zero.tree_.node_count == 1


@pytest.mark.parametrize(
    "kwargs, fit_kwargs",
    [
        ({}, {"sample_weight": np.full(569, 1.7e308)}),
        ({"class_weight": {0: 1e308, 1: 1e308}}, {}),
    ],
)
def test_weights_summing_past_float64_are_a_clear_error(breast_cancer_data, kwargs, fit_kwargs):
    X, y = breast_cancer_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from the overflowing product first
        with pytest.raises(ValueError, match="sum to more than float64 holds"):
            DecisionTreeClassifier(**kwargs).fit(X, y, **fit_kwargs)
        with pytest.raises(ValueError, match="sum to more than float64 holds"):
            weights = {"sample_weight": np.full(len(y), 1e200)}
            DecisionTreeClassifier(class_weight={0: 1e200, 1: 1e200}).fit(X, y, **weights)


@pytest.mark.parametrize("est_class", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_weights_too_far_apart_to_rescale_are_a_clear_error(est_class):
    """1e-200 next to 1e200: the tiny weights would vanish once scaled for the squares."""
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    weight = np.where(np.arange(200) % 2, 1e-200, 1e200)
    with pytest.raises(ValueError, match="sample_weight spans more than float64 can hold"):
        est_class().fit(X, y, sample_weight=weight)
    # 1e-100 next to 1e100 is rescaled and fits.
    assert est_class().fit(X, y, sample_weight=np.sqrt(weight)).tree_.node_count > 1


@pytest.mark.parametrize(
    "y", [[1e308, 1e308, 1.5e308, 1.5e308], [-1.7e308, -1.7e308, 1.7e308, 1.7e308]]
)
def test_absolute_error_overflow_is_a_clear_error(y):
    X = np.arange(4.0).reshape(-1, 1)
    with pytest.raises(ValueError, match="'absolute_error' overflows float64"):
        DecisionTreeRegressor(criterion="absolute_error").fit(X, np.array(y))


@pytest.mark.parametrize(
    "param", ["max_depth", "max_leaf_nodes", "min_samples_leaf", "min_samples_split"]
)
@pytest.mark.parametrize("huge", [2**63, 2**64, 10**30])
def test_integer_parameters_beyond_int64_mean_unlimited(iris_data, param, huge):
    """Past the row count every larger value means the same; 2**64 reached numba's typing."""
    from dtjit.engine import grow

    X, y = iris_data
    signatures = len(grow.mark_sides.signatures)
    got = DecisionTreeClassifier(**{param: huge}).fit(X, y)
    if param in ("max_depth", "max_leaf_nodes"):
        expected = DecisionTreeClassifier().fit(X, y)
        np.testing.assert_array_equal(got.tree_.feature, expected.tree_.feature)
        np.testing.assert_array_equal(got.tree_.threshold, expected.tree_.threshold)
    else:  # no node holds that many rows: the root stays a leaf
        assert got.tree_.node_count == 1
    # No uint64 copy of the kernel reading the stopping rules (when it has compiled at all).
    assert len(grow.mark_sides.signatures) in (signatures, 1)


def test_mdlp_integer_parameters_beyond_int64(iris_data):
    X, y = iris_data
    plain = dtjit.MDLPDiscretizer().fit(X, y)
    unlimited = dtjit.MDLPDiscretizer(max_depth=2**64).fit(X, y)
    for got, expected in zip(unlimited.cut_points_, plain.cut_points_, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert all(
        c.size == 0 for c in dtjit.MDLPDiscretizer(min_samples_split=2**64).fit(X, y).cut_points_
    )


def test_friedman_mse_maps_to_squared_error_as_in_sklearn(diabetes_data):
    """scikit-learn 1.9 maps the deprecated name in its constructor, with a FutureWarning;
    set_params refuses it."""
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = diabetes_data
    with pytest.warns(FutureWarning) as ours:
        est = DecisionTreeRegressor(criterion="friedman_mse", max_depth=4)
    with pytest.warns(FutureWarning) as theirs:
        sklearn_tree.DecisionTreeRegressor(criterion="friedman_mse")
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert est.criterion == "squared_error"
    plain = DecisionTreeRegressor(max_depth=4).fit(X, y)
    np.testing.assert_array_equal(est.fit(X, y).predict(X), plain.predict(X))
    with pytest.raises(InvalidParameterError, match="'criterion' parameter"):
        DecisionTreeRegressor().set_params(criterion="friedman_mse").fit(X, y)


def test_predict_refuses_values_too_large_for_float32(iris_data):
    X, y = iris_data
    est = DecisionTreeClassifier().fit(X, y)
    # numpy warns about the overflowing cast (as for scikit-learn's float32 conversion)
    with pytest.raises(ValueError, match="too large for dtype"), pytest.warns(RuntimeWarning):
        est.predict(np.full((2, X.shape[1]), 1e300))


def test_a_replaced_tree_must_match_the_feature_count(iris_data):
    X, y = iris_data
    est = DecisionTreeClassifier().fit(X, y)
    est.tree_ = DecisionTreeClassifier().fit(np.hstack([X, X]), y).tree_
    with pytest.raises(ValueError, match="tree_ was built for 8 features"):
        est.predict(X)


def test_class_weight_survives_save_load_and_clone(iris_data, tmp_path):
    from sklearn.base import clone

    X, y = iris_data
    est = DecisionTreeClassifier(class_weight={0: 2.0, 1: 1.0, 2: 0.5}).fit(X, y)
    dtjit.save(est, tmp_path / "m.npz")
    loaded = dtjit.load(tmp_path / "m.npz")
    assert loaded.class_weight == {0: 2.0, 1: 1.0, 2: 0.5}
    refit = clone(loaded).fit(X, y)
    np.testing.assert_array_equal(refit.predict(X), est.predict(X))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_sorted_codes_take_one_byte_up_to_256_classes(n_threads):
    """``_sorted_codes`` picks uint8 for codes 0..255 and uint16 past them, same values.

    Several outputs get zeros (their sweep reads per-row codes); skipped features' rows are
    not compared (left uninitialised).
    """
    rng = np.random.default_rng(0)
    n = 200_000  # large enough for the parallel kernel with two threads
    sorted_idx = np.stack([rng.permutation(n) for _ in range(2)]).astype(np.int32)
    unsorted = np.array([0, 1], np.uint8)
    for n_codes, dtype in ((1, np.uint8), (256, np.uint8), (257, np.uint16), (4000, np.uint16)):
        code = rng.integers(0, n_codes, size=n).astype(np.int32)
        code[0] = n_codes - 1
        out = _sorted_codes(sorted_idx, code, 1, unsorted, n_threads)
        assert out.dtype == dtype, n_codes
        np.testing.assert_array_equal(out[0], code[sorted_idx[0]])
    out = _sorted_codes(sorted_idx, code, 2, unsorted, n_threads)
    assert out.dtype == np.uint8 and not out.any()


@pytest.mark.filterwarnings("ignore:The number of unique classes:UserWarning")
@pytest.mark.parametrize("splitter", ["best", "random"])
def test_more_classes_than_sorted_codes_hold_is_a_clear_error(splitter):
    # The presorted class codes are uint16: one class more must be refused before the build.
    n = MAX_SORTED_CODES + 1
    X = np.arange(n, dtype=np.float64).reshape(-1, 1)
    y = np.arange(n)
    with pytest.raises(ValueError, match=f"at most {MAX_SORTED_CODES} classes"):
        DecisionTreeClassifier(splitter=splitter).fit(X, y)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, 1, 3, 7, 1, 5, 3], dtype=np.int64),  # gaps between the labels
        np.tile(np.array([-128, 127, 0, -5], dtype=np.int8), 80),  # a span int8 cannot hold
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1, 2**64 - 2], dtype=np.uint64),
        np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64),  # span too wide: np.unique
        np.full(5, 9, dtype=np.uint8),
        np.array([True, False, True]),  # not an integer dtype: np.unique
    ],
    ids=["gaps", "int8-full-range", "uint64-top", "int64-extremes", "one-label", "bool"],
)
def test_label_encoding_equals_np_unique(y):
    classes, inverse = _encode_labels(y)
    expected_classes, expected_inverse = np.unique(y, return_inverse=True)
    assert classes.dtype == expected_classes.dtype
    np.testing.assert_array_equal(classes, expected_classes)
    np.testing.assert_array_equal(inverse, expected_inverse)


@pytest.mark.parametrize("est_class", ESTIMATORS, ids=lambda c: c.__name__)
def test_methods_take_scikit_learns_arguments(est_class, iris_data):
    """Code written for scikit-learn's trees (``fit(..., check_input=False)``) runs unchanged,
    and dtjit still validates: its kernels do no bounds checks."""
    sk_class = getattr(sklearn_tree, est_class.__name__)
    for name in ("fit", "predict", "predict_proba", "predict_log_proba", "apply", "decision_path"):
        if hasattr(sk_class, name):
            theirs = list(inspect.signature(getattr(sk_class, name)).parameters)
            assert list(inspect.signature(getattr(est_class, name)).parameters) == theirs, name
    X, y = iris_data
    est = est_class().fit(X, y, None, False)
    est.predict(X, check_input=False)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2], check_input=False)
