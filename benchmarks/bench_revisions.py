"""A/B benchmark: fit and predict times of this checkout against an earlier git revision.

Used to check that a feature costs nothing where it is not used, for example that missing-
value support does not slow down fits on data without NaN (the goal: at most 5 %). Both
versions run on the same machine in the same minutes, so the ratio is meaningful even on a
shared, noisy machine where absolute times are not.

How: ``git archive`` extracts the baseline revision's ``dtjit/`` into a temporary directory.
Two long-lived worker processes import dtjit, one from that directory and one from this
checkout (``PYTHONPATH``), each with its own numba cache; each compiles (a warm-up run, not
timed), generates the data once, and then times one case per request. The parent sends the
requests interleaved (A B, then B A, ...) and reports medians and the ratio current/baseline.

Cases (all on data without NaN, float32, C order): exact / hist classifier fits at full depth
and ``max_depth=10`` on the shared generated problem (``make_classification``, 20 features),
best-first growth (``max_leaf_nodes``), a regressor fit, ``predict`` of the
full-depth classifier on 4x the rows, and many small ``predict`` calls.

Results: ``benchmarks/results/revisions.json`` and ``revisions.md`` (written atomically).

Usage::

    .venv/bin/python benchmarks/bench_revisions.py --baseline 834e8d5
    .venv/bin/python benchmarks/bench_revisions.py --baseline main~3 --rows 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    REPO,
    RESULTS_DIR,
    classification_data,
    log,
    publish,
)

DEFAULT_ROWS = 1_000_000
# key -> (label, estimator, parameters, what is timed)
CASES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "exact-full": ("exact, full depth", "classifier", {}, "fit"),
    "exact-depth10": ("exact, max_depth=10", "classifier", {"max_depth": 10}, "fit"),
    "hist-full": ("hist, full depth", "classifier", {"splitter": "hist"}, "fit"),
    "regressor-depth10": ("regressor, exact, max_depth=10", "regressor", {"max_depth": 10}, "fit"),
    "leaves-2000": ("exact, max_leaf_nodes=2000 (best-first)", "classifier",
                    {"max_leaf_nodes": 2000}, "fit"),
    "hist-leaves-2000": ("hist, max_leaf_nodes=2000 (best-first)", "classifier",
                         {"splitter": "hist", "max_leaf_nodes": 2000}, "fit"),
    "predict-full": ("predict 4x the rows, full-depth tree", "classifier", {}, "predict"),
    "predict-small": ("predict 1,000 rows 200 times, full-depth tree", "classifier", {},
                      "predict-small"),
}  # fmt: skip


# ----------------------------------------------------------------------------- the worker
def worker(rows: int, n_jobs: int, expected_root: str) -> None:
    """Serve timing requests on stdin: one case name per line, one JSON answer per line."""
    import dtjit

    where = Path(dtjit.__file__).resolve()
    if not where.is_relative_to(Path(expected_root).resolve()):
        raise RuntimeError(f"imported dtjit from {where}, expected it under {expected_root}")
    X, y = classification_data(rows, 2)
    y_reg = X[:, :5].sum(axis=1).astype(np.float64)
    X_big = np.concatenate([X] * 4)
    fitted: dict[str, Any] = {}

    def run(case: str) -> float:
        _, kind, params, what = CASES[case]
        if kind == "classifier":
            est = dtjit.DecisionTreeClassifier(n_jobs=n_jobs, random_state=0, **params)
            target = y
        else:
            est = dtjit.DecisionTreeRegressor(n_jobs=n_jobs, random_state=0, **params)
            target = y_reg
        if what.startswith("predict"):
            if case not in fitted:
                fitted[case] = est.fit(X, target)
            start = time.perf_counter()
            if what == "predict":
                fitted[case].predict(X_big)
            else:  # many small calls: the per-call cost of the small-input path
                for _ in range(200):
                    fitted[case].predict(X[:1000])
            return time.perf_counter() - start
        start = time.perf_counter()
        est.fit(X, target)
        return time.perf_counter() - start

    for case in CASES:  # warm-up at full size, untimed: compiles every path this run takes
        run(case)
    print(json.dumps({"ready": True, "dtjit": str(where)}), flush=True)
    for line in sys.stdin:
        case = line.strip()
        if not case:
            continue
        print(json.dumps({"case": case, "seconds": run(case)}), flush=True)


# ----------------------------------------------------------------------------- the parent
def extract_revision(revision: str, into: Path) -> str:
    """Extract ``dtjit/`` of ``revision`` under ``into``; return the full commit id."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{revision}^{{commit}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit, "dtjit"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return commit


class Worker:
    """A worker process importing dtjit from ``root``, with its own numba cache."""

    def __init__(self, root: Path, cache: Path, rows: int, n_jobs: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache))
        cmd = [sys.executable, __file__, "--_worker", str(rows), str(n_jobs), str(root)]
        self.proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.info = self._answer()

    def _answer(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with code {self.proc.wait()}")
        return json.loads(line)

    def time(self, case: str) -> float:
        self.proc.stdin.write(case + "\n")
        self.proc.stdin.flush()
        return self._answer()["seconds"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Fit and predict time against an earlier revision (data without NaN)",
        "",
        f"Command: `bench_revisions.py --baseline {report['baseline_arg']} --rows "
        f"{report['rows']} --repeats {report['repeats']} --n-jobs {report['n_jobs']}`; "
        f"baseline {report['baseline'][:10]}, current {report['current'][:10]}"
        f"{' (with uncommitted changes)' if report['dirty'] else ''}; "
        f"{report['rows']:,} x 20 rows, binary, float32; median of {report['repeats']} "
        "interleaved runs per side.",
        "",
        "| case | baseline (s) | current (s) | current / baseline |",
        "|---|---:|---:|---:|",
    ]
    for case, r in report["cases"].items():
        lines.append(
            f"| {CASES[case][0]} | {r['baseline_s']:.3f} | {r['current_s']:.3f} "
            f"| {r['ratio']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="git revision to compare with (required)")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--_worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._worker:
        worker(int(args._worker[0]), int(args._worker[1]), args._worker[2])
        return 0
    if not args.baseline:
        parser.error("--baseline REVISION is required")
    if args.rows < 100 or args.repeats < 1:  # this process imports no dtjit: no shared type
        parser.error("--rows must be at least 100 and --repeats at least 1")
    started = time.perf_counter()
    current = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "dtjit"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()  # fmt: skip
    )
    with tempfile.TemporaryDirectory(prefix="dtjit-baseline-") as tmp:
        tmp_path = Path(tmp)
        try:
            baseline = extract_revision(args.baseline, tmp_path / "src")
        except subprocess.CalledProcessError:
            parser.error(f"--baseline {args.baseline!r} is not a revision of this repository")
        log(f"baseline {baseline[:10]} vs current {current[:10]}; compiling both (untimed) ...")
        sides = {
            "baseline": Worker(tmp_path / "src", tmp_path / "cache-a", args.rows, args.n_jobs),
            "current": Worker(REPO, tmp_path / "cache-b", args.rows, args.n_jobs),
        }
        times: dict[str, dict[str, list[float]]] = {c: {s: [] for s in sides} for c in args.cases}
        try:
            for r in range(args.repeats):
                order = list(sides) if r % 2 == 0 else list(reversed(sides))
                for case in args.cases:
                    for side in order:
                        times[case][side].append(sides[side].time(case))
                    log(f"round {r + 1}: {case}: "
                        + ", ".join(f"{s} {times[case][s][-1]:.3f} s" for s in sides))  # fmt: skip
        finally:
            for w in sides.values():
                w.close()
    cases = {}
    for case, by_side in times.items():
        a = statistics.median(by_side["baseline"])
        b = statistics.median(by_side["current"])
        cases[case] = {"baseline_s": a, "current_s": b, "ratio": b / a, "runs": by_side}
    report = {
        "baseline_arg": args.baseline, "baseline": baseline, "current": current,
        "dirty": dirty, "rows": args.rows, "repeats": args.repeats, "n_jobs": args.n_jobs,
        "cases": cases,
    }  # fmt: skip
    publish(report, markdown, RESULTS_DIR / "revisions.json", RESULTS_DIR / "revisions.md",
            started)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
