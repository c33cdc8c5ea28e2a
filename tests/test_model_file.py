"""The model-file boundary: the holes issue 52 found, each with the test that covers it.

Each test here failed before its fix. The format and the full list of checks are in
docs/model-file.md; tests/test_model_file_fuzz.py mutates real files at random.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from _model_file_mutants import read_members, write_members

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor, Tree, TreeFormatError, _persist


@pytest.fixture(scope="module")
def iris_model(iris_data):
    X, y = iris_data
    return DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def iris_file(iris_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "iris.npz"
    dtjit.save(iris_model, path)
    return read_members(path.read_bytes())


@pytest.fixture(scope="module")
def categorical_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"colour": rng.choice(["red", "green", "blue"], 300), "codes": rng.integers(0, 6, 300),
         "x": rng.normal(size=300)}
    )  # fmt: skip
    y = (frame.colour == "red") ^ frame.codes.isin([1, 4]) ^ (frame.x > 1)
    model = DecisionTreeClassifier(max_depth=4, categorical_features=["colour", "codes"])
    path = tmp_path_factory.mktemp("model") / "categorical.npz"
    dtjit.save(model.fit(frame, y), path)
    return read_members(path.read_bytes())


def _load(tmp_path, header, arrays, raw_header=None):
    path = tmp_path / "edited.npz"
    text = raw_header if raw_header is not None else json.dumps(header)
    path.write_bytes(write_members(text, arrays))
    return dtjit.load(path)


def _edited(file, **changes):
    header, arrays = file
    header = json.loads(json.dumps(header))
    arrays = {name: a.copy() for name, a in arrays.items()}
    for name, value in changes.items():
        (header if name.startswith("h_") else arrays)[name.removeprefix("h_")] = value
    return header, arrays


# --- 1. a tree made writable again ------------------------------------------------------------
ARRAY_NAMES = (
    "feature", "threshold", "left", "right", "value", "impurity", "n_node_samples",
    "weighted_n_node_samples", "missing_left", "categorical_set", "category_bits", "node_depth",
    "n_classes", "children_left", "children_right", "missing_go_to_left",
)  # fmt: skip


@pytest.mark.parametrize("name", ARRAY_NAMES)
def test_tree_arrays_cannot_be_made_writeable(iris_model, name):
    a = getattr(iris_model.tree_, name)
    for view in (a, a[:], a.view(), np.asarray(a)):
        with pytest.raises(ValueError, match="WRITEABLE"):
            view.setflags(write=True)
    assert a.flags.aligned and a.flags.c_contiguous  # the kernels' layout, unchanged


@pytest.mark.parametrize("name", [*ARRAY_NAMES[:11], "missing_learned", "n_features"])
def test_tree_attributes_cannot_be_reassigned(iris_model, name):
    with pytest.raises(AttributeError):
        setattr(iris_model.tree_, name, getattr(iris_model.tree_, name))


def test_issue_52_writable_tree_reproducer_no_longer_reaches_the_kernel():
    """The issue's snippet crashed the interpreter (exit 139); now setflags refuses."""
    script = textwrap.dedent(
        """
        import numpy as np
        from dtjit import DecisionTreeClassifier
        X = np.random.rand(200, 5)
        m = DecisionTreeClassifier().fit(X, X[:, 0] > .5)
        f = m.tree_.feature
        try:
            f.setflags(write=True)
            f[0] = 10**6
        except ValueError as exc:
            print("refused:", exc)
        m.predict(X)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "refused: cannot set WRITEABLE flag" in proc.stdout


def test_a_tree_still_pickles_and_copies(iris_model):
    import copy
    import pickle

    for other in (pickle.loads(pickle.dumps(iris_model)).tree_, copy.deepcopy(iris_model.tree_)):
        np.testing.assert_array_equal(other.feature, iris_model.tree_.feature)
        with pytest.raises(ValueError, match="WRITEABLE"):
            other.left.setflags(write=True)


# --- 2. classes ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "classes, match",
    [
        (np.array([0, 23, 2]), "unique and sorted"),  # the byte flip of issue 52
        (np.array([0, 2, 2]), "unique and sorted"),
        (np.array([2, 1, 0]), "unique and sorted"),
        (np.array(["b", "a", "c"]), "unique and sorted"),
        (np.array([0.0, np.nan, 2.0]), "finite"),
        (np.array([0, 1, 2], dtype=complex), "complex128 are not supported"),
        (np.array([0, 1, 2], dtype="datetime64[s]"), "datetime64.* are not supported"),
        (np.array([0, 1, 2], dtype="timedelta64[s]"), "timedelta64.* are not supported"),
        (np.zeros(3, dtype="V8"), "V8 are not supported"),
        (np.array([b"a", b"b", b"c"]), "S1 are not supported"),
    ],
    ids=[
        "flipped",
        "duplicate",
        "descending",
        "str-unsorted",
        "nan",
        "complex",
        "datetime",
        "timedelta",
        "void",
        "bytes",
    ],  # fmt: skip
)
def test_load_refuses_bad_classes(iris_file, tmp_path, classes, match):
    with pytest.raises(TreeFormatError, match=f"member 'classes': .*{match}"):
        _load(tmp_path, *_edited(iris_file, classes=classes))


def test_load_refuses_duplicate_object_labels(iris_file, tmp_path):
    header, arrays = _edited(iris_file, h_classes_dtype="object", classes=np.array(["a", "b", "a"]))
    with pytest.raises(TreeFormatError, match="member 'classes': labels must be unique"):
        _load(tmp_path, header, arrays)


@pytest.mark.parametrize("dtype", [bool, "<U3", np.int32])
def test_load_refuses_outputs_whose_labels_differ_in_dtype(iris_data, tmp_path, dtype):
    """Found by the fuzz test: predict writes every output into output 0's dtype."""
    X, y = iris_data
    model = DecisionTreeClassifier(max_depth=3).fit(X, np.c_[y == 2, y].astype(int))
    dtjit.save(model, tmp_path / "m.npz")
    header, arrays = read_members((tmp_path / "m.npz").read_bytes())
    arrays["classes_0"] = arrays["classes_0"].astype(dtype)
    with pytest.raises(TreeFormatError, match="'classes_1': labels of dtype int64, but output 0"):
        _load(tmp_path, header, arrays)


@pytest.mark.parametrize(
    "y",
    [
        np.array([1.0, -2.0, 7.0]),
        np.array([False, True, True]),
        np.array(["x", "y", "z"]),
        np.array(["b", "a", "10"], dtype=object),
        np.array([-5, 3, 2**40]),
        np.array([1, 2, 3], dtype=np.uint16),
    ],
)
def test_valid_labels_of_every_kind_round_trip(tmp_path, y):
    X = np.arange(30, dtype=float).reshape(-1, 1)
    y = np.resize(y, 30)
    model = DecisionTreeClassifier().fit(X, y)
    dtjit.save(model, tmp_path / "m.npz")
    loaded = dtjit.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict(X).astype(str), model.predict(X).astype(str))


def test_save_refuses_labels_a_file_cannot_hold(tmp_path):
    X = np.arange(20, dtype=float).reshape(-1, 1)
    model = DecisionTreeClassifier().fit(X, np.resize([0, 1], 20))
    model.classes_ = model.classes_.astype(complex)  # fit refuses such labels; save must too
    with pytest.raises(TypeError, match="cannot be saved"):
        dtjit.save(model, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


# --- 3. header sizes bounded --------------------------------------------------------------------
@pytest.mark.parametrize("n_features", [2**31 - 1, 2**20 + 1, 10**4000, 0, -1, True, 4.0])
def test_load_refuses_n_features_past_the_limit(iris_file, tmp_path, n_features):
    header, arrays = _edited(iris_file)
    raw = json.dumps(header).replace('"n_features": 4', f'"n_features": {n_features!r}'.lower())
    if isinstance(n_features, int) and n_features > 10**100:
        raw = json.dumps(header).replace('"n_features": 4', f'"n_features": 1{"0" * 4000}')
    with pytest.raises(TreeFormatError, match="'n_features': n_features must be an int in"):
        _load(tmp_path, header, arrays, raw_header=raw)


def test_n_features_at_the_limit_loads_and_stays_cheap(iris_file, tmp_path):
    header, arrays = _edited(iris_file, h_n_features=2**20)
    model = _load(tmp_path, header, arrays)
    assert model.feature_importances_.shape == (2**20,)  # 8 MiB, not 16 GiB


def test_save_refuses_a_model_past_the_feature_limit(iris_model, tmp_path, monkeypatch):
    monkeypatch.setattr(_persist, "MAX_N_FEATURES", 3)
    with pytest.raises(ValueError, match="at most 3 features; this model has 4"):
        dtjit.save(iris_model, tmp_path / "m.npz")


def test_load_refuses_features_with_missing_longer_than_n_features(iris_file, tmp_path):
    header, arrays = _edited(iris_file, h_features_with_missing=[0] * 100_000)
    with pytest.raises(TreeFormatError, match="'features_with_missing'"):
        _load(tmp_path, header, arrays)


# --- 4. categories ------------------------------------------------------------------------------
def _categories(file, column, values):
    header, arrays = _edited(file)
    header["categorical"]["categories"][column] = values
    return header, arrays


@pytest.mark.parametrize(
    "column, values, match",
    [
        (0, [f"c{i}" for i in range(4097)], "4097 categories, more than the limit of 4096"),
        (0, ["red", "green", "red"], "duplicate categories"),
        (0, ["blue", 1, True], "duplicate categories"),  # one pandas key
        (0, ["blue", 1.0, 1], "duplicate categories"),
        (0, ["blue", float("nan"), "red"], "NaN or infinite"),
        (0, ["blue", [1], "red"], "must be str, int, float or bool"),
        (0, ["blue", 2**70, "red"], "int64 range"),
        (1, list(range(4097)), "4097 categories"),
        (1, [0, 1, 4096], r"codes must be integers in \[0, 4096\)"),
        (1, [0, -1, 2], r"codes must be integers in \[0, 4096\)"),
        (1, [0, 2, 1], "ascending and unique"),
        (1, [0, 1, 1], "ascending and unique"),
        (1, [0, 1.0, 2], "codes must be integers"),
    ],
)
def test_load_refuses_bad_categories(categorical_file, tmp_path, column, values, match):
    with pytest.raises(TreeFormatError, match=f"'categorical', feature {column}: .*{match}"):
        _load(tmp_path, *_categories(categorical_file, column, values))


def test_categories_at_the_limit_load(categorical_file, tmp_path):
    header, arrays = _categories(categorical_file, 0, ["blue", "green", "red"] + [
        f"c{i}" for i in range(4093)])  # fmt: skip
    assert len(_load(tmp_path, header, arrays).categories_[0]) == 4096


def test_load_refuses_too_many_category_words(categorical_file, tmp_path):
    header, arrays = _edited(categorical_file)
    arrays["category_bits"] = np.zeros((arrays["category_bits"].shape[0], 65), np.uint64)
    with pytest.raises(TreeFormatError, match="'category_bits': 65 words per set"):
        _load(tmp_path, header, arrays)


# --- 5. every failure is a TreeFormatError ------------------------------------------------------
def test_deeply_nested_header_is_a_format_error(iris_file, tmp_path):
    _, arrays = _edited(iris_file)
    with pytest.raises(TreeFormatError, match="corrupted header: RecursionError"):
        _load(tmp_path, None, arrays, raw_header="[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("depth", [17, 900, 1200])
def test_deeply_nested_params_value_is_a_format_error(iris_file, tmp_path, depth):
    header, arrays = _edited(iris_file)
    header["params"]["class_weight"] = "RAW"
    raw = json.dumps(header).replace('"RAW"', "[" * depth + "]" * depth)
    with pytest.raises(TreeFormatError, match="nested .* deep|RecursionError"):
        _load(tmp_path, header, arrays, raw_header=raw)


@pytest.mark.parametrize("field", ["n_features", "max_features_", "format_version", "n_classes"])
def test_integer_of_5000_digits_is_a_format_error(iris_file, tmp_path, field):
    header, arrays = _edited(iris_file)
    header[field] = "RAW"
    raw = json.dumps(header).replace('"RAW"', "9" * 5000)
    with pytest.raises(TreeFormatError, match="corrupted header: ValueError: Exceeds the limit"):
        _load(tmp_path, header, arrays, raw_header=raw)


def test_integer_of_4000_digits_is_a_format_error(iris_file, tmp_path):
    header, arrays = _edited(iris_file)
    header["n_classes"] = "RAW"
    raw = json.dumps(header).replace('"RAW"', "[" + "9" * 4000 + "]")
    with pytest.raises(TreeFormatError, match="n_classes"):
        _load(tmp_path, header, arrays, raw_header=raw)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    with pytest.raises(TreeFormatError, match="not a regular file"):
        dtjit.load(fifo)


def test_errors_name_the_file_and_the_member(iris_file, tmp_path):
    header, arrays = _edited(iris_file, h_max_features_="x")
    with pytest.raises(TreeFormatError, match=r"edited\.npz'.*'max_features_'"):
        _load(tmp_path, header, arrays)


# --- 6. inconsistent files ----------------------------------------------------------------------
def test_load_refuses_a_categorical_split_on_a_numeric_column(categorical_file, tmp_path):
    header, arrays = _edited(categorical_file)
    header["categorical"] = {"features": [], "categories": [], "from_values": []}
    header["params"]["categorical_features"] = None
    with pytest.raises(TreeFormatError, match="categorical split on feature 0, which the header"):
        _load(tmp_path, header, arrays)


def test_load_refuses_a_threshold_split_on_a_categorical_column(iris_file, tmp_path):
    header, arrays = _edited(iris_file)
    split_feature = int(arrays["feature"][0])
    header["categorical"] = {"features": [split_feature], "categories": [[0, 1]],
                             "from_values": [False]}  # fmt: skip
    with pytest.raises(TreeFormatError, match=f"threshold split on feature {split_feature}"):
        _load(tmp_path, header, arrays)


def test_load_refuses_all_zero_weights(iris_file, tmp_path):
    header, arrays = _edited(iris_file)
    arrays["weighted_n_node_samples"][:] = 0.0
    with pytest.raises(TreeFormatError, match="node 0: weighted_n_node_samples of the root"):
        _load(tmp_path, header, arrays)


def test_load_refuses_weights_that_do_not_add_up(iris_file, tmp_path):
    header, arrays = _edited(iris_file)
    arrays["weighted_n_node_samples"][1] *= 1.5
    with pytest.raises(TreeFormatError, match="node 0: children's weighted_n_node_samples"):
        _load(tmp_path, header, arrays)


@pytest.mark.parametrize("splitter", ["best", "random", "hist"])
def test_fitted_weights_add_up(splitter, diabetes_data):
    X, y = diabetes_data
    weight = np.random.default_rng(0).exponential(size=len(y)) ** 3  # sums of mixed scales
    model = DecisionTreeRegressor(splitter=splitter, random_state=0).fit(X, y, sample_weight=weight)
    w, split = model.tree_.weighted_n_node_samples, model.tree_.left >= 0
    children = w[model.tree_.left[split]] + w[model.tree_.right[split]]
    assert np.abs(children - w[split]).max() <= 1e-9 * w[0]


# --- 7. messages --------------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux's /proc")
def test_save_to_an_unwritable_place_names_the_users_path(iris_model):
    with pytest.raises(OSError) as info:
        dtjit.save(iris_model, "/proc/m.npz")
    assert info.value.filename == "/proc/m.npz"
    assert ".tmp" not in str(info.value)


def test_save_over_a_directory_names_the_users_path(iris_model, tmp_path):
    (tmp_path / "m.npz").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        dtjit.save(iris_model, tmp_path / "m.npz")
    assert info.value.filename == str(tmp_path / "m.npz")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# --- the module boundary ------------------------------------------------------------------------
def test_format_names_stay_importable_from_the_tree_module():
    from dtjit import _tree

    assert _tree.read_model_file is _persist.read_model_file
    assert _tree.FORMAT_VERSION == _persist.FORMAT_VERSION == 1
    with pytest.raises(AttributeError):
        _tree.no_such_name  # noqa: B018


def test_check_tree_still_accepts_a_tree_built_from_copies(iris_model):
    tree = iris_model.tree_
    rebuilt = Tree(
        n_features=tree.n_features, n_classes=tree.n_classes,
        **{k: np.array(v) for k, v in tree.to_arrays().items()},
    )  # fmt: skip
    np.testing.assert_array_equal(rebuilt.value, tree.value)
