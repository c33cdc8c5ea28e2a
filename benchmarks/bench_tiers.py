"""Tier benchmark: where dtjit's exact and histogram fits take the accelerated tier, and what
the choice costs or saves on fits below 65,536 rows.

The accelerated tier (the block and screened sweeps, the histogram's row sweeps) compiles a
specialisation of its own, so a small fit runs the plain tier, whose general sweeps score a
cut in O(classes). ``dtjit.engine.grow.takes_accelerators`` sends a smaller classification
fit to the accelerated tier when rows x features x classes (entropy weighted) is large.
This benchmark times, per case, the tier dtjit chooses, each tier forced, and scikit-learn.

Data: ``make_classification`` (``_common.classification_data``: 20 features, 10
informative, float32, seed 0) at each case's rows and classes; full depth,
``random_state=0``, ``n_jobs=1``.

Method: each contender is warmed up on a slice (compilation is not timed), then the runs
are interleaved (``_common.run_interleaved``) and the median wall time reported. The three
dtjit timings must grow one tree (checked). A tier is forced by moving the module's
thresholds for the duration of a fit.

Results: ``benchmarks/results/tiers.json`` and ``tiers.md``.

Usage::

    .venv/bin/python benchmarks/bench_tiers.py            # about five minutes
    .venv/bin/python benchmarks/bench_tiers.py --quick    # does it work?
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from _common import RESULTS_DIR, classification_data, log, publish, run_interleaved

# rows, classes, criterion, splitter
CASES = [
    (5_000, 3, "gini", "best"),
    (5_000, 50, "entropy", "best"),
    (20_000, 3, "gini", "best"),
    (20_000, 10, "gini", "best"),
    (20_000, 10, "entropy", "best"),
    (20_000, 300, "gini", "best"),
    (60_000, 3, "gini", "best"),
    (60_000, 50, "gini", "best"),
    (60_000, 10, "entropy", "best"),
    (20_000, 50, "gini", "hist"),
    (20_000, 10, "entropy", "hist"),
    (60_000, 50, "gini", "hist"),
]
QUICK_CASES = [(2_000, 3, "gini", "best"), (2_000, 50, "entropy", "best"),
               (2_000, 50, "gini", "hist")]  # fmt: skip
WARMUP_ROWS = 500


@contextlib.contextmanager
def forced_tier(accelerated: bool) -> Iterator[None]:
    """Send every fit to one tier: thresholds of 0 (accelerated) or out of reach (plain)."""
    from dtjit.engine import grow

    saved = grow.ACCELERATE_MIN_ROWS, grow.ACCELERATE_MIN_WORK
    grow.ACCELERATE_MIN_ROWS = grow.ACCELERATE_MIN_WORK = 0 if accelerated else 2**62
    try:
        yield
    finally:
        grow.ACCELERATE_MIN_ROWS, grow.ACCELERATE_MIN_WORK = saved


def chosen_tier(n_samples: int, n_classes: int, criterion: str, splitter: str) -> str:
    """The tier dtjit picks for such a fit (unit weights)."""
    from dtjit.engine.grow import takes_accelerators
    from dtjit.engine.jit import CRITERION_CODES

    accelerated = takes_accelerators(
        n_samples, 20, n_classes, CRITERION_CODES[criterion], True, splitter == "hist"
    )
    return "accelerated" if accelerated else "plain"


def run_case(n_samples: int, n_classes: int, criterion: str, splitter: str,
             repeats: int) -> dict[str, Any]:  # fmt: skip
    from sklearn.tree import DecisionTreeClassifier

    import dtjit

    X, y = classification_data(n_samples, n_classes)

    def dtjit_fit(tier: str | None, rows: int = n_samples) -> Any:
        model = dtjit.DecisionTreeClassifier(criterion=criterion, splitter=splitter,
                                             random_state=0)  # fmt: skip
        if tier is None:
            return model.fit(X[:rows], y[:rows])
        with forced_tier(tier == "accelerated"):
            return model.fit(X[:rows], y[:rows])

    def sklearn_fit(rows: int = n_samples) -> Any:
        return DecisionTreeClassifier(criterion=criterion, random_state=0).fit(X[:rows], y[:rows])

    tasks = {
        "chosen": lambda: dtjit_fit(None),
        "plain": lambda: dtjit_fit("plain"),
        "accelerated": lambda: dtjit_fit("accelerated"),
        "sklearn": sklearn_fit,
    }
    for tier in ("plain", "accelerated"):  # compile both tiers, untimed
        dtjit_fit(tier, WARMUP_ROWS)
    sklearn_fit(WARMUP_ROWS)
    times, last = run_interleaved(tasks, dict.fromkeys(tasks, repeats))
    medians = {name: statistics.median(t) for name, t in times.items()}
    trees = [last[name].tree_ for name in ("chosen", "plain", "accelerated")]
    same = all(
        np.array_equal(getattr(trees[0], a), getattr(t, a))
        for t in trees[1:]
        for a in ("feature", "threshold", "children_left", "value")
    )
    return {
        "rows": n_samples, "classes": n_classes, "criterion": criterion, "splitter": splitter,
        "tier": chosen_tier(n_samples, n_classes, criterion, splitter),
        "seconds": medians, "repeats": repeats, "same_tree": bool(same),
        "nodes": int(trees[0].node_count),
    }  # fmt: skip


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Plain and accelerated tiers below 65,536 rows",
        "",
        f"Command: `bench_tiers.py{' --quick' if report['quick'] else ''}`; "
        f"make_classification, 20 features, full depth, one thread; median wall seconds of "
        f"{report['repeats']} interleaved runs.",
        "",
        "| rows | classes | criterion | splitter | dtjit's tier | chosen (s) | plain (s) | "
        "accelerated (s) | scikit-learn (s) | chosen / accelerated | plain / accelerated | "
        "scikit-learn / chosen | same tree |",
        "|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in report["cases"]:
        s = c["seconds"]
        lines.append(
            f"| {c['rows']:,} | {c['classes']} | {c['criterion']} | {c['splitter']} | "
            f"{c['tier']} | {s['chosen']:.3f} | {s['plain']:.3f} | {s['accelerated']:.3f} | "
            f"{s['sklearn']:.3f} | {s['chosen'] / s['accelerated']:.2f} | "
            f"{s['plain'] / s['accelerated']:.2f} | {s['sklearn'] / s['chosen']:.1f} | "
            f"{'yes' if c['same_tree'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small cases, one repeat")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    repeats = 1 if args.quick else args.repeats
    cases = []
    for case in QUICK_CASES if args.quick else CASES:
        log(f"case {case}")
        cases.append(run_case(*case, repeats))
    name = "tiers-quick" if args.quick else "tiers"
    report = {"quick": args.quick, "repeats": repeats, "cases": cases}
    publish(report, markdown, RESULTS_DIR / f"{name}.json", RESULTS_DIR / f"{name}.md", started)
    return 0 if all(c["same_tree"] for c in cases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
