"""``dtjit.criteria.split_scan`` against a brute-force loop, the textbook and the tree."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine

import dtjit
from dtjit import criteria

# The fields plot_split_scan is written against, in this order.
PLOT_FIELDS = [
    "x",
    "y",
    "thresholds",
    "n_left",
    "n_right",
    "positive_class",
    "ratio_total",
    "ratio_left",
    "ratio_right",
    "entropy_total",
    "entropy_left",
    "entropy_right",
    "gain",
    "best_index",
    "best_threshold",
    "best_gain",
    "base",
]


def _entropy_by_hand(labels, classes, log):
    n = len(labels)
    h = 0.0
    for c in classes:
        k = sum(1 for label in labels if label == c)
        if k:
            h -= k / n * log(k / n)
    return h


def brute_force_scan(x, y, positive, log=math.log2):
    """One Python loop per candidate threshold, counting everything from scratch."""
    rows = [(xi, yi) for xi, yi in zip(x.tolist(), y.tolist(), strict=True) if not math.isnan(xi)]
    classes = sorted({yi for _, yi in rows})
    all_labels = [yi for _, yi in rows]
    h_total = _entropy_by_hand(all_labels, classes, log)
    values = sorted({xi for xi, _ in rows})
    out = []
    for a, b in zip(values[:-1], values[1:], strict=True):
        t = a / 2 + b / 2
        left = [yi for xi, yi in rows if xi <= t]
        right = [yi for xi, yi in rows if xi > t]
        h_left = _entropy_by_hand(left, classes, log)
        h_right = _entropy_by_hand(right, classes, log)
        at_a = {yi for xi, yi in rows if xi == a}
        at_b = {yi for xi, yi in rows if xi == b}
        out.append(
            {
                "threshold": t,
                "n_left": len(left),
                "n_right": len(right),
                "ratio_left": left.count(positive) / len(left),
                "ratio_right": right.count(positive) / len(right),
                "entropy_left": h_left,
                "entropy_right": h_right,
                "gain": h_total - len(left) / len(rows) * h_left - len(right) / len(rows) * h_right,
                "is_boundary": not (len(at_a) == 1 and at_a == at_b),
            }
        )
    return h_total, all_labels.count(positive) / len(rows), out


def test_fields_are_the_plotting_contract():
    names = [f.name for f in dataclasses.fields(criteria.SplitScan)]
    assert names[: len(PLOT_FIELDS)] == PLOT_FIELDS
    scan = criteria.split_scan([1.0, 2.0, 3.0], [0, 1, 1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        scan.best_index = 0
    with pytest.raises(ValueError, match="read-only"):
        scan.gain[0] = 1.0


@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_on_random_data_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    x = rng.integers(0, 12, size=n).astype(float)  # few values: many ties
    x[rng.random(n) < 0.1] = np.nan
    if np.unique(x[~np.isnan(x)]).size < 2:
        x[:2] = [0.0, 1.0]
    n_classes = int(rng.integers(2, 5))
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)  # every class present... unless its row is NaN
    positive = int(rng.choice(np.unique(y[~np.isnan(x)])))
    for base, log in ((2, math.log2), ("e", math.log)):
        scan = criteria.split_scan(x, y, positive=positive, base=base)
        h_total, ratio_total, expected = brute_force_scan(x, y, positive, log)
        assert scan.n_missing == int(np.isnan(x).sum())
        assert scan.x.tolist() == sorted(x[~np.isnan(x)].tolist())
        assert scan.x.dtype == np.float64
        # The labels travel with their values (stable sort: tied values keep input order).
        keep = ~np.isnan(x)
        order = np.argsort(x[keep], kind="stable")
        assert scan.y.tolist() == y[keep][order].tolist()
        assert scan.positive_class == positive
        assert scan.entropy_total == pytest.approx(h_total, abs=1e-12)
        assert scan.ratio_total == pytest.approx(ratio_total, abs=1e-15)
        for key in ("n_left", "n_right", "is_boundary", "threshold"):
            got = scan.thresholds if key == "threshold" else getattr(scan, key)
            assert got.tolist() == [row[key] for row in expected], key
        for key in ("ratio_left", "ratio_right", "entropy_left", "entropy_right", "gain"):
            np.testing.assert_allclose(
                getattr(scan, key), [row[key] for row in expected], rtol=0, atol=1e-12
            )
        gains = [row["gain"] for row in expected]
        best = max(range(len(gains)), key=lambda j: (gains[j] > max(gains) - 1e-12, -j))
        assert scan.best_index == best
        assert scan.best_threshold == expected[best]["threshold"]
        assert scan.best_gain == scan.gain[best]
        assert scan.is_boundary[scan.best_index]


def test_spam_word_count_panels():
    """word_count: 40 60 100 | 200 300 300 300 800 with classes Y Y Y | N Y N N N."""
    x = [100, 200, 800, 60, 40, 300, 300, 300]
    y = ["Yes", "No", "No", "Yes", "Yes", "Yes", "No", "No"]
    scan = criteria.split_scan(x, y)
    assert scan.positive_class == "Yes"  # the larger of two labels
    assert scan.thresholds.tolist() == [50, 80, 150, 250, 550]
    assert scan.n_left.tolist() == [1, 2, 3, 4, 7]
    assert scan.n_right.tolist() == [7, 6, 5, 4, 1]
    assert scan.ratio_total == 0.5
    assert scan.ratio_left.tolist() == [1, 1, 1, 3 / 4, 4 / 7]
    assert scan.ratio_right.tolist() == [3 / 7, 2 / 6, 1 / 5, 1 / 4, 0]
    assert scan.entropy_total == 1.0
    # Only 40 | 60 and 60 | 100 separate runs of one class (Yes | Yes).
    assert scan.is_boundary.tolist() == [False, False, True, True, True]
    assert scan.best_index == 2 and scan.best_threshold == 150.0
    assert round(scan.best_gain, 4) == 0.5488
    # Left 3 yes: entropy 0; right 1 yes / 4 no: H(1/5, 4/5) = 0.7219.
    assert scan.entropy_left[2] == 0.0
    assert round(scan.entropy_right[2], 4) == 0.7219
    nats = criteria.split_scan(x, y, base="e")
    np.testing.assert_allclose(nats.gain, scan.gain * math.log(2), rtol=1e-14)
    assert nats.base == math.e and scan.base == 2.0
    assert criteria.split_scan(x, y, positive="No").ratio_left.tolist() == [0, 0, 0, 1 / 4, 3 / 7]


def test_default_positive_is_the_most_frequent_of_several_classes():
    scan = criteria.split_scan([1, 2, 3, 4, 5, 6], ["b", "c", "c", "a", "a", "c"])
    assert scan.positive_class == "c"
    assert scan.ratio_total == 0.5
    assert criteria.split_scan([1, 2, 3, 4], [2, 1, 0, 0]).positive_class == 0
    tie = criteria.split_scan([1, 2, 3, 4], [5, 5, 3, 3]).positive_class
    assert tie == 5  # binary: the larger label
    assert criteria.split_scan([1, 2, 3], [5, 4, 3]).positive_class == 3  # tie: smallest
    assert criteria.split_scan([1, 2, 3], ["a", "a", "a"]).gain.tolist() == [0.0, 0.0]


def test_errors():
    with pytest.raises(ValueError, match="different lengths"):
        criteria.split_scan([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="empty"):
        criteria.split_scan([], [])
    with pytest.raises(ValueError, match="fewer than two distinct"):
        criteria.split_scan([3.0, 3.0, np.nan], [0, 1, 1])
    with pytest.raises(ValueError, match="no non-missing"):
        criteria.split_scan([np.nan, np.nan], [0, 1])
    with pytest.raises(ValueError, match="infinite"):
        criteria.split_scan([1.0, np.inf], [0, 1])
    with pytest.raises(ValueError, match="not a class"):
        criteria.split_scan([1.0, 2.0], [0, 1], positive=2)
    with pytest.raises(TypeError, match="numeric"):
        criteria.split_scan(["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="1-D"):
        criteria.split_scan([[1.0, 2.0]], [0, 1])
    with pytest.raises(ValueError, match="base"):
        criteria.split_scan([1.0, 2.0], [0, 1], base=1)


def test_midpoint_never_rounds_up_to_the_larger_value():
    a = 1.0
    b = np.nextafter(a, 2.0)  # a / 2 + b / 2 rounds to b in float64
    scan = criteria.split_scan([a, b], [0, 1])
    assert scan.thresholds.tolist() == [a]
    assert scan.n_left.tolist() == [1]


@pytest.mark.parametrize("loader", [load_breast_cancer, load_wine], ids=["breast_cancer", "wine"])
def test_best_threshold_is_the_entropy_tree_root(loader):
    """For every feature, a depth-1 entropy tree on that feature alone splits where the scan
    says; on all features, the tree's root threshold is its feature's best scan threshold."""
    X, y = loader(return_X_y=True)
    X = X.astype(np.float32)  # the tree's own values: the thresholds then agree bit for bit
    for f in range(X.shape[1]):
        scan = criteria.split_scan(X[:, f], y)
        tree = dtjit.DecisionTreeClassifier(criterion="entropy", max_depth=1)
        root = tree.fit(X[:, [f]], y).tree_
        assert root.threshold[0] == scan.best_threshold, f
        w = root.weighted_n_node_samples
        gain = root.impurity[0] - (w[1] * root.impurity[1] + w[2] * root.impurity[2]) / w[0]
        assert gain == pytest.approx(scan.best_gain, abs=1e-12)
    root = dtjit.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, y).tree_
    assert root.threshold[0] == criteria.split_scan(X[:, root.feature[0]], y).best_threshold
