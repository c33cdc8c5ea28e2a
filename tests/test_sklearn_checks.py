"""scikit-learn's estimator-compatibility suite on both dtjit estimators, every splitter."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from dtjit import DecisionTreeClassifier, DecisionTreeRegressor


@parametrize_with_checks(
    [
        DecisionTreeClassifier(),
        DecisionTreeRegressor(),
        DecisionTreeClassifier(splitter="hist", max_bins=64),
        DecisionTreeRegressor(splitter="hist"),
        DecisionTreeClassifier(splitter="random", random_state=0),
        DecisionTreeRegressor(splitter="random", random_state=0),
    ]
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
