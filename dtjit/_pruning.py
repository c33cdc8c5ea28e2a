"""Weakest-link pruning kernel: the order in which cost-complexity pruning removes subtrees."""

from __future__ import annotations

import numpy as np

from .engine.jit import TREE_LEAF, inline_kernel, kernel

NO_PARENT = -1


@inline_kernel
def _before(a, b, alpha, rank):
    """Tell whether node ``a`` is a weaker link than ``b``: smaller alpha, then earlier rank."""
    return alpha[a] < alpha[b] or (alpha[a] == alpha[b] and rank[a] < rank[b])


@inline_kernel
def _sift_up(heap, pos, p, alpha, rank):
    node = heap[p]
    while p > 0:
        up = (p - 1) // 2
        if not _before(node, heap[up], alpha, rank):
            break
        heap[p] = heap[up]
        pos[heap[p]] = p
        p = up
    heap[p] = node
    pos[node] = p


@inline_kernel
def _sift_down(heap, pos, p, size, alpha, rank):
    node = heap[p]
    while True:
        child = 2 * p + 1
        if child >= size:
            break
        if child + 1 < size and _before(heap[child + 1], heap[child], alpha, rank):
            child += 1
        if not _before(heap[child], node, alpha, rank):
            break
        heap[p] = heap[child]
        pos[heap[p]] = p
        p = child
    heap[p] = node
    pos[node] = p


@inline_kernel
def _remove(heap, pos, size, node, alpha, rank):
    """Remove ``node`` from the heap of ``size`` entries; return the new size."""
    p = pos[node]
    pos[node] = -1
    size -= 1
    if p != size:
        # The last entry fills the hole and moves up or down to its place.
        moved = heap[size]
        heap[p] = moved
        pos[moved] = p
        _sift_up(heap, pos, p, alpha, rank)
        _sift_down(heap, pos, pos[moved], size, alpha, rank)
    return size


@kernel
def preorder(left, right):
    """Node ids in depth-first preorder, left subtree first (scikit-learn's node numbering).

    Parameters
    ----------
    left, right : ndarray of int32, shape (n_nodes,)
        Child ids, ``-1`` at leaves; node 0 is the root.

    Returns
    -------
    ndarray of int64, shape (n_nodes,)
        ``order[k]`` is the ``k``-th node visited.
    """
    n_nodes = left.shape[0]
    order = np.empty(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    stack[0] = 0
    top = 1
    k = 0
    while top > 0:
        top -= 1
        node = stack[top]
        order[k] = node
        k += 1
        if left[node] != TREE_LEAF:
            stack[top] = right[node]  # pushed first, popped after the whole left subtree
            stack[top + 1] = left[node]
            top += 2
    return order


@kernel
def weakest_link_sequence(
    left, right, r_node, order, pruned_node, pruned_alpha, impurity_after, leaves_after
):
    """Prune a tree one weakest link at a time until only the root is left.

    Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3) with scikit-learn's
    arithmetic: ``R(t)`` is a node's weighted impurity times its weighted share of the
    samples, ``R(T_t)`` the sum of ``R`` over the current leaves under ``t`` and
    ``|T_t|`` their number. The weakest link is the internal node of smallest effective
    alpha ``(R(t) - R(T_t)) / (|T_t| - 1)``; it becomes a leaf, and its ancestors' ``R(T_t)``
    and ``|T_t|`` are updated. Ties go to the node that comes first in ``order``.

    Parameters
    ----------
    left, right : ndarray of int32, shape (n_nodes,)
        Child ids, ``-1`` at leaves; node 0 is the root.
    r_node : ndarray of float64, shape (n_nodes,)
        ``R(t)`` of every node.
    order : ndarray of int64, shape (n_nodes,)
        Depth-first preorder of the nodes (see :func:`preorder`): it breaks ties between
        equal alphas, and the leaves' ``R`` are summed in this order, as scikit-learn sums
        them over its depth-first node ids.
    pruned_node : ndarray of int64, shape (n_split,)
        Output: the node collapsed at each step (``n_split`` = number of split nodes).
    pruned_alpha : ndarray of float64, shape (n_split,)
        Output: its effective alpha when it was collapsed.
    impurity_after : ndarray of float64, shape (n_split,)
        Output: ``R`` of the whole tree's leaves after the step.
    leaves_after : ndarray of int64, shape (n_split,)
        Output: number of leaves of the whole tree after the step.

    Returns
    -------
    r_unpruned : float
        ``R`` of the unpruned tree's leaves.
    n_steps : int
        Steps taken: the outputs hold this many entries. Collapsing a node removes the
        internal nodes below it too, so there are at most as many steps as split nodes.

    Notes
    -----
    scikit-learn scans every internal node for the minimum at each step (quadratic in the
    number of nodes). Here the internal nodes sit in a binary heap keyed on (alpha, rank)
    with a position index, so a step costs O(log n) per ancestor whose alpha changes:
    O(n log n) for a balanced tree. The alphas are computed from the same quantities with
    the same floating-point operations in the same order as scikit-learn's loop, and the
    heap picks the same minimum, so the sequence is bit-for-bit the one scikit-learn
    produces on the same arrays.
    """
    n_nodes = left.shape[0]
    parent = np.full(n_nodes, NO_PARENT, dtype=np.int64)
    rank = np.empty(n_nodes, dtype=np.int64)
    for k in range(n_nodes):
        rank[order[k]] = k
    for node in range(n_nodes):
        if left[node] != TREE_LEAF:
            parent[left[node]] = node
            parent[right[node]] = node

    # R(T_t) and |T_t|, bubbled up from the leaves in preorder (scikit-learn's summation
    # order, so the sums round the same way).
    r_branch = np.zeros(n_nodes, dtype=np.float64)
    n_leaves = np.zeros(n_nodes, dtype=np.int64)
    for k in range(n_nodes):
        leaf = order[k]
        if left[leaf] != TREE_LEAF:
            continue
        r_branch[leaf] = r_node[leaf]
        node = parent[leaf]
        while node != NO_PARENT:
            r_branch[node] += r_node[leaf]
            n_leaves[node] += 1
            node = parent[node]

    alpha = np.empty(n_nodes, dtype=np.float64)
    heap = np.empty(n_nodes, dtype=np.int64)
    pos = np.full(n_nodes, -1, dtype=np.int64)
    size = 0
    for node in range(n_nodes):
        if left[node] != TREE_LEAF:
            alpha[node] = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1)
            heap[size] = node
            pos[node] = size
            size += 1
            _sift_up(heap, pos, size - 1, alpha, rank)

    r_unpruned = r_branch[0]
    in_tree = np.ones(n_nodes, dtype=np.uint8)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    step = 0
    while size > 0:
        weakest = heap[0]
        pruned_node[step] = weakest
        pruned_alpha[step] = alpha[weakest]
        # Every internal node below the weakest link leaves the tree (and the heap). A
        # subtree cut earlier is entered only at its root, which is already a leaf.
        stack[0] = weakest
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if in_tree[node] == 0:
                continue
            in_tree[node] = 0
            if pos[node] >= 0:
                size = _remove(heap, pos, size, node, alpha, rank)
            if left[node] != TREE_LEAF:
                stack[top] = left[node]
                stack[top + 1] = right[node]
                top += 2
        in_tree[weakest] = 1

        n_pruned_leaves = n_leaves[weakest] - 1
        n_leaves[weakest] = 0
        r_diff = r_node[weakest] - r_branch[weakest]
        r_branch[weakest] = r_node[weakest]
        node = parent[weakest]
        while node != NO_PARENT:
            n_leaves[node] -= n_pruned_leaves
            r_branch[node] += r_diff
            alpha[node] = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1)
            p = pos[node]
            _sift_up(heap, pos, p, alpha, rank)
            _sift_down(heap, pos, pos[node], size, alpha, rank)
            node = parent[node]
        impurity_after[step] = r_branch[0]
        leaves_after[step] = 1 if weakest == 0 else n_leaves[0]
        step += 1
    return r_unpruned, step
