"""What every benchmark script shares: logging, atomic result files, the machine's description."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"


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
        "dtjit": dtjit.__version__,
        "git_commit": git("rev-parse", "HEAD"),
        "dtjit_sources_modified": None if dirty is None else bool(dirty),
        "dtjit_sources_sha256": sources.hexdigest()[:16],
    }


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
