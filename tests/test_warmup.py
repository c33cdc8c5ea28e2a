"""``dtjit compile`` (``dtjit._warmup``): after it, the fits users run compile nothing more."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pytest
from numba.core import event
from sklearn.datasets import load_breast_cancer, load_diabetes

from dtjit import DecisionTreeClassifier, DecisionTreeRegressor, MDLPDiscretizer
from dtjit._warmup import SPLITTERS, warm_up_steps
from dtjit.cli import main


@contextlib.contextmanager
def compiled_functions() -> Iterator[list[str]]:
    """Collect the functions numba compiles inside the block (loads from its cache are not)."""
    names: list[str] = []

    class Recorder(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            names.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev: event.Event) -> None:
            pass

    recorder = Recorder()
    event.register("numba:compile", recorder)
    try:
        yield names
    finally:
        event.unregister("numba:compile", recorder)


def user_session() -> None:
    """Fits and predicts unlike the warm-up's own: other data, dtypes, sizes and options."""
    X, y = load_breast_cancer(return_X_y=True)
    big_X, big_y = np.tile(X, (10, 1)), np.tile(y, 10)  # 170k row-features: the parallel kernels
    for splitter in SPLITTERS:
        model = DecisionTreeClassifier(splitter=splitter, max_depth=6, n_jobs=2, random_state=1)
        model.fit(np.asfortranarray(big_X), big_y).predict_proba(big_X)
        model = DecisionTreeClassifier(splitter=splitter, criterion="log_loss", random_state=1)
        model.fit(X.astype(np.float32), y).apply(X)
    with_nan = X.copy()
    with_nan[::5, 3] = np.nan
    DecisionTreeClassifier(max_leaf_nodes=10).fit(with_nan, y).predict(with_nan)
    categories = X.copy()
    categories[:, 0] = np.arange(len(y)) % 5
    for splitter in ("best", "hist"):
        model = DecisionTreeClassifier(splitter=splitter, categorical_features=[0], max_depth=4)
        model.fit(categories, y).decision_path(categories)
    Xd, yd = load_diabetes(return_X_y=True)
    for criterion in ("squared_error", "absolute_error", "poisson"):
        DecisionTreeRegressor(criterion=criterion, max_depth=5).fit(Xd, yd).predict(Xd)
    DecisionTreeRegressor(max_depth=5).fit(Xd, np.column_stack([yd, Xd[:, 0]])).predict(Xd)
    DecisionTreeClassifier(ccp_alpha=0.005).fit(X, y).cost_complexity_pruning_path(X, y)
    MDLPDiscretizer().fit(X, y).transform(X)


def test_compile_command_leaves_nothing_to_compile(capsys):
    assert main(["compile"]) == 0
    out = capsys.readouterr().out.splitlines()
    steps = [name for name, _ in warm_up_steps()]
    assert out[0].startswith("numba cache: ")
    assert [line.split("s  ", 1)[1] for line in out[1:]] == [*steps, "in all"]
    with compiled_functions() as compiled:
        user_session()
    assert compiled == []


@pytest.mark.parametrize("splitters", [["random"], "random", ["random", "best", "random"]])
def test_warm_up_always_includes_the_exact_splitter(splitters):
    steps = [name for name, _ in warm_up_steps(splitters)]
    assert steps[0] == "classifier fit, iris, serial"
    assert not any(name.startswith("hist") for name in steps)
    assert [name for name in steps if name.startswith("random")] == [
        "random fit, iris, serial",
        "random fit, 20,000 x 20, n_jobs=-1",
    ]


def test_unknown_splitter_is_refused():
    with pytest.raises(ValueError, match="unknown splitter 'fast'"):
        warm_up_steps(["best", "fast"])
    assert main(["compile", "--splitter", "fast"]) == 2  # argparse's usage error
