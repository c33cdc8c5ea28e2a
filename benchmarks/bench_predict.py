"""Batch prediction benchmark: dtjit against scikit-learn (on the very same tree) and LightGBM.

Trees, all fitted by dtjit (gini, ``n_jobs=-1``) on 1,000,000 rows of ``make_classification``
(20 features, 10 informative, float32, fixed seed):

- ``binary-full``: 2 classes, full depth, timed with ``predict``;
- ``binary-depth10``: 2 classes, ``max_depth=10``, ``predict``;
- ``10class-full``: 10 classes, full depth, ``predict_proba``.

scikit-learn predicts with a twin holding exactly dtjit's nodes (see
``_common.sklearn_twin``): same tree, so the timings compare traversals only, and its
outputs are the plain reference dtjit's must equal (checked on every configuration).
LightGBM (optional: skipped when not installed) grows its own comparable single tree on
the same rows (``n_estimators=1, learning_rate=1, min_child_samples=1, max_bin=255``,
``num_leaves=32768`` at full depth, ``max_depth=10, num_leaves=1024`` otherwise); it is
timed on the binary trees only (its 10-class model is ten trees).

Prediction rows come from the same generator call as the training rows (held out). Every
contender is warmed up on 10,000 rows; then the contenders run in rounds, the order rotated
each round, and the median of ``--repeats`` runs is reported. Ratios are other / dtjit
time at the same thread count, from the same run.

The memory-mapped run writes ``--memmap-rows`` rows (default 10^8: 8 GB of float32) to an
``.npy`` file and predicts on ``np.load(path, mmap_mode="r")`` in a fresh process,
reporting wall time and peak extra resident memory (``VmHWM`` minus ``VmRSS`` before the
call, which includes the int64 output of 8 bytes per row).

Usage::

    .venv/bin/python benchmarks/bench_predict.py                 # 1M and 10M rows + memmap
    .venv/bin/python benchmarks/bench_predict.py --quick         # 100k rows, small memmap
"""

from __future__ import annotations

import argparse
import json
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
    classification_data,
    lightgbm_tree,
    log,
    publish,
    rss_bytes,
    run_interleaved,
    run_json_child,
    sklearn_twin,
)

JSON_PATH = RESULTS_DIR / "predict.json"
MD_PATH = RESULTS_DIR / "predict.md"

TRAIN_ROWS = 1_000_000
WARMUP_ROWS = 10_000
DEFAULT_ROWS = (1_000_000, 10_000_000)
QUICK_ROWS = (100_000,)
DEFAULT_MEMMAP_ROWS = 100_000_000
QUICK_MEMMAP_ROWS = 2_000_000
MEMMAP_CHUNK_ROWS = 1_000_000
LATENCY_CALLS = 2_000


@dataclass(frozen=True)
class Case:
    name: str
    n_classes: int
    max_depth: int | None
    method: str


CASES = (
    Case("binary-full", 2, None, "predict"),
    Case("binary-depth10", 2, 10, "predict"),
    Case("10class-full", 10, None, "predict_proba"),
)


def make_rows(n_classes: int, n_predict: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows, their labels, and ``n_predict`` held-out rows of the same generator."""
    X, y = classification_data(TRAIN_ROWS + n_predict, n_classes)
    return X[:TRAIN_ROWS], y[:TRAIN_ROWS], np.ascontiguousarray(X[TRAIN_ROWS:])


def fit_lightgbm(case: Case, X: np.ndarray, y: np.ndarray) -> Any | None:
    """LightGBM's comparable tree, for binary cases only (its 10-class model is ten trees)."""
    model = lightgbm_tree(case.max_depth, n_threads=2) if case.n_classes == 2 else None
    return None if model is None else model.fit(X, y)


def contenders(case: Case, model: Any, twin: Any, lgbm: Any) -> dict[str, Any]:
    """Name -> callable predicting a block of rows, all with the case's method."""
    method = case.method

    def dtjit_with(n_jobs: int) -> Any:
        def run(X: np.ndarray) -> np.ndarray:
            model.set_params(n_jobs=n_jobs)
            return getattr(model, method)(X)

        return run

    runs = {
        "dtjit_1": dtjit_with(1),
        "dtjit_2": dtjit_with(-1),
        "sklearn_1": lambda X: getattr(twin, method)(X),
    }
    if lgbm is not None:
        for threads in (1, 2):
            runs[f"lightgbm_{threads}"] = lambda X, t=threads: lgbm.predict(X, num_threads=t)
    return runs


def time_case(case: Case, rows_list: list[int], repeats: int) -> list[dict[str, Any]]:
    import dtjit

    log(f"{case.name}: data and fits ...")
    X, y, pool = make_rows(case.n_classes, max(rows_list))
    model = dtjit.DecisionTreeClassifier(max_depth=case.max_depth, n_jobs=-1, random_state=SEED)
    t = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - t
    twin = sklearn_twin(model)
    lgbm = fit_lightgbm(case, X, y)
    del X, y
    runs = contenders(case, model, twin, lgbm)
    for run in runs.values():
        run(pool[:WARMUP_ROWS])
    tree_info = {
        "node_count": model.tree_.node_count,
        "max_depth": model.tree_.max_depth,
        "dtjit_fit_s": fit_s,
        "lightgbm_leaves": (
            None if lgbm is None else lgbm.booster_.dump_model()["tree_info"][0]["num_leaves"]
        ),
    }
    entries = []
    for rows in rows_list:
        Xp = pool[:rows]
        reference = runs["sklearn_1"](Xp)
        identical = all(
            np.array_equal(runs[name](Xp), reference) for name in ("dtjit_1", "dtjit_2")
        )
        times, _ = run_interleaved(
            {name: (lambda run=run, Xp=Xp: run(Xp)) for name, run in runs.items()},
            dict.fromkeys(runs, repeats),
        )
        median = {name: statistics.median(ts) for name, ts in times.items()}
        entry = {
            "case": case.name,
            "method": case.method,
            "rows": rows,
            **tree_info,
            "identical_to_sklearn": identical,
            "times_s": times,
            "median_s": median,
            "speedup_vs_sklearn": {
                f"dtjit_{k}": median["sklearn_1"] / median[f"dtjit_{k}"] for k in (1, 2)
            },
            "speedup_vs_lightgbm": {
                f"dtjit_{k}": median[f"lightgbm_{k}"] / median[f"dtjit_{k}"]
                for k in (1, 2)
                if f"lightgbm_{k}" in median
            },
        }
        log(
            f"    {rows:>11,} rows: dtjit {median['dtjit_1']:.3f} / {median['dtjit_2']:.3f} s, "
            f"sklearn {median['sklearn_1']:.3f} s, identical={identical}"
        )
        entries.append(entry)
    return entries


def time_latency(case: Case, calls: int) -> list[dict[str, Any]]:
    """Microseconds per ``predict`` call on 1 and 100 rows: dtjit vs the scikit-learn twin."""
    import dtjit

    X, y, pool = make_rows(case.n_classes, 1_000)
    model = dtjit.DecisionTreeClassifier(max_depth=case.max_depth, random_state=SEED).fit(X, y)
    twin = sklearn_twin(model)
    entries = []
    for rows in (1, 100):
        for dtype in (np.float32, np.float64):
            batch = np.ascontiguousarray(pool[:rows], dtype=dtype)
            entry: dict[str, Any] = {"case": case.name, "rows": rows, "dtype": dtype.__name__}
            for name, predict in (("dtjit", model.predict), ("sklearn", twin.predict)):
                predict(batch)
                best = float("inf")
                for _ in range(3):  # best of three loops of `calls` calls
                    t = time.perf_counter()
                    for _ in range(calls):
                        predict(batch)
                    best = min(best, (time.perf_counter() - t) / calls)
                entry[f"{name}_us"] = best * 1e6
            log(f"    latency {rows:>3} rows {dtype.__name__}: dtjit {entry['dtjit_us']:.1f} us, "
                f"sklearn {entry['sklearn_us']:.1f} us")  # fmt: skip
            entries.append(entry)
    return entries


# -- memory-mapped run, in a fresh process ------------------------------------------------------
def memmap_child(model_path: str, data_path: str) -> None:
    """Body of the subprocess: predict on a memory-mapped file, print one JSON line."""
    import dtjit

    model = dtjit.load(model_path)
    model.set_params(n_jobs=-1)
    X = np.load(data_path, mmap_mode="r")
    model.predict(np.array(X[:WARMUP_ROWS]))  # load the kernels before measuring memory
    before = rss_bytes("VmRSS")
    t = time.perf_counter()
    predicted = model.predict(X)
    seconds = time.perf_counter() - t
    peak = rss_bytes("VmHWM")
    check = model.predict(np.array(X[-WARMUP_ROWS:]))
    print(
        json.dumps(
            {
                "rows": X.shape[0],
                "file_bytes": os.path.getsize(data_path),
                "predict_s": seconds,
                "rss_before_bytes": before,
                "peak_rss_bytes": peak,
                "peak_extra_rss_bytes": None if None in (before, peak) else peak - before,
                "output_bytes": predicted.nbytes,
                "tail_matches_in_memory": bool(np.array_equal(predicted[-WARMUP_ROWS:], check)),
            }
        )
    )


def run_memmap(rows: int) -> dict[str, Any]:
    import dtjit

    log(f"memmap: writing {rows:,} x {N_FEATURES} float32 rows ...")
    X, y, pool = make_rows(2, MEMMAP_CHUNK_ROWS)
    model = dtjit.DecisionTreeClassifier(n_jobs=-1, random_state=SEED).fit(X, y)
    with tempfile.TemporaryDirectory(prefix="dtjit-bench-memmap-") as tmp:
        model_path, data_path = str(Path(tmp) / "model.dtjit"), str(Path(tmp) / "X.npy")
        dtjit.save(model, model_path)
        out = np.lib.format.open_memmap(
            data_path, mode="w+", dtype=np.float32, shape=(rows, N_FEATURES)
        )
        for start in range(0, rows, MEMMAP_CHUNK_ROWS):
            stop = min(rows, start + MEMMAP_CHUNK_ROWS)
            out[start:stop] = pool[: stop - start]
        out.flush()
        del out
        log("memmap: predicting in a fresh process ...")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_memmap-child", model_path]
        result = run_json_child(cmd + [data_path])
    result.update(node_count=model.tree_.node_count, max_depth=model.tree_.max_depth)
    return result


# -- reporting ----------------------------------------------------------------------------------
def _seconds(entry: dict[str, Any], name: str) -> str:
    value = entry["median_s"].get(name)
    return "-" if value is None else f"{value:.3f}"


def _ratio(values: dict[str, float], name: str) -> str:
    return f"{values[name]:.1f}x" if name in values else "-"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Batch prediction: dtjit vs scikit-learn (same tree) vs LightGBM (own tree)",
        "",
        f"Command: `{' '.join(report['command'])}`; machine: {report['machine']['cpu_count']} "
        f"CPUs ({report['machine']['cpu_model']}), load average at the end "
        f"{report['machine']['load_average']}. Median seconds of {report['settings']['repeats']}"
        " interleaved runs; ratios are other / dtjit at the same thread count.",
        "",
        "| tree | nodes / depth | method | rows | dtjit 1 thr | dtjit 2 thr | scikit-learn "
        "| LightGBM 1 thr | LightGBM 2 thr | vs sklearn 1 / 2 thr | vs LightGBM 1 / 2 thr "
        "| same output |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for e in report["results"]:
        vs_sk, vs_lgb = e["speedup_vs_sklearn"], e["speedup_vs_lightgbm"]
        lines.append(
            f"| {e['case']} | {e['node_count']:,} / {e['max_depth']} | {e['method']} "
            f"| {e['rows']:,} | {_seconds(e, 'dtjit_1')} | {_seconds(e, 'dtjit_2')} "
            f"| {_seconds(e, 'sklearn_1')} | {_seconds(e, 'lightgbm_1')} "
            f"| {_seconds(e, 'lightgbm_2')} | {_ratio(vs_sk, 'dtjit_1')} / "
            f"{_ratio(vs_sk, 'dtjit_2')} | {_ratio(vs_lgb, 'dtjit_1')} / "
            f"{_ratio(vs_lgb, 'dtjit_2')} | {'yes' if e['identical_to_sklearn'] else 'NO'} |"
        )
    if report.get("latency"):
        lines += [
            "",
            "Latency of one `predict` call (best of 3 loops of "
            f"{report['settings']['latency_calls']:,} calls), {report['latency'][0]['case']} tree, "
            "dtjit `n_jobs=None`:",
            "",
            "| rows | input dtype | dtjit (us) | scikit-learn (us) | ratio |",
            "|---:|---|---:|---:|---:|",
        ]
        for e in report["latency"]:
            lines.append(
                f"| {e['rows']} | {e['dtype']} | {e['dtjit_us']:.1f} | {e['sklearn_us']:.1f} "
                f"| {e['sklearn_us'] / e['dtjit_us']:.1f}x |"
            )
    mm = report.get("memmap")
    if mm:
        lines += [
            "",
            f"Memory-mapped input: {mm['rows']:,} rows ({mm['file_bytes'] / 2**30:.1f} GiB "
            f"float32 `.npy`, `np.load(mmap_mode='r')`), binary full-depth tree "
            f"({mm['node_count']:,} nodes), 2 threads: predict {mm['predict_s']:.2f} s, peak "
            f"extra RSS {mm['peak_extra_rss_bytes'] / 2**20:,.0f} MiB, of which the int64 "
            f"output is {mm['output_bytes'] / 2**20:,.0f} MiB; last rows equal an in-memory "
            f"predict: {mm['tail_matches_in_memory']}.",
        ]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(DEFAULT_ROWS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memmap-rows", type=int, default=DEFAULT_MEMMAP_ROWS,
                        help="rows of the memory-mapped run (0: skip it)")  # fmt: skip
    parser.add_argument("--cases", nargs="+", default=[c.name for c in CASES],
                        choices=[c.name for c in CASES])  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="100k rows, 3 repeats, 2M-row memmap")  # fmt: skip
    parser.add_argument("--_memmap-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.repeats, args.memmap_rows = list(QUICK_ROWS), 3, QUICK_MEMMAP_ROWS
    if min(args.rows) < 1 or args.repeats < 1 or args.memmap_rows < 0:
        parser.error("--rows and --repeats must be at least 1, --memmap-rows at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._memmap_child:
        memmap_child(*args._memmap_child)
        return 0
    start = time.perf_counter()
    report: dict[str, Any] = {
        "benchmark": "predict",
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "settings": {
            "train_rows": TRAIN_ROWS,
            "rows": args.rows,
            "repeats": args.repeats,
            "n_features": N_FEATURES,
            "n_informative": N_INFORMATIVE,
            "dtype": "float32, C order, in memory",
            "warmup_rows": WARMUP_ROWS,
            "latency_calls": LATENCY_CALLS,
            "timing": "warm-up, then interleaved runs (order rotated each round); medians",
            "ratio": "other time / dtjit time at the same thread count",
        },
        "results": [],
    }
    for case in CASES:
        if case.name in args.cases:
            report["results"] += time_case(case, args.rows, args.repeats)
    report["latency"] = time_latency(CASES[0], LATENCY_CALLS)
    if args.memmap_rows > 0:
        report["memmap"] = run_memmap(args.memmap_rows)
    publish(report, markdown, JSON_PATH, MD_PATH, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
