"""Start-up benchmark: what dtjit costs before its first result, measured in fresh processes.

numba compiles dtjit's kernels the first time they run and caches the machine code on disk
(next to the package, or in ``NUMBA_CACHE_DIR``); later processes load it. Three questions:

1. **Cold**: the first use ever. A fresh process with ``NUMBA_CACHE_DIR`` pointing to an
   empty temporary directory runs, step by step: ``import dtjit``; fit and predict on iris
   (serial); fit and predict on 20,000 x 20 rows with ``n_jobs=-1`` (large enough for the
   parallel kernels); the same for ``splitter="hist"`` and ``"random"`` when the installed
   dtjit has them; then every other fit / predict path (entropy, ``max_leaf_nodes``,
   ``max_features``, sample weights, ``predict_proba``, ``apply``, ``decision_path``, the
   regressor), serial and parallel; then the paths compiled only on first use: NaN in X, a
   categorical feature, ``gain_ratio`` / ``poisson`` / ``absolute_error``, multi-output y,
   more than 256 classes (two-byte class codes), pruning; and, apart, the MDLP discretizer
   (``dtjit._warmup.warm_up_steps``, the steps of the ``dtjit compile`` command). Each step
   is then repeated 3 times in the same process: compile time = first run - fastest repeat. The
   child also lists dtjit's kernels that the steps did not compile, so "every kernel" is
   checked, not assumed.
   The same child is also run with the normal (warm) cache, after a priming run: the per-step
   cost of loading kernels from the cache.
2. **Warm**: the common case. ``--runs`` times each, interleaved, a fresh ``python -c``
   process with the normal cache does ``import dtjit`` + fit on iris + predict, and another
   does the same with scikit-learn's ``DecisionTreeClassifier``; iris is read from an
   ``.npy`` file (not ``sklearn.datasets``, whose import would be counted for dtjit too).
   Reported: medians of the in-process times (clock started before ``import numpy``) and of
   the whole process's wall time as the parent sees it (interpreter start-up and exit
   included). Every child runs with Python's bytecode cache on, as after a normal install,
   even where this process has ``PYTHONDONTWRITEBYTECODE`` set (``child_env``).
3. **The compile command**: ``dtjit compile --jobs N`` (N = ``--compile-jobs``, the CPU count
   by default) in a fresh process on another empty cache: the wall time of compiling every
   path ahead of use, in N processes.

Results: ``benchmarks/results/startup.json`` and ``startup.md`` (written atomically).

Usage::

    .venv/bin/python benchmarks/bench_startup.py            # about 6 minutes on 2 cores
    .venv/bin/python benchmarks/bench_startup.py --runs 3   # fewer warm runs
    .venv/bin/python benchmarks/bench_startup.py --compile-jobs 0   # without part 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    RESULTS_DIR,
    log,
    publish,
    run_interleaved,
    run_json_child,
    splitter_problem,
)

JSON_PATH = RESULTS_DIR / "startup.json"
MD_PATH = RESULTS_DIR / "startup.md"

DEFAULT_RUNS = 7
REPEATS = 3
WARM_GOAL_S = 1.0
COMPILE_GOAL_S = 15.0
OPTIONAL_SPLITTERS = ("hist", "random")
TREE_STEP_PREFIXES = ("classifier", "regressor", "hist", "random")

# The warm start-up processes: everything after the first line is what the goal counts.
WARM_CODE = {
    "dtjit": """\
import time; t0 = time.perf_counter()
import numpy as np
X, y = np.load({x!r}), np.load({y!r})
t1 = time.perf_counter()
import dtjit
t2 = time.perf_counter()
model = dtjit.DecisionTreeClassifier(random_state=0).fit(X, y)
t3 = time.perf_counter()
model.predict(X)
t4 = time.perf_counter()
import json; print(json.dumps({{"numpy_and_data_s": t1 - t0, "import_s": t2 - t1,
    "fit_s": t3 - t2, "predict_s": t4 - t3, "total_s": t4 - t0}}))
""",
    "sklearn": """\
import time; t0 = time.perf_counter()
import numpy as np
X, y = np.load({x!r}), np.load({y!r})
t1 = time.perf_counter()
from sklearn.tree import DecisionTreeClassifier
t2 = time.perf_counter()
model = DecisionTreeClassifier(random_state=0).fit(X, y)
t3 = time.perf_counter()
model.predict(X)
t4 = time.perf_counter()
import json; print(json.dumps({{"numpy_and_data_s": t1 - t0, "import_s": t2 - t1,
    "fit_s": t3 - t2, "predict_s": t4 - t3, "total_s": t4 - t0}}))
""",
}


# Kernels whose callers pass a literal flag so that each value gets its own code; the
# second compile buys run time (see the kernel's docstring) and is not listed as waste.
INTENDED_LITERAL_COPIES = {
    "dtjit._predict.walk_phase": "with_nan: rows known to hold no NaN skip the NaN test",
}


def _plain_type(numba_type: Any) -> Any:
    """``numba_type`` without literal value, unsigned 64-bit integers as int64."""
    from numba import types

    plain = types.unliteral(numba_type)
    return types.int64 if plain == types.uint64 else plain


def kernel_coverage() -> dict[str, list[str]]:
    """dtjit's compiled functions, split by whether this process compiled or loaded them.

    Functions declared ``inline="always"`` are compiled into their callers and never get a
    signature of their own, so they are left out. A kernel loaded from the on-disk cache
    brings its callees' code along, so in a warm-cache process callees count as not
    compiled: the list is meaningful for the cold child only.
    """
    from numba.core.registry import CPUDispatcher

    compiled, not_compiled, literal_copies = [], [], []
    for name, module in sorted(sys.modules.items()):
        if name != "dtjit" and not name.startswith("dtjit."):
            continue
        for attr, obj in vars(module).items():
            if not isinstance(obj, CPUDispatcher) or obj.__module__ != name:
                continue
            if obj.targetoptions.get("inline") == "always":
                continue
            (compiled if obj.signatures else not_compiled).append(f"{name}.{attr}")
            # A constant argument (``f(x, 0)``) is typed Literal[int](0), and a prange index
            # uint64: either compiles the callee once more next to its int64 version,
            # seconds of cold compile for nothing.
            plain = {tuple(_plain_type(t) for t in sig) for sig in obj.signatures}
            if len(plain) < len(obj.signatures):
                literal_copies.append(f"{name}.{attr}")
    return {"compiled": compiled, "not_compiled": not_compiled, "literal_copies": literal_copies}


def steps_child(splitters: list[str]) -> None:
    """Body of the cold / warm-cache subprocess: time every step twice, print one JSON line."""
    import sklearn.datasets  # noqa: F401  (the workload's loaders: not part of dtjit's import)

    start = time.perf_counter()
    import dtjit

    import_s = time.perf_counter() - start
    from dtjit._warmup import warm_up_steps

    rejected: set[str] = set()
    steps = warm_up_steps(splitters, rejected)
    first = []
    for step in steps:
        t = time.perf_counter()
        step.run()
        first.append(time.perf_counter() - t)
    again = [float("inf")] * len(steps)
    for _ in range(REPEATS):  # the fastest repeat: a busy machine only ever adds time
        for k, step in enumerate(steps):
            t = time.perf_counter()
            step.run()
            again[k] = min(again[k], time.perf_counter() - t)
    print(
        json.dumps(
            {
                "import_s": import_s,
                "steps": [
                    {"step": step.name, "first_s": f, "again_s": a}
                    for step, f, a in zip(steps, first, again, strict=True)
                ],
                "kernels": kernel_coverage(),
                "rejected_combinations": sorted(rejected),
                "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR") or "(default: next to dtjit)",
                "dtjit_file": dtjit.__file__,
            }
        )
    )


def child_env(**extra: str) -> dict[str, str]:
    """The environment of every child process: this one's, with Python's bytecode cache on.

    A normal install has it on (pip writes ``.pyc`` files when it installs a package, and
    Python when it first imports one); an environment that sets ``PYTHONDONTWRITEBYTECODE``
    (some sandboxes and CI images do) makes every process compile an editable install's
    modules from source again: about 0.1 s of dtjit's import here. The priming run below
    writes the files before anything is timed.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def run_steps_child(splitters: list[str], cache_dir: str | None) -> dict[str, Any]:
    env = child_env()
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_steps-child", *splitters]
    result = run_json_child(cmd, env)
    tree_steps = [s for s in result["steps"] if s["step"].startswith(TREE_STEP_PREFIXES)]
    result["tree_first_s"] = sum(s["first_s"] for s in tree_steps)
    result["tree_compile_or_load_s"] = sum(s["first_s"] - s["again_s"] for s in tree_steps)
    return result


# -- warm start-up processes --------------------------------------------------------------------
def warm_startup(runs: int) -> dict[str, Any]:
    """``runs`` fresh processes per library, interleaved; their timings and medians."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in WARM_CODE}
    with tempfile.TemporaryDirectory(prefix="dtjit-bench-startup-") as tmp:
        paths = {"x": str(Path(tmp) / "X.npy"), "y": str(Path(tmp) / "y.npy")}
        np.save(paths["x"], X)
        np.save(paths["y"], y)

        def task(name: str) -> Callable[[], None]:
            cmd = [sys.executable, "-c", WARM_CODE[name].format(**paths)]
            return lambda: results[name].append(run_json_child(cmd, child_env()))

        def report(name: str, r: int, _: float) -> None:
            last = results[name][-1]
            log(f"    {name:<8} run {r + 1}: in process {last['total_s']:.3f} s, "
                f"whole process {last['process_wall_s']:.3f} s")  # fmt: skip

        run_interleaved({name: task(name) for name in WARM_CODE}, dict.fromkeys(WARM_CODE, runs),
                        report)  # fmt: skip
    out: dict[str, Any] = {}
    for name, runs_ in results.items():
        keys = runs_[0].keys()
        out[name] = {
            "runs": runs_,
            "median": {k: statistics.median(r[k] for r in runs_) for k in keys},
        }
    return out


# -- reporting ----------------------------------------------------------------------------------
def _difference(step: dict[str, float], digits: int) -> str:
    """First run - repeat; a difference that rounds to zero is shown as 0, without a sign."""
    return f"{round(step['first_s'] - step['again_s'], digits) + 0.0:.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    m, warm, cold, cached = report["machine"], report["warm"], report["cold"], report["warm_cache"]
    d, s = warm["dtjit"]["median"], warm["sklearn"]["median"]
    lines = [
        "# Start-up: import, compile and first results",
        "",
        f"Command: `{' '.join(report['command'])}`; {m['date_utc']}; {m['cpus_available']} CPUs "
        f"({m['cpu_model']}), load average (1, 5, 15 min) at the end "
        + " / ".join(f"{x:.2f}" for x in m["load_average"])
        + f"; Python {m['python']}, numba {m['numba']}, scikit-learn {m['sklearn']}, dtjit "
        f"{m['dtjit']} (commit {(m['git_commit'] or '?')[:10]}"
        + (", uncommitted changes" if m.get("dtjit_sources_modified") else "")
        + f"). Splitters: {', '.join(report['splitters'])}"
        + "".join(f"; {k} not available" for k in report["splitters_missing"])
        + ".",
        "",
        f"## Warm cache: a fresh process fits iris and predicts (median of {report['runs']})",
        "",
        "In-process seconds from before `import numpy` (numpy + loading iris from `.npy`, then "
        "the library's import, fit, predict); *whole process* adds the interpreter's start-up "
        "and exit, as timed by the parent. Python's bytecode cache is on, as after a normal "
        "install"
        + (
            " (this run's own environment sets `PYTHONDONTWRITEBYTECODE`, which the children "
            "drop: without `.pyc` files every process compiles dtjit's modules from source)"
            if report.get("parent_sets_pythondontwritebytecode")
            else ""
        )
        + ".",
        "",
        "| library | numpy + data | import | fit | predict | import + fit + predict "
        "(in process) | whole process |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, med in (("dtjit", d), ("scikit-learn", s)):
        lines.append(
            f"| {name} | {med['numpy_and_data_s']:.3f} | {med['import_s']:.3f} "
            f"| {med['fit_s']:.4f} | {med['predict_s']:.4f} | {med['total_s']:.3f} "
            f"| {med['process_wall_s']:.3f} |"
        )
    met = "met" if d["total_s"] <= WARM_GOAL_S else "NOT met"
    lines += [
        "",
        f"Goal <= {WARM_GOAL_S:.1f} s for import + fit + predict: {met} ({d['total_s']:.3f} s in "
        f"process, {d['process_wall_s']:.3f} s whole process; scikit-learn {s['total_s']:.3f} s "
        f"/ {s['process_wall_s']:.3f} s).",
        "",
        "## Cold (empty numba cache) and warm cache, step by step",
        "",
        f"Each step runs once, then {REPEATS} more times, in the same fresh process; *repeat* is "
        "the fastest of those, and *compile* (cold) or *cache load* (warm cache) = first run - "
        "repeat.",
        "",
        "| step | cold: first (s) | cold: compile (s) | warm cache: first (s) "
        "| warm cache: load (s) | repeat (s) |",
        "|---|---:|---:|---:|---:|---:|",
        f"| import dtjit | {cold['import_s']:.2f} | - | {cached['import_s']:.2f} | - | - |",
    ]
    for c, w in zip(cold["steps"], cached["steps"], strict=True):
        lines.append(
            f"| {c['step']} | {c['first_s']:.2f} | {_difference(c, 2)} "
            f"| {w['first_s']:.3f} | {_difference(w, 3)} | {w['again_s']:.4f} |"
        )
    lines.append(
        f"| **all tree fit / predict steps** | **{cold['tree_first_s']:.2f}** "
        f"| **{cold['tree_compile_or_load_s']:.2f}** | **{cached['tree_first_s']:.3f}** "
        f"| **{cached['tree_compile_or_load_s']:.3f}** | |"
    )
    kernels = cold["kernels"]
    missing = [k for k in kernels["not_compiled"] if not k.startswith("dtjit._mdlp.")]
    met = "met" if cold["tree_compile_or_load_s"] <= COMPILE_GOAL_S else "NOT met"
    lines += [
        "",
        f"Goal <= {COMPILE_GOAL_S:.0f} s for the first-ever compile of every fit and predict "
        f"kernel: {met} ({cold['tree_compile_or_load_s']:.1f} s; the whole cold process took "
        f"{cold['process_wall_s']:.1f} s). The cold steps compiled "
        f"{len(kernels['compiled'])} of {len(kernels['compiled']) + len(kernels['not_compiled'])}"
        " dtjit kernels (inline helpers excluded); not compiled: "
        + (", ".join(kernels["not_compiled"]) or "none")
        + (
            "."
            if not missing
            else f". **Tree kernels the steps missed, so not in the total: {', '.join(missing)}.**"
        ),
    ]
    command = report.get("compile_command")
    if command:
        lines += [
            "",
            f"`dtjit compile --jobs {command['jobs']}` in a fresh process on an empty cache (the "
            f"same steps; with more than one job, spread over that many processes, then run once "
            f"more in its own to check the cache): {command['wall_s']:.1f} s wall.",
        ]
    copies = kernels.get("literal_copies", [])
    wasted = [k for k in copies if k not in INTENDED_LITERAL_COPIES]
    intended = [f"{k} ({INTENDED_LITERAL_COPIES[k]})" for k in copies if k not in wasted]
    lines += [
        "",
        "Kernels compiled a second time only because a constant argument was typed as a "
        "literal or a loop index as unsigned: " + (", ".join(wasted) or "none") + ".",
    ]
    if intended:
        lines += ["", "Compiled once per value of a literal flag on purpose: "
                  + "; ".join(intended) + "."]  # fmt: skip
    rejected = cold.get("rejected_combinations")
    if rejected:
        lines += ["", "Combinations an optional splitter rejected (not timed): "
                  + "; ".join(r.rstrip(".") for r in rejected) + "."]  # fmt: skip
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"warm start-up processes per library (default {DEFAULT_RUNS})",
    )
    parser.add_argument(
        "--compile-jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="also time `dtjit compile --jobs N` on an empty cache (default: the CPU count; "
        "0 skips it)",
    )
    parser.add_argument("--_steps-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)  # fmt: skip
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.compile_jobs < 0:
        parser.error("--compile-jobs must be at least 0")
    return args


def compile_command(jobs: int) -> dict[str, Any]:
    """Wall time of ``dtjit compile --jobs N`` in a fresh process on an empty numba cache."""
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        command = [sys.executable, "-m", "dtjit", "compile", "--jobs", str(jobs)]
        start = time.perf_counter()
        subprocess.run(
            command, env=child_env(NUMBA_CACHE_DIR=empty_cache), check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        return {"jobs": jobs, "wall_s": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._steps_child:
        steps_child(args._steps_child)
        return 0
    start = time.perf_counter()
    # Imported here, not at the top: the step child times ``import dtjit`` itself.
    from dtjit._warmup import PARALLEL_ROWS as parallel_rows

    missing = {s: p for s in OPTIONAL_SPLITTERS if (p := splitter_problem(s)) is not None}
    splitters = ["best", *(s for s in OPTIONAL_SPLITTERS if s not in missing)]
    log(f"splitters: {', '.join(splitters)}")
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        log("cold: fresh process, empty NUMBA_CACHE_DIR (every kernel compiled) ...")
        cold = run_steps_child(splitters, empty_cache)
    log(
        f"    compile {cold['tree_compile_or_load_s']:.2f} s, "
        f"process {cold['process_wall_s']:.1f} s"
    )
    log("warm cache: priming run (fills the normal cache if it is stale), then the measured one")
    priming = run_steps_child(splitters, None)
    cached = run_steps_child(splitters, None)
    log(f"    cache load {cached['tree_compile_or_load_s']:.3f} s")
    command = None
    if args.compile_jobs:
        log(f"`dtjit compile --jobs {args.compile_jobs}` on an empty cache ...")
        command = compile_command(args.compile_jobs)
        log(f"    {command['wall_s']:.1f} s")
    log(f"warm start-up: {args.runs} fresh processes per library, interleaved ...")
    warm = warm_startup(args.runs)
    report: dict[str, Any] = {
        "benchmark": "startup",
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "runs": args.runs,
        "splitters": splitters,
        "splitters_missing": missing,
        "parallel_rows": parallel_rows,
        "goals_s": {"warm_import_fit_predict": WARM_GOAL_S, "cold_compile": COMPILE_GOAL_S},
        "parent_sets_pythondontwritebytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "warm": warm,
        "cold": cold,
        "warm_cache": cached,
        "warm_cache_priming_run": priming,
        "compile_command": command,
    }
    publish(report, markdown, JSON_PATH, MD_PATH, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
