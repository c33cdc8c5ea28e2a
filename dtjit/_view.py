"""A fitted tree as people see it: names, edge conditions, node summaries and colours.

Every human-facing view (:mod:`dtjit.export`, :mod:`dtjit.plotting`, the Jupyter display)
reads the tree through :func:`resolve_view` and words each edge with :func:`edge_condition`.
That one function is where a split becomes text, so a new kind of split (a categorical
subset, a learned direction for missing values) changes one place.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .engine.jit import TREE_LEAF
from .predict.walk import node_depths

# One fixed colour per class (cycled beyond ten classes): Tableau 10, which stays distinct
# when lightened towards white.
CLASS_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
REGRESSION_COLOR = "#e15759"


@dataclass(frozen=True)
class Condition:
    """What a sample satisfies when it follows one edge of a split.

    Attributes
    ----------
    feature : int
        Column index of the split feature.
    name : str
        Its display name.
    op : {"<=", ">", "in", "not in"}
        ``"<="`` on the left edge, ``">"`` on the right edge of a threshold split;
        ``"in"`` or ``"not in"`` for a categorical (subset) split.
    threshold : float
        The split threshold (float64, exact); NaN for a categorical split.
    missing : bool
        True when a missing value (NaN) follows this edge too. For threshold splits only
        where the tree learned that direction (``Tree.missing_learned``, or for trees
        without it :attr:`TreeView.routes_missing`); for
        categorical splits always (the learned direction, which unseen categories follow
        as well).
    categories : tuple of str or None
        The categories of a categorical split's edge (with ``"not in"``: those excluded).
        Of the known categories, the shorter side is written: ``country not in {A, B}``
        rather than 39 countries ``in``.
    known : tuple of str or None
        All categories known to the split's feature, in code order (None when unknown, as
        for a bare ``Tree``). A missing value and a category unseen in fit satisfy the
        condition only when ``missing`` is true, with either ``op``.
    """

    feature: int
    name: str
    op: str
    threshold: float
    missing: bool = False
    categories: tuple[str, ...] | None = None
    known: tuple[str, ...] | None = None

    @classmethod
    def subset(
        cls, feature: int, name: str, allowed: Sequence[str], known: Sequence[str], missing: bool
    ) -> Condition:
        """Build the condition "a known category in ``allowed``", worded by its shorter side."""
        allowed_set = set(allowed)
        inside = tuple(c for c in known if c in allowed_set)
        outside = tuple(c for c in known if c not in allowed_set)
        if len(outside) < len(inside):
            op, shown = "not in", outside
        else:
            op, shown = "in", inside
        return cls(feature, name, op, float("nan"), missing, shown, tuple(known))

    @property
    def allowed(self) -> tuple[str, ...] | None:
        """The known categories that satisfy a categorical condition (None when unknown)."""
        if self.categories is None or self.known is None:
            return None
        if self.op == "in":
            return self.categories
        excluded = set(self.categories)
        return tuple(c for c in self.known if c not in excluded)

    def text(self, decimals: int, *, with_name: bool = True, align: bool = False) -> str:
        """Word the condition, e.g. ``petal width <= 0.80`` or ``> 0.80 or missing``.

        Parameters
        ----------
        decimals : int
            Digits after the decimal point of the threshold.
        with_name : bool, default=True
            Start with the feature name (edge labels next to a named node leave it out).
        align : bool, default=False
            Pad ``>`` to two characters, so ``<=`` and ``>`` lines line up (scikit-learn's
            ``export_text`` layout).
        """
        if self.threshold == np.inf:
            # scikit-learn's split of the values (x <= inf) from the NaN rows.
            words = "is missing" if self.missing else "is not missing"
            return f"{self.name} {words}" if with_name else words
        op = f"{self.op:<2}" if align else self.op
        if self.categories is not None:
            words = f"{self.op} {{{', '.join(self.categories)}}}"
        else:
            words = f"{op} {self.threshold:.{decimals}f}"
        if with_name:
            words = f"{self.name} {words}"
        if self.missing:
            words += " or missing"
        return words

    def to_record(self) -> dict[str, Any]:
        """Return the condition as plain Python types (for records and JSON)."""
        record: dict[str, Any] = {
            "feature": self.feature,
            "name": self.name,
            "op": self.op,
            "threshold": None if self.categories is not None else self.threshold,
            "missing": self.missing,
        }
        if self.categories is not None:
            record["categories"] = list(self.categories)
        return record


@dataclass(frozen=True)
class TreeView:
    """A tree with the names and metadata needed to show it.

    Built by :func:`resolve_view`; reads the arrays of ``tree`` in scikit-learn's vocabulary
    (``children_left``, ``feature``, ...), so it accepts a scikit-learn tree as well.
    """

    tree: Any
    feature_names: list[str]
    class_names: list[str] | None  # None for a regression tree
    classes: list[Any] | None  # the labels as plain Python values (classifiers)
    estimator_name: str
    criterion: str | None
    # Features that had NaN in the training data (the estimator's features_with_missing_):
    # for trees without ``missing_learned`` (older files, scikit-learn's), splits on them are
    # taken to have learned where NaN goes, so their edges say "or missing". Elsewhere
    # missing_go_to_left is scikit-learn's default (the larger child), which is not shown.
    routes_missing: frozenset[int] = frozenset()
    # Per feature, the (code, label) of each known category of a categorical column, None
    # for numeric columns; None altogether when unknown (a bare Tree).
    category_labels: list[list[tuple[int, str]] | None] | None = None
    depth: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))

    @property
    def is_classifier(self) -> bool:
        """True when nodes hold class fractions."""
        return self.class_names is not None

    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return int(self.tree.node_count)

    @property
    def max_depth(self) -> int:
        """Depth of the deepest leaf (the root has depth 0)."""
        return int(self.depth.max())

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.tree.children_left == TREE_LEAF))

    def is_leaf(self, node: int) -> bool:
        """Tell whether ``node`` is a leaf."""
        return bool(self.tree.children_left[node] == TREE_LEAF)

    def children(self, node: int) -> tuple[int, int]:
        """(left, right) child ids of a split node."""
        return int(self.tree.children_left[node]), int(self.tree.children_right[node])

    @cached_property
    def parent(self) -> np.ndarray:
        """Parent id of every node (-1 at the root)."""
        parent = np.full(self.node_count, -1, dtype=np.int64)
        split = np.flatnonzero(np.asarray(self.tree.children_left) != TREE_LEAF)
        parent[np.asarray(self.tree.children_left)[split]] = split
        parent[np.asarray(self.tree.children_right)[split]] = split
        return parent

    def preorder(self, max_depth: int | None = None) -> Iterator[tuple[int, int]]:
        """(node, depth) pairs, depth-first, left before right, without recursion.

        With ``max_depth``, nodes deeper than it are listed but not descended into: each
        stands for its cut subtree.
        """
        stack = [(0, 0)]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            if not self.is_leaf(node) and (max_depth is None or depth <= max_depth):
                left, right = self.children(node)
                stack.append((right, depth + 1))
                stack.append((left, depth + 1))

    def subtree_depth(self, node: int) -> int:
        """Levels of the subtree under ``node`` (a leaf has 1)."""
        stack, deepest = [node], self.depth[node]
        while stack:
            n = stack.pop()
            deepest = max(deepest, self.depth[n])
            if not self.is_leaf(n):
                stack.extend(self.children(n))
        return int(deepest - self.depth[node] + 1)

    # -- node contents ------------------------------------------------------------------------
    def values(self, node: int) -> np.ndarray:
        """Class fractions (classifier) or ``[mean]`` (regressor) of a node."""
        return np.asarray(self.tree.value[node, 0], dtype=np.float64)

    def samples(self, node: int) -> int:
        """Training rows that reached the node."""
        return int(self.tree.n_node_samples[node])

    def weighted_samples(self, node: int) -> float:
        """Their total sample weight."""
        return float(self.tree.weighted_n_node_samples[node])

    def impurity(self, node: int) -> float:
        """Criterion value of the node."""
        return float(self.tree.impurity[node])

    def majority(self, node: int) -> int:
        """Index of the most weighted class (first on ties, like ``predict``)."""
        return int(np.argmax(self.values(node)))

    def prediction(self, node: int) -> Any:
        """Return what the tree predicts at the node: a class label or a mean (plain Python)."""
        if self.is_classifier:
            assert self.classes is not None
            return self.classes[self.majority(node)]
        return float(self.values(node)[0])

    def prediction_text(self, node: int, decimals: int) -> str:
        """``class = setosa`` or ``value = 1.23``."""
        if self.is_classifier:
            assert self.class_names is not None
            return f"class = {self.class_names[self.majority(node)]}"
        return f"value = {self.values(node)[0]:.{decimals}f}"

    def confidence(self, node: int) -> float:
        """Weighted fraction of the majority class (classifiers)."""
        return float(self.values(node).max())

    def node_lines(
        self, node: int, decimals: int, *, impurity: bool = True, fractions: bool = True
    ) -> list[str]:
        """Return the lines a drawn node shows: split, impurity, samples, fractions, prediction.

        ``impurity`` and ``fractions`` (the class fractions of a classifier node) can be left
        out of compact drawings.
        """
        lines = []
        if not self.is_leaf(node):
            lines.append(edge_condition(self, node, left=True).text(decimals))
        if impurity:
            lines.append(f"{self.criterion or 'impurity'} = {self.impurity(node):.{decimals}f}")
        lines.append(f"samples = {self.samples(node)}")
        if fractions and self.is_classifier:
            lines.append("value = " + format_numbers(self.values(node), decimals))
        lines.append(self.prediction_text(node, decimals))
        return lines

    # -- colours ------------------------------------------------------------------------------
    def color(self, node: int) -> str:
        """Fill colour: the class colour lightened by impurity, or the value's shade.

        A classifier node takes its majority class's colour, saturated by how far the
        majority leads the runner-up (white when they tie). A regression node is shaded by its
        mean between the smallest and the largest node mean.
        """
        v = self.values(node)
        if self.is_classifier:
            base = CLASS_PALETTE[self.majority(node) % len(CLASS_PALETTE)]
            ordered = np.sort(v)[::-1]
            second = ordered[1] if v.size > 1 else 0.0
            strength = 1.0 if second >= 1.0 else (ordered[0] - second) / (1.0 - second)
            return _lighten(base, float(strength))
        low, high = self._value_range
        strength = 1.0 if high <= low else (v[0] - low) / (high - low)
        return _lighten(REGRESSION_COLOR, float(strength))

    @cached_property
    def _value_range(self) -> tuple[float, float]:
        means = np.asarray(self.tree.value[:, 0, 0], dtype=np.float64)
        return float(means.min()), float(means.max())


def edge_condition(view: TreeView, node: int, *, left: bool) -> Condition:
    """Return the condition a sample satisfies when it goes from split ``node`` to a child.

    This is the only place that turns a split into a condition: every export, plot and
    display words its edges through it.
    """
    tree = view.tree
    f = int(tree.feature[node])
    goes_left_if_missing = bool(tree.missing_go_to_left[node])
    categorical_set = getattr(tree, "categorical_set", None)
    if categorical_set is not None and categorical_set[node] >= 0:
        return _subset_condition(view, node, f, left=left)
    threshold = float(tree.threshold[node])
    learned = _learned_missing_direction(view, node, f) or threshold == np.inf  # values | NaN

    return Condition(
        feature=f,
        name=view.feature_names[f],
        op="<=" if left else ">",
        threshold=threshold,
        missing=learned and goes_left_if_missing == left,
    )


def _learned_missing_direction(view: TreeView, node: int, f: int) -> bool:
    """Whether split ``node`` learned where NaN goes (its training rows had NaN in ``f``).

    Read from the tree's ``missing_learned`` when it has one; trees without it (saved before
    it was recorded, scikit-learn's) fall back to the feature having had NaN in training.
    """
    learned = getattr(view.tree, "missing_learned", None)
    if learned is not None:
        return bool(learned[node])
    return f in view.routes_missing


def _subset_condition(view: TreeView, node: int, f: int, *, left: bool) -> Condition:
    """Return the condition of one edge of a categorical split (its categories)."""
    tree = view.tree
    left_codes = set(tree.category_set(node).tolist())
    missing_left = bool(tree.missing_go_to_left[node])
    known = None if view.category_labels is None else view.category_labels[f]
    if known is None:
        # Labels unknown: both edges name the codes of the side missing values do not take,
        # "in" them on that side and "not in" them on the other, which thereby also covers
        # NaN, unseen codes and codes past the bitset (they follow missing_go_to_left).
        n_codes = 64 * tree.category_bits.shape[1]
        plain = set(range(n_codes)) - left_codes if missing_left else left_codes
        op = "not in" if missing_left == left else "in"
        names = tuple(str(c) for c in sorted(plain))
    else:
        allowed = [label for code, label in known if (code in left_codes) == left]
        return Condition.subset(
            f, view.feature_names[f], allowed, [label for _, label in known], missing_left == left
        )
    return Condition(
        feature=f,
        name=view.feature_names[f],
        op=op,
        threshold=float("nan"),
        missing=missing_left == left,
        categories=names,
    )


LABEL_OPTIONS = ("all", "root", "none")


@dataclass(frozen=True)
class NodeLabel:
    """What scikit-learn's ``export_graphviz`` and ``plot_tree`` write in a node, and how.

    The options are theirs: ``label`` ("all", "root" or "none": where the ``name = ``
    prefixes are written), ``node_ids``, ``impurity``, ``proportion`` and ``precision``
    (numbers rounded with :func:`round`, printed as scikit-learn prints them).
    ``class_names`` is "names" (the view's class names), "symbols" (``y[k]``, scikit-learn's
    ``class_names=True``) or None (no class line).
    """

    label: str = "all"
    node_ids: bool = False
    impurity: bool = True
    proportion: bool = False
    precision: int = 3
    class_names: str | None = "names"
    # Wrap a subset split's category list at this many characters (0: one line).
    wrap_categories: int = 0

    @classmethod
    def from_options(
        cls,
        *,
        label: Any,
        node_ids: Any,
        impurity: Any,
        proportion: Any,
        precision: Any,
        decimals: Any,
        class_names: Any,
    ) -> NodeLabel:
        """Validate scikit-learn's exporter options (and dtjit's ``decimals``)."""
        if label not in LABEL_OPTIONS:
            raise ValueError(f"label must be one of {LABEL_OPTIONS}, got {label!r}.")
        if decimals is not None:
            if precision not in (None, 3):
                raise ValueError("Give precision or decimals, not both: they are one option.")
            digits = check_decimals(decimals)
        elif precision is None:
            digits = 3
        else:
            try:
                digits = check_decimals(precision)
            except (TypeError, ValueError) as exc:
                raise type(exc)(str(exc).replace("decimals", "precision")) from None
        mode = "symbols" if class_names is True else None if class_names is False else "names"
        return cls(str(label), bool(node_ids), bool(impurity), bool(proportion), digits, mode)

    @staticmethod
    def names_of(class_names: Any) -> Any:
        """Return the ``class_names`` for :func:`resolve_view` (None for True and False)."""
        return None if class_names is True or class_names is False else class_names

    def lines(self, view: TreeView, node: int) -> list[str]:
        """Return the lines of ``node``'s label, scikit-learn's ``node_to_str`` line by line."""
        named = self.label == "all" or (self.label == "root" and node == 0)
        lines = []
        if self.node_ids:
            lines.append(f"node #{node}" if named else f"#{node}")
        if not view.is_leaf(node):
            split = self.split_text(view, node)
            if self.wrap_categories and edge_condition(view, node, left=True).categories:
                lines += wrap_line(split, self.wrap_categories)
            else:
                lines.append(split)
        if self.impurity:
            value = _rounded(view.impurity(node), self.precision)
            lines.append(f"{view.criterion or 'impurity'} = {value}" if named else value)
        samples = view.samples(node)
        if self.proportion:
            samples_text = f"{round(100.0 * samples / view.samples(0), 1)}%"
        else:
            samples_text = str(samples)
        lines.append(f"samples = {samples_text}" if named else samples_text)
        value_lines = self._value_text(view, node).split("\n ")
        value_lines[0] = ("value = " if named else "") + value_lines[0]
        lines += value_lines
        if self.class_names is not None and view.is_classifier:
            assert view.class_names is not None
            k = view.majority(node)
            name = view.class_names[k] if self.class_names == "names" else f"y[{k}]"
            lines.append(f"class = {name}" if named else name)
        return lines

    def split_text(self, view: TreeView, node: int) -> str:
        """``name <= 2.45`` with scikit-learn's rounding; subset splits as in every view."""
        cond = edge_condition(view, node, left=True)
        if cond.categories is not None or cond.threshold == np.inf:
            return cond.text(self.precision)
        text = f"{cond.name} <= {_rounded(cond.threshold, self.precision)}"
        return text + " or missing" if cond.missing else text

    def _value_text(self, view: TreeView, node: int) -> str:
        """scikit-learn's ``value = `` text: counts, fractions or the mean, as it prints them."""
        value = view.values(node)
        if view.is_classifier and not self.proportion:
            value = value * view.weighted_samples(node)
        if not view.is_classifier or self.proportion:
            shown = np.around(value, self.precision)
        elif np.all(np.equal(np.mod(value, 1), 0)):
            shown = value.astype(int)
        else:
            shown = np.around(value, self.precision)
        text = str(shown.astype("S32")).replace("b'", "'")
        text = text.replace("' '", ", ").replace("'", "")
        if not view.is_classifier:
            text = text.replace("[", "").replace("]", "")
        return text


def wrap_line(line: str, width: int) -> list[str]:
    """Split a line longer than ``width`` at spaces; a word longer than ``width`` stays whole."""
    if len(line) <= width:
        return [line]
    pieces, current = [], ""
    for word in line.split(" "):
        if current and len(current) + 1 + len(word) > width:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    pieces.append(current)
    return pieces


def _rounded(number: float, precision: int) -> str:
    """``str(round(x, precision))`` of a float64, as scikit-learn's exporters print numbers."""
    return str(round(np.float64(number), precision))


def format_numbers(values: np.ndarray, decimals: int) -> str:
    """``[0.50, 0.25]``: numbers at a fixed precision, as scikit-learn's exports print them."""
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def _lighten(hex_color: str, strength: float) -> str:
    """Blend ``hex_color`` with white: strength 1 keeps the colour, 0 gives white."""
    strength = min(max(strength, 0.0), 1.0)
    rgb = [int(hex_color[i : i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(255 - strength * (255 - c)) for c in rgb]
    return "#" + "".join(f"{c:02x}" for c in mixed)


# ------------------------------------------------------------------------------ resolving
def resolve_view(
    model: Any,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
) -> TreeView:
    """Check a fitted estimator (or a bare :class:`~dtjit.Tree`) and attach names to it.

    Parameters
    ----------
    model : fitted estimator with ``tree_``, or Tree
        A dtjit (or scikit-learn) decision tree.
    feature_names : sequence, default=None
        Defaults to ``model.feature_names_in_`` when the model has it, else ``x0, x1, ...``.
    class_names : sequence, default=None
        Defaults to ``model.classes_``. A bare Tree is a classifier when it has more than
        one class column or when class names are given; its classes default to ``0, 1, ...``.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    ValueError
        If a list of names has the wrong length.
    TypeError
        If ``model`` is neither an estimator nor a tree.
    """
    if hasattr(model, "children_left") and hasattr(model, "node_count"):
        tree, estimator = model, None
    else:
        if not hasattr(model, "fit"):
            raise TypeError(
                f"Expected a fitted decision tree estimator or a dtjit.Tree, got "
                f"{type(model).__name__}."
            )
        check_is_fitted(model, "tree_")
        tree, estimator = model.tree_, model
    if int(tree.n_outputs) != 1:
        raise ValueError(f"Only single-output trees can be shown, this one has {tree.n_outputs}.")

    n_features = int(tree.n_features)
    if feature_names is None:
        if estimator is not None and hasattr(estimator, "feature_names_in_"):
            feature_names = estimator.feature_names_in_
        else:
            feature_names = [f"x{f}" for f in range(n_features)]
    features = _names_of(feature_names, "feature_names")
    if len(features) != n_features:
        raise ValueError(
            f"feature_names has {len(features)} names, the tree has {n_features} features."
        )

    classes: list[Any] | None
    if estimator is not None:
        labels = getattr(estimator, "classes_", None)
        classes = None if labels is None else [_plain(c) for c in labels]
    elif int(tree.max_n_classes) > 1 or class_names is not None:
        classes = list(range(int(tree.max_n_classes)))
    else:
        classes = None
    if classes is None:
        names = None  # regression: class_names does not apply
    else:
        names = (
            [str(c) for c in classes]
            if class_names is None
            else _names_of(class_names, "class_names")
        )
        if len(names) != len(classes):
            raise ValueError(
                f"class_names has {len(names)} names, the tree has {len(classes)} classes."
            )
    criterion = getattr(estimator, "criterion", None)
    with_missing = getattr(estimator, "features_with_missing_", None)
    columns = getattr(estimator, "_categorical_columns", lambda: None)()
    return TreeView(
        category_labels=None if columns is None else columns.category_labels(n_features),
        tree=tree,
        feature_names=features,
        class_names=names,
        classes=classes,
        estimator_name=type(estimator).__name__ if estimator is not None else type(tree).__name__,
        criterion=None if criterion is None else str(criterion),
        routes_missing=frozenset(
            () if with_missing is None else np.flatnonzero(with_missing).tolist()
        ),
        depth=_node_depths(tree),
    )


def _names_of(names: Any, what: str) -> list[str]:
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise TypeError(f"{what} must be a sequence of names, got {type(names).__name__}.")
    return [str(n) for n in names]


def _plain(label: Any) -> Any:
    """Return a numpy scalar as the Python value it holds (JSON-serialisable labels)."""
    return label.item() if isinstance(label, np.generic) else label


def _node_depths(tree: Any) -> np.ndarray:
    return node_depths(np.asarray(tree.children_left), np.asarray(tree.children_right))


def check_max_depth(max_depth: Any, *, allow_none: bool) -> int | None:
    """Validate a display depth limit: None (when allowed) or an int >= 0."""
    if max_depth is None and allow_none:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral):
        expected = "None or an int >= 0" if allow_none else "an int >= 0"
        raise TypeError(f"max_depth must be {expected}, got {max_depth!r}.")
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}.")
    return int(max_depth)


def check_decimals(decimals: Any) -> int:
    """Validate a number of decimals: an int >= 0."""
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise TypeError(f"decimals must be an int >= 0, got {decimals!r}.")
    if decimals < 0:
        raise ValueError(f"decimals must be >= 0, got {decimals}.")
    return int(decimals)
