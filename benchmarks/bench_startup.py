"""Start-up benchmark: what dtjit costs before its first result, measured in fresh processes.

numba compiles dtjit's kernels the first time a fit needs them and caches the machine code on
disk (next to the package, or in ``NUMBA_CACHE_DIR``); later processes load it. "Cold" below
means a fresh process whose ``NUMBA_CACHE_DIR`` is an empty temporary directory. CPU seconds
(``time.process_time``: every thread of the process) are the figure the goals are set in; on a
shared machine they vary far less than wall time.

1. **Per path, cold** (:mod:`dtjit._first_use`): one cold process imports dtjit, then runs the
   paths one after another, the plain classifier on iris (fit + predict) first. Each row is
   what that path added beyond what the rows above it had compiled: CPU s, wall s and the
   number of functions numba compiled (``numba:compile`` events, counted by a
   ``numba.core.event`` listener: dtjit's kernels and the numba overloads they pull in), with
   dtjit's kernels among them. Goals (:data:`GOALS_CPU_S`): first fit + predict <= 10 s,
   each other path <= 10 s. ``--paths KEY,...`` runs a subset (same order).
2. **Every path, cold, on one core**: the steps of ``dtjit compile``
   (:func:`dtjit._warmup.warm_up_steps`) in one cold process pinned to one CPU
   (``sched_setaffinity``; numba keeps the machine's thread count, so ``n_jobs=-1`` still
   compiles the threaded kernels); per step CPU s, wall s, compiled functions and the fastest of
   :data:`REPEATS` repeats. Goal: every path <= 60 s CPU. The child also lists dtjit's
   kernels the steps did not compile, so "every path" is checked, not assumed. The same
   child then runs on the normal (warm) cache, after a priming run: per-step cache load.
3. **The compile command**: wall time of ``dtjit compile --jobs N`` (``--compile-jobs``, the
   CPU count by default; 0 skips it) in a fresh process on another empty cache.
4. **Warm start-up** (a figure next to scikit-learn's, not a goal): ``--runs`` fresh
   ``python -c`` processes per library, interleaved, with the normal cache, each importing
   the library, fitting iris (read from ``.npy``) and predicting; medians.
5. ``--demo``: ``dtjit bench`` (what ``make demo`` runs) in a cold process, CPU and wall.

Every child runs with Python's bytecode cache on, as after a normal install, even where
this process has ``PYTHONDONTWRITEBYTECODE`` set (``child_env``). Results:
``benchmarks/results/startup.json`` and ``startup.md`` (written atomically; a run of some
parts or paths only writes ``startup-partial.*``), with the load average before and after
each cold child (the machine may be shared).

Usage::

    .venv/bin/python benchmarks/bench_startup.py                     # all parts
    .venv/bin/python benchmarks/bench_startup.py --paths iris,hist   # part 1 only, two paths
    .venv/bin/python benchmarks/bench_startup.py --parts paths,every # choose parts
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
# A run of some parts or paths only: written apart, so it never replaces a full run's files.
PARTIAL_JSON_PATH = RESULTS_DIR / "startup-partial.json"
PARTIAL_MD_PATH = RESULTS_DIR / "startup-partial.md"

DEFAULT_RUNS = 7
REPEATS = 3
OPTIONAL_SPLITTERS = ("hist", "random")
PARTS = ("paths", "every", "compile", "warm")
# The report's key of each part's results (``--update`` keeps those a run does not measure).
RESULT_PARTS = ("paths", "every_path", "compile_command", "demo", "warm")
FIRST_PATH = "iris"  # the key of the headline path (dtjit._first_use)

# The goals, cold CPU seconds (issue 50); edit here. "path" applies to each path but the first.
GOALS_CPU_S = {"first fit + predict": 10.0, "path": 10.0, "every path (one core)": 60.0}

# The warm start-up processes: everything after the first line is timed in process.
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
    "dtjit.predict.walk.walk_phase": "with_nan: rows known to hold no NaN skip the NaN test",
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


# -- what a child measures ----------------------------------------------------------------------
class CompileCounter:
    """Count ``numba:compile`` events (one per function and signature numba compiles).

    Nested compiles (a kernel's callees, numba's own overloads) are events of their own, so
    the count is every function compiled, not only the ones called from Python. Loading from
    the on-disk cache raises no event.
    """

    def __init__(self) -> None:
        from numba.core import event

        counter = self

        class Listener(event.Listener):
            def on_start(self, ev: Any) -> None:
                counter.all += 1
                dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
                py_func = getattr(dispatcher, "py_func", None)
                module = getattr(py_func, "__module__", None) or ""
                if module == "dtjit" or module.startswith("dtjit."):
                    counter.dtjit.append(f"{module}.{py_func.__qualname__}")

            def on_end(self, ev: Any) -> None:
                pass

        self.all = 0
        self.dtjit: list[str] = []
        event.register("numba:compile", Listener())


class Meter:
    """CPU s, wall s and compiles of one block of code, as differences of running totals."""

    def __init__(self, counter: CompileCounter) -> None:
        self.counter = counter

    def __enter__(self) -> Meter:
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        self.n_all, self.n_dtjit = self.counter.all, len(self.counter.dtjit)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cpu_s = time.process_time() - self.cpu
        self.wall_s = time.perf_counter() - self.wall
        self.compiled = self.counter.all - self.n_all
        self.kernels = self.counter.dtjit[self.n_dtjit :]

    def record(self, **extra: Any) -> dict[str, Any]:
        return {"cpu_s": self.cpu_s, "wall_s": self.wall_s, "compiled": self.compiled,
                "dtjit_compiled": len(self.kernels), "dtjit_kernels": self.kernels,
                **extra}  # fmt: skip


def _imports() -> tuple[CompileCounter, dict[str, Any]]:
    """Import numba (with the counter) and dtjit; the row of ``import dtjit``."""
    import sklearn.datasets  # noqa: F401  (the workloads' loaders: not part of dtjit's import)

    cpu, wall = time.process_time(), time.perf_counter()
    counter = CompileCounter()  # imports numba, as dtjit's import would
    import dtjit  # noqa: F401

    row = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
           "compiled": counter.all, "dtjit_compiled": len(counter.dtjit)}  # fmt: skip
    return counter, row


def paths_child(keys: list[str]) -> None:
    """Body of the per-path child: run the paths in order, print one JSON line."""
    counter, import_row = _imports()
    from dtjit._first_use import first_uses, load_data, select

    rows = []
    for path in select(first_uses(load_data()), keys):
        with Meter(counter) as meter:
            path.run()
        rows.append(meter.record(key=path.key, path=path.name))
    print(json.dumps({"import": import_row, "paths": rows,
                      "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR")}))  # fmt: skip


def steps_child(splitters: list[str]) -> None:
    """Body of the every-path child: each ``dtjit compile`` step once, then repeats."""
    counter, import_row = _imports()
    from dtjit._warmup import warm_up_steps

    rejected: set[str] = set()
    steps = warm_up_steps(splitters, rejected)
    rows = []
    for step in steps:
        with Meter(counter) as meter:
            step.run()
        rows.append(meter.record(step=step.name))
    for row in rows:
        row["again_s"] = float("inf")
    for _ in range(REPEATS):  # the fastest repeat: a busy machine only ever adds time
        for row, step in zip(rows, steps, strict=True):
            t = time.perf_counter()
            step.run()
            row["again_s"] = min(row["again_s"], time.perf_counter() - t)
    print(json.dumps({
        "import": import_row, "steps": rows,
        "cpus": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numba_threads": __import__("numba").config.NUMBA_NUM_THREADS,
        "kernels": kernel_coverage(), "rejected_combinations": sorted(rejected),
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
    }))  # fmt: skip


# -- running children ---------------------------------------------------------------------------
def child_env(**extra: str) -> dict[str, str]:
    """The environment of every child process: this one's, with Python's bytecode cache on.

    A normal install has it on (pip writes ``.pyc`` files when it installs a package, and
    Python when it first imports one); an environment that sets ``PYTHONDONTWRITEBYTECODE``
    (some sandboxes and CI images do) makes every process compile an editable install's
    modules from source again: about 0.1 s of dtjit's import here.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def one_cpu() -> int:
    """The CPU a pinned child runs on: the lowest this process may use."""
    return min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0


def run_child(
    cmd: list[str], env: dict[str, str], cpu: int | None = None, json_out: bool = True
) -> dict[str, Any]:
    """Run ``cmd`` in a fresh process (pinned to ``cpu`` if given); its last JSON line.

    Adds the whole process's wall and CPU seconds as the parent saw them (interpreter
    start-up and imports included; the CPU of the processes it waited for too) and the
    1-minute load average before and after.
    """

    def pin() -> None:
        os.sched_setaffinity(0, {cpu})

    load_before = os.getloadavg()[0]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # this script runs one at a time
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, stdout=subprocess.PIPE if json_out else subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=pin if cpu is not None else None,
        check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess {cmd} failed ({proc.returncode}):\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1]) if json_out else {}
    result.update(
        process_wall_s=wall,
        process_cpu_s=(after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime),
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
    return result


def this_script(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *args]


def cold_paths(keys: list[str] | None) -> dict[str, Any]:
    """Part 1: the paths in one cold process."""
    from dtjit._first_use import first_uses, load_data, select

    paths = select(first_uses(load_data()), keys)
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        return run_child(
            this_script("--_paths-child", ",".join(p.key for p in paths)),
            child_env(NUMBA_CACHE_DIR=empty_cache),
        )


def every_path(splitters: list[str]) -> dict[str, Any]:
    """Part 2: every ``dtjit compile`` step, cold on one core, then on the warm cache."""
    cmd = this_script("--_steps-child", *splitters)
    # Pinned to one CPU, numba would start one thread and n_jobs=-1 would never reach the
    # threaded kernels: it keeps the machine's thread count (at least 2), on that one core.
    threads = str(max(2, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        env = child_env(NUMBA_CACHE_DIR=empty_cache, NUMBA_NUM_THREADS=threads)
        cold = run_child(cmd, env, cpu=one_cpu())
    log(f"    {sum(s['cpu_s'] for s in cold['steps']):.1f} CPU s; warm cache: priming run "
        "(fills the normal cache if it is stale), then the measured one")  # fmt: skip
    run_child(cmd, child_env())
    return {"cold": cold, "warm_cache": run_child(cmd, child_env())}


def compile_command(jobs: int) -> dict[str, Any]:
    """Part 3: ``dtjit compile --jobs N`` in a fresh process on an empty numba cache."""
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        result = run_child(
            [sys.executable, "-m", "dtjit", "compile", "--jobs", str(jobs)],
            child_env(NUMBA_CACHE_DIR=empty_cache), json_out=False,
        )  # fmt: skip
    return {"jobs": jobs, "wall_s": result["process_wall_s"], "cpu_s": result["process_cpu_s"],
            "load_before": result["load_before"], "load_after": result["load_after"]}  # fmt: skip


def demo() -> dict[str, Any]:
    """Part 5: ``dtjit bench`` (``make demo``) in a cold process."""
    with tempfile.TemporaryDirectory(prefix="dtjit-empty-numba-cache-") as empty_cache:
        result = run_child(
            [sys.executable, "-m", "dtjit", "bench"], child_env(NUMBA_CACHE_DIR=empty_cache),
            json_out=False,
        )  # fmt: skip
    return {"wall_s": result["process_wall_s"], "cpu_s": result["process_cpu_s"],
            "load_before": result["load_before"], "load_after": result["load_after"]}  # fmt: skip


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
def _met(value: float, goal: float) -> str:
    return "met" if value <= goal else "**NOT met**"


def _load(child: dict[str, Any]) -> str:
    return f"load average {child['load_before']:.1f} before, {child['load_after']:.1f} after"


def _measured(part: dict[str, Any]) -> str:
    """When and by which command a part was measured (parts may come from several runs)."""
    m = part.get("measured")
    return f" Measured {m['date_utc']} by `{' '.join(m['command'])}`." if m else ""


def goal_of(key: str) -> float:
    return GOALS_CPU_S["first fit + predict" if key == FIRST_PATH else "path"]


def paths_section(cold: dict[str, Any]) -> list[str]:
    imp, rows = cold["import"], cold["paths"]
    lines = [
        "## Cold, per path: what each first use compiles beyond the rows above it",
        "",
        "One fresh process, `NUMBA_CACHE_DIR` an empty directory: `import dtjit`, then each "
        "path (`dtjit._first_use`) in this order. *Functions compiled*: numba's "
        "`numba:compile` events (dtjit's kernels and the numba overloads they need); *dtjit "
        "kernels*: those of them defined in dtjit. CPU seconds count every thread.",
        "",
        "| path | CPU s | wall s | functions compiled | dtjit kernels | goal (CPU s) | goal |",
        "|---|---:|---:|---:|---:|---:|---|",
        f"| import dtjit | {imp['cpu_s']:.2f} | {imp['wall_s']:.2f} | {imp['compiled']} "
        f"| {imp['dtjit_compiled']} | - | - |",
    ]
    for row in rows:
        goal = goal_of(row["key"])
        name = f"**{row['path']}**" if row["key"] == FIRST_PATH else row["path"]
        lines.append(
            f"| {name} | {row['cpu_s']:.2f} | {row['wall_s']:.2f} | {row['compiled']} "
            f"| {row['dtjit_compiled']} | {goal:.0f} | {_met(row['cpu_s'], goal)} |"
        )
    lines += [
        f"| all of the above | {imp['cpu_s'] + sum(r['cpu_s'] for r in rows):.2f} "
        f"| {imp['wall_s'] + sum(r['wall_s'] for r in rows):.2f} "
        f"| {imp['compiled'] + sum(r['compiled'] for r in rows)} "
        f"| {imp['dtjit_compiled'] + sum(r['dtjit_compiled'] for r in rows)} | | |",
        "",
        f"The whole process: {cold['process_cpu_s']:.1f} CPU s, {cold['process_wall_s']:.1f} s "
        f"wall (interpreter start-up and the data included); {_load(cold)}.{_measured(cold)}",
    ]
    return lines


def every_path_section(every: dict[str, Any]) -> list[str]:
    cold, warm = every["cold"], every["warm_cache"]
    imp, steps = cold["import"], cold["steps"]
    cpu = imp["cpu_s"] + sum(s["cpu_s"] for s in steps)
    wall = imp["wall_s"] + sum(s["wall_s"] for s in steps)
    compiled = imp["compiled"] + sum(s["compiled"] for s in steps)
    goal = GOALS_CPU_S["every path (one core)"]
    pinned = ", ".join(str(c) for c in cold.get("cpus") or []) or "?"
    lines = [
        "## Cold, every path (the steps of `dtjit compile`), on one core",
        "",
        f"One fresh process on an empty numba cache, pinned to CPU {pinned} (numba "
        f"threads: {cold.get('numba_threads', '?')}, sharing it): import + every "
        f"step: **{cpu:.1f} CPU s** (goal <= {goal:.0f} s: {_met(cpu, goal)}), {wall:.1f} s "
        f"wall, {compiled} functions compiled; the whole process {cold['process_cpu_s']:.1f} "
        f"CPU s with its data and {REPEATS} repeats of every step; {_load(cold)}. *Repeat*: "
        f"the fastest of {REPEATS} more runs in the same process; *warm cache*: the same step "
        "in a process on the normal cache (kernels loaded, not compiled)." + _measured(every),
        "",
        "| step | CPU s | wall s | functions compiled | dtjit kernels | repeat (s) "
        "| warm cache: first (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| import dtjit | {imp['cpu_s']:.2f} | {imp['wall_s']:.2f} | {imp['compiled']} "
        f"| {imp['dtjit_compiled']} | - | {warm['import']['wall_s']:.3f} |",
    ]
    for c, w in zip(steps, warm["steps"], strict=True):
        lines.append(
            f"| {c['step']} | {c['cpu_s']:.2f} | {c['wall_s']:.2f} | {c['compiled']} "
            f"| {c['dtjit_compiled']} | {c['again_s']:.4f} | {w['wall_s']:.3f} |"
        )
    kernels = cold["kernels"]
    n_kernels = len(kernels["compiled"]) + len(kernels["not_compiled"])
    missing = [k for k in kernels["not_compiled"] if not k.startswith("dtjit.engine.mdlp.")]
    lines += [
        "",
        f"The steps compiled {len(kernels['compiled'])} of {n_kernels} dtjit kernels (inline "
        "helpers excluded); not compiled: " + (", ".join(kernels["not_compiled"]) or "none")
        + ("." if not missing else
           f". **Tree kernels the steps missed, so not in the total: {', '.join(missing)}.**"),
    ]  # fmt: skip
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
    return lines


def warm_section(report: dict[str, Any]) -> list[str]:
    warm = report["warm"]
    d, s = warm["dtjit"]["median"], warm["sklearn"]["median"]
    runs = warm.get("runs", "?")
    lines = [
        f"## Warm cache: a fresh process fits iris and predicts (median of {runs})",
        "",
        "A figure next to scikit-learn's, not a goal. In-process seconds from before `import "
        "numpy` (numpy + loading iris from `.npy`, then the library's import, fit, predict); "
        "*whole process* adds the interpreter's start-up and exit, as timed by the parent."
        + _measured(warm),
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
    return lines


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Start-up: what each path compiles, and warm start-up",
        "",
        f"Command: `{' '.join(report['command'])}`; {m['date_utc']}; {m['cpus_available']} CPUs "
        f"({m['cpu_model']}), load average (1, 5, 15 min) at the start "
        + " / ".join(f"{x:.2f}" for x in report["load_average_start"])
        + ", at the end "
        + " / ".join(f"{x:.2f}" for x in m["load_average"])
        + f"; Python {m['python']}, numba {m['numba']}, scikit-learn {m['sklearn']}, dtjit "
        f"{m['dtjit']} (commit {(m['git_commit'] or '?')[:10]}"
        + (", uncommitted changes" if m.get("dtjit_sources_modified") else "")
        + f"). Splitters: {', '.join(report['splitters'])}"
        + "".join(f"; {k} not available" for k in report["splitters_missing"])
        + ". Goals are cold CPU seconds; on a busy machine wall time is longer, CPU time "
        "less so.",
    ]
    if report.get("paths"):
        lines += ["", *paths_section(report["paths"])]
    if report.get("every_path"):
        lines += ["", *every_path_section(report["every_path"])]
    command = report.get("compile_command")
    if command:
        lines += [
            "",
            f"`dtjit compile --jobs {command['jobs']}` in a fresh process on an empty cache (the "
            "same steps, spread over that many processes, then run once more in its own to "
            f"check the cache): {command['wall_s']:.1f} s wall, {command['cpu_s']:.1f} CPU s in "
            f"all its processes; {_load(command)}.{_measured(command)}",
        ]
    if report.get("demo"):
        d = report["demo"]
        lines += [
            "",
            f"`dtjit bench` (what `make demo` runs) in a fresh process on an empty cache: "
            f"{d['wall_s']:.1f} s wall, {d['cpu_s']:.1f} CPU s; {_load(d)}.{_measured(d)}",
        ]
    if report.get("warm"):
        lines += ["", *warm_section(report)]
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--paths",
        help="comma-separated keys of the paths of part 1, in dtjit._first_use's order "
        "(default: all); alone, it runs part 1 only",
    )
    parser.add_argument(
        "--parts",
        help=f"comma-separated parts to run, of {', '.join(PARTS)} (default: all; "
        "`paths` only when --paths is given)",
    )
    parser.add_argument("--demo", action="store_true", help="also time `dtjit bench` cold")
    parser.add_argument(
        "--update",
        action="store_true",
        help="write into startup.json / .md, keeping the parts this run does not measure "
        "from them (runs of different parts, one after another or at once)",
    )
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
        help="processes of `dtjit compile --jobs N` on an empty cache (default: the CPU "
        "count; 0 skips it)",
    )
    parser.add_argument("--_paths-child", help=argparse.SUPPRESS)
    parser.add_argument("--_steps-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.compile_jobs < 0:
        parser.error("--compile-jobs must be at least 0")
    if args.parts is None:
        args.parts = ["paths"] if args.paths else list(PARTS)
    else:
        args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
        unknown = [p for p in args.parts if p not in PARTS]
        if unknown:
            parser.error(f"unknown part {unknown[0]!r}; the parts are {', '.join(PARTS)}")
    if args.compile_jobs == 0 and "compile" in args.parts:
        args.parts.remove("compile")
    if args.paths is not None:
        args.paths = [k.strip() for k in args.paths.split(",") if k.strip()]
        from dtjit._first_use import first_uses, load_data, select

        try:
            select(first_uses(load_data()), args.paths)
        except ValueError as exc:
            parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._paths_child is not None:
        paths_child(args._paths_child.split(","))
        return 0
    if args._steps_child:
        steps_child(args._steps_child)
        return 0
    start = time.perf_counter()
    load_start = list(os.getloadavg())
    report: dict[str, Any] = {
        "benchmark": "startup",
        "command": [Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)],
        "parts": args.parts,
        "runs": args.runs,
        "goals_cpu_s": GOALS_CPU_S,
        "load_average_start": load_start,
        "parent_sets_pythondontwritebytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
    }
    missing = {s: p for s in OPTIONAL_SPLITTERS if (p := splitter_problem(s)) is not None}
    report["splitters"] = splitters = ["best", *(s for s in OPTIONAL_SPLITTERS if s not in missing)]
    report["splitters_missing"] = missing
    full = args.update or (args.paths is None and set(PARTS) <= set(args.parts))
    paths = (JSON_PATH, MD_PATH) if full else (PARTIAL_JSON_PATH, PARTIAL_MD_PATH)

    def save(part: str, result: dict[str, Any]) -> None:
        # Written after each part, so a run cut short keeps what it measured.
        result["measured"] = {
            "command": report["command"],
            "load_average_start": load_start,
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        }
        report[part] = result
        old = json.loads(JSON_PATH.read_text(encoding="utf-8")) if JSON_PATH.exists() else {}
        if args.update and "goals_cpu_s" in old:  # not from an earlier form of this script
            for key in RESULT_PARTS:
                if key not in report and key in old:
                    report[key] = old[key]
        publish(report, markdown, *paths, start)  # fmt: skip

    if "paths" in args.parts:
        log("per path: one cold process (empty NUMBA_CACHE_DIR), the paths in order ...")
        cold = cold_paths(args.paths)
        for row in cold["paths"]:
            log(f"    {row['path']}: {row['cpu_s']:.2f} CPU s, {row['wall_s']:.2f} s wall, "
                f"{row['compiled']} compiled ({row['dtjit_compiled']} dtjit kernels)")  # fmt: skip
        save("paths", cold)
    if "every" in args.parts:
        log(f"every path: the dtjit compile steps, one cold process on CPU {one_cpu()} ...")
        save("every_path", every_path(splitters))
    if "compile" in args.parts:
        log(f"`dtjit compile --jobs {args.compile_jobs}` on an empty cache ...")
        save("compile_command", compile_command(args.compile_jobs))
        log(f"    {report['compile_command']['wall_s']:.1f} s")
    if args.demo:
        log("`dtjit bench` on an empty cache ...")
        save("demo", demo())
        log(f"    {report['demo']['wall_s']:.1f} s wall, {report['demo']['cpu_s']:.1f} CPU s")
    if "warm" in args.parts:
        log(f"warm start-up: {args.runs} fresh processes per library, interleaved ...")
        save("warm", {**warm_startup(args.runs), "runs": args.runs})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
