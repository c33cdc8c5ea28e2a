"""The ``dtjit`` command line: fit / predict / show / bench end to end, and every error path.

Most tests call ``dtjit.cli.main([...])`` in-process (fast); a few run the installed ``dtjit``
script and ``python -m dtjit`` to check exit codes and stderr as a user sees them.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _assertions import assert_trees_identical
from conftest import read_adult
from sklearn.datasets import load_iris

import dtjit
import dtjit.export
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor
from dtjit.cli import AUTO_MAX_CLASSES, infer_task, main

DTJIT_SCRIPT = Path(sys.executable).with_name("dtjit")
WEATHER_FEATURES = ["temperature", "humidity", "windy"]


def run(capsys, *argv):
    """Run the command in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_failed(code, err, match, *, output=None):
    """A clean failure: non-zero status, one error line, no output file, no temp files left."""
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dtjit: error: "), err
    assert match in lines[0], lines[0]
    if output is not None:
        output = Path(output)
        assert not output.exists()
        if output.parent.is_dir():
            assert not [p.name for p in output.parent.iterdir() if p.name.endswith(".tmp")]


def no_temp_files(directory):
    return not [p.name for p in Path(directory).iterdir() if p.name.endswith(".tmp")]


# -- data ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def weather_csv(shared_data):
    return shared_data / "weka" / "weather.numeric.csv"


@pytest.fixture(scope="module")
def weather_model(weather_csv, tmp_path_factory):
    """A classifier fitted by the CLI on weather.numeric (numeric columns, string labels)."""
    path = tmp_path_factory.mktemp("weather") / "weather.npz"
    assert (
        main(["fit", str(weather_csv), "--target", "play", "--drop", "outlook", "-o", str(path)])
        == 0
    )
    return path


@pytest.fixture(scope="module")
def covtype_files(covtype_table, tmp_path_factory):
    """Covertype rows as CSV: 4,000 training rows, 30,000 other rows with shuffled columns."""
    X, y, names = covtype_table
    rows = np.random.default_rng(7).permutation(X.shape[0])
    directory = tmp_path_factory.mktemp("covtype")
    train = pd.DataFrame(X[rows[:4000]], columns=names).assign(Cover_Type=y[rows[:4000]])
    train.to_csv(directory / "train.csv", index=False)
    test = pd.DataFrame(X[rows[4000:34000]], columns=names).assign(Cover_Type=y[rows[4000:34000]])
    shuffled = list(np.random.default_rng(8).permutation(test.columns))
    test[shuffled].to_csv(directory / "test.csv", index=False)
    return directory, X[rows[4000:34000]]


# -- fit -------------------------------------------------------------------------------------
def test_fit_on_a_real_csv_matches_the_estimator(capsys, weather_csv, tmp_path):
    model_path = tmp_path / "weather.npz"
    code, out, err = run(
        capsys, "fit", weather_csv, "--target", "play", "--drop", "outlook", "-o", model_path
    )
    assert code == 0, err
    model = dtjit.load(model_path)
    table = pd.read_csv(weather_csv)
    direct = DecisionTreeClassifier().fit(table[WEATHER_FEATURES], table["play"])
    assert_trees_identical(model.tree_, direct.tree_)
    assert list(model.feature_names_in_) == WEATHER_FEATURES
    assert list(model.classes_) == ["no", "yes"]
    assert "14 rows, 3 features" in out
    assert f"{direct.tree_.node_count} nodes" in out and f"depth {direct.get_depth()}" in out
    assert "2 classes (no, yes)" in out and "training accuracy 1.0000" in out
    assert os.listdir(tmp_path) == ["weather.npz"]


def test_fit_regression_on_cpu_is_chosen_automatically(capsys, shared_data, tmp_path):
    cpu = shared_data / "weka" / "cpu.csv"
    code, out, err = run(
        capsys, "fit", cpu, "--target", "class", "--max-depth", "4", "-o", tmp_path / "cpu.npz"
    )
    assert code == 0, err
    model = dtjit.load(tmp_path / "cpu.npz")
    assert isinstance(model, DecisionTreeRegressor)
    table = pd.read_csv(cpu)
    X, y = table.drop(columns="class"), table["class"]
    direct = DecisionTreeRegressor(max_depth=4).fit(X, y)
    assert_trees_identical(model.tree_, direct.tree_)
    assert f"training R2 {direct.score(X, y):.4f}" in out and "; regression (--task auto)" in out


def test_fit_passes_parameters_to_the_estimator(capsys, weather_csv, tmp_path):
    argv = ["fit", weather_csv, "--target", "play", "--drop", "outlook", "-o", tmp_path / "m.npz"]
    options = [
        "--criterion", "entropy", "--max-depth", "3", "--min-samples-leaf", "0.1",
        "--min-samples-split", "3", "--max-features", "sqrt", "--random-state", "5",
        "--class-weight", "balanced", "--max-leaf-nodes", "6", "--n-jobs", "1",
    ]  # fmt: skip
    code, _, err = run(capsys, *argv, *options)
    assert code == 0, err
    params = dtjit.load(tmp_path / "m.npz").get_params()
    assert params["criterion"] == "entropy" and params["max_depth"] == 3
    assert params["min_samples_leaf"] == 0.1 and params["min_samples_split"] == 3
    assert params["max_features"] == "sqrt" and params["random_state"] == 5
    assert params["class_weight"] == "balanced" and params["max_leaf_nodes"] == 6


def test_fit_passes_splitter_bins_and_pruning(capsys, weather_csv, tmp_path):
    argv = ["fit", weather_csv, "--target", "play", "--drop", "outlook", "-o", tmp_path / "m.npz"]
    options = ["--splitter", "hist", "--max-bins", "4", "--ccp-alpha", "0.02"]
    code, _, err = run(capsys, *argv, *options)
    assert code == 0, err
    params = dtjit.load(tmp_path / "m.npz").get_params()
    assert params["splitter"] == "hist" and params["max_bins"] == 4
    assert params["ccp_alpha"] == 0.02


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (["--max-depth", "0"], "'max_depth' parameter"),
        (["--criterion", "squared_error"], "'criterion' parameter"),
        (["--min-samples-leaf", "1.5"], "'min_samples_leaf' parameter"),
        (["--max-features", "cube"], "'max_features' parameter"),
        (["--splitter", "exact"], "'splitter' parameter"),
        (["--task", "regression", "--class-weight", "balanced"], "classification only"),
    ],
)
def test_fit_lets_parameter_errors_through(capsys, weather_csv, tmp_path, options, match):
    output = tmp_path / "m.npz"
    code, _, err = run(
        capsys, "fit", weather_csv, "--target", "play", "--drop", "outlook", "-o", output, *options
    )
    assert code == 1
    assert_failed(code, err, match, output=output)


def test_fit_reads_npy_with_a_target_column_or_a_target_file(capsys, tmp_path):
    X, y = load_iris(return_X_y=True)
    np.save(tmp_path / "iris.npy", np.column_stack([y, X]))  # target first
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y.astype(np.int64))
    direct = DecisionTreeClassifier().fit(X, y)
    for args in (["iris.npy", "--target", "0"], ["X.npy", "--target-file", "y.npy"]):
        args = [tmp_path / a if a.endswith(".npy") else a for a in args]
        code, out, err = run(capsys, "fit", *args, "-o", tmp_path / "m.npz")
        assert code == 0, err
        model = dtjit.load(tmp_path / "m.npz")
        assert_trees_identical(model.tree_, direct.tree_)
        assert not hasattr(model, "feature_names_in_")
        assert "150 rows, 4 features" in out and "3 classes" in out


def test_fit_reads_npz_with_default_or_named_arrays(capsys, tmp_path):
    X, y = load_iris(return_X_y=True)
    np.savez(tmp_path / "default.npz", X=X, y=y)
    np.savez_compressed(tmp_path / "named.npz", features=X, labels=y)
    direct = DecisionTreeClassifier().fit(X, y)
    for args in (["default.npz"], ["named.npz", "--x-key", "features", "--y-key", "labels"]):
        code, _, err = run(capsys, "fit", tmp_path / args[0], *args[1:], "-o", tmp_path / "m.npz")
        assert code == 0, err
        assert_trees_identical(dtjit.load(tmp_path / "m.npz").tree_, direct.tree_)
    output = tmp_path / "none.npz"
    code, _, err = run(capsys, "fit", tmp_path / "named.npz", "-o", output)
    assert_failed(
        code, err, "no array 'X', 'y'; its arrays are: 'features', 'labels'", output=output
    )


def test_fit_on_parquet_equals_fit_on_csv(capsys, shared_data, tmp_path):
    pytest.importorskip("pyarrow")
    table = pd.read_csv(shared_data / "penguins.csv").drop(columns=["island", "sex"]).dropna()
    table.to_csv(tmp_path / "penguins.csv", index=False)
    table.to_parquet(tmp_path / "penguins.parquet")
    models = []
    for name in ("penguins.csv", "penguins.parquet"):
        code, _, err = run(
            capsys, "fit", tmp_path / name, "--target", "species", "-o", tmp_path / f"{name}.npz"
        )
        assert code == 0, err
        models.append(dtjit.load(tmp_path / f"{name}.npz"))
    assert_trees_identical(models[0].tree_, models[1].tree_)
    assert list(models[1].feature_names_in_) == list(table.columns.drop("species"))
    assert list(models[1].classes_) == ["Adelie", "Chinstrap", "Gentoo"]


def test_fit_inf_error_of_the_estimator_comes_through_on_one_line(capsys, shared_data, tmp_path):
    """Empty cells are missing values (fit accepts them); an infinite value is an error."""
    output = tmp_path / "m.npz"
    table = pd.read_csv(shared_data / "penguins.csv").drop(columns=["island", "sex"])
    table.loc[5, "culmen_length_mm"] = np.inf
    table.to_csv(tmp_path / "penguins.csv", index=False)
    code, _, err = run(
        capsys, "fit", tmp_path / "penguins.csv", "--target", "species", "-o", output
    )
    assert_failed(code, err, "Input X contains infinity", output=output)


@pytest.mark.parametrize(
    ("make_args", "match"),
    [
        (lambda d, w: ["fit", d / "missing.csv", "--target", "play"], "DATA file not found"),
        (lambda d, w: ["fit", w, "--target", "Play"], "target column 'Play' not found"),
        (lambda d, w: ["fit", w, "--target", "play"], "non-numeric feature column(s) 'outlook'"),
        (lambda d, w: ["fit", w, "--target", "play", "--drop", "nope"], "--drop: no column 'nope'"),
        (lambda d, w: ["fit", w], "needs --target COLUMN"),
        (lambda d, w: ["fit", d / "data.txt", "--target", "play"], "unsupported file type '.txt'"),
        (lambda d, w: ["fit", d / "text.npy", "--target", "0"], "cannot read"),
        (lambda d, w: ["fit", d / "text.npz"], "cannot read"),
        (lambda d, w: ["fit", d / "text.parquet", "--target", "a"], "cannot read"),
        (lambda d, w: ["fit", d / "X.npy"], "no target given"),
        (lambda d, w: ["fit", d / "X.npy", "--target", "4"], "out of range"),
        (lambda d, w: ["fit", d / "X.npy", "--target", "sepal"], "must be a column index"),
        (
            lambda d, w: ["fit", d / "X.npy", "--target-file", d / "short.npy"],
            "2 values for 150 rows",
        ),
        (lambda d, w: ["fit", d / "X.npy", "--drop", "a", "--target", "0"], "does not apply"),
        (lambda d, w: ["fit", w, "--target", "play", "--target-file", d / "short.npy"], "not both"),
        (lambda d, w: ["fit", d / "header.csv", "--target", "y"], "header.csv: no rows to fit on"),
    ],
)
def test_fit_errors(capsys, tmp_path, weather_csv, make_args, match):
    pytest.importorskip("pyarrow")
    np.save(tmp_path / "X.npy", load_iris().data)
    np.save(tmp_path / "short.npy", np.arange(2))
    for name in ("data.txt", "text.npy", "text.npz", "text.parquet"):
        (tmp_path / name).write_text("a,b\n1,2\n")
    (tmp_path / "header.csv").write_text("a,b,y\n")
    output = tmp_path / "out" / "m.npz"
    output.parent.mkdir()
    code, _, err = run(capsys, *make_args(tmp_path, weather_csv), "-o", output)
    assert code == 1
    assert_failed(code, err, match, output=output)
    assert os.listdir(output.parent) == []


def test_fit_refuses_a_missing_output_directory_before_fitting(capsys, weather_csv, tmp_path):
    output = tmp_path / "no" / "such" / "m.npz"
    code, _, err = run(capsys, "fit", weather_csv, "--target", "play", "-o", output)
    assert_failed(code, err, "output directory does not exist", output=output)


def test_parquet_without_pyarrow_names_the_install_command(
    capsys, monkeypatch, tmp_path, weather_model
):
    pytest.importorskip("pyarrow")
    table = pd.DataFrame(
        {"temperature": [70.0], "humidity": [80.0], "windy": [True], "play": ["yes"]}
    )
    table.to_parquet(tmp_path / "t.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow...` fail
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    code, _, err = run(
        capsys, "fit", tmp_path / "t.parquet", "--target", "play", "-o", tmp_path / "m.npz"
    )
    assert_failed(code, err, "pip install pyarrow", output=tmp_path / "m.npz")
    output = tmp_path / "p.parquet"
    code, _, err = run(capsys, "predict", weather_model, tmp_path / "t.parquet", "-o", output)
    assert_failed(code, err, "pip install pyarrow", output=output)


@pytest.mark.parametrize(
    ("values", "task"),
    [
        (np.array(["a", "b", "a"], dtype=object), "classification"),
        (np.array([True, False, True]), "classification"),
        (np.arange(AUTO_MAX_CLASSES) % 7, "classification"),
        (np.arange(AUTO_MAX_CLASSES), "classification"),
        (np.arange(AUTO_MAX_CLASSES + 1), "regression"),
        (np.array([0.0, 1.0, 1.0, 2.0]), "classification"),
        (np.array([0.0, 0.5, 1.0]), "regression"),
        (np.array([0.0, np.nan, 1.0]), "regression"),
    ],
)
def test_infer_task(values, task):
    assert infer_task(values) == task


# -- predict ---------------------------------------------------------------------------------
def test_predict_covtype_csv_by_column_name_to_every_format(capsys, covtype_files):
    pytest.importorskip("pyarrow")
    directory, X_test = covtype_files
    model_path = directory / "model.npz"
    code, _, err = run(
        capsys, "fit", directory / "train.csv", "--target", "Cover_Type", "-o", model_path
    )
    assert code == 0, err
    model = dtjit.load(model_path)
    assert len(model.feature_names_in_) == 54 and list(model.classes_) == list(range(1, 8))
    X_named = pd.DataFrame(X_test, columns=model.feature_names_in_)
    expected = model.predict(X_named)
    expected_proba = model.predict_proba(X_named)
    for name in ("p.csv", "p.parquet", "p.npy", "proba.csv", "proba.parquet", "proba.npy"):
        output = directory / name
        proba = ["--proba"] if name.startswith("proba") else []
        code, out, err = run(
            capsys,
            "predict",
            model_path,
            directory / "test.csv",
            "-o",
            output,
            "--block-rows",
            7000,
            *proba,
        )
        assert code == 0, err
        assert "predicted 30000 rows" in out
        if name.endswith(".npy"):
            result = np.load(output)
        elif name.endswith(".csv"):
            result = pd.read_csv(output).to_numpy()
        else:
            result = pd.read_parquet(output).to_numpy()
        if proba:
            np.testing.assert_array_equal(result, expected_proba)
            if not name.endswith(".npy"):
                columns = (
                    pd.read_csv(output, nrows=0).columns
                    if name.endswith(".csv")
                    else pd.read_parquet(output).columns
                )
                assert list(columns) == [str(c) for c in model.classes_]
        else:
            np.testing.assert_array_equal(result.ravel(), expected)
    assert no_temp_files(directory)


ADULT_TEXT = ["workclass", "education", "marital-status", "occupation", "relationship", "race",
              "sex", "native-country", "age-band"]  # fmt: skip


def _adult_csv(shared_data, part, **kw):
    df = read_adult(shared_data, part, **kw)
    # Text codes that look like numbers: a block holding only "07" and "7" must still read
    # as text (pandas would parse both as 7), or its rows would all be unseen categories.
    # The column tells the income below age 60, so the tree splits on it.
    df["age-band"] = np.where(df["age"] >= 60, "A1", np.where(df["income"] == ">50K", "7", "07"))
    return df


def test_fit_predict_show_with_text_categories_on_adult(capsys, shared_data, tmp_path):
    """Text categorical columns: fit maps them, predict applies the model's mapping block by
    block (unseen values go where NaN goes), show prints the category subsets."""
    train = _adult_csv(shared_data, "data", nrows=4000)
    test = _adult_csv(shared_data, "test", nrows=1500)
    test.loc[test.index[::50], "native-country"] = "Atlantis"  # unseen in fit
    test.loc[test.index[::37], "workclass"] = np.nan  # an empty cell
    test = test.sort_values("age", kind="stable")  # first blocks: only "07" / "7" age bands
    train.to_csv(tmp_path / "train.csv", index=False)
    shuffled = list(np.random.default_rng(0).permutation(test.columns))
    test[shuffled].to_csv(tmp_path / "test.csv", index=False)
    model_path = tmp_path / "adult.npz"
    code, out, err = run(capsys, "fit", tmp_path / "train.csv", "--target", "income",
                         "--categorical", ",".join(ADULT_TEXT), "--max-depth", 8,
                         "-o", model_path)  # fmt: skip
    assert code == 0, err
    model = dtjit.load(model_path)
    direct = DecisionTreeClassifier(max_depth=8, categorical_features=ADULT_TEXT)
    direct.fit(pd.read_csv(tmp_path / "train.csv").drop(columns="income"), train["income"])
    assert_trees_identical(model.tree_, direct.tree_)
    assert list(model.categories_[-1]) == ["07", "7", "A1"]
    features = test.drop(columns="income")
    expected = model.predict(features)
    expected_proba = model.predict_proba(features)
    assert (expected == test["income"].to_numpy()).mean() > 0.8
    for name, extra in (("p.csv", []), ("proba.npy", ["--proba"])):
        code, out, err = run(capsys, "predict", model_path, tmp_path / "test.csv", "-o",
                             tmp_path / name, "--block-rows", 97, *extra)  # fmt: skip
        assert code == 0, err
        assert "predicted 1500 rows" in out
        if extra:
            np.testing.assert_array_equal(np.load(tmp_path / name), expected_proba)
        else:
            result = pd.read_csv(tmp_path / name)["prediction"].to_numpy()
            np.testing.assert_array_equal(result, expected)
    # The unseen country and the empty cells take the NaN route, as in the estimator.
    unseen = features.loc[features["native-country"] == "Atlantis"].copy()
    as_missing = unseen.assign(**{"native-country": np.nan})
    np.testing.assert_array_equal(model.apply(unseen), model.apply(as_missing))
    code, out, err = run(capsys, "show", model_path, "--format", "rules")
    assert code == 0, err
    assert any(f"{c} in {{" in out for c in ADULT_TEXT)


def test_predict_large_npy_in_blocks_read_not_mapped(capsys, tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    n_rows, n_features, block_rows = 1_500_000, 8, 200_000
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + 0.3 * rng.normal(size=n_rows) > 0).astype(int)
    np.savez(tmp_path / "train.npz", X=X[:20_000], y=y[:20_000])
    np.save(tmp_path / "big.npy", X)
    code, _, err = run(capsys, "fit", tmp_path / "train.npz", "-o", tmp_path / "m.npz")
    assert code == 0, err

    blocks = []
    original = DecisionTreeClassifier.predict

    def spy(self, block):
        blocks.append((type(block), block.shape))
        return original(self, block)

    monkeypatch.setattr(DecisionTreeClassifier, "predict", spy)
    output = tmp_path / "pred.npy"
    code, _, err = run(
        capsys,
        "predict",
        tmp_path / "m.npz",
        tmp_path / "big.npy",
        "-o",
        output,
        "--block-rows",
        block_rows,
    )
    assert code == 0, err
    # Every block is read into an array of its own (no memory map, whose pages would stay
    # resident), never the whole array.
    assert all(kind is np.ndarray and shape[0] <= block_rows for kind, shape in blocks)
    assert sum(shape[0] for _, shape in blocks) == n_rows and len(blocks) == 8
    monkeypatch.undo()
    expected = dtjit.load(tmp_path / "m.npz").predict(X)
    result = np.load(output, mmap_mode="r")
    assert result.shape == (n_rows,) and result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)
    assert sorted(os.listdir(tmp_path)) == ["big.npy", "m.npz", "pred.npy", "train.npz"]


def test_predict_string_labels_and_regression_values(
    capsys, weather_csv, weather_model, shared_data, tmp_path
):
    table = pd.read_csv(weather_csv)
    model = dtjit.load(weather_model)
    code, _, err = run(
        capsys, "predict", weather_model, weather_csv, "-o", tmp_path / "w.npy", "-q"
    )
    assert code == 0, err
    labels = np.load(tmp_path / "w.npy")
    assert labels.dtype.kind == "U"
    np.testing.assert_array_equal(labels, model.predict(table[WEATHER_FEATURES]))

    cpu = shared_data / "weka" / "cpu.csv"
    assert main(["fit", str(cpu), "--target", "class", "-o", str(tmp_path / "cpu.npz")]) == 0
    capsys.readouterr()
    code, out, err = run(
        capsys, "predict", tmp_path / "cpu.npz", cpu, "-o", tmp_path / "cpu.csv", "--quiet"
    )
    assert code == 0 and out == "", err
    regressor = dtjit.load(tmp_path / "cpu.npz")
    expected = regressor.predict(pd.read_csv(cpu).drop(columns="class"))
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "cpu.csv")["prediction"], expected)


def test_predict_header_only_csv_writes_empty_outputs(capsys, weather_model, tmp_path):
    (tmp_path / "empty.csv").write_text(",".join(WEATHER_FEATURES) + "\n")
    for name in ("e.csv", "e.npy"):
        code, _, err = run(
            capsys, "predict", weather_model, tmp_path / "empty.csv", "-o", tmp_path / name
        )
        assert code == 0, err
    assert list(pd.read_csv(tmp_path / "e.csv").columns) == ["prediction"]
    assert np.load(tmp_path / "e.npy").shape == (0,)


def test_predict_progress_bar_only_on_a_terminal(
    capsys, monkeypatch, weather_csv, weather_model, tmp_path
):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for quiet, shown in (([], True), (["--quiet"], False)):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert (
            main(
                [
                    "predict",
                    str(weather_model),
                    str(weather_csv),
                    "-o",
                    str(tmp_path / "p.csv"),
                    *quiet,
                ]
            )
            == 0
        )
        # a CSV's row count is unknown: the bar counts its bytes, with the file size as total
        size = os.path.getsize(weather_csv)
        bar = terminal.getvalue()
        assert (f"| {size}/{size} [" in bar and "B/s]" in bar) == shown, bar
    monkeypatch.undo()
    assert (
        main(["predict", str(weather_model), str(weather_csv), "-o", str(tmp_path / "p.csv")]) == 0
    )
    assert capsys.readouterr().err == ""  # not a terminal: no bar


@pytest.fixture
def iris_model(tmp_path):
    """A classifier without feature names (fitted on .npy) and data files around it."""
    X, y = load_iris(return_X_y=True)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "X5.npy", np.column_stack([X, y]))
    pd.DataFrame(X, columns=list("abcd")).to_csv(tmp_path / "X.csv", index=False)
    pd.DataFrame(np.column_stack([X, y]), columns=list("abcdy")).to_csv(
        tmp_path / "X5.csv", index=False
    )
    assert (
        main(
            [
                "fit",
                str(tmp_path / "X.npy"),
                "--target-file",
                str(tmp_path / "y.npy"),
                "-o",
                str(tmp_path / "m.npz"),
            ]
        )
        == 0
    )
    return tmp_path


def test_predict_unnamed_model_takes_a_csv_with_the_right_column_count(capsys, iris_model):
    code, _, err = run(
        capsys, "predict", iris_model / "m.npz", iris_model / "X.csv", "-o", iris_model / "p.npy"
    )
    assert code == 0, err
    expected = dtjit.load(iris_model / "m.npz").predict(np.load(iris_model / "X.npy"))
    np.testing.assert_array_equal(np.load(iris_model / "p.npy"), expected)


def test_predict_writes_compressed_csv(capsys, iris_model):
    expected = dtjit.load(iris_model / "m.npz").predict(np.load(iris_model / "X.npy"))
    for suffix, magic in ((".gz", b"\x1f\x8b"), (".bz2", b"BZh"), (".xz", b"\xfd7zXZ")):
        out = iris_model / f"p.csv{suffix}"
        code, _, err = run(capsys, "predict", iris_model / "m.npz", iris_model / "X.npy", "-o", out)
        assert code == 0, err
        assert out.read_bytes().startswith(magic)  # compressed, not plain text under the name
        np.testing.assert_array_equal(pd.read_csv(out)["prediction"].to_numpy(), expected)
    for suffix in (".zip", ".zst"):  # pandas reads them; the standard library cannot write them
        out = iris_model / f"p.csv{suffix}"
        code, _, err = run(capsys, "predict", iris_model / "m.npz", iris_model / "X.npy", "-o", out)
        assert_failed(code, err, f"unsupported file type '{suffix}'", output=out)
        assert "(.csv also compressed: .gz, .bz2, .xz)" in err


def corrupt_model(directory):
    data = (directory / "m.npz").read_bytes()
    (directory / "bad.npz").write_bytes(data[: len(data) // 2])
    return directory / "bad.npz"


@pytest.mark.parametrize(
    ("make_args", "match"),
    [
        (lambda d: ["missing.npz", "X.npy"], "MODEL file not found"),
        (lambda d: ["m.npz", "missing.npy"], "DATA file not found"),
        (lambda d: [corrupt_model(d), "X.npy"], "not a readable dtjit model file"),
        (lambda d: ["y.npy", "X.npy"], "not a readable dtjit model file"),
        (lambda d: ["m.npz", "X5.npy"], "has 5 feature columns; the model expects 4"),
        (lambda d: ["m.npz", "X5.csv"], "has 5 columns; the model expects 4 features"),
        (lambda d: ["m.npz", "X.txt"], "unsupported file type '.txt'"),
        (lambda d: ["m.npz", "text.npy"], "cannot read"),
        (lambda d: ["m.npz", "X.npy", "--proba"], None),
    ],
)
def test_predict_errors(capsys, iris_model, make_args, match):
    (iris_model / "X.txt").write_text("1,2,3,4\n")
    (iris_model / "text.npy").write_text("1,2,3,4\n")
    args = [
        a if isinstance(a, Path) or a.startswith("-") else iris_model / a
        for a in make_args(iris_model)
    ]
    output = iris_model / "out.csv"
    code, _, err = run(capsys, "predict", *args, "-o", output)
    if match is None:  # the control case: the same setup succeeds
        assert code == 0, err
        return
    assert code == 1
    assert_failed(code, err, match, output=output)


def test_outputs_never_overwrite_an_input(capsys, iris_model, weather_csv):
    # `-o` naming an input file (by any path) wrote over it and reported success.
    csv, model = iris_model / "X.csv", iris_model / "m.npz"
    before = {path: path.read_bytes() for path in (csv, model, weather_csv)}
    code, _, err = run(capsys, "predict", model, csv, "-o", iris_model / "." / "X.csv")
    assert_failed(code, err, "is the input file")
    code, _, err = run(capsys, "predict", model, csv, "-o", model)
    assert_failed(code, err, "unsupported")  # a .npz is no predictions file either
    code, _, err = run(capsys, "fit", weather_csv, "--target", "play", "-o", weather_csv)
    assert_failed(code, err, "must end in .npz")
    code, _, err = run(capsys, "fit", iris_model / "X.npy", "--target-file", iris_model / "y.npy",
                       "-o", model)  # fmt: skip
    assert code == 0, err  # replacing a model file is what -o is for
    assert all(path.read_bytes() == data for path, data in before.items() if path != model)


def test_repeated_column_names_are_refused(capsys, iris_model, weather_csv):
    # pandas renames a repeated `a` to `a.1`: fit named a feature `a.1`, and predict read the
    # first of two columns of one name, both without a word.
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    d = iris_model
    (d / "dup.csv").write_text("a,a,c,y\n1,2,3,0\n4,5,6,1\n")
    code, _, err = run(capsys, "fit", d / "dup.csv", "--target", "y", "-o", d / "dup.npz")
    assert_failed(code, err, "dup.csv has repeated column names: 'a'", output=d / "dup.npz")
    (d / "unnamed.csv").write_text("a,,c,,y\n1,2,3,4,0\n4,5,6,7,1\n")  # pandas: Unnamed: 1, 3
    code, _, err = run(capsys, "fit", d / "unnamed.csv", "--target", "y", "-o", d / "u.npz")
    assert code == 0, err
    named = d / "named.npz"
    assert (
        run(capsys, "fit", weather_csv, "--target", "play", "--drop", "outlook", "-o", named)[0]
        == 0
    )
    header = pd.read_csv(weather_csv, nrows=0).columns.tolist()
    (d / "dup2.csv").write_text(",".join([*header, "humidity"]) + "\n")
    code, _, err = run(capsys, "predict", named, d / "dup2.csv", "-o", d / "p.csv")
    assert_failed(code, err, "repeated column names: 'humidity'", output=d / "p.csv")
    table = pa.table([[1.0], [2.0], [3.0]], names=["temperature", "humidity", "humidity"])
    pq.write_table(table, d / "dup.parquet")
    code, _, err = run(capsys, "predict", named, d / "dup.parquet", "-o", d / "p.csv")
    assert_failed(code, err, "repeated column names: 'humidity'", output=d / "p.csv")


def test_predict_refuses_a_row_with_an_extra_field_as_fit_does(capsys, iris_model):
    d = iris_model
    (d / "ragged.csv").write_text("a,b,c,d\n1,2,3,4\n5,6,7,8,9\n1,2,3,4\n")
    code, _, err = run(capsys, "predict", d / "m.npz", d / "ragged.csv", "-o", d / "p.csv")
    assert_failed(code, err, "Expected 4 fields in line 3, saw 5", output=d / "p.csv")
    code, _, err = run(capsys, "fit", d / "ragged.csv", "--target", "d", "-o", d / "r.npz")
    assert_failed(code, err, "Expected 4 fields in line 3, saw 5", output=d / "r.npz")


@pytest.mark.parametrize(
    "y",
    [
        np.arange(150) + 1j,
        np.zeros(150, dtype=[("a", "f8"), ("b", "i4")]),
        np.arange(150).astype("datetime64[D]"),
    ],
    ids=["complex", "structured", "datetime"],
)
def test_fit_refuses_targets_that_are_not_labels_or_values(capsys, iris_model, y):
    # numpy's own errors (printing the array) or a silent cast to numbers before
    np.save(iris_model / "bad_y.npy", y)
    args = ["fit", iris_model / "X.npy", "--target-file", iris_model / "bad_y.npy"]
    code, _, err = run(capsys, *args, "-o", iris_model / "b.npz")
    assert_failed(
        code, err, f"bad_y.npy: the target has dtype {y.dtype}", output=iris_model / "b.npz"
    )
    if y.dtype.kind == "M":
        pd.DataFrame({"a": np.arange(150.0), "t": y}).to_csv(iris_model / "t.csv", index=False)
        table = pd.read_csv(iris_model / "t.csv", parse_dates=["t"])
        pytest.importorskip("pyarrow")
        table.to_parquet(iris_model / "t.parquet")
        code, _, err = run(
            capsys, "fit", iris_model / "t.parquet", "--target", "t", "-o", iris_model / "b.npz"
        )
        assert_failed(code, err, "t.parquet['t']: the target has dtype datetime64")


def test_show_header_stays_one_line_with_a_newline_in_a_label(capsys, tmp_path):
    X = np.arange(8.0).reshape(-1, 1)
    # a newline ended the DOT / Mermaid comment line: the file was invalid
    y = np.array(["a\nb}\r", "c"] * 4, dtype=object)
    dtjit.save(dtjit.DecisionTreeClassifier().fit(X, y), tmp_path / "m.npz")
    for fmt, comment in (("dot", "// "), ("mermaid", "%% ")):
        code, out, err = run(capsys, "show", tmp_path / "m.npz", "--format", fmt)
        assert code == 0, err
        header, body = out.split("\n", 1)
        assert header.startswith(comment) and "(a\\nb}\\r, c)" in header, header
        assert not body.startswith(("}", ")", "\r"))


def test_show_text_and_rules_keep_a_node_per_line_with_newlines_in_names(capsys, tmp_path):
    outputs = {}
    for name, label in (("xy", "ab"), ("x\ny", "a\nb")):  # the same tree, plain names first
        table = pd.DataFrame({name: np.arange(8.0), "t": [label, "c"] * 4})
        table.to_csv(tmp_path / "d.csv", index=False)  # a quoted header cell holds the newline
        model = tmp_path / f"m{len(outputs)}.npz"
        code, _, err = run(capsys, "fit", tmp_path / "d.csv", "--target", "t", "-o", model)
        assert code == 0, err
        for fmt in ("text", "rules"):
            code, out, err = run(capsys, "show", model, "--format", fmt)
            assert code == 0, err
            outputs[name, fmt] = out
    for fmt in ("text", "rules"):
        plain, escaped = outputs["xy", fmt], outputs["x\ny", fmt]
        assert escaped == plain.replace("xy", "x\\ny").replace("ab", "a\\nb"), escaped


def test_predict_missing_feature_column_by_name(capsys, weather_csv, weather_model, tmp_path):
    pd.read_csv(weather_csv).drop(columns="humidity").to_csv(tmp_path / "w.csv", index=False)
    output = tmp_path / "p.csv"
    code, _, err = run(capsys, "predict", weather_model, tmp_path / "w.csv", "-o", output)
    assert_failed(code, err, "lacks the model's feature column(s) 'humidity'", output=output)


def test_predict_proba_needs_a_classifier(capsys, diabetes_data, tmp_path):
    X, y = diabetes_data
    np.savez(tmp_path / "d.npz", X=X, y=y)
    assert (
        main(["fit", str(tmp_path / "d.npz"), "-o", str(tmp_path / "m.npz"), "--max-depth", "3"])
        == 0
    )
    output = tmp_path / "p.npy"
    code, _, err = run(
        capsys, "predict", tmp_path / "m.npz", tmp_path / "d.npz", "-o", output, "--proba"
    )
    assert_failed(code, err, "--proba needs a classifier", output=output)


def test_failure_in_a_late_block_leaves_nothing_behind(
    capsys, weather_csv, weather_model, tmp_path
):
    table = pd.concat([pd.read_csv(weather_csv)] * 100, ignore_index=True).astype(
        {"humidity": object}
    )
    table.loc[1000, "humidity"] = "high"  # parsed as text only in the chunk holding row 1000
    table.to_csv(tmp_path / "w.csv", index=False)
    for name in ("p.csv", "p.parquet", "p.npy"):
        output = tmp_path / name
        code, _, err = run(
            capsys, "predict", weather_model, tmp_path / "w.csv", "-o", output, "--block-rows", 100
        )
        assert_failed(
            code, err, "non-numeric values in feature column(s) 'humidity'", output=output
        )
    assert sorted(os.listdir(tmp_path)) == ["w.csv"]


@pytest.mark.parametrize("name", ["p.csv", "p.parquet", "p.npy"])
def test_interrupt_leaves_nothing_behind(capsys, monkeypatch, iris_model, name):
    calls = []
    original = DecisionTreeClassifier.predict

    def interrupted(self, block):
        calls.append(len(block))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(self, block)

    monkeypatch.setattr(DecisionTreeClassifier, "predict", interrupted)
    output = iris_model / name
    code, _, err = run(
        capsys,
        "predict",
        iris_model / "m.npz",
        iris_model / "X.npy",
        "-o",
        output,
        "--block-rows",
        20,
    )
    assert code == 130 and len(calls) == 3
    assert_failed(code, err, "interrupted", output=output)


def test_sigterm_leaves_nothing_behind(capsys, monkeypatch, iris_model):
    calls = []
    original = DecisionTreeClassifier.predict

    def terminated(self, block):
        calls.append(len(block))
        if len(calls) == 3:  # as `kill` or `timeout` would, in the middle of the output
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, block)

    def not_handled(signum, frame):  # keeps pytest alive if main installs no handler
        raise AssertionError("SIGTERM reached the test's own handler")

    monkeypatch.setattr(DecisionTreeClassifier, "predict", terminated)
    previous = signal.signal(signal.SIGTERM, not_handled)
    try:
        output = iris_model / "p.csv"
        code, _, err = run(
            capsys, "predict", iris_model / "m.npz", iris_model / "X.npy", "-o", output,
            "--block-rows", 20,
        )  # fmt: skip
        assert code == 143 and len(calls) == 3
        assert_failed(code, err, "terminated", output=output)
        assert signal.getsignal(signal.SIGTERM) is not_handled  # main put it back
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_unwritable_outputs(capsys, iris_model):
    model, data = iris_model / "m.npz", iris_model / "X.npy"
    (iris_model / "file").write_text("")
    (iris_model / "dir.npy").mkdir()
    for output, match in (
        (iris_model / "missing" / "p.npy", "output directory does not exist"),
        (iris_model / "file" / "p.npy", "output directory does not exist"),
        (iris_model / "dir.npy", "output path is a directory"),
        (iris_model / "p.txt", "unsupported file type '.txt'"),
    ):
        code, _, err = run(capsys, "predict", model, data, "-o", output)
        assert_failed(code, err, match)
        assert not output.is_file()
    assert no_temp_files(iris_model)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_output_directory(capsys, iris_model):
    locked = iris_model / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, _, err = run(
            capsys, "predict", iris_model / "m.npz", iris_model / "X.npy", "-o", locked / "p.npy"
        )
        assert_failed(code, err, "not writable", output=locked / "p.npy")
    finally:
        locked.chmod(0o755)


# -- show ------------------------------------------------------------------------------------
def test_show_rules(capsys, weather_model):
    model = dtjit.load(weather_model)
    code, out, err = run(capsys, "show", weather_model, "--format", "rules")
    assert code == 0, err
    header, *rules = out.splitlines()
    assert header == (
        f"DecisionTreeClassifier: 3 features, {model.tree_.node_count} nodes, "
        f"{model.get_n_leaves()} leaves, depth {model.get_depth()}, 2 classes (no, yes)"
    )
    assert rules == dtjit.export.export_rules(model)
    assert any(r.startswith("IF temperature") for r in rules)


def _exporter_missing(name):
    return pytest.mark.skipif(
        not hasattr(dtjit.export, name), reason=f"dtjit.export.{name} is on another branch"
    )


@pytest.mark.parametrize(
    ("fmt", "name", "comment"),
    [
        pytest.param("text", "export_text", "", marks=_exporter_missing("export_text")),
        pytest.param("dot", "export_graphviz", "// ", marks=_exporter_missing("export_graphviz")),
        pytest.param("mermaid", "export_mermaid", "%% ", marks=_exporter_missing("export_mermaid")),
    ],
)
def test_show_formats(capsys, weather_model, fmt, name, comment):
    model = dtjit.load(weather_model)
    exporter = getattr(dtjit.export, name)
    for options, kwargs in (([], {}), (["--max-depth", "2"], {"max_depth": 2})):
        code, out, err = run(capsys, "show", weather_model, "--format", fmt, *options)
        assert code == 0, err
        header, body = out.split("\n", 1)
        assert header.startswith(comment + "DecisionTreeClassifier: 3 features")
        assert body.rstrip("\n") == exporter(model, **kwargs).rstrip("\n")
    if fmt == "dot":
        assert "digraph" in body


def test_show_errors(capsys, monkeypatch, weather_model, iris_model):
    code, _, err = run(capsys, "show", weather_model, "--format", "rules", "--max-depth", "2")
    assert_failed(code, err, "--max-depth does not apply to --format rules")
    code, _, err = run(capsys, "show", corrupt_model(iris_model), "--format", "rules")
    assert_failed(code, err, "not a readable dtjit model file")
    code, _, err = run(capsys, "show", iris_model / "nothing.npz", "--format", "rules")
    assert_failed(code, err, "MODEL file not found")
    monkeypatch.delattr(dtjit.export, "export_mermaid", raising=False)
    code, _, err = run(capsys, "show", weather_model, "--format", "mermaid")
    assert_failed(code, err, "needs dtjit.export.export_mermaid")


# -- bench and the command line itself -------------------------------------------------------
def test_show_into_a_closed_pipe_stops_quietly(tmp_path):
    # `dtjit show model.npz | head`: the reader leaves before the end. Random labels give a
    # tree whose rules (160 kB) are far more than a pipe holds, so the writer is still writing.
    rng = np.random.default_rng(0)
    X, y = rng.random((4000, 4)), rng.integers(0, 2, 4000)
    path = tmp_path / "big.npz"
    dtjit.save(DecisionTreeClassifier(random_state=0).fit(X, y), path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dtjit", "show", str(path), "--format", "rules"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline().startswith(b"DecisionTreeClassifier: 4 features")
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (141, b"")


def test_bench_prints_the_comparison(capsys):
    code, out, err = run(capsys, "bench", "--rows", "2000")
    assert code == 0, err
    for line in ("1. Accuracy on real data", "2. The dtjit tree as rules", "3. Speed"):
        assert line in out
    assert "make_classification: 2,000 x 20" in out and "scikit-learn (1 thread)" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--rows", "10"],
        ["bench", "--repeats", "0"],
        ["predict", "m.npz", "X.npy", "-o", "p.npy", "--block-rows", "0"],
        ["fit", "X.npy", "-o", "m.npz", "--max-depth", "deep"],
        ["fit", "X.npy", "-o", "m.npz", "--class-weight", "heavy"],
        ["fit", "X.npy"],
        ["show", "m.npz", "--format", "svg"],
        [],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_with_status_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and "usage: dtjit" in err


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and all(c in out for c in ("fit", "predict", "show", "bench", "compile"))
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"dtjit {dtjit.__version__}"


def test_installed_script_and_module_entry_point(weather_model, tmp_path):
    assert DTJIT_SCRIPT.is_file(), "the dtjit console script is not installed"
    env = {**os.environ, "NO_COLOR": "1"}
    nope = tmp_path / "nope.npz"
    missing = subprocess.run(
        [DTJIT_SCRIPT, "predict", nope, tmp_path / "X.npy", "-o", tmp_path / "p.npy"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == f"dtjit: error: MODEL file not found: {tmp_path / 'nope.npz'}\n"
    debug = subprocess.run(
        [DTJIT_SCRIPT, "--debug", "show", nope, "--format", "rules"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert debug.stderr.rstrip().endswith(f"FileNotFoundError: MODEL file not found: {nope}")
    shown = subprocess.run(
        [sys.executable, "-m", "dtjit", "show", weather_model, "--format", "rules"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == dtjit.export.export_rules(dtjit.load(weather_model))


def test_import_dtjit_does_not_load_the_command_line():
    watched = ("tqdm", "dtjit.cli", "dtjit._datafiles", "dtjit._bench")
    probe = f"import sys, dtjit; print(sorted(m for m in {watched!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_show_header_of_a_regressor_and_of_many_classes(capsys, diabetes_data, tmp_path):
    X, y = diabetes_data
    regressor = DecisionTreeRegressor(max_depth=3).fit(X, y)
    dtjit.save(regressor, tmp_path / "r.npz")
    code, out, err = run(capsys, "show", tmp_path / "r.npz", "--format", "rules")
    assert code == 0, err
    assert out.splitlines()[0] == (
        f"DecisionTreeRegressor: 10 features, {regressor.tree_.node_count} nodes, "
        f"{regressor.get_n_leaves()} leaves, depth 3"
    )
    labels = np.arange(len(y)) % 12  # 12 classes: the header lists the first 10
    dtjit.save(DecisionTreeClassifier(max_depth=2).fit(X, labels), tmp_path / "c.npz")
    code, out, err = run(capsys, "show", tmp_path / "c.npz", "--format", "rules")
    assert code == 0, err
    assert out.splitlines()[0].endswith("12 classes (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... 2 more)")


# -- column lists, held-out scores, kept columns, decimals ----------------------------------
def test_drop_and_categorical_take_comma_separated_lists(capsys, weather_csv, tmp_path):
    models = []
    for drop in (["--drop", "outlook,windy"], ["--drop", "outlook", "--drop", " windy"]):
        path = tmp_path / f"m{len(models)}.npz"
        code, _, err = run(capsys, "fit", weather_csv, "--target", "play", *drop, "-o", path)
        assert code == 0, err
        models.append(dtjit.load(path))
    assert list(models[0].feature_names_in_) == ["temperature", "humidity"]
    assert_trees_identical(models[0].tree_, models[1].tree_)
    code, _, err = run(
        capsys, "fit", weather_csv, "--target", "play", "--drop", "outlook,nope", "-o", path
    )
    assert_failed(code, err, "--drop: no column 'nope'")


def test_fit_validation_fraction_holds_rows_out_and_scores_them(capsys, tmp_path):
    from sklearn.model_selection import train_test_split

    X, y = load_iris(return_X_y=True)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    argv = ["fit", tmp_path / "X.npy", "--target-file", tmp_path / "y.npy", "-o"]
    code, out, err = run(
        capsys, *argv, tmp_path / "m.npz", "--validation-fraction", "0.25", "--random-state", 4
    )
    assert code == 0, err
    X_fit, X_held, y_fit, y_held = train_test_split(X, y, test_size=38, random_state=4, stratify=y)
    direct = DecisionTreeClassifier(random_state=4).fit(X_fit, y_fit)
    saved = dtjit.load(tmp_path / "m.npz")
    assert_trees_identical(saved.tree_, direct.tree_)
    assert f"validation accuracy {direct.score(X_held, y_held):.4f} on 38 held-out rows" in out
    assert "on 112 rows; training accuracy 1.0000" in out
    # the default seed is 0, so two runs hold out the same rows and fit the same tree
    outs = [
        run(capsys, *argv, tmp_path / f"d{i}.npz", "--validation-fraction", "0.3")[1]
        for i in range(2)
    ]
    assert [o.splitlines()[3] for o in outs] == [outs[0].splitlines()[3]] * 2
    assert "validation accuracy" in outs[0].splitlines()[3]
    assert_trees_identical(
        dtjit.load(tmp_path / "d0.npz").tree_, dtjit.load(tmp_path / "d1.npz").tree_
    )


def test_fit_test_file_is_scored_by_column_name(capsys, shared_data, tmp_path):
    table = pd.read_csv(shared_data / "weka" / "cpu.csv")
    train, test = table.iloc[:150], table.iloc[150:]
    train.to_csv(tmp_path / "train.csv", index=False)
    test[list(reversed(test.columns))].to_csv(tmp_path / "test.csv", index=False)
    code, out, err = run(
        capsys,
        "fit",
        tmp_path / "train.csv",
        "--target",
        "class",
        "--test",
        tmp_path / "test.csv",
        "--max-depth",
        4,
        "-o",
        tmp_path / "m.npz",
    )
    assert code == 0, err
    model = dtjit.load(tmp_path / "m.npz")
    expected = model.score(test.drop(columns="class"), test["class"])
    assert f"test R2 {expected:.4f} on {len(test)} rows of" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--test", "{d}/X.csv", "--target-file", "{d}/y.npy"], "cannot be combined"),
        (["--test", "{d}/X3.csv", "--target", "y"], "lacks the feature column(s) 'c'"),
        (["--validation-fraction", "0.999", "--target", "y"], "leaves no rows to fit on"),
    ],
)
def test_fit_held_out_errors(capsys, tmp_path, extra, match):
    X, y = load_iris(return_X_y=True)
    np.save(tmp_path / "y.npy", y)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    frame.to_csv(tmp_path / "X.csv", index=False)
    frame.drop(columns="c").to_csv(tmp_path / "X3.csv", index=False)
    extra = [a.format(d=tmp_path) for a in extra]
    code, _, err = run(capsys, "fit", tmp_path / "X.csv", *extra, "-o", tmp_path / "m.npz")
    assert_failed(code, err, match, output=tmp_path / "m.npz")


@pytest.mark.parametrize("fraction", ["0", "1", "1.5", "x"])
def test_fit_validation_fraction_outside_zero_one_is_a_usage_error(capsys, tmp_path, fraction):
    code = main(["fit", "d.csv", "-o", str(tmp_path / "m.npz"), "--validation-fraction", fraction])
    assert code == 2 and "--validation-fraction" in capsys.readouterr().err


def test_predict_keeps_id_columns_as_written(capsys, weather_csv, weather_model, tmp_path):
    pytest.importorskip("pyarrow")
    table = pd.read_csv(weather_csv)
    ids = [f"{i:03d}" for i in range(len(table))]  # leading zeros must survive
    table.insert(0, "id", ids)
    table.to_csv(tmp_path / "w.csv", index=False)
    table.to_parquet(tmp_path / "w.parquet")
    expected = dtjit.load(weather_model).predict(table[WEATHER_FEATURES])
    for data in ("w.csv", "w.parquet"):
        for out in ("p.csv", "p.csv.gz", "p.parquet"):
            code, _, err = run(
                capsys,
                "predict",
                weather_model,
                tmp_path / data,
                "-o",
                tmp_path / out,
                "--keep",
                "id,outlook",
                "--keep",
                "humidity",
                "--block-rows",
                5,
            )
            assert code == 0, err
            if out.endswith(".parquet"):
                result = pd.read_parquet(tmp_path / out)
            else:
                result = pd.read_csv(tmp_path / out, dtype={"id": str})
            assert list(result.columns) == ["id", "outlook", "humidity", "prediction"]
            assert list(result["id"]) == ids
            assert list(result["outlook"]) == list(table["outlook"])
            np.testing.assert_array_equal(result["humidity"], table["humidity"])
            np.testing.assert_array_equal(result["prediction"], expected)


@pytest.mark.parametrize(
    ("data", "output", "keep", "match"),
    [
        ("w.csv", "p.npy", "id", "--keep needs a table output"),
        ("w.csv", "p.csv", "id,nope", "--keep: no column 'nope'"),
        ("w.npy", "p.csv", "0", "does not apply to .npy"),
        ("w.csv", "p.csv", "prediction", "already has a prediction column"),
    ],
)
def test_predict_keep_errors(
    capsys, weather_csv, weather_model, tmp_path, data, output, keep, match
):
    table = pd.read_csv(weather_csv).assign(id=1, prediction=0)
    table.to_csv(tmp_path / "w.csv", index=False)
    np.save(tmp_path / "w.npy", table[WEATHER_FEATURES].to_numpy(float))
    code, _, err = run(
        capsys, "predict", weather_model, tmp_path / data, "-o", tmp_path / output, "--keep", keep
    )
    assert_failed(code, err, match, output=tmp_path / output)


def test_show_decimals(capsys, iris_model):
    outputs = {}
    for decimals in ("0", "2", "4"):
        code, out, err = run(capsys, "show", iris_model / "m.npz", "--decimals", decimals)
        assert code == 0, err
        outputs[decimals] = out
    assert "petal" not in outputs["2"]  # an unnamed model: feature_0 ...
    assert "<= 2.45\n" in outputs["2"] and "<= 2.4500\n" in outputs["4"]
    assert "<= 2\n" in outputs["0"]
    # DOT rounds as scikit-learn's export_graphviz does: round(x, N), no trailing zeros.
    code, out, err = run(capsys, "show", iris_model / "m.npz", "--format", "dot", "--decimals", 1)
    assert code == 0 and "<= 2.4\\n" in out and "<= 2.45" not in out
    assert main(["show", str(iris_model / "m.npz"), "--decimals", "-1"]) == 2


# -- .npy / .npz read in blocks --------------------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "order", "container"),
    [
        ("<f8", "C", "npy"),
        ("<f8", "F", "npy"),
        (">f4", "C", "npy"),
        ("<i2", "F", "npy"),
        ("<f4", "C", "npz"),
        ("<f8", "F", "npz"),
        ("<f8", "C", "npz-compressed"),
        ("<f8", "F", "npz-compressed"),
    ],
)
def test_npy_rows_blocks_equal_the_array(tmp_path, dtype, order, container):
    from dtjit._datafiles import NpyRows

    rng = np.random.default_rng(0)
    X = np.asarray(rng.normal(scale=100, size=(1003, 7)), dtype=dtype, order=order)
    X[5, 3] = np.nan if X.dtype.kind == "f" else 0
    if container == "npy":
        path, member = tmp_path / "X.npy", None
        np.save(path, X)
    else:
        path, member = tmp_path / "X.npz", "features"
        save = np.savez_compressed if container == "npz-compressed" else np.savez
        save(path, features=X, other=np.arange(3))
    rows = NpyRows(path, member)
    assert rows.shape == X.shape and rows.dtype == X.dtype
    blocks = list(rows.blocks(100))
    assert [len(b) for b in blocks] == [100] * 10 + [3]
    np.testing.assert_array_equal(np.concatenate(blocks), X)


def test_predict_blocks_of_a_fortran_npy_equal_whole_prediction(capsys, iris_model):
    X = np.load(iris_model / "X.npy")
    np.save(iris_model / "XF.npy", np.asfortranarray(X[::-1]))
    code, _, err = run(
        capsys,
        "predict",
        iris_model / "m.npz",
        iris_model / "XF.npy",
        "-o",
        iris_model / "p.npy",
        "--proba",
        "--block-rows",
        7,
    )
    assert code == 0, err
    expected = dtjit.load(iris_model / "m.npz").predict_proba(X[::-1])
    np.testing.assert_array_equal(np.load(iris_model / "p.npy"), expected)


def test_truncated_npy_is_refused_before_predicting(capsys, iris_model):
    raw = (iris_model / "X.npy").read_bytes()
    (iris_model / "cut.npy").write_bytes(raw[:-8])
    code, _, err = run(
        capsys, "predict", iris_model / "m.npz", iris_model / "cut.npy", "-o", iris_model / "p.npy"
    )
    assert_failed(code, err, "cut.npy is truncated", output=iris_model / "p.npy")
