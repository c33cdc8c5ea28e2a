"""A fitted :class:`Tree` cut back: weakest-link sequence, cost-complexity path, collapsed nodes.

The estimator layer (``ccp_alpha``) and the public :mod:`dtjit.pruning` module both build on
these functions; they work on node arrays only, never on training rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _pruning
from ._tree import Tree
from .engine.jit import TREE_LEAF, TREE_UNDEFINED


@dataclass(frozen=True)
class WeakestLinks:
    """The order in which minimal cost-complexity pruning collapses a tree's internal nodes.

    Attributes
    ----------
    nodes : ndarray of int64, shape (n_steps,)
        Node collapsed into a leaf at each step (ids of the unpruned tree).
    alphas : ndarray of float64, shape (n_steps,)
        Effective alpha of that node when it was collapsed.
    impurities : ndarray of float64, shape (n_steps,)
        Total weighted leaf impurity ``R(T)`` after the step.
    n_leaves : ndarray of int64, shape (n_steps,)
        Leaves of the tree after the step.
    unpruned_impurity : float
        ``R(T)`` of the unpruned tree.
    """

    nodes: np.ndarray
    alphas: np.ndarray
    impurities: np.ndarray
    n_leaves: np.ndarray
    unpruned_impurity: float


def weakest_links(tree: Tree) -> WeakestLinks:
    """Return the weakest-link pruning sequence of ``tree`` (computed once per tree, then kept).

    Parameters
    ----------
    tree : Tree
        A fitted tree whose root has a positive ``weighted_n_node_samples``.

    Returns
    -------
    WeakestLinks
    """
    return tree._derive("weakest_links", lambda: _compute_weakest_links(tree))


def _compute_weakest_links(tree: Tree) -> WeakestLinks:
    weight = tree.weighted_n_node_samples
    if not weight[0] > 0.0:
        raise ValueError(
            "Cannot prune a tree whose root has no sample weight "
            f"(weighted_n_node_samples[0] = {weight[0]})."
        )
    # scikit-learn's R(t): weighted impurity times the node's share of the total weight, in
    # its order of operations (rounding decides between links of equal alpha) unless
    # weight * impurity overflows (targets near the fit's 1e154 limit): then the share first.
    with np.errstate(over="ignore", invalid="ignore"):
        r_node = weight * tree.impurity / weight[0]
    if not np.isfinite(r_node).all():
        r_node = weight / weight[0] * tree.impurity
    left = np.ascontiguousarray(tree.left)
    right = np.ascontiguousarray(tree.right)
    n_split = (tree.node_count - 1) // 2
    nodes = np.empty(n_split, dtype=np.int64)
    alphas = np.empty(n_split, dtype=np.float64)
    impurities = np.empty(n_split, dtype=np.float64)
    n_leaves = np.empty(n_split, dtype=np.int64)
    order = _pruning.preorder(left, right)
    unpruned, n_steps = _pruning.weakest_link_sequence(
        left, right, r_node, order, nodes, alphas, impurities, n_leaves
    )
    # A split that decreases the impurity by nothing has an effective alpha that rounds to
    # a few ulps below 0: kept at 0, so that every alpha of the path is a valid ccp_alpha.
    np.maximum(alphas, 0.0, out=alphas)
    kept = []
    for a in (nodes, alphas, impurities, n_leaves):
        a = a[:n_steps].copy()
        a.setflags(write=False)  # shared by every later call on this tree
        kept.append(a)
    return WeakestLinks(*kept, float(unpruned))


def cost_complexity_path(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """Return scikit-learn's ``(ccp_alphas, impurities)`` pruning path of a fitted tree.

    The first entry is ``(0.0, R(T))`` of the unpruned tree; each later one is a weakest
    link's effective alpha and the total leaf impurity once it is collapsed; the last is the
    root alone.
    """
    links = weakest_links(tree)
    alphas = np.concatenate([[0.0], links.alphas])
    impurities = np.concatenate([[links.unpruned_impurity], links.impurities])
    return alphas, impurities


def n_links_pruned(links: WeakestLinks, ccp_alpha: float) -> int:
    """Return the number of weakest-link steps that pruning with ``ccp_alpha`` takes.

    Like scikit-learn, pruning stops at the first weakest link whose alpha exceeds
    ``ccp_alpha``, and ``ccp_alpha == 0`` prunes nothing (not even links of alpha 0).
    """
    if ccp_alpha == 0.0:
        return 0
    above = np.flatnonzero(links.alphas > ccp_alpha)
    return int(above[0]) if above.size else int(links.alphas.shape[0])


def prune_to_alpha(tree: Tree, ccp_alpha: float) -> Tree:
    """Return the minimal cost-complexity subtree of ``tree`` for ``ccp_alpha``.

    Parameters
    ----------
    tree : Tree
        A fitted tree.
    ccp_alpha : float
        Complexity parameter, ``>= 0``; 0 returns ``tree`` itself.

    Returns
    -------
    Tree
        ``tree`` itself when nothing is pruned, else a new tree in breadth-first order.
    """
    if ccp_alpha == 0.0:
        return tree  # scikit-learn's rule; and fits with the default pay nothing here
    links = weakest_links(tree)
    steps = n_links_pruned(links, ccp_alpha)
    if steps == 0:
        return tree
    cut = np.zeros(tree.node_count, dtype=bool)
    cut[links.nodes[:steps]] = True
    return collapse(tree, cut)


def collapse(tree: Tree, cut: np.ndarray) -> Tree:
    """Return ``tree`` with every node marked in ``cut`` turned into a leaf.

    A collapsed node keeps its value, impurity and sample counts (those of all the training
    rows that reached it), so it predicts what it predicted as an internal node's fallback.
    Nodes below a collapsed one disappear.

    Parameters
    ----------
    tree : Tree
        A fitted tree.
    cut : ndarray of bool, shape (node_count,)
        Nodes to collapse; marks on leaves and on nodes below another cut are ignored.

    Returns
    -------
    Tree
        ``tree`` itself when nothing changes, else a new tree.

    Notes
    -----
    Keeping the surviving nodes in their old relative order keeps the ids breadth-first:
    the survivors of one level are children of surviving split nodes, listed in the order
    of those parents, so the ``k``-th surviving split node's children become ``2k + 1`` and
    ``2k + 2``. One vectorised pass per level; no renumbering by traversal.
    """
    cut = np.asarray(cut, dtype=bool) & (tree.left != TREE_LEAF)
    if not cut.any():
        return tree
    keep = _step_removed(tree, np.where(cut, 0, 1), never=1) > 0
    new_id = np.cumsum(keep) - 1
    arrays = {name: np.array(a[keep]) for name, a in tree.to_arrays().items()}
    new_leaf = cut[keep]
    still_split = (arrays["left"] != TREE_LEAF) & ~new_leaf
    for side in ("left", "right"):
        child = arrays[side]
        child[still_split] = new_id[child[still_split]]
        child[new_leaf] = TREE_LEAF
    arrays["feature"][new_leaf] = TREE_UNDEFINED
    arrays["threshold"][new_leaf] = TREE_UNDEFINED
    arrays["missing_left"][new_leaf] = 0  # what the builder stores at leaves
    categorical_set = np.array(tree.categorical_set[keep])
    categorical_set[new_leaf] = -1  # its bitset row stays in the table, unreferenced
    missing_learned = None
    if tree.missing_learned is not None:
        missing_learned = np.array(tree.missing_learned[keep])
        missing_learned[new_leaf] = 0
    return Tree(
        n_features=tree.n_features,
        n_classes=tree.n_classes,
        categorical_set=categorical_set,
        category_bits=tree.category_bits,
        missing_learned=missing_learned,
        **arrays,
    )


def leaf_lifetimes(tree: Tree, links: WeakestLinks) -> tuple[np.ndarray, np.ndarray]:
    """Return, per node, the steps of the weakest-link sequence during which it is a leaf.

    Node ``t`` is a leaf of the tree pruned by ``k`` steps iff
    ``leaf_from[t] <= k < gone_at[t]``: original leaves are leaves from step 0, a collapsed
    node from the step after its collapse, and a node leaves the tree when an ancestor is
    collapsed. The interval is empty for nodes removed without ever being a leaf.

    Returns
    -------
    leaf_from, gone_at : ndarray of int64, shape (node_count,)
        Both ``n_steps + 1`` ("never") where the event does not happen.
    """
    n_steps = links.nodes.shape[0]
    never = n_steps + 1
    collapsed_at = np.full(tree.node_count, never, dtype=np.int64)
    collapsed_at[links.nodes] = np.arange(1, n_steps + 1)
    leaf_from = np.where(tree.left == TREE_LEAF, 0, collapsed_at)
    return leaf_from, _step_removed(tree, collapsed_at, never)


def _step_removed(tree: Tree, collapsed_at: np.ndarray, never: int) -> np.ndarray:
    """First step at which a proper ancestor of each node is collapsed (its removal).

    ``collapsed_at`` gives each node's own collapse step, ``never`` where it is not
    collapsed; the root, which has no ancestor, gets ``never``.
    """
    left, right = tree.left, tree.right
    split = np.flatnonzero(left != TREE_LEAF)
    parent = np.empty(tree.node_count, dtype=np.int64)
    parent[left[split]] = split
    parent[right[split]] = split
    removed = np.empty(tree.node_count, dtype=np.int64)
    removed[0] = never
    # Parents sit one level up, and breadth-first ids store each level contiguously: one
    # vectorised pass per level.
    level_start = np.searchsorted(tree.node_depth, np.arange(tree.max_depth + 2))
    for lo, hi in zip(level_start[1:-1], level_start[2:], strict=True):
        p = parent[lo:hi]
        removed[lo:hi] = np.minimum(removed[p], collapsed_at[p])
    return removed
