"""Post-pruning a fitted tree: cost-complexity paths, choosing alpha, reduced-error pruning.

Three ways to decide how much of a grown tree to keep:

- **a fixed alpha**: the estimators' ``ccp_alpha`` parameter (scikit-learn's minimal
  cost-complexity pruning, so ``GridSearchCV`` over ``ccp_alpha`` works as usual), or
  :func:`prune` to cut an already fitted tree back to any alpha without refitting;
- **alpha chosen on held-out data**: :func:`select_ccp_alpha` grows one tree, walks its
  pruning path and scores every subtree on a validation set (explicit ``X_val, y_val`` or a
  stratified ``validation_fraction``) or by k-fold cross-validation, with the minimum-error
  or rpart's one-standard-error rule;
- **reduced-error pruning** (:func:`reduced_error_prune`): bottom-up, a subtree becomes a
  leaf whenever that does not increase the error on a validation set (Quinlan 1987; J48's
  and YDF's validation pruning).

All of them work on the tree's node arrays and the rows' leaf paths; none regrows a tree
except to fit the folds of cross-validation.

Examples
--------
>>> from sklearn.datasets import load_breast_cancer
>>> from dtjit import DecisionTreeClassifier, select_ccp_alpha
>>> X, y = load_breast_cancer(return_X_y=True)
>>> sel = select_ccp_alpha(DecisionTreeClassifier(), X, y, cv=5, rule="1se", random_state=0)
>>> sel.estimator.get_n_leaves() < DecisionTreeClassifier().fit(X, y).get_n_leaves()
True
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils import Bunch
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from . import _prune
from ._estimators import BaseDecisionTree
from ._tree import Tree
from .engine.jit import TREE_LEAF
from .engine.prepare import power_of_two_scale
from .predict import routing

RULES = ("min", "1se")


@dataclass(frozen=True)
class PruningSelection:
    """The outcome of :func:`select_ccp_alpha`: every candidate subtree's error and the choice.

    Attributes
    ----------
    method : {"validation", "cv"}
        How the errors were measured: on a validation set, or by k-fold cross-validation.
    rule : {"min", "1se"}
        How the alpha was chosen from the errors.
    ccp_alphas : ndarray of float64, shape (n_candidates,)
        The distinct effective alphas of the grown tree's pruning path, ascending; candidate
        ``k`` is the subtree that ``ccp_alpha = ccp_alphas[k]`` gives (0: the unpruned tree,
        last: the root alone).
    n_leaves : ndarray of int64, shape (n_candidates,)
        Leaves of each candidate subtree.
    errors : ndarray of float64, shape (n_candidates,)
        Weighted misclassification rate (classifiers) or mean squared error (regressors) of
        each candidate on the validation rows, or over the held-out folds.
    standard_errors : ndarray of float64, shape (n_candidates,)
        Standard error of each error: the weighted standard deviation of the per-row losses
        over the square root of the (effective) number of rows, as rpart's ``xstd``.
    min_index : int
        Candidate with the lowest error (the largest alpha among equal lowest errors).
    best_index : int
        The chosen candidate: ``min_index`` for ``rule="min"``; for ``rule="1se"`` the
        largest alpha whose error is at most ``errors[min_index] +
        standard_errors[min_index]``.
    ccp_alpha : float
        ``ccp_alphas[best_index]``.
    estimator : DecisionTreeClassifier or DecisionTreeRegressor
        The grown tree pruned to ``ccp_alpha``, fitted (its ``ccp_alpha`` parameter is set
        to it). With a validation set it was grown on the training rows only; with
        cross-validation on all rows.
    path : sklearn.utils.Bunch
        The grown tree's full pruning path (``ccp_alphas``, ``impurities``, ``n_leaves``), as
        :func:`pruning_path` returns it.
    """

    method: str
    rule: str
    ccp_alphas: np.ndarray
    n_leaves: np.ndarray
    errors: np.ndarray
    standard_errors: np.ndarray
    min_index: int
    best_index: int
    ccp_alpha: float
    estimator: Any
    path: Bunch


# ------------------------------------------------------------------------------ fixed alpha
def pruning_path(model: Any) -> Bunch:
    """Return the cost-complexity pruning path of an already fitted tree, without refitting.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree. For an estimator fitted with ``ccp_alpha > 0`` this is the path of its
        pruned tree.

    Returns
    -------
    sklearn.utils.Bunch
        ``ccp_alphas`` and ``impurities`` exactly as ``cost_complexity_pruning_path``
        returns them (the same values as scikit-learn on the same tree), and ``n_leaves``,
        the leaves of the subtree after each step.
    """
    tree = _tree_of(model)
    alphas, impurities = _prune.cost_complexity_path(tree)
    links = _prune.weakest_links(tree)
    n_leaves = np.concatenate([[tree.n_leaves], links.n_leaves])
    return Bunch(ccp_alphas=alphas, impurities=impurities, n_leaves=n_leaves)


def prune(model: Any, ccp_alpha: float) -> Any:
    """Cut a fitted tree back to the minimal cost-complexity subtree for ``ccp_alpha``.

    The result equals fitting with ``ccp_alpha`` (the same tree, node for node), without
    growing anything: only the node arrays are read. ``model`` is not changed.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor or Tree
        The tree to prune.
    ccp_alpha : float
        Complexity parameter, ``>= 0`` and at least the estimator's own ``ccp_alpha`` (a
        pruned tree cannot grow back); 0 prunes nothing, as in scikit-learn.

    Returns
    -------
    same type as ``model``
        For an estimator, a new fitted estimator with the pruned ``tree_`` and its
        ``ccp_alpha`` parameter set to ``ccp_alpha`` (so refitting it on the same data
        gives the same tree); for a :class:`Tree`, a new tree (or ``model`` itself when
        nothing is pruned). Node ids stay breadth-first.

    Raises
    ------
    ValueError
        If ``ccp_alpha`` is negative or NaN, or smaller than the ``ccp_alpha`` the estimator
        was fitted with.
    """
    ccp_alpha = _check_alpha(ccp_alpha)
    if isinstance(model, Tree):
        return _prune.prune_to_alpha(model, ccp_alpha)
    tree = _tree_of(model)
    fitted_alpha = float(model.ccp_alpha)
    if ccp_alpha < fitted_alpha:
        raise ValueError(
            f"ccp_alpha={ccp_alpha!r} is smaller than the ccp_alpha={fitted_alpha!r} the "
            "estimator was fitted with: its tree is already pruned further. Refit with the "
            "smaller ccp_alpha (or ccp_alpha=0 and prune from there)."
        )
    return _with_tree(model, _prune.prune_to_alpha(tree, ccp_alpha), ccp_alpha=ccp_alpha)


# ---------------------------------------------------------------------- reduced-error pruning
def reduced_error_prune(model: Any, X_val: Any, y_val: Any, *, sample_weight: Any = None) -> Any:
    """Reduced-error pruning: collapse every subtree that does not lower the validation error.

    Bottom-up, each split node is compared with the subtree below it (as already pruned):
    if the node as a leaf makes no more weighted errors (classification: misclassified
    rows; regression: squared error) on the validation rows reaching it than the subtree,
    it becomes a leaf. A subtree no validation row reaches is therefore collapsed. The
    validation error of the result is never larger than that of ``model``.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
        The grown tree (fit it on data other than ``X_val``).
    X_val : array-like of shape (n_val, n_features)
        Validation rows.
    y_val : array-like of shape (n_val,)
        Their labels or targets; labels unseen in training count as errors everywhere.
    sample_weight : array-like of shape (n_val,), default=None
        Weights of the validation rows.

    Returns
    -------
    DecisionTreeClassifier or DecisionTreeRegressor
        A new fitted estimator with the pruned ``tree_`` (breadth-first); its parameters are
        those of ``model`` (refitting it grows a new tree). ``model`` is not changed.

    Notes
    -----
    Cost: one pass of the validation rows down the tree, then one vectorised step per tree
    level. Leaf values are not re-estimated from the validation rows (J48 and YDF keep the
    training statistics too).
    """
    tree = _tree_of(model)
    losses, _, _ = _node_losses(model, X_val, y_val, sample_weight)
    if not np.isfinite(losses).all():  # inf <= inf would collapse every node
        raise ValueError(_LOSS_OVERFLOW.format("validation losses"))
    leaf = tree.left == TREE_LEAF
    best = losses.copy()  # error of the (pruned) subtree under each node
    cut = np.zeros(tree.node_count, dtype=bool)
    depth = tree.node_depth
    level_start = np.searchsorted(depth, np.arange(tree.max_depth + 1))
    # Deepest level first: children (one level down) are final before their parent.
    for d in range(tree.max_depth - 1, -1, -1):
        nodes = np.arange(level_start[d], level_start[d + 1])
        nodes = nodes[~leaf[nodes]]
        subtree = best[tree.left[nodes]] + best[tree.right[nodes]]
        collapse = losses[nodes] <= subtree
        cut[nodes] = collapse
        best[nodes] = np.where(collapse, losses[nodes], subtree)
    return _with_tree(model, _prune.collapse(tree, cut))


# ----------------------------------------------------------------------------- choosing alpha
def select_ccp_alpha(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    X_val: Any = None,
    y_val: Any = None,
    sample_weight_val: Any = None,
    validation_fraction: float | None = None,
    cv: Any = None,
    rule: str = "min",
    random_state: Any = None,
) -> PruningSelection:
    """Grow a tree, score every subtree of its pruning path on held-out data, pick one.

    Give exactly one of:

    - ``X_val, y_val``: grow on (X, y), score each subtree on the validation set;
    - ``validation_fraction``: hold out that fraction of the rows (stratified by class for
      classifiers), grow on the rest, score on the held-out rows;
    - ``cv``: k-fold cross-validation as in CART and rpart. The tree is grown on all rows;
      each fold's tree is grown on the other folds and pruned, for candidate ``k``, to the
      geometric mean ``sqrt(alpha_k * alpha_{k+1})`` of the candidate's alpha range; the
      per-row losses on the held-out fold add up to each candidate's error.

    ``rule="min"`` picks the lowest error (the largest alpha among equal errors);
    ``rule="1se"`` the largest alpha whose error is within one standard error of the
    minimum (Breiman et al. 1984; rpart's recommended choice), which gives smaller trees.

    Parameters
    ----------
    estimator : DecisionTreeClassifier or DecisionTreeRegressor
        Unfitted (or fitted: it is cloned, never changed); its ``ccp_alpha`` is ignored.
    X : array-like of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        Labels or targets.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the training rows, used to grow and, for held-out rows, to score.
    X_val, y_val : array-like, default=None
        An explicit validation set.
    sample_weight_val : array-like of shape (n_val,), default=None
        Weights of the validation rows (only with ``X_val``).
    validation_fraction : float in (0, 1), default=None
        Fraction of the rows to hold out.
    cv : int, cross-validation splitter or iterable, default=None
        Number of folds (>= 2; shuffled with ``random_state``, stratified for classifiers),
        or anything :func:`sklearn.model_selection.check_cv` accepts.
    rule : {"min", "1se"}, default="min"
        How to choose among the candidates.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split or the fold shuffling (the estimator's own
        ``random_state`` still seeds its feature draws).

    Returns
    -------
    PruningSelection
        Candidates, errors, standard errors, the chosen alpha and the pruned estimator.

    Raises
    ------
    ValueError
        If not exactly one of the three ways is given, ``X_val`` / ``y_val`` /
        ``sample_weight_val`` are inconsistent, or ``rule`` / ``validation_fraction`` /
        ``cv`` are invalid.
    """
    if not isinstance(estimator, BaseDecisionTree):
        raise TypeError(
            f"select_ccp_alpha expects a dtjit estimator, got {type(estimator).__name__}."
        )
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}.")
    given = [
        name
        for name, value in (
            ("X_val/y_val", X_val if X_val is not None else y_val),
            ("validation_fraction", validation_fraction),
            ("cv", cv),
        )
        if value is not None
    ]
    if len(given) != 1:
        raise ValueError(
            "Give exactly one of X_val/y_val, validation_fraction or cv; "
            f"got {', '.join(given) if given else 'none'}."
        )
    if sample_weight_val is not None and X_val is None:
        raise ValueError("sample_weight_val needs X_val and y_val.")
    grower = clone(estimator).set_params(ccp_alpha=0.0)

    if cv is not None:
        return _select_by_cv(grower, X, y, sample_weight, cv, rule, random_state)

    if validation_fraction is not None:
        X_val, y_val, sample_weight_val, X, y, sample_weight = _hold_out(
            grower, X, y, sample_weight, validation_fraction, random_state
        )
    elif X_val is None or y_val is None:
        raise ValueError("X_val and y_val must be given together.")
    grown = grower.fit(X, y, sample_weight=sample_weight)
    tree = grown.tree_
    links = _prune.weakest_links(tree)
    alphas, steps = _candidates(links)
    losses, squares, total = _node_losses(grown, X_val, y_val, sample_weight_val)
    sums, sum_squares = _loss_by_step(tree, links, losses, squares)
    errors, standard_errors = _error_and_se(sums[steps], sum_squares[steps], total)
    return _selection("validation", rule, grown, links, alphas, steps, errors, standard_errors)


def _require_single_output(model: BaseDecisionTree) -> None:
    if model.n_outputs_ != 1:
        raise ValueError(
            f"Validation errors (reduced_error_prune, select_ccp_alpha) are defined for "
            f"single-output trees; this one has {model.n_outputs_} outputs. Its pruning path "
            f"and dtjit.prune work."
        )


def _select_by_cv(
    grower: BaseDecisionTree, X: Any, y: Any, sample_weight: Any, cv: Any, rule: str, seed: Any
) -> PruningSelection:
    # Imported here, not at module level: sklearn.model_selection adds ~0.07 s to `import dtjit`.
    from sklearn.model_selection import KFold, StratifiedKFold, check_cv

    classifier = is_classifier(grower)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds, got {cv}.")
        folds = StratifiedKFold if classifier else KFold
        cv = folds(n_splits=int(cv), shuffle=True, random_state=seed)
    else:
        cv = check_cv(cv, y, classifier=classifier)
    grown = clone(grower).fit(X, y, sample_weight=sample_weight)
    _require_single_output(grown)  # before the folds, which would fail on y's shape first
    links = _prune.weakest_links(grown.tree_)
    alphas, steps = _candidates(links)
    # Subtree k is optimal for alpha in [alpha_k, alpha_k+1): the fold trees are pruned at
    # the geometric mean of that range (CART's and rpart's choice; the last range is open);
    # sqrt(a) * sqrt(b) where a * b overflows (alphas past 1e154, targets ~1e77).
    with np.errstate(over="ignore"):
        product = alphas[:-1] * alphas[1:]
    means = np.where(
        np.isfinite(product), np.sqrt(product), np.sqrt(alphas[:-1]) * np.sqrt(alphas[1:])
    )
    fold_alphas = np.append(means, np.inf)

    X_arr = np.asarray(X) if not hasattr(X, "iloc") else X
    y_arr = np.asarray(y)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    weight_scale = 1.0 if w is None else power_of_two_scale(w)
    sums = np.zeros(len(alphas))
    sum_squares = np.zeros(len(alphas))
    total = np.zeros(2)
    for train, test in cv.split(X_arr, y_arr):
        fold = clone(grower).fit(
            _take(X_arr, train), y_arr[train], sample_weight=None if w is None else w[train]
        )
        fold_links = _prune.weakest_links(fold.tree_)
        fold_steps = np.array([_prune.n_links_pruned(fold_links, a) for a in fold_alphas])
        losses, squares, fold_total = _node_losses(
            fold, _take(X_arr, test), y_arr[test], None if w is None else w[test], weight_scale
        )
        fold_sums, fold_squares = _loss_by_step(fold.tree_, fold_links, losses, squares)
        sums += fold_sums[fold_steps]
        sum_squares += fold_squares[fold_steps]
        total += fold_total
    errors, standard_errors = _error_and_se(sums, sum_squares, total)
    return _selection("cv", rule, grown, links, alphas, steps, errors, standard_errors)


def _selection(
    method: str,
    rule: str,
    grown: BaseDecisionTree,
    links: _prune.WeakestLinks,
    alphas: np.ndarray,
    steps: np.ndarray,
    errors: np.ndarray,
    standard_errors: np.ndarray,
) -> PruningSelection:
    min_index, best_index = _choose_index(errors, standard_errors, rule)
    leaves = np.concatenate([[grown.tree_.n_leaves], links.n_leaves])
    chosen = float(alphas[best_index])
    return PruningSelection(
        method=method,
        rule=rule,
        ccp_alphas=alphas,
        n_leaves=leaves[steps],
        errors=errors,
        standard_errors=standard_errors,
        min_index=min_index,
        best_index=best_index,
        ccp_alpha=chosen,
        estimator=prune(grown, chosen),
        path=pruning_path(grown),
    )


def _choose_index(errors: np.ndarray, standard_errors: np.ndarray, rule: str) -> tuple[int, int]:
    """Return (index of the minimum error, chosen index) for candidates of ascending alpha.

    Among equal minimum errors the last (largest alpha, smallest tree) wins; the 1-SE rule
    then takes the last candidate within one standard error of that minimum.
    """
    errors = np.asarray(errors, dtype=np.float64)
    if not np.isfinite(errors).all():
        raise ValueError(_LOSS_OVERFLOW.format("validation losses"))
    min_index = int(np.flatnonzero(errors == errors.min())[-1])
    if rule == "min":
        return min_index, min_index
    limit = errors[min_index] + standard_errors[min_index]
    if not np.isfinite(limit):
        raise ValueError(_LOSS_OVERFLOW.format("standard errors (sums of squared losses)"))
    return min_index, int(np.flatnonzero(errors <= limit)[-1])


# The sums of w * (y - prediction)**2 overflow float64 near |y| ~ 1e154 (less over many
# rows or with large weights), the sums of their squares (standard errors) near 1e77; the
# fit itself accepts targets up to ~1e154.
_LOSS_OVERFLOW = (
    "The {} overflow float64: the validation rows' weighted squared errors are too large "
    "to sum; divide y or the validation sample weights by a constant (a power of two "
    "keeps every split)."
)


def _candidates(links: _prune.WeakestLinks) -> tuple[np.ndarray, np.ndarray]:
    """Distinct alphas at which the subtree changes, and the weakest-link steps each takes.

    The links' alphas are never negative (``_prune`` keeps float noise around zero-gain
    splits at 0), and 0 keeps the unpruned tree.
    """
    alphas = np.unique(np.concatenate([[0.0], links.alphas]))
    steps = np.array([_prune.n_links_pruned(links, a) for a in alphas], dtype=np.int64)
    # Alphas whose subtree equals the previous one's (possible only when float noise makes
    # the sequence non-monotone) are not separate candidates.
    keep = np.concatenate([[True], steps[1:] != steps[:-1]])
    return alphas[keep], steps[keep]


def _loss_by_step(
    tree: Tree, links: _prune.WeakestLinks, losses: np.ndarray, squares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Total loss (and squared loss) of the tree after each number of weakest-link steps.

    A node contributes its rows' losses to every step at which it is a leaf; those steps
    form one interval, so a difference array and a cumulative sum give all steps at once.
    """
    n_steps = links.nodes.shape[0]
    leaf_from, gone_at = _prune.leaf_lifetimes(tree, links)
    live = leaf_from < gone_at
    out = []
    for per_node in (losses, squares):
        delta = np.zeros(n_steps + 2)
        with np.errstate(over="ignore", invalid="ignore"):  # see _node_losses
            np.add.at(delta, leaf_from[live], per_node[live])
            np.add.at(delta, gone_at[live], -per_node[live])
            out.append(np.cumsum(delta)[: n_steps + 1])
    return out[0], out[1]


def _error_and_se(
    sums: np.ndarray, sum_squares: np.ndarray, total: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean loss and its standard error from sums of w*l, w*l^2, w and w^2."""
    weight, weight_squared = total
    errors = sums / weight
    with np.errstate(over="ignore", invalid="ignore"):  # see _node_losses
        variance = np.maximum(sum_squares / weight - errors * errors, 0.0)
    n_effective = weight * weight / weight_squared
    return errors, np.sqrt(variance / n_effective)


def _node_losses(
    model: BaseDecisionTree, X: Any, y: Any, sample_weight: Any, weight_scale: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted loss of every node as a leaf on the rows reaching it.

    The weights are multiplied by ``weight_scale`` (by default the power of two that the
    fit would use, 1 unless the largest weight is beyond 2**400 or below 2**-400): their
    squares then fit float64, and the errors and standard errors are ratios that no common
    factor changes. The folds of a cross-validation pass one scale for all of them.

    Returns
    -------
    losses, squares : ndarray of float64, shape (node_count,)
        Sums of ``w * loss`` and ``w * loss**2`` over the rows through each node (loss: 0/1
        misclassification of the node's majority class, or squared error of its mean).
    total : ndarray of float64, shape (2,)
        Sum of the weights and of the squared weights.
    """
    if X is None or y is None:
        raise ValueError("X_val and y_val must be given together.")
    _require_single_output(model)
    X = model._validate_X_predict(X)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    n_rows = X.shape[0]
    w = _check_sample_weight(
        sample_weight, np.empty((n_rows, 1)), dtype=np.float64, ensure_non_negative=True
    )
    if weight_scale is None:
        weight_scale = power_of_two_scale(w)
    if weight_scale != 1.0:
        w = w * weight_scale
    tree = model.tree_
    classification = is_classifier(model)
    if classification:
        classes = model.classes_
        code = np.searchsorted(classes, y)
        known = code < len(classes)
        known[known] = classes[code[known]] == y[known]
        target = np.where(known, code, -1)  # unseen labels are wrong at every node
        node_target = tree.majority_class()
    else:
        target = np.asarray(y, dtype=np.float64)
        node_target = tree.node_means()
    losses = np.zeros(tree.node_count)
    squares = np.zeros(tree.node_count)
    mask = model._categorical_column_mask()
    # The rows' paths in chunks of at most _PATH_ENTRIES (node, row) entries: whole, they
    # took about 50 bytes per entry, 10 GB for 20k rows through a 20k-level chain.
    step = max(1, _PATH_ENTRIES // (tree.max_depth + 1))
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        paths = routing.decision_path(tree, X[start:stop], mask)
        rows = start + np.repeat(np.arange(stop - start), np.diff(paths.indptr))
        nodes = paths.indices
        if classification:
            loss = (target[rows] != node_target[nodes]).astype(np.float64)
            square = loss
        else:
            # An overflow here is reported by the callers (_choose_index, reduced_error_prune)
            # with what to do about it.
            with np.errstate(over="ignore", invalid="ignore"):
                loss = (target[rows] - node_target[nodes]) ** 2
                square = loss * loss
        weights = w[rows]
        with np.errstate(over="ignore", invalid="ignore"):
            losses += np.bincount(nodes, weights=weights * loss, minlength=tree.node_count)
            squares += np.bincount(nodes, weights=weights * square, minlength=tree.node_count)
    return losses, squares, np.array([w.sum(), (w * w).sum()])


# Bound on the (node, row) entries of the decision paths held at once by _node_losses.
_PATH_ENTRIES = 1 << 22


def _hold_out(
    grower: BaseDecisionTree,
    X: Any,
    y: Any,
    sample_weight: Any,
    validation_fraction: Any,
    seed: Any,
) -> tuple[Any, ...]:
    """Split (X, y, w) into validation and training parts (stratified for classifiers)."""
    if (
        isinstance(validation_fraction, bool)
        or not isinstance(validation_fraction, numbers.Real)
        or not 0.0 < validation_fraction < 1.0
    ):
        raise ValueError(
            f"validation_fraction must be a float in (0, 1), got {validation_fraction!r}."
        )
    y = np.asarray(y)
    check_consistent_length(X, y)
    from sklearn.model_selection import train_test_split  # lazily, as in _select_by_cv

    index = np.arange(len(y))
    train, val = train_test_split(
        index,
        test_size=float(validation_fraction),
        stratify=y if is_classifier(grower) else None,
        random_state=seed,
    )
    X = np.asarray(X) if not hasattr(X, "iloc") else X
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return (
        _take(X, val),
        y[val],
        None if w is None else w[val],
        _take(X, train),
        y[train],
        None if w is None else w[train],
    )


# ----------------------------------------------------------------------------------- helpers
def _take(X: Any, rows: np.ndarray) -> Any:
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def _check_alpha(ccp_alpha: Any) -> float:
    if isinstance(ccp_alpha, bool) or not isinstance(ccp_alpha, numbers.Real):
        raise TypeError(f"ccp_alpha must be a real number, got {type(ccp_alpha).__name__}.")
    if not ccp_alpha >= 0.0:  # also catches NaN
        raise ValueError(f"ccp_alpha must be >= 0, got {ccp_alpha!r}.")
    return float(ccp_alpha)


def _tree_of(model: Any) -> Tree:
    if isinstance(model, Tree):
        return model
    if not isinstance(model, BaseDecisionTree):
        raise TypeError(
            f"Expected a fitted dtjit estimator or a dtjit.Tree, got {type(model).__name__}."
        )
    check_is_fitted(model, "tree_")
    return model.tree_


def _with_tree(model: BaseDecisionTree, tree: Tree, **params: Any) -> BaseDecisionTree:
    """Return a new fitted estimator: ``model``'s parameters (updated) and state, ``tree``."""
    new = clone(model).set_params(**params)
    for name, value in vars(model).items():
        if name.endswith("_") and not name.startswith("_") and name != "tree_":
            setattr(new, name, copy.deepcopy(value))
    new.tree_ = tree
    return new
