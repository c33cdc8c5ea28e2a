"""Cost-complexity pruning, choosing alpha, and reduced-error pruning (``dtjit.pruning``).

- the weakest-link kernel equals the transcribed scikit-learn loop (``tests/_reference.py``);
- the pruning path and ``ccp_alpha`` fits equal scikit-learn's on tie-free data;
- pruning a fitted tree equals fitting with that ``ccp_alpha``; pruned trees stay breadth-first;
- validation / cross-validation errors equal brute-force re-scoring of every pruned subtree;
- the choice rules (largest alpha on ties, one standard error) and reduced-error pruning are
  checked on hand-made cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from _assertions import assert_same_as_sklearn, assert_trees_identical, compare_with_sklearn
from _reference import reference_collapse, reference_weakest_links
from sklearn import tree as sk_tree
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, train_test_split

import dtjit
from dtjit import _prune, pruning

# ---------------------------------------------------------------------------- shared data


@pytest.fixture(scope="module")
def tie_free():
    """Continuous 2000 x 6 design with distinct values: the trees of test_parity's tie-free
    grid (min_samples_leaf=20, depth <= 5) are scikit-learn's exactly."""
    rng = np.random.default_rng(2)  # test_parity.TIE_FREE_SEED
    X = rng.normal(size=(2000, 6)).astype(np.float32)
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3] + 0.5 * rng.normal(size=2000)
    y_class = np.digitize(score, [-0.8, 0.3, 1.2])
    y_reg = score + np.sin(2.0 * X[:, 4])
    weight = rng.integers(1, 4, size=2000).astype(np.float64)
    return X, y_class, y_reg, weight


@pytest.fixture(scope="module")
def cancer_split():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


PARITY_CASES = [
    pytest.param("gini", {"max_depth": 5}, id="gini-depth5"),
    pytest.param("entropy", {"max_depth": 5}, id="entropy-depth5"),
    pytest.param("gini", {"max_leaf_nodes": 20}, id="gini-leaves20"),
    pytest.param("squared_error", {"max_depth": 5}, id="squared_error-depth5"),
    pytest.param("squared_error", {"max_leaf_nodes": 20}, id="squared_error-leaves20"),
]


def _bundled(criterion):
    """scikit-learn's diabetes for regression, breast cancer for classification."""
    loader = load_diabetes if criterion == "squared_error" else load_breast_cancer
    return loader(return_X_y=True)


def _pair(criterion):
    if criterion == "squared_error":
        return dtjit.DecisionTreeRegressor, sk_tree.DecisionTreeRegressor
    return dtjit.DecisionTreeClassifier, sk_tree.DecisionTreeClassifier


def _parity_case(tie_free, criterion, growth, weighted):
    """X, y, sample weights, parameters and the (dtjit, scikit-learn) classes of one case."""
    X, y_class, y_reg, weight = tie_free
    y = y_reg if criterion == "squared_error" else y_class
    params = {"criterion": criterion, "min_samples_leaf": 20, **growth}
    return X, y, weight if weighted else None, params, *_pair(criterion)


# ------------------------------------------------------------------ kernel against reference


def _random_tree(rng, n_split, integer_impurity):
    """A random binary tree (BFS ids) with random or small-integer impurities (many ties)."""
    left, right = [-1], [-1]
    leaves = [0]
    for _ in range(n_split):
        node = leaves.pop(rng.integers(len(leaves)))
        left[node], right[node] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
        leaves += [len(left) - 2, len(left) - 1]
    # Renumber breadth-first so the arrays form a valid dtjit Tree.
    order, queue = [], [0]
    while queue:
        node = queue.pop(0)
        order.append(node)
        if left[node] != -1:
            queue += [left[node], right[node]]
    new = {old: i for i, old in enumerate(order)}
    n = len(order)
    L = np.array([new[left[o]] if left[o] != -1 else -1 for o in order], dtype=np.int32)
    R = np.array([new[right[o]] if right[o] != -1 else -1 for o in order], dtype=np.int32)
    counts = np.zeros(n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        counts[i] = rng.integers(1, 4) if L[i] == -1 else counts[L[i]] + counts[R[i]]
    if integer_impurity:
        impurity = rng.integers(0, 3, size=n).astype(np.float64) / 4.0
    else:
        impurity = rng.random(n)
    # Children no worse than parents keeps most alphas positive, like real trees.
    for i in range(n):
        if L[i] != -1:
            impurity[L[i]] = min(impurity[L[i]], impurity[i])
            impurity[R[i]] = min(impurity[R[i]], impurity[i])
    is_leaf = L == -1
    return dtjit.Tree(
        n_features=3,
        n_classes=[1],
        feature=np.where(is_leaf, -2, 0).astype(np.int32),
        threshold=np.where(is_leaf, -2.0, 0.5),
        left=L,
        right=R,
        value=np.zeros((n, 1, 1)),
        impurity=impurity,
        n_node_samples=counts,
        weighted_n_node_samples=counts.astype(np.float64),
        missing_left=np.zeros(n, dtype=np.uint8),
    )


@pytest.mark.parametrize("integer_impurity", [False, True], ids=["random", "ties"])
@pytest.mark.parametrize("seed", range(6))
def test_weakest_links_equal_reference_loop(seed, integer_impurity):
    rng = np.random.default_rng(seed)
    tree = _random_tree(rng, int(rng.integers(1, 60)), integer_impurity)
    links = _prune.weakest_links(tree)
    nodes, alphas, impurities, leaves, r0 = reference_weakest_links(
        tree.left, tree.right, tree.impurity, tree.weighted_n_node_samples
    )
    np.testing.assert_array_equal(links.nodes, nodes)
    # bit for bit: same arithmetic, but noise below 0 (zero-gain links) is kept at 0
    np.testing.assert_array_equal(links.alphas, np.maximum(alphas, 0.0))
    np.testing.assert_array_equal(links.impurities, impurities)
    np.testing.assert_array_equal(links.n_leaves, leaves)
    assert links.unpruned_impurity == r0
    # Pruning to every alpha on the path equals collapsing the reference's prefix.
    for alpha in np.unique(alphas):
        if alpha <= 0.0:
            continue
        steps = next((k for k, a in enumerate(alphas) if a > alpha), len(alphas))
        expected = reference_collapse(tree, set(nodes[:steps]))
        pruned = _prune.prune_to_alpha(tree, alpha)
        for name, array in expected.items():
            np.testing.assert_array_equal(getattr(pruned, name), array, err_msg=name)


def test_weakest_links_real_tree_equal_reference(cancer_split):
    X_train, _, y_train, _ = cancer_split
    tree = dtjit.DecisionTreeClassifier().fit(X_train, y_train).tree_
    links = _prune.weakest_links(tree)
    nodes, alphas, impurities, _, _ = reference_weakest_links(
        tree.left, tree.right, tree.impurity, tree.weighted_n_node_samples
    )
    np.testing.assert_array_equal(links.nodes, nodes)
    np.testing.assert_array_equal(links.alphas, np.maximum(alphas, 0.0))
    np.testing.assert_array_equal(links.impurities, impurities)


def test_weakest_links_of_a_single_leaf():
    X = np.zeros((4, 1))
    est = dtjit.DecisionTreeClassifier().fit(X, [0, 1, 0, 1])
    assert est.tree_.node_count == 1
    path = pruning.pruning_path(est)
    np.testing.assert_array_equal(path.ccp_alphas, [0.0])
    np.testing.assert_allclose(path.impurities, [0.5])
    assert dtjit.prune(est, 1.0).tree_.node_count == 1


def test_path_alphas_of_zero_gain_splits_are_zero_not_negative():
    # Zero-gain splits of this tree have effective alphas of -1.4e-17 (scikit-learn's path
    # too): fed back to ccp_alpha and dtjit.prune, they were refused.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(30, 2)).astype(float)
    y = rng.integers(0, 3, 30).astype(float)
    est = dtjit.DecisionTreeRegressor(max_depth=3).fit(X, y)
    weight = est.tree_.weighted_n_node_samples
    r_node = weight * est.tree_.impurity / weight[0]  # scikit-learn's R(t)
    raw = [
        (r_node[t] - r_node[leaves].sum()) / (len(leaves) - 1)
        for t, leaves in _subtree_leaves(est.tree_).items()
    ]
    assert min(raw) < 0.0  # the noise this test is about
    path = est.cost_complexity_pruning_path(X, y)
    assert (path.ccp_alphas >= 0.0).all()
    for alpha in path.ccp_alphas:
        dtjit.prune(est, alpha)
        dtjit.DecisionTreeRegressor(max_depth=3, ccp_alpha=alpha).fit(X, y)


def _subtree_leaves(tree):
    """Leaves below each split node of ``tree``."""
    leaves = {}
    for node in reversed(range(tree.node_count)):
        if tree.left[node] < 0:
            continue
        kids = [tree.left[node], tree.right[node]]
        leaves[node] = [leaf for k in kids for leaf in leaves.get(k, [k])]
    return leaves


@pytest.mark.parametrize("weighted", [False, True])
def test_importances_and_path_of_targets_near_the_fit_limit(weighted):
    # weight * impurity overflowed (variance ~1e306 times 1000 rows): importances and
    # alphas were NaN. Scaling y by a power of two scales neither the splits nor the shares.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    y = rng.normal(size=1000)
    w = rng.uniform(1, 3, 1000) if weighted else None
    scale = 2.0**508  # ~8e152
    small = dtjit.DecisionTreeRegressor(max_depth=4).fit(X, y, sample_weight=w)
    large = dtjit.DecisionTreeRegressor(max_depth=4).fit(X, y * scale, sample_weight=w)
    np.testing.assert_allclose(large.feature_importances_, small.feature_importances_, rtol=1e-12)
    alphas = large.cost_complexity_pruning_path(X, y * scale, sample_weight=w).ccp_alphas
    expected = small.cost_complexity_pruning_path(X, y, sample_weight=w).ccp_alphas
    np.testing.assert_allclose(alphas / scale**2, expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("how", ["validation", "cv"])
@pytest.mark.filterwarnings("error::RuntimeWarning")  # the error says it, without warnings
def test_select_names_validation_losses_that_overflow(how):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    scale = 2.0**266  # ~1e80: squared errors fit float64, their squares do not
    y = rng.normal(size=300) * scale
    grower = dtjit.DecisionTreeRegressor(random_state=0)
    given = {"cv": 3, "random_state": 0} if how == "cv" else {"X_val": X[200:], "y_val": y[200:]}
    selection = pruning.select_ccp_alpha(grower, X[:200], y[:200], **given)
    # the same choice as on y / scale (cv's fold alphas overflowed to inf: every fold a root)
    unscaled = (
        {"cv": 3, "random_state": 0}
        if how == "cv"
        else {"X_val": X[200:], "y_val": y[200:] / scale}
    )
    expected = pruning.select_ccp_alpha(grower, X[:200], y[:200] / scale, **unscaled)
    assert selection.best_index == expected.best_index
    np.testing.assert_allclose(selection.errors / scale**2, expected.errors, rtol=1e-9)
    with pytest.raises(ValueError, match="standard errors .* overflow float64.* divide y"):
        pruning.select_ccp_alpha(grower, X[:200], y[:200], rule="1se", **given)
    if how == "validation":  # validation targets far larger than the training ones
        with pytest.raises(ValueError, match="validation losses overflow float64"):
            pruning.select_ccp_alpha(grower, X[:200], y[:200], X_val=X[200:], y_val=y[200:] * 1e80)


def test_reduced_error_prune_names_validation_losses_that_overflow():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] * 1e150 + rng.normal(size=400) * 1e149  # the fit accepts these
    est = dtjit.DecisionTreeRegressor(max_depth=5).fit(X[:200], y[:200])
    assert pruning.reduced_error_prune(est, X[200:], y[200:]).tree_.node_count > 1
    # Validation targets ~1e155: every loss was inf, and inf <= inf collapsed the tree.
    with pytest.raises(ValueError, match="validation losses overflow float64"):
        pruning.reduced_error_prune(est, X[200:], y[200:] * 1e5)


@pytest.mark.parametrize("how", ["validation", "cv"])
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_select_with_huge_validation_weights_equals_unit_weights(how):
    # W * W of validation weights 1e200 overflowed: standard errors NaN, or a ValueError
    # blaming y. No common factor of the weights changes a validation error.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.normal(size=300)
    grower = dtjit.DecisionTreeRegressor(max_depth=4, random_state=0)
    choices = []
    for weight in (1.0, 1e200):
        if how == "cv":
            given = {"cv": 3, "random_state": 0, "sample_weight": np.full(200, weight)}
        else:
            given = {"X_val": X[200:], "y_val": y[200:], "sample_weight_val": np.full(100, weight)}
        choices.append(pruning.select_ccp_alpha(grower, X[:200], y[:200], rule="1se", **given))
    assert choices[0].best_index == choices[1].best_index
    np.testing.assert_allclose(choices[1].errors, choices[0].errors, rtol=1e-12)
    np.testing.assert_allclose(choices[1].standard_errors, choices[0].standard_errors, rtol=1e-9)


# --------------------------------------------------------------------- parity with sklearn


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weights1to3"])
@pytest.mark.parametrize(("criterion", "growth"), PARITY_CASES)
def test_pruning_path_equals_sklearn(tie_free, criterion, growth, weighted):
    X, y, sw, params, ours_cls, theirs_cls = _parity_case(tie_free, criterion, growth, weighted)
    ours = ours_cls(**params).cost_complexity_pruning_path(X, y, sample_weight=sw)
    theirs = theirs_cls(random_state=0, **params).cost_complexity_pruning_path(
        X, y, sample_weight=sw
    )
    assert set(ours) == {"ccp_alphas", "impurities"}
    assert ours.ccp_alphas.shape == theirs.ccp_alphas.shape
    # Classification impurities are computed the same way: the paths agree to the last bit
    # in practice. Regression impurities differ by float noise of the order var(y) * 1e-15.
    scale = float(theirs.impurities[-1])
    np.testing.assert_allclose(ours.ccp_alphas, theirs.ccp_alphas, rtol=1e-12, atol=1e-14 * scale)
    np.testing.assert_allclose(ours.impurities, theirs.impurities, rtol=1e-12, atol=1e-14 * scale)
    # The path of the fitted tree, read without refitting, is the same.
    fitted = ours_cls(**params).fit(X, y, sample_weight=sw)
    again = pruning.pruning_path(fitted)
    np.testing.assert_array_equal(again.ccp_alphas, ours.ccp_alphas)
    np.testing.assert_array_equal(again.impurities, ours.impurities)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weights1to3"])
@pytest.mark.parametrize(("criterion", "growth"), PARITY_CASES)
def test_ccp_alpha_fit_equals_sklearn(tie_free, criterion, growth, weighted):
    """Fits with ccp_alpha between consecutive path alphas equal scikit-learn's pruned trees."""
    X, y, sw, params, ours_cls, theirs_cls = _parity_case(tie_free, criterion, growth, weighted)
    alphas = np.unique(
        theirs_cls(random_state=0, **params).cost_complexity_pruning_path(X, y, sw).ccp_alphas
    )
    # Midpoints stay clear of float noise at the path's own alphas; the first prunes nothing.
    for alpha in ((alphas[:-1] + alphas[1:]) / 2)[1 :: max(1, len(alphas) // 6)]:
        ours = ours_cls(ccp_alpha=alpha, **params).fit(X, y, sample_weight=sw)
        theirs = theirs_cls(ccp_alpha=alpha, random_state=0, **params).fit(X, y, sample_weight=sw)
        dtjit.check_tree(ours.tree_)
        assert ours.tree_.node_count == theirs.tree_.node_count
        assert ours.get_n_leaves() < ours_cls(**params).fit(X, y, sw).get_n_leaves()
        if criterion == "squared_error":
            cmp = compare_with_sklearn(ours, theirs, X, y, sw)
            assert cmp.identical, cmp.mismatches[:5]
            np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
        else:
            assert_same_as_sklearn(ours, theirs, X, y, sw)
        np.testing.assert_allclose(
            ours.feature_importances_, theirs.feature_importances_, rtol=1e-7, atol=1e-12
        )


def test_ccp_alpha_zero_prunes_nothing_like_sklearn(cancer_split):
    """scikit-learn skips pruning at ccp_alpha=0 even when zero-alpha links exist."""
    X_train, _, y_train, _ = cancer_split
    plain = dtjit.DecisionTreeClassifier().fit(X_train, y_train)
    zero = dtjit.DecisionTreeClassifier(ccp_alpha=0.0).fit(X_train, y_train)
    assert_trees_identical(plain, zero)
    assert dtjit.prune(plain, 0.0).tree_ is plain.tree_


# ---------------------------------------------------------- pruning a fitted tree, storage


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_prune_equals_fit_with_ccp_alpha(criterion):
    X, y = _bundled(criterion)
    cls = _pair(criterion)[0]
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    full = cls(criterion=criterion, random_state=0).fit(X, y, sample_weight=w)
    before = {k: v.copy() for k, v in full.tree_.to_arrays().items()}
    path = pruning.pruning_path(full)
    for alpha in np.unique(path.ccp_alphas)[1::7]:
        pruned = dtjit.prune(full, alpha)
        refit = cls(criterion=criterion, random_state=0, ccp_alpha=alpha).fit(X, y, w)
        assert_trees_identical(pruned, refit)
        assert pruned.get_params() == refit.get_params()
        np.testing.assert_array_equal(pruned.predict(X), refit.predict(X))
        np.testing.assert_array_equal(pruned.feature_importances_, refit.feature_importances_)
        # Tree-level pruning gives the same arrays.
        assert_trees_identical(dtjit.prune(full.tree_, alpha), refit)
    for name, array in before.items():  # the fitted estimator is untouched
        np.testing.assert_array_equal(getattr(full.tree_, name), array)
    assert full.ccp_alpha == 0.0


def test_pruned_trees_are_breadth_first_and_consistent(cancer_split):
    """Every subtree on the path passes check_tree and matches the path's size and R(T)."""
    X_train, _, y_train, _ = cancer_split
    full = dtjit.DecisionTreeClassifier(criterion="entropy").fit(X_train, y_train)
    path = pruning.pruning_path(full)
    w0 = full.tree_.weighted_n_node_samples[0]
    for k, alpha in enumerate(path.ccp_alphas):
        if alpha <= 0.0 or (k + 1 < len(path.ccp_alphas) and path.ccp_alphas[k + 1] == alpha):
            continue  # 0 prunes nothing; equal alphas are pruned together at the last one
        tree = dtjit.prune(full, alpha).tree_
        dtjit.check_tree(tree)  # includes: the k-th split node's children are 2k+1, 2k+2
        assert np.all(np.diff(tree.node_depth) >= 0)
        assert tree.n_leaves == path.n_leaves[k]
        leaf = tree.left == -1
        r_tree = np.sum(tree.weighted_n_node_samples[leaf] * tree.impurity[leaf]) / w0
        np.testing.assert_allclose(r_tree, path.impurities[k], rtol=1e-12)
    assert dtjit.prune(full, np.inf).tree_.node_count == 1


def test_feature_importances_follow_the_pruned_tree(cancer_split):
    X_train, _, y_train, _ = cancer_split
    full = dtjit.DecisionTreeClassifier().fit(X_train, y_train)
    alphas = pruning.pruning_path(full).ccp_alphas
    small = dtjit.prune(full, alphas[-3])  # a few splits left
    used = np.unique(small.tree_.feature[small.tree_.feature >= 0])
    importances = small.feature_importances_
    assert np.all(importances[np.setdiff1d(np.arange(X_train.shape[1]), used)] == 0.0)
    assert np.all(importances[used] > 0.0)
    assert not np.allclose(importances, full.feature_importances_)


def test_save_and_load_a_pruned_model(tmp_path, cancer_split):
    X_train, X_test, y_train, _ = cancer_split
    est = dtjit.DecisionTreeClassifier(ccp_alpha=0.01).fit(X_train, y_train)
    dtjit.save(est, tmp_path / "pruned.npz")
    loaded = dtjit.load(tmp_path / "pruned.npz")
    assert loaded.ccp_alpha == 0.01
    assert_trees_identical(loaded, est)
    np.testing.assert_array_equal(loaded.predict(X_test), est.predict(X_test))
    rep = dtjit.reduced_error_prune(dtjit.DecisionTreeClassifier().fit(X_train, y_train),
                                    X_test, est.predict(X_test))  # fmt: skip
    dtjit.save(rep, tmp_path / "rep.npz")
    assert_trees_identical(dtjit.load(tmp_path / "rep.npz"), rep)


def test_grid_search_over_ccp_alpha(cancer_split):
    X_train, _, y_train, _ = cancer_split
    grid = GridSearchCV(dtjit.DecisionTreeClassifier(), {"ccp_alpha": [0.0, 0.005, 0.02]}, cv=3)
    grid.fit(X_train, y_train)
    assert grid.best_params_["ccp_alpha"] in (0.0, 0.005, 0.02)


# ----------------------------------------------------------------------- choosing the alpha


def _brute_force_errors(estimator, alphas, X_val, y_val):
    """Error of every candidate by pruning and predicting: what the vectorised sums replace."""
    errors = []
    for alpha in alphas:
        pred = dtjit.prune(estimator, alpha).predict(X_val)
        errors.append(np.mean(pred != y_val) if hasattr(estimator, "classes_")
                      else np.mean((pred - y_val) ** 2))  # fmt: skip
    return np.array(errors)


def test_validation_errors_equal_brute_force(cancer_split):
    X_train, X_val, y_train, y_val = cancer_split
    sel = dtjit.select_ccp_alpha(
        dtjit.DecisionTreeClassifier(random_state=0), X_train, y_train, X_val=X_val, y_val=y_val
    )
    assert sel.method == "validation" and sel.rule == "min"
    grown = dtjit.DecisionTreeClassifier(random_state=0).fit(X_train, y_train)
    np.testing.assert_allclose(
        sel.errors, _brute_force_errors(grown, sel.ccp_alphas, X_val, y_val), rtol=1e-12
    )
    # 0/1 loss, unit weights: the standard error of a proportion.
    e = sel.errors
    np.testing.assert_allclose(sel.standard_errors, np.sqrt(e * (1 - e) / len(y_val)), atol=1e-12)
    assert sel.ccp_alphas[0] == 0.0 and np.all(np.diff(sel.ccp_alphas) > 0)
    assert sel.n_leaves[0] == grown.get_n_leaves() and sel.n_leaves[-1] == 1
    # The chosen candidate has the lowest error, and no larger alpha has it too.
    assert sel.errors[sel.best_index] == sel.errors.min()
    assert np.all(sel.errors[sel.best_index + 1 :] > sel.errors.min())
    assert sel.ccp_alpha == sel.ccp_alphas[sel.best_index]
    assert_trees_identical(sel.estimator, dtjit.prune(grown, sel.ccp_alpha))
    assert sel.estimator.ccp_alpha == sel.ccp_alpha


@pytest.mark.parametrize("entries", [1, 37, 1 << 22])
def test_validation_losses_in_chunks_of_rows(cancer_split, monkeypatch, entries):
    """The decision paths are read a chunk of rows at a time (at most ``_PATH_ENTRIES``
    entries): 1 entry is one row per chunk. Errors, choices and pruned trees stay the same."""
    X_train, X_val, y_train, y_val = cancer_split
    grown = dtjit.DecisionTreeClassifier(random_state=0).fit(X_train, y_train)
    weight = np.random.default_rng(3).uniform(0.5, 2.0, len(y_val))
    expected = pruning._node_losses(grown, X_val, y_val, weight)
    monkeypatch.setattr(pruning, "_PATH_ENTRIES", entries)
    got = pruning._node_losses(grown, X_val, y_val, weight)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    sel = dtjit.select_ccp_alpha(
        dtjit.DecisionTreeClassifier(random_state=0), X_train, y_train, X_val=X_val, y_val=y_val
    )
    np.testing.assert_allclose(
        sel.errors, _brute_force_errors(grown, sel.ccp_alphas, X_val, y_val), rtol=1e-12
    )
    pruned = dtjit.reduced_error_prune(grown, X_val, y_val)
    assert pruned.score(X_val, y_val) >= grown.score(X_val, y_val)


def test_validation_regression_with_weights():
    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, size=len(y))
    X_train, X_val, y_train, y_val, w_train, w_val = train_test_split(
        X, y, w, test_size=0.3, random_state=0
    )
    sel = dtjit.select_ccp_alpha(
        dtjit.DecisionTreeRegressor(), X_train, y_train, sample_weight=w_train,
        X_val=X_val, y_val=y_val, sample_weight_val=w_val,
    )  # fmt: skip
    grown = dtjit.DecisionTreeRegressor().fit(X_train, y_train, w_train)
    expected = [
        np.average((dtjit.prune(grown, a).predict(X_val) - y_val) ** 2, weights=w_val)
        for a in sel.ccp_alphas
    ]
    np.testing.assert_allclose(sel.errors, expected, rtol=1e-9)
    assert sel.estimator.get_n_leaves() < grown.get_n_leaves()


def test_validation_fraction_is_stratified_and_reproducible(cancer_split):
    X_train, _, y_train, _ = cancer_split
    est = dtjit.DecisionTreeClassifier()
    a = dtjit.select_ccp_alpha(est, X_train, y_train, validation_fraction=0.25, random_state=3)
    b = dtjit.select_ccp_alpha(est, X_train, y_train, validation_fraction=0.25, random_state=3)
    assert a.ccp_alpha == b.ccp_alpha
    np.testing.assert_array_equal(a.errors, b.errors)
    X_fit, X_val, y_fit, y_val = train_test_split(
        X_train, y_train, test_size=0.25, stratify=y_train, random_state=3
    )
    c = dtjit.select_ccp_alpha(est, X_fit, y_fit, X_val=X_val, y_val=y_val)
    np.testing.assert_array_equal(a.errors, c.errors)
    assert_trees_identical(a.estimator, c.estimator)


def test_validation_picks_the_largest_alpha_among_equal_errors():
    """One validation row in the right region: every subtree but the root is error-free."""
    x = np.arange(8, dtype=np.float64).reshape(-1, 1)
    y = np.array([0, 1, 0, 0, 1, 0, 1, 1])
    sel = dtjit.select_ccp_alpha(dtjit.DecisionTreeClassifier(), x, y, X_val=[[10.0]], y_val=[1])
    assert len(sel.ccp_alphas) >= 3
    # The root alone predicts class 0 (a 4/4 tie goes to the first class): one error.
    np.testing.assert_array_equal(sel.errors, [0.0] * (len(sel.ccp_alphas) - 1) + [1.0])
    assert sel.min_index == sel.best_index == len(sel.ccp_alphas) - 2
    assert sel.estimator.predict([[10.0]])[0] == 1
    assert sel.estimator.get_n_leaves() == sel.n_leaves[-2] < sel.n_leaves[0]


def test_choice_rules_on_a_hand_made_curve():
    errors = np.array([0.30, 0.25, 0.20, 0.22, 0.24, 0.26, 0.50])
    se = np.array([0.02, 0.02, 0.05, 0.02, 0.02, 0.02, 0.03])
    assert pruning._choose_index(errors, se, "min") == (2, 2)
    # 1-SE: the limit is 0.20 + 0.05 = 0.25; the largest alpha within it is index 4 (0.24),
    # not index 5 (0.26) and not index 1 (0.25 but a smaller alpha).
    assert pruning._choose_index(errors, se, "1se") == (2, 4)
    # Equal minima: the largest alpha, and the one-SE limit is measured from it.
    tied = np.array([0.3, 0.1, 0.2, 0.1, 0.4])
    assert pruning._choose_index(tied, np.array([0.0, 0.0, 0.0, 0.05, 0.0]), "min") == (3, 3)
    assert pruning._choose_index(tied, np.array([0.0, 0.0, 0.0, 0.0, 0.0]), "1se") == (3, 3)
    assert pruning._choose_index(tied, np.array([0.2, 0.2, 0.2, 0.3, 0.2]), "1se") == (3, 4)


@pytest.mark.parametrize("criterion", ["gini", "squared_error"])
def test_cv_errors_equal_brute_force(criterion):
    X, y = _bundled(criterion)
    folds = (KFold if criterion == "squared_error" else StratifiedKFold)(
        4, shuffle=True, random_state=0
    )
    cls = _pair(criterion)[0]
    sel = dtjit.select_ccp_alpha(cls(criterion=criterion), X, y, cv=folds, rule="1se")
    assert sel.method == "cv"
    grown = cls(criterion=criterion).fit(X, y)
    assert_trees_identical(sel.estimator, dtjit.prune(grown, sel.ccp_alpha))
    # CART: fold trees pruned at the geometric mean of each candidate's alpha range.
    a = sel.ccp_alphas
    fold_alphas = np.append(np.sqrt(a[:-1] * a[1:]), np.inf)
    losses = np.zeros((len(a), len(y)))
    for train, test in folds.split(X, y):
        fold = cls(criterion=criterion).fit(X[train], y[train])
        for k, alpha in enumerate(fold_alphas):
            pred = dtjit.prune(fold, alpha).predict(X[test])
            losses[k, test] = (pred != y[test]) if criterion == "gini" else (pred - y[test]) ** 2
    np.testing.assert_allclose(sel.errors, losses.mean(axis=1), rtol=1e-9)
    np.testing.assert_allclose(
        sel.standard_errors, losses.std(axis=1) / np.sqrt(len(y)), rtol=1e-6, atol=1e-12
    )
    limit = sel.errors[sel.min_index] + sel.standard_errors[sel.min_index]
    assert sel.errors[sel.best_index] <= limit
    assert np.all(sel.errors[sel.best_index + 1 :] > limit)
    assert sel.best_index >= sel.min_index


def test_cv_int_is_shuffled_stratified_folds():
    X, y = load_breast_cancer(return_X_y=True)
    est = dtjit.DecisionTreeClassifier()
    a = dtjit.select_ccp_alpha(est, X, y, cv=3, random_state=5)
    b = dtjit.select_ccp_alpha(est, X, y, cv=StratifiedKFold(3, shuffle=True, random_state=5))
    np.testing.assert_array_equal(a.errors, b.errors)


# ----------------------------------------------------------------- reduced-error pruning


@pytest.fixture(scope="module")
def tiny_tree():
    """x = 0..5, y = 1 1 0 0 1 1: root x <= 1.5 (leaf: class 1), then x <= 3.5 (0 | 1).

    Thresholds 1.5 and 3.5 score the same at the root; the lowest wins. Node 2 holds two
    rows of each class, so as a leaf it predicts class 0 (first class on ties).
    """
    x = np.arange(6, dtype=np.float64).reshape(-1, 1)
    est = dtjit.DecisionTreeClassifier().fit(x, [1, 1, 0, 0, 1, 1])
    t = est.tree_
    np.testing.assert_array_equal(t.threshold, [1.5, -2, 3.5, -2, -2])
    np.testing.assert_array_equal(t.majority_class(), [1, 1, 0, 0, 1])
    return est


def test_reduced_error_prune_by_hand(tiny_tree):
    # Rows 2.5 (y 0) and 4.5, 5 (y 0) and 0.5 (y 1). As is: node 4 predicts 1 for 4.5 and 5,
    # two errors. Node 2 as a leaf predicts 0: no error, so it is collapsed. The root as a
    # leaf predicts 1: three errors against none, so it stays.
    X_val, y_val = [[2.5], [4.5], [5.0], [0.5]], [0, 0, 0, 1]
    rep = dtjit.reduced_error_prune(tiny_tree, X_val, y_val)
    np.testing.assert_array_equal(rep.tree_.left, [1, -1, -1])
    np.testing.assert_array_equal(rep.tree_.threshold, [1.5, -2, -2])
    np.testing.assert_array_equal(rep.predict(X_val), y_val)
    assert tiny_tree.tree_.node_count == 5  # not changed in place
    # Every leaf right: nothing is collapsed.
    X_ok, y_ok = [[2.5], [3.0], [4.5], [0.5]], [0, 0, 1, 1]
    assert_trees_identical(dtjit.reduced_error_prune(tiny_tree, X_ok, y_ok), tiny_tree)
    # Equal errors collapse (no increase). Rows 0.5 and 4.5, both class 1: node 3 (no rows)
    # and node 4 make no error, node 2 as a leaf (class 0) one, so node 2 is kept; but the
    # root as a leaf (class 1) makes no error either, the same as its subtree: one leaf.
    rep = dtjit.reduced_error_prune(tiny_tree, [[0.5], [4.5]], [1, 1])
    assert rep.tree_.node_count == 1


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_reduced_error_prune_never_increases_validation_error(criterion):
    X, y = _bundled(criterion)
    X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.4, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y_val))
    full = _pair(criterion)[0](criterion=criterion).fit(X_train, y_train)
    for weights in (None, w):
        rep = dtjit.reduced_error_prune(full, X_val, y_val, sample_weight=weights)
        dtjit.check_tree(rep.tree_)
        assert rep.get_n_leaves() < full.get_n_leaves()

        def error(model, weights=weights):
            pred = model.predict(X_val)
            loss = (pred != y_val) if criterion != "squared_error" else (pred - y_val) ** 2
            return np.average(loss, weights=weights)

        assert error(rep) <= error(full) * (1 + 1e-12)
        # Bottom-up optimal: collapsing any remaining split node alone does not help.
        for node in np.flatnonzero(rep.tree_.left != -1):
            cut = np.zeros(rep.tree_.node_count, dtype=bool)
            cut[node] = True
            smaller = pruning._with_tree(rep, _prune.collapse(rep.tree_, cut))
            assert error(smaller) > error(rep) * (1 - 1e-12)


def test_reduced_error_prune_unseen_labels_are_errors(tiny_tree):
    rep = dtjit.reduced_error_prune(tiny_tree, [[2.5], [4.5]], [7, 7])
    assert rep.tree_.node_count == 1  # nothing can be right: every subtree collapses


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("alpha", [-0.1, -np.inf, "0.1"])
def test_fit_rejects_bad_ccp_alpha(alpha):
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="ccp_alpha"):
        dtjit.DecisionTreeClassifier(ccp_alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match="ccp_alpha"):
        dtjit.DecisionTreeRegressor(ccp_alpha=alpha).cost_complexity_pruning_path(X, y)


def test_prune_rejects_bad_input(cancer_split):
    X_train, _, y_train, _ = cancer_split
    est = dtjit.DecisionTreeClassifier(ccp_alpha=0.01).fit(X_train, y_train)
    with pytest.raises(ValueError, match="ccp_alpha must be >= 0"):
        dtjit.prune(est, -1.0)
    with pytest.raises(ValueError, match="ccp_alpha must be >= 0"):
        dtjit.prune(est, np.nan)
    with pytest.raises(TypeError, match="ccp_alpha must be a real number"):
        dtjit.prune(est, "0.1")
    with pytest.raises(ValueError, match="already pruned"):
        dtjit.prune(est, 0.001)
    with pytest.raises(NotFittedError):
        dtjit.prune(dtjit.DecisionTreeClassifier(), 0.1)
    with pytest.raises(TypeError, match="dtjit"):
        dtjit.prune(sk_tree.DecisionTreeClassifier().fit(X_train, y_train), 0.1)
    with pytest.raises(TypeError, match="dtjit"):
        pruning.pruning_path("tree")


def test_select_rejects_bad_input(cancer_split):
    X_train, X_val, y_train, y_val = cancer_split
    est = dtjit.DecisionTreeClassifier()
    select = dtjit.select_ccp_alpha
    with pytest.raises(ValueError, match="exactly one.*got none"):
        select(est, X_train, y_train)
    with pytest.raises(ValueError, match="exactly one.*X_val/y_val, validation_fraction"):
        select(est, X_train, y_train, X_val=X_val, y_val=y_val, validation_fraction=0.2)
    with pytest.raises(ValueError, match="exactly one.*validation_fraction, cv"):
        select(est, X_train, y_train, validation_fraction=0.2, cv=3)
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        select(est, X_train, y_train, X_val=X_val)
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        select(est, X_train, y_train, y_val=y_val)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        select(est, X_train, y_train, X_val=X_val, y_val=y_val[:-1])
    with pytest.raises(ValueError, match="sample_weight_val needs X_val"):
        select(est, X_train, y_train, cv=3, sample_weight_val=np.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        select(est, X_train, y_train, X_val=X_val, y_val=y_val, sample_weight_val=np.ones(3))
    with pytest.raises(ValueError, match="X has 3 features"):
        select(est, X_train, y_train, X_val=X_val[:, :3], y_val=y_val)
    for fraction in (0.0, 1.0, 1.5, True, "0.2"):
        with pytest.raises(ValueError, match="validation_fraction must be a float in"):
            select(est, X_train, y_train, validation_fraction=fraction)
    with pytest.raises(ValueError, match="at least 2 folds"):
        select(est, X_train, y_train, cv=1)
    with pytest.raises(ValueError, match="rule must be one of"):
        select(est, X_train, y_train, cv=3, rule="2se")
    with pytest.raises(TypeError, match="dtjit estimator"):
        select(sk_tree.DecisionTreeClassifier(), X_train, y_train, cv=3)
    two_outputs = np.column_stack([y_train, 1 - y_train])
    for how in ({"cv": 3}, {"validation_fraction": 0.2}):
        with pytest.raises(ValueError, match="defined for single-output trees; this one has 2"):
            select(est, X_train, two_outputs, **how)


def test_reduced_error_prune_rejects_bad_input(tiny_tree):
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        dtjit.reduced_error_prune(tiny_tree, [[1.0], [2.0]], [1])
    with pytest.raises(ValueError, match="features"):
        dtjit.reduced_error_prune(tiny_tree, [[1.0, 2.0]], [1])
    with pytest.raises(ValueError, match="non-zero"):
        dtjit.reduced_error_prune(tiny_tree, [[1.0]], [1], sample_weight=[0.0])
    with pytest.raises(ValueError, match="Negative values"):
        dtjit.reduced_error_prune(tiny_tree, [[1.0]], [1], sample_weight=[-1.0])
    with pytest.raises(NotFittedError):
        dtjit.reduced_error_prune(dtjit.DecisionTreeClassifier(), [[1.0]], [1])
