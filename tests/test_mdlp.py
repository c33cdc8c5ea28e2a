"""``dtjit.MDLPDiscretizer``: hand computations, the pure-Python oracle, scikit-learn's checks.

The MDL test of Fayyad & Irani (1993) accepts a cut of a set S of N samples iff

    Gain > log2(N - 1) / N + Delta / N,
    Delta = log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)].

The hand computations below write out that arithmetic (entropies in bits).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from _mdlp_reference import mdlp_cut_points as reference_cut_points
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_kernels import BOUNDS_CHECKED_LANE, _run_lane

from dtjit import MDLPDiscretizer


def _cuts(x, y, **params):
    """Cut points of a single feature, as a list."""
    X = np.asarray(x, dtype=np.float64).reshape(-1, 1)
    return MDLPDiscretizer(**params).fit(X, y).cut_points_[0].tolist()


def _three_blocks(m):
    """x = 1 .. 3m; classes 0 (m times), 1 (m times), 0 (m times)."""
    return np.arange(1, 3 * m + 1), np.repeat([0, 1, 0], m)


# ----------------------------------------------------------------------------------------
# Cut points derived by hand
# ----------------------------------------------------------------------------------------


def test_two_pure_blocks_are_cut_once():
    """x = 1..8, y = 0 0 0 0 1 1 1 1. The only boundary point is 4 | 5 (cut 4.5).

    Ent(S) = 1, E = 0 (both halves pure): Gain = 1. k = 2, k1 = k2 = 1:
    Delta = log2(9 - 2) - (2 * 1 - 0 - 0) = 2.8074 - 2 = 0.8074;
    threshold = (log2(7) + 0.8074) / 8 = (2.8074 + 0.8074) / 8 = 0.4518 < 1: accepted.
    Both halves are pure: nothing more to cut.
    """
    threshold = (math.log2(7) + math.log2(7) - 2) / 8
    assert round(threshold, 4) == 0.4518
    assert _cuts(range(1, 9), [0, 0, 0, 0, 1, 1, 1, 1]) == [4.5]


def test_a_lone_sample_is_split_off_only_from_small_sets():
    """x = 1..N, y = 0 then N - 1 ones: one boundary point, 1 | 2 (cut 1.5), E = 0.

    Gain = Ent(S) = H(1/N, (N-1)/N); k = 2, k1 = k2 = 1: Delta = log2(7) - 2 Gain.
    N = 5: Gain = 0.7219, Delta = 2.8074 - 1.4439 = 1.3635,
           threshold = (log2(4) + 1.3635) / 5 = 0.6727 < 0.7219: accepted.
    N = 6: Gain = 0.6500, threshold = (log2(5) + 1.5074) / 6 = 0.6382: accepted.
    N = 7: Gain = 0.5917, threshold = (log2(6) + 1.6239) / 7 = 0.6013: rejected.
    (With log2(N) for log2(N - 1), N = 5 would give 0.7371 and be rejected.)
    """
    for n, gain, threshold in ((5, 0.7219, 0.6727), (6, 0.6500, 0.6382), (7, 0.5917, 0.6013)):
        h = -(1 / n * math.log2(1 / n) + (n - 1) / n * math.log2((n - 1) / n))
        assert round(h, 4) == gain
        assert round((math.log2(n - 1) + math.log2(7) - 2 * h) / n, 4) == threshold
        assert _cuts(range(1, n + 1), [0] + [1] * (n - 1)) == ([1.5] if n < 7 else [])


def test_only_classes_present_in_the_interval_count():
    """x = 1..5 with classes 0 1 1 1 1, then ten samples of class 2 at x = 100..109.

    Top (N = 15): the best cut, 5 | 100 (at 52.5), leaves E = 5/15 * H(1/5, 4/5) = 0.2406;
    Ent(S) = H(1/15, 4/15, 10/15) = 1.1589, Gain = 0.9183. k = 3, k1 = 2, k2 = 1:
    Delta = log2(25) - (3 * 1.1589 - 2 * 0.7219) = 4.6439 - 2.0330 = 2.6109,
    threshold = (log2(14) + 2.6109) / 15 = 0.4279: accepted.
    Left part x = 1..5: class 2 is absent, so k = 2 and the lone 0 is split off at 1.5
    (the N = 5 case above). Counting the absent class (k = 3) would give Delta =
    log2(25) - 3 * 0.7219 = 2.4781 and threshold (2 + 2.4781) / 5 = 0.8956 > 0.7219.
    """
    h_top = -sum(p * math.log2(p) for p in (1 / 15, 4 / 15, 10 / 15))
    h_left = -(0.2 * math.log2(0.2) + 0.8 * math.log2(0.8))
    delta = math.log2(25) - (3 * h_top - 2 * h_left)
    assert round(h_top - 5 / 15 * h_left, 4) == 0.9183
    assert round((math.log2(14) + delta) / 15, 4) == 0.4279
    assert round((2 + math.log2(25) - 3 * h_left) / 5, 4) == 0.8956
    x = list(range(1, 6)) + list(range(100, 110))
    y = [0, 1, 1, 1, 1] + [2] * 10
    assert _cuts(x, y) == [1.5, 52.5]


def test_alternating_classes_are_not_cut():
    """x = 1..4, y = 0 1 0 1: every cut is a boundary point.

    E(1.5) = 3/4 H(1/3, 2/3) = 0.6887; E(2.5) = 1; E(3.5) = 0.6887: the lowest, 1.5, wins the
    tie. Gain = 1 - 0.6887 = 0.3113. k = 2, k1 = 1, k2 = 2:
    Delta = log2(7) - (2 * 1 - 0 - 2 * 0.9183) = 2.8074 - 0.1634 = 2.6439;
    threshold = (log2(3) + 2.6439) / 4 = (1.5850 + 2.6439) / 4 = 1.0572 > 0.3113: rejected.
    """
    h13 = -(1 / 3 * math.log2(1 / 3) + 2 / 3 * math.log2(2 / 3))
    gain = 1 - 3 / 4 * h13
    threshold = (math.log2(3) + math.log2(7) - (2 - 2 * h13)) / 4
    assert round(gain, 4) == 0.3113 and round(threshold, 4) == 1.0572
    assert _cuts([1, 2, 3, 4], [0, 1, 0, 1]) == []
    # max_depth=1 still applies the test: no cut either.
    assert _cuts([1, 2, 3, 4], [0, 1, 0, 1], max_depth=1) == []


def test_three_blocks_need_enough_samples():
    """x = 1..3m, classes 0 | 1 | 0 in blocks of m.

    Boundary points: m | m+1 and 2m | 2m+1, both with E = 2/3 * 1: the lower wins.
    Ent(S) = H(2/3, 1/3) = 0.9183, Gain = 0.9183 - 0.6667 = 0.2516 for any m. k = 2, k1 = 1,
    k2 = 2: Delta = log2(7) - (2 * 0.9183 - 0 - 2 * 1) = 2.8074 + 0.1634 = 2.9708.
    m = 10 (N = 30): threshold = (log2(29) + 2.9708) / 30 = (4.8580 + 2.9708) / 30 = 0.2610
    > 0.2516: rejected, and the recursion stops there (no cut at all).
    m = 11 (N = 33): threshold = (log2(32) + 2.9708) / 33 = 7.9708 / 33 = 0.2415: accepted
    at 11.5. The right part, 11 ones then 11 zeros (N = 22): Gain = 1, k1 = k2 = 1,
    Delta = log2(7) - 2 = 0.8074, threshold = (log2(21) + 0.8074) / 22 = 0.2363: cut at 22.5.
    """
    h = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    delta = math.log2(7) - (2 * h - 2)
    assert round(h - 2 / 3, 4) == 0.2516 and round(delta, 4) == 2.9708
    assert round((math.log2(29) + delta) / 30, 4) == 0.2610
    assert round((math.log2(32) + delta) / 33, 4) == 0.2415
    assert round((math.log2(21) + math.log2(7) - 2) / 22, 4) == 0.2363
    assert _cuts(*_three_blocks(10)) == []
    assert _cuts(*_three_blocks(11)) == [11.5, 22.5]
    # The safety limits: one level of recursion; or no split of intervals under 23 samples.
    assert _cuts(*_three_blocks(11), max_depth=1) == [11.5]
    assert _cuts(*_three_blocks(11), min_samples_split=23) == [11.5]
    assert _cuts(*_three_blocks(11), min_samples_split=34) == []


def test_iris_cut_points_agree_with_other_implementations(iris_data):
    """Cut points that independent MDLP implementations report for iris (e.g. the Spark
    MDLP discretizer's tests: sepal length 5.55 / 6.15, petal length 2.45 / 4.75, petal
    width 0.8 / 1.75). They also equal the oracle's."""
    X, y = iris_data
    cuts = MDLPDiscretizer().fit(X, y).cut_points_
    np.testing.assert_allclose(cuts[0], [5.55, 6.15])
    np.testing.assert_allclose(cuts[2], [2.45, 4.75])
    np.testing.assert_allclose(cuts[3], [0.8, 1.75])
    for f in range(4):
        assert cuts[f].tolist() == reference_cut_points(X[:, f], y)


# ----------------------------------------------------------------------------------------
# The compiled kernel against the pure-Python oracle
# ----------------------------------------------------------------------------------------


@st.composite
def labelled_columns(draw):
    """A column with many ties (and some NaN) whose classes follow its value, with noise."""
    n = draw(st.integers(1, 150))
    n_values = draw(st.integers(1, 12))
    n_classes = draw(st.integers(1, 4))
    noise = draw(st.sampled_from([0.0, 0.1, 0.3, 1.0]))
    scale = draw(st.sampled_from([1.0, 0.1, -3.7, 1e6]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    codes = rng.integers(0, n_values, size=n)
    x = codes * scale
    x[rng.random(n) < draw(st.sampled_from([0.0, 0.1]))] = np.nan
    class_of_value = rng.integers(0, n_classes, size=n_values)
    y = np.where(rng.random(n) < noise, rng.integers(0, n_classes, size=n), class_of_value[codes])
    return x, y


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    column=labelled_columns(),
    min_samples_split=st.sampled_from([2, 2, 5, 30]),
    max_depth=st.sampled_from([None, None, 1, 2]),
)
def test_kernel_equals_reference(column, min_samples_split, max_depth):
    x, y = column
    params = {"min_samples_split": min_samples_split, "max_depth": max_depth}
    assert _cuts(x, y, **params) == reference_cut_points(x, y, **params)


def test_kernel_equals_reference_on_many_cuts():
    """The comparison is not vacuous: these columns are cut many times."""
    rng = np.random.default_rng(0)
    total = 0
    for _ in range(10):
        codes = rng.integers(0, 30, size=400)
        y = np.where(rng.random(400) < 0.1, rng.integers(0, 3, 400), (codes // 4) % 3)
        x = codes * 0.25
        cuts = _cuts(x, y)
        assert cuts == reference_cut_points(x, y)
        total += len(cuts)
    assert total > 30


# ----------------------------------------------------------------------------------------
# Behaviour
# ----------------------------------------------------------------------------------------


def test_cuts_fall_between_distinct_values_on_class_boundaries():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 40, size=3000).astype(float)
    y = (x // 10).astype(int) % 2
    y[rng.random(3000) < 0.05] = 2
    cuts = np.asarray(_cuts(x, y))
    assert cuts.size > 0 and np.all(np.diff(cuts) > 0)
    values = np.unique(x)
    for cut in cuts:
        a, b = values[values <= cut].max(), values[values > cut].min()
        assert cut == a / 2 + b / 2
        classes_a, classes_b = set(y[x == a]), set(y[x == b])
        assert not (len(classes_a) == 1 and classes_a == classes_b), cut


def test_transform_codes():
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [4.0, 5.0], [5.0, 5.0], [6.0, 5.0]] * 3)
    y = np.array([0, 0, 0, 1, 1, 1] * 3)
    disc = MDLPDiscretizer().fit(X, y)
    assert disc.cut_points_[0].tolist() == [3.5]
    assert disc.cut_points_[1].tolist() == []  # constant feature
    assert disc.n_bins_.tolist() == [2, 1]
    assert disc.n_bins_.dtype == np.int64
    assert all(c.dtype == np.float64 for c in disc.cut_points_)
    codes = disc.transform([[3.5, 5.0], [3.5000001, -1e300], [np.nan, np.nan], [-1e300, 9.0]])
    assert codes.dtype == np.int32
    # A value equal to the cut goes to the lower bin, as x <= threshold goes left in a tree.
    assert codes.tolist() == [[0, 0], [1, 0], [-1, -1], [0, 0]]
    np.testing.assert_array_equal(disc.fit_transform(X, y), disc.transform(X))


def test_missing_values_are_ignored_by_fit():
    x, y = _three_blocks(11)
    x = x.astype(float)
    with_nan = np.concatenate([x, [np.nan] * 7])
    y_nan = np.concatenate([y, [1, 0, 1, 0, 1, 1, 1]])
    assert _cuts(with_nan, y_nan) == _cuts(x, y) == [11.5, 22.5]
    assert _cuts([np.nan, np.nan, np.nan], [0, 1, 0]) == []


def test_single_class_and_single_sample():
    assert _cuts(np.arange(50.0), np.zeros(50, dtype=int)) == []
    assert _cuts([3.0], ["a"]) == []
    # Classes that only appear on NaN rows do not count as present.
    assert _cuts([1.0, 2.0, np.nan], [0, 0, 1]) == []


def test_many_classes_keep_delta_finite():
    """k = 700 classes: 3.0 ** 700 overflows to inf, log2(3^k - 2) must not.

    Each class holds 3 samples of one value. At the top, Ent(S) = log2(700) = 9.45 and the
    best cut halves S (E = log2(350) = 8.45, Gain = 1); Delta = 700 log2(3) - (700 * 9.45 -
    2 * 350 * 8.45) = 1109.5 - 700 = 409.5, so the threshold is (log2(2099) + 409.5) / 2100 =
    0.20 < 1: accepted. An infinite Delta would reject every cut.
    """
    x = np.repeat(np.arange(700.0), 3)
    y = np.repeat(np.arange(700), 3)
    delta = 700 * math.log2(3) - (700 * math.log2(700) - 700 * math.log2(350))
    assert round(delta, 1) == 409.5
    assert (math.log2(2099) + delta) / 2100 < 1
    cuts = _cuts(x, y)
    assert len(cuts) > 0 and np.all(np.isfinite(cuts))
    assert set(cuts) <= {v + 0.5 for v in range(699)}


def test_feature_names_and_labels(iris_data):
    pd = pytest.importorskip("pandas")
    X, y = iris_data
    frame = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    disc = MDLPDiscretizer().fit(frame, names)
    assert disc.feature_names_in_.tolist() == ["sl", "sw", "pl", "pw"]
    assert disc.get_feature_names_out().tolist() == ["sl", "sw", "pl", "pw"]
    assert disc.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    assert disc.n_features_in_ == 4
    # Labels are only names: the cut points do not depend on them.
    for a, b in zip(disc.cut_points_, MDLPDiscretizer().fit(X, y).cut_points_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_errors():
    X, y = _three_blocks(11)
    X = X.reshape(-1, 1).astype(float)
    with pytest.raises(ValueError, match="min_samples_split"):
        MDLPDiscretizer(min_samples_split=1).fit(X, y)
    with pytest.raises(ValueError, match="max_depth"):
        MDLPDiscretizer(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        MDLPDiscretizer().fit(np.vstack([X, [[np.inf]]]), np.append(y, 0))
    with pytest.raises(ValueError, match="Unknown label type"):
        MDLPDiscretizer().fit(X, y + 0.5)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MDLPDiscretizer().fit(X, y[:-1])
    disc = MDLPDiscretizer().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        disc.transform(np.hstack([X, X]))


@parametrize_with_checks([MDLPDiscretizer(), MDLPDiscretizer(max_depth=2, min_samples_split=4)])
def test_sklearn_compatible_transformer(estimator, check):
    check(estimator)


# ----------------------------------------------------------------------------------------
# Kernel lanes: pure Python (NUMBA_DISABLE_JIT) and bounds-checked compiled code
# ----------------------------------------------------------------------------------------

LANE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from dtjit import MDLPDiscretizer
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 25, size=(500, 3))
    X = codes * np.array([0.5, 1.0, 3.0])
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.where(rng.random(500) < 0.1, rng.integers(0, 3, 500), (codes[:, 0] // 5) % 3)
    fits = [MDLPDiscretizer(**p).fit(X, y) for p in
            ({}, {"max_depth": 2}, {"min_samples_split": 60})]
    result = [[c.tolist() for c in est.cut_points_] for est in fits]
    json.dump(result, sys.stdout)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "lane",
    [{"NUMBA_DISABLE_JIT": "1"}, BOUNDS_CHECKED_LANE],
    ids=["NUMBA_DISABLE_JIT", "NUMBA_BOUNDSCHECK"],
)
def test_kernel_lanes_agree(lane, tmp_path):
    env = {**lane, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    lane_result = _run_lane(env, tmp_path, LANE_SCRIPT)
    namespace: dict = {}
    exec(LANE_SCRIPT.rsplit("json.dump", 1)[0], namespace)  # the same workload, in-process
    assert lane_result == namespace["result"]
    assert sum(len(c) for cuts in namespace["result"] for c in cuts) > 5


# ----------------------------------------------------------------------------------------
# All of covtype
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_covtype_cut_points_are_sorted_boundary_points(covtype_table):
    X, y, names = covtype_table
    disc = MDLPDiscretizer().fit(X, y)
    assert len(disc.cut_points_) == 54
    assert disc.get_feature_names_out(names).tolist() == names
    # The ten numeric features are all cut; a one-hot column has at most one cut, at 0.5.
    assert all(len(disc.cut_points_[f]) > 5 for f in range(10))
    for f in range(10, 54):
        assert disc.cut_points_[f].tolist() in ([], [0.5])
    for f, cuts in enumerate(disc.cut_points_):
        assert np.all(np.isfinite(cuts)) and np.all(np.diff(cuts) > 0), names[f]
        column = X[:, f].astype(np.float64)
        order = np.argsort(column, kind="stable")
        values, labels = column[order], y[order]
        for cut in cuts:
            p = np.searchsorted(values, cut, side="right")  # first value above the cut
            a, b = values[p - 1], values[p]
            assert a <= cut < b and cut == a / 2 + b / 2
            at_a = labels[np.searchsorted(values, a) : p]
            at_b = labels[p : np.searchsorted(values, b, side="right")]
            one_class = at_a.min() == at_a.max() == at_b.min() == at_b.max()
            assert not one_class, (names[f], cut)
    codes = disc.transform(X[:1000])
    assert codes.min() >= 0 and np.all(codes.max(axis=0) < disc.n_bins_)
