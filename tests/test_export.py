"""``dtjit.export``: rules (text, records, DataFrame), text, Graphviz, Mermaid and JSON.

The first part checks ``export_rules`` through its text. The rules are parsed back from
their text (format ``IF a <= 1.23 AND b > 4.56 THEN class = X (support N, confidence C)``,
or ``THEN value = V (support N)``). They are checked in two ways. (1) Their printed
thresholds, at ``decimals=12``, match the tree's float64 thresholds. (2) Evaluated on the
data, they are mutually exclusive and exhaustive, and each rule agrees with the tree (same
rows as its leaf, same class or value, same support). The second part evaluates the rule
records' conditions directly and checks the other exports against the tree's arrays.
"""

from __future__ import annotations

import dataclasses
import io
import json
import json.scanner
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import sample_rows
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier as SklearnClassifier
from sklearn.tree import export_text as sklearn_export_text

import dtjit
from dtjit._view import edge_condition, resolve_view

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


# ========================================================================================
# Rule records, DataFrame, text, Graphviz, Mermaid and JSON exports
# ========================================================================================


def record_masks(records, X):
    """Rows of X satisfying each record's conditions, evaluated from the record's fields.

    The exact float64 thresholds are compared with float32 values, as the tree does; a
    missing value satisfies a condition only when the condition says so.
    """
    X64 = np.asarray(X, dtype=np.float32).astype(np.float64)
    masks = np.ones((len(records), X64.shape[0]), dtype=bool)
    for k, record in enumerate(records):
        for c in record["conditions"]:
            column = X64[:, c["feature"]]
            holds = column <= c["threshold"] if c["op"] == "<=" else column > c["threshold"]
            masks[k] &= holds | (np.isnan(column) & c["missing"])
    return masks


def check_records_partition(est, X):
    """Every row matches exactly one record, whose leaf and prediction are the tree's."""
    records = dtjit.rule_records(est)
    assert len(records) == est.get_n_leaves()
    masks = record_masks(records, X)
    np.testing.assert_array_equal(masks.sum(axis=0), 1)
    matched = masks.argmax(axis=0)
    leaves = np.array([r["leaf"] for r in records])
    np.testing.assert_array_equal(leaves[matched], est.apply(X))
    predictions = np.array([r["prediction"] for r in records], dtype=object)
    np.testing.assert_array_equal(predictions[matched], est.predict(X).astype(object))
    for record in records:
        assert record["support"] == est.tree_.n_node_samples[record["leaf"]]
        assert not any(c["missing"] for c in record["conditions"])  # fit rejects NaN
    return records


@pytest.fixture(scope="module")
def play_tennis(shared_data):
    """The 14 play-tennis days, every nominal attribute one-hot encoded as 0/1 columns."""
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "weka" / "weather.nominal.csv", dtype=str)
    X = pd.get_dummies(table.drop(columns="play"), prefix_sep="=", dtype=float)
    return X, table["play"]


@pytest.fixture(scope="module")
def penguins(shared_data):
    """Palmer penguins: the four numeric measurements of the 342 complete rows."""
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "penguins.csv")
    numeric = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
    table = table.dropna(subset=numeric)
    return table[numeric], table["species"]


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_records_partition_breast_cancer(breast_cancer, criterion):
    X, y, _ = breast_cancer
    est = dtjit.DecisionTreeClassifier(criterion=criterion).fit(X, y)
    records = check_records_partition(est, X)
    assert all(0.5 <= r["confidence"] <= 1.0 for r in records)


def test_records_partition_penguins_and_unseen_points(penguins):
    X, y = penguins
    est = dtjit.DecisionTreeClassifier(random_state=0).fit(X, y)
    records = check_records_partition(est, X)
    assert {r["prediction"] for r in records} == {"Adelie", "Chinstrap", "Gentoo"}
    rng = np.random.default_rng(0)
    lo, hi = X.min().to_numpy(), X.max().to_numpy()
    unseen = rng.uniform(lo - 5, hi + 5, size=(3000, X.shape[1]))
    check_records_partition(est, type(X)(unseen, columns=X.columns))


@pytest.mark.slow
def test_records_partition_covtype(covtype_sample):
    X, y, names = covtype_sample
    est = dtjit.DecisionTreeClassifier(min_samples_leaf=5).fit(X, y)
    assert est.get_n_leaves() > 500
    check_records_partition(est, X)


def test_records_partition_regression():
    X, y = load_diabetes(return_X_y=True)
    est = dtjit.DecisionTreeRegressor(min_samples_leaf=3).fit(X, y)
    records = check_records_partition(est, X)
    assert all("confidence" not in r and isinstance(r["prediction"], float) for r in records)


@pytest.mark.parametrize("nan_class", [0, 1])  # NaN with the codes sent left, then right
def test_bare_tree_subset_records_partition_every_code(nan_class):
    """A bare Tree knows no labels: its subset conditions name codes, and hold for NaN and
    for codes past the bitset on the side the tree sends them (missing_go_to_left)."""
    rng = np.random.RandomState(0)
    codes = rng.randint(0, 4, 400).astype(float)
    y = np.isin(codes, [0, 1]).astype(int)
    codes[:40] = np.nan
    y[:40] = nan_class
    est = dtjit.DecisionTreeClassifier(categorical_features=[0], max_depth=1)
    est.fit(codes[:, None], y)
    records = dtjit.rule_records(est.tree_)
    probe = np.r_[np.arange(70.0), 500.0, 4000.0, np.nan]
    masks = np.ones((len(records), len(probe)), dtype=bool)
    for k, record in enumerate(records):
        for c in record["conditions"]:
            listed = np.isin(probe, [float(v) for v in c["categories"]])
            holds = listed if c["op"] == "in" else ~listed & ~np.isnan(probe)
            masks[k] &= holds | (np.isnan(probe) & c["missing"])
    np.testing.assert_array_equal(masks.sum(axis=0), 1)
    leaves = np.array([r["leaf"] for r in records])[masks.argmax(axis=0)]
    np.testing.assert_array_equal(leaves, est.apply(probe[:, None]))


def test_records_match_text_rules_and_frame(breast_cancer):
    pd = pytest.importorskip("pandas")
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(max_depth=5).fit(X, y)
    for sort_by in (None, "support", "confidence"):
        records = dtjit.rule_records(est, feature_names=names, sort_by=sort_by)
        texts = dtjit.export_rules(est, feature_names=names, sort_by=sort_by)
        assert [t.split(" THEN ")[0] for t in texts] == [f"IF {r['rule']}" for r in records]
        frame = dtjit.rules_frame(est, feature_names=names, sort_by=sort_by)
        assert isinstance(frame, pd.DataFrame)
        assert list(frame.columns) == ["leaf", "rule", "class", "confidence", "support", "weight"]
        assert frame["leaf"].tolist() == [r["leaf"] for r in records]
        assert frame["rule"].tolist() == [r["rule"] for r in records]
        assert frame["support"].sum() == len(y)
    json.dumps(records)  # plain Python values only
    reg = dtjit.DecisionTreeRegressor(max_depth=3).fit(*load_diabetes(return_X_y=True))
    assert list(dtjit.rules_frame(reg).columns) == ["leaf", "rule", "value", "support", "weight"]
    with pytest.raises(ValueError, match="confidence"):
        dtjit.rule_records(reg, sort_by="confidence")


def test_rules_frame_without_pandas(breast_cancer, monkeypatch):
    X, y, _ = breast_cancer
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        dtjit.rules_frame(est)
    assert len(dtjit.rule_records(est)) == 4  # the rest needs no pandas


# -- export_text ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [{}, {"max_depth": 3}, {"max_depth": 0}, {"decimals": 5, "show_weights": True}],
    ids=["default", "depth3", "depth0", "weights"],
)
def test_export_text_equals_scikit_learn(breast_cancer, options):
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(class_weight={0: 2.0, 1: 1.0}).fit(X, y)
    classes = ["malignant", "benign"]
    ours = dtjit.export_text(est, feature_names=names, class_names=classes, **options)
    theirs = sklearn_export_text(est, feature_names=names, class_names=classes, **options)
    assert ours == theirs
    if options.get("max_depth", 10) < est.get_depth():
        assert "truncated branch of depth" in ours


def test_export_text_regression_and_defaults():
    data = load_diabetes(as_frame=True)
    est = dtjit.DecisionTreeRegressor(max_depth=4).fit(data.data, data.target)
    names = list(data.data.columns)
    text = dtjit.export_text(est, max_depth=2)
    assert text == sklearn_export_text(est, feature_names=names, max_depth=2)
    assert text.splitlines()[0].startswith(f"|--- {names[est.tree_.feature[0]]} <= ")
    # Deliberate difference: without names scikit-learn says feature_0, dtjit x0.
    X, y = load_diabetes(return_X_y=True)
    plain = dtjit.DecisionTreeRegressor(max_depth=2).fit(X, y)
    assert dtjit.export_text(plain) == sklearn_export_text(plain).replace("feature_", "x")


def test_exports_read_a_scikit_learn_tree_and_a_bare_tree(breast_cancer):
    X, y, names = breast_cancer
    sk = SklearnClassifier(max_depth=4, random_state=0).fit(X, y)
    assert dtjit.export_text(sk, feature_names=names) == sklearn_export_text(
        sk, feature_names=names
    )
    check_records_partition(sk, X)
    est = dtjit.DecisionTreeClassifier(max_depth=3).fit(X, y)
    # A bare Tree has no classes_: its classes are 0, 1, ... (here the same labels).
    assert dtjit.export_text(est.tree_) == dtjit.export_text(est)
    assert dtjit.export_rules(est.tree_, class_names=["m", "b"]) == dtjit.export_rules(
        est, class_names=["m", "b"]
    )


# -- Graphviz ------------------------------------------------------------------------------
def _dot_nodes_and_edges(dot_source):
    pydot = pytest.importorskip("pydot")
    with warnings.catch_warnings():  # pydot's parser uses pyparsing's deprecated names
        warnings.simplefilter("ignore", DeprecationWarning)
        graphs = pydot.graph_from_dot_data(dot_source)
    assert graphs is not None and len(graphs) == 1, "pydot could not parse the DOT source"
    graph = graphs[0]
    nodes = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    return graph, nodes, graph.get_edges()


@pytest.mark.parametrize("max_depth", [None, 2])
@pytest.mark.parametrize("filled", [True, False])
def test_graphviz_parses_with_one_node_per_tree_node(breast_cancer, max_depth, filled):
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier().fit(X, y)
    tree = est.tree_
    dot = dtjit.export_graphviz(est, feature_names=names, max_depth=max_depth, filled=filled)
    graph, nodes, edges = _dot_nodes_and_edges(dot)
    if max_depth is None:
        expected = tree.node_count
    else:
        expected = int(np.count_nonzero(tree.node_depth <= max_depth + 1))
    assert len(nodes) == expected
    assert len(edges) == expected - 1
    for e in edges:
        parent, child = int(e.get_source()), int(e.get_destination())
        assert tree.left[parent] == child or tree.right[parent] == child
        # scikit-learn's layout: True / False head labels on the root's two edges only.
        head = e.get_attributes().get("headlabel")
        assert head == (None if parent else '"True"' if tree.left[0] == child else '"False"')
    labels = {int(n.get_name()): n.get_label() for n in nodes}
    cut = {k for k, v in labels.items() if v == '"(...)"'}
    assert cut == set(np.flatnonzero(tree.node_depth == (max_depth or 10**9) + 1))
    root = labels[0].strip('"').split("\\n")
    assert root[0] == f"{names[tree.feature[0]]} <= {round(tree.threshold[0], 3)}"
    assert root[2] == f"samples = {len(y)}"
    fills = [n.get_attributes().get("fillcolor") for n in nodes]
    assert all(fills) if filled else not any(fills)
    if shutil.which("dot"):
        result = subprocess.run(
            ["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.count('class="node"') == expected


def test_graphviz_escapes_names_and_colours_regression():
    X, y = load_diabetes(return_X_y=True)
    est = dtjit.DecisionTreeRegressor(max_depth=3).fit(X, y)
    names = [f'f"{j}\\' for j in range(X.shape[1])]  # quotes and backslashes
    dot = dtjit.export_graphviz(est, feature_names=names, filled=True)
    _, nodes, edges = _dot_nodes_and_edges(dot)
    assert len(nodes) == est.tree_.node_count and len(edges) == est.tree_.node_count - 1
    means = est.tree_.value[:, 0, 0]
    fill = {int(n.get_name()): n.get_attributes()["fillcolor"].strip('"') for n in nodes}
    # The darkest fill is the largest mean, white the smallest.
    assert fill[int(np.argmin(means))] == "#ffffff"
    assert fill[int(np.argmax(means))] == "#e15759"


# -- Mermaid -------------------------------------------------------------------------------
MERMAID_NODE = re.compile(r'^    n(\d+)\["(.*)"\]$')
MERMAID_EDGE = re.compile(r"^    n(\d+) -->\|(yes|no)\| n(\d+)$")
MERMAID_STYLE = re.compile(r"^    style n(\d+) fill:#[0-9a-f]{6}$")


def parse_mermaid(source):
    lines = source.splitlines()
    assert lines[0] == "flowchart TD"
    nodes, edges, styled = {}, [], set()
    for line in lines[1:]:
        if m := MERMAID_NODE.match(line):
            assert int(m[1]) not in nodes, f"node defined twice: {line}"
            nodes[int(m[1])] = m[2]
        elif m := MERMAID_EDGE.match(line):
            edges.append((int(m[1]), m[2], int(m[3])))
        elif m := MERMAID_STYLE.match(line):
            styled.add(int(m[1]))
        else:
            raise AssertionError(f"unexpected Mermaid line {line!r}")
    return nodes, edges, styled


def unescape_mermaid(label):
    codes = {"quot": '"', "lt": "<", "gt": ">", "amp": "&"}
    return re.sub(r"#(\w+);", lambda m: codes.get(m[1]) or chr(int(m[1])), label)


def test_mermaid_one_node_per_tree_node(breast_cancer):
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(min_samples_leaf=2).fit(X, y)
    tree = est.tree_
    nodes, edges, styled = parse_mermaid(dtjit.export_mermaid(est, feature_names=names))
    assert sorted(nodes) == list(range(tree.node_count)) == sorted(styled)
    assert len(edges) == tree.node_count - 1
    for parent, word, child in edges:
        assert child == (tree.left[parent] if word == "yes" else tree.right[parent])
    for node, label in nodes.items():
        lines = [unescape_mermaid(part) for part in label.split("<br/>")]
        assert f"samples = {tree.n_node_samples[node]}" in lines
        if tree.left[node] != -1:
            assert lines[0] == f"{names[tree.feature[node]]} <= {tree.threshold[node]:.2f}"
    # With max_depth, a cut subtree is one "..." node.
    nodes, edges, _ = parse_mermaid(dtjit.export_mermaid(est, max_depth=1))
    assert len(nodes) == len(edges) + 1 == int(np.count_nonzero(tree.node_depth <= 2))
    assert sum(label == "..." for label in nodes.values()) == 4


def test_mermaid_escapes_quotes_brackets_and_angles():
    X, y = load_iris(return_X_y=True)
    est = dtjit.DecisionTreeClassifier(max_depth=3).fit(X, y)
    names = ['a "quoted" name', "b [cm]", "c <x> | {y} #1 `z`", "d & (e)"]
    classes = ['"set"osa', "<versi>", "[virg]"]
    nodes, _, _ = parse_mermaid(dtjit.export_mermaid(est, feature_names=names, class_names=classes))
    for label in nodes.values():
        bare = label.replace("<br/>", "")
        assert not set('"<>[]{}|`') & set(bare), label
    shown = "\n".join(unescape_mermaid(p) for v in nodes.values() for p in v.split("<br/>"))
    for name in {names[f] for f in est.tree_.feature if f >= 0}:
        assert name in shown
    assert any(f"class = {c}" in shown for c in classes)


# -- JSON ----------------------------------------------------------------------------------
def walk(root):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node["children"])


@pytest.mark.parametrize("kind", ["classifier", "regressor", "bare tree"])
def test_to_dict_round_trips_and_matches_the_arrays(kind):
    if kind == "regressor":
        X, y = load_diabetes(return_X_y=True)
        est = dtjit.DecisionTreeRegressor(max_depth=6).fit(X, y)
    else:
        data = load_iris(as_frame=True)
        X, y = data.data, data.target.map(dict(enumerate(data.target_names)))
        est = dtjit.DecisionTreeClassifier().fit(X, y)
    model = est.tree_ if kind == "bare tree" else est
    tree = est.tree_
    d = dtjit.to_dict(model)
    assert json.loads(dtjit.to_json(model)) == d
    assert json.loads(dtjit.to_json(model, indent=2)) == d
    assert d["format"] == "dtjit.tree" and d["format_version"] == 1
    assert d["node_count"] == tree.node_count and d["n_leaves"] == tree.n_leaves
    assert d["max_depth"] == tree.max_depth and d["n_features"] == tree.n_features
    assert len(d["feature_names"]) == tree.n_features
    if kind == "classifier":
        assert d["classes"] == d["class_names"] == ["setosa", "versicolor", "virginica"]
        assert d["criterion"] == "gini" and d["feature_names"] == list(X.columns)
    elif kind == "bare tree":
        assert d["classes"] == [0, 1, 2] and d["criterion"] is None
        assert d["feature_names"] == [f"x{j}" for j in range(4)]
    else:
        assert d["task"] == "regression" and d["classes"] is None
    seen = []
    for node in walk(d["tree"]):
        k = node["id"]
        seen.append(k)
        assert node["samples"] == tree.n_node_samples[k]
        assert node["weighted_samples"] == tree.weighted_n_node_samples[k]
        assert node["impurity"] == tree.impurity[k]
        assert node["value"] == tree.value[k, 0].tolist()
        assert node["depth"] == tree.node_depth[k]
        if tree.left[k] == -1:
            assert node["children"] == [] and "feature" not in node
        else:
            assert [c["id"] for c in node["children"]] == [tree.left[k], tree.right[k]]
            assert node["feature"] == tree.feature[k]
            assert node["feature_name"] == d["feature_names"][tree.feature[k]]
            assert node["threshold"] == tree.threshold[k]
            assert node["missing_go_to_left"] == bool(tree.missing_left[k])
    assert sorted(seen) == list(range(tree.node_count))


@pytest.fixture(scope="module")
def json_models(breast_cancer):
    """(model, names) pairs: every kind of tree and node, and names that need escaping."""
    X, y, names = breast_cancer
    iris = load_iris(as_frame=True)
    iris_clf = dtjit.DecisionTreeClassifier().fit(
        iris.data, iris.target.map(dict(enumerate(iris.target_names)))
    )
    odd_names = {
        "feature_names": ['a "quoted" name', "back\\slash", "tab\tnew\nline", "é ü 漢 😀"],
        "class_names": ["<set>osa", "", "\x00"],
    }
    codes = np.random.RandomState(0).randint(0, 6, 400).astype(float)
    codes[:40] = np.nan
    subset = dtjit.DecisionTreeClassifier(categorical_features=[0])
    subset.fit(codes[:, None], np.isin(codes, [0, 3]))  # classes False, True
    assert "categories_left" in dtjit.to_dict(subset)["tree"]  # a subset split at the root
    return [
        (dtjit.DecisionTreeClassifier(random_state=0).fit(X, y), {"feature_names": names}),
        (iris_clf, {}),
        (iris_clf, odd_names),
        (iris_clf.tree_, {}),
        (dtjit.DecisionTreeRegressor(min_samples_leaf=3).fit(*load_diabetes(return_X_y=True)), {}),
        (subset, {}),
    ]


@pytest.mark.parametrize("indent", [None, 0, 2])
def test_to_json_is_json_dumps_of_to_dict(json_models, indent):
    """Byte for byte: separators, indentation, numbers, escapes."""
    for model, names in json_models:
        tree = dtjit.to_dict(model, **names)
        expected = json.dumps(tree, indent=indent)
        assert dtjit.to_json(model, **names, indent=indent) == expected
        # Shallow trees without indent go to json.dumps itself: the iterative writer too.
        assert dtjit.export._dumps(tree, indent) == expected


@pytest.mark.parametrize("indent", [None, 0, 2, "\t"])
def test_iterative_json_matches_json_dumps(indent):
    """What trees never hold: keys that are not strings, tuples, empty containers, plain items
    between nested ones, and a root with nothing nested."""
    odd = {
        "": [[], {}, [[1, 2.5, -0.0, float("nan")]], ("t", ['é\n"\\'])],
        1: {True: [None, {"x": {}}], 2.5: 3},
        None: [{"x": {}}, 4, 5, [[6]], "😀"],
    }
    for obj in (odd, [odd, 7, (odd,)], {"k": [1, 2]}, [], "s", 7):
        assert dtjit.export._dumps(obj, indent) == json.dumps(obj, indent=indent)


def loads_deep(text, depth):
    """json.loads for a tree `depth` levels deep, on every Python version.

    json.loads parses in C, and from Python 3.12 its recursion limit ignores
    sys.setrecursionlimit; json's pure-Python scanner obeys it (four frames per tree level).
    """
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 5 * depth)
    try:
        return decoder.decode(text)
    finally:
        sys.setrecursionlimit(limit)


def without(d, key):
    """The items of d but one, in order."""
    return [item for item in d.items() if item[0] != key]


def test_to_json_writes_a_chain_of_any_depth():
    """Each split peels one row off: a chain 2,999 levels deep. json.dumps of to_dict raises
    RecursionError past about 490."""
    n = 3000
    X = np.arange(n, dtype=np.float32).reshape(-1, 1)
    est = dtjit.DecisionTreeClassifier().fit(X, np.arange(n) % 2)
    assert est.get_depth() == n - 1 and est.tree_.node_count == 2 * n - 1
    expected = dtjit.to_dict(est)
    parsed = loads_deep(dtjit.to_json(est), n)
    assert without(parsed, "tree") == without(expected, "tree")
    # Node by node, walking both without recursion (== on the nested dicts would recurse).
    pairs = list(zip(walk(parsed["tree"]), walk(expected["tree"]), strict=True))
    assert len(pairs) == 2 * n - 1
    for ours, theirs in pairs:
        assert without(ours, "children") == without(theirs, "children")
        assert len(ours["children"]) == len(theirs["children"])
    assert max(ours["depth"] for ours, _ in pairs) == n - 1


# -- play tennis: every export on the textbook data -------------------------------------------
def test_play_tennis_exports(play_tennis):
    X, y = play_tennis
    est = dtjit.DecisionTreeClassifier(criterion="entropy").fit(X, y)
    tree = est.tree_
    assert est.score(X, y) == 1.0
    text = dtjit.export_text(est)
    assert text == sklearn_export_text(est, feature_names=list(X.columns))
    assert text.startswith("|--- outlook=overcast <= 0.50\n")
    assert "|--- outlook=overcast >  0.50\n|   |--- class: yes\n" in text
    records = check_records_partition(est, X)
    assert sum(r["support"] for r in records) == 14
    rules = dtjit.export_rules(est, sort_by="support")
    assert rules[0] == "IF outlook=overcast > 0.50 THEN class = yes (support 4, confidence 1.00)"
    _, dot_nodes, dot_edges = _dot_nodes_and_edges(dtjit.export_graphviz(est))
    assert len(dot_nodes) == tree.node_count and len(dot_edges) == tree.node_count - 1
    nodes, edges, _ = parse_mermaid(dtjit.export_mermaid(est))
    assert len(nodes) == tree.node_count and len(edges) == tree.node_count - 1
    d = json.loads(dtjit.to_json(est))
    assert d["tree"]["feature_name"] == "outlook=overcast"
    assert d["tree"]["impurity"] == pytest.approx(0.9402859586706311)  # 9 yes, 5 no
    assert d["class_names"] == ["no", "yes"]


# -- missing values: the one place that words a split -------------------------------------------
def test_missing_direction_is_worded_in_one_place(breast_cancer):
    """Where fit learned where NaN goes (the tree's missing_learned, or for trees without it
    TreeView.routes_missing), every view shows it."""
    X, y, names = breast_cancer
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    view = resolve_view(est, names)
    assert view.routes_missing == frozenset()  # no NaN in training: nothing learned
    assert not est.tree_.missing_learned.any()
    arrays = {**est.tree_.to_arrays(), **est.tree_.categorical_arrays()}
    learned_at_root = np.zeros(est.tree_.node_count, dtype=np.uint8)
    learned_at_root[0] = 1
    goes_left = bool(est.tree_.missing_left[0])
    for shown in (
        # A tree without missing_learned (older files): per feature, from routes_missing.
        dataclasses.replace(
            view,
            tree=dtjit.Tree(n_features=X.shape[1], n_classes=[2], **arrays),
            routes_missing=frozenset({int(est.tree_.feature[0])}),
        ),
        # A tree that records it: per node, whatever routes_missing says.
        dataclasses.replace(
            view,
            tree=dtjit.Tree(
                n_features=X.shape[1], n_classes=[2], **arrays, missing_learned=learned_at_root
            ),  # fmt: skip
        ),
    ):
        left = edge_condition(shown, 0, left=True)
        right = edge_condition(shown, 0, left=False)
        assert (left.missing, right.missing) == (goes_left, not goes_left)
        worded = left if goes_left else right
        assert worded.text(2).endswith(" or missing")
    assert not edge_condition(view, 0, left=goes_left).text(2).endswith("missing")


# -- bad input -------------------------------------------------------------------------------
EXPORTS = [
    dtjit.export_text,
    dtjit.export_rules,
    dtjit.rule_records,
    dtjit.rules_frame,
    dtjit.export_graphviz,
    dtjit.export_mermaid,
    dtjit.to_dict,
    dtjit.to_json,
]


@pytest.mark.parametrize("export", EXPORTS, ids=lambda f: f.__name__)
def test_every_export_checks_its_input(export):
    X, y = load_iris(return_X_y=True)
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(NotFittedError):
        export(dtjit.DecisionTreeClassifier())
    with pytest.raises(NotFittedError):
        export(dtjit.DecisionTreeRegressor())
    with pytest.raises(ValueError, match="feature_names has 3 names, the tree has 4"):
        export(est, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="class_names has 2 names, the tree has 3"):
        export(est, class_names=["a", "b"])
    with pytest.raises(TypeError, match="feature_names must be a sequence"):
        export(est, feature_names="abcd")
    with pytest.raises(TypeError, match="fitted decision tree"):
        export("not a model")


@pytest.mark.parametrize("export", [dtjit.export_text, dtjit.export_graphviz, dtjit.export_mermaid])
@pytest.mark.parametrize(
    "name, bad, error",
    [
        ("max_depth", -1, ValueError),
        ("max_depth", 1.5, TypeError),
        ("max_depth", "3", TypeError),
        ("max_depth", True, TypeError),
        ("decimals", -1, ValueError),
        ("decimals", 2.0, TypeError),
        ("decimals", None, TypeError),
    ],
)
def test_bad_depth_and_decimals(export, name, bad, error):
    if export is dtjit.export_graphviz and name == "decimals" and bad is None:
        bad, name = -1, "precision"  # decimals=None is graphviz's "use precision"
        error = ValueError
    X, y = load_iris(return_X_y=True)
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(error, match=name):
        export(est, **{name: bad})


def test_export_text_needs_a_depth_limit():
    X, y = load_iris(return_X_y=True)
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(TypeError, match="max_depth must be an int"):
        dtjit.export_text(est, max_depth=None)
    for export in (dtjit.export_rules, dtjit.rule_records):
        with pytest.raises(ValueError, match="decimals"):
            export(est, decimals=-2)


def test_long_category_conditions_write_the_shorter_side():
    """Of a subset split's known categories the shorter side is written (``not in {A, B}``
    rather than ten names), conditions on one feature merge along a path, and the records
    still partition every row, NaN and unseen categories included (they satisfy a condition
    only when it says "or missing")."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    countries = [f"C{k:02d}" for k in range(12)]
    country = rng.choice(np.array(countries, dtype=object), 3000)
    country[:100] = None
    # Three groups, so one path tests the country twice: {C00, C01}, {C02, C03, C04}, rest.
    group = np.select([np.isin(country, ["C00", "C01"]), np.isin(country, ["C02", "C03", "C04"])],
                      [0, 1], 2)  # fmt: skip
    X = pd.DataFrame({"country": pd.Categorical(country, categories=countries),
                      "noise": rng.normal(size=3000)})  # fmt: skip
    est = dtjit.DecisionTreeClassifier(max_depth=3, min_samples_leaf=50).fit(X, group)
    records = dtjit.rule_records(est)
    conditions = [c for r in records for c in r["conditions"] if c["name"] == "country"]
    assert any(c["op"] == "not in" for c in conditions)
    assert all(len(c["categories"]) <= len(countries) // 2 for c in conditions)
    assert all(sum(c["name"] == "country" for c in r["conditions"]) <= 1 for r in records)
    assert "country not in {C00, C01} or missing" in dtjit.export_text(est)
    assert "IF country in {C02, C03, C04} THEN" in "\n".join(dtjit.export_rules(est))

    probe = pd.DataFrame({"country": [*countries, None, "unseen"], "noise": 0.0})
    probe = pd.concat([probe, X.iloc[:500]], ignore_index=True)
    values = probe["country"].astype(object).to_numpy()
    missing = ~np.isin(values, countries)
    masks = np.ones((len(records), len(probe)), dtype=bool)
    for k, record in enumerate(records):
        for c in record["conditions"]:
            if c["name"] == "noise":
                column = probe["noise"].to_numpy(dtype=np.float32).astype(np.float64)
                masks[k] &= column <= c["threshold"] if c["op"] == "<=" else column > c["threshold"]
                continue
            listed = np.isin(values, c["categories"])
            holds = listed if c["op"] == "in" else ~listed
            masks[k] &= np.where(missing, c["missing"], holds)
    np.testing.assert_array_equal(masks.sum(axis=0), 1)
    leaves = np.array([r["leaf"] for r in records])[masks.argmax(axis=0)]
    np.testing.assert_array_equal(leaves, est.apply(probe))


# -- scikit-learn's exporter options ---------------------------------------------------------
_FILL = re.compile(r', fillcolor="#[0-9a-fA-F]{6}"')
GRAPHVIZ_OPTIONS = [
    {},
    {"filled": True},
    {"filled": True, "rounded": True},
    {"label": "root"},
    {"label": "none", "node_ids": True},
    {"node_ids": True},
    {"proportion": True},
    {"impurity": False},
    {"precision": 1},
    {"precision": 6},
    {"max_depth": 0},
    {"max_depth": 2, "filled": True},
    {"leaves_parallel": True},
    {"rotate": True},
    {"special_characters": True},
    {"special_characters": True, "node_ids": True, "label": "root"},
    {"fontname": "arial"},
]


@pytest.fixture(scope="module")
def numeric_models(breast_cancer):
    X, y, names = breast_cancer
    clf = dtjit.DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    weighted = dtjit.DecisionTreeClassifier(max_depth=3).fit(
        X, y, sample_weight=np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    )
    X_reg, y_reg = load_diabetes(return_X_y=True)
    reg = dtjit.DecisionTreeRegressor(max_depth=3).fit(X_reg, y_reg)
    reg_names = [f"s{j}" for j in range(X_reg.shape[1])]
    return [
        (clf, {"feature_names": names, "class_names": ["malignant", "benign"]}),
        (clf, {"feature_names": names, "class_names": True}),
        (weighted, {"feature_names": names, "class_names": ["m", "b"]}),
        (reg, {"feature_names": reg_names}),
    ]


@pytest.mark.parametrize("options", GRAPHVIZ_OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_export_graphviz_equals_scikit_learn(numeric_models, options):
    """On numeric splits scikit-learn's DOT, byte for byte, but for the fill colours."""
    from sklearn.tree import export_graphviz as sklearn_export_graphviz

    for model, names in numeric_models:
        ours = dtjit.export_graphviz(model, **names, **options)
        theirs = sklearn_export_graphviz(model, **names, **options)
        assert _FILL.sub("", ours) == _FILL.sub("", theirs)
        assert len(_FILL.findall(ours)) == len(_FILL.findall(theirs))


@pytest.mark.parametrize(
    "options",
    [{}, {"spacing": 1}, {"spacing": 6, "show_weights": True}, {"max_depth": 1, "decimals": 5}],
)
def test_export_text_options_equal_scikit_learn(numeric_models, options):
    for model, names in numeric_models:
        if names.get("class_names") is True:
            continue  # export_text takes names only
        assert dtjit.export_text(model, **names, **options) == sklearn_export_text(
            model, **names, **options
        )
    with pytest.raises(ValueError, match="spacing"):
        dtjit.export_text(numeric_models[0][0], spacing=0)


def test_export_graphviz_out_file_decimals_and_class_line(numeric_models, tmp_path):
    model, names = numeric_models[0]
    expected = dtjit.export_graphviz(model, **names)
    path = tmp_path / "tree.dot"
    assert dtjit.export_graphviz(model, str(path), **names) is None
    assert path.read_text(encoding="utf-8") == expected
    buffer = io.StringIO()
    assert dtjit.export_graphviz(model, out_file=buffer, **names) is None
    assert buffer.getvalue() == expected
    assert dtjit.export_graphviz(model, decimals=2, **names) == dtjit.export_graphviz(
        model, precision=2, **names
    )
    with pytest.raises(ValueError, match="precision or decimals"):
        dtjit.export_graphviz(model, precision=2, decimals=2)
    with pytest.raises(ValueError, match="label must be one of"):
        dtjit.export_graphviz(model, label="some")
    with pytest.raises(TypeError, match="out_file"):
        dtjit.export_graphviz(model, out_file=3)
    # dtjit's one default of its own: the class line names classes_ unless told otherwise.
    assert "class = 1" in dtjit.export_graphviz(model)
    assert "class = " not in dtjit.export_graphviz(model, class_names=False)


def test_subset_splits_show_their_categories_where_scikit_learn_prints_nan():
    from sklearn.tree import export_graphviz as sklearn_export_graphviz

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    island = rng.choice(["Biscoe", "Dream", "Torgersen"], 300)
    X = pd.DataFrame({"island": pd.Categorical(island), "bill": rng.normal(size=300)})
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, island == "Dream")
    assert "island <= nan" in sklearn_export_text(est, feature_names=["island", "bill"])
    assert "island <= nan" in sklearn_export_graphviz(est, feature_names=["island", "bill"])
    for text in (
        dtjit.export_text(est),
        dtjit.export_graphviz(est),
        dtjit.export_graphviz(est, special_characters=True),
    ):
        assert "nan" not in text
        assert re.search(r"island (not )?in \{Dream\}", text), text
