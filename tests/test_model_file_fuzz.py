"""Fuzzing the model-file loader with mutants of real model files (issue 52).

Every mutant must be refused with ``TreeFormatError``, or load and then behave exactly as a
plain Python walk of its own arrays predicts (``_model_file_mutants.walk``): ``apply``,
``predict``, ``predict_proba``, finite ``feature_importances_``, and the text and JSON
exports. Mutants cover every array (values at and around each boundary, shapes, dtypes,
absence), the header fields (extreme sizes, wrong types, deletions, unknown keys), byte
flips, truncation and deep nesting.

The mutants are loaded in child processes under a memory limit (``RLIMIT_AS``) and a
timeout, many per child: a crash, an allocation past the limit or a hang fails this test
and names the mutant, instead of killing the suite. ``DTJIT_FUZZ_MUTANTS=20000`` runs more
than the default 500; ``DTJIT_FUZZ_REPORT=path`` writes the outcome table as JSON.
A failing mutant is replayed with ``_model_file_mutants.mutant(base_bytes, seed)``.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _model_file_mutants import KINDS
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris

import dtjit
from dtjit import DecisionTreeClassifier, DecisionTreeRegressor

N_MUTANTS = int(os.environ.get("DTJIT_FUZZ_MUTANTS", "500"))
MUTANTS_PER_CHILD = 400
CHILD_MEMORY = 3 * 2**30  # address space: numba and its threads fit; 16 GiB allocations do not
CHILD_SECONDS_PER_MUTANT = 0.5
CHILD_START_SECONDS = 60.0  # importing dtjit and loading its compiled kernels, on a busy host
CHILD = Path(__file__).with_name("_model_file_fuzz_child.py")


def _bases() -> dict[str, tuple[object, np.ndarray, dict]]:
    """Fitted models worth mutating: name -> (model, probe rows, fit kwargs)."""
    rng = np.random.default_rng(0)
    X_iris, y_iris = load_iris(return_X_y=True)
    X_nan = X_iris.copy()
    X_nan[rng.random(X_nan.shape) < 0.1] = np.nan
    names = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y_iris]
    X_bc, y_bc = load_breast_cancer(return_X_y=True)
    X_db, y_db = load_diabetes(return_X_y=True)
    codes = rng.integers(0, 12, size=300)
    X_cat = np.c_[codes, rng.normal(size=(300, 2))]
    y_cat = (np.isin(codes, [1, 4, 5, 9]) ^ (X_cat[:, 1] > 0.8)).astype(int)
    frame = pd.DataFrame(
        {"colour": rng.choice(["red", "green", "blue", "grey", "teal"], 300), "x": X_cat[:, 1]}
    )
    y_frame = frame["colour"].map({"red": 1.0, "green": 2.0, "blue": 0.5}).fillna(0.0) + frame.x
    y_multi = np.c_[y_iris == 2, y_iris]
    return {
        "iris": (DecisionTreeClassifier(max_depth=4).fit(X_iris, y_iris), X_iris),
        "iris-nan-object-labels": (DecisionTreeClassifier(max_depth=4).fit(X_nan, names), X_nan),
        "diabetes": (DecisionTreeRegressor(max_depth=5).fit(X_db, y_db), X_db),
        "breast-cancer-hist": (
            DecisionTreeClassifier(max_depth=4, splitter="hist").fit(X_bc, y_bc),
            X_bc,
        ),
        "codes": (
            DecisionTreeClassifier(max_depth=4, categorical_features=[0]).fit(X_cat, y_cat),
            X_cat,
        ),
        "mapped": (
            DecisionTreeRegressor(max_depth=4, categorical_features=["colour"]).fit(frame, y_frame),
            np.c_[np.zeros(300), frame.x],  # codes are drawn per mutant
        ),
        "multi-output": (DecisionTreeClassifier(max_depth=4).fit(X_iris, y_multi), X_iris),
    }


@pytest.fixture(scope="module")
def base_files(tmp_path_factory):
    """The bases saved as model files, with 60 probe rows each (float32)."""
    folder = tmp_path_factory.mktemp("fuzz-bases")
    out = []
    for name, (model, X) in _bases().items():
        model_path, probe_path = folder / f"{name}.npz", folder / f"{name}-probe.npy"
        dtjit.save(model, model_path)
        rows = np.asarray(X, dtype=np.float32)[:: max(1, len(X) // 60)][:60]
        np.save(probe_path, rows)
        out.append({"name": name, "model": str(model_path), "probe": str(probe_path)})
    return out


def _limit_memory() -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def _run_child(bases: list[dict], mutants: list[tuple[int, int, int]], scratch: str) -> dict:
    """Run ``mutants`` in children until each has an outcome; a death names its mutant."""
    results: dict[int, dict] = {}
    pending = list(mutants)
    while pending:
        job = {"bases": bases, "mutants": pending, "scratch": scratch}
        timeout = CHILD_START_SECONDS + CHILD_SECONDS_PER_MUTANT * len(pending)
        env = {**os.environ, "PYTHONPATH": str(CHILD.parent)}
        try:
            proc = subprocess.run(
                [sys.executable, str(CHILD)], input=json.dumps(job), capture_output=True,
                text=True, timeout=timeout, preexec_fn=_limit_memory, env=env,
            )  # fmt: skip
            stdout, stderr, died = proc.stdout, proc.stderr, proc.returncode != 0
            why = f"child exited with {proc.returncode}"
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            stderr, died, why = "", True, f"child still running after {timeout:.0f} s"
        started = None
        for line in stdout.splitlines():
            if line.startswith("START "):
                started = int(line.split()[1])
            elif line.startswith("{"):
                record = json.loads(line)
                results[record["id"]] = record
        if not died:
            break
        if started is None or started in results:
            # died before its first mutant or between two: nothing to blame, so stop here
            raise AssertionError(f"fuzz child failed outside any mutant ({why}): {stderr[-2000:]}")
        results[started] = {"id": started, "outcome": "bad", "detail": f"{why}: {stderr[-500:]}"}
        pending = [m for m in pending if m[0] not in results]
    return results


def test_every_mutant_is_refused_or_behaves_as_its_arrays_say(base_files, tmp_path):
    n_bases = len(base_files)
    # mutant i: kind i % 5 (chosen by seed in _model_file_mutants), base (i // 5) % n_bases
    mutants = [(i, (i // len(KINDS)) % n_bases, i) for i in range(N_MUTANTS)]
    batches = [mutants[k : k + MUTANTS_PER_CHILD] for k in range(0, N_MUTANTS, MUTANTS_PER_CHILD)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(_run_child, base_files, batch, str(tmp_path / f"scratch-{k}.npz"))
            for k, batch in enumerate(batches)
        ]
        results = {}
        for future in futures:
            results.update(future.result())
    assert sorted(results) == list(range(N_MUTANTS)), "some mutants have no outcome"

    table = collections.Counter(r["outcome"] for r in results.values())
    by_kind = collections.defaultdict(collections.Counter)
    for i, r in results.items():
        by_kind[KINDS[i % len(KINDS)]][r["outcome"]] += 1
    report = {
        "tried": N_MUTANTS,
        "refused": table["refused"],
        "loaded_and_correct": table["correct"],
        "bad": table["bad"],
        "by_kind": {k: dict(v) for k, v in by_kind.items()},
    }
    if os.environ.get("DTJIT_FUZZ_REPORT"):
        Path(os.environ["DTJIT_FUZZ_REPORT"]).write_text(json.dumps(report, indent=1))
    bad = [r for r in results.values() if r["outcome"] == "bad"]
    assert not bad, f"{len(bad)} bad mutants of {N_MUTANTS}; first ones:\n" + "\n".join(
        f"mutant {r['id']} (base {base_files[mutants[r['id']][1]]['name']}): {r['detail']}"
        for r in bad[:8]
    )
    # Not vacuous: every kind of mutation has mutants refused, and many mutants load.
    assert all(counts["refused"] > 0 for counts in by_kind.values()), report
    assert table["correct"] >= N_MUTANTS // 10, report
