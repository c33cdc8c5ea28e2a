"""``dtjit.to_sklearn``: the same tree as a scikit-learn estimator, and the tools that read it.

Equality is checked on scikit-learn's bundled datasets and, when ``../shared/data`` is there,
on penguins (real NaN) and California housing (real float values); the ecosystem tests (SHAP,
skl2onnx + onnxruntime, treelite, dtreeviz) skip when their package is not installed (the
``interop`` extra installs them).
"""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pytest
import sklearn.tree
from sklearn.exceptions import NotFittedError

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor, to_sklearn
from dtjit.interop import float32_floor, to_sklearn_forest


def assert_same_model(model, twin, X):
    """The scikit-learn copy answers like the dtjit model on every prediction method."""
    np.testing.assert_array_equal(twin.predict(X), model.predict(X))
    np.testing.assert_array_equal(twin.apply(X), model.apply(X))
    assert (twin.decision_path(X) != model.decision_path(X)).nnz == 0
    if hasattr(model, "classes_"):
        expected = model.predict_proba(X)
        result = twin.predict_proba(X)
        if isinstance(expected, list):
            assert len(result) == len(expected)
            for r, e in zip(result, expected, strict=True):
                np.testing.assert_array_equal(r, e)
        else:
            np.testing.assert_array_equal(result, expected)


def with_nan(X, fraction, seed):
    X = np.array(X, dtype=np.float64)
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


@pytest.fixture(scope="module")
def cancer_model(breast_cancer_data):
    X, y = breast_cancer_data
    return DecisionTreeClassifier(random_state=0).fit(X, y), X, y


@pytest.fixture(scope="module")
def diabetes_model(diabetes_data):
    X, y = diabetes_data
    return DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y), X, y


# -- the copy --------------------------------------------------------------------------------
def test_classifier_copy_is_a_genuine_sklearn_tree(cancer_model):
    model, X, _ = cancer_model
    twin = to_sklearn(model)
    assert type(twin) is sklearn.tree.DecisionTreeClassifier
    assert type(twin.tree_) is sklearn.tree._tree.Tree
    assert twin.tree_.node_count == model.tree_.node_count
    np.testing.assert_array_equal(twin.tree_.children_left, model.tree_.children_left)
    np.testing.assert_array_equal(twin.tree_.feature[twin.tree_.feature >= 0],
                                  model.tree_.feature[model.tree_.feature >= 0])  # fmt: skip
    np.testing.assert_array_equal(twin.tree_.value, model.tree_.value)
    np.testing.assert_array_equal(twin.classes_, model.classes_)
    assert twin.get_depth() == model.get_depth() and twin.get_n_leaves() == model.get_n_leaves()
    np.testing.assert_allclose(twin.feature_importances_, model.feature_importances_)
    assert twin.get_params()["random_state"] == 0
    assert_same_model(model, twin, X)
    text = sklearn.tree.export_text(twin)
    assert text.count("class:") == model.get_n_leaves()


def test_regressor_copy(diabetes_model):
    model, X, y = diabetes_model
    twin = to_sklearn(model)
    assert type(twin) is sklearn.tree.DecisionTreeRegressor
    assert_same_model(model, twin, X)
    assert twin.score(X, y) == model.score(X, y)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "gain_ratio"])
def test_multiclass_with_missing_values_learned_in_fit(iris_data, criterion):
    X, y = iris_data
    X = with_nan(X, 0.15, seed=1)
    model = DecisionTreeClassifier(criterion=criterion, random_state=0).fit(X, y)
    assert model.tree_.missing_go_to_left[model.tree_.children_left >= 0].any()
    twin = to_sklearn(model)
    assert twin.criterion == (criterion if criterion != "gain_ratio" else "gini")
    X_new = with_nan(X, 0.3, seed=2)  # NaN where fit had none, too
    assert_same_model(model, twin, X_new)


def test_multi_output_classifier_and_regressor(iris_data, diabetes_data):
    X, y = iris_data
    Y = np.column_stack([y, (X[:, 0] > 5.8).astype(int), np.where(X[:, 3] > 1, "wide", "thin")])
    model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, Y)
    twin = to_sklearn(model)
    assert twin.n_outputs_ == 3 and list(twin.n_classes_) == [3, 2, 2]
    assert_same_model(model, twin, X)
    X, y = diabetes_data
    Y = np.column_stack([y, np.log(y)])
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, Y)
    assert_same_model(model, to_sklearn(model), X)


def test_hist_splitter_and_pruned_trees(breast_cancer_data):
    X, y = breast_cancer_data
    for model in (
        DecisionTreeClassifier(splitter="hist", max_bins=32, random_state=0).fit(X, y),
        DecisionTreeClassifier(ccp_alpha=0.01, random_state=0).fit(X, y),
    ):
        twin = to_sklearn(model)
        assert twin.splitter == "best"  # hist is dtjit's own: left at scikit-learn's default
        assert_same_model(model, twin, X)


def test_rows_at_and_beside_every_threshold_go_the_same_way(diabetes_data):
    # Inputs exactly at each threshold, at its float32 roundings and one float64 step either
    # side: where a float64 threshold and its float32 rounding disagree, a copy that
    # rounded to nearest would send some of these rows the other way.
    X, y = diabetes_data
    model = DecisionTreeRegressor(random_state=0).fit(X * 1.001, y)
    twin = to_sklearn(model)
    tree = model.tree_
    rows = []
    for node in np.flatnonzero(tree.children_left >= 0):
        t = tree.threshold[node]
        t32 = np.float32(t)
        for v in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(t32),
                  float(np.nextafter(t32, np.float32(np.inf))),
                  float(np.nextafter(t32, np.float32(-np.inf)))):  # fmt: skip
            row = X[node % len(X)].copy()
            row[tree.feature[node]] = v
            rows.append(row)
    rows = np.array(rows)
    assert (np.float32(tree.threshold[tree.children_left >= 0]) != tree.threshold[
        tree.children_left >= 0]).any()  # fmt: skip
    assert_same_model(model, twin, rows)
    assert_same_model(model, twin, rows.astype(np.float32))


def test_float32_floor_keeps_every_float32_comparison():
    rng = np.random.default_rng(0)
    t = np.concatenate([rng.normal(scale=10.0 ** rng.integers(-40, 40, 500)),
                        [0.0, -0.0, np.inf, -np.inf, 1e300, -1e300, 1e-300]])  # fmt: skip
    floor = float32_floor(t)
    assert floor.dtype == np.float64 and np.array_equal(floor.astype(np.float32), floor)
    assert (floor <= t).all()
    with np.errstate(over="ignore"):  # float32's largest value steps up to inf
        up = np.nextafter(floor.astype(np.float32), np.float32(np.inf))
    x = np.concatenate([floor, up])
    x = x.astype(np.float32)
    for threshold, lower in zip(t, floor, strict=True):
        np.testing.assert_array_equal(x <= threshold, x <= lower)


def test_real_data_with_missing_values_and_float_columns(shared_data):
    penguins = pd.read_csv(shared_data / "penguins.csv")
    X = penguins.drop(columns=["species", "island", "sex"])
    assert X.isna().any().any()
    model = DecisionTreeClassifier(random_state=0).fit(X, penguins["species"])
    twin = to_sklearn(model)
    assert list(twin.feature_names_in_) == list(X.columns)
    assert_same_model(model, twin, X)
    housing = pd.read_csv(shared_data / "cal_housing.data.gz", header=None).to_numpy()
    X, y = housing[:, :-1], housing[:, -1]
    model = DecisionTreeRegressor(min_samples_leaf=5, random_state=0).fit(X[:15000], y[:15000])
    assert_same_model(model, to_sklearn(model), X[15000:])


def test_categorical_splits_are_refused_with_the_reason(shared_data):
    penguins = pd.read_csv(shared_data / "penguins.csv").dropna()
    X = penguins[["island", "culmen_length_mm"]]
    model = DecisionTreeClassifier(categorical_features=["island"], random_state=0)
    model.fit(X, penguins["species"])
    assert model.tree_.has_categorical_splits
    with pytest.raises(ValueError, match=r"categorical subset split.*feature\(s\) island"):
        to_sklearn(model)


def test_declared_but_unused_categorical_feature_is_fine(iris_data):
    X, y = iris_data
    X = np.column_stack([X, np.zeros(len(X))])  # one category: never split on
    model = DecisionTreeClassifier(categorical_features=[4], random_state=0).fit(X, y)
    assert not model.tree_.has_categorical_splits
    assert_same_model(model, to_sklearn(model), X)


def test_refuses_what_is_not_a_fitted_dtjit_tree(iris_data):
    with pytest.raises(TypeError, match="dtjit DecisionTreeClassifier"):
        to_sklearn(sklearn.tree.DecisionTreeClassifier().fit(*iris_data))
    with pytest.raises(NotFittedError):
        to_sklearn(DecisionTreeClassifier())
    assert dtjit.to_sklearn is to_sklearn


# -- the tools around scikit-learn trees -----------------------------------------------------
def test_shap_values_add_up_to_the_prediction(cancer_model, diabetes_model):
    shap = pytest.importorskip("shap")
    model, X, _ = diabetes_model
    X32 = X.astype(np.float32)
    explainer = shap.TreeExplainer(to_sklearn(model))
    values = explainer.shap_values(X32)
    np.testing.assert_allclose(
        values.sum(axis=1) + explainer.expected_value, model.predict(X32), rtol=1e-6, atol=1e-6
    )
    model, X, _ = cancer_model
    X32 = X.astype(np.float32)
    explainer = shap.TreeExplainer(to_sklearn(model))
    values = explainer.shap_values(X32)  # (rows, features, classes): probabilities
    proba = model.predict_proba(X32)
    for c in range(2):
        total = values[:, :, c].sum(axis=1) + explainer.expected_value[c]
        np.testing.assert_allclose(total, proba[:, c], atol=1e-6)


def test_onnx_runtime_gives_the_same_predictions(cancer_model, diabetes_model, iris_data):
    pytest.importorskip("skl2onnx")
    ort = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    iris = DecisionTreeClassifier(random_state=0).fit(*iris_data)
    cases = [cancer_model[:2], diabetes_model[:2], (iris, iris_data[0])]
    for model, X in cases:
        twin = to_sklearn(model)
        X32 = X.astype(np.float32)
        onx = to_onnx(twin, X32[:1], options={"zipmap": False} if hasattr(twin, "classes_")
                      else None)  # fmt: skip
        session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
        outputs = session.run(None, {session.get_inputs()[0].name: X32})
        if hasattr(model, "classes_"):
            np.testing.assert_array_equal(outputs[0], model.predict(X32))
            np.testing.assert_allclose(outputs[1], model.predict_proba(X32), rtol=1e-6)
        else:
            # ONNX computes in float32: the leaf's float64 mean, rounded
            np.testing.assert_allclose(outputs[0].ravel(), model.predict(X32), rtol=1e-6)


def test_treelite_gives_the_same_predictions(cancer_model, diabetes_model, iris_data):
    treelite = pytest.importorskip("treelite")
    X, y = iris_data
    iris = DecisionTreeClassifier(random_state=0).fit(with_nan(X, 0.1, 3), y)
    cases = [cancer_model[:2], diabetes_model[:2], (iris, with_nan(X, 0.2, 4))]
    for model, X in cases:
        forest = to_sklearn_forest(model)  # treelite imports ensembles, not single trees
        assert_same_model(model, forest.estimators_[0], X)
        np.testing.assert_array_equal(forest.predict(X), model.predict(X))
        imported = treelite.sklearn.import_model(forest)
        X32 = X.astype(np.float32)
        result = treelite.gtil.predict(imported, X32)
        if hasattr(model, "classes_"):
            expected = model.predict_proba(X)
            np.testing.assert_allclose(result.reshape(expected.shape), expected, rtol=1e-6)
        else:
            np.testing.assert_allclose(result.ravel(), model.predict(X), rtol=1e-6)
        leaves = treelite.gtil.predict_leaf(imported, X32)
        np.testing.assert_array_equal(leaves.ravel(), model.apply(X))


def test_dtreeviz_renders(cancer_model, diabetes_model):
    dtreeviz = pytest.importorskip("dtreeviz")
    import shutil

    if shutil.which("dot") is None:
        pytest.skip("dtreeviz renders through Graphviz's dot, which is not installed")
    from sklearn.datasets import load_breast_cancer

    model, X, y = cancer_model
    small = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    names = list(load_breast_cancer().feature_names)
    viz = dtreeviz.model(to_sklearn(small), X, y, feature_names=names, target_name="diagnosis",
                         class_names=["malignant", "benign"])  # fmt: skip
    svg = viz.view().svg()
    root = ElementTree.fromstring(svg)  # well-formed; matplotlib draws the text as paths
    assert root.tag.endswith("svg") and len(svg) > 10_000
    # one drawing (a <g> group) per split node's histogram, one per leaf's pie
    assert svg.count("<svg") >= small.tree_.node_count
