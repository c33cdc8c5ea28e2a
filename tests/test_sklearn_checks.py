"""scikit-learn's estimator-compatibility suite on both dtjit estimators."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from dtjit import DecisionTreeClassifier, DecisionTreeRegressor


@parametrize_with_checks([DecisionTreeClassifier(), DecisionTreeRegressor()])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
