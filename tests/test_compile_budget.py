"""Compile budget: the kernel specialisations each first use adds (issue 50), counted, not timed.

Every path of ``dtjit._first_use`` runs, in that order, in one fresh process on the normal
(warm) numba cache; after each, the signatures of every numba dispatcher defined in dtjit are
counted, and the path's count is what it added. A kernel loaded from the cache gets its
signature as one compiled does, so the count does not depend on the machine's speed, and
on a warm cache the process compiles nothing. Kernels called from other kernels count too:
a caller loaded from the cache loads them (``engine.kernel_calls``).
``benchmarks/bench_startup.py`` times the same paths cold.

To update the budgets after a deliberate change, run ``pytest tests/test_compile_budget.py
-s`` (it prints each path's count and kernels) and set :data:`BUDGETS` to the new count plus
a margin: the larger of 2 and 10 %.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numba
import pytest

from dtjit._first_use import first_uses, load_data

# Path key (dtjit._first_use) -> most kernel specialisations it may add to the paths before it:
# the count when the budget was set (in the comment) + the larger of 2 and 10 %.
BUDGETS = {
    "iris": 16,  # 14
    "regressor": 9,  # 7
    "hist": 14,  # 12
    "random": 7,  # 5
    "entropy": 2,  # 0
    "gain_ratio": 3,  # 1
    "poisson": 2,  # 0
    "absolute_error": 10,  # 8
    "nan": 2,  # 0
    "categorical": 12,  # 10
    "multi-output": 13,  # 11
    "many-classes": 8,  # 6
    "n_jobs": 7,  # 5
    "pruning": 4,  # 2
    "mdlp": 5,  # 3
    "decision_path": 3,  # 1
}

# What a plain small fit must not reach (accelerators of large fits, other searches):
# (module.)name fragments matched against the kernels the iris path entered.
NOT_FOR_A_SMALL_FIT = (
    "dtjit.engine.sweep_two_valued.",
    "dtjit.engine.sweep_hist.",
    "dtjit.engine.sweep_categorical.",
    "dtjit.engine.gain_ratio.",
    "dtjit.engine.sweep_multioutput.",
    "dtjit.engine.sweep_absolute_error.",
    "in_blocks",
    "sort_columns",  # numpy presorts small inputs
    "draw_candidates",  # nothing to draw without max_features or splitter="random"
)

CHILD = textwrap.dedent(
    """
    import json, sys
    from numba.core.registry import CPUDispatcher
    from dtjit._first_use import first_uses, load_data

    def signatures():
        counts = {}
        for name, module in list(sys.modules.items()):
            if name != "dtjit" and not name.startswith("dtjit."):
                continue
            for attr, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher) and obj.__module__ == name:
                    counts[f"{name}.{attr}"] = len(obj.signatures)
        return counts

    rows = []
    for path in first_uses(load_data()):
        before = signatures()
        path.run()
        added = {k: n - before.get(k, 0) for k, n in signatures().items()
                 if n > before.get(k, 0)}
        rows.append({"key": path.key, "added": added})
    print(json.dumps(rows))
    """
)


def run_paths() -> list[dict]:
    """Run every path in a fresh process on the normal cache; what each added, in order."""
    # The extra lanes' switches change what compiles; this counts the default build.
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_BOUNDSCHECK", "NUMBA_DISABLE_JIT")}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", CHILD], env=env, capture_output=True, text=True,
        timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def added() -> dict[str, dict[str, int]]:
    rows = run_paths()  # the same counts on a cold cache, only slower
    for row in rows:
        kernels = ", ".join(f"{k}[{n}]" if n > 1 else k for k, n in sorted(row["added"].items()))
        print(f"{row['key']}: {sum(row['added'].values())} ({kernels})")
    return {row["key"]: row["added"] for row in rows}


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's JIT is off: nothing compiles")
def test_every_path_has_a_budget() -> None:
    assert [p.key for p in first_uses(load_data())] == list(BUDGETS)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's JIT is off: nothing compiles")
@pytest.mark.parametrize("key", list(BUDGETS))
def test_path_stays_within_its_budget(added: dict[str, dict[str, int]], key: str) -> None:
    kernels = added[key]
    assert sum(kernels.values()) <= BUDGETS[key], (
        f"{key} added {sum(kernels.values())} kernel specialisations, budget {BUDGETS[key]}: "
        f"{kernels}"
    )


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's JIT is off: nothing compiles")
def test_a_small_plain_fit_enters_no_accelerator(added: dict[str, dict[str, int]]) -> None:
    assert added["iris"], "no kernel counted: the count itself is broken"
    reached = [k for k in added["iris"] if any(part in k for part in NOT_FOR_A_SMALL_FIT)]
    assert not reached, f"the plain iris fit + predict reached {reached}"
