"""``dtjit.export_rules``: one if-then rule per leaf.

The rules are parsed back from their text (format ``IF a <= 1.23 AND b > 4.56 THEN class = X
(support N, confidence C)``, or ``THEN value = V (support N)``). They are checked in two
ways. (1) Their printed thresholds, at ``decimals=12``, match the tree's float64
thresholds. (2) Evaluated on the data, they are mutually exclusive and exhaustive, and
each rule agrees with the tree (same rows as its leaf, same class or value, same support).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import sample_rows
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.exceptions import NotFittedError

import dtjit

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"
DECIMALS = 12

NUMBER = r"-?\d+(?:\.\d+)?"
RULE = re.compile(
    rf"^IF (?P<cond>.+?) THEN (?:"
    rf"class = (?P<cls>.+) \(support (?P<csup>\d+), confidence (?P<conf>{NUMBER})\)"
    rf"|value = (?P<val>{NUMBER}) \(support (?P<vsup>\d+)\))$"
)
CONDITION = re.compile(rf"^(?P<name>.+) (?P<op><=|>) (?P<num>{NUMBER})$")


# ----------------------------------------------------------------------------------------
# Parsing and reconstruction
# ----------------------------------------------------------------------------------------


def parse_rule(text, names):
    """Return (conditions, conclusion, support).

    conditions is a list of (feature, op, threshold), conclusion is a class string or a
    float value.
    """
    hit = RULE.match(text)
    assert hit, f"unparseable rule: {text!r}"
    conditions = []
    if hit["cond"] != "TRUE":
        for part in hit["cond"].split(" AND "):
            c = CONDITION.match(part)
            assert c, f"unparseable condition {part!r} in {text!r}"
            conditions.append((names.index(c["name"]), c["op"], float(c["num"])))
    if hit["cls"] is not None:
        return conditions, (hit["cls"], float(hit["conf"])), int(hit["csup"])
    return conditions, float(hit["val"]), int(hit["vsup"])


def rule_mask(conditions, X):
    """Rows of X that satisfy every condition (float32 values compared in float64)."""
    X64 = np.asarray(X, dtype=np.float32).astype(np.float64)
    mask = np.ones(X64.shape[0], dtype=bool)
    for f, op, t in conditions:
        mask &= X64[:, f] <= t if op == "<=" else X64[:, f] > t
    return mask


def leaf_bounds(tree):
    """{leaf: {feature: (lower exclusive, upper inclusive)}} rebuilt from the tree's arrays."""
    out = {}
    stack = [(0, {})]
    while stack:
        node, bounds = stack.pop()
        if tree.children_left[node] == -1:
            out[node] = bounds
            continue
        f, t = int(tree.feature[node]), float(tree.threshold[node])
        low, high = bounds.get(f, (-np.inf, np.inf))
        stack.append((tree.children_left[node], {**bounds, f: (low, min(high, t))}))
        stack.append((tree.children_right[node], {**bounds, f: (max(low, t), high)}))
    return out


def bounds_to_conditions(bounds):
    conditions = []
    for f, (low, high) in bounds.items():
        if low > -np.inf:
            conditions.append((f, ">", low))
        if high < np.inf:
            conditions.append((f, "<=", high))
    return conditions


def _take(X, mask):
    return X.iloc[np.flatnonzero(mask)] if hasattr(X, "iloc") else X[mask]


def _rounding_tolerance(x, decimals):
    """How far a number printed with `decimals` digits and parsed back may be from x."""
    return 0.5 * 10.0**-decimals + 8 * np.spacing(abs(x))


def check_rules_against_tree(est, X, names, decimals=DECIMALS):
    """Every check that holds for any fitted tree and its training X. Returns the parsed rules."""
    tree = est.tree_
    X_in = X  # what the estimator is given (may be a DataFrame)
    X = np.asarray(X)
    rules = dtjit.export_rules(est, feature_names=names, decimals=decimals)
    leaves = np.flatnonzero(tree.children_left == -1)
    assert len(rules) == len(leaves) == est.get_n_leaves()
    parsed = [parse_rule(r, list(names)) for r in rules]
    exact = leaf_bounds(tree)
    leaf_of_row = est.apply(X_in)
    covered = np.zeros(X.shape[0], dtype=int)
    # Rules come in breadth-first leaf order (sort_by=None).
    for leaf, (conditions, conclusion, support) in zip(leaves, parsed, strict=True):
        # Tightest bounds only: each feature at most once per direction.
        keys = [(f, op) for f, op, _ in conditions]
        assert len(keys) == len(set(keys)), rules
        # The printed thresholds are the tree's, rounded to `decimals`.
        expected = sorted(bounds_to_conditions(exact[leaf]))
        got = sorted(conditions)
        assert [(f, op) for f, op, _ in got] == [(f, op) for f, op, _ in expected]
        for (_, _, t_got), (_, _, t_exact) in zip(got, expected, strict=True):
            assert abs(t_got - t_exact) <= _rounding_tolerance(t_exact, decimals)
        # The rule selects exactly the rows of its leaf, with the tree's exact thresholds and
        # with the printed ones.
        in_leaf = leaf_of_row == leaf
        np.testing.assert_array_equal(rule_mask(bounds_to_conditions(exact[leaf]), X), in_leaf)
        mask = rule_mask(conditions, X)
        np.testing.assert_array_equal(mask, in_leaf)
        covered += mask
        # Support is the leaf's training row count (not its weight).
        assert support == tree.n_node_samples[leaf] == in_leaf.sum()
        value = tree.value[leaf, 0]
        if isinstance(conclusion, tuple):
            label, confidence = conclusion
            assert label == str(est.classes_[np.argmax(value)])
            assert abs(confidence - value.max()) <= _rounding_tolerance(value.max(), decimals)
            assert {str(p) for p in est.predict(_take(X_in, mask))} <= {label}
        else:
            assert abs(conclusion - value[0]) <= _rounding_tolerance(value[0], decimals)
            np.testing.assert_array_equal(est.predict(_take(X_in, mask)), value[0])
    # Mutually exclusive and exhaustive on every row.
    np.testing.assert_array_equal(covered, 1)
    return parsed


# ----------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def breast_cancer():
    data = load_breast_cancer()
    return data.data, data.target, [str(n) for n in data.feature_names]


@pytest.fixture(scope="module")
def covtype_sample(covtype_table):
    """20,000 rows of UCI Covertype (54 features, 7 classes), drawn with seed 1."""
    X, y, names = covtype_table
    rows = sample_rows(len(y), 20_000, seed=1)
    return X[rows], y[rows], names


# ----------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_depth", [None, 4], ids=["full", "depth4"])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_breast_cancer_rules_partition_the_rows(breast_cancer, criterion, max_depth):
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth).fit(X, y)
    check_rules_against_tree(est, X, names)


def test_breast_cancer_rules_on_unseen_points(breast_cancer):
    """Exclusive and exhaustive on any input, not only the training rows. The rule a point
    satisfies names the class the tree predicts."""
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(random_state=0).fit(X[::2], y[::2])
    rng = np.random.default_rng(0)
    X_new = np.vstack([X[1::2], rng.uniform(X.min(0), X.max(0), size=(2000, X.shape[1]))])
    parsed = [
        parse_rule(r, names)
        for r in dtjit.export_rules(est, feature_names=names, decimals=DECIMALS)
    ]
    masks = np.array([rule_mask(conditions, X_new) for conditions, _, _ in parsed])
    np.testing.assert_array_equal(masks.sum(axis=0), 1)
    labels = np.array([int(conclusion[0]) for _, conclusion, _ in parsed])
    np.testing.assert_array_equal(labels[masks.argmax(axis=0)], est.predict(X_new))


@pytest.mark.slow
def test_covtype_rules_partition_the_rows(covtype_sample):
    X, y, names = covtype_sample
    est = dtjit.DecisionTreeClassifier(max_depth=10).fit(X, y)
    assert est.get_n_leaves() > 200
    parsed = check_rules_against_tree(est, X, names)
    assert {conclusion[0] for _, conclusion, _ in parsed} <= {str(c) for c in range(1, 8)}


def test_default_names_and_weighted_confidence(breast_cancer):
    """Without names the features are x0, x1, .... Confidence is the weighted class
    fraction. Support stays a row count."""
    X, y, _ = breast_cancer
    est = dtjit.DecisionTreeClassifier(max_depth=3, class_weight="balanced").fit(X, y)
    names = [f"x{j}" for j in range(X.shape[1])]
    assert dtjit.export_rules(est, decimals=DECIMALS) == dtjit.export_rules(
        est, feature_names=names, decimals=DECIMALS
    )
    check_rules_against_tree(est, X, names)
    # The weights matter here: at least one leaf's weighted fraction is not its row fraction.
    tree = est.tree_
    leaves = np.flatnonzero(tree.children_left == -1)
    row_fraction = [
        np.mean(y[est.apply(X) == leaf] == np.argmax(tree.value[leaf, 0])) for leaf in leaves
    ]
    assert not np.allclose(row_fraction, tree.value[leaves, 0].max(axis=1))


def test_regression_rules_print_values():
    X, y = load_diabetes(return_X_y=True)
    names = [f"x{j}" for j in range(X.shape[1])]
    for max_depth in (3, None):
        est = dtjit.DecisionTreeRegressor(max_depth=max_depth).fit(X, y)
        rules = dtjit.export_rules(est, decimals=DECIMALS)
        assert all(" THEN value = " in r and "class" not in r for r in rules)
        assert all(re.search(r"\(support \d+\)$", r) for r in rules)
        check_rules_against_tree(est, X, names)
    short = dtjit.export_rules(dtjit.DecisionTreeRegressor(max_depth=1).fit(X, y))
    assert len(short) == 2
    assert all(
        re.fullmatch(rf"IF x\d+ (<=|>) {NUMBER} THEN value = \d+\.\d\d \(support \d+\)", r)
        for r in short
    ), short


def test_sort_by(breast_cancer):
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(min_samples_leaf=3).fit(X, y)
    tree = est.tree_
    leaves = np.flatnonzero(tree.children_left == -1)
    plain = dtjit.export_rules(est, feature_names=names, decimals=DECIMALS)
    # None: breadth-first leaf order.
    assert [parse_rule(r, names)[2] for r in plain] == tree.n_node_samples[leaves].tolist()
    by_support = dtjit.export_rules(est, feature_names=names, decimals=DECIMALS, sort_by="support")
    supports = [parse_rule(r, names)[2] for r in by_support]
    assert supports == sorted(supports, reverse=True)
    assert len(set(supports)) > 1
    by_confidence = dtjit.export_rules(
        est, feature_names=names, decimals=DECIMALS, sort_by="confidence"
    )
    confidences = [parse_rule(r, names)[1][1] for r in by_confidence]
    assert confidences == sorted(confidences, reverse=True)
    assert len(set(confidences)) > 1
    # Sorting only reorders the rules.
    assert sorted(by_support) == sorted(plain) == sorted(by_confidence)


@pytest.mark.parametrize("bad", ["Support", "value", "", "depth", 1])
def test_bad_sort_by(breast_cancer, bad):
    X, y, _ = breast_cancer
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="sort_by"):
        dtjit.export_rules(est, sort_by=bad)


def test_names_and_errors():
    X, y = load_iris(return_X_y=True)
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="feature_names"):
        dtjit.export_rules(est, feature_names=["a", "b"])
    rules = dtjit.export_rules(est, class_names=["setosa", "versicolor", "virginica"])
    assert rules[0].startswith("IF x2 <= 2.45 THEN class = setosa (support 50")
    assert {r.split(" THEN class = ")[1].split(" ")[0] for r in rules} == {
        "setosa",
        "versicolor",
        "virginica",
    }
    with pytest.raises(NotFittedError):
        dtjit.export_rules(dtjit.DecisionTreeClassifier())


def test_dataframe_column_names_are_used():
    pd = pytest.importorskip("pandas")
    data = load_iris(as_frame=True)
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(data.data, data.target)
    rules = dtjit.export_rules(est, decimals=DECIMALS)
    check_rules_against_tree(est, data.data, list(data.data.columns))
    assert all(isinstance(c, str) for c in data.data.columns)
    assert any("petal" in r for r in rules)
    assert isinstance(data.data, pd.DataFrame)


def test_single_leaf_tree():
    X = np.arange(10.0).reshape(5, 2)
    est = dtjit.DecisionTreeClassifier().fit(X, ["a"] * 5)
    assert dtjit.export_rules(est) == ["IF TRUE THEN class = a (support 5, confidence 1.00)"]
    reg = dtjit.DecisionTreeRegressor().fit(X, [2.5] * 5)
    assert dtjit.export_rules(reg) == ["IF TRUE THEN value = 2.50 (support 5)"]
