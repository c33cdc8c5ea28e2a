"""Categorical features: subset search vs brute force, storage, routing, exports, real data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _assertions import assert_trees_identical
from _categorical_reference import brute_force_subsets, proxy, route_row
from _kernel_entry import via_kernel
from conftest import read_adult
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
from dtjit._tree import Tree, TreeFormatError, read_model_file, write_model_file
from dtjit.engine.jit import CRITERION_CODES
from dtjit.engine.sorting import stable_order
from dtjit.engine.sweep_categorical import MAX_EXHAUSTIVE_CATEGORIES, best_category_subset
from dtjit.export import export_text, to_dict

pd = pytest.importorskip("pandas")


# ---------------------------------------------------------------------------- subset search
def _kernel_search(cat_stats, cat_weight, cat_count, criterion, min_samples_leaf=1, mwl=0.0):
    m, n_sweep = cat_stats.shape
    total = cat_stats.sum(axis=0)
    if criterion == "squared_error":
        total = np.array([total[0], 0.0, 1.0])
    side = np.zeros(m, dtype=np.uint8)
    best, n_left = via_kernel(best_category_subset)(
        m, cat_stats, cat_weight, cat_count, total, float(cat_weight.sum()), n_sweep,
        CRITERION_CODES[criterion], min_samples_leaf, mwl, side,
    )  # fmt: skip
    return best, n_left, side


@st.composite
def category_tables(draw, max_categories=7):
    task = draw(st.sampled_from(["binary", "multiclass", "regression"]))
    m = draw(st.integers(2, max_categories))
    counts = np.array(draw(st.lists(st.integers(1, 6), min_size=m, max_size=m)), dtype=np.int64)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    weighted = draw(st.booleans())
    if task == "regression":
        criterion = "squared_error"
        stats, weights = [], []
        for n in counts:
            w = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
            y = rng.integers(-3, 4, n).astype(float)
            stats.append([float(np.sum(w * y))])
            weights.append(float(w.sum()))
        return criterion, np.array(stats), np.array(weights), counts
    n_classes = 2 if task == "binary" else draw(st.integers(3, 4))
    criterion = draw(st.sampled_from(["gini", "entropy"]))
    stats = np.zeros((m, n_classes))
    for j, n in enumerate(counts):
        labels = rng.integers(0, n_classes, n)
        w = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
        np.add.at(stats[j], labels, w)
    return criterion, stats, stats.sum(axis=1), counts


@settings(max_examples=150, deadline=None)
@given(category_tables(), st.integers(1, 4))
# Every category pure in one class: all keys tie, and the only valid split ({3} | {1, 2}
# rows) is no prefix of the kernel's order (hypothesis drew it in a fresh-clone `make test`).
@example(
    ("gini", np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 2.0]]), np.array([1.0, 3.0, 2.0]),
     np.array([1, 3, 2])),
    3,
)  # fmt: skip
def test_subset_search_matches_brute_force(table, min_samples_leaf):
    """Optimal for binary / regression (unconstrained) and for exhaustive multiclass."""
    criterion, stats, weights, counts = table
    best, n_left, side = _kernel_search(stats, weights, counts, criterion, min_samples_leaf)
    candidates = brute_force_subsets(stats, weights, counts, criterion, min_samples_leaf)
    if not candidates:
        assert best == -np.inf
        return
    best_brute = max(p for p, _ in candidates)
    unconstrained = brute_force_subsets(stats, weights, counts, criterion, 1)
    optimum_is_valid = any(
        math.isclose(p, max(q for q, _ in unconstrained), rel_tol=1e-12, abs_tol=1e-12)
        for p, _ in candidates
    )
    exhaustive = stats.shape[1] > 2 and criterion != "squared_error"
    # Binary and regression scan the prefixes of one order of the categories (by class-1
    # share or by mean): the unconstrained optimum is one of them. With tied keys that order
    # is one of several, and with a binding min_samples_leaf the best valid subset may then
    # split a group of tied categories in a way no prefix of the kernel's order does.
    keys = stats[:, -1] / weights
    prefix_optimal = optimum_is_valid and np.unique(keys).size == keys.size
    if best == -np.inf:
        # Documented: with a binding min_samples_leaf every prefix may break it while
        # another subset does not.
        assert not exhaustive and not prefix_optimal
        return
    # The chosen subset is valid and scores what the kernel says.
    chosen = np.flatnonzero(side[: len(weights)])
    assert n_left == counts[chosen].sum()
    assert min_samples_leaf <= n_left <= counts.sum() - min_samples_leaf
    w_left = weights[chosen].sum()
    again = proxy(criterion, stats[chosen].sum(axis=0), stats.sum(axis=0), w_left,
                  weights.sum() - w_left)  # fmt: skip
    assert again == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert best <= best_brute + 1e-9 * max(1.0, abs(best_brute))
    if exhaustive or prefix_optimal:
        assert best == pytest.approx(best_brute, rel=1e-9, abs=1e-9)


def test_multiclass_heuristic_beyond_exhaustive_limit_is_valid():
    """Beyond the exhaustive limit: a valid split, never better than the brute force."""
    rng = np.random.default_rng(3)
    m = MAX_EXHAUSTIVE_CATEGORIES + 1
    stats = rng.integers(0, 5, size=(m, 3)).astype(float) + 1.0
    counts = stats.sum(axis=1).astype(np.int64)
    best, _, side = _kernel_search(stats, stats.sum(axis=1), counts, "gini")
    brute = max(p for p, _ in brute_force_subsets(stats, stats.sum(axis=1), counts, "gini"))
    assert -np.inf < best <= brute + 1e-9
    assert 0 < side[:m].sum() < m
    assert best >= brute - 0.05 * abs(brute)  # near-optimal here (equal, in fact)


# ------------------------------------------------------------------------- fitted root split
def _root_improvement(tree):
    w = tree.weighted_n_node_samples
    imp = tree.impurity
    return imp[0] - (w[1] * imp[1] + w[2] * imp[2]) / w[0]


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["gini", "entropy", "squared_error"]),
    st.sampled_from(["best", "hist"]),
    st.booleans(),
)
def test_fitted_root_split_is_the_brute_force_optimum(seed, criterion, splitter, multiclass):
    """Through the builders, with weights and NaN as a category: the root is optimal."""
    rng = np.random.default_rng(seed)
    n, k = 40, 5
    codes = rng.integers(0, k, n).astype(float)
    codes[rng.random(n) < 0.15] = np.nan
    w = rng.uniform(0.5, 2.0, n)
    if criterion == "squared_error":
        y = rng.normal(size=n).round(1)
        model = DecisionTreeRegressor(
            max_depth=1, splitter=splitter, criterion=criterion, categorical_features=[0]
        )
    else:
        y = rng.integers(0, 3 if multiclass else 2, n)
        model = DecisionTreeClassifier(
            max_depth=1, splitter=splitter, criterion=criterion, categorical_features=[0]
        )
    model.fit(codes.reshape(-1, 1), y, sample_weight=w)
    # Brute force over the present categories (missing as the last one).
    present = [c for c in range(k) if np.any(codes == c)] + (
        [np.nan] if np.isnan(codes).any() else []
    )
    groups = [np.isnan(codes) if np.isnan(c) else codes == c for c in present]
    if criterion == "squared_error":
        stats = np.array([[np.sum(w[g] * y[g])] for g in groups])
    else:
        n_classes = len(np.unique(y))
        classes = np.unique(y)
        stats = np.array([[np.sum(w[g & (y == c)]) for c in classes] for g in groups])
        assert stats.shape[1] == n_classes
    weights = np.array([w[g].sum() for g in groups])
    counts = np.array([g.sum() for g in groups])
    candidates = brute_force_subsets(stats, weights, counts, criterion)
    tree = model.tree_
    if tree.node_count == 1:
        return  # pure root
    chosen = []
    for c in present:
        x = np.array([[c]])
        chosen.append(model.apply(x)[0] == 1)
    left = np.array(chosen)
    w_left = weights[left].sum()
    got = proxy(criterion, stats[left].sum(axis=0), stats.sum(axis=0), w_left,
                weights.sum() - w_left)  # fmt: skip
    assert got == pytest.approx(max(p for p, _ in candidates), rel=1e-9)
    assert tree.categorical_set[0] == 0
    assert np.isnan(tree.threshold[0])


# --------------------------------------------------------------------------------- textbook
def test_spam_sender_domain_root_split(shared_data):
    """{Com} vs {Edu, Org}: gain 0.3113 bits, tied with {Org} vs {Edu, Com}; we pick {Com}.

    Tie rule: categories are ordered by the rate of class 1 ("Yes": Com 0, Edu 1/2, Org 1)
    and the first of equally good prefixes wins, so the left set is {Com}.
    """
    df = pd.read_csv(shared_data / "textbook" / "spam_words.csv")
    X = df[["sender_domain"]]
    clf = DecisionTreeClassifier(criterion="entropy", max_depth=1, categorical_features=[0])
    clf.fit(X, df["spam"])
    tree = clf.tree_
    assert list(clf.categories_[0]) == ["Com", "Edu", "Org"]
    assert tree.category_set(0).tolist() == [0]  # Com
    assert _root_improvement(tree) == pytest.approx(0.3113, abs=5e-5)
    # The tied alternative scores the same (as the notes say).
    stats = np.array([[2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])  # No / Yes per Com, Edu, Org
    com = proxy("entropy", stats[[0]].sum(axis=0), stats.sum(axis=0), 2.0, 6.0)
    org = proxy("entropy", stats[[2]].sum(axis=0), stats.sum(axis=0), 2.0, 6.0)
    assert com == pytest.approx(org)
    text = export_text(clf)
    # The shorter side on both edges: {Com} against {Edu, Org} and missing values.
    assert "sender_domain in {Com}" in text and "sender_domain not in {Com} or missing" in text


# -------------------------------------------------------------------------------- real data
def _mushroom(shared_data):
    from sklearn.model_selection import train_test_split

    df = pd.read_csv(shared_data / "agaricus-lepiota.data.gz", header=None, na_values="?",
                     keep_default_na=False)  # fmt: skip
    y = df.pop(0)
    df.columns = [f"c{c}" for c in df.columns]
    return train_test_split(df, y, test_size=0.3, random_state=0, stratify=y)


def _kr_vs_kp(shared_data):
    from sklearn.model_selection import train_test_split

    df = pd.read_csv(shared_data / "kr-vs-kp.csv", keep_default_na=False)
    y = df.pop("class")
    return train_test_split(df, y, test_size=0.3, random_state=0, stratify=y)


def _adult(shared_data):
    train = read_adult(shared_data, "data")
    test = read_adult(shared_data, "test")
    return (train.drop(columns="income"), test.drop(columns="income"), train["income"],
            test["income"])  # fmt: skip


def _value_columns(X):
    return [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]


def _one_hot_score(X_train, X_test, y_train, y_test, cats):
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier as SklearnTree

    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    encoder.fit(X_train[cats].fillna("?"))
    numeric = [c for c in X_train.columns if c not in cats]

    def encode(X):
        return np.hstack([X[numeric].to_numpy(float), encoder.transform(X[cats].fillna("?"))])

    sk = SklearnTree(random_state=0).fit(encode(X_train), y_train)
    return (sk.predict(encode(X_test)) == y_test.to_numpy()).mean(), sk.tree_.node_count


# Native subsets vs one-hot, default (full-depth) trees. Measured: mushroom 0.9988 / 15
# nodes vs 0.9988 / 23; kr-vs-kp 0.9958 / 109 vs 0.9958 / 109 (35 of its 36 attributes have
# two values, where a subset split *is* the one-hot split, so equal sizes are expected);
# adult 0.8127 / 9043 vs 0.8110 / 9333.
@pytest.mark.parametrize(
    ("loader", "strictly_smaller"),
    [(_mushroom, True), (_kr_vs_kp, False), (_adult, True)],
    ids=["mushroom", "kr-vs-kp", "adult"],
)
def test_native_categories_beat_one_hot(shared_data, loader, strictly_smaller):
    X_train, X_test, y_train, y_test = loader(shared_data)
    cats = _value_columns(X_train)
    clf = DecisionTreeClassifier(random_state=0, categorical_features=cats)
    clf.fit(X_train, y_train)
    accuracy = (clf.predict(X_test) == y_test.to_numpy()).mean()
    sk_accuracy, sk_nodes = _one_hot_score(X_train, X_test, y_train, y_test, cats)
    print(
        f"{loader.__name__}: dtjit native acc {accuracy:.4f} nodes {clf.tree_.node_count}; "
        f"scikit-learn one-hot acc {sk_accuracy:.4f} nodes {sk_nodes}"
    )
    assert accuracy >= sk_accuracy
    if strictly_smaller:
        assert clf.tree_.node_count < sk_nodes
    else:
        assert clf.tree_.node_count <= sk_nodes


@pytest.mark.parametrize("loader", [_mushroom, _kr_vs_kp], ids=["mushroom", "kr-vs-kp"])
def test_hist_equals_exact_on_categorical_data(shared_data, loader):
    """All columns categorical: bins are the codes, so both splitters build the same tree."""
    X_train, _, y_train, _ = loader(shared_data)
    trees = [
        DecisionTreeClassifier(splitter=s, categorical_features="from_dtype")
        .fit(X_train.astype("category"), y_train)
        .tree_
        for s in ("best", "hist")
    ]
    for name in ("feature", "left", "missing_left", "categorical_set", "category_bits",
                 "n_node_samples", "value"):  # fmt: skip
        np.testing.assert_array_equal(getattr(trees[0], name), getattr(trees[1], name))


def test_adult_routing_matches_reference_and_decision_path(shared_data):
    X_train, X_test, y_train, _ = _adult(shared_data)
    cats = _value_columns(X_train)
    clf = DecisionTreeClassifier(max_depth=6, categorical_features=cats).fit(X_train, y_train)
    X = X_test.iloc[:300]
    leaves = clf.apply(X)
    path = clf.decision_path(X)
    encoded = clf._validate_X_predict(X)
    for i in range(X.shape[0]):
        expected = route_row(clf.tree_, encoded[i])
        assert leaves[i] == expected[-1]
        assert path[i].indices.tolist() == expected
    assert clf.tree_.has_categorical_splits


# ------------------------------------------------------------------ inputs, unseen, errors
def _frame(rng, n=200):
    colour = rng.choice(["red", "green", "blue", "black"], n)
    size = rng.normal(size=n)
    y = ((colour == "red") | (colour == "blue")) ^ (size > 1.0)
    return pd.DataFrame({"colour": pd.Categorical(colour), "size": size}), y.astype(int)


def test_indices_names_mask_and_from_dtype_agree():
    X, y = _frame(np.random.default_rng(0))
    specs = [[0], ["colour"], [True, False], "from_dtype"]
    trees = [DecisionTreeClassifier(categorical_features=s).fit(X, y).tree_ for s in specs]
    for tree in trees[1:]:
        np.testing.assert_array_equal(tree.feature, trees[0].feature)
        np.testing.assert_array_equal(tree.category_bits, trees[0].category_bits)
    # Integer codes in an array give the same tree as the pandas categories.
    codes = np.c_[X["colour"].cat.codes.to_numpy(), X["size"].to_numpy()]
    tree = DecisionTreeClassifier(categorical_features=[0]).fit(codes, y).tree_
    np.testing.assert_array_equal(tree.category_bits, trees[0].category_bits)


def test_unseen_and_missing_categories_follow_missing_left():
    X, y = _frame(np.random.default_rng(1))
    clf = DecisionTreeClassifier(max_depth=3, categorical_features=["colour"]).fit(X, y)
    unseen = X.copy()
    unseen["colour"] = pd.Categorical(["purple"] * len(X))
    missing = X.copy()
    missing["colour"] = pd.Categorical([None] * len(X), categories=["red"])
    np.testing.assert_array_equal(clf.apply(unseen), clf.apply(missing))
    root = clf.tree_
    assert root.categorical_set[0] >= 0
    first = clf.apply(unseen.iloc[:1])[0]
    assert route_row(root, np.array([np.nan, unseen["size"].iloc[0]]))[-1] == first
    # Strings (object column) are mapped too, and the same way.
    as_text = X.assign(colour=X["colour"].astype(str))
    text_clf = DecisionTreeClassifier(max_depth=3, categorical_features=["colour"])
    np.testing.assert_array_equal(text_clf.fit(as_text, y).predict(as_text), clf.predict(X))


def test_columns_mapped_from_values_need_a_dataframe_at_predict():
    # Integer category values 10/20/30 are stored as codes 0/1/2: an array's 20 is no code 1.
    X = pd.DataFrame({"c": pd.Categorical([10, 20, 30] * 50), "x": np.arange(150.0)})
    y = (X["c"].astype(int) == 20).to_numpy().astype(int)
    clf = DecisionTreeClassifier(categorical_features="from_dtype").fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)
    message = (
        r"feature 'c' \(column 0\) \(categories \[10, 20, 30\]\).*"
        r"X must be a DataFrame with that column, not ndarray"
    )
    for method in (clf.predict, clf.predict_proba, clf.apply, clf.decision_path):
        with pytest.raises(ValueError, match=message):
            method(X.to_numpy(dtype=float))
    # A model fitted on codes in an array takes arrays, as before.
    as_codes = np.c_[X["c"].cat.codes, X["x"]]
    codes = DecisionTreeClassifier(categorical_features=[0]).fit(as_codes, y)
    np.testing.assert_array_equal(codes.predict(as_codes), y)


@pytest.mark.parametrize(
    ("column", "match"),
    [
        ([0, 1, -1, 2], "negative codes"),
        ([0, 1, 1.5, 2], "non-integer"),
        ([0, 1, 4096, 2], "at most 4096 categories"),
        # float32 would round these to integers: the codes are read before the conversion.
        ([0, 1, 4095.0001, 2], "non-integer"),
        ([0, 1, 3 + 1e-9, 2], "non-integer"),
        ([0, 1, 2**24 + 1, 2], "has code 16777217; at most 4096 categories"),
    ],
)
def test_bad_codes_raise_naming_the_feature(column, match):
    X = np.c_[np.arange(4.0), np.array(column, dtype=float)]
    with pytest.raises(ValueError, match=f"categorical feature 1 .*{match}|{match}"):
        DecisionTreeClassifier(categorical_features=[1]).fit(X, [0, 1, 0, 1])
    frame = pd.DataFrame({"x": X[:, 0], "c": X[:, 1]})
    with pytest.raises(ValueError, match=f"categorical feature 'c' .*{match}|{match}"):
        DecisionTreeClassifier(categorical_features=["c"]).fit(frame, [0, 1, 0, 1])


@pytest.mark.parametrize("code", [3 + 1e-9, 1.5, -1.0])
def test_predict_refuses_codes_that_float32_would_round(code):
    """Unseen integer codes route like NaN; a code that is no integer is an error."""
    X = np.c_[np.arange(8.0), np.arange(8.0) % 4]
    clf = DecisionTreeClassifier(categorical_features=[1]).fit(X, np.arange(8) % 2)
    assert clf.predict(np.array([[0.0, 2**24 + 1]])).shape == (1,)
    with pytest.raises(ValueError, match="categorical feature 1 has (non-integer|negative)"):
        clf.predict(np.array([[0.0, code]]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"categorical_features": ["nope"]}, "no column of that name"),
        ({"categorical_features": [5]}, "out of range"),
        ({"categorical_features": [True]}, "boolean mask"),
        ({"categorical_features": [0], "splitter": "random"}, "splitter='random'"),
        ({"categorical_features": "bad"}, "'from_dtype'"),
    ],
)
def test_bad_categorical_features_raise(kwargs, match):
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier(**kwargs).fit(X, [0, 1, 0, 1])


def test_hist_bin_limit_and_exact_beyond_it():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 256, 2000).astype(float)
    codes[:5] = np.nan
    y = rng.integers(0, 2, 2000)
    with pytest.raises(ValueError, match="at most 256 bins"):
        DecisionTreeClassifier(splitter="hist", categorical_features=[0]).fit(codes[:, None], y)
    many = rng.integers(0, 1000, 3000).astype(float)[:, None]
    clf = DecisionTreeClassifier(max_depth=2, categorical_features=[0])
    clf.fit(many, (many[:, 0] % 3 == 0).astype(int))
    assert clf.tree_.category_bits.shape[1] == 16  # 1000 codes: 16 words
    assert clf.score(many, (many[:, 0] % 3 == 0).astype(int)) == 1.0


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_numeric_nan_next_to_categories(splitter):
    """NaN in numeric columns and in categorical ones, in one tree: fit learns both kinds of
    split, and every row (training rows and unseen NaN patterns) follows the documented
    routing rules; infinity stays an error."""
    rng = np.random.default_rng(5)
    n = 600
    category = rng.integers(0, 6, n).astype(float)
    number = rng.normal(size=n)
    y = ((category % 3 == 0) ^ (number > 0.3)).astype(int)
    category[rng.random(n) < 0.1] = np.nan
    number[rng.random(n) < 0.2] = np.nan
    X = np.column_stack([category, number])
    clf = DecisionTreeClassifier(categorical_features=[0], splitter=splitter, max_depth=6)
    clf.fit(X, y)
    tree = clf.tree_
    split = tree.left >= 0
    assert (tree.categorical_set[split] >= 0).any() and (tree.feature[split] == 1).any()
    probe = np.vstack([X, [[np.nan, np.nan], [2.0, np.nan], [np.nan, 0.5], [7.0, 1.0]]])
    leaves = clf.apply(probe)
    assert [route_row(tree, x)[-1] for x in probe] == leaves.tolist()
    with pytest.raises(ValueError, match="infinity"):
        clf.predict(np.array([[1.0, np.inf]]))


# ---------------------------------------------------------- storage, pruning, best-first
def test_save_load_round_trip_and_old_files(tmp_path):
    X, y = _frame(np.random.default_rng(2))
    clf = DecisionTreeClassifier(categorical_features=["colour"]).fit(X, y)
    dtjit.save(clf, tmp_path / "m.npz")
    loaded = dtjit.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    assert list(loaded.categories_[0]) == list(clf.categories_[0])
    np.testing.assert_array_equal(loaded.tree_.category_bits, clf.tree_.category_bits)
    # A file without the categorical arrays and header entry (older dtjit) still loads.
    numeric = DecisionTreeClassifier(max_depth=2).fit(X[["size"]].to_numpy(), y)
    dtjit.save(numeric, tmp_path / "n.npz")
    header, arrays = read_model_file(tmp_path / "n.npz")
    header.pop("categorical")
    arrays.pop("categorical_set")
    arrays.pop("category_bits")
    write_model_file(tmp_path / "old.npz", header, arrays)
    old = dtjit.load(tmp_path / "old.npz")
    np.testing.assert_array_equal(old.predict(X[["size"]].to_numpy()),
                                  numeric.predict(X[["size"]].to_numpy()))  # fmt: skip
    assert not old.tree_.has_categorical_splits


@pytest.mark.parametrize(
    "entry",
    [
        {"features": [0.7]},  # numpy would truncate it to feature 0
        {"features": [True]},
        {"features": 0},
        {"categories": [["a", "b"]]},  # an integer column's categories are its int codes
        {"categories": [[[1], [2]]]},
        {"from_values": [1]},
        {"features": [0, 0], "categories": [[0], [1]], "from_values": [False, False]},
    ],
)
def test_load_rejects_a_crafted_categorical_entry(tmp_path, entry):
    X = np.random.default_rng(4).integers(0, 5, size=(200, 2)).astype(np.float64)
    y = (X[:, 0] % 2 == 0).astype(int)
    dtjit.save(DecisionTreeClassifier(categorical_features=[0]).fit(X, y), tmp_path / "m.npz")
    header, arrays = read_model_file(tmp_path / "m.npz")
    header["categorical"].update(entry)
    write_model_file(tmp_path / "bad.npz", header, arrays)
    with pytest.raises(TreeFormatError, match="malformed categorical entry"):
        dtjit.load(tmp_path / "bad.npz")


def test_check_tree_rejects_bad_categorical_arrays():
    X, y = _frame(np.random.default_rng(3))
    tree = DecisionTreeClassifier(max_depth=2, categorical_features=[0]).fit(X, y).tree_
    state = tree.__getstate__()
    bad_index = dict(state, categorical_set=np.where(state["categorical_set"] >= 0, 7, -1)
                     .astype(np.int32))  # fmt: skip
    with pytest.raises(TreeFormatError, match="categorical_set out of range"):
        Tree(**bad_index)
    threshold = state["threshold"].copy()
    threshold[0] = 0.5
    with pytest.raises(TreeFormatError, match="threshold must be NaN"):
        Tree(**dict(state, threshold=threshold))


def test_pruning_and_best_first_keep_subsets_valid(shared_data):
    X_train, X_test, y_train, _ = _adult(shared_data)
    cats = _value_columns(X_train)
    full = DecisionTreeClassifier(categorical_features=cats).fit(X_train, y_train)
    alphas = full.cost_complexity_pruning_path(X_train, y_train).ccp_alphas
    pruned = dtjit.prune(full, float(alphas[-5]))
    assert pruned.tree_.node_count < full.tree_.node_count
    assert pruned.tree_.has_categorical_splits
    assert pruned.predict(X_test).shape == (X_test.shape[0],)
    fitted = DecisionTreeClassifier(categorical_features=cats, ccp_alpha=float(alphas[-5]))
    np.testing.assert_array_equal(fitted.fit(X_train, y_train).tree_.feature, pruned.tree_.feature)
    best_first = DecisionTreeClassifier(categorical_features=cats, max_leaf_nodes=20)
    tree = best_first.fit(X_train, y_train).tree_
    assert tree.n_leaves == 20 and tree.has_categorical_splits
    record = to_dict(best_first)["tree"]
    assert record["threshold"] is None and record["categories_left"]


def test_regression_on_cpu_vendor(shared_data):
    df = pd.read_csv(shared_data / "weka" / "cpu.with.vendor.csv")
    y = df.pop("class")
    reg = DecisionTreeRegressor(max_depth=3, categorical_features=["vendor"]).fit(df, y)
    hist = DecisionTreeRegressor(max_depth=3, splitter="hist", categorical_features=["vendor"])
    assert reg.score(df, y) > 0.8
    assert hist.fit(df, y).score(df, y) > 0.8


def test_cli_fit_categorical(shared_data, tmp_path, capsys):
    from dtjit.cli import main

    model = tmp_path / "spam.npz"
    data = str(shared_data / "textbook" / "spam_words.csv")
    columns = "sender_domain,contains_free"
    code = main(["fit", data, "--target", "spam", "-o", str(model),
                 "--categorical", columns, "--criterion", "entropy"])  # fmt: skip
    assert code == 0
    loaded = dtjit.load(model)
    assert list(loaded.categories_[0]) == ["Com", "Edu", "Org"]
    assert "sender_domain in {" in export_text(loaded)
    assert main(["fit", data, "--target", "spam", "-o", str(model)]) != 0
    assert "--categorical sender_domain,contains_free" in capsys.readouterr().err


def _penguin_like_frame(n=240, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    island = rng.choice(["Torgersen", "Biscoe", "Dream"], n)
    frame = pd.DataFrame(
        {"island": pd.Categorical(island), "bill": rng.normal(40.0, 5.0, n).round(1)}
    )
    y = ((island == "Dream") ^ (frame["bill"].to_numpy() > 45.0)).astype(int)
    return frame, y


def test_category_columns_are_categorical_by_default():
    """As in LightGBM: a DataFrame's 'category' columns split by subsets; numbers stay numbers."""
    frame, y = _penguin_like_frame()
    clf = DecisionTreeClassifier(max_depth=3).fit(frame, y)
    explicit = DecisionTreeClassifier(max_depth=3, categorical_features=["island"]).fit(frame, y)
    assert clf.categorical_features == "from_dtype"
    assert clf.categorical_features_.tolist() == [0]
    assert clf.categories_from_values_ == [True]
    assert_trees_identical(clf.tree_, explicit.tree_)
    assert clf.score(frame, y) == 1.0
    # An array has no dtype per column: the default leaves every column numeric.
    codes = np.c_[frame["island"].cat.codes.to_numpy(float), frame["bill"].to_numpy()]
    assert DecisionTreeClassifier(max_depth=3).fit(codes, y).categorical_features_.size == 0


def test_string_column_left_numeric_names_the_option():
    frame, y = _penguin_like_frame()
    frame["island"] = frame["island"].astype(str)
    with pytest.raises(ValueError, match=r"'island'.*'Torgersen'|'island'.*categorical_features"):
        DecisionTreeClassifier().fit(frame, y)
    frame["year"] = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match=r"'island'.*categorical_features=\['island'\]"):
        DecisionTreeClassifier(categorical_features=["year"]).fit(frame, y)


def test_default_category_columns_with_random_splitter_say_why():
    frame, y = _penguin_like_frame()
    with pytest.raises(ValueError, match=r"\['island'\] are categorical by default.*'random'"):
        DecisionTreeClassifier(splitter="random").fit(frame, y)
    # Without category columns the default asks nothing of the random splitter.
    DecisionTreeClassifier(splitter="random", max_depth=2).fit(frame[["bill"]], y)


@pytest.mark.parametrize("columns", [["bill"], ["island"], ["bill", "island"]])
def test_categorical_model_missing_or_reordered_column_error_as_numeric(columns):
    """The message a numeric model gives (scikit-learn's), not an IndexError."""
    frame, y = _penguin_like_frame()
    categorical = DecisionTreeClassifier(max_depth=2).fit(frame, y)
    numeric = DecisionTreeClassifier(max_depth=2).fit(
        frame.assign(island=frame["island"].cat.codes.astype(float)), y
    )
    errors = []
    for model in (categorical, numeric):
        with pytest.raises(ValueError, match="feature names should match") as info:
            model.predict(frame[columns])
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("m", [0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 1000, 4099])
def test_stable_order_is_numpys_stable_argsort(m):
    """The order of the categories by rate and of the absolute-error targets: ties in
    position order, NaN (a weightless category) last, across insertion runs and merges."""
    rng = np.random.default_rng(m)
    for key in (
        rng.normal(size=m),
        rng.integers(0, 4, m).astype(np.float64),  # many ties
        np.where(rng.random(m) < 0.3, np.nan, rng.integers(0, 3, m).astype(np.float64)),
        np.arange(m, 0, -1, dtype=np.float64),
    ):
        np.testing.assert_array_equal(via_kernel(stable_order)(key), np.argsort(key, kind="stable"))
