"""Property test: on random continuous data, dtjit grows scikit-learn's tree, split for split.

Hypothesis draws small problems (rows, features, classes or a continuous target, criterion,
depth and leaf limits, optional sample weights); both libraries fit them and
``_assertions.compare_with_sklearn`` walks the two trees in lockstep, checking every node's
split, sample count, value and impurity. Continuous features make distinct values almost
sure, but not distinct *splits*: in a small node two features can cut the rows the same way,
and then scikit-learn picks among the equal splits at random. Such a node must be a proven
tie (both splits equally good on the node's rows); any other difference fails. A tree
without ties must also predict exactly as scikit-learn's.

``DTJIT_HYPOTHESIS_EXAMPLES`` sets the number of examples (default 200; e.g. 2000).
"""

from __future__ import annotations

import os

import numpy as np
from _assertions import assert_same_as_sklearn
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn import tree as sklearn_tree

from dtjit import DecisionTreeClassifier, DecisionTreeRegressor

EXAMPLES = int(os.environ.get("DTJIT_HYPOTHESIS_EXAMPLES", "200"))


@st.composite
def problems(draw):
    """A small fitting problem: data, target, weights and parameters."""
    classify = draw(st.booleans())
    n_samples = draw(st.integers(2, 80))
    n_features = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # float32 values (what both libraries split on), spread over several scales
    X = rng.normal(size=(n_samples, n_features)) * 10.0 ** rng.integers(-3, 4, n_features)
    X = X.astype(np.float32).astype(np.float64)
    if classify:
        y = rng.integers(0, draw(st.integers(2, 4)), n_samples)
        criterion = draw(st.sampled_from(["gini", "entropy", "log_loss"]))
    else:
        y = rng.normal(size=n_samples) * 10.0 ** draw(st.integers(-2, 3))
        criterion = "squared_error"
    weight = rng.integers(1, 4, n_samples).astype(float) if draw(st.booleans()) else None
    params = {
        "criterion": criterion,
        "max_depth": draw(st.one_of(st.none(), st.integers(1, 8))),
        "min_samples_leaf": draw(st.integers(1, 4)),
        "min_samples_split": draw(st.integers(2, 6)),
    }
    return classify, X, y, weight, params


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(problem=problems())
def test_dtjit_grows_scikit_learns_tree(problem):
    classify, X, y, weight, params = problem
    if classify:
        ours, theirs = DecisionTreeClassifier, sklearn_tree.DecisionTreeClassifier
    else:
        ours, theirs = DecisionTreeRegressor, sklearn_tree.DecisionTreeRegressor
    ours, theirs = ours(**params), theirs(random_state=0, **params)
    ours.fit(X, y, sample_weight=weight)
    theirs.fit(X, y, sample_weight=weight)
    cmp = assert_same_as_sklearn(ours, theirs, X, y, weight, allow_ties=True)
    event("identical trees" if cmp.identical else "trees differ only at proven ties")
