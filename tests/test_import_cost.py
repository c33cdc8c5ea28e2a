"""`import dtjit` + fit + predict without scikit-learn's import, and everything else unchanged.

Issue 3: importing scikit-learn costs most of the start-up budget, so dtjit only imports it
when the user does (or asks for something only scikit-learn provides). The subprocess tests
check both sides: a plain numpy session never imports ``sklearn``, and a session that
imports scikit-learn later still gets scikit-learn estimators in every respect. The
in-process tests check that the fast paths give scikit-learn's exact values and errors.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import sklearn.base
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state as sklearn_check_random_state
from sklearn.utils import compute_sample_weight
from sklearn.utils._param_validation import InvalidParameterError, make_constraint
from sklearn.utils.validation import validate_data

from dtjit import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    _base,
    _scores,
    _validation,
)
from dtjit._constraints import _accepts

# Records who imports scikit-learn first, so a failure names the culprit.
_IMPORT_TRACER = textwrap.dedent(
    """
    import sys, traceback

    class _Tracer:
        first_stack = None

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "sklearn" and _Tracer.first_stack is None:
                _Tracer.first_stack = "".join(traceback.format_stack())
            return None

    sys.meta_path.insert(0, _Tracer())

    def assert_no_sklearn(step):
        if "sklearn" in sys.modules:
            raise AssertionError(
                f"{step} imported scikit-learn; first import from:\\n{_Tracer.first_stack}"
            )
    """
)


def _run(script: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_TRACER + textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.fixture(scope="module")
def iris_file(iris_data, tmp_path_factory):
    """Iris in an .npz, for subprocesses that must not import scikit-learn to load it."""
    path = tmp_path_factory.mktemp("iris") / "iris.npz"
    np.savez(path, X=iris_data[0], y=iris_data[1])
    return str(path)


def test_plain_numpy_session_never_imports_sklearn(iris_file, tmp_path):
    out = _run(
        """
        import numpy as np
        import dtjit
        assert_no_sklearn("import dtjit")
        from dtjit import DecisionTreeClassifier, DecisionTreeRegressor

        data = np.load(sys.argv[1])
        X, y = data["X"], data["y"]
        clf = DecisionTreeClassifier(max_depth=3, random_state=0, n_jobs=2).fit(X, y)
        clf.predict(X), clf.predict_proba(X), clf.predict_log_proba(X), clf.apply(X)
        clf.decision_path(X)
        accuracy = clf.score(X, y)
        clf.score(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
        clf.get_depth(), clf.get_n_leaves(), clf.feature_importances_
        clf.set_params(max_depth=2).get_params()
        dtjit.save(clf, sys.argv[2])
        loaded = dtjit.load(sys.argv[2])
        assert (loaded.predict(X) == clf.predict(X)).all()
        dtjit.export_text(clf), dtjit.export_graphviz(clf), dtjit.to_json(clf)

        # NaN, sample weights, class weights, a categorical feature, int X and y.
        X_nan = X.copy()
        X_nan[::7, 0] = np.nan
        weights = np.arange(1, len(y) + 1, dtype=np.float64)
        DecisionTreeClassifier(class_weight="balanced").fit(X_nan, y, weights).predict(X_nan)
        DecisionTreeClassifier(class_weight={0: 1.0, 1: 2.0, 2: 0.5}).fit(X, y)
        X_cat = X.copy()
        X_cat[:, 3] = np.digitize(X[:, 3], [0.5, 1.0, 1.5, 2.0])
        cat = DecisionTreeClassifier(categorical_features=[3], max_depth=3).fit(X_cat, y)
        cat.predict(X_cat), cat.score(X_cat, y)
        DecisionTreeClassifier(max_depth=2).fit(X.astype(np.int64), y.astype(np.int32))

        reg = DecisionTreeRegressor(max_depth=4).fit(X[:, :3], X[:, 3])
        reg.predict(X[:, :3]), reg.apply(X[:, :3]), reg.decision_path(X[:, :3])
        r2 = reg.score(X[:, :3], X[:, 3], sample_weight=weights)
        DecisionTreeRegressor().fit(X_nan[:, :3], X[:, 3], sample_weight=weights)
        DecisionTreeRegressor(max_depth=2).fit(X[:, :2], X[:, 2:]).score(X[:, :2], X[:, 2:])
        dtjit.export_text(reg)
        assert_no_sklearn("a plain fit / predict / score / save / export session")

        # The command line builds its parser (the bench command's defaults included) and
        # shows a saved model without scikit-learn: `dtjit --help` paid 2 s for it before.
        import contextlib, io
        from dtjit.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as shown:
            assert main(["show", sys.argv[2]]) == 0
            assert main(["--help"]) == 0
        assert "feature" in shown.getvalue() and "usage: dtjit" in shown.getvalue()
        assert_no_sklearn("dtjit show and dtjit --help")
        print(accuracy, r2)
        """,
        iris_file,
        str(tmp_path / "model.npz"),
    )
    accuracy, r2 = (float(v) for v in out.split())
    assert 0.9 < accuracy <= 1.0 and 0.9 < r2 <= 1.0


def test_bad_parameter_and_unfitted_errors_are_sklearns_without_prior_import():
    _run(
        """
        import numpy as np
        from dtjit import DecisionTreeClassifier
        X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 2
        try:
            DecisionTreeClassifier(max_depth=0).fit(X, y)
        except ValueError as exc:
            from sklearn.utils._param_validation import InvalidParameterError
            assert type(exc) is InvalidParameterError, type(exc)
            assert "The 'max_depth' parameter of DecisionTreeClassifier" in str(exc)
        else:
            raise AssertionError("max_depth=0 was accepted")
        try:
            DecisionTreeClassifier().predict(X)
        except Exception as exc:
            from sklearn.exceptions import NotFittedError
            assert type(exc) is NotFittedError, type(exc)
        else:
            raise AssertionError("an unfitted estimator predicted")
        """
    )


def test_sklearn_imported_after_fit_finds_sklearn_estimators(iris_file):
    _run(
        """
        import pickle
        import numpy as np
        from dtjit import DecisionTreeClassifier, DecisionTreeRegressor

        data = np.load(sys.argv[1])
        X, y = data["X"], data["y"]
        early = DecisionTreeClassifier(max_depth=2).fit(X, y)  # before scikit-learn
        assert_no_sklearn("fit")
        text_repr = repr(early)  # imports scikit-learn for its pretty-printer
        assert text_repr == "DecisionTreeClassifier(max_depth=2)", text_repr

        import sklearn
        from sklearn.base import BaseEstimator, ClassifierMixin, clone, is_classifier
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.tree import export_text
        from sklearn.utils import estimator_html_repr

        assert isinstance(early, BaseEstimator) and isinstance(early, ClassifierMixin)
        assert is_classifier(early) and not is_classifier(DecisionTreeRegressor())
        assert clone(early).get_params() == early.get_params()
        assert "dtjit-tree" in early._repr_html_()  # the tree drawing, then the diagram
        assert "dtjit-tree" in early._repr_mimebundle_()["text/html"]
        assert "DecisionTreeClassifier" in estimator_html_repr(early)
        assert export_text(early).startswith("|--- feature_")
        assert (pickle.loads(pickle.dumps(early)).predict(X) == early.predict(X)).all()

        search = GridSearchCV(
            make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)),
            {"decisiontreeclassifier__max_depth": [1, 3]},
            cv=3,
        ).fit(X, y)
        assert search.best_params_ == {"decisiontreeclassifier__max_depth": 3}

        with sklearn.config_context(enable_metadata_routing=True):
            routed = DecisionTreeRegressor().set_fit_request(sample_weight=True)
            assert routed.get_metadata_routing().fit.requests == {"sample_weight": True}
        """,
        iris_file,
    )


def test_sklearn_tags_asked_before_sklearn_is_imported():
    """Tags read before the import are complete: the chain restarts along the new bases."""
    out = _run(
        """
        from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
        tags = DecisionTreeClassifier().__sklearn_tags__()
        print(tags.estimator_type, tags.input_tags.allow_nan, tags.classifier_tags.multi_label)
        print(DecisionTreeRegressor(splitter="hist").__sklearn_tags__().target_tags.multi_output)
        """
    )
    assert out.split() == ["classifier", "True", "True", "False"]


def test_lazy_public_names_resolve_and_dir_is_unchanged():
    import dtjit
    from dtjit import MDLPDiscretizer, pruning, select_ccp_alpha

    assert dtjit.MDLPDiscretizer is MDLPDiscretizer and dtjit.pruning is pruning
    assert select_ccp_alpha is pruning.select_ccp_alpha and dtjit.prune is pruning.prune
    assert set(dtjit.__all__) <= set(dir(dtjit))
    with pytest.raises(AttributeError, match="has no attribute 'DecisionTree'"):
        dtjit.DecisionTree  # noqa: B018


def test_sklearn_attribute_list_covers_the_installed_sklearn():
    """Every BaseEstimator / mixin attribute we do not define is reachable before the import."""
    defined = set()
    for klass in DecisionTreeClassifier.__mro__ + DecisionTreeRegressor.__mro__:
        if klass.__module__.startswith("dtjit"):
            defined |= set(vars(klass))
    sklearn_names = set()
    for klass in (
        sklearn.base.BaseEstimator,
        sklearn.base.ClassifierMixin,
        sklearn.base.RegressorMixin,
        sklearn.base.MultiOutputMixin,
    ):
        for k in klass.__mro__[:-1]:
            sklearn_names |= {n for n in vars(k) if not n.startswith("__")}
    sklearn_names |= {"set_fit_request", "set_score_request"}
    assert sklearn_names - defined <= _base.SKLEARN_ATTRIBUTES


# -------------------------------------------------------------- parameters: same verdicts
PROBES = [
    None, True, False, np.bool_(True), 0, 1, 2, 255, 256, -1, 2**32 - 1, 2**32, np.int32(3),
    np.int64(0), 0.0, 0.5, 1.0, 1.5, np.float64(0.5), np.float32(0.5), float("nan"),
    float("inf"), "best", "hist", "sqrt", "balanced", "from_dtype", "x", [0, 1], (1,), {},
    {0: 1.0}, np.array([0, 2]), np.random.RandomState(0), object(),
]  # fmt: skip


@pytest.mark.parametrize("est_class", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_constraints_accept_what_sklearn_accepts(est_class):
    own = est_class._parameter_table
    sklearn_table = est_class._parameter_constraints
    assert own.keys() == sklearn_table.keys() == set(est_class._get_param_names())
    for name in own:
        for value in PROBES:
            ours = any(_accepts(c, value) for c in own[name])
            theirs = any(make_constraint(c).is_satisfied_by(value) for c in sklearn_table[name])
            assert ours == theirs, (name, value)


@pytest.mark.parametrize(
    "params", [{"max_depth": 0}, {"splitter": "fast"}, {"min_samples_leaf": 1.0}, {"n_jobs": 1.5}]
)
def test_bad_parameter_raises_sklearns_error(params, iris_data):
    with pytest.raises(InvalidParameterError, match=next(iter(params))):
        DecisionTreeClassifier(**params).fit(*iris_data)


def test_set_params_rejects_unknown_and_sets_nested():
    est = DecisionTreeClassifier()
    with pytest.raises(ValueError, match="Invalid parameter 'depth' for estimator"):
        est.set_params(depth=3)
    assert est.set_params(max_depth=3, ccp_alpha=0.1).get_params()["max_depth"] == 3
    assert est.get_params() == sklearn.base.BaseEstimator.get_params(est)


# ----------------------------------------------------------- data checks: same results
def _sklearn_fit_data(est, X, y, y_numeric):
    return validate_data(
        est, X, y, dtype=np.float32, order="C", ensure_min_samples=1,
        y_numeric=y_numeric, ensure_all_finite="allow-nan", multi_output=True,
    )  # fmt: skip


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32, np.int64, np.uint8, bool])
@pytest.mark.parametrize("y_kind", ["int", "float", "2d"])
def test_fit_data_fast_path_equals_validate_data(iris_data, x_dtype, y_kind):
    X, y = iris_data
    X = np.asfortranarray(X[:, ::-1]).astype(x_dtype)
    y = {"int": y, "float": y.astype(float), "2d": np.column_stack([y, y[::-1]])}[y_kind]
    ours, theirs = DecisionTreeRegressor(), DecisionTreeRegressor()
    ours.feature_names_in_ = np.array(["a"], dtype=object)  # from an earlier fit: dropped
    X_ours, y_ours = _validation.validate_fit_data(ours, X, y, y_numeric=True)
    X_theirs, y_theirs = _sklearn_fit_data(theirs, X, y, True)
    assert X_ours.dtype == X_theirs.dtype == np.float32 and X_ours.flags.c_contiguous
    np.testing.assert_array_equal(X_ours, X_theirs)
    assert y_ours is y and np.array_equal(y_theirs, y)
    assert ours.n_features_in_ == theirs.n_features_in_ == X.shape[1]
    assert not hasattr(ours, "feature_names_in_")


@pytest.mark.parametrize(
    "X",
    [
        np.full((4, 3), 3e38),  # finite, but their float32 sum overflows: the exact test
        np.array([[np.nan, 1.0], [2.0, np.nan]]),  # NaN is allowed: the sum is NaN
    ],
)
def test_fit_data_accepts_finite_data_whose_sum_is_not(X):
    y = np.arange(X.shape[0]) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning from the summing pass
        X_ours, _ = _validation.validate_fit_data(DecisionTreeClassifier(), X, y, y_numeric=False)
    X_theirs, _ = _sklearn_fit_data(DecisionTreeClassifier(), X, y, False)
    np.testing.assert_array_equal(X_ours, X_theirs)


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.array([[1.0, np.inf], [2.0, 3.0]]), np.array([0, 1]), "infinity"),
        (np.array([[np.nan, -np.inf], [np.inf, 3.0]]), np.array([0, 1]), "infinity"),
        (np.empty((0, 2)), np.array([], dtype=int), "minimum of 1 is required"),
        (np.ones((3, 2)), np.array([0.0, np.nan, 1.0]), "Input y contains NaN"),
        (np.ones((3, 2)), np.array([0, 1]), "inconsistent numbers of samples"),
    ],
)
def test_fit_data_errors_are_validate_datas(X, y, match):
    with pytest.raises(ValueError, match=match) as ours:
        _validation.validate_fit_data(DecisionTreeClassifier(), X, y, y_numeric=False)
    with pytest.raises(ValueError) as theirs:
        _sklearn_fit_data(DecisionTreeClassifier(), X, y, False)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "class_weight, y",
    [
        ("balanced", np.array([0, 0, 0, 1, 2, 2])),
        ("balanced", np.array([[0, 1], [0, 1], [1, 1], [1, 0], [1, 1], [2, 0]])),
        ({0: 1.0, 1: 3.0, 2: 0.5}, np.array([2, 0, 1, 1, 2])),
        ([{0: 1.0, 1: 2.0}, {0: 4.0, 1: 1.0}], np.array([[0, 1], [1, 1], [1, 0]])),
        ({1: 2.0}, np.array([0, 1, 1])),  # unnamed class: scikit-learn's rule
        ({"a": 2.0, "b": 1.0}, np.array(["a", "b", "b"])),  # strings: scikit-learn
    ],
)
def test_class_sample_weight_equals_compute_sample_weight(class_weight, y):
    np.testing.assert_array_equal(
        _validation.class_sample_weight(class_weight, y), compute_sample_weight(class_weight, y)
    )


def test_sample_weight_and_targets_checks_match_sklearn(iris_data):
    X, y = iris_data
    weights = np.arange(len(y), dtype=np.int64)
    checked = _validation.check_sample_weight(weights, len(y), X)
    assert checked.dtype == np.float64 and np.array_equal(checked, weights)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        _validation.check_sample_weight(-weights, len(y), X)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        _validation.check_classification_targets(X[:, 0])
    _validation.check_classification_targets(y.astype(float))  # integral floats: classes
    assert _validation.check_random_state(None) is sklearn_check_random_state(None)
    state = np.random.RandomState(1)
    assert _validation.check_random_state(state) is state
    seeded = _validation.check_random_state(np.int64(3))
    assert seeded.randint(1 << 30) == sklearn_check_random_state(3).randint(1 << 30)
    with pytest.raises(ValueError, match="cannot be used to seed"):
        _validation.check_random_state("seed")


# ------------------------------------------------------------------- score: same floats
def _regression_targets(diabetes_data):
    X, y = diabetes_data
    rng = np.random.default_rng(0)
    return X, y, rng.uniform(0.0, 3.0, size=len(y))


@pytest.mark.parametrize("weighted", [False, True])
def test_scores_equal_sklearn_metrics(breast_cancer_data, diabetes_data, weighted):
    X, y = breast_cancer_data
    clf = DecisionTreeClassifier(max_depth=2).fit(X[::2], y[::2])
    weights = np.linspace(0.1, 2.0, len(y)) if weighted else None
    assert clf.score(X, y, sample_weight=weights) == accuracy_score(
        y, clf.predict(X), sample_weight=weights
    )
    X, y, reg_weights = _regression_targets(diabetes_data)
    reg_weights = reg_weights if weighted else None
    reg = DecisionTreeRegressor(max_depth=3).fit(X[::2], y[::2])
    assert reg.score(X, y, sample_weight=reg_weights) == r2_score(
        y, reg.predict(X), sample_weight=reg_weights
    )
    Y = np.column_stack([y, -0.5 * y + 3.0])
    multi = DecisionTreeRegressor(max_depth=3).fit(X[::2], Y[::2])
    assert multi.score(X, Y, sample_weight=reg_weights) == r2_score(
        Y, multi.predict(X), sample_weight=reg_weights
    )


def test_r2_edge_cases_equal_sklearn():
    constant = np.full(5, 2.0)
    off = np.array([2.0, 2.0, 2.0, 2.0, 2.5])
    assert _scores.r2(constant, constant) == r2_score(constant, constant) == 1.0
    assert _scores.r2(constant, off) == r2_score(constant, off) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's UndefinedMetricWarning
        assert np.isnan(_scores.r2(np.array([1.0]), np.array([1.0])))
    labels = np.array(["a", "b", "a"])
    assert _scores.accuracy(labels, np.array(["a", "a", "a"])) == pytest.approx(2 / 3)


def test_check_input_is_left_out_of_metadata_routing():
    """fit / predict / predict_proba take check_input, which routing ignores as for
    scikit-learn's trees (dtjit marks it once scikit-learn is imported)."""
    from sklearn import config_context
    from sklearn import tree as sk_tree

    pairs = [
        (DecisionTreeClassifier, sk_tree.DecisionTreeClassifier),
        (DecisionTreeRegressor, sk_tree.DecisionTreeRegressor),
    ]
    with config_context(enable_metadata_routing=True):
        for ours, theirs in pairs:
            mine, sklearns = ours().get_metadata_routing(), theirs().get_metadata_routing()
            for method in ("fit", "predict", "predict_proba", "score"):
                assert getattr(mine, method).requests == getattr(sklearns, method).requests
