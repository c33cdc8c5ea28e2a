"""The traversal's node layout and phases (``dtjit.predict.walk``) against their slow twins.

The kernels route rows over nodes placed by :func:`~dtjit.predict.walk.lay_out_lines` (sibling
pairs packed into cache lines) and walk in phases chosen by
:func:`~dtjit.predict.walk.phase_lengths`; whatever the layout and the phases, every row must
reach the leaf the plain breadth-first walk of ``tests/_reference.py`` reaches, in both node
sizes, serial and parallel, with and without NaN.
"""

from __future__ import annotations

import numpy as np
import pytest
from _layout_reference import (
    best_phase_cost,
    best_phase_cost_by_brute_force,
    reference_depths,
    reference_line_layout,
    reference_phase_cost,
)
from _reference import reference_apply
from sklearn.datasets import load_diabetes

import dtjit
from dtjit.engine.jit import TREE_LEAF
from dtjit.predict import walk as _predict


def _estimators() -> dict[str, tuple[object, np.ndarray]]:
    """Fitted estimators of varied shapes, each with rows to route (some NaN)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 6)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    noise = rng.integers(0, 3, size=len(X))  # no signal: a deep, ragged tree
    with_nan = X.copy()
    with_nan[rng.random(X.shape) < 0.15] = np.nan
    # NaN learned both ways at feature 1's splits, and "every value | NaN" splits (threshold
    # +inf, NaN right) at feature 0's: what the NaN routing of the packed walk must get right.
    rng_either = np.random.default_rng(0)  # a seed whose tree has both kinds of splits
    either_side = rng_either.normal(size=(4000, 6)).astype(np.float32)
    either_side[rng_either.random(4000) < 0.3, 0] = np.nan
    either_side[rng_either.random(4000) < 0.2, 1] = np.nan
    y_either = np.isnan(either_side[:, 0]) ^ (np.nan_to_num(either_side[:, 1]) > 0.3)
    y_either = (y_either ^ (either_side[:, 2] > 0)).astype(int)
    Xd, yd = load_diabetes(return_X_y=True)
    C, R = dtjit.DecisionTreeClassifier, dtjit.DecisionTreeRegressor
    fitted = {
        "one-node": (C().fit(X, np.zeros(len(X), dtype=int)), X),
        "stump": (C(max_depth=1).fit(X, y), X),
        "depth-7": (C(max_depth=7, random_state=0).fit(X, y), X),
        "deep-noise": (C(random_state=0).fit(X, noise), X),
        "nan-learned": (C(random_state=0).fit(with_nan, y), with_nan),
        "nan-either-side": (C(max_depth=8, random_state=0).fit(either_side, y_either), either_side),
        "diabetes": (R(random_state=0).fit(Xd, yd), Xd.astype(np.float32)),
    }
    out = {}
    for name, (est, X_fit) in fitted.items():
        rows = X_fit[rng.integers(0, len(X_fit), size=5000)].copy()
        rows[rng.random(rows.shape) < 0.05] = np.nan
        out[name] = (est, rows)
    return out


ESTIMATORS = _estimators()
TREE_NAMES = list(ESTIMATORS)


def _tree(name):
    return ESTIMATORS[name][0].tree_


def _arrays(tree):
    return {k: getattr(tree, k) for k in ("feature", "threshold", "left", "right", "missing_left")}


def _slot_of(packed, n_nodes):
    """Slot of each tree node; asserts every node has exactly one slot."""
    slots = np.arange(len(packed.nodes))
    # Padding slots also map to node 0; the root's slot is 0.
    placed = (packed.tree_node != 0) | (slots == 0)
    assert placed.sum() == n_nodes
    slot_of = np.full(n_nodes, -1)
    slot_of[packed.tree_node[placed]] = slots[placed]
    assert (slot_of >= 0).all(), "a node has no slot"
    return slot_of


def _pack(tree, wide=False):
    return _predict.pack_nodes(
        tree.feature, tree.threshold, tree.left, tree.missing_left, tree.n_features,
        tree.n_node_samples, wide=wide,
    )  # fmt: skip


@pytest.mark.parametrize("slots_per_line", [8, 4])
@pytest.mark.parametrize("name", TREE_NAMES)
def test_line_layout_matches_reference(name, slots_per_line):
    tree = _tree(name)
    rows = tree.n_node_samples.astype(float)
    slot_of = np.full(tree.node_count, -1, dtype=np.int64)
    n_slots = _predict.lay_out_lines(
        tree.left.astype(np.int64), rows, np.int64(slots_per_line), slot_of
    )
    expected, expected_slots = reference_line_layout(tree.left, rows, slots_per_line)
    np.testing.assert_array_equal(slot_of, expected)
    assert n_slots == expected_slots


@pytest.mark.parametrize("wide", [False, True], ids=["compact", "wide"])
@pytest.mark.parametrize("name", TREE_NAMES)
def test_packed_layout_invariants(name, wide):
    tree = _tree(name)
    packed = _pack(tree, wide)
    nodes, tree_node = packed.nodes, packed.tree_node
    per_line = _predict.LINE_BYTES // nodes.dtype.itemsize
    assert nodes.dtype == (_predict.WIDE_NODE_DTYPE if wide else _predict.COMPACT_NODE_DTYPE)
    assert nodes.ctypes.data % _predict.LINE_BYTES == 0
    assert len(nodes) % per_line == 0
    assert len(nodes) <= tree.node_count + 1 + per_line  # full lines: no room wasted
    slot_of = _slot_of(packed, tree.node_count)
    np.testing.assert_array_equal(tree_node[slot_of], np.arange(tree.node_count))
    child = nodes["packed"].astype(np.int64) >> packed.shift
    split = np.flatnonzero(tree.left != -1)
    leaf = np.flatnonzero(tree.left == -1)
    left_slot, right_slot = slot_of[tree.left[split]], slot_of[tree.right[split]]
    np.testing.assert_array_equal(right_slot, left_slot + 1)  # siblings adjacent ...
    np.testing.assert_array_equal(left_slot // per_line, right_slot // per_line)  # one line
    np.testing.assert_array_equal(child[slot_of[split]], left_slot)
    np.testing.assert_array_equal(child[slot_of[leaf]], slot_of[leaf])  # self-loops
    np.testing.assert_array_equal(
        nodes["packed"][slot_of[split]] & packed.feature_mask, tree.feature[split]
    )
    nan_right = (nodes["packed"][slot_of[split]] >> (packed.shift - 1)) & 1
    np.testing.assert_array_equal(nan_right, 1 - tree.missing_left[split])
    assert np.isposinf(nodes["threshold"][slot_of[leaf]]).all()
    padding = np.setdiff1d(np.arange(len(nodes)), slot_of)
    np.testing.assert_array_equal(child[padding], padding)  # unreachable self-loops


def test_layout_keeps_paths_in_fewer_cache_lines():
    """Rows of the deep tree cross fewer 64-byte lines than in breadth-first order."""
    est, rows = ESTIMATORS["deep-noise"]
    tree = est.tree_
    packed = _pack(tree)
    per_line = _predict.LINE_BYTES // packed.nodes.dtype.itemsize
    slot_of = _slot_of(packed, tree.node_count)
    paths = est.decision_path(np.nan_to_num(rows[:500]))
    laid_out = breadth_first = 0
    for i in range(paths.shape[0]):
        path = paths.indices[paths.indptr[i] : paths.indptr[i + 1]]
        laid_out += len(np.unique(slot_of[path] // per_line))
        breadth_first += len(np.unique(path // per_line))
    assert tree.max_depth >= 15
    assert laid_out < 0.7 * breadth_first


@pytest.mark.parametrize("name", TREE_NAMES)
def test_node_depths_match_reference(name):
    tree = _tree(name)
    np.testing.assert_array_equal(
        _predict.node_depths(tree.left, tree.right), reference_depths(tree.left)
    )


def test_node_depths_of_a_preorder_tree_match_reference():
    """scikit-learn numbers its nodes in preorder (children not adjacent): the same depths."""
    from sklearn.tree import DecisionTreeRegressor

    X, y = load_diabetes(return_X_y=True)
    tree = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y).tree_
    left, right = tree.children_left, tree.children_right
    assert np.any((left != TREE_LEAF) & (right != left + 1))
    np.testing.assert_array_equal(_predict.node_depths(left, right), reference_depths(left, right))


@pytest.mark.parametrize("seed", range(6))
def test_phase_lengths_are_optimal(seed):
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 11))
    leaf_depth = rng.integers(1, depth + 1, size=40)
    leaf_depth[0] = depth
    rows = rng.integers(1, 1000, size=40).astype(float)
    lengths = _predict.phase_lengths(leaf_depth, rows)
    assert lengths.sum() == depth and (lengths >= 1).all()
    cost = _predict.PHASE_COST_IN_STEPS
    got = reference_phase_cost(lengths, leaf_depth, rows, cost)
    assert got == pytest.approx(best_phase_cost_by_brute_force(leaf_depth, rows, cost))


@pytest.mark.parametrize("shape", ["chain", "deep-leaves", "mixed"])
def test_phase_lengths_of_very_deep_trees_stay_near_optimal(shape):
    """Phases are capped at MAX_PHASE_LEVELS (the search was O(depth^2)); the walk then costs
    at most PHASE_COST_IN_STEPS / MAX_PHASE_LEVELS more than the unbounded optimum."""
    depth = 700
    leaf_depth = np.arange(1, depth + 1)
    rows = {
        "chain": np.ones(depth),  # one row stops at each level
        "deep-leaves": np.where(leaf_depth > depth - 5, 1000.0, 1e-3),  # one long phase is best
        "mixed": np.random.default_rng(0).integers(1, 100, depth).astype(float),
    }[shape]
    lengths = _predict.phase_lengths(leaf_depth, rows)
    assert lengths.sum() == depth and (lengths >= 1).all()
    assert lengths.max() <= _predict.MAX_PHASE_LEVELS
    cost = _predict.PHASE_COST_IN_STEPS
    got = reference_phase_cost(lengths, leaf_depth, rows, cost)
    best = best_phase_cost(leaf_depth, rows, cost)
    assert best <= got * (1 + 1e-12)
    assert got <= best * (1 + cost / _predict.MAX_PHASE_LEVELS)


def test_phase_lengths_of_trees():
    assert _pack(_tree("one-node")).phases.tolist() == [1]
    assert _pack(_tree("stump")).phases.tolist() == [1]
    assert _pack(_tree("depth-7")).phases.sum() == 7
    deep = _tree("deep-noise")
    phases = _pack(deep).phases
    assert phases.sum() == deep.max_depth and len(phases) > 2  # several phases walked


def _reference_payload_rows(tree, rows, payload):
    return payload[reference_apply(_arrays(tree), rows)]


@pytest.mark.parametrize("wide", [False, True], ids=["compact", "wide"])
@pytest.mark.parametrize("name", TREE_NAMES)
def test_routing_matches_reference_on_every_tree(name, wide):
    tree = _tree(name)
    rows = ESTIMATORS[name][1]
    packed = _pack(tree, wide)
    # Three int64 words per node, none of them the node id: each row gets its leaf's row.
    payload = np.arange(tree.node_count * 3, dtype=np.int64).reshape(-1, 3) * 7 + 1
    for n_rows in (0, 1, 11, 12, 13, 25, len(rows)):
        Xq = np.ascontiguousarray(rows[:n_rows])
        expected = _reference_payload_rows(tree, Xq, payload)
        has_nan = bool(np.isnan(Xq).any())
        for cuts in ([0, n_rows], [0, n_rows // 2, n_rows]):  # one call, two threads' shares
            out = np.full((n_rows, 3), -1, dtype=np.int64)
            found = max(
                _predict.route_rows(Xq[a:b], packed, payload, out[a:b], True)
                for a, b in zip(cuts[:-1], cuts[1:], strict=True)
            )
            assert found == (_predict.ROWS_HAVE_NAN if has_nan else _predict.ROWS_FINITE)
            np.testing.assert_array_equal(out, expected, err_msg=f"{cuts}, {n_rows}")


def test_nan_either_side_tree_has_the_splits_it_is_for():
    tree = _tree("nan-either-side")
    inner = tree.left != TREE_LEAF
    values_or_nan = inner & np.isinf(tree.threshold)
    assert values_or_nan.any() and not tree.missing_left[values_or_nan].any()
    feature_1 = inner & (tree.feature == 1)
    assert set(tree.missing_left[feature_1]) == {0, 1}


@pytest.mark.parametrize("name", TREE_NAMES)
def test_plain_walk_matches_reference_on_every_tree(name):
    """The small-input walk (``route_rows_plain``) routes every row as the reference does."""
    tree = _tree(name)
    rows = ESTIMATORS[name][1]
    plain = _predict.plain_nodes(tree.feature, tree.threshold, tree.left, tree.right,
                                 tree.missing_left)  # fmt: skip
    payload = np.arange(tree.node_count * 3, dtype=np.int64).reshape(-1, 3) * 7 + 1
    for n_rows in (0, 1, 13, len(rows)):
        Xq = np.ascontiguousarray(rows[:n_rows])
        out = np.full((n_rows, 3), -1, dtype=np.int64)
        found = _predict.route_rows_plain(Xq, *plain, payload, out, True)
        has_nan = bool(np.isnan(Xq).any())
        assert found == (_predict.ROWS_HAVE_NAN if has_nan else _predict.ROWS_FINITE)
        np.testing.assert_array_equal(out, _reference_payload_rows(tree, Xq, payload))
        if has_nan:  # NaN refused: reported, nothing routed
            assert _predict.route_rows_plain(Xq, *plain, payload, out, False) == found


@pytest.mark.parametrize("phases", [[1], [2, 1], [3, 5], [40]])
def test_any_phases_reaching_the_leaves_route_the_same(phases):
    """Phases are a plan, not a condition: short ones repeat the last length until done.

    A single phase must reach below the deepest leaf (the kernels then write the result
    directly), so a one-phase plan is only tried on the stump.
    """
    name = "stump" if len(phases) == 1 else "deep-noise"
    tree = _tree(name)
    rows = ESTIMATORS[name][1]
    packed = _pack(tree)._replace(phases=np.array(phases, dtype=np.int64))
    ids = tree.node_ids().reshape(-1, 1)
    out = np.empty((len(rows), 1), dtype=np.int64)
    _predict.route_rows(rows, packed, ids, out, True)
    np.testing.assert_array_equal(out[:, 0], reference_apply(_arrays(tree), rows))


@pytest.mark.parametrize("name", TREE_NAMES)
def test_decision_path_kernel_reports_tree_ids(name):
    tree = _tree(name)
    rows = ESTIMATORS[name][1][:300]
    packed = _pack(tree)
    depth_bound = tree.max_depth + 1
    indptr = np.empty(len(rows) + 1, dtype=np.int64)
    indices = np.empty(len(rows) * depth_bound, dtype=np.int64)
    _predict.decision_path_rows(rows, *packed, depth_bound, indptr, indices)
    leaves = reference_apply(_arrays(tree), rows)
    parent = np.full(tree.node_count, -1)
    split = tree.left != -1
    parent[tree.left[split]] = np.flatnonzero(split)
    parent[tree.right[split]] = np.flatnonzero(split)
    for i, leaf in enumerate(leaves):
        path = [leaf]
        while path[-1] != 0:
            path.append(parent[path[-1]])
        np.testing.assert_array_equal(indices[indptr[i] : indptr[i + 1]], path[::-1])


@pytest.mark.parametrize("name", TREE_NAMES)
def test_estimator_outputs_follow_the_reference_leaves(name):
    est, rows = ESTIMATORS[name]
    rows = np.nan_to_num(rows) if name != "nan-learned" else rows
    leaves = reference_apply(_arrays(est.tree_), rows)
    for n_jobs in (None, 2):
        est.set_params(n_jobs=n_jobs)
        np.testing.assert_array_equal(est.apply(rows), leaves)
        value = est.tree_.value[leaves, 0, :]
        if isinstance(est, dtjit.DecisionTreeClassifier):
            np.testing.assert_array_equal(est.predict_proba(rows), value)
            np.testing.assert_array_equal(est.predict(rows), est.classes_[value.argmax(axis=1)])
        else:
            np.testing.assert_array_equal(est.predict(rows), value[:, 0])


def test_unreachable_nodes_are_refused():
    tree = _tree("stump")
    left = np.array([1, -1, -1, -1, -1])  # nodes 3 and 4 hang from nothing
    with pytest.raises(ValueError, match="cannot be reached"):
        _predict.pack_nodes(
            np.zeros(5, dtype=np.int64), np.zeros(5), left, np.zeros(5, dtype=np.uint8),
            tree.n_features,
        )  # fmt: skip
