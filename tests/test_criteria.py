"""``dtjit.criteria`` against textbook numbers, and against the compiled kernels.

The textbook numbers come from ``shared/data/README.md``, which lists the known answers for
the play-tennis tables (Quinlan 1986; Witten & Frank) and for the lecture notes' eight-e-mail
spam example. They are rounded to 4 decimals in bits.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris

import dtjit
from dtjit import criteria

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def _read_csv(relative):
    path = DATA_DIR / relative
    if not path.is_file():
        pytest.skip(f"{path} not found")
    pd = pytest.importorskip("pandas")
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _class_counts(labels, classes):
    labels = np.asarray(labels)
    return [int(np.sum(labels == c)) for c in classes]


# ----------------------------------------------------------------------------------------
# Elementary values
# ----------------------------------------------------------------------------------------


def test_balanced_node():
    assert criteria.entropy([5, 5]) == pytest.approx(1.0, abs=1e-15)
    assert criteria.gini([5, 5]) == pytest.approx(0.5, abs=1e-15)
    assert criteria.entropy([0.5, 0.5]) == pytest.approx(1.0, abs=1e-15)  # weights work too


@pytest.mark.parametrize("counts", [[7, 0], [0, 3], [0, 0, 12], [2.5]])
def test_pure_node(counts):
    assert criteria.entropy(counts) == 0.0
    assert criteria.gini(counts) == 0.0


def test_uniform_over_k_classes():
    for k in (3, 4, 8):
        assert criteria.entropy([6] * k) == pytest.approx(math.log2(k), abs=1e-12)
        assert criteria.gini([6] * k) == pytest.approx(1 - 1 / k, abs=1e-12)


def test_entropy_base():
    assert round(criteria.entropy([7, 7], base=math.e), 4) == 0.6931
    assert criteria.entropy([7, 7], base=math.e) == pytest.approx(math.log(2), abs=1e-15)
    assert criteria.entropy([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], base=10) == pytest.approx(1.0)
    counts = [9, 5]
    assert criteria.entropy(counts, base=math.e) == pytest.approx(
        criteria.entropy(counts) * math.log(2), rel=1e-14
    )
    assert criteria.information_gain([4, 4], [[3, 0], [1, 4]], base=math.e) == pytest.approx(
        criteria.information_gain([4, 4], [[3, 0], [1, 4]]) * math.log(2), rel=1e-14
    )


def test_accepts_numpy_and_returns_float():
    for value in (
        criteria.entropy(np.array([9, 5])),
        criteria.gini(np.array([9.0, 5.0])),
        criteria.information_gain(np.array([4, 4]), np.array([[3, 0], [1, 4]])),
        criteria.gini_gain(np.array([4, 4]), np.array([[3, 0], [1, 4]])),
    ):
        assert isinstance(value, float)
    assert type(criteria.entropy([9, 5])) is float
    assert type(criteria.gini([9, 5])) is float


def test_gains_return_python_float():
    gain = criteria.information_gain([4, 4], [[3, 0], [1, 4]])
    assert type(gain) is float
    assert type(criteria.gini_gain([4, 4], [[3, 0], [1, 4]])) is float
    assert repr(round(gain, 4)) == "0.5488"  # the module docstring's example


def test_gains_of_a_perfect_and_a_useless_split():
    assert criteria.information_gain([6, 6], [[6, 0], [0, 6]]) == pytest.approx(1.0)
    assert criteria.gini_gain([6, 6], [[6, 0], [0, 6]]) == pytest.approx(0.5)
    # Children with the parent's class proportions gain nothing.
    assert criteria.information_gain([6, 3], [[4, 2], [2, 1]]) == pytest.approx(0.0, abs=1e-15)
    assert criteria.gini_gain([6, 3], [[4, 2], [2, 1]]) == pytest.approx(0.0, abs=1e-15)


# ----------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("func", [criteria.entropy, criteria.gini])
def test_negative_counts_rejected(func):
    with pytest.raises(ValueError, match="non-negative"):
        func([3, -1])


@pytest.mark.parametrize("func", [criteria.entropy, criteria.gini])
def test_all_zero_counts_rejected(func):
    with pytest.raises(ValueError, match="all be zero"):
        func([0, 0, 0])


@pytest.mark.parametrize("func", [criteria.entropy, criteria.gini])
@pytest.mark.parametrize("bad", [[], [[1, 2], [3, 4]], [1.0, np.nan], [1.0, np.inf]])
def test_malformed_counts_rejected(func, bad):
    with pytest.raises(ValueError, match="counts"):
        func(bad)


@pytest.mark.parametrize("func", [criteria.information_gain, criteria.gini_gain])
def test_split_errors(func):
    with pytest.raises(ValueError, match="add up to the parent"):
        func([4, 4], [[3, 0], [1, 3]])
    with pytest.raises(ValueError, match="add up to the parent"):
        func([4, 4], [[3, 1], [2, 3]])  # too many
    with pytest.raises(ValueError, match="at least two children"):
        func([4, 4], [[4, 4]])
    with pytest.raises(ValueError, match="at least two children"):
        func([4, 4], [])
    with pytest.raises(ValueError, match="one count per class"):
        func([4, 4], [[3, 1, 0], [1, 3, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        func([4, 4], [[5, 1], [-1, 3]])
    with pytest.raises(ValueError, match="parent counts"):
        func([0, 0], [[0, 0], [0, 0]])


# ----------------------------------------------------------------------------------------
# Textbook examples
# ----------------------------------------------------------------------------------------


def test_play_tennis_numeric_root_entropy():
    """weather.numeric: 9 yes / 5 no gives H(play) = 0.9403 bits. A tree's root impurity
    must say the same."""
    df = _read_csv("weka/weather.numeric.csv")
    counts = _class_counts(df["play"], ["yes", "no"])
    assert counts == [9, 5]
    assert round(criteria.entropy(counts), 4) == 0.9403
    assert round(criteria.gini(counts), 4) == round(1 - (9 / 14) ** 2 - (5 / 14) ** 2, 4)
    X = df[["temperature", "humidity"]].to_numpy(float)
    tree = dtjit.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, df["play"])
    assert tree.tree_.impurity[0] == pytest.approx(criteria.entropy(counts), abs=1e-12)


# Quinlan (1986) Table 1 (weather.nominal): known answers from the data README.
NOMINAL_GAINS = {"outlook": 0.2467, "humidity": 0.1518, "windy": 0.0481, "temperature": 0.0292}
NOMINAL_GINI = {"outlook": 0.1163, "humidity": 0.0918, "windy": 0.0306, "temperature": 0.0187}


def test_play_tennis_nominal_multiway_gains():
    """ID3's multiway information gains and CART's weighted-Gini decreases. outlook wins."""
    df = _read_csv("weka/weather.nominal.csv")
    classes = ["yes", "no"]
    parent = _class_counts(df["play"], classes)
    for attribute, expected in NOMINAL_GAINS.items():
        children = [_class_counts(group["play"], classes) for _, group in df.groupby(attribute)]
        assert round(criteria.information_gain(parent, children), 4) == expected, attribute
        assert round(criteria.gini_gain(parent, children), 4) == NOMINAL_GINI[attribute]
    assert max(NOMINAL_GAINS, key=NOMINAL_GAINS.get) == "outlook"


@pytest.fixture(scope="module")
def spam():
    return _read_csv("textbook/spam_words.csv")


def test_spam_best_word_count_threshold(spam):
    """Scanning all midpoints of word_count: the best is 150, with gain 0.5488 bits."""
    x = spam["word_count"].to_numpy(float)
    classes = ["Yes", "No"]
    labels = spam["spam"].to_numpy()
    parent = _class_counts(labels, classes)
    assert criteria.entropy(parent) == pytest.approx(1.0)
    values = np.unique(x)
    gains = {}
    for low, high in zip(values[:-1], values[1:], strict=True):
        t = (low + high) / 2
        children = [_class_counts(labels[x <= t], classes), _class_counts(labels[x > t], classes)]
        gains[t] = criteria.information_gain(parent, children)
    best = max(gains, key=gains.get)
    assert best == 150.0
    assert round(gains[best], 4) == 0.5488
    assert sorted(gains.values())[-2] < gains[best] - 0.1  # a clear winner
    # By hand: left 3 yes / 0 no, right 1 yes / 4 no.
    assert criteria.information_gain([4, 4], [[3, 0], [1, 4]]) == pytest.approx(gains[best])
    assert criteria.gini_gain([4, 4], [[3, 0], [1, 4]]) == pytest.approx(0.5 - 5 / 8 * 0.32)


def test_spam_other_attributes(spam):
    """contains_free also gains 0.5488. sender_domain's best binary subset gains 0.3113."""
    classes = ["Yes", "No"]
    parent = _class_counts(spam["spam"], classes)
    free = [_class_counts(g["spam"], classes) for _, g in spam.groupby("contains_free")]
    assert round(criteria.information_gain(parent, free), 4) == 0.5488
    is_com = spam["sender_domain"] == "Com"
    subset = [
        _class_counts(spam["spam"][is_com], classes),
        _class_counts(spam["spam"][~is_com], classes),
    ]
    assert round(criteria.information_gain(parent, subset), 4) == 0.3113


def test_spam_tree_root_is_the_textbook_split(spam):
    """A depth-1 entropy tree on word_count splits at 150. Root impurity minus the weighted
    child impurities is 0.5488 bits."""
    X = spam[["word_count"]].to_numpy(float)
    est = dtjit.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, spam["spam"])
    tree = est.tree_
    assert tree.node_count == 3
    assert tree.feature[0] == 0
    assert tree.threshold[0] == 150.0
    w = tree.weighted_n_node_samples
    left, right = tree.children_left[0], tree.children_right[0]
    gain = tree.impurity[0] - (
        w[left] / w[0] * tree.impurity[left] + w[right] / w[0] * tree.impurity[right]
    )
    assert tree.impurity[0] == pytest.approx(1.0, abs=1e-12)
    assert round(gain, 4) == 0.5488
    counts = [tree.value[n, 0] * w[n] for n in (0, left, right)]
    assert gain == pytest.approx(criteria.information_gain(counts[0], counts[1:]), abs=1e-12)
    assert est.predict([[120.0], [180.0]]).tolist() == ["Yes", "No"]


# ----------------------------------------------------------------------------------------
# The compiled kernels agree with the hand formulas
# ----------------------------------------------------------------------------------------

CRITERION_FUNC = {"gini": criteria.gini, "entropy": criteria.entropy, "log_loss": criteria.entropy}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("criterion", ["gini", "entropy", "log_loss"])
@pytest.mark.parametrize("loader", [load_iris, load_breast_cancer], ids=["iris", "breast_cancer"])
def test_compiled_impurity_matches_criteria(loader, criterion, weighted):
    """Every node's impurity equals criteria.gini / criteria.entropy of its weighted class
    counts (value * weighted_n_node_samples)."""
    X, y = loader(return_X_y=True)
    sw = np.random.default_rng(0).uniform(0.5, 3.0, size=len(y)) if weighted else None
    est = dtjit.DecisionTreeClassifier(criterion=criterion).fit(X, y, sample_weight=sw)
    tree = est.tree_
    counts = tree.value[:, 0, :] * tree.weighted_n_node_samples[:, None]
    func = CRITERION_FUNC[criterion]
    expected = np.array([func(c) for c in counts])
    np.testing.assert_allclose(tree.impurity, expected, rtol=1e-12, atol=1e-13)
    # The counts are the real ones: the root holds all of the weight.
    total = np.bincount(y, weights=sw)
    np.testing.assert_allclose(counts[0], total, rtol=1e-12)
    # And every split's gain, from the hand formula, is positive.
    for node in np.flatnonzero(tree.children_left != -1):
        kids = [counts[tree.children_left[node]], counts[tree.children_right[node]]]
        gain = (criteria.gini_gain if criterion == "gini" else criteria.information_gain)(
            counts[node], kids
        )
        assert gain > 0.0


# ----------------------------------------------------------------------------------------
# From label arrays: class_counts, branch_counts, attribute_scores
# ----------------------------------------------------------------------------------------

# Quinlan (1986) Table 1 again: split information and gain ratio from the data README.
NOMINAL_SPLIT_INFO = {
    "outlook": 1.5774,
    "temperature": 1.5567,
    "humidity": 1.0000,
    "windy": 0.9852,
}
NOMINAL_GAIN_RATIO = {"outlook": 0.1564, "humidity": 0.1518, "windy": 0.0488, "temperature": 0.0188}


@pytest.fixture(scope="module")
def weather():
    return _read_csv("weka/weather.nominal.csv")


def test_class_counts_and_branch_counts_from_labels(weather):
    play = weather["play"].to_numpy()
    assert criteria.class_counts(play).tolist() == [5.0, 9.0]  # no, yes (sorted)
    outlook = criteria.branch_counts(weather["outlook"], play)
    # overcast 0 no / 4 yes, rainy 2 / 3, sunny 3 / 2 (Quinlan's Table 1 by hand).
    assert outlook.tolist() == [[0, 4], [2, 3], [3, 2]]
    assert outlook.dtype == np.float64
    np.testing.assert_array_equal(outlook.sum(axis=0), criteria.class_counts(play))
    # Integer labels and integer attributes work the same way.
    assert criteria.class_counts([2, 0, 2, 2]).tolist() == [1.0, 3.0]
    assert criteria.branch_counts([7, 7, 1], [0, 1, 1]).tolist() == [[0, 1], [1, 1]]


def test_play_tennis_from_label_arrays(weather):
    """Gain, split information and gain ratio of every attribute, straight from the table."""
    play = weather["play"].to_numpy()
    parent = criteria.class_counts(play)
    assert round(criteria.entropy(parent), 4) == 0.9403
    for attribute, gain in NOMINAL_GAINS.items():
        children = criteria.branch_counts(weather[attribute].to_numpy(), play)
        assert round(criteria.information_gain(parent, children), 4) == gain, attribute
        assert round(criteria.split_information(children), 4) == NOMINAL_SPLIT_INFO[attribute]
        assert round(criteria.gain_ratio(parent, children), 4) == NOMINAL_GAIN_RATIO[attribute]
        assert criteria.conditional_entropy(children) == pytest.approx(
            criteria.entropy(parent) - criteria.information_gain(parent, children), abs=1e-15
        )
        scores = criteria.attribute_scores(weather[attribute], play)
        assert scores.information_gain == criteria.information_gain(parent, children)
        assert scores.gain_ratio == criteria.gain_ratio(parent, children)
        assert round(scores.gini_gain, 4) == NOMINAL_GINI[attribute]
        assert scores.base == 2.0
    # C4.5 (gain ratio) and ID3 (gain) both choose outlook; the ratio reorders the rest.
    assert max(NOMINAL_GAIN_RATIO, key=NOMINAL_GAIN_RATIO.get) == "outlook"


def test_outlook_split_information_by_hand():
    # Branch sizes 5 / 4 / 5 of 14: -(2 * 5/14 log2(5/14) + 4/14 log2(4/14)) = 1.5774.
    by_hand = -(2 * 5 / 14 * math.log2(5 / 14) + 4 / 14 * math.log2(4 / 14))
    assert criteria.split_information([[3, 2], [4, 0], [2, 3]]) == pytest.approx(by_hand)
    assert round(by_hand, 4) == 1.5774
    # 0.2467 / 1.5774 = 0.1564; the ratio does not depend on the base.
    ratio = criteria.gain_ratio([9, 5], [[2, 3], [4, 0], [3, 2]])
    assert ratio == pytest.approx(criteria.gain_ratio([9, 5], [[2, 3], [4, 0], [3, 2]], "e"))
    assert round(ratio, 4) == 0.1564


def test_fourteen_row_example_in_nats():
    """The notes' 14-row example: 7 / 7 classes, a 3-way split of sizes 8 / 3 / 3."""
    parent, children = [7, 7], [[4, 4], [3, 0], [0, 3]]
    for base in ("e", math.e):
        assert round(criteria.entropy(parent, base=base), 4) == 0.6931
        # 8/14 * ln 2 + 0 + 0 = 0.3961
        assert round(criteria.conditional_entropy(children, base=base), 4) == 0.3961
        assert criteria.conditional_entropy(children, base=base) == pytest.approx(
            8 / 14 * math.log(2), rel=1e-15
        )
        # The notes subtract rounded values: 0.6931 - 0.3961 = 0.2970. Unrounded the gain is
        # 6/14 * ln 2 = 0.29706, which rounds to 0.2971: it agrees to within 1e-4.
        gain = criteria.information_gain(parent, children, base=base)
        assert gain == pytest.approx(0.2970, abs=1e-4)
        assert gain == pytest.approx(6 / 14 * math.log(2), rel=1e-14)
    assert criteria.attribute_scores(
        ["a"] * 8 + ["b"] * 3 + ["c"] * 3, [0] * 4 + [1] * 4 + [0] * 3 + [1] * 3, base="e"
    ).base == pytest.approx(math.e)


def test_spam_multiway_attributes(spam):
    """ID3 multiway splits of the eight e-mails, computed by hand.

    sender_domain: Com 0 yes / 2 no, Edu 2 / 2, Org 2 / 0. H(D | domain) = 4/8 * 1 = 0.5, so
    gain = 1 - 0.5 = 0.5; split info = H(2/8, 4/8, 2/8) = 1.5; ratio = 1/3. Gini: the root is
    0.5, Edu 0.5, the others 0: decrease 0.5 - 4/8 * 0.5 = 0.25.
    contains_free: No 3 / 0, Yes 1 / 4: gain 0.5488 (README); split info H(3/8, 5/8) = 0.9544;
    ratio 0.5750; Gini 0.5 - 5/8 * (1 - 1/25 - 16/25) = 0.3.
    word_count as six categories (40, 60, 100, 200, 300, 800): only 300 is mixed (1 / 2), so
    H(D | x) = 3/8 * H(1/3, 2/3) = 0.3444 and gain 0.6556, the largest; but its split info
    H(1/8 x5, 3/8) = 2.4056 drops the ratio to 0.2725: gain ratio's point.
    """
    y = spam["spam"].to_numpy()
    domain = criteria.attribute_scores(spam["sender_domain"], y)
    assert domain.values.tolist() == ["Com", "Edu", "Org"]
    assert domain.classes.tolist() == ["No", "Yes"]
    assert domain.counts.tolist() == [[2, 0], [2, 2], [0, 2]]
    assert domain.entropy == pytest.approx(1.0)
    assert domain.conditional_entropy == pytest.approx(0.5)
    assert domain.information_gain == pytest.approx(0.5)
    assert domain.split_information == pytest.approx(1.5)
    assert domain.gain_ratio == pytest.approx(1 / 3)
    assert domain.gini_gain == pytest.approx(0.25)

    free = criteria.attribute_scores(spam["contains_free"], y)
    assert round(free.information_gain, 4) == 0.5488
    assert round(free.split_information, 4) == 0.9544
    assert round(free.gain_ratio, 4) == 0.5750
    assert free.gini_gain == pytest.approx(0.3)

    words = criteria.attribute_scores(spam["word_count"], y)
    assert round(words.conditional_entropy, 4) == 0.3444
    assert round(words.information_gain, 4) == 0.6556
    assert round(words.split_information, 4) == 2.4056
    assert round(words.gain_ratio, 4) == 0.2725
    assert words.information_gain > free.information_gain > domain.information_gain
    assert free.gain_ratio > domain.gain_ratio > words.gain_ratio


def test_weighted_labels_equal_repeated_rows(weather):
    rng = np.random.default_rng(3)
    repeats = rng.integers(1, 4, size=len(weather))
    x, y = weather["outlook"].to_numpy(), weather["play"].to_numpy()
    np.testing.assert_array_equal(
        criteria.class_counts(y, sample_weight=repeats),
        criteria.class_counts(np.repeat(y, repeats)),
    )
    np.testing.assert_array_equal(
        criteria.branch_counts(x, y, sample_weight=repeats),
        criteria.branch_counts(np.repeat(x, repeats), np.repeat(y, repeats)),
    )
    weighted = criteria.attribute_scores(x, y, sample_weight=repeats)
    repeated = criteria.attribute_scores(np.repeat(x, repeats), np.repeat(y, repeats))
    assert weighted.gain_ratio == pytest.approx(repeated.gain_ratio, rel=1e-14)
    # Fractional weights are counts too.
    assert criteria.class_counts(["a", "b", "a"], sample_weight=[0.5, 2.0, 0.25]).tolist() == [
        0.75,
        2.0,
    ]


def test_label_helpers_errors():
    with pytest.raises(ValueError, match="different lengths"):
        criteria.branch_counts([1, 2, 3], [0, 1])
    with pytest.raises(ValueError, match="sample_weight has shape"):
        criteria.class_counts([0, 1], sample_weight=[1.0])
    with pytest.raises(ValueError, match="non-negative"):
        criteria.class_counts([0, 1], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="empty"):
        criteria.class_counts([])
    with pytest.raises(ValueError, match="empty"):
        criteria.branch_counts([], [])
    with pytest.raises(ValueError, match="1-D"):
        criteria.class_counts([[0, 1]])
    with pytest.raises(ValueError, match="missing"):
        criteria.branch_counts([1.0, np.nan], [0, 1])
    with pytest.raises(ValueError, match="missing"):
        criteria.branch_counts(np.array(["a", None], dtype=object), [0, 1])
    with pytest.raises(ValueError, match="single distinct value"):
        criteria.attribute_scores(["a", "a"], [0, 1])


def test_partition_measures_errors():
    with pytest.raises(ValueError, match="at least one branch"):
        criteria.conditional_entropy([])
    with pytest.raises(ValueError, match="at least two children"):
        criteria.split_information([[3, 4]])
    with pytest.raises(ValueError, match="one count per class"):
        criteria.conditional_entropy([[1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        criteria.gain_ratio([3, 3], [[4, 1], [-1, 2]])
    with pytest.raises(ValueError, match="add up to the parent"):
        criteria.gain_ratio([3, 3], [[1, 1], [1, 1]])
    # A single branch is a (useless) partition: H(Y | X) = H(Y).
    assert criteria.conditional_entropy([[9, 5]]) == criteria.entropy([9, 5])


@pytest.mark.parametrize("base", [1, 0, -2.0, "two", np.nan, np.inf])
def test_bad_base_rejected(base):
    with pytest.raises(ValueError, match="base"):
        criteria.entropy([1, 2], base=base)
    with pytest.raises(ValueError, match="base"):
        criteria.information_gain([2, 2], [[1, 1], [1, 1]], base=base)


def test_base_must_be_a_number():
    with pytest.raises(TypeError, match="base"):
        criteria.conditional_entropy([[1, 2]], base=None)
    with pytest.raises(TypeError, match="base"):
        criteria.entropy([1, 2], base=True)
