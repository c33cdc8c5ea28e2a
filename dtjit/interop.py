"""dtjit trees as scikit-learn trees, for the tools built around scikit-learn's.

:func:`to_sklearn` copies a fitted dtjit tree into a genuine scikit-learn
``DecisionTreeClassifier`` / ``DecisionTreeRegressor``. Tools that read scikit-learn's tree
object (SHAP's ``TreeExplainer``, skl2onnx, treelite's scikit-learn importer, dtreeviz, and
scikit-learn's own ``export_text`` / ``plot_tree``) then work on it unchanged.
:func:`to_sklearn_forest` wraps that copy in a one-tree random forest, for tools that import
ensembles only (treelite). See ``docs/interop.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["float32_floor", "to_sklearn", "to_sklearn_forest"]

# Hyperparameters copied to the scikit-learn estimator when scikit-learn accepts the value:
# they describe how the tree was grown (and what `clone` + `fit` would do), not the tree.
_SHARED_PARAMS = (
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "max_features",
    "random_state",
    "max_leaf_nodes",
    "min_impurity_decrease",
    "ccp_alpha",
)
_SKLEARN_CRITERIA = {
    "classifier": ("gini", "entropy", "log_loss"),
    "regressor": ("squared_error", "friedman_mse", "absolute_error", "poisson"),
}


def to_sklearn(estimator: Any) -> Any:
    """Return a scikit-learn tree estimator holding exactly the nodes of a dtjit one.

    Parameters
    ----------
    estimator : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted dtjit estimator whose tree has threshold splits only (categorical features
        may be declared, as long as no node splits on a category subset).

    Returns
    -------
    sklearn.tree.DecisionTreeClassifier or sklearn.tree.DecisionTreeRegressor
        A fitted scikit-learn estimator: its ``tree_`` is a ``sklearn.tree._tree.Tree``
        with the same nodes (ids, features, thresholds, NaN directions, values,
        impurities, sample counts) and it has the same ``classes_``, ``n_outputs_``,
        ``n_features_in_`` and ``feature_names_in_``. ``predict``, ``predict_proba``,
        ``apply`` and ``decision_path`` give the same results as the dtjit estimator on
        numeric input, NaN included. Hyperparameters scikit-learn knows are copied too (a
        criterion or splitter it lacks, such as ``gain_ratio`` or ``hist``, is left at
        its default); they only matter if the copy is fitted again.

    Raises
    ------
    TypeError
        If ``estimator`` is not a dtjit tree estimator.
    sklearn.exceptions.NotFittedError
        If it is not fitted.
    ValueError
        If its tree has categorical (subset) splits: scikit-learn's trees have threshold
        splits only.

    Notes
    -----
    Both libraries send a row left when ``x <= threshold`` after converting X to float32,
    and a NaN to the side ``missing_go_to_left`` names. Each threshold is stored as the
    largest float32 not above dtjit's float64 threshold (:func:`float32_floor`): for every
    float32 ``x`` the comparison is unchanged, so scikit-learn's predictions are identical,
    and tools that store thresholds as float32 (ONNX, treelite) get them exactly instead of
    rounded to the nearest float32, which could be above the original and send a row at
    that value left. Class values are fractions in both libraries.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from dtjit import DecisionTreeClassifier
    >>> from dtjit.interop import to_sklearn
    >>> X, y = load_iris(return_X_y=True)
    >>> model = DecisionTreeClassifier(max_depth=3).fit(X, y)
    >>> twin = to_sklearn(model)
    >>> type(twin).__module__
    'sklearn.tree._classes'
    >>> bool((twin.predict(X) == model.predict(X)).all())
    True
    """
    import sklearn.tree
    from sklearn.tree._tree import NODE_DTYPE
    from sklearn.tree._tree import Tree as SklearnTree
    from sklearn.utils.validation import check_is_fitted

    from ._estimators import DecisionTreeClassifier, DecisionTreeRegressor

    if isinstance(estimator, DecisionTreeClassifier):
        kind, target = "classifier", sklearn.tree.DecisionTreeClassifier
    elif isinstance(estimator, DecisionTreeRegressor):
        kind, target = "regressor", sklearn.tree.DecisionTreeRegressor
    else:
        raise TypeError(
            f"to_sklearn takes a dtjit DecisionTreeClassifier or DecisionTreeRegressor, "
            f"got {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "tree_")
    tree = estimator.tree_
    if tree.has_categorical_splits:
        split_nodes = np.flatnonzero(tree.categorical_set >= 0)
        names = getattr(estimator, "feature_names_in_", None)
        features = sorted({int(tree.feature[n]) for n in split_nodes})
        listed = ", ".join(str(names[f]) if names is not None else str(f) for f in features)
        raise ValueError(
            f"this tree has {len(split_nodes)} categorical subset split(s) (on feature(s) "
            f"{listed}); scikit-learn's trees have threshold splits only (x <= t), so it "
            "cannot be converted. Fit without categorical_features (for example on one-hot "
            "or ordinal codes) to export it."
        )

    params = {name: getattr(estimator, name) for name in _SHARED_PARAMS}
    if estimator.criterion in _SKLEARN_CRITERIA[kind]:
        params["criterion"] = estimator.criterion
    if estimator.splitter in ("best", "random"):
        params["splitter"] = estimator.splitter
    if kind == "classifier":
        params["class_weight"] = estimator.class_weight
    twin = target(**params)

    is_leaf = tree.children_left == -1
    nodes = np.zeros(tree.node_count, dtype=NODE_DTYPE)
    nodes["left_child"] = tree.children_left
    nodes["right_child"] = tree.children_right
    # scikit-learn marks leaves with feature -2 and threshold -2 (TREE_UNDEFINED)
    nodes["feature"] = np.where(is_leaf, -2, tree.feature)
    nodes["threshold"] = np.where(is_leaf, -2.0, float32_floor(tree.threshold))
    nodes["impurity"] = tree.impurity
    nodes["n_node_samples"] = tree.n_node_samples
    nodes["weighted_n_node_samples"] = tree.weighted_n_node_samples
    nodes["missing_go_to_left"] = tree.missing_go_to_left
    n_classes = np.atleast_1d(np.asarray(tree.n_classes, dtype=np.intp))
    twin.tree_ = SklearnTree(int(estimator.n_features_in_), n_classes, int(tree.n_outputs))
    twin.tree_.__setstate__(
        {
            "max_depth": int(tree.max_depth),
            "node_count": int(tree.node_count),
            "nodes": nodes,
            "values": np.ascontiguousarray(tree.value, dtype=np.float64),
        }
    )
    for name in (
        "n_features_in_",
        "feature_names_in_",
        "n_outputs_",
        "max_features_",
        "classes_",
        "n_classes_",
    ):
        if hasattr(estimator, name):
            setattr(twin, name, getattr(estimator, name))
    return twin


def float32_floor(threshold: np.ndarray) -> np.ndarray:
    """Return the largest float32 value not above each threshold, as float64.

    Parameters
    ----------
    threshold : ndarray of float64
        Split thresholds (``x <= threshold`` goes left).

    Returns
    -------
    ndarray of float64
        ``t32 <= threshold`` with no float32 strictly between them, so that for every
        float32 ``x``: ``x <= t32`` exactly when ``x <= threshold``. Infinities and NaN
        are kept; a finite threshold below float32's range becomes ``-inf``, one above it
        float32's largest value.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([0.1, 2.5, np.inf])
    >>> bool(float32_floor(t)[0] < 0.1), float(float32_floor(t)[1])
    (True, 2.5)
    """
    threshold = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range: inf, stepped back below
        nearest = threshold.astype(np.float32)
    above = nearest.astype(np.float64) > threshold
    nearest[above] = np.nextafter(nearest[above], np.float32(-np.inf))
    return nearest.astype(np.float64)


def to_sklearn_forest(estimator: Any) -> Any:
    """Return a one-tree scikit-learn random forest holding exactly the nodes of a dtjit tree.

    For tools that import scikit-learn ensembles but not single trees, such as treelite's
    ``treelite.sklearn.import_model``. The forest's one tree is :func:`to_sklearn`'s copy;
    averaging one tree changes nothing, so ``predict``, ``predict_proba`` and ``apply``
    (with one column) agree with the dtjit estimator.

    Parameters
    ----------
    estimator : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted dtjit estimator whose tree has threshold splits only.

    Returns
    -------
    sklearn.ensemble.RandomForestClassifier or sklearn.ensemble.RandomForestRegressor
        Fitted, with ``n_estimators=1``, ``bootstrap=False`` and ``max_features=None``
        (what a single tree on all rows is), and ``estimators_`` holding the copy.

    Raises
    ------
    TypeError, sklearn.exceptions.NotFittedError, ValueError
        As :func:`to_sklearn`.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from dtjit import DecisionTreeRegressor
    >>> from dtjit.interop import to_sklearn_forest
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = DecisionTreeRegressor(max_depth=4).fit(X, y)
    >>> forest = to_sklearn_forest(model)
    >>> len(forest.estimators_), bool((forest.predict(X) == model.predict(X)).all())
    (1, True)
    """
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    tree = to_sklearn(estimator)
    is_classifier = hasattr(tree, "classes_")
    forest_type = RandomForestClassifier if is_classifier else RandomForestRegressor
    forest = forest_type(n_estimators=1, bootstrap=False, max_features=None)
    forest.estimator_ = type(tree)()
    forest.estimators_ = [tree]
    for name in ("n_features_in_", "feature_names_in_", "n_outputs_", "classes_", "n_classes_"):
        if hasattr(tree, name):
            setattr(forest, name, getattr(tree, name))
    return forest
