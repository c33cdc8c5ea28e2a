"""Jupyter display: fitted estimators and trees draw themselves as inline SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import sklearn
from _assertions import count_overlaps
from conftest import sample_rows

import dtjit

SVG = "{http://www.w3.org/2000/svg}"


def svg_of(html):
    match = re.search(r"<svg.*?</svg>", html, re.S)
    assert match, "no <svg> in the HTML"
    return ET.fromstring(match[0])  # well-formed XML, or this raises


def rectangles(svg):
    return np.array(
        [[float(r.get(k)) for k in ("x", "y", "width", "height")] for r in svg.iter(f"{SVG}rect")]
    )


def assert_no_overlap(rects):
    x0, y0, width, height = rects.T
    assert count_overlaps(x0, y0, x0 + width, y0 + height) == 0


def test_fitted_classifier_shows_its_tree(iris_data):
    X, y = iris_data
    est = dtjit.DecisionTreeClassifier(max_depth=3).fit(X, y)
    html = est._repr_html_()
    tree = est.tree_
    assert (
        f"DecisionTreeClassifier: {tree.node_count} nodes, {tree.n_leaves} leaves, "
        f"depth {tree.max_depth}<"
    ) in html
    svg = svg_of(html)
    rects = rectangles(svg)
    assert len(rects) == tree.node_count
    assert_no_overlap(rects)
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert f"x{tree.feature[0]} <= {tree.threshold[0]:.2f}" in texts
    assert "samples = 150" in texts
    assert "<details><summary>parameters</summary>" in html  # scikit-learn's diagram too
    bundle = est._repr_mimebundle_()
    assert bundle["text/plain"] == repr(est) == "DecisionTreeClassifier(max_depth=3)"
    assert "<svg" in bundle["text/html"]


def test_unfitted_estimator_keeps_scikit_learns_diagram():
    est = dtjit.DecisionTreeRegressor(max_depth=2)
    html = est._repr_html_()
    assert "<svg" not in html and "dtjit-tree" not in html
    assert "sk-" in html  # scikit-learn's estimator diagram
    assert est._repr_mimebundle_()["text/plain"] == "DecisionTreeRegressor(max_depth=2)"


def test_text_display_setting_is_respected(iris_data):
    est = dtjit.DecisionTreeClassifier().fit(*iris_data)
    with sklearn.config_context(display="text"):
        assert not hasattr(est, "_repr_html_")
        assert est._repr_mimebundle_() == {"text/plain": "DecisionTreeClassifier()"}


def test_large_tree_is_cut_to_a_compact_drawing(covtype_table):
    X, y, names = covtype_table
    rows = sample_rows(len(y), 20_000, seed=3)
    est = dtjit.DecisionTreeClassifier(max_leaf_nodes=150).fit(X[rows], y[rows])
    tree = est.tree_
    html = tree._repr_html_()
    svg = svg_of(html)
    rects = rectangles(svg)
    assert 15 <= len(rects) <= 40
    assert_no_overlap(rects)
    depth = int(re.search(r"drawn to depth (\d+) \((\d+) of", html)[1])
    assert len(rects) == np.count_nonzero(tree.node_depth <= depth + 1)
    assert f"Tree: {tree.node_count} nodes, {tree.n_leaves} leaves" in html
    cut = [t for t in svg.iter(f"{SVG}text") if "".join(t.itertext()) == "..."]
    assert len(cut) == np.count_nonzero(tree.node_depth == depth + 1) > 0


def test_regression_tree_and_awkward_names_are_escaped(diabetes_data):
    pd = pytest.importorskip("pandas")
    X, y = diabetes_data
    columns = [f"<b>&col{j}\"'" for j in range(X.shape[1])]
    est = dtjit.DecisionTreeRegressor(max_depth=2).fit(pd.DataFrame(X, columns=columns), y)
    html = est._repr_html_()
    svg = svg_of(html)  # parses: the names are escaped
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert any(t.startswith("<b>&col") for t in texts)
    assert any(t.startswith("value = ") for t in texts)
    fills = {r.get("fill") for r in svg.iter(f"{SVG}rect")}
    assert len(fills) > 2  # shaded by value


def _joined_texts(svg):
    """The text of each box (its lines joined by spaces), in drawing order."""
    boxes = []
    for group in svg.iter(f"{SVG}g"):
        lines = ["".join(t.itertext()) for t in group.iter(f"{SVG}text")]
        boxes.append(" ".join(lines))
    return boxes


@pytest.mark.parametrize("max_depth", [3, 6])
def test_labels_are_whole_and_the_drawing_fits_the_cell(max_depth):
    """Full split labels (long names, thresholds), boxes apart, and an <svg> that scales to the
    cell's width between MIN_SCALE and its natural size (wider trees scroll)."""
    from sklearn.datasets import load_breast_cancer

    from dtjit._display import MIN_SCALE
    from dtjit._view import edge_condition, resolve_view

    data = load_breast_cancer(as_frame=True)
    est = dtjit.DecisionTreeClassifier(max_depth=max_depth, random_state=0)
    est.fit(data.data, data.target)
    html = est._repr_html_()
    svg = svg_of(html)
    boxes = _joined_texts(svg)
    view = resolve_view(est)
    drawn_depth = re.search(r"drawn to depth (\d+)", html)
    deepest = int(drawn_depth[1]) if drawn_depth else max_depth
    splits = [n for n in range(view.node_count) if not view.is_leaf(n) and view.depth[n] <= deepest]
    for node in splits:
        label = edge_condition(view, node, left=True).text(2)
        assert any(box.startswith(label) for box in boxes), label
    assert any(len(box.split(" samples")[0]) > 24 for box in boxes)  # once cut at 24
    rects = rectangles(svg)
    assert_no_overlap(rects)
    x0, _, width, _ = rects.T
    natural = float(svg.get("viewBox").split()[2])
    assert x0.min() >= 0 and (x0 + width).max() <= natural + 0.5
    style = dict(item.split(":") for item in svg.get("style").split(";"))
    assert style["width"] == "100%" and style["height"] == "auto"
    assert style["max-width"] == f"{natural:.0f}px"
    assert style["min-width"] == f"{MIN_SCALE * natural:.0f}px"
    assert 'style="overflow-x:auto"' in html  # the cell scrolls below MIN_SCALE


def test_long_category_lists_wrap_instead_of_being_cut():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    countries = [f"Country-{k:02d}" for k in range(20)]
    country = rng.choice(countries, 2000)
    X = pd.DataFrame({"native_country": pd.Categorical(country, categories=countries)})
    est = dtjit.DecisionTreeClassifier(max_depth=1).fit(X, np.isin(country, countries[:9]))
    svg = svg_of(est._repr_html_())
    root = _joined_texts(svg)[0]
    shown = re.search(r"\{(.*)\}", root)[1].split(", ")
    assert len(shown) == 9 and set(shown) <= set(countries)  # the shorter side, all of it
    lines = ["".join(t.itertext()) for t in next(svg.iter(f"{SVG}g")).iter(f"{SVG}text")]
    assert len(lines) > 3 and max(map(len, lines)) <= 40
