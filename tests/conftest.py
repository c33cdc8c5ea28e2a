"""Fixtures shared by the estimator, tree and scikit-learn-compatibility tests."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris

SHARED_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"

# Property tests draw the same examples on every run ("repeatable", the default), so a CI
# run cannot fail on an example no earlier run drew: one did, on a limitation the test had
# not stated (tests/test_categorical.py). HYPOTHESIS_PROFILE=explore draws new examples
# each run, e.g. `HYPOTHESIS_PROFILE=explore pytest tests/test_categorical.py`; a failure
# found that way becomes an @example of the test.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

# The files that take longest, longest first (most of their time is child processes and cold
# compiles), as timed in `make test` on a fresh clone. Under ``--dist loadfile`` a worker takes
# the next file when it is nearly done, so starting with these leaves no worker alone with a
# long file at the end of the run.
LONGEST_FILES = (
    "test_kernels.py", "test_readme.py", "test_builder.py", "test_notebooks.py",
    "test_best_first.py", "test_parity.py", "test_estimators.py", "test_cli.py",
    "test_warmup.py", "test_plotting.py", "test_mdlp.py", "test_hist.py",
    "test_cache_location.py", "test_install.py", "test_threads.py", "test_tree.py",
)  # fmt: skip


def pytest_configure(config):
    # xdist's loadfile hands out files by number of tests, not time: keep this file's order.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole


@pytest.fixture(scope="session")
def iris_data():
    """Iris as float64 ``(X, y)``: 150 x 4, three classes."""
    return load_iris(return_X_y=True)


@pytest.fixture(scope="session")
def breast_cancer_data():
    """Breast cancer as float64 ``(X, y)``: 569 x 30, two classes."""
    return load_breast_cancer(return_X_y=True)


@pytest.fixture(scope="session")
def diabetes_data():
    """Diabetes as float64 ``(X, y)``: 442 x 10, a regression target."""
    return load_diabetes(return_X_y=True)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The project's real datasets in ``../shared/data``; skips when the folder is absent."""
    if not SHARED_DATA_DIR.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA_DIR}")
    return SHARED_DATA_DIR


@pytest.fixture(scope="session")
def covtype_table(shared_data):
    """All of UCI Covertype, read once: ``(X float32 (581012, 54), y, feature names)``."""
    pd = pytest.importorskip("pandas")
    path = shared_data / "covtype.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    df = pd.read_csv(path)
    names = [str(c) for c in df.columns[:54]]
    return df.iloc[:, :54].to_numpy(np.float32), df["Cover_Type"].to_numpy(), names


def sample_rows(n_total: int, size: int, seed: int) -> np.ndarray:
    """Sorted random row indices (without replacement), reproducible from ``seed``."""
    return np.sort(np.random.default_rng(seed).choice(n_total, size=size, replace=False))


ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


def read_adult(shared_data: Path, part: str = "data", **read_csv_args):
    """UCI Adult as ``../shared/data/README.md`` loads it: named columns, ``?`` as NaN, and the
    test part's first line skipped and labels without their final period.

    Parameters
    ----------
    part : {"data", "test"}
        ``adult.data.gz`` (32,561 rows) or ``adult.test.gz`` (16,281 rows).
    **read_csv_args
        Passed to ``pandas.read_csv`` (``nrows=...``).
    """
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(shared_data / f"adult.{part}.gz", header=None, names=ADULT_COLUMNS,
                     skipinitialspace=True, na_values="?", skiprows=int(part == "test"),
                     **read_csv_args)  # fmt: skip
    df["income"] = df["income"].str.rstrip(".")
    return df
