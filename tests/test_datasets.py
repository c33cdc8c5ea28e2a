"""The tables shipped in ``dtjit.datasets``: shapes, dtypes, textbook values, the trees they give.

The known values are those the textbooks print (Quinlan 1986 for play tennis; the spam example's
lecture notes; the palmerpenguins documentation for the penguins' counts), so a file that was
changed, cut short or read with the wrong missing-value rules fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dtjit
from dtjit import criteria, datasets
from dtjit.datasets.__main__ import main as datasets_main

LOADERS = {
    "play_tennis": lambda **kw: datasets.load_play_tennis(**kw),
    "play_tennis_numeric": lambda **kw: datasets.load_play_tennis(numeric=True, **kw),
    "spam_words": datasets.load_spam_words,
    "penguins": datasets.load_penguins,
}
SHAPES = {
    "play_tennis": (14, 5),
    "play_tennis_numeric": (14, 5),
    "spam_words": (8, 4),
    "penguins": (344, 7),
}
TARGETS = {
    "play_tennis": "play",
    "play_tennis_numeric": "play",
    "spam_words": "spam",
    "penguins": "species",
}


def test_names_list_every_loader():
    assert datasets.names() == sorted(LOADERS)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_shape_and_target(name):
    frame = LOADERS[name]()
    assert isinstance(frame, pd.DataFrame)
    assert frame.shape == SHAPES[name]
    X, y = LOADERS[name](return_X_y=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert y.name == TARGETS[name]
    assert list(X.columns) == [c for c in frame.columns if c != TARGETS[name]]
    assert X.shape == (SHAPES[name][0], SHAPES[name][1] - 1)
    assert y.notna().all()


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_arrays_match_the_frame(name):
    X_frame, y_frame = LOADERS[name](return_X_y=True)
    X, y = LOADERS[name](return_X_y=True, as_frame=False)
    assert X.dtype == np.float64 and X.shape == X_frame.shape
    assert y.dtype == object and list(y) == list(y_frame)
    for j, column in enumerate(X_frame.columns):
        values = X_frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            expected = values.cat.codes.to_numpy(np.float64)
            expected[expected < 0] = np.nan
        else:
            expected = values.to_numpy(np.float64)
        np.testing.assert_array_equal(X[:, j], expected, err_msg=column)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_the_whole_table_is_a_frame_only(name):
    with pytest.raises(ValueError, match="as_frame=False needs return_X_y=True"):
        LOADERS[name](as_frame=False)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_csv_path_is_the_shipped_file(name):
    path = datasets.csv_path(name)
    assert path.is_absolute() and path.is_file() and path.suffix == ".csv"
    assert path.parent == Path(datasets.__file__).resolve().parent / "data"
    raw = pd.read_csv(path, keep_default_na=False, na_values=[""])
    assert raw.shape == SHAPES[name]


def test_shipped_files_stay_small():
    data = Path(datasets.__file__).resolve().parent / "data"
    files = sorted(data.glob("*.csv"))
    assert [f.stem for f in files] == sorted(LOADERS)
    assert sum(f.stat().st_size for f in files) < 200_000


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="no shipped table named 'iris'.*penguins"):
        datasets.csv_path("iris")


def test_play_tennis_nominal():
    weather = datasets.load_play_tennis()
    assert list(weather.columns) == ["outlook", "temperature", "humidity", "windy", "play"]
    for column, categories in {
        "outlook": ["sunny", "overcast", "rainy"],
        "temperature": ["hot", "mild", "cool"],
        "humidity": ["high", "normal"],
    }.items():
        assert isinstance(weather[column].dtype, pd.CategoricalDtype)
        assert list(weather[column].cat.categories) == categories
    assert weather["windy"].dtype == bool
    assert weather["windy"].sum() == 6
    assert weather["play"].value_counts().to_dict() == {"yes": 9, "no": 5}
    # D1 and D14 of Quinlan's Table 1
    assert weather.iloc[0].tolist() == ["sunny", "hot", "high", False, "no"]
    assert weather.iloc[13].tolist() == ["rainy", "mild", "high", True, "no"]


def test_play_tennis_information_gains_are_quinlans():
    weather = datasets.load_play_tennis()
    parent = criteria.class_counts(weather["play"])
    assert criteria.entropy(parent) == pytest.approx(0.9403, abs=5e-5)
    gains = {
        a: criteria.information_gain(parent, criteria.branch_counts(weather[a], weather["play"]))
        for a in ["outlook", "temperature", "humidity", "windy"]
    }
    expected = {"outlook": 0.2467, "humidity": 0.1518, "windy": 0.0481, "temperature": 0.0292}
    assert gains == pytest.approx(expected, abs=5e-5)
    assert max(gains, key=gains.get) == "outlook"  # ID3's root split


def test_play_tennis_tree_splits_the_root_on_outlook():
    X, y = datasets.load_play_tennis(return_X_y=True)
    clf = dtjit.DecisionTreeClassifier(criterion="entropy", categorical_features="from_dtype").fit(
        X, y
    )
    root = clf.tree_.feature[0]
    assert X.columns[root] == "outlook"
    # The binary split of largest gain: overcast (always play) against sunny and rainy.
    assert "outlook in {overcast}" in dtjit.export_text(clf, feature_names=list(X.columns))
    assert clf.score(X, y) == 1.0


def test_play_tennis_numeric():
    X, y = datasets.load_play_tennis(numeric=True, return_X_y=True)
    assert X["temperature"].dtype.kind == "i" and X["humidity"].dtype.kind == "i"
    assert X["temperature"].tolist()[:3] == [85, 80, 83]
    assert X["humidity"].tolist()[:3] == [85, 90, 86]
    assert (X["temperature"].min(), X["temperature"].max()) == (64, 85)
    nominal = datasets.load_play_tennis()
    # The same days: outlook, windy and play agree row by row.
    for column in ["outlook", "windy"]:
        assert X[column].tolist() == nominal[column].tolist()
    assert y.tolist() == nominal["play"].tolist()


def test_spam_words_known_gains():
    spam = datasets.load_spam_words()
    assert spam["word_count"].tolist() == [100, 200, 800, 60, 40, 300, 300, 300]
    assert list(spam["sender_domain"].cat.categories) == ["Edu", "Com", "Org"]
    assert spam["contains_free"].dtype == bool
    scan = criteria.split_scan(spam["word_count"], spam["spam"])
    assert scan.entropy_total == pytest.approx(1.0)
    assert scan.best_threshold == 150
    assert scan.best_gain == pytest.approx(0.5488, abs=5e-5)
    parent = criteria.class_counts(spam["spam"])
    free = criteria.branch_counts(spam["contains_free"], spam["spam"])
    assert criteria.information_gain(parent, free) == pytest.approx(0.5488, abs=5e-5)
    # CART's best subset of sender_domain: {Com} against {Edu, Org}.
    is_com = (spam["sender_domain"] == "Com").to_numpy()
    subset = criteria.branch_counts(is_com, spam["spam"])
    assert criteria.information_gain(parent, subset) == pytest.approx(0.3113, abs=5e-5)


def test_penguins_counts_and_missing_values():
    penguins = datasets.load_penguins()
    assert penguins["species"].value_counts().to_dict() == {
        "Adelie": 152,
        "Gentoo": 124,
        "Chinstrap": 68,
    }
    assert penguins["island"].value_counts().to_dict() == {
        "Biscoe": 168,
        "Dream": 124,
        "Torgersen": 52,
    }
    assert list(penguins["sex"].cat.categories) == ["FEMALE", "MALE"]
    assert penguins.isna().sum().to_dict() == {
        "species": 0,
        "island": 0,
        "culmen_length_mm": 2,
        "culmen_depth_mm": 2,
        "flipper_length_mm": 2,
        "body_mass_g": 2,
        "sex": 11,
    }
    numeric = ["culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"]
    assert all(penguins[c].dtype == np.float64 for c in numeric)
    assert penguins["body_mass_g"].agg(["min", "max"]).tolist() == [2700.0, 6300.0]
    assert penguins.iloc[0, :3].tolist() == ["Adelie", "Torgersen", 39.1]


def test_penguins_tree_with_categories_and_missing_values():
    X, y = datasets.load_penguins(return_X_y=True)
    clf = dtjit.DecisionTreeClassifier(
        categorical_features="from_dtype", max_depth=3, random_state=0
    ).fit(X, y)
    assert clf.score(X, y) > 0.95
    assert set(clf.classes_) == {"Adelie", "Chinstrap", "Gentoo"}


def test_module_prints_paths(capsys):
    # In this process (``python -m dtjit.datasets penguins`` itself runs in tests/test_readme.py).
    assert datasets_main([]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in listing] == datasets.names()
    assert datasets_main(["penguins"]) == 0
    assert Path(capsys.readouterr().out.strip()) == datasets.csv_path("penguins")
    # A child process: the status reaches the shell.
    bad = subprocess.run(
        [sys.executable, "-m", "dtjit.datasets", "nope"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "no shipped table named 'nope'" in bad.stderr
