"""``dtjit.plotting``: figures render headless (Agg), are not blank, and boxes do not overlap."""

from __future__ import annotations

import io
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from _assertions import count_overlaps as count_box_overlaps
from conftest import sample_rows
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris

import dtjit

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from dtjit import plotting  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def render(fig, dpi=50):
    """The figure as a PNG, read back as an RGBA array."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    image = matplotlib.image.imread(buffer, format="png")
    assert image.shape[2] == 4  # RGBA
    return image


def assert_not_blank(image, min_pixels=100):
    height, width = image.shape[:2]
    assert height >= min_pixels and width >= min_pixels, image.shape
    # PNG channels read back as k / 255: adding 0.5 rounds them (np.round took 3x longer).
    rgba = np.ascontiguousarray((image * 255 + 0.5).astype(np.uint8))
    colours = np.unique(rgba.view(np.uint32))  # one 32-bit number per RGBA pixel
    assert len(colours) > 2, f"only {len(colours)} colours: a blank image"


def node_boxes(ax):
    """Window extents of the node boxes (texts with a frame), as arrays x0, y0, x1, y1."""
    fig = ax.figure
    # Lays out every artist without rasterising glyphs (render() does that): the same
    # extents as a full draw, at a quarter of its cost or less on a 300-box tree.
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    extents = np.array([b.get_bbox_patch().get_window_extent(renderer).extents for b in boxes])
    return boxes, extents


def count_overlaps(extents):
    return count_box_overlaps(*extents.T)


@pytest.fixture(scope="module")
def covtype_tree(covtype_table):
    """A tree of about 300 nodes on 20,000 covtype rows (class 2 or not, depth > 10).

    Binary: with seven classes each box's ``value = [...]`` line (scikit-learn's box text)
    is too long for 300 boxes to fit the default figure at the smallest font.
    """
    X, y, names = covtype_table
    rows = sample_rows(len(y), 20_000, seed=2)
    est = dtjit.DecisionTreeClassifier(max_leaf_nodes=150).fit(X[rows], y[rows] == 2)
    return est, names


# -- plot_tree -------------------------------------------------------------------------------
def test_plot_tree_300_nodes_without_overlap(covtype_tree):
    est, names = covtype_tree
    assert est.tree_.node_count == 299 and est.get_depth() > 10
    ax = plotting.plot_tree(est, feature_names=names)
    boxes, extents = node_boxes(ax)
    assert len(boxes) == est.tree_.node_count
    assert count_overlaps(extents) == 0
    figure = ax.figure.bbox
    assert (extents[:, 0] >= figure.x0).all() and (extents[:, 2] <= figure.x1).all()
    assert (extents[:, 1] >= figure.y0).all() and (extents[:, 3] <= figure.y1).all()
    assert_not_blank(render(ax.figure, dpi=100))  # fonts below 1 px fail in FreeType
    # The overlap check can fail: forcing a large font makes boxes collide.
    forced = plotting.plot_tree(est, feature_names=names, fontsize=12)
    assert count_overlaps(node_boxes(forced)[1]) > 0


def test_plot_tree_text_and_truncation(breast_cancer_data):
    X, y = breast_cancer_data
    est = dtjit.DecisionTreeClassifier().fit(X, y)
    tree = est.tree_
    fig, ax = plt.subplots(figsize=(10, 5))
    returned = plotting.plot_tree(est, max_depth=2, class_names=["malignant", "benign"], ax=ax)
    assert returned is ax
    boxes, extents = node_boxes(ax)
    labels = [b.get_text() for b in boxes]
    assert len(boxes) == np.count_nonzero(tree.node_depth <= 3)
    assert labels.count("(...)") == np.count_nonzero((tree.node_depth == 3) & True), (
        "every node below max_depth stands for a cut subtree"
    )
    root = labels[0].splitlines()
    assert root[0] == f"x{tree.feature[0]} <= {round(tree.threshold[0], 3)}"
    counts = (tree.value[0, 0] * tree.weighted_n_node_samples[0]).astype(int)
    assert root[1:] == [
        f"gini = {round(tree.impurity[0], 3)}",
        f"samples = {len(y)}",
        f"value = [{counts[0]}, {counts[1]}]",
        "class = benign",
    ]
    assert count_overlaps(extents) == 0
    assert_not_blank(render(fig))


def test_plot_tree_regression_unfilled_and_single_leaf():
    X, y = load_diabetes(return_X_y=True)
    est = dtjit.DecisionTreeRegressor(max_depth=3).fit(X, y)
    ax = plotting.plot_tree(est, filled=False, fontsize=7)
    boxes, _ = node_boxes(ax)
    assert {b.get_bbox_patch().get_facecolor() for b in boxes} == {(1.0, 1.0, 1.0, 1.0)}
    assert all(b.get_fontsize() == 7 for b in boxes)
    assert any("value = " in b.get_text() for b in boxes)
    assert_not_blank(render(ax.figure))
    leaf = dtjit.DecisionTreeClassifier().fit(np.zeros((4, 2)), ["a"] * 4)
    ax = plotting.plot_tree(leaf)
    assert [b.get_text() for b in node_boxes(ax)[0]] == [
        "gini = 0.0\nsamples = 4\nvalue = [4]\nclass = a"
    ]


def test_plot_tree_play_tennis(shared_data):
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "weka" / "weather.nominal.csv", dtype=str)
    X = pd.get_dummies(table.drop(columns="play"), prefix_sep="=", dtype=float)
    est = dtjit.DecisionTreeClassifier(criterion="entropy").fit(X, table["play"])
    ax = plotting.plot_tree(est)
    boxes, extents = node_boxes(ax)
    assert len(boxes) == est.tree_.node_count
    assert boxes[0].get_text().startswith("outlook=overcast <= 0.5\nentropy = 0.94")
    assert count_overlaps(extents) == 0
    assert_not_blank(render(ax.figure))


# -- plot_importances ------------------------------------------------------------------------
def test_plot_importances():
    data = load_breast_cancer(as_frame=True)
    est = dtjit.DecisionTreeClassifier(random_state=0).fit(data.data, data.target)
    importances = est.feature_importances_
    ax = plotting.plot_importances(est, top=5)
    shown = [t.get_text() for t in ax.get_yticklabels()]
    expected = [data.data.columns[f] for f in np.argsort(-importances, kind="stable")[:5]]
    assert shown == expected
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, np.sort(importances)[::-1][:5])
    assert_not_blank(render(ax.figure))
    # Features never split on are left out.
    small = dtjit.DecisionTreeClassifier(max_depth=1).fit(data.data, data.target)
    assert len(plotting.plot_importances(small).patches) == 1
    with pytest.raises(ValueError, match="top"):
        plotting.plot_importances(est, top=0)


# -- plot_split_scan -------------------------------------------------------------------------
def entropy_bits(p):
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(p * np.log2(p)) - (1 - p) * np.log2(1 - p)
    return np.nan_to_num(terms)


def split_scan_by_hand(x, y, positive_class):
    """What ``dtjit.criteria.split_scan`` returns, computed here with plain numpy."""
    order = np.argsort(x, kind="stable")
    x, y = np.asarray(x, dtype=np.float64)[order], np.asarray(y)[order]
    last_of_run = np.flatnonzero(np.diff(x) > 0)
    thresholds = x[last_of_run] / 2 + x[last_of_run + 1] / 2
    n = len(x)
    n_left = last_of_run + 1
    n_right = n - n_left
    positives = np.cumsum(y == positive_class)
    ratio_left = positives[last_of_run] / n_left
    ratio_right = (positives[-1] - positives[last_of_run]) / n_right
    ratio_total = positives[-1] / n
    entropy_left, entropy_right = entropy_bits(ratio_left), entropy_bits(ratio_right)
    entropy_total = float(entropy_bits(ratio_total))
    gain = entropy_total - (n_left * entropy_left + n_right * entropy_right) / n
    best = int(np.argmax(gain))
    return SimpleNamespace(
        x=x,
        y=y,
        thresholds=thresholds,
        n_left=n_left,
        n_right=n_right,
        positive_class=positive_class,
        ratio_total=float(ratio_total),
        ratio_left=ratio_left,
        ratio_right=ratio_right,
        entropy_total=entropy_total,
        entropy_left=entropy_left,
        entropy_right=entropy_right,
        gain=gain,
        best_index=best,
        best_threshold=float(thresholds[best]),
        best_gain=float(gain[best]),
        base=2,
    )


def test_plot_split_scan_four_panels():
    data = load_breast_cancer()
    x = data.data[:, list(data.feature_names).index("worst radius")]
    scan = split_scan_by_hand(x, data.target, positive_class=1)
    # The scan's best threshold is the root split of a depth-1 entropy tree on this feature.
    stump = dtjit.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(
        x[:, None], data.target
    )
    assert scan.best_threshold == pytest.approx(stump.tree_.threshold[0])
    fig = plotting.plot_split_scan(scan, feature_name="worst radius")
    axes = fig.axes
    assert len(axes) == 4
    assert [ax.get_title() for ax in axes] == [
        "distribution of worst radius by class",
        "positive-class share",
        "entropy of each part",
        f"information gain: best t = {scan.best_threshold:.4g}, gain = {scan.best_gain:.4f}",
    ]
    gain_ax = axes[3]
    curve = gain_ax.lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), scan.thresholds)
    np.testing.assert_array_equal(curve.get_ydata(), scan.gain)
    for ax in axes:  # the best threshold is marked in every panel
        assert any(
            np.allclose(line.get_xdata(), scan.best_threshold) and line.get_linestyle() == "--"
            for line in ax.lines
        )
    assert "bits" in axes[2].get_ylabel()
    assert_not_blank(render(fig))
    # No note sits on a curve: every text inside a panel keeps clear of its lines' points.
    for ax in axes:
        renderer = fig.canvas.get_renderer()
        for text in ax.texts:
            box = text.get_window_extent(renderer)
            for line in ax.lines:
                points = ax.transData.transform(line.get_xydata())
                assert not box.count_contains(points), (text.get_text(), line.get_label())


def saved_extents(fig, artists):
    """Window extents of ``artists`` as laid out by savefig, and the figure's own box."""
    fig.savefig(io.BytesIO(), format="png", dpi=fig.dpi)  # lays the figure out as saved
    renderer = fig.canvas.get_renderer()
    return [a.get_window_extent(renderer) for a in artists], fig.bbox


def test_saved_importances_keep_their_labels_inside():
    data = load_breast_cancer(as_frame=True)
    est = dtjit.DecisionTreeClassifier(random_state=0).fit(data.data, data.target)
    ax = plotting.plot_importances(est)
    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    assert any(t.get_text() == "worst concave points" for t in labels)
    extents, figure = saved_extents(ax.figure, [*labels, ax.xaxis.label])
    for text, box in zip([*labels, ax.xaxis.label], extents, strict=True):
        assert box.x0 >= figure.x0 and box.x1 <= figure.x1, text.get_text()
        assert box.y0 >= figure.y0 and box.y1 <= figure.y1, text.get_text()


@pytest.mark.parametrize("smallest", [5e-5, 1.2e-4, 9.9e-6, 1e-3])
def test_pruning_path_alpha_labels_do_not_overlap(smallest):
    """The symlog axis's linear part ends at the smallest alpha: no power of ten crowds 0."""
    alphas = np.r_[0.0, np.geomspace(smallest, 0.07, 60)]
    path = {"ccp_alphas": alphas, "impurities": np.linspace(0.0, 0.5, alphas.size)}
    ax = plotting.plot_pruning_path(path)
    ax.figure.canvas.draw()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert labels[0].get_text() == "$\\mathdefault{0}$" and len(labels) >= 3
    extents, _ = saved_extents(ax.figure, labels)
    x0 = np.array([b.x0 for b in extents])
    x1 = np.array([b.x1 for b in extents])
    order = np.argsort(x0)
    assert (x0[order][1:] > x1[order][:-1] + 2).all(), [t.get_text() for t in labels]


def test_plot_split_scan_into_a_given_figure_and_bad_scan():
    X, y = load_iris(return_X_y=True)
    scan = split_scan_by_hand(X[:, 0], y == 2, positive_class=True)
    fig = plt.figure(figsize=(8, 6))
    assert plotting.plot_split_scan(scan, fig=fig) is fig
    assert len(fig.axes) == 4
    with pytest.raises(TypeError, match="split_scan"):
        plotting.plot_split_scan(SimpleNamespace(x=X[:, 0]))


# -- plot_pruning_path -------------------------------------------------------------------------
def test_plot_pruning_path_of_a_path(breast_cancer_data):
    X, y = breast_cancer_data
    path = dtjit.DecisionTreeClassifier().cost_complexity_pruning_path(X, y)
    ax = plotting.plot_pruning_path(path)
    curve = ax.lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), path.ccp_alphas)
    np.testing.assert_array_equal(curve.get_ydata(), path.impurities)
    assert ax.get_xscale() == "symlog"
    assert "impurity" in ax.get_ylabel()
    assert_not_blank(render(ax.figure))
    fig, given = plt.subplots()
    assert plotting.plot_pruning_path(dtjit.pruning.pruning_path(dtjit.DecisionTreeClassifier()
                                      .fit(X, y)), ax=given) is given  # fmt: skip


def test_plot_pruning_path_of_a_selection(breast_cancer_data):
    X, y = breast_cancer_data
    sel = dtjit.select_ccp_alpha(dtjit.DecisionTreeClassifier(), X, y, cv=3, rule="1se",
                                 random_state=0)  # fmt: skip
    ax = plotting.plot_pruning_path(sel)
    error_curve = next(line for line in ax.lines if line.get_label() == "CV error")
    np.testing.assert_array_equal(error_curve.get_xdata(), sel.ccp_alphas)
    np.testing.assert_array_equal(error_curve.get_ydata(), sel.errors)
    chosen = [line for line in ax.lines if line.get_label().startswith("chosen alpha")]
    assert len(chosen) == 1 and chosen[0].get_xdata()[0] == sel.ccp_alpha
    limit = sel.errors[sel.min_index] + sel.standard_errors[sel.min_index]
    assert any(line.get_label() == "minimum + 1 SE" and line.get_ydata()[0] == limit
               for line in ax.lines)  # fmt: skip
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "training R(T)" in labels and "CV error" in labels
    assert_not_blank(render(ax.figure))


def test_plot_pruning_path_checks_its_input():
    with pytest.raises(TypeError, match="pruning path"):
        plotting.plot_pruning_path(SimpleNamespace(ccp_alphas=[0.0]))
    with pytest.raises(ValueError, match="same length"):
        plotting.plot_pruning_path({"ccp_alphas": [0.0, 1.0], "impurities": [0.1]})


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"filled": True, "rounded": True},
        {"label": "root", "node_ids": True},
        {"label": "none", "impurity": False},
        {"proportion": True, "precision": 2},
        {"max_depth": 1},
    ],
    ids=lambda o: ",".join(o) or "defaults",
)
def test_plot_tree_boxes_say_what_scikit_learns_say(breast_cancer_data, options):
    """scikit-learn's options, and its box texts node for node (not its layout)."""
    from matplotlib.text import Annotation
    from sklearn.tree import plot_tree as sklearn_plot_tree

    X, y = breast_cancer_data
    est = dtjit.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    names = {"feature_names": [f"f{j}" for j in range(X.shape[1])], "class_names": ["m", "b"]}
    ax = plotting.plot_tree(est, **names, **options)
    ours = [b.get_text() for b in node_boxes(ax)[0]]
    _, sk_ax = plt.subplots()
    sklearn_plot_tree(est, ax=sk_ax, **names, **options)
    theirs = [a.get_text() for a in sk_ax.get_children() if isinstance(a, Annotation)]
    theirs = [t for t in theirs if t.strip() not in ("True", "False")]
    assert ours == ["(...)" if t.strip() == "(...)" else t for t in theirs]
    boxes = node_boxes(ax)[0]
    styles = {type(b.get_bbox_patch().get_boxstyle()).__name__ for b in boxes}
    assert styles == ({"Round"} if options.get("rounded") else {"Square"})
    fills = {b.get_bbox_patch().get_facecolor() for b in boxes if b.get_text() != "(...)"}
    assert (len(fills) > 1) == bool(options.get("filled"))
    root_edges = [t.get_text() for t in ax.texts if t.get_bbox_patch() is None]
    assert root_edges == ["True", "False"]


# -- input checks ------------------------------------------------------------------------------
@pytest.mark.parametrize("plot", [plotting.plot_tree, plotting.plot_importances])
def test_plots_check_their_input(plot, iris_data):
    from sklearn.exceptions import NotFittedError

    X, y = iris_data
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(NotFittedError):
        plot(dtjit.DecisionTreeClassifier())
    with pytest.raises(ValueError, match="feature_names"):
        plot(est, feature_names=["a"])
    if plot is plotting.plot_tree:
        with pytest.raises(ValueError, match="class_names"):
            plot(est, class_names=["a"])
        with pytest.raises(ValueError, match="max_depth"):
            plot(est, max_depth=-1)
        with pytest.raises(TypeError, match="decimals"):
            plot(est, decimals=1.5)


def test_missing_matplotlib_names_the_fix(iris_data, monkeypatch):
    X, y = iris_data
    est = dtjit.DecisionTreeClassifier(max_depth=2).fit(X, y)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    for call in (
        lambda: plotting.plot_tree(est),
        lambda: plotting.plot_importances(est),
        lambda: plotting.plot_split_scan(split_scan_by_hand(X[:, 0], y == 0, True)),
        lambda: plotting.plot_pruning_path(dtjit.pruning.pruning_path(est)),
    ):
        with pytest.raises(ImportError, match="pip install matplotlib"):
            call()


def test_importing_dtjit_does_not_import_matplotlib():
    import subprocess

    code = "import sys, dtjit, dtjit.plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plot_tree_subset_splits_show_categories_wrapped():
    """scikit-learn's plot_tree prints ``country <= nan``; ours lists the categories, wrapped
    so that a long list does not shrink the whole drawing's font."""
    from sklearn.tree import plot_tree as sklearn_plot_tree

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    countries = [f"Country-{k:02d}" for k in range(20)]
    country = rng.choice(countries, 2000)
    X = pd.DataFrame({"country": pd.Categorical(country, categories=countries)})
    est = dtjit.DecisionTreeClassifier(max_depth=1).fit(X, np.isin(country, countries[:9]))
    _, sk_ax = plt.subplots()
    sklearn_plot_tree(est, ax=sk_ax, feature_names=["country"])
    assert any("country <= nan" in t.get_text() for t in sk_ax.texts)
    ax = plotting.plot_tree(est)
    root = node_boxes(ax)[0][0].get_text().splitlines()
    split = " ".join(root[: next(i for i, line in enumerate(root) if line.startswith("gini"))])
    assert re.fullmatch(r"country (not )?in \{[^}]*\}( or missing)?", split), split
    assert len(re.search(r"\{(.*)\}", split)[1].split(", ")) == 9  # the shorter side
    assert max(len(line) for line in root) <= 40 and "nan" not in split
