"""Peak memory of ``dtjit predict`` on a large ``.npy``, for every output format.

Writes ``--gigabytes`` (default 2) of float64 rows (20 features, a fixed seed) as each
input of ``--inputs``: ``C`` (a C-ordered ``.npy``), ``F`` (Fortran-ordered), ``npz`` (an
uncompressed ``.npz``), fits a 5-class tree on 200,000 rows of the same distribution, then
runs ``dtjit predict`` on each in child processes, once per case: output ``.npy``,
``.csv``, ``.csv.gz`` and ``.parquet`` (``--outputs``), each with labels and with
``--proba``. ``--python-reversed`` adds the Python API on a reversed view of the C file's
memory map (``model.predict(np.load(path, mmap_mode="r")[::-1])``, labels only): that
path is the estimator's, not the command's. Every child reports its peak resident set (``VmHWM``),
which counts the file's pages the process has mapped: what a memory-mapped read makes
resident. The baseline of a case is the same command on a file
of 1,000 rows (same interpreter, same imports, same compiled kernels loaded), so
``extra_mb`` = peak - baseline is what the data's size costs. The goal is
``extra_mb <= 300`` for every case.

Usage::

    .venv/bin/python benchmarks/bench_predict_memory.py                  # 2 GB, all cases
    .venv/bin/python benchmarks/bench_predict_memory.py --inputs npz --outputs npy \
        --python-reversed --name predict_memory_inputs
    .venv/bin/python benchmarks/bench_predict_memory.py --gigabytes 0.2  # quick look
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import N_FEATURES, RESULTS_DIR, SEED, classification_data, log, publish

INPUTS = {"C": "C-order .npy", "F": "F-order .npy", "npz": ".npz (stored)"}
PYTHON_REVERSED = "Python API, reversed memmap view"
GOAL_EXTRA_MB = 300
TRAIN_ROWS = 200_000
N_CLASSES = 5
BASELINE_ROWS = 1_000
WRITE_CHUNK_ROWS = 1_000_000
OUTPUTS = ("npy", "csv", "csv.gz", "parquet")


def write_npy(path: Path, n_rows: int, fortran: bool) -> None:
    """Write ``n_rows`` random float64 rows chunk by chunk (memory stays one chunk)."""
    out = np.lib.format.open_memmap(
        path, mode="w+", dtype=np.float64, shape=(n_rows, N_FEATURES), fortran_order=fortran
    )
    rng = np.random.default_rng(SEED)
    for start in range(0, n_rows, WRITE_CHUNK_ROWS):
        stop = min(start + WRITE_CHUNK_ROWS, n_rows)
        out[start:stop] = rng.standard_normal((stop - start, N_FEATURES))
    out.flush()
    del out


# Runs `dtjit ARGS...` as `python -m dtjit` does, then prints the process's peak resident set
# (VmHWM, reset by exec; wait4's ru_maxrss is not: Linux starts it from the parent's RSS at fork).
CHILD = """
import sys
from dtjit.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status", encoding="ascii") as status:
    peak = next(line for line in status if line.startswith("VmHWM:"))
print("PEAK_KB", peak.split()[1], file=sys.stderr)
sys.exit(code)
"""


# The Python API on a reversed view of a memory-mapped .npy (argv: model, data).
PYTHON_CHILD = """
import sys
import numpy as np
import dtjit
model = dtjit.load(sys.argv[1])
model.predict(np.load(sys.argv[2], mmap_mode="r")[::-1])
with open("/proc/self/status", encoding="ascii") as status:
    peak = next(line for line in status if line.startswith("VmHWM:"))
print("PEAK_KB", peak.split()[1], file=sys.stderr)
"""


def peak_rss_mb(arguments: list[str], child: str = CHILD) -> tuple[float, float]:
    """Run ``child`` with ``arguments`` in a child process; return its peak RSS (MB), seconds."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", child, *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"dtjit {' '.join(arguments)} failed ({proc.returncode}): {proc.stderr}")
    peak_kb = int(proc.stderr.rsplit("PEAK_KB", 1)[1].split()[0])
    return peak_kb / 1024, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=2.0, help="size of the .npy")
    parser.add_argument(
        "--inputs", default="C,F", help=f"comma-separated subset of {list(INPUTS)} (default C,F)"
    )
    parser.add_argument(
        "--python-reversed", action="store_true", help="also the Python API on a reversed view"
    )
    parser.add_argument(
        "--name", default="predict_memory", help="results file name (default predict_memory)"
    )
    parser.add_argument(
        "--outputs", default=",".join(OUTPUTS), help=f"comma-separated subset of {OUTPUTS}"
    )
    parser.add_argument("--dir", default=None, help="scratch directory (default: a temp dir)")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    import dtjit

    outputs = [o for o in args.outputs.split(",") if o]
    unknown = sorted(set(outputs) - set(OUTPUTS))
    if unknown:
        parser.error(f"unknown outputs {unknown}; choose from {OUTPUTS}")
    kinds = [k for k in args.inputs.split(",") if k]
    if set(kinds) - set(INPUTS):
        parser.error(f"unknown inputs {sorted(set(kinds) - set(INPUTS))}; choose from {INPUTS}")
    scratch = Path(tempfile.mkdtemp(prefix="dtjit-bench-mem-", dir=args.dir))
    try:
        n_rows = int(args.gigabytes * 1e9) // (8 * N_FEATURES)
        X, y = classification_data(TRAIN_ROWS, N_CLASSES)
        model = dtjit.DecisionTreeClassifier(max_depth=12, random_state=SEED).fit(X, y)
        model_path = scratch / "model.npz"
        dtjit.save(model, model_path)
        log(f"writing {n_rows:,} rows ({n_rows * 8 * N_FEATURES / 1e9:.2f} GB) to {scratch}")
        big_c, small = scratch / "big.npy", scratch / "small.npy"
        write_npy(small, BASELINE_ROWS, fortran=False)
        if "C" in kinds or "npz" in kinds or args.python_reversed:
            write_npy(big_c, n_rows, fortran=False)
        inputs = {}  # kind -> (big file, its baseline file)
        if "C" in kinds:
            inputs["C"] = (big_c, small)
        if "F" in kinds:
            inputs["F"] = (scratch / "big_f.npy", small)
            write_npy(inputs["F"][0], n_rows, fortran=True)
        if "npz" in kinds:
            inputs["npz"] = (scratch / "big.npz", scratch / "small.npz")
            np.savez(inputs["npz"][0], X=np.load(big_c, mmap_mode="r"))  # written in chunks
            np.savez(inputs["npz"][1], X=np.load(small))
            if "C" not in kinds and not args.python_reversed:
                big_c.unlink()  # disk: only the .npz is read

        def run(data: Path, output: str, proba: bool) -> tuple[float, float]:
            out = scratch / f"out.{output}"
            command = ["predict", str(model_path), str(data), "-o", str(out), "-q"]
            command += ["--proba"] if proba else []
            result = peak_rss_mb(command)
            out.unlink()
            return result

        cases: list[dict[str, Any]] = []

        def record(kind: str, output: str, proba: bool, baseline_mb: float, peak: Any) -> None:
            peak_mb, seconds = peak
            case = {
                "input": kind,
                "output": output,
                "proba": proba,
                "rows": n_rows,
                "baseline_mb": round(baseline_mb, 1),
                "peak_mb": round(peak_mb, 1),
                "extra_mb": round(peak_mb - baseline_mb, 1),
                "seconds": round(seconds, 2),
            }
            log(str(case))
            cases.append(case)

        for kind, (big, baseline) in inputs.items():
            for output in outputs:
                for proba in (False, True):
                    baseline_mb, _ = run(baseline, output, proba)
                    record(INPUTS[kind], output, proba, baseline_mb, run(big, output, proba))
        if args.python_reversed:
            python = [str(model_path)]
            baseline_mb, _ = peak_rss_mb([*python, str(small)], PYTHON_CHILD)
            peak = peak_rss_mb([*python, str(big_c)], PYTHON_CHILD)
            record(PYTHON_REVERSED, "(in memory)", False, baseline_mb, peak)
        report = {
            "benchmark": "predict_memory",
            "input_gigabytes": n_rows * 8 * N_FEATURES / 1e9,
            "n_features": N_FEATURES,
            "n_classes": N_CLASSES,
            "goal_extra_mb": GOAL_EXTRA_MB,
            "cases": cases,
            "all_within_goal": all(c["extra_mb"] <= GOAL_EXTRA_MB for c in cases),
        }
        json_path = RESULTS_DIR / f"{args.name}.json"
        publish(report, markdown, json_path, json_path.with_suffix(".md"), started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# dtjit predict: peak memory on {report['input_gigabytes']:.2f} GB of rows",
        "",
        f"{report['machine']['date_utc']}, commit {report['machine']['git_commit']}; "
        f"goal: extra <= {report['goal_extra_mb']} MB over the baseline (same command, "
        f"{BASELINE_ROWS:,} rows). The Python API row predicts into memory: its extra "
        "includes the labels it returns (8 bytes per row).",
        "",
        "| input | output | --proba | baseline MB | peak MB | extra MB | seconds |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for c in report["cases"]:
        lines.append(
            f"| {c['input']} | {c['output']} | {'yes' if c['proba'] else 'no'} | "
            f"{c['baseline_mb']:.0f} | {c['peak_mb']:.0f} | {c['extra_mb']:.0f} | "
            f"{c['seconds']:.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
