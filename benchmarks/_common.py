"""What every benchmark script shares: logging, atomic result files, the machine's description."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"
SHARED_DATA_DIR = REPO.parent / "shared" / "data"

# The generated problem every benchmark shares: make_classification with these settings, float32.
SEED = 0
N_FEATURES = 20
N_INFORMATIVE = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _vector_partition() -> bool | None:
    """Whether the installed dtjit partitions with AVX-512 blocks (None: it has no such path)."""
    try:
        from dtjit.engine.simd import USE_COMPRESS
    except ImportError:
        return None
    return bool(USE_COMPRESS)


def machine_info() -> dict[str, Any]:
    import numba
    import sklearn

    import dtjit

    cpu_model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        threading_layer = numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        threading_layer = None

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
            )
        except (OSError, subprocess.CalledProcessError):
            return None
        return proc.stdout.strip()

    dirty = git("status", "--porcelain", "--", "dtjit")
    sources = hashlib.sha256()
    for path in sorted((REPO / "dtjit").glob("*.py")):
        sources.update(path.name.encode() + b"\0" + path.read_bytes())
    return {
        "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpus_available": (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        ),
        "cpu_model": cpu_model,
        # the exact partition's 16-row blocks (AVX-512 compress stores) or its row loop
        "dtjit_vector_partition": _vector_partition(),
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": threading_layer,
        # these change how idle threads wait, hence timings on a busy machine
        "environment": {
            k: os.environ[k]
            for k in (
                "NUMBA_NUM_THREADS",
                "NUMBA_THREADING_LAYER",
                "OMP_NUM_THREADS",
                "OMP_WAIT_POLICY",
                "GOMP_SPINCOUNT",
            )
            if k in os.environ
        },
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "sklearn": sklearn.__version__,
        "lightgbm": _lightgbm_version(),
        "dtjit": dtjit.__version__,
        "git_commit": git("rev-parse", "HEAD"),
        "dtjit_sources_modified": None if dirty is None else bool(dirty),
        "dtjit_sources_sha256": sources.hexdigest()[:16],
    }


def publish(
    report: dict[str, Any],
    markdown: Callable[[dict[str, Any]], str],
    json_path: Path,
    md_path: Path,
    started: float,
) -> None:
    """Finish a benchmark: record the machine and the wall time, write the JSON and the
    markdown table (each atomically) and print the table.

    ``started`` is the ``time.perf_counter()`` reading taken when the run began.
    """
    report["machine"] = machine_info()
    report["wall_s"] = time.perf_counter() - started
    md = markdown(report)
    write_atomic(json_path, json.dumps(report, indent=2) + "\n")
    write_atomic(md_path, md)
    print(md)
    shown = [p.relative_to(REPO) if p.is_relative_to(REPO) else p for p in (json_path, md_path)]
    log(f"wrote {shown[0]} and {shown[1]} in {report['wall_s']:.0f} s")


def sklearn_twin(model: Any) -> Any:
    """Return a scikit-learn tree estimator holding exactly the nodes of a fitted dtjit one.

    Timing scikit-learn's ``predict`` on the very same tree compares the two traversals
    and nothing else; its predictions are also the plain reference the benchmark checks
    dtjit's against. The twin is fitted on a stand-in row per class (for ``classes_`` and
    the other fitted attributes), then given dtjit's nodes through the state scikit-learn
    pickles its trees with.
    """
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    from sklearn.tree._tree import NODE_DTYPE
    from sklearn.tree._tree import Tree as SklearnTree

    tree = model.tree_
    is_classifier = hasattr(model, "classes_")
    labels = model.classes_ if is_classifier else np.array([0.0, 1.0])
    twin = DecisionTreeClassifier() if is_classifier else DecisionTreeRegressor()
    twin.fit(np.zeros((len(labels), model.n_features_in_), dtype=np.float32), labels)
    is_leaf = tree.children_left == -1
    nodes = np.zeros(tree.node_count, dtype=NODE_DTYPE)
    nodes["left_child"] = tree.children_left
    nodes["right_child"] = tree.children_right
    nodes["feature"] = np.where(is_leaf, -2, tree.feature)
    nodes["threshold"] = np.where(is_leaf, -2.0, tree.threshold)
    nodes["impurity"] = tree.impurity
    nodes["n_node_samples"] = tree.n_node_samples
    nodes["weighted_n_node_samples"] = tree.weighted_n_node_samples
    nodes["missing_go_to_left"] = tree.missing_go_to_left
    n_classes = np.array([len(labels) if is_classifier else 1], dtype=np.intp)
    state = {
        "max_depth": tree.max_depth,
        "node_count": tree.node_count,
        "nodes": nodes,
        "values": np.ascontiguousarray(tree.value),
    }
    twin.tree_ = SklearnTree(model.n_features_in_, n_classes, 1)
    twin.tree_.__setstate__(state)
    return twin


def rss_bytes(field: str = "VmRSS") -> int | None:
    """Return this process's resident set (``VmRSS``) or its peak (``VmHWM``), Linux only."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _lightgbm_version() -> str | None:
    try:
        import lightgbm
    except ImportError:
        return None
    return lightgbm.__version__


def classification_data(n_samples: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` rows of the shared generated problem: X float32 (C order) and y."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n_samples,
        n_features=N_FEATURES,
        n_informative=N_INFORMATIVE,
        n_classes=n_classes,
        random_state=SEED,
    )
    return X.astype(np.float32), y


def lightgbm_tree(max_depth: int | None, n_threads: int) -> Any | None:
    """An unfitted LightGBM model growing one tree comparable to a CART tree, or ``None``.

    One boosting round with learning rate 1, leaves down to one sample, 255 bins
    (binning happens inside ``fit``, so timing ``fit`` on the raw array includes it).
    Full depth is approximated by 2^15 leaves; ``max_depth=10`` allows its 1024 leaves.
    For k > 2 classes LightGBM grows k trees (one per class) in its single round.
    ``None`` when LightGBM (the optional ``bench`` extra) is not installed.
    """
    try:
        import lightgbm
    except ImportError:
        return None
    return lightgbm.LGBMClassifier(
        n_estimators=1,
        learning_rate=1.0,
        num_leaves=32768 if max_depth is None else 1024,
        max_depth=-1 if max_depth is None else max_depth,
        min_child_samples=1,
        max_bin=255,
        n_jobs=n_threads,
        random_state=SEED,
        verbose=-1,
    )


def splitter_problem(splitter: str) -> str | None:
    """``None`` when the installed dtjit accepts ``splitter``, else why not.

    Fits 100 generated rows; a dtjit without that splitter rejects it with a
    ``ValueError`` naming it.
    """
    import dtjit

    X, y = classification_data(100, 2)
    try:
        dtjit.DecisionTreeClassifier(splitter=splitter).fit(X, y)
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def run_interleaved(
    tasks: Mapping[str, Callable[[], Any]],
    repeats: Mapping[str, int],
    report: Callable[[str, int, float], None] | None = None,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Time every task ``repeats[name]`` times, in rounds whose order rotates.

    Round r starts with task r (mod the number of tasks), so no task always runs right
    after the same other one (caches, thermal state, the other tenants of a shared
    machine). A task whose repeats are done sits the remaining rounds out. Garbage is
    collected before each run, outside the clock.

    Returns
    -------
    times : dict
        Name -> wall seconds of each run, in order.
    last : dict
        Name -> what the task's last run returned (for example the fitted model).
    """
    import gc

    names = list(tasks)
    times: dict[str, list[float]] = {name: [] for name in names}
    last: dict[str, Any] = {}
    for r in range(max(repeats[name] for name in names)):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            if len(times[name]) >= repeats[name]:
                continue
            gc.collect()
            start = time.perf_counter()
            last[name] = tasks[name]()
            times[name].append(time.perf_counter() - start)
            if report is not None:
                report(name, r, times[name][-1])
    return times, last


def run_json_child(cmd: list[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` in a fresh process; return the JSON object it printed last on stdout.

    Adds ``process_wall_s``: the wall time of the whole process, interpreter start-up
    included, as the parent saw it.
    """
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess {cmd} failed ({proc.returncode}):\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


def reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current ``VmRSS`` (Linux >= 4.0).

    Returns whether it worked; without it the peak includes everything the process did
    before (loading data, compiling).
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        return False
    return True
