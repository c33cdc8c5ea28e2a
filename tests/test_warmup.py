"""``dtjit compile`` (``dtjit._warmup``): after it, the fits users run compile nothing more."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba
import numpy as np
import pytest
from numba.core import event
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.inspection import partial_dependence

from dtjit import DecisionTreeClassifier, DecisionTreeRegressor, MDLPDiscretizer, _warmup
from dtjit._warmup import COMMON, SPLITTERS, compile_kernels, process_shares, warm_up_steps
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
    indicator = np.column_stack([big_X, big_X[:, 0] > 14.0])  # a 0/1 column
    for n_jobs in (None, 2):
        DecisionTreeClassifier(splitter="hist", max_depth=4, n_jobs=n_jobs).fit(indicator, big_y)
    # A 0/1 column the tree splits on (the class, every tenth row flipped), past the
    # two-valued search's MIN_ROWS (16,384): the kernels of a chosen two-valued split.
    labels = np.tile(y, 30)
    chosen = np.column_stack([np.tile(X, (30, 1)), labels != (np.arange(len(labels)) % 10 == 0)])
    DecisionTreeClassifier(max_depth=4).fit(chosen, labels)
    with_nan = X.copy()
    with_nan[::5, 3] = np.nan
    DecisionTreeClassifier(max_leaf_nodes=10).fit(with_nan, y).predict(with_nan)
    many_classes = np.arange(len(big_y)) % 260  # two-byte class codes
    for rows, n_jobs in ((slice(0, 600), None), (slice(None), 2)):
        model = DecisionTreeClassifier(max_depth=5, n_jobs=n_jobs)
        model.fit(big_X[rows], many_classes[rows]).predict(X)
    # Weighted entropy, 9 classes and 260 (the builder renumbers the samples).
    for labels in (np.arange(len(big_y)) % 9, many_classes):
        model = DecisionTreeClassifier(criterion="entropy", class_weight="balanced", max_depth=4)
        model.fit(big_X[:1000], labels[:1000], sample_weight=np.linspace(0.5, 2.0, 1000))
    categories = X.copy()
    categories[:, 0] = np.arange(len(y)) % 5
    # 24 categorical columns of 5690 rows: the threaded subset search and routing.
    big_categories = np.floor(big_X / big_X.std(axis=0))
    for splitter in ("best", "hist"):
        model = DecisionTreeClassifier(splitter=splitter, categorical_features=[0], max_depth=4)
        model.fit(categories, y).decision_path(categories)
        model = DecisionTreeClassifier(
            splitter=splitter, categorical_features=list(range(24)), max_depth=4, n_jobs=2
        )
        model.fit(big_categories, big_y).predict(big_categories)
    # Past the accelerators' ACCELERATE_MIN_ROWS (65,536): the row sweeps of the histogram
    # search, and the exact search's accelerated sweeps with NaN and with 260 classes.
    large_X, large_y = np.tile(X, (120, 1)), np.tile(y, 120)  # 68,280 rows
    DecisionTreeClassifier(splitter="hist", max_depth=5).fit(large_X, large_y)
    large_nan = large_X.copy()
    large_nan[::9, 4] = np.nan
    DecisionTreeClassifier(max_depth=5).fit(large_nan, large_y)
    DecisionTreeClassifier(max_depth=3).fit(large_X, np.arange(len(large_y)) % 260)
    Xd, yd = load_diabetes(return_X_y=True)
    for criterion in ("squared_error", "absolute_error", "poisson"):
        DecisionTreeRegressor(criterion=criterion, max_depth=5).fit(Xd, yd).predict(Xd)
    DecisionTreeRegressor(max_depth=5).fit(Xd, np.column_stack([yd, Xd[:, 0]])).predict(Xd)
    partial_dependence(DecisionTreeRegressor(max_depth=5).fit(Xd, yd), Xd, [0, 1])
    DecisionTreeClassifier(ccp_alpha=0.005).fit(X, y).cost_complexity_pruning_path(X, y)
    MDLPDiscretizer().fit(X, y).transform(X)


def test_compile_command_leaves_nothing_to_compile(capfd):
    assert main(["compile"]) == 0
    out = capfd.readouterr().out.splitlines()
    steps = [step.name for step in warm_up_steps()]
    assert out[0].startswith("numba cache: ")
    assert [line.split("s  ", 1)[1] for line in out[1:]] == [*steps, "in all"]
    with compiled_functions() as compiled:
        user_session()
    assert compiled == []
    # The cache is warm now: --jobs 2 starts two processes that load it, one share of the
    # families each, and every step runs once more here. Their lines reach the terminal (fd 1).
    assert main(["compile", "--jobs", "2"]) == 0
    out = capfd.readouterr().out
    for name in steps:
        assert out.count(name) == 1, name
    assert "every step again in this process (cache check)" in out and "in all" in out
    # A predict step given alone (a process's --only share could hold one) fits its model.
    assert list(compile_kernels(only=[1, 3])) == [steps[1], steps[3]]


def test_process_shares_keep_families_whole_and_balance_them():
    families = [step.family for step in warm_up_steps()]
    assert process_shares(families, 1) == [list(range(len(families)))]
    for n in range(2, 8):
        shares = process_shares(families, n)
        assert 2 <= len(shares) <= min(n, 7)  # the common family and 6 others
        assert sorted(i for share in shares for i in share) == list(range(len(families)))
        assert all(share == sorted(share) for share in shares)
        assert {families[i] for i in shares[0]} >= {COMMON}
        homes = {}
        for k, share in enumerate(shares):
            for i in share:
                assert homes.setdefault(families[i], k) == k, families[i]
    # 2 processes: balanced by FAMILY_COST, to within the costliest family besides the
    # common one (a greedy split can be off by one family).
    two = process_shares(families, 2)
    costs = [sum(_warmup.FAMILY_COST[f] for f in {families[i] for i in share}) for share in two]
    assert len(two) == 2
    assert max(costs) - min(costs) <= max(c for f, c in _warmup.FAMILY_COST.items() if f != COMMON)
    with pytest.raises(ValueError, match="at least 1"):
        process_shares(families, 0)


def test_a_failed_compile_process_is_reported(monkeypatch):
    monkeypatch.setattr(_warmup.sys, "executable", "/bin/false")  # every process exits 1
    with pytest.raises(RuntimeError, match="failed with status 1"):
        compile_kernels(n_processes=2)


def test_nothing_to_compile_without_the_jit(monkeypatch, capsys):
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    with pytest.raises(ValueError, match="NUMBA_DISABLE_JIT is set"):
        compile_kernels()
    assert main(["compile"]) == 1
    assert "NUMBA_DISABLE_JIT is set" in capsys.readouterr().err


def test_step_numbers_are_checked():
    n_steps = len(warm_up_steps())
    with pytest.raises(ValueError, match=f"step numbers go from 0 to {n_steps - 1}"):
        compile_kernels(only=[0, n_steps])
    assert main(["compile", "--only", "1,x"]) == 2
    assert main(["compile", "--only", "-1"]) == 1


@pytest.mark.parametrize("splitters", [["random"], "random", ["random", "best", "random"]])
def test_warm_up_always_includes_the_exact_splitter(splitters):
    steps = [step.name for step in warm_up_steps(splitters)]
    assert steps[0] == "classifier fit, iris, serial"
    assert not any("hist" in name for name in steps)  # nor in the categorical step's name
    assert [name for name in steps if name.startswith("random")] == [
        "random fit, iris, serial",
        "random fit, 20,000 x 20, n_jobs=-1",
    ]


def test_unknown_splitter_is_refused():
    with pytest.raises(ValueError, match="unknown splitter 'fast'"):
        warm_up_steps(["best", "fast"])
    assert main(["compile", "--splitter", "fast"]) == 2  # argparse's usage error
