"""Fit / predict benchmark: dtjit against scikit-learn's DecisionTreeClassifier.

Data: ``make_classification`` (binary, 20 features, 10 informative, fixed seed) as float32;
``rows`` training rows plus ``rows // 4`` held-out rows for accuracy and predict timing.
Trees: gini, full depth and ``max_depth=10``, same parameters for both libraries.

Method (the machine this was written on has 2 cores and is shared, so it is noisy):

- dtjit's first call is measured apart, each time in a fresh subprocess: once with
  ``NUMBA_CACHE_DIR`` pointing to an empty temporary directory (cold: every kernel is
  compiled) and once with the normal on-disk cache (warm start: kernels are loaded);
- in the main process every contender is warmed up on a small slice first, then the
  dtjit and scikit-learn runs are interleaved (the order rotates every round) and the
  median of the runs is reported (predict: 3 calls per fitted tree); ratios are
  scikit-learn time / dtjit time, from the same run;
- scikit-learn at >= 1,000,000 rows is run ``--sklearn-repeats-large`` times (default 1:
  one full-depth fit takes about a minute); the JSON records the repeats of every entry.

Results: ``benchmarks/results/fit_predict.json`` and ``fit_predict.md``, each written
atomically (temporary file, then rename) at the end of the run. While the run is going,
finished configurations are kept in ``fit_predict.partial.json``.

Usage::

    .venv/bin/python benchmarks/bench_fit_predict.py            # 100k and 1M rows (~10 min)
    .venv/bin/python benchmarks/bench_fit_predict.py --quick    # 20k and 100k rows, 1 repeat
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import REPO, log, machine_info, write_atomic

HERE = Path(__file__).resolve().parent
RESULTS_DIR = HERE / "results"
JSON_PATH = RESULTS_DIR / "fit_predict.json"
MD_PATH = RESULTS_DIR / "fit_predict.md"
PARTIAL_PATH = RESULTS_DIR / "fit_predict.partial.json"

SEED = 0
N_FEATURES = 20
N_INFORMATIVE = 10
CRITERION = "gini"
DEPTHS = (None, 10)
LARGE_ROWS = 1_000_000
WARMUP_ROWS = 20_000
FIRST_CALL_ROWS = 20_000
PREDICT_CALLS_PER_FIT = 3
DEFAULT_ROWS = (100_000, 1_000_000)
QUICK_ROWS = (20_000, 100_000)


# -- data ---------------------------------------------------------------------------------------
def make_data(rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` training rows and ``rows // 4`` held-out rows, float32, C-contiguous."""
    from sklearn.datasets import make_classification

    n_test = max(rows // 4, 1_000)
    X, y = make_classification(
        n_samples=rows + n_test,
        n_features=N_FEATURES,
        n_informative=N_INFORMATIVE,
        n_classes=2,
        random_state=SEED,
    )
    X = X.astype(np.float32)
    return X[:rows], y[:rows], X[rows:], y[rows:]


def make_model(library: str, max_depth: int | None, n_jobs: int | None) -> Any:
    if library == "dtjit":
        import dtjit

        return dtjit.DecisionTreeClassifier(
            criterion=CRITERION, max_depth=max_depth, n_jobs=n_jobs, random_state=SEED
        )
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(criterion=CRITERION, max_depth=max_depth, random_state=SEED)


# -- first call, in a fresh subprocess ----------------------------------------------------------
def first_call_child(n_jobs_list: list[int]) -> None:
    """Body of the subprocess: time dtjit's first fit + predict, then the same work warm.

    Prints one JSON line on stdout.
    """
    import sklearn.datasets  # noqa: F401  (imported before the clock starts)

    # predict on the training rows: FIRST_CALL_ROWS x 20 values are enough to reach the
    # parallel predict kernel as well
    X, y, _, _ = make_data(FIRST_CALL_ROWS)
    t0 = time.perf_counter()
    import dtjit

    out: dict[str, Any] = {"import_s": time.perf_counter() - t0, "rows": FIRST_CALL_ROWS}
    steps: dict[str, dict[str, float]] = {"first": {}, "warm": {}}
    for phase in ("first", "warm"):
        for n_jobs in n_jobs_list:
            model = make_model("dtjit", None, n_jobs)
            t = time.perf_counter()
            model.fit(X, y)
            steps[phase][f"fit_n_jobs={n_jobs}"] = time.perf_counter() - t
            t = time.perf_counter()
            model.predict(X)
            steps[phase][f"predict_n_jobs={n_jobs}"] = time.perf_counter() - t
    out["first_call_s"] = sum(steps["first"].values())
    out["warm_call_s"] = sum(steps["warm"].values())
    out["compile_or_load_s"] = out["first_call_s"] - out["warm_call_s"]
    out["steps_s"] = steps
    out["numba_cache_dir"] = os.environ.get("NUMBA_CACHE_DIR") or "(default: next to dtjit)"
    out["dtjit_file"] = dtjit.__file__
    print(json.dumps(out))


def run_first_call(cold: bool, n_jobs_list: list[int]) -> dict[str, Any]:
    """Run :func:`first_call_child` in a fresh interpreter and return its measurements."""
    env = os.environ.copy()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_first-call", "--n-jobs"]
    cmd += [str(n) for n in n_jobs_list]
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = empty_cache
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"first-call subprocess failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


# -- steady-state timings -----------------------------------------------------------------------
def time_config(
    rows: int, max_depth: int | None, n_jobs_list: list[int], repeats: int, sk_repeats: int
) -> dict[str, Any]:
    """Interleaved, warmed-up fit / predict timings of every contender on one configuration."""
    X, y, X_test, y_test = make_data(rows)
    contenders = [("dtjit", n) for n in n_jobs_list] + [("sklearn", None)]
    wanted = {c: (sk_repeats if c[0] == "sklearn" else repeats) for c in contenders}

    for library, n_jobs in contenders:  # warm-up: compile / load kernels, touch the code paths
        model = make_model(library, max_depth, n_jobs)
        # predict on training rows: WARMUP_ROWS x 20 is enough to reach the parallel kernels
        model.fit(X[:WARMUP_ROWS], y[:WARMUP_ROWS]).predict(X[:WARMUP_ROWS])

    fit_s: dict[tuple, list[float]] = {c: [] for c in contenders}
    predict_s: dict[tuple, list[float]] = {c: [] for c in contenders}
    last: dict[tuple, Any] = {}
    for r in range(max(wanted.values())):
        k = r % len(contenders)
        for c in contenders[k:] + contenders[:k]:
            if len(fit_s[c]) >= wanted[c]:
                continue
            model = make_model(c[0], max_depth, c[1])
            gc.collect()
            t = time.perf_counter()
            model.fit(X, y)
            fit_s[c].append(time.perf_counter() - t)
            for _ in range(PREDICT_CALLS_PER_FIT):  # predict is short: time it a few times
                t = time.perf_counter()
                pred = model.predict(X_test)
                predict_s[c].append(time.perf_counter() - t)
            last[c] = (model, pred)
            label = f"{c[0]}" + ("" if c[1] is None else f" n_jobs={c[1]}")
            log(
                f"    {label:<16} run {r + 1}: fit {fit_s[c][-1]:8.3f} s, "
                f"predict {statistics.median(predict_s[c][-PREDICT_CALLS_PER_FIT:]):7.4f} s"
            )

    def summary(c: tuple) -> dict[str, Any]:
        model, pred = last[c]
        return {
            "runs": wanted[c],
            "fit_s": fit_s[c],
            "predict_s": predict_s[c],
            "fit_median_s": statistics.median(fit_s[c]),
            "predict_median_s": statistics.median(predict_s[c]),
            "accuracy": float(np.mean(pred == y_test)),
            "node_count": int(model.tree_.node_count),
            "n_leaves": int(model.get_n_leaves()),
            "depth": int(model.get_depth()),
        }

    sk = summary(("sklearn", None))
    sk_pred = last[("sklearn", None)][1]
    dtjit_entries = {}
    for n_jobs in n_jobs_list:
        s = summary(("dtjit", n_jobs))
        s["fit_ratio"] = sk["fit_median_s"] / s["fit_median_s"]
        s["predict_ratio"] = sk["predict_median_s"] / s["predict_median_s"]
        s["agreement_with_sklearn"] = float(np.mean(last[("dtjit", n_jobs)][1] == sk_pred))
        dtjit_entries[str(n_jobs)] = s
    preds = [last[("dtjit", n)][1] for n in n_jobs_list]
    entry = {
        "rows": rows,
        "test_rows": int(X_test.shape[0]),
        "max_depth": max_depth,
        "dtjit": dtjit_entries,
        "sklearn": sk,
        "dtjit_predictions_identical_across_n_jobs": all(
            np.array_equal(preds[0], p) for p in preds
        ),
    }
    if sk_repeats != repeats:
        entry["note"] = (
            f"scikit-learn ran {sk_repeats} time(s) here, dtjit {repeats}: at >= {LARGE_ROWS:,} "
            "rows one scikit-learn full-depth fit takes about a minute (--sklearn-repeats-large)."
        )
    return entry


# -- reporting ----------------------------------------------------------------------------------
def _jobs_label(n_jobs: str, available: int) -> str:
    n = int(n_jobs) if n_jobs != "None" else 1
    threads = max(1, available + 1 + n) if n < 0 else min(n, available)
    return n_jobs if n_jobs == str(threads) else f"{n_jobs} ({threads} threads)"


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    load = m.get("load_average_start")
    lines = [
        "## dtjit vs scikit-learn: fit and predict",
        "",
        f"{m['date_utc']}; {m['cpus_available']} CPUs ({m['cpu_model']})"
        + (f", 1-min load average at start {load[0]:.2f}" if load else "")
        + f"; Python {m['python']}, numpy {m['numpy']}, "
        f"numba {m['numba']}, scikit-learn {m['sklearn']}, dtjit {m['dtjit']}"
        + (
            f" (uncommitted changes, sources {m['dtjit_sources_sha256']})"
            if m.get("dtjit_sources_modified")
            else ""
        )
        + ("; `--quick`" if report["settings"]["quick"] else "")
        + ".",
        "",
        f"make_classification: binary, {N_FEATURES} features ({N_INFORMATIVE} informative), "
        f"float32, seed {SEED}; training rows as given, predict and accuracy on rows/4 "
        f"held-out rows; criterion {CRITERION}. Times are medians of interleaved runs after a "
        f"warm-up ({PREDICT_CALLS_PER_FIT} predict calls per fitted tree); *speed-up* = "
        "scikit-learn time / dtjit time (> 1: dtjit is faster). "
        "scikit-learn is single-threaded.",
        "",
        "| rows | max_depth | dtjit n_jobs | runs dtjit / sklearn | fit dtjit (s) "
        "| fit sklearn (s) | fit speed-up | predict dtjit (s) | predict sklearn (s) "
        "| predict speed-up | accuracy dtjit / sklearn | nodes dtjit / sklearn |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for e in report["results"]:
        sk = e["sklearn"]
        depth = "full" if e["max_depth"] is None else str(e["max_depth"])
        for n_jobs, d in e["dtjit"].items():
            lines.append(
                f"| {e['rows']:,} | {depth} | {_jobs_label(n_jobs, m['numba_num_threads'])} "
                f"| {d['runs']} / {sk['runs']} "
                f"| {d['fit_median_s']:.3f} | {sk['fit_median_s']:.3f} | {d['fit_ratio']:.2f}x "
                f"| {d['predict_median_s']:.4f} | {sk['predict_median_s']:.4f} "
                f"| {d['predict_ratio']:.2f}x "
                f"| {d['accuracy']:.4f} / {sk['accuracy']:.4f} "
                f"| {d['node_count']:,} / {sk['node_count']:,} |"
            )
    fc = report.get("first_call")
    if fc:
        lines += [
            "",
            f"dtjit first fit + predict in a fresh process ({fc['cold']['rows']:,} rows, "
            f"n_jobs {', '.join(str(n) for n in report['settings']['n_jobs'])}):",
            "",
            "| numba cache | import dtjit (s) | first call (s) | same work warm (s) "
            "| compile / cache load (s) |",
            "|---|---:|---:|---:|---:|",
        ]
        for key, label in (("cold", "empty (cold compile)"), ("warm", "normal (warm start)")):
            r = fc[key]
            lines.append(
                f"| {label} | {r['import_s']:.2f} | {r['first_call_s']:.2f} "
                f"| {r['warm_call_s']:.3f} | {r['compile_or_load_s']:.2f} |"
            )
    notes = [e["note"] for e in report["results"] if "note" in e]
    if notes:
        lines += ["", *sorted(set(f"Note: {n}" for n in notes))]
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark dtjit against scikit-learn (fit, predict, accuracy, size).",
    )
    parser.add_argument(
        "--rows", type=int, nargs="+", default=list(DEFAULT_ROWS),
        help="training rows of each configuration (default: 100000 1000000)",
    )  # fmt: skip
    parser.add_argument(
        "--repeats", type=int, default=3,
        help="timed runs per contender; the median is reported (default 3)",
    )  # fmt: skip
    parser.add_argument(
        "--sklearn-repeats-large", type=int, default=1,
        help=f"scikit-learn runs at >= {LARGE_ROWS:,} rows (default 1, capped by --repeats)",
    )  # fmt: skip
    parser.add_argument(
        "--n-jobs", type=int, nargs="+", default=[1, -1],
        help="dtjit n_jobs values to time (default: 1 -1)",
    )  # fmt: skip
    parser.add_argument(
        "--quick", action="store_true",
        help="rows 20000 and 100000, 1 repeat (overrides --rows and --repeats)",
    )  # fmt: skip
    parser.add_argument("--_first-call", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.repeats = list(QUICK_ROWS), 1
    if args.repeats < 1 or args.sklearn_repeats_large < 1:
        parser.error("--repeats and --sklearn-repeats-large must be at least 1")
    if any(r < 1_000 for r in args.rows):
        parser.error("--rows values must be at least 1000")
    if 0 in args.n_jobs:
        parser.error("--n-jobs 0 has no meaning; use a positive int or -1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._first_call:
        first_call_child(args.n_jobs)
        return 0

    start = time.perf_counter()
    load_start = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    log("dtjit first call, fresh process, empty NUMBA_CACHE_DIR (cold compile) ...")
    cold = run_first_call(cold=True, n_jobs_list=args.n_jobs)
    log(f"    first call {cold['first_call_s']:.2f} s, warm {cold['warm_call_s']:.3f} s")
    log("dtjit first call, fresh process, normal cache (warm start) ...")
    prime = run_first_call(cold=False, n_jobs_list=args.n_jobs)  # fills the cache if stale
    warm = run_first_call(cold=False, n_jobs_list=args.n_jobs)
    log(f"    first call {warm['first_call_s']:.2f} s, warm {warm['warm_call_s']:.3f} s")

    settings = {
        "quick": args.quick,
        "rows": args.rows,
        "test_rows": "rows // 4 (at least 1000), generated with the training rows",
        "n_features": N_FEATURES,
        "n_informative": N_INFORMATIVE,
        "n_classes": 2,
        "dtype": "float32",
        "criterion": CRITERION,
        "max_depth": list(DEPTHS),
        "seed": SEED,
        "n_jobs": args.n_jobs,
        "repeats": args.repeats,
        "sklearn_repeats_large": args.sklearn_repeats_large,
        "large_rows": LARGE_ROWS,
        "warmup_rows": WARMUP_ROWS,
        "predict_calls_per_fit": PREDICT_CALLS_PER_FIT,
        "timing": "warm-up, then interleaved runs (order rotated each round); medians",
        "ratio": "sklearn time / dtjit time",
    }
    report: dict[str, Any] = {
        "benchmark": "fit_predict",
        "complete": False,
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "settings": settings,
        "first_call": {"cold": cold, "warm": warm, "warm_priming_run": prime},
        "results": [],
    }
    for rows in args.rows:
        sk_repeats = args.repeats
        if rows >= LARGE_ROWS:
            sk_repeats = min(args.repeats, args.sklearn_repeats_large)
        for max_depth in DEPTHS:
            log(f"rows={rows:,} max_depth={max_depth} ...")
            entry = time_config(rows, max_depth, args.n_jobs, args.repeats, sk_repeats)
            report["results"].append(entry)
            report["machine"] = machine_info()
            write_atomic(PARTIAL_PATH, json.dumps(report, indent=2) + "\n")
    report["machine"] = machine_info()
    report["machine"]["load_average_start"] = load_start
    report["complete"] = True
    report["wall_s"] = time.perf_counter() - start
    md = markdown(report)
    write_atomic(JSON_PATH, json.dumps(report, indent=2) + "\n")
    write_atomic(MD_PATH, md)
    if PARTIAL_PATH.exists():
        PARTIAL_PATH.unlink()
    print(md)
    log(f"wrote {JSON_PATH.relative_to(REPO)} and {MD_PATH.relative_to(REPO)} "
        f"in {report['wall_s']:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
