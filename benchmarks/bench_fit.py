"""Fit benchmark: dtjit (exact and histogram splitters) against scikit-learn and LightGBM.

Data (the same arrays for every contender):

- ``binary``: ``make_classification``, 2 classes, 20 features (10 informative), float32,
  seed 0; ``--rows`` training rows (default 1,000,000) plus ``rows // 4`` held out for
  accuracy (20 % of all rows);
- ``10class``: the same generator with 10 classes;
- ``covtype``: UCI Covertype from ``../shared/data/covtype.csv.gz``, all 581,012 rows x 54
  features, 7 classes, shuffled with seed 0. The goal names all of its rows, so every
  contender is fitted on all of them and has no held-out rows: its accuracy is on the
  training rows (until 2026-11-27 it was fitted on an 80 % split, 464,810 rows, and scored
  on the other 20 %).

Each at full depth and ``max_depth=10``, ``random_state=0``, criterion gini (``--criterion
entropy``: dtjit and scikit-learn grow entropy trees, results in ``fit-entropy.*``; LightGBM
has no such choice and grows the same trees either way).

Contenders: dtjit ``splitter="best"`` (exact) and, when the installed dtjit accepts it,
``splitter="hist"`` (``max_bins=255``), each with every ``--n-jobs`` value (default 1 and
-1); scikit-learn's ``DecisionTreeClassifier`` (single-threaded); LightGBM (optional: the
``bench`` extra) growing one comparable tree (``_common.lightgbm_tree``) with 1 thread and
with as many threads as dtjit's ``n_jobs=-1``. Binning is inside LightGBM's ``fit`` and
dtjit hist's, so both are timed on the raw float32 array. For k > 2 classes LightGBM's one
round is k trees.

Method: every contender is warmed up on a slice, then the runs are interleaved (the order
rotates each round) and medians reported; scikit-learn at >= 1,000,000 training rows runs
``--sklearn-repeats-large`` times (default 1: one full-depth fit takes about a minute).
Ratios come from the same run: scikit-learn / dtjit, and LightGBM / dtjit at the same
thread count. Checks per configuration: whether dtjit exact's tree is scikit-learn's (node
by node from the root: same leaves, features and thresholds), held-out accuracy of each,
whether serial and parallel dtjit trees are bit-identical, the hist - exact accuracy gap.
Peak extra memory of each dtjit fit (and LightGBM's) is measured in a fresh process:
``VmHWM`` after the fit minus ``VmRSS`` before it, the peak reset just before the fit,
compared with the size of X as float32. numba's allocations are invisible to tracemalloc,
hence the resident set.

The scaling run fits ``binary`` at ``--scaling-rows`` (default 100k, 1M, 4M) rows, full
depth and ``max_depth=10``, with dtjit exact, dtjit hist and LightGBM at ``n_jobs=-1`` and
scikit-learn up to ``--sklearn-max-scaling-rows`` (default 1M); a point already measured by
the cases above is reused. It reports t(n) and the exponent b of a least-squares fit
t ~ n^b.

Results: ``benchmarks/results/fit.json`` and ``fit.md``, written atomically at the end;
finished configurations are kept in ``fit.partial.json`` while the run is going. A run that
leaves something out (``--datasets``, ``--no-*``, ``--quick``) or changes the sizes writes
``fit-partial-<date>-<time>.*`` instead, so it never replaces the full table; ``--output
NAME`` names the files.

Usage::

    .venv/bin/python benchmarks/bench_fit.py            # full run (about half an hour)
    .venv/bin/python benchmarks/bench_fit.py --quick    # small sizes, 1 repeat: does it work?
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    N_FEATURES,
    N_INFORMATIVE,
    RESULTS_DIR,
    SEED,
    SHARED_DATA_DIR,
    classification_data,
    lightgbm_tree,
    log,
    machine_info,
    publish,
    reset_peak_rss,
    rss_bytes,
    run_interleaved,
    run_json_child,
    splitter_problem,
    write_atomic,
)

CRITERIA = ("gini", "entropy")
MAX_BINS = 255
DEPTHS = (None, 10)
HOLD_OUT = 0.2
LARGE_ROWS = 1_000_000
WARMUP_ROWS = 20_000
MIN_ROWS = 10_000
MAX_TIE_CHECKS = 20
COVTYPE_PATH = SHARED_DATA_DIR / "covtype.csv.gz"
COVTYPE_FEATURES = 54
DEFAULT_ROWS = 1_000_000
DEFAULT_SCALING_ROWS = (100_000, 1_000_000, 4_000_000)
QUICK_ROWS = 30_000
QUICK_COVTYPE_ROWS = 40_000
QUICK_SCALING_ROWS = (10_000, 30_000, 100_000)
DATASETS = ("binary", "10class", "covtype")

# The fit table's header says which exact partition ran (``machine_info``'s flag).
PARTITION_NOTE = {
    True: "; exact partition in 16-row AVX-512 blocks",
    False: "; exact partition row by row (`dtjit.engine.simd.USE_COMPRESS` off)",
}


# -- data ---------------------------------------------------------------------------------------
@dataclass
class Data:
    name: str
    description: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    scored_on: str = "held-out rows"


def generated(name: str, n_classes: int, rows: int) -> Data:
    """``rows`` training rows of the shared generator and ``rows // 4`` held-out ones."""
    X, y = classification_data(rows + rows // 4, n_classes)
    return Data(
        name,
        f"make_classification, {n_classes} classes, {N_FEATURES} features "
        f"({N_INFORMATIVE} informative), float32, seed {SEED}",
        X[:rows],
        y[:rows],
        np.ascontiguousarray(X[rows:]),
        y[rows:],
    )


def covtype(rows: int | None) -> Data:
    """Covertype, shuffled with the seed; ``rows`` of it (all when None), fitted and scored."""
    import pandas as pd

    if not COVTYPE_PATH.is_file():
        raise FileNotFoundError(f"{COVTYPE_PATH} not found (the shared datasets)")
    table = pd.read_csv(COVTYPE_PATH)  # a header row; the last column is Cover_Type (1..7)
    X = table.iloc[:, :COVTYPE_FEATURES].to_numpy(np.float32)
    y = table["Cover_Type"].to_numpy()
    order = np.random.default_rng(SEED).permutation(len(y))
    # A subset (--covtype-rows, --quick) is drawn at random, in the file's order.
    rows_used = np.sort(order if rows is None else order[:rows])
    X = np.ascontiguousarray(X[rows_used])
    return Data(
        "covtype",
        f"UCI Covertype ({len(rows_used):,} of {len(y):,} rows, {COVTYPE_FEATURES} features, "
        f"7 classes), fitted on all of them (no hold-out: accuracy on the training rows)",
        X,
        y[rows_used],
        X,
        y[rows_used],
        scored_on="training rows",
    )


def load_data(name: str, rows: int, covtype_rows: int | None) -> Data:
    if name == "binary":
        return generated(name, 2, rows)
    if name == "10class":
        return generated(name, 10, rows)
    return covtype(covtype_rows)


# -- contenders ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Contender:
    engine: str  # dtjit_exact, dtjit_hist, sklearn, lightgbm
    n_jobs: int | None  # as given to dtjit; LightGBM gets the thread count it resolves to
    criterion: str = "gini"  # of dtjit and scikit-learn (LightGBM has none)

    @property
    def key(self) -> str:
        return self.engine if self.n_jobs is None else f"{self.engine} n_jobs={self.n_jobs}"

    @property
    def threads(self) -> int:
        from dtjit.engine.threads import resolve_n_jobs  # the package's own reading of n_jobs

        return resolve_n_jobs(self.n_jobs)

    def model(self, max_depth: int | None) -> Any:
        if self.engine.startswith("dtjit"):
            import dtjit

            params: dict[str, Any] = {}
            if self.engine == "dtjit_hist":
                params["splitter"] = "hist"
                if "max_bins" in dtjit.DecisionTreeClassifier().get_params():
                    params["max_bins"] = MAX_BINS
            return dtjit.DecisionTreeClassifier(
                criterion=self.criterion,
                max_depth=max_depth,
                random_state=SEED,
                n_jobs=self.n_jobs,
                **params,
            )
        if self.engine == "sklearn":
            from sklearn.tree import DecisionTreeClassifier

            return DecisionTreeClassifier(
                criterion=self.criterion, max_depth=max_depth, random_state=SEED
            )
        return lightgbm_tree(max_depth, self.threads)


def contenders(
    n_jobs_list: list[int], hist: bool, lightgbm: bool, criterion: str
) -> list[Contender]:
    engines = ["dtjit_exact"] + (["dtjit_hist"] if hist else [])
    out = [Contender(engine, n, criterion) for engine in engines for n in n_jobs_list]
    out.append(Contender("sklearn", None, criterion))
    if lightgbm:
        out += [Contender("lightgbm", n, criterion) for n in n_jobs_list]
    return out


def contender_from_key(key: str, criterion: str) -> Contender:
    engine, _, n_jobs = key.partition(" n_jobs=")
    return Contender(engine, int(n_jobs) if n_jobs else None, criterion)


def is_full_run(args: argparse.Namespace) -> bool:
    """Whether the run measures everything the published table shows, at its sizes."""
    return not (
        args.quick
        or args.no_scaling
        or args.no_memory
        or args.no_lightgbm
        or set(args.datasets) != set(DATASETS)
        or args.rows != DEFAULT_ROWS
        or args.covtype_rows is not None
    )


def result_stem(args: argparse.Namespace, now: time.struct_time) -> str:
    """File name, without suffix, of a run's results in ``RESULTS_DIR``.

    ``--output`` if given. Else a full run writes the published table, ``fit`` (Gini, the
    historical name) or ``fit-<criterion>``; a run that leaves something out or changes the
    sizes writes ``fit[-<criterion>]-partial-<date>-<time>``, so it never replaces the
    published table by accident.
    """
    if args.output is not None:
        return args.output
    stem = "fit" if args.criterion == "gini" else f"fit-{args.criterion}"
    if is_full_run(args):
        return stem
    return f"{stem}-partial-{time.strftime('%Y-%m-%d-%H%M', now)}"


def result_paths(stem: str) -> tuple[Path, Path, Path]:
    """JSON, markdown and partial-JSON paths of the results named ``stem``."""
    return (RESULTS_DIR / f"{stem}.json", RESULTS_DIR / f"{stem}.md",
            RESULTS_DIR / f"{stem}.partial.json")  # fmt: skip


# -- describing a fitted model ------------------------------------------------------------------
def lightgbm_shape(model: Any) -> tuple[int, int, int]:
    """Nodes, leaves and depth of a fitted LightGBM model's trees (summed / deepest)."""
    nodes = leaves = depth = 0
    for tree in model.booster_.dump_model()["tree_info"]:
        stack = [(tree["tree_structure"], 0)]
        while stack:
            node, d = stack.pop()
            nodes += 1
            if "leaf_index" in node or "left_child" not in node:
                leaves += 1
                depth = max(depth, d)
            else:
                stack += [(node["left_child"], d + 1), (node["right_child"], d + 1)]
    return nodes, leaves, depth


def describe(contender: Contender, model: Any, data: Data) -> dict[str, Any]:
    predicted = model.predict(data.X_test)
    if contender.engine == "lightgbm":
        nodes, leaves, depth = lightgbm_shape(model)
    else:
        nodes, leaves, depth = model.tree_.node_count, model.get_n_leaves(), model.get_depth()
    return {
        "accuracy": float(np.mean(predicted == data.y_test)),
        "node_count": int(nodes),
        "n_leaves": int(leaves),
        "depth": int(depth),
        "_predicted": predicted,
    }


def compare_trees(
    ours: Any, theirs: Any, X: np.ndarray, y: np.ndarray, criterion: str
) -> dict[str, Any]:
    """Walk two trees from their roots in step and report where, and why, they differ.

    Node ids differ (dtjit numbers breadth-first, scikit-learn depth-first), so nodes are
    paired by position: roots, then left with left and right with right. A pair matches
    when both are leaves, or both split on the same feature at exactly the same threshold.
    The trees are identical when every pair matches and the node counts are equal.

    Below a differing pair the subtrees are not compared (they hold other rows). For the
    ``MAX_TIE_CHECKS`` shallowest differing pairs, both splits are scored on the training
    rows reaching the node (decrease of ``criterion``, weighted by rows): equal scores mean
    the two libraries only broke a tie between equally good splits differently.
    """
    a = [ours.children_left.tolist(), ours.children_right.tolist(),
         ours.feature.tolist(), ours.threshold.tolist()]  # fmt: skip
    b = [theirs.children_left.tolist(), theirs.children_right.tolist(),
         theirs.feature.tolist(), theirs.threshold.tolist()]  # fmt: skip
    matched = 0
    differing: list[tuple[int, int, int]] = []
    stack = [(0, 0, 0)]
    while stack:
        i, j, depth = stack.pop()
        leaf_a, leaf_b = a[0][i] == -1, b[0][j] == -1
        if leaf_a and leaf_b:
            matched += 1
        elif leaf_a != leaf_b or a[2][i] != b[2][j] or a[3][i] != b[3][j]:
            differing.append((depth, i, j))
        else:
            matched += 1
            stack += [(a[0][i], b[0][j], depth + 1), (a[1][i], b[1][j], depth + 1)]
    differing.sort()
    _, codes = np.unique(y, return_inverse=True)
    checked = []
    for depth, i, j in differing[:MAX_TIE_CHECKS]:
        rows = rows_reaching(ours, i, X)
        split_a = None if a[0][i] == -1 else (a[2][i], a[3][i])
        split_b = None if b[0][j] == -1 else (b[2][j], b[3][j])
        score_a, score_b = (
            impurity_decrease(X[rows], codes[rows], s, criterion) for s in (split_a, split_b)
        )
        checked.append({
            "depth": depth,
            "rows": int(rows.sum()),
            "dtjit": "leaf" if split_a is None else f"x[{split_a[0]}] <= {split_a[1]!r}",
            "sklearn": "leaf" if split_b is None else f"x[{split_b[0]}] <= {split_b[1]!r}",
            f"{criterion}_decrease_dtjit": score_a,
            f"{criterion}_decrease_sklearn": score_b,
            "tie": bool(math.isclose(score_a, score_b, rel_tol=1e-9, abs_tol=1e-9)),
        })  # fmt: skip
    return {
        "identical": not differing and ours.node_count == theirs.node_count,
        "matched_nodes": matched,
        "node_count_dtjit": int(ours.node_count),
        "node_count_sklearn": int(theirs.node_count),
        "differing_subtrees": len(differing),
        "differences_checked": checked,
        "all_checked_differences_are_ties": all(c["tie"] for c in checked),
    }


def rows_reaching(tree: Any, node: int, X: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of X whose path from the root passes through ``node``."""
    left, right = tree.children_left, tree.children_right
    parent = np.full(tree.node_count, -1, dtype=np.int64)
    split = np.flatnonzero(left != -1)
    parent[left[split]] = split
    parent[right[split]] = split
    mask = np.ones(X.shape[0], dtype=bool)
    child = node
    while parent[child] != -1:
        p = parent[child]
        # compare in float64, as the tree does: a float32 threshold would misroute rows
        goes_left = X[:, tree.feature[p]].astype(np.float64) <= tree.threshold[p]
        mask &= goes_left if left[p] == child else ~goes_left
        child = p
    return mask


def impurity_decrease(
    X: np.ndarray, codes: np.ndarray, split: tuple[int, float] | None, criterion: str
) -> float:
    """n * I(node) - n_left * I(left) - n_right * I(right), I Gini or entropy; 0 for no split."""
    if split is None:
        return 0.0

    def weighted_impurity(c: np.ndarray) -> float:
        counts = np.bincount(c).astype(np.float64)
        n = counts.sum()
        if n == 0:
            return 0.0
        if criterion == "gini":
            return n - float(np.sum(counts**2)) / n
        p = counts[counts > 0] / n
        return -n * float(np.sum(p * np.log2(p)))

    goes_left = X[:, split[0]].astype(np.float64) <= split[1]
    return (
        weighted_impurity(codes)
        - weighted_impurity(codes[goes_left])
        - weighted_impurity(codes[~goes_left])
    )


def same_tree_arrays(a: Any, b: Any) -> bool:
    fields = ("children_left", "children_right", "feature", "threshold", "value")
    return a.node_count == b.node_count and all(
        np.array_equal(getattr(a, f), getattr(b, f)) for f in fields
    )


# -- peak memory, in a fresh process ------------------------------------------------------------
def memory_child(data_dir: str, key: str, max_depth: str, criterion: str) -> None:
    """Body of the subprocess: one fit's peak extra resident memory, as one JSON line."""
    import gc

    X = np.load(Path(data_dir) / "X.npy")
    y = np.load(Path(data_dir) / "y.npy")
    contender = contender_from_key(key, criterion)
    depth = None if max_depth == "None" else int(max_depth)
    if contender.engine.startswith("dtjit"):
        # load the compiled kernels first (LightGBM has none: a warm-up fit would only
        # leave its histogram pool allocated and hide it from the measured fit)
        contender.model(depth).fit(X[:WARMUP_ROWS], y[:WARMUP_ROWS])
    gc.collect()
    release_free_memory()
    reset = reset_peak_rss()
    before = rss_bytes("VmRSS")
    contender.model(depth).fit(X, y)
    peak = rss_bytes("VmHWM")
    extra = None if None in (before, peak) else peak - before
    x_bytes = X.shape[0] * X.shape[1] * 4
    print(
        json.dumps(
            {
                "rss_before_bytes": before,
                "peak_rss_bytes": peak,
                "peak_extra_bytes": extra,
                "x_float32_bytes": x_bytes,
                "peak_extra_over_x": None if extra is None else extra / x_bytes,
                "peak_reset_before_fit": reset,
            }
        )
    )


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc), so VmRSS is the baseline."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def measure_memory(
    data: Data, max_depth: int | None, keys: list[str], data_dir: Path, criterion: str
) -> dict[str, dict[str, Any]]:
    if not (data_dir / "X.npy").exists():
        np.save(data_dir / "X.npy", data.X)
        np.save(data_dir / "y.npy", data.y)
    out = {}
    for key in keys:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_memory-child",
               str(data_dir), key, str(max_depth), criterion]  # fmt: skip
        out[key] = run_json_child(cmd)
        log(f"    {key:<24} peak extra {out[key]['peak_extra_bytes'] / 2**20:8.1f} MiB "
            f"({out[key]['peak_extra_over_x']:.2f} x X)")  # fmt: skip
    return out


# -- one configuration --------------------------------------------------------------------------
def time_entry(
    data: Data,
    max_depth: int | None,
    field: list[Contender],
    repeats: int,
    sk_repeats: int,
) -> dict[str, Any]:
    """Warm up, then interleaved timed fits of every contender on one configuration."""
    warm = slice(0, min(WARMUP_ROWS, len(data.y)))
    for c in field:
        c.model(max_depth).fit(data.X[warm], data.y[warm])

    def fit(c: Contender) -> Any:
        return c.model(max_depth).fit(data.X, data.y)

    def report(key: str, r: int, seconds: float) -> None:
        log(f"    {key:<24} run {r + 1}: fit {seconds:8.3f} s")

    times, last = run_interleaved(
        {c.key: (lambda c=c: fit(c)) for c in field},
        {c.key: sk_repeats if c.engine == "sklearn" else repeats for c in field},
        report,
    )
    results: dict[str, dict[str, Any]] = {}
    predictions: dict[str, np.ndarray] = {}
    for c in field:
        shape = describe(c, last[c.key], data)
        predictions[c.key] = shape.pop("_predicted")
        results[c.key] = {
            "engine": c.engine,
            "n_jobs": c.n_jobs,
            "threads": c.threads,
            "runs": len(times[c.key]),
            "fit_s": times[c.key],
            "fit_median_s": statistics.median(times[c.key]),
            **shape,
        }
    entry: dict[str, Any] = {
        "dataset": data.name,
        "data": data.description,
        "rows": int(len(data.y)),
        "test_rows": int(len(data.y_test)),
        "accuracy_on": data.scored_on,
        "n_features": int(data.X.shape[1]),
        "n_classes": int(len(np.unique(data.y))),
        "max_depth": max_depth,
        "contenders": results,
    }
    checks(entry, data, field, last, predictions)
    return entry


def checks(
    entry: dict[str, Any],
    data: Data,
    field: list[Contender],
    models: dict[str, Any],
    predictions: dict[str, np.ndarray],
) -> None:
    """Ratios, the exact tree against scikit-learn's, serial against parallel, hist's gap."""
    results = entry["contenders"]
    by_engine: dict[str, list[Contender]] = {}
    for c in field:
        by_engine.setdefault(c.engine, []).append(c)
    lgbm = {c.n_jobs: c.key for c in by_engine.get("lightgbm", [])}
    entry["speedup_vs_sklearn"] = {}
    entry["speedup_vs_lightgbm"] = {}
    for engine in ("dtjit_exact", "dtjit_hist"):
        for c in by_engine.get(engine, []):
            median = results[c.key]["fit_median_s"]
            if "sklearn" in results:
                entry["speedup_vs_sklearn"][c.key] = results["sklearn"]["fit_median_s"] / median
            if c.n_jobs in lgbm:
                entry["speedup_vs_lightgbm"][c.key] = (
                    results[lgbm[c.n_jobs]]["fit_median_s"] / median
                )
        same = by_engine.get(engine, [])
        if len(same) > 1:
            entry.setdefault("threads_bit_identical", {})[engine] = all(
                same_tree_arrays(models[same[0].key].tree_, models[c.key].tree_) for c in same[1:]
            )
    exact = by_engine["dtjit_exact"][0].key
    if "sklearn" in results:
        comparison = compare_trees(
            models[exact].tree_, models["sklearn"].tree_, data.X, data.y, field[0].criterion
        )
        comparison["contender"] = exact
        comparison["prediction_agreement"] = float(
            np.mean(predictions[exact] == predictions["sklearn"])
        )
        entry["exact_vs_sklearn"] = comparison
    if "dtjit_hist" in by_engine:
        hist = by_engine["dtjit_hist"][0].key
        entry["hist_vs_exact"] = {
            "accuracy_gap_pp": 100 * (results[exact]["accuracy"] - results[hist]["accuracy"]),
            "prediction_agreement": float(np.mean(predictions[exact] == predictions[hist])),
            "identical_tree": same_tree_arrays(models[exact].tree_, models[hist].tree_),
        }


# -- scaling ------------------------------------------------------------------------------------
def growth(rows: list[int], seconds: list[float]) -> float | None:
    """Exponent b of the least-squares line log t = a + b log n."""
    if len(rows) < 2:
        return None
    slope, _ = np.polyfit(np.log(rows), np.log(seconds), 1)
    return float(slope)


def scaling_summary(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per max_depth and contender: rows, median seconds, step ratios and the exponent."""
    series: dict[tuple, dict[int, float]] = {}
    labels = {}
    for p in points:
        for key, r in p["contenders"].items():
            series.setdefault((p["max_depth"], key), {})[p["rows"]] = r["fit_median_s"]
            labels[key] = label(r)
    out = []
    for (max_depth, key), by_rows in series.items():
        rows = sorted(by_rows)
        seconds = [by_rows[n] for n in rows]
        out.append({
            "max_depth": max_depth,
            "contender": key,
            "label": labels[key],
            "rows": rows,
            "fit_median_s": seconds,
            "step_ratio": [b / a for a, b in zip(seconds, seconds[1:], strict=False)],
            "exponent": growth(rows, seconds),
        })  # fmt: skip
    return out


# -- reporting ----------------------------------------------------------------------------------
LABELS = {"dtjit_exact": "dtjit exact", "dtjit_hist": "dtjit hist",
          "sklearn": "scikit-learn", "lightgbm": "LightGBM"}  # fmt: skip


def label(result: dict[str, Any]) -> str:
    name = LABELS[result["engine"]]
    return name if result["n_jobs"] is None else f"{name}, {result['threads']} thr"


def _x(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def _load(load: list[float] | None) -> str:
    return "?" if load is None else " / ".join(f"{x:.2f}" for x in load)


def _depth(max_depth: int | None) -> str:
    return "full" if max_depth is None else str(max_depth)


def check_cells(entry: dict[str, Any]) -> list[str]:
    """The cells of one configuration's row in the checks table."""
    cells = ["-"] * 5
    c = entry.get("exact_vs_sklearn")
    if c is not None:
        checked = c["differences_checked"]
        first = checked[0] if checked else None
        ties = sum(d["tie"] for d in checked)
        cells = [
            "yes" if c["identical"] else "no",
            f"{c['matched_nodes']:,} of {c['node_count_dtjit']:,} / {c['node_count_sklearn']:,}",
            "-"
            if first is None
            else f"depth {first['depth']} ({first['rows']:,} rows): {first['dtjit']} vs "
            f"{first['sklearn']}",
            "-" if not checked else f"{ties} of {len(checked)} ({c['differing_subtrees']:,})",
            f"{c['prediction_agreement']:.4f}",
        ]
    threads = entry.get("threads_bit_identical", {})
    cells.append(", ".join(f"{LABELS[k]}: {'yes' if v else 'NO'}" for k, v in threads.items()))
    hist = entry.get("hist_vs_exact")
    cells.append("not available" if hist is None else f"{0.0 - hist['accuracy_gap_pp']:+.2f}")
    return [cell or "-" for cell in cells]


def markdown(report: dict[str, Any]) -> str:
    m, s = report["machine"], report["settings"]
    quick = s["quick"]
    lines = ["# Fit: dtjit exact / hist vs scikit-learn vs LightGBM", ""]
    if quick:
        repeats = f"{s['repeats']} repeat" + ("s" if s["repeats"] > 1 else "")
        lines += [f"**QUICK RUN (`--quick`: small sizes, {repeats}): it checks that the script "
                  "works; the timings are not the benchmark's result.**", ""]  # fmt: skip
    lines += [
        f"Command: `{' '.join(report['command'])}`; {m['date_utc']}; {m['cpus_available']} CPUs "
        f"({m['cpu_model']}), load average (1, 5, 15 min) at the start "
        f"{_load(report['load_average_start'])}, at the end {_load(m['load_average'])}; "
        f"numba {m['numba']}, scikit-learn {m['sklearn']}, LightGBM "
        f"{m['lightgbm'] or 'not installed'}, dtjit {m['dtjit']} (commit "
        f"{(m['git_commit'] or '?')[:10]}"
        + (", uncommitted changes" if m.get("dtjit_sources_modified") else "")
        + ")"
        + PARTITION_NOTE.get(m.get("dtjit_vector_partition"), "")
        + ".",
        "",
        f"Criterion {s['criterion']}; medians of interleaved runs after a warm-up "
        f"({s['repeats']} run(s), scikit-learn {s['sklearn_repeats_large']} at >= "
        f"{s['large_rows']:,} rows). *vs sklearn* = scikit-learn time / this time, *vs LightGBM*"
        " = LightGBM time at the same thread count / this time (> 1: faster). Accuracy on the "
        "held-out 20 %, but covtype's on its training rows: it is fitted on all its rows, the "
        "data the goal names. *Peak mem* = peak extra resident memory of the fit in a fresh "
        "process / size of X as float32. LightGBM's nodes and depth are summed / deepest over "
        "its trees (k trees for k > 2 classes).",
        "",
        "dtjit hist: " + (
            f"splitter=\"hist\", max_bins={s['max_bins']}." if s["hist_available"]
            else f"not available in the installed dtjit ({s['hist_problem']})."
        ),
    ]  # fmt: skip
    if not s["lightgbm_available"]:
        why = (
            "left out (`--no-lightgbm`; its trees do not depend on the criterion)"
            if s.get("lightgbm_left_out")
            else "not installed (`pip install .[bench]`)"
        )
        lines += ["", f"LightGBM: {why}."]
    lines += [
        "",
        "| data | rows | max_depth | contender | runs | fit (s) | vs sklearn | vs LightGBM "
        "| nodes | depth | accuracy | peak mem |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for e in report["results"]:
        memory = e.get("memory", {})
        for key, r in e["contenders"].items():
            mem = memory.get(key, {}).get("peak_extra_over_x")
            lines.append(
                f"| {e['dataset']} | {e['rows']:,} | {_depth(e['max_depth'])} | {label(r)} "
                f"| {r['runs']} | {r['fit_median_s']:.3f} "
                f"| {_x(e['speedup_vs_sklearn'].get(key))} "
                f"| {_x(e['speedup_vs_lightgbm'].get(key), 2)} "
                f"| {r['node_count']:,} | {r['depth']} | {r['accuracy']:.4f} "
                f"| {_x(mem, 2)} |"
            )
    lines += [
        "",
        "Checks: *same tree* = dtjit exact's tree equals scikit-learn's node by node from the "
        "root (same leaves, features, thresholds; paired by position since the numbering "
        "differs). scikit-learn breaks ties between equally good splits at random, dtjit by "
        "lowest feature then threshold, so a tie can make them differ: *ties* scores both "
        f"splits of each of the {MAX_TIE_CHECKS} shallowest differing nodes on the training "
        f"rows reaching it and counts those with equal {s['criterion']} decrease (in brackets: all "
        "differing nodes; their subtrees are not compared). *serial = parallel*: the trees "
        "of every n_jobs are bit-identical.",
        "",
        "| data | max_depth | same tree as sklearn | matched nodes of dtjit / sklearn "
        "| shallowest difference | ties among checked (all differences) | predictions agree "
        "| serial = parallel | hist - exact accuracy (pp) |",
        "|---|---:|---|---|---|---|---:|---|---:|",
    ]
    for e in report["results"]:
        lines.append(
            f"| {e['dataset']} | {_depth(e['max_depth'])} | " + " | ".join(check_cells(e)) + " |"
        )
    if report.get("scaling"):
        sizes = sorted({n for row in report["scaling"] for n in row["rows"]})
        lines += [
            "",
            "Scaling: `binary` data, median fit seconds by training rows; *b* is the exponent "
            "of a least-squares fit t ~ n^b (1 = linear).",
            "",
            "| max_depth | contender | " + " | ".join(f"{n:,}" for n in sizes) + " | b |",
            "|---:|---|" + "---:|" * (len(sizes) + 1),
        ]
        for row in report["scaling"]:
            t = dict(zip(row["rows"], row["fit_median_s"], strict=True))
            r = row["label"]
            cells = " | ".join("-" if n not in t else f"{t[n]:.3f}" for n in sizes)
            b = "-" if row["exponent"] is None else f"{row['exponent']:.2f}"
            lines.append(f"| {_depth(row['max_depth'])} | {r} | {cells} | {b} |")
    notes = sorted({e["note"] for e in report["results"] if "note" in e})
    notes += [f"{name} skipped: {why}." for name, why in s.get("datasets_skipped", {}).items()]
    if notes:
        lines += ["", *(f"Note: {n}" for n in notes)]
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add(
        "--rows",
        type=int,
        help=f"training rows of the generated data sets "
        f"(default {DEFAULT_ROWS}; --quick: {QUICK_ROWS})",
    )
    add(
        "--covtype-rows",
        type=int,
        help="rows of Covertype used, all of them for fitting "
        f"(default: all 581012; --quick: {QUICK_COVTYPE_ROWS})",
    )
    add("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    add(
        "--repeats",
        type=int,
        help="timed fits per contender; medians are reported (default 3; --quick: 1)",
    )
    add(
        "--sklearn-repeats-large",
        type=int,
        default=1,
        help=f"scikit-learn fits at >= {LARGE_ROWS:,} training rows (default 1, capped by "
        "--repeats)",
    )
    add(
        "--n-jobs",
        type=int,
        nargs="+",
        default=[1, -1],
        help="dtjit n_jobs values (LightGBM gets the same thread counts; default 1 -1)",
    )
    add(
        "--scaling-rows",
        type=int,
        nargs="+",
        help="training rows of the scaling run "
        f"(default {' '.join(map(str, DEFAULT_SCALING_ROWS))}; "
        f"--quick: {' '.join(map(str, QUICK_SCALING_ROWS))})",
    )
    add(
        "--scaling-n-jobs",
        type=int,
        nargs="+",
        default=[-1],
        help="dtjit / LightGBM n_jobs values of the scaling run (default -1)",
    )
    add(
        "--sklearn-max-scaling-rows",
        type=int,
        default=1_000_000,
        help="largest scaling size scikit-learn runs at (default 1000000)",
    )
    add("--no-scaling", action="store_true", help="skip the scaling run")
    add(
        "--no-lightgbm",
        action="store_true",
        help="leave LightGBM out (its trees do not depend on --criterion)",
    )
    add("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    add(
        "--quick",
        action="store_true",
        help="small sizes and 1 repeat, unless given: checks that the script works",
    )
    add(
        "--criterion",
        choices=CRITERIA,
        default="gini",
        help="dtjit's and scikit-learn's criterion (default gini; entropy writes fit-entropy.*)",
    )
    add(
        "--output",
        metavar="NAME",
        help="write benchmarks/results/NAME.json and NAME.md (default: fit.* for a full "
        "Gini run, fit-<criterion>.* for another criterion, and for a run that leaves "
        "something out or changes sizes fit[-<criterion>]-partial-<date>-<time>.*)",
    )
    add("--_memory-child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)  # fmt: skip
    quick = args.quick
    if args.rows is None:
        args.rows = QUICK_ROWS if quick else DEFAULT_ROWS
    if args.covtype_rows is None and quick:
        args.covtype_rows = QUICK_COVTYPE_ROWS
    if args.repeats is None:
        args.repeats = 1 if quick else 3
    if args.scaling_rows is None:
        args.scaling_rows = list(QUICK_SCALING_ROWS if quick else DEFAULT_SCALING_ROWS)
    if args.repeats < 1 or args.sklearn_repeats_large < 1:
        parser.error("--repeats and --sklearn-repeats-large must be at least 1")
    if min([args.rows, *args.scaling_rows, args.covtype_rows or MIN_ROWS]) < MIN_ROWS:
        parser.error(f"--rows, --covtype-rows and --scaling-rows must be at least {MIN_ROWS}")
    if 0 in args.n_jobs + args.scaling_n_jobs:
        parser.error("n_jobs 0 has no meaning; use a positive int or -1")
    if args.output is not None and (
        not args.output or Path(args.output).name != args.output or args.output.startswith(".")
    ):
        parser.error(f"--output takes a file name without a directory, not {args.output!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._memory_child:
        memory_child(*args._memory_child)
        return 0
    start = time.perf_counter()
    load_start = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    hist_problem = splitter_problem("hist")
    has_lightgbm = not args.no_lightgbm and lightgbm_tree(None, 1) is not None
    log(
        "dtjit hist: " + ("available" if hist_problem is None else f"not available: {hist_problem}")
    )
    if args.no_lightgbm:
        log("LightGBM: left out (--no-lightgbm)")
    else:
        log("LightGBM: " + ("installed" if has_lightgbm else "not installed, skipped"))
    field = contenders(args.n_jobs, hist_problem is None, has_lightgbm, args.criterion)
    json_path, md_path, partial_path = result_paths(result_stem(args, time.localtime()))
    log(f"results: {json_path} and {md_path.name}")
    skipped = {}
    if "covtype" in args.datasets and not COVTYPE_PATH.is_file():
        skipped["covtype"] = (
            f"{COVTYPE_PATH} not found (the shared datasets are not next to the repo)"
        )
        args.datasets = [d for d in args.datasets if d != "covtype"]
        log(f"covtype skipped: {skipped['covtype']}")
    report: dict[str, Any] = {
        "benchmark": "fit",
        "complete": False,
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "load_average_start": load_start,
        "settings": {
            "quick": args.quick,
            "rows": args.rows,
            "covtype_rows": args.covtype_rows or "all",
            "hold_out": HOLD_OUT,
            "datasets": args.datasets,
            "datasets_skipped": skipped,
            "max_depth": list(DEPTHS),
            "criterion": args.criterion,
            "seed": SEED,
            "n_jobs": args.n_jobs,
            "repeats": args.repeats,
            "sklearn_repeats_large": args.sklearn_repeats_large,
            "large_rows": LARGE_ROWS,
            "warmup_rows": WARMUP_ROWS,
            "hist_available": hist_problem is None,
            "hist_problem": hist_problem,
            "max_bins": MAX_BINS,
            "lightgbm_available": has_lightgbm,
            "lightgbm_left_out": args.no_lightgbm,
            "lightgbm_params": None if not has_lightgbm else {
                k: v for k, v in lightgbm_tree(None, 1).get_params().items()
                if k in ("n_estimators", "learning_rate", "num_leaves", "max_depth",
                         "min_child_samples", "max_bin")
            },
            "lightgbm_num_leaves_at_max_depth_10": 1024,
            "memory": not args.no_memory,
            "scaling_rows": None if args.no_scaling else args.scaling_rows,
            "scaling_n_jobs": args.scaling_n_jobs,
            "sklearn_max_scaling_rows": args.sklearn_max_scaling_rows,
            "timing": "warm-up, then interleaved runs (order rotated each round); medians",
        },
        "results": [],
        "scaling_points": [],
    }  # fmt: skip

    def save_partial() -> None:
        report["machine"] = machine_info()
        write_atomic(partial_path, json.dumps(report, indent=2) + "\n")

    measured: dict[tuple, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="dtjit-bench-fit-") as tmp:
        for name in args.datasets:
            log(f"{name}: loading ...")
            data = load_data(name, args.rows, args.covtype_rows)
            data_dir = Path(tmp) / name
            data_dir.mkdir()
            large = len(data.y) >= LARGE_ROWS
            sk_repeats = min(args.repeats, args.sklearn_repeats_large) if large else args.repeats
            for max_depth in DEPTHS:
                log(f"{name} ({len(data.y):,} rows) max_depth={max_depth} ...")
                entry = time_entry(data, max_depth, field, args.repeats, sk_repeats)
                if sk_repeats != args.repeats:
                    entry["note"] = (
                        f"scikit-learn ran {sk_repeats} time(s) at >= {LARGE_ROWS:,} rows, the "
                        f"others {args.repeats} (--sklearn-repeats-large)."
                    )
                if not args.no_memory:
                    keys = [c.key for c in field if c.engine in ("dtjit_exact", "dtjit_hist")]
                    keys += [c.key for c in field if c.engine == "lightgbm"][-1:]
                    entry["memory"] = measure_memory(
                        data, max_depth, keys, data_dir, args.criterion
                    )
                report["results"].append(entry)
                measured[(name, len(data.y), max_depth)] = entry
                save_partial()
            del data
        if not args.no_scaling:
            run_scaling(args, report, measured, save_partial)
    report["scaling"] = scaling_summary(report["scaling_points"])
    report["complete"] = True
    publish(report, markdown, json_path, md_path, start)
    if partial_path.exists():
        partial_path.unlink()
    return 0


def run_scaling(
    args: argparse.Namespace,
    report: dict[str, Any],
    measured: dict[tuple, dict[str, Any]],
    save_partial: Any,
) -> None:
    """Fit ``binary`` at every scaling size; reuse points the cases already measured."""
    hist = report["settings"]["hist_available"]
    lgbm = report["settings"]["lightgbm_available"]
    base = contenders(args.scaling_n_jobs, hist, lgbm, args.criterion)
    for rows in args.scaling_rows:
        field = [c for c in base if c.engine != "sklearn" or rows <= args.sklearn_max_scaling_rows]
        keys = [c.key for c in field]
        data = None
        for max_depth in DEPTHS:
            known = measured.get(("binary", rows, max_depth))
            if known is not None and all(k in known["contenders"] for k in keys):
                log(f"scaling: binary {rows:,} rows max_depth={max_depth}: reusing the case")
                point = {k: known["contenders"][k] for k in keys}
                source = "binary case"
            else:
                if data is None:
                    data = load_data("binary", rows, None)
                log(f"scaling: binary {rows:,} rows max_depth={max_depth} ...")
                sk_repeats = args.repeats
                if rows >= LARGE_ROWS:
                    sk_repeats = min(args.repeats, args.sklearn_repeats_large)
                entry = time_entry(data, max_depth, field, args.repeats, sk_repeats)
                point, source = entry["contenders"], "scaling run"
            report["scaling_points"].append(
                {"rows": rows, "max_depth": max_depth, "source": source, "contenders": point}
            )
            save_partial()
        del data


if __name__ == "__main__":
    raise SystemExit(main())
