"""A short tour of dtjit next to scikit-learn: accuracy, tree size, rules and speed.

Run it with ``dtjit bench`` (or ``make demo``). It needs no data files: the accuracy part uses
the Wisconsin breast cancer data bundled with scikit-learn, the speed part a generated array
(``dtjit bench --rows N`` sets its size, default 200,000 x 20).
"""

from __future__ import annotations

import os
import statistics
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dtjit

# scikit-learn's datasets and model selection are imported by the functions that use them, not
# here: the command line reads this module's defaults to build its parser, and `dtjit --help` or
# `dtjit show` need not load them.

SEED = 0
DEFAULT_ROWS = 200_000
MIN_ROWS = 100
N_FEATURES = 20
PREDICT_REPEATS = 5
WIDTH = 96


def _seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _ratio(sklearn_seconds: float, dtjit_seconds: float) -> str:
    """Phrase sklearn time / dtjit time as "N.Nx faster", "N.Nx slower" or "as fast"."""
    ratio = sklearn_seconds / dtjit_seconds
    if ratio >= 1.05:
        return f"dtjit is {ratio:.1f}x faster than scikit-learn"
    if ratio <= 1 / 1.05:
        return f"dtjit is {1.0 / ratio:.1f}x slower than scikit-learn"
    return f"dtjit is as fast as scikit-learn (time ratio {ratio:.2f})"


def _first_call_seconds() -> tuple[float, float]:
    """Time dtjit's first fit + predict in this process, then the same work again.

    The first call loads the compiled kernels from numba's on-disk cache, or compiles them
    when there is no valid cache yet. Its rows reach what the timed fits run: the threaded
    kernels, and the accelerators of fits from ``ACCELERATE_MIN_ROWS`` rows on (block and
    screened sweeps), so both the serial (``n_jobs=None``) and the threaded
    (``n_jobs=-1``) paths are warmed up and no timed fit compiles.
    """
    from sklearn.datasets import make_classification

    from .engine.sweep_exact import ACCELERATE_MIN_ROWS

    X, y = make_classification(
        n_samples=ACCELERATE_MIN_ROWS, n_features=N_FEATURES, n_informative=10, random_state=SEED
    )
    X = X.astype(np.float32)

    def work() -> None:
        for n_jobs in (None, -1):
            dtjit.DecisionTreeClassifier(max_depth=4, n_jobs=n_jobs).fit(X, y).predict(X)

    first = _seconds(work)
    again = _seconds(work)
    return first, again


def _accuracy_section() -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier as SklearnTree

    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, test_size=0.3, stratify=data.target, random_state=SEED
    )
    params = {"criterion": "gini", "max_depth": None, "random_state": SEED}
    ours = dtjit.DecisionTreeClassifier(**params).fit(X_train, y_train)
    theirs = SklearnTree(**params).fit(X_train, y_train)
    pred_ours, pred_theirs = ours.predict(X_test), theirs.predict(X_test)

    print("1. Accuracy on real data")
    print(
        f"   Wisconsin breast cancer (scikit-learn's load_breast_cancer): "
        f"{data.data.shape[0]} samples, {data.data.shape[1]} features, 2 classes"
    )
    print(
        f"   stratified 70/30 split (random_state={SEED}): "
        f"{len(y_train)} train, {len(y_test)} test; both trees: gini, full depth"
    )
    print()
    rows = [
        ("held-out accuracy", f"{np.mean(pred_ours == y_test):.4f}",
         f"{np.mean(pred_theirs == y_test):.4f}"),
        ("nodes", str(ours.tree_.node_count), str(theirs.tree_.node_count)),
        ("leaves", str(ours.get_n_leaves()), str(theirs.get_n_leaves())),
        ("depth", str(ours.get_depth()), str(theirs.get_depth())),
    ]  # fmt: skip
    print(f"   {'':<20}{'dtjit':>12}{'scikit-learn':>15}")
    for label, a, b in rows:
        print(f"   {label:<20}{a:>12}{b:>15}")
    agree = np.mean(pred_ours == pred_theirs)
    print(f"   the two trees predict the same class for {agree:.1%} of the test samples")
    print()

    rules = dtjit.export_rules(
        ours,
        feature_names=list(data.feature_names),
        class_names=list(data.target_names),
        sort_by="support",
    )
    print(f"2. The dtjit tree as rules: first 5 of {len(rules)}, largest support first")
    for i, rule in enumerate(rules[:5], start=1):
        print(
            textwrap.fill(
                rule,
                width=WIDTH,
                initial_indent=f"   {i}. ",
                subsequent_indent="      ",
                break_long_words=False,
            )
        )
    print()


def _speed_section(rows: int, fit_repeats: int, first: float, again: float) -> None:
    from sklearn.datasets import make_classification
    from sklearn.tree import DecisionTreeClassifier as SklearnTree

    X, y = make_classification(
        n_samples=rows, n_features=N_FEATURES, n_informative=10, random_state=SEED
    )
    X = X.astype(np.float32)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    contenders: dict[str, Callable[[], Any]] = {
        "dtjit, n_jobs=None (1 thread)": lambda: dtjit.DecisionTreeClassifier(random_state=SEED),
        "dtjit, n_jobs=-1 (all cores)": lambda: dtjit.DecisionTreeClassifier(
            n_jobs=-1, random_state=SEED
        ),
        "scikit-learn (1 thread)": lambda: SklearnTree(random_state=SEED),
    }
    fit_times: dict[str, list[float]] = {name: [] for name in contenders}
    predict_times: dict[str, list[float]] = {name: [] for name in contenders}
    fitted: dict[str, Any] = {}
    names = list(contenders)
    for r in range(fit_repeats):  # interleaved rounds, order rotated each round
        for name in names[r % len(names) :] + names[: r % len(names)]:
            model = contenders[name]()
            fit_times[name].append(_seconds(lambda m=model: m.fit(X, y)))
            fitted[name] = model
    for r in range(PREDICT_REPEATS):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            predict_times[name].append(_seconds(lambda m=fitted[name]: m.predict(X)))

    fit = {name: statistics.median(t) for name, t in fit_times.items()}
    predict = {name: statistics.median(t) for name, t in predict_times.items()}
    sk = "scikit-learn (1 thread)"
    fit_note = "1 run each" if fit_repeats == 1 else f"median of {fit_repeats} interleaved runs"

    print("3. Speed")
    print(
        f"   make_classification: {rows:,} x {N_FEATURES}, 2 classes, float32 (random_state={SEED})"
    )
    print(f"   full-depth gini trees, same parameters; this machine has {cores} CPU cores")
    print(
        f"   fit: {fit_note}; predict ({rows:,} rows): median of {PREDICT_REPEATS} interleaved runs"
    )
    print()
    print(
        f"   dtjit first call (includes JIT compile / cache load): {first:.2f} s  "
        f"(the same work once warm: {again:.2f} s)"
    )
    print()
    print(f"   {'':<32}{'fit':>10}{'predict':>12}{'nodes':>10}{'depth':>7}")
    for name in names:
        tree = fitted[name].tree_
        print(
            f"   {name:<32}{fit[name]:>9.2f}s{predict[name]:>11.4f}s"
            f"{tree.node_count:>10}{tree.max_depth:>7}"
        )
    print()
    for name in names[:2]:
        print(f"   {name}:")
        print(f"      fit:     {_ratio(fit[sk], fit[name])}")
        print(f"      predict: {_ratio(predict[sk], predict[name])}")


def run(rows: int = DEFAULT_ROWS, repeats: int = 1) -> None:
    """Compare dtjit with scikit-learn on real and generated data and print the results.

    Prints, as plain text: the held-out accuracy, node count, leaf count and depth of a
    full-depth dtjit tree and a scikit-learn tree fitted with the same parameters on the
    breast cancer data; the first five if-then rules of the dtjit tree; and fit / predict
    times of both on a generated array, with dtjit's first-call (compile or cache load)
    time reported apart.

    Parameters
    ----------
    rows : int, default=200,000
        Rows of the generated array of the speed part (at least ``MIN_ROWS``).
    repeats : int, default=1
        Fits per estimator in the speed part; the median is reported. 1 keeps the run well
        under a minute on two cores.
    """
    if rows < MIN_ROWS:
        raise ValueError(f"rows must be at least {MIN_ROWS}, got {rows}.")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}.")

    print(f"dtjit {dtjit.__version__} bench: dtjit vs scikit-learn decision trees")
    print("=" * WIDTH)
    # Said before the first call: on a machine without numba's cache it compiles for about
    # half a minute, which would otherwise look like a hang.
    print("(first call: loading dtjit's compiled kernels, or compiling them once: about half")
    print(
        " a minute on a new machine; `dtjit compile` compiles every path ahead of use)", flush=True
    )
    print()
    # Measured before anything else touches dtjit's kernels, so it is a true first call.
    first, again = _first_call_seconds()
    _accuracy_section()
    _speed_section(rows, repeats, first, again)
