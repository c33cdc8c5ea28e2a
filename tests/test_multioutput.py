"""Multi-output trees (y of shape (n, n_outputs)): kernel vs reference, scikit-learn parity."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn.tree
from _assertions import assert_same_as_sklearn, assert_trees_identical, check_tree_invariants
from _kernel_entry import via_kernel
from _multioutput_reference import best_split_of_feature, candidates, split_quality
from conftest import sample_rows
from sklearn.datasets import load_diabetes, load_iris, load_linnerud
from sklearn.exceptions import DataConversionWarning

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
from dtjit._tree import NODE_ARRAYS
from dtjit.engine.jit import CRITERION_CODES, multi_output_criterion
from dtjit.engine.prepare import classification_sweep as _classification_sweep
from dtjit.engine.prepare import regression_sweep as _regression_sweep
from dtjit.engine.sweep_exact import presort
from dtjit.engine.sweep_multioutput import multi_output_splits_worker, stats_of_rows
from dtjit.engine.threads import run_workers


# -- the split search against the reference ----------------------------------------------------
def kernel_splits(X, Y, w, criterion, min_samples_leaf=1, min_weight_leaf=0.0):
    """Best split per feature of one node holding every row, from the compiled kernel."""
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    n_samples, n_features = X32.shape
    is_classifier = criterion != "squared_error"
    if is_classifier:
        n_classes = Y.max(axis=0) + 1
        code, contrib, n_stats = _classification_sweep(Y.astype(np.int32), w, n_classes)
        n_sweep, y = n_stats, np.zeros(1)
    else:
        code, contrib, y, n_stats, n_sweep = _regression_sweep(Y, w, CRITERION_CODES[criterion])
    code_of = multi_output_criterion(CRITERION_CODES[criterion], Y.shape[1])
    sorted_idx, sorted_val = presort(X32, np.zeros(X32.shape[1], np.uint8), 1)
    stats = np.zeros((1, n_stats))
    weight = via_kernel(stats_of_rows)(
        code_of, True, sorted_idx[0], np.int64(0), np.int64(n_samples), np.int64(0), np.int64(0),
        code, contrib, w, y, not is_classifier, stats[0],
    )  # fmt: skip
    proxy = np.empty((1, n_features))
    pos = np.empty((1, n_features), dtype=np.int64)
    threshold = np.empty((1, n_features))
    missing = np.full((1, n_features), -1, dtype=np.int8)
    run_workers(
        multi_output_splits_worker, 2, np.zeros(1, dtype=np.int64),
        np.ones((1, n_features), dtype=np.uint8),
        np.zeros(1, dtype=np.int64), np.full(1, n_samples, dtype=np.int64), stats,
        np.array([weight]), sorted_idx, sorted_val, code, contrib, w, n_sweep, code_of,
        min_samples_leaf, float(min_weight_leaf), False, proxy, pos, threshold, missing,
    )  # fmt: skip
    return proxy[0], threshold[0], missing[0]


def random_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 50))
    criterion = ("gini", "entropy", "squared_error")[seed % 3]
    n_outputs = int(rng.integers(2, 4))
    X = np.round(rng.normal(size=(n, 3)), 1)  # ties between rows
    if seed % 2:
        X[rng.random(X.shape) < 0.15] = np.nan
    if criterion == "squared_error":
        Y = rng.normal(size=(n, n_outputs)) * rng.uniform(0.5, 5, size=n_outputs)
    else:
        Y = np.column_stack([rng.integers(0, int(rng.integers(2, 5)), n) for _ in range(n_outputs)])
        Y = np.column_stack([np.unique(c, return_inverse=True)[1] for c in Y.T])
    w = rng.uniform(0.5, 2.0, n) if seed % 4 < 2 else np.ones(n)
    min_samples_leaf = 1 + seed % 3
    return X, Y, w, criterion, min_samples_leaf


@pytest.mark.parametrize("seed", range(24))
def test_split_search_matches_reference(seed):
    X, Y, w, criterion, min_samples_leaf = random_case(seed)
    n_classes = Y.max(axis=0) + 1 if criterion != "squared_error" else None
    proxy, threshold, missing = kernel_splits(X, Y, w, criterion, min_samples_leaf)
    for f in range(X.shape[1]):
        best = best_split_of_feature(X[:, f], Y, w, criterion, n_classes, min_samples_leaf)
        if best is None:
            assert proxy[f] == -np.inf
            continue
        assert np.isfinite(proxy[f])
        # The kernel's cut is one of the candidates and as good as the best one; where the
        # best is clear by more than rounding, it is that very cut.
        chosen = [c for c in candidates(X[:, f]) if c[0] == threshold[f] and c[1] == missing[f]]
        assert len(chosen) == 1, (f, threshold[f], missing[f])
        quality = split_quality(chosen[0][2], Y, w, criterion, n_classes)
        assert quality == pytest.approx(best[0], rel=1e-9, abs=1e-12)
        others = [
            split_quality(go_left, Y, w, criterion, n_classes)
            for t, m, go_left in candidates(X[:, f])
            if (t, m) != (best[1], best[2])
            and min(go_left.sum(), len(go_left) - go_left.sum()) >= min_samples_leaf
        ]
        if not others or best[0] - max(others) > 1e-9 * abs(best[0]) + 1e-12:
            assert (threshold[f], missing[f]) == (best[1], best[2])


def test_duplicated_output_builds_the_single_output_tree():
    # Two copies of one output: the mean of two equal impurities is that impurity exactly
    # (and the squared-error proxy doubles exactly), so every choice is the same.
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[::7, 2] = np.nan
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    for params in (
        {"criterion": "gini"},
        {"criterion": "entropy", "splitter": "random", "random_state": 3},
        {"criterion": "gini", "max_leaf_nodes": 6, "min_samples_leaf": 3},
    ):
        single = DecisionTreeClassifier(**params).fit(X, y, sample_weight=w)
        double = DecisionTreeClassifier(**params).fit(X, np.column_stack([y, y]), sample_weight=w)
        _assert_same_tree_two_outputs(single, double)
    Xd, yd = load_diabetes(return_X_y=True)
    for params in ({}, {"splitter": "random", "random_state": 1, "max_depth": 6}):
        single = DecisionTreeRegressor(**params).fit(Xd, yd)
        double = DecisionTreeRegressor(**params).fit(Xd, np.column_stack([yd, yd]))
        _assert_same_tree_two_outputs(single, double)


def _assert_same_tree_two_outputs(single, double):
    assert double.n_outputs_ == 2
    a, b = single.tree_, double.tree_
    assert a.node_count == b.node_count
    for name in NODE_ARRAYS:
        if name not in ("value", "impurity"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    # Entropy adds the two outputs' terms one by one: equal up to rounding only.
    np.testing.assert_allclose(b.impurity, a.impurity, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(b.value[:, 0], a.value[:, 0])
    np.testing.assert_array_equal(b.value[:, 1], a.value[:, 0])


# -- scikit-learn parity on real data -----------------------------------------------------------
def fit_both(params, X, Y, sample_weight=None, classifier=True):
    ours = (DecisionTreeClassifier if classifier else DecisionTreeRegressor)(**params)
    theirs = (
        sklearn.tree.DecisionTreeClassifier if classifier else sklearn.tree.DecisionTreeRegressor
    )(random_state=0, **params)
    ours.fit(X, Y, sample_weight=sample_weight)
    theirs.fit(X, Y, sample_weight=sample_weight)
    check_tree_invariants(ours)
    return ours, theirs


def assert_parity(ours, theirs, X, Y, sample_weight=None):
    assert ours.n_outputs_ == theirs.n_outputs_ == Y.shape[1]
    assert ours.tree_.value.shape[1:] == theirs.tree_.value.shape[1:]
    cmp = assert_same_as_sklearn(ours, theirs, X, Y, sample_weight, allow_ties=True)
    assert cmp.same_nodes > 0
    if hasattr(ours, "classes_"):
        for a, b in zip(ours.classes_, theirs.classes_, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ours.n_classes_, theirs.n_classes_)
    if cmp.identical and hasattr(ours, "classes_"):
        for a, b in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    elif cmp.identical:
        assert ours.score(X, Y) == pytest.approx(theirs.score(X, Y), rel=1e-12)
    return cmp


@pytest.fixture(scope="module")
def tie_free():
    """2000 x 6 rng.normal rows, two 3- and 4-class labels, two targets, weights 1..3.

    Continuous, distinct values: with min_samples_leaf=20 and depth <= 5 no node has two
    equally good splits, so scikit-learn's tree is unique and dtjit must build it.
    """
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 6)).astype(np.float32)
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3] + 0.5 * rng.normal(size=2000)
    other = np.sin(2.0 * X[:, 4]) - X[:, 5] + 0.3 * rng.normal(size=2000)
    labels = np.column_stack([np.digitize(score, [-0.8, 0.3]), np.digitize(other, [-1, 0, 1])])
    targets = np.column_stack([score + np.sin(2.0 * X[:, 4]), 10.0 * other])
    return X, labels, targets, rng.integers(1, 4, size=2000).astype(np.float64)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("growth", [{"max_depth": 5}, {"max_leaf_nodes": 12}])
def test_identical_on_tie_free_data(tie_free, criterion, growth):
    X, labels, targets, weight = tie_free
    classifier = criterion != "squared_error"
    Y = labels if classifier else targets
    params = {"criterion": criterion, "min_samples_leaf": 20, **growth}
    for sample_weight in (None, weight):
        ours, theirs = fit_both(params, X, Y, sample_weight, classifier)
        cmp = assert_parity(ours, theirs, X, Y, sample_weight)
        assert cmp.identical, (cmp.ties[:3], cmp.pure_splits[:3])
        assert ours.tree_.node_count == theirs.tree_.node_count > 20
        np.testing.assert_allclose(
            ours.feature_importances_, theirs.feature_importances_, rtol=1e-7, atol=1e-12
        )
        if not classifier:
            np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)


def test_linnerud_regression_parity():
    # 20 rows of small integers: equally good splits abound, and scikit-learn picks among
    # them at random. Every random_state gives one of the optimal trees; dtjit's (lowest
    # feature on ties) must be one of the trees scikit-learn builds.
    # At full depth the small leaves tie so often that no two fits agree everywhere: there,
    # every difference must be a proven tie; the shallower trees must come out identical.
    X, Y = load_linnerud(return_X_y=True)
    for params in ({}, {"min_samples_leaf": 2}, {"max_leaf_nodes": 6}):
        ours = DecisionTreeRegressor(**params).fit(X, Y)
        assert ours.predict(X).shape == Y.shape
        same_nodes, identical = [], 0
        for seed in range(8):
            theirs = sklearn.tree.DecisionTreeRegressor(random_state=seed, **params).fit(X, Y)
            cmp = assert_same_as_sklearn(ours, theirs, X, Y, allow_ties=True)
            same_nodes.append(cmp.same_nodes)
            identical += cmp.identical
        assert max(same_nodes) >= 8
        assert identical > 0 or not params


def diabetes_two_targets():
    """Diabetes with bmi (column 2) moved from the features to a second target."""
    X, y = load_diabetes(return_X_y=True)
    return np.delete(X, 2, axis=1), np.column_stack([y, X[:, 2]])


def test_diabetes_two_targets_parity_weights_and_missing_values():
    X, Y = diabetes_two_targets()
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(Y))
    assert_parity(*fit_both({}, X, Y, classifier=False), X, Y)
    assert_parity(*fit_both({"min_samples_leaf": 4}, X, Y, w, classifier=False), X, Y, w)
    X_nan = X.copy()
    X_nan[np.random.default_rng(2).random(X.shape) < 0.1] = np.nan
    assert_parity(*fit_both({"max_depth": 8}, X_nan, Y, classifier=False), X_nan, Y)


def iris_two_labels():
    """Iris species and sepal-length tercile (that column removed from the features)."""
    X, y = load_iris(return_X_y=True)
    tercile = np.searchsorted(np.quantile(X[:, 0], [1 / 3, 2 / 3]), X[:, 0])
    return X[:, 1:], np.column_stack([y, tercile])


@pytest.mark.parametrize("criterion", ["gini", "entropy", "log_loss"])
def test_iris_two_label_columns_parity(criterion):
    X, Y = iris_two_labels()
    ours, theirs = fit_both({"criterion": criterion}, X, Y)
    assert_parity(ours, theirs, X, Y)
    proba = ours.predict_proba(X)
    assert [p.shape for p in proba] == [(len(Y), 3), (len(Y), 3)]
    log_proba = ours.predict_log_proba(X)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(log_proba[1], np.log(proba[1]))


def penguins(shared_data):
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "penguins.csv", keep_default_na=False, na_values=[""])
    table = table[table["sex"].isin(["FEMALE", "MALE"])]  # also drops one "_"
    X = table[["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]]
    return X.to_numpy(np.float64), table[["species", "sex", "island"]].to_numpy()


def test_penguins_three_string_label_columns_and_class_weight(shared_data):
    X, Y = penguins(shared_data)
    assert Y.dtype == object
    ours, theirs = fit_both({"criterion": "entropy"}, X, Y)
    assert_parity(ours, theirs, X, Y)
    assert [list(c) for c in ours.classes_] == [
        ["Adelie", "Chinstrap", "Gentoo"], ["FEMALE", "MALE"], ["Biscoe", "Dream", "Torgersen"],
    ]  # fmt: skip
    prediction = ours.predict(X)
    assert prediction.shape == Y.shape and prediction.dtype == object
    weights = [
        {"Adelie": 1.0, "Chinstrap": 3.0, "Gentoo": 1.5},
        {"FEMALE": 2.0, "MALE": 1.0},
        {"Biscoe": 1.0, "Dream": 0.5, "Torgersen": 2.0},
    ]
    for class_weight in ("balanced", weights):
        params = {"class_weight": class_weight, "max_depth": 6}
        assert_parity(*fit_both(params, X, Y), X, Y)
    with pytest.raises(ValueError, match="multi-output"):
        DecisionTreeClassifier(class_weight={"Adelie": 2.0}).fit(X, Y)


def test_covtype_two_targets_parity_and_parallel_equals_serial(covtype_table):
    X_all, cover, names = covtype_table
    rows = sample_rows(len(cover), 6000, seed=5)
    wilderness = [i for i, name in enumerate(names) if name.startswith("Wilderness")]
    X = np.delete(X_all[rows], wilderness, axis=1)
    Y = np.column_stack([cover[rows], np.argmax(X_all[rows][:, wilderness], axis=1)])
    ours, theirs = fit_both({"max_depth": 12}, X, Y)
    assert_parity(ours, theirs, X, Y)
    parallel = DecisionTreeClassifier(max_depth=12, n_jobs=2).fit(X, Y)
    assert_trees_identical(ours, parallel)
    assert (parallel.predict(X) == ours.predict(X)).all()


@pytest.mark.parametrize("criterion", ["gini", "squared_error"])
def test_pruning_path_and_ccp_alpha_parity(tie_free, criterion):
    X, labels, targets, weight = tie_free
    classifier = criterion != "squared_error"
    Y = labels if classifier else targets
    params = {"criterion": criterion, "min_samples_leaf": 20, "max_depth": 6}
    ours, theirs = fit_both(params, X, Y, weight, classifier)
    path = ours.cost_complexity_pruning_path(X, Y, sample_weight=weight)
    expected = theirs.cost_complexity_pruning_path(X, Y, sample_weight=weight)
    scale = float(expected.impurities[-1])
    assert len(path.ccp_alphas) == len(expected.ccp_alphas) > 5
    np.testing.assert_allclose(path.ccp_alphas, expected.ccp_alphas, rtol=1e-12, atol=1e-14 * scale)
    np.testing.assert_allclose(path.impurities, expected.impurities, rtol=1e-12, atol=1e-14 * scale)
    alphas = np.unique(expected.ccp_alphas)
    alpha = float((alphas[len(alphas) // 2] + alphas[len(alphas) // 2 + 1]) / 2)
    pruned, reference = fit_both({**params, "ccp_alpha": alpha}, X, Y, weight, classifier)
    assert pruned.tree_.node_count == reference.tree_.node_count < ours.tree_.node_count
    assert_parity(pruned, reference, X, Y, weight)
    np.testing.assert_array_equal(dtjit.prune(ours, alpha).predict(X), pruned.predict(X))


# -- behaviour and errors ----------------------------------------------------------------------
def test_column_vector_y_is_one_output():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        column = DecisionTreeClassifier().fit(X, y[:, None])
    assert column.n_outputs_ == 1 and column.predict(X).shape == (len(y),)
    assert_trees_identical(column, DecisionTreeClassifier().fit(X, y))
    with pytest.warns(DataConversionWarning, match="column-vector"):
        DecisionTreeClassifier(splitter="hist").fit(X, y[:, None])


def test_save_load_round_trip(tmp_path, shared_data):
    X, Y = penguins(shared_data)
    clf = DecisionTreeClassifier(max_depth=5).fit(X, Y)
    Xr, Yr = diabetes_two_targets()
    reg = DecisionTreeRegressor(max_depth=6).fit(Xr, Yr)
    for model, data in ((clf, X), (reg, Xr)):
        dtjit.save(model, tmp_path / "m.npz")
        loaded = dtjit.load(tmp_path / "m.npz")
        assert_trees_identical(model, loaded)
        assert loaded.n_outputs_ == model.n_outputs_
        np.testing.assert_array_equal(loaded.predict(data), model.predict(data))
    for a, b in zip(loaded_classes(clf, tmp_path), clf.classes_, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_load_checks_the_classes_of_every_output(tmp_path):
    X, Y = iris_two_labels()
    dtjit.save(DecisionTreeClassifier(max_depth=2).fit(X, Y), tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as archive:
        members = {name: archive[name] for name in archive.files}
    for name, edit in (("classes_1", None), ("classes_0", members["classes_0"][:2])):
        tampered = {k: v for k, v in members.items() if k != name}
        if edit is not None:
            tampered[name] = edit
        np.savez(tmp_path / "bad.npz", **tampered)
        with pytest.raises(dtjit.TreeFormatError, match="classes do not match"):
            dtjit.load(tmp_path / "bad.npz")


def loaded_classes(model, tmp_path):
    dtjit.save(model, tmp_path / "c.npz")
    loaded = dtjit.load(tmp_path / "c.npz")
    np.testing.assert_array_equal(loaded.n_classes_, model.n_classes_)
    return loaded.classes_


@pytest.mark.parametrize(
    ("estimator", "what"),
    [
        (DecisionTreeClassifier(splitter="hist"), "splitter='hist'"),
        (DecisionTreeClassifier(criterion="gain_ratio"), "criterion='gain_ratio'"),
        (DecisionTreeClassifier(mdl_stop=True), "mdl_stop=True"),
        (DecisionTreeClassifier(categorical_features=[0]), "categorical_features"),
        (DecisionTreeRegressor(criterion="poisson"), "criterion='poisson'"),
        (DecisionTreeRegressor(criterion="absolute_error"), "criterion='absolute_error'"),
    ],
)
def test_unsupported_combinations_raise(estimator, what):
    X, Y = iris_two_labels()
    X = X.copy()
    X[:, 0] = np.round(X[:, 0])  # valid category codes for categorical_features=[0]
    with pytest.raises(ValueError, match=f"Multi-output y .* with {what}"):
        estimator.fit(X, Y)


def test_exports_and_validation_pruning_refuse_multi_output(tmp_path):
    from dtjit.export import export_graphviz, export_rules, export_text

    X, Y = iris_two_labels()
    clf = DecisionTreeClassifier(max_depth=3).fit(X, Y)
    for export in (export_text, export_rules, export_graphviz):
        with pytest.raises(ValueError, match="single-output"):
            export(clf)
    with pytest.raises(ValueError, match="single-output"):
        dtjit.pruning.reduced_error_prune(clf, X, Y)
    # Jupyter: scikit-learn's diagram alone (no drawing), the tree's repr as text.
    assert "<summary>parameters</summary>" not in clf._repr_html_()
    assert clf.tree_._repr_html_().startswith("<pre>Tree(")
    dtjit.save(clf, tmp_path / "m.npz")
    from dtjit.cli import main

    with pytest.raises(ValueError, match="2 outputs; the dtjit command handles single-output"):
        main(["--debug", "show", str(tmp_path / "m.npz")])


def test_score_as_scikit_learn_mixins():
    X, Y = iris_two_labels()
    ours, theirs = fit_both({"max_depth": 3}, X, Y)
    # accuracy_score does not take several multiclass outputs: the same error for both.
    for model in (ours, theirs):
        with pytest.raises(ValueError, match="multiclass-multioutput is not supported"):
            model.score(X, Y)
    labels = (Y == 1).astype(int)  # two binary outputs: multilabel, subset accuracy
    ours, theirs = fit_both({"max_depth": 3}, X, labels)
    assert_parity(ours, theirs, X, labels)
    assert ours.score(X, labels) == theirs.score(X, labels)
