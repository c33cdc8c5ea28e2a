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
