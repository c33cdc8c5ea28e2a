"""Compile every fit and predict path ahead of use: the ``dtjit compile`` command.

numba compiles dtjit's kernels the first time a fit or predict needs them (minutes in all on
a 2-core machine, see the README's "First call and compilation") and caches the machine code
on disk. :func:`compile_kernels` runs one small fit or predict per compiled path, so that
cost is paid once, where it suits: after ``pip install``, while building a container image,
before a benchmark. ``benchmarks/bench_startup.py`` times the same steps, so the list it
checks for completeness ("every kernel compiled") is this one.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from .engine.jit import PASS_PARALLEL_MIN_WORK
from .predict.routing import PARALLEL_PREDICT_MIN_WORK

SPLITTERS = ("best", "hist", "random")
PARALLEL_ROWS = 20_000  # x 20 features: well above dtjit's threshold for parallel kernels
N_FEATURES = 20
SEED = 0
# The family of the steps the common fit compiles (the exact builder, predict, the small
# options): the other families compile kernels of their own and can run in other processes.
COMMON = "common"
# Seconds each family's steps took in a cold `dtjit compile --jobs 2` (numba 0.68, 2 cores):
# what a family compiles beyond the kernels the processes share through the cache. Only to
# balance `dtjit compile --jobs`.
FAMILY_COST = {COMMON: 39.2, "hist": 17.8, "many-classes": 16.0, "categorical": 10.6,
               "multi-output": 8.9, "criteria": 6.3, "two-valued": 3.3}  # fmt: skip
# Classes of the many-classes step: past 256 the presorted class codes take two bytes.
MANY_CLASSES = 300


class Step(NamedTuple):
    """One warm-up step: its name, the function running it and its family of kernels."""

    name: str
    run: Callable[[], Any]
    family: str


def threaded_predict_rows(X: np.ndarray) -> np.ndarray:
    """Return ``X``'s rows repeated up to the size from which a prediction runs threaded."""
    n_rows = -(-PARALLEL_PREDICT_MIN_WORK // X.shape[1])
    return np.resize(X, (max(n_rows, X.shape[0]), X.shape[1]))


def splitter_list(splitters: str | Sequence[str]) -> list[str]:
    """Validate splitter names: each once, ``"best"`` first and always (one name or several)."""
    if isinstance(splitters, str):  # one name, not a sequence of its letters
        splitters = [splitters]
    unknown = [s for s in splitters if s not in SPLITTERS]
    if unknown:
        raise ValueError(f"unknown splitter {unknown[0]!r}; expected some of {list(SPLITTERS)}")
    return list(dict.fromkeys(["best", *splitters]))


def warm_up_steps(
    splitters: str | Sequence[str] = SPLITTERS, rejected: set[str] | None = None
) -> list[Step]:
    """Return the named steps that together compile every fit and predict path, in order.

    Parameters
    ----------
    splitters : str or sequence of str, default=("best", "hist", "random")
        Splitters whose paths are compiled; the exact splitter's (``"best"``) always are.
        Any other name raises ``ValueError``.
    rejected : set of str, default=None
        Receives the combinations an optional splitter refuses with a ``ValueError`` (say,
        multi-output y with ``splitter="hist"``): they are skipped, not failures.

    Returns
    -------
    list of Step
        Names, functions without arguments and families, to be run in this order (a predict
        step uses the model of the fit step before it, and fits it first when run alone).
        Steps of the family ``"common"`` need the kernels of the first, common fit; each
        other family (``"hist"``, ``"categorical"``, ``"criteria"``, ``"multi-output"``,
        ``"many-classes"``) compiles kernels few fits use and can run in a process of its own.
    """
    from sklearn.datasets import load_diabetes, load_iris, make_classification

    from ._estimators import DecisionTreeClassifier as Classifier
    from ._estimators import DecisionTreeRegressor as Regressor
    from .discretize import MDLPDiscretizer
    from .engine.sweep_exact import ACCELERATE_MIN_ROWS

    splitters = splitter_list(splitters)
    if rejected is None:
        rejected = set()
    iris_X, iris_y = load_iris(return_X_y=True)
    X, y = make_classification(
        n_samples=PARALLEL_ROWS, n_features=N_FEATURES, n_informative=N_FEATURES // 2,
        random_state=SEED,
    )  # fmt: skip
    X = X.astype(np.float32)
    target = X[:, 0].astype(np.float64) + y  # a regression target on the same rows
    diabetes_X, diabetes_y = load_diabetes(return_X_y=True)
    weights = np.random.default_rng(SEED).uniform(0.5, 2.0, len(y))

    def attempt(splitter: str, run: Callable[..., Any], *args: Any) -> None:
        # The optional splitters may reject a combination (say, hist with max_features):
        # note it and go on; the exact splitter must run everything.
        try:
            run(splitter, *args)
        except ValueError as exc:
            if splitter == "best":
                raise
            rejected.add(f"{splitter}: {exc}")

    def classifier_paths(splitter: str, n_jobs: int | None, Xs: np.ndarray, ys: np.ndarray) -> None:
        model = Classifier(
            splitter=splitter, criterion="entropy", max_leaf_nodes=16, max_features=2,
            n_jobs=n_jobs, random_state=SEED,
        )  # fmt: skip
        model.fit(Xs, ys, sample_weight=np.ones(len(ys)) if n_jobs is None else weights)
        model.predict_proba(Xs), model.apply(Xs), model.decision_path(Xs)

    def regressor_paths(splitter: str, n_jobs: int | None, Xs: np.ndarray, ys: np.ndarray) -> None:
        for params in ({}, {"max_leaf_nodes": 16}):
            model = Regressor(splitter=splitter, n_jobs=n_jobs, **params).fit(Xs, ys)
            model.predict(Xs), model.apply(Xs), model.decision_path(Xs)

    def other_paths() -> None:
        for splitter in splitters:
            attempt(splitter, classifier_paths, None, iris_X, iris_y)
            attempt(splitter, classifier_paths, -1, X, y)

    def regressor() -> None:
        for splitter in splitters:
            attempt(splitter, regressor_paths, None, diabetes_X, diabetes_y)
            attempt(splitter, regressor_paths, -1, X, target)
        # scikit-learn's partial_dependence calls this ('recursion', its default for trees).
        model = Regressor(max_depth=4).fit(diabetes_X, diabetes_y)
        model._compute_partial_dependence_recursion(diabetes_X[:5, [2, 3]], np.array([2, 3]))

    def discretizer() -> None:
        MDLPDiscretizer().fit(iris_X, iris_y).transform(iris_X)

    # The optional searches are chosen before any kernel runs (``grow``): each is
    # compiled on its first use, in these steps.
    iris_nan = iris_X.copy()
    iris_nan[::7, 0] = np.nan
    iris_nan[3::11, 2] = np.nan
    # Column 0 as integer codes: a categorical feature of 8 categories.
    iris_cat = iris_X.copy()
    iris_cat[:, 0] = np.floor((iris_X[:, 0] - 4.3) * 2.0)
    diabetes_positive = diabetes_y / diabetes_y.mean()
    iris_two = np.column_stack([iris_y, iris_y == 1])
    diabetes_two = np.column_stack([diabetes_y, diabetes_X[:, 2]])

    # A 0/1 indicator column: the exact splitter's two-valued search
    # (dtjit.engine.sweep_two_valued), an accelerator of fits from its MIN_ROWS rows on; serial
    # and threaded. The class with every tenth row flipped: the root splits on it, and its
    # children split further, so the kernels of a chosen two-valued split compile too.
    iris_indicator = np.column_stack([iris_X, iris_X[:, 0] > 5.8])
    X_indicator = np.column_stack([X, (y == 1) != (np.arange(len(y)) % 10 == 0)])
    # Rows from which the exact fit's accelerators (block and screened sweeps) compile.
    large = ACCELERATE_MIN_ROWS // len(X) + 1
    X_large, y_large = np.tile(X_indicator, (large, 1)), np.tile(y, large)

    def two_valued() -> None:
        Classifier(random_state=SEED, max_depth=4).fit(X_indicator, y).predict(X_indicator)
        Classifier(random_state=SEED, n_jobs=-1).fit(X_indicator, y)

    def large_fits() -> None:
        for n_jobs in (None, -1):
            for criterion in ("gini", "entropy"):
                Classifier(criterion=criterion, max_depth=8, n_jobs=n_jobs).fit(X_large, y_large)
        Classifier(criterion="entropy", max_depth=8).fit(
            X_large, y_large % 3 + (X_large[:, 1] > 0), sample_weight=np.tile(weights, large)
        )
        # Columns repeated up to the cells from which single passes over the data (the
        # two-valued scan and bit fill, the sorted class codes) run threaded.
        X_wide = np.tile(X_large, (1, -(-PASS_PARALLEL_MIN_WORK // X_large.size)))
        Classifier(max_depth=2, n_jobs=-1).fit(X_wide, y_large)

    def hist_large() -> None:
        # From ACCELERATE_MIN_ROWS rows, small nodes are swept by rows (sweep_hist's row
        # sweeps): a specialisation of the search of its own.
        for n_jobs in (None, -1):
            Classifier(splitter="hist", max_depth=8, n_jobs=n_jobs).fit(X_large, y_large)

    def hist_two_bins() -> None:
        # A column of two values is binned by one comparison (binning.two_bin_switch).
        Classifier(splitter="hist", random_state=SEED).fit(iris_indicator, iris_y)
        Classifier(splitter="hist", random_state=SEED, n_jobs=-1).fit(X_indicator, y)

    # NaN in inputs past the plain walk's size, and past the threaded walk's: the packed
    # walks' NaN variants, serial and threaded (and the threaded fit's NaN sweeps).
    X_nan = X.copy()
    X_nan[::7, 0] = np.nan

    def missing_values() -> None:
        for splitter in splitters:
            model = Classifier(splitter=splitter, random_state=SEED).fit(iris_nan, iris_y)
            model.predict(iris_nan)
        model = Classifier(max_depth=6, n_jobs=-1, random_state=SEED).fit(X_nan, y)
        model.predict(X_nan[:1000]), model.predict(threaded_predict_rows(X_nan))
        # The exact search's accelerated sweeps with NaN rows (a large fit).
        X_large_nan = np.tile(X_nan, (large, 1))
        Classifier(max_depth=6, random_state=SEED).fit(X_large_nan, y_large)

    categorical_splitters = [s for s in splitters if s != "random"]  # "random" refuses them

    # Columns 0-7 as integer codes of 4-5 categories: 20,000 rows x 8 categorical features is
    # above the threshold of the threaded subset search.
    X_cat = X.copy()
    X_cat[:, :8] = np.clip(np.floor(X[:, :8]) + 2.0, 0.0, 4.0)

    def categorical() -> None:
        for splitter in categorical_splitters:
            model = Classifier(splitter=splitter, categorical_features=[0]).fit(iris_cat, iris_y)
            model.predict(iris_cat), model.apply(iris_cat), model.decision_path(iris_cat)
            model = Classifier(
                splitter=splitter, categorical_features=list(range(8)), max_depth=6, n_jobs=-1
            )
            model.fit(X_cat, y).predict(threaded_predict_rows(X_cat))

    def other_criteria() -> None:
        for splitter in splitters:
            for estimator, criterion, X_c, y_c in (
                (Classifier, "gain_ratio", iris_X, iris_y),
                (Regressor, "poisson", diabetes_X, diabetes_positive),
                (Regressor, "absolute_error", diabetes_X, diabetes_y),
            ):
                attempt(splitter, lambda s, e=estimator, c=criterion, X_c=X_c, y_c=y_c: e(
                    splitter=s, criterion=c, max_depth=8, random_state=SEED
                ).fit(X_c, y_c).predict(X_c))  # fmt: skip
        # The threaded absolute-error search (the other criteria share the common sweeps).
        Regressor(criterion="absolute_error", max_depth=4, n_jobs=-1).fit(X, target)

    def multi_output() -> None:
        for splitter in splitters:
            attempt(splitter, lambda s: Classifier(splitter=s, random_state=SEED).fit(
                iris_X, iris_two).predict_proba(iris_X))  # fmt: skip
            attempt(splitter, lambda s: Regressor(splitter=s, random_state=SEED).fit(
                diabetes_X, diabetes_two).predict(diabetes_X))  # fmt: skip
        # The threaded multi-output search.
        Classifier(max_depth=6, n_jobs=-1).fit(X, np.column_stack([y, X[:, 0] > 0.0]))

    # More than 256 classes: the presorted class codes are uint16
    # (``engine.prepare.sorted_class_codes``), which compiles the exact split search and
    # partition once more (32 s on its own).
    many_labels = np.arange(len(y)) % MANY_CLASSES
    n_few_rows = 3 * MANY_CLASSES

    def many_classes() -> None:
        model = Classifier(random_state=SEED).fit(X[:n_few_rows], many_labels[:n_few_rows])
        model.predict_proba(X[:n_few_rows])
        Classifier(max_depth=6, random_state=SEED, n_jobs=-1).fit(X, many_labels)
        # Weighted: the builder renumbers the samples (sweep_exact.renumber_samples).
        Classifier(criterion="entropy", max_depth=6, random_state=SEED).fit(
            X[:n_few_rows], many_labels[:n_few_rows], sample_weight=weights[:n_few_rows]
        )
        # The accelerated sweeps on two-byte class codes (a large fit).
        Classifier(max_depth=4, random_state=SEED).fit(X_large, np.tile(many_labels, large))

    def pruning() -> None:
        Classifier(ccp_alpha=0.01).fit(iris_X, iris_y).cost_complexity_pruning_path(iris_X, iris_y)

    fitted: dict[str, Any] = {}

    def fit(name: str, splitter: str, n_jobs: int | None, X: np.ndarray, y: np.ndarray) -> None:
        model = Classifier(splitter=splitter, n_jobs=n_jobs, random_state=SEED)
        fitted[name] = model.fit(X, y)

    # The predict steps use the model of the fit step before them; run without it (a process
    # given some step numbers only), they fit it first.
    fit_iris = partial(fit, "iris", "best", None, iris_X, iris_y)
    fit_parallel = partial(fit, "parallel", "best", -1, X, y)

    def predict(name: str, fit_first: Callable[[], None], X: np.ndarray) -> None:
        if name not in fitted:
            fit_first()
        fitted[name].predict(X)

    parallel = f"{PARALLEL_ROWS:,} x {X.shape[1]}, n_jobs=-1"
    parallel_predict = f"{threaded_predict_rows(X).shape[0]:,} x {X.shape[1]}, n_jobs=-1"
    steps = [
        Step("classifier fit, iris, serial", fit_iris, COMMON),
        Step("classifier predict, iris, serial",
             partial(predict, "iris", fit_iris, iris_X), COMMON),
        Step(f"classifier fit, {parallel}", fit_parallel, COMMON),
        Step(f"classifier predict, {parallel_predict}",
             partial(predict, "parallel", fit_parallel, threaded_predict_rows(X)), COMMON),
    ]  # fmt: skip
    for splitter in splitters:
        if splitter != "best":  # same predict kernels as "best": fit only
            # The random splitter runs in the exact builder; hist has a builder of its own.
            family = "hist" if splitter == "hist" else COMMON
            steps += [
                Step(f"{splitter} fit, iris, serial",
                     lambda s=splitter: fit(s, s, None, iris_X, iris_y), family),
                Step(f"{splitter} fit, {parallel}", lambda s=splitter: fit(s, s, -1, X, y), family),
            ]  # fmt: skip
    if "hist" in splitters:
        steps.append(Step("hist fit: a 0/1 column (serial and n_jobs=-1)", hist_two_bins, "hist"))
        steps.append(Step(f"hist fit: {len(X_large):,} rows (row sweeps; serial and n_jobs=-1)",
                          hist_large, "hist"))  # fmt: skip
    steps += [
        Step("classifier: entropy, max_leaf_nodes, max_features, sample_weight, predict_proba, "
             "apply, decision_path (serial and n_jobs=-1)", other_paths, COMMON),
        Step("regressor: fit, max_leaf_nodes, predict, apply, decision_path "
             "(serial and n_jobs=-1), partial dependence", regressor, COMMON),
        Step("classifier: a 0/1 column (two-valued search), fit + predict "
             "(serial and n_jobs=-1)", two_valued, "two-valued"),
        Step(f"classifier: {len(X_large):,} rows (block and screened sweeps; serial and "
             "n_jobs=-1)", large_fits, COMMON),
        Step("classifier: NaN in X, fit + predict (each splitter; a large fit)", missing_values,
             COMMON),
        Step("classifier: categorical features, fit + predict, apply, decision_path "
             f"(serial and n_jobs=-1; {', '.join(categorical_splitters)})", categorical,
             "categorical"),
        Step("classifier / regressor: gain_ratio, poisson, absolute_error (each splitter)",
             other_criteria, "criteria"),
        Step("classifier / regressor: multi-output y, fit + predict (each splitter)",
             multi_output, "multi-output"),
        Step(f"classifier: {MANY_CLASSES} classes (two-byte class codes), fit + predict_proba "
             "(serial and n_jobs=-1), weighted, a large fit", many_classes, "many-classes"),
        Step("classifier: ccp_alpha and cost_complexity_pruning_path", pruning, COMMON),
        Step("MDLPDiscretizer fit + transform (not a tree kernel)", discretizer, COMMON),
    ]  # fmt: skip
    return steps


def process_shares(families: Sequence[str], n_processes: int) -> list[list[int]]:
    """Split step indices over at most ``n_processes`` processes, each family in one of them.

    Families go, costliest first, to the process with the least work so far (by
    :data:`FAMILY_COST`); the first process always holds the common family, which the other
    families' fits do not need in the same process. Processes that get nothing are left
    out; each share keeps the steps' order.

    Parameters
    ----------
    families : sequence of str
        The family of each step (:attr:`Step.family`).
    n_processes : int
        At least 1.

    Returns
    -------
    list of list of int
        Step indices per process; the first holds the common family.
    """
    if n_processes < 1:
        raise ValueError(f"n_processes must be at least 1, got {n_processes}.")
    load = [0.0] * n_processes
    home = {COMMON: 0}
    load[0] = FAMILY_COST.get(COMMON, 0.0)
    others = sorted(set(families) - {COMMON}, key=lambda f: (-FAMILY_COST.get(f, 0.0), f))
    for family in others:
        process = min(range(n_processes), key=lambda p: (load[p], p))
        home[family] = process
        load[process] += FAMILY_COST.get(family, 0.0)
    shares: list[list[int]] = [[] for _ in range(n_processes)]
    for index, family in enumerate(families):
        shares[home[family]].append(index)
    return [share for share in shares if share]


def compile_kernels(
    splitters: str | Sequence[str] = SPLITTERS,
    progress: Callable[[str, float], None] | None = None,
    n_processes: int = 1,
    only: Sequence[int] | None = None,
) -> dict[str, float]:
    """Run the steps of :func:`warm_up_steps` once, compiling what numba has not cached.

    Parameters
    ----------
    splitters : str or sequence of str, default=("best", "hist", "random")
        Splitters whose paths are compiled (the exact splitter's always are).
    progress : callable, default=None
        Called as ``progress(step_name, seconds)`` after each step run in this process.
    n_processes : int, default=1
        With more than one, the step families (see :func:`process_shares`) are compiled by
        that many fresh Python processes at once (``python -m dtjit compile``, sharing
        numba's cache), then every step runs once more here. That last pass loads what the
        processes compiled and compiles again whatever a race between them dropped: two
        processes adding different versions of one kernel to its cache index at the same
        moment can lose one of them (the last writer wins).
    only : sequence of int, default=None
        Indices of the steps to run, in this process only (what each such process is told).

    Returns
    -------
    dict of str to float
        Seconds per step run in this process: compile time on a cold cache, the cache's load
        time (well under a second in all) on a warm one.

    Raises
    ------
    ValueError
        If numba's JIT is disabled (``NUMBA_DISABLE_JIT``), or a step number is unknown.
    RuntimeError
        If one of the processes fails; its last error lines are in the message.
    """
    import numba

    if numba.config.DISABLE_JIT:  # the steps would run as plain Python: hours, for nothing
        raise ValueError(
            "NUMBA_DISABLE_JIT is set: numba compiles nothing, so there is nothing to do."
        )
    steps = warm_up_steps(splitters)
    if only is not None and not set(only) <= set(range(len(steps))):
        raise ValueError(f"step numbers go from 0 to {len(steps) - 1}, got {list(only)}.")
    splitter_args = [arg for name in splitter_list(splitters) for arg in ("--splitter", name)]
    if n_processes > 1 and only is None:
        shares = process_shares([step.family for step in steps], n_processes)
        _run_processes([[*splitter_args, "--only", _indices(share)] for share in shares])
    seconds = {}
    for index, (name, run, _) in enumerate(steps):
        if only is not None and index not in only:
            continue
        start = time.perf_counter()
        run()
        seconds[name] = time.perf_counter() - start
        if progress is not None:
            progress(name, seconds[name])
    return seconds


def _indices(share: Sequence[int]) -> str:
    return ",".join(str(index) for index in share)


def _run_processes(arguments: list[list[str]]) -> None:
    """Run ``python -m dtjit compile ARGS`` for each ``ARGS`` at once; wait for all of them.

    Their output goes to ours as they print it; their error output to temporary files (a
    pipe left unread while waiting for another process could fill up and stall its writer),
    quoted when one fails. An exception here (Ctrl-C) kills the ones still running.
    """
    with contextlib.ExitStack() as stack:
        started = []
        try:
            for args in arguments:
                errors = stack.enter_context(tempfile.TemporaryFile("w+"))
                command = [sys.executable, "-m", "dtjit", "compile", *args]
                started.append((subprocess.Popen(command, stderr=errors, text=True), errors))
            for process, _ in started:
                process.wait()
        finally:
            for process, _ in started:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        for process, errors in started:
            if process.returncode != 0:
                errors.seek(0)
                tail = " | ".join(errors.read().strip().splitlines()[-3:])
                raise RuntimeError(
                    f"a compile process ({' '.join(process.args[3:])}) failed with status "
                    f"{process.returncode}: {tail}"
                )
