"""Child process of the model-file fuzz test: load mutants, judge each, report one line each.

Reads a JSON job from stdin: ``{"bases": [{"model": path, "probe": path}], "mutants":
[[id, base, seed], ...], "scratch": path}``. For each mutant it prints ``START id`` before
touching it and ``{"id": ..., "outcome": ..., "detail": ...}`` after, flushing both, so the
parent knows which mutant was running if this process dies (a segfault, the memory limit)
or hangs. Outcomes: ``refused`` (TreeFormatError), ``correct`` (loaded, and every call
agrees with a plain Python walk of the loaded arrays), ``bad`` (anything else).
"""

from __future__ import annotations

import json
import sys
import traceback

import numpy as np
from _model_file_mutants import mutant, walk

import dtjit

UNSEEN = "\u0000a value no model file holds"


def make_probe(model, base: np.ndarray, seed: int):
    """Rows the loaded model accepts, and the same rows as the float32 codes the tree reads.

    Numeric columns come from the base model's probe (NaN included), padded with random
    columns if the mutant declares more features. Categorical columns get codes 0 .. 69
    (some beyond the categories, some NaN); a column mapped from values gets the category
    at that code, or a value never seen. Mapped columns need a DataFrame.
    """
    rng = np.random.default_rng(seed)
    n_rows, width = base.shape[0], model.n_features_in_
    rows = np.zeros((n_rows, width), dtype=np.float32)
    rows[:, : min(width, base.shape[1])] = base[:, :width]
    if width > base.shape[1]:
        rows[:, base.shape[1] :] = rng.normal(size=(n_rows, width - base.shape[1]))
    columns: dict[int, np.ndarray] = {}
    for f, cats, mapped in zip(
        model.categorical_features_, model.categories_, model.categories_from_values_,
        strict=True,
    ):  # fmt: skip
        codes = rng.integers(0, 70, size=n_rows).astype(np.float32)
        codes[rng.random(n_rows) < 0.1] = np.nan
        if mapped:
            values = np.empty(n_rows, dtype=object)
            for i, c in enumerate(codes):
                values[i] = None if np.isnan(c) else cats[int(c)] if c < len(cats) else UNSEEN
            columns[int(f)] = values
            codes[codes >= len(cats)] = np.nan  # unseen values are missing
        rows[:, int(f)] = codes
    if not columns:
        return rows, rows
    import pandas as pd

    names = getattr(model, "feature_names_in_", [f"x{f}" for f in range(width)])
    frame = pd.DataFrame({f: columns.get(f, rows[:, f]) for f in range(width)})
    frame.columns = [str(n) for n in names]  # as loaded: duplicates included
    return frame, rows


def judge(model, base: np.ndarray, seed: int) -> str | None:
    """Return None when every call agrees with the walk, else what disagreed."""
    tree = model.tree_
    probe, rows = make_probe(model, base, seed)
    leaves = np.array([walk(tree, row) for row in rows], dtype=np.intp)
    if not np.array_equal(model.apply(probe), leaves):
        return "apply disagrees with the walk"
    value = tree.value[leaves]
    if hasattr(model, "classes_"):
        per_output = [model.classes_] if model.n_outputs_ == 1 else model.classes_
        expected = np.column_stack(
            [
                np.asarray(classes, dtype=object)[np.argmax(value[:, o, : len(classes)], axis=1)]
                for o, classes in enumerate(per_output)
            ]
        )
        got = np.asarray(model.predict(probe), dtype=object).reshape(len(leaves), -1)
        if not (got == expected).all():
            return "predict disagrees with the walk"
        proba = model.predict_proba(probe)
        proba = [proba] if model.n_outputs_ == 1 else proba
        for o, (p, classes) in enumerate(zip(proba, per_output, strict=True)):
            if not np.array_equal(p, value[:, o, : len(classes)]):
                return f"predict_proba of output {o} disagrees with the walk"
    elif not np.array_equal(model.predict(probe).reshape(len(leaves), -1), value[:, :, 0]):
        return "predict disagrees with the walk"
    importances = model.feature_importances_
    if importances.shape != (tree.n_features,) or not np.isfinite(importances).all():
        return f"feature_importances_ is not n_features finite numbers: {importances!r}"
    if model.n_outputs_ == 1:  # the exports draw single-output trees only (documented)
        dtjit.export_text(model)
        dtjit.export_rules(model)
        json.loads(dtjit.to_json(model))
    return None


def main() -> None:
    job = json.load(sys.stdin)
    bases = []
    for base in job["bases"]:
        with open(base["model"], "rb") as f:
            raw = f.read()
        bases.append((raw, np.load(base["probe"])))
    scratch = job["scratch"]
    for mutant_id, base, seed in job["mutants"]:
        print(f"START {mutant_id}", flush=True)
        raw, probe = bases[base]
        description, data = mutant(raw, seed)
        with open(scratch, "wb") as f:
            f.write(data)
        outcome, detail = "correct", description
        try:
            model = dtjit.load(scratch)
        except dtjit.TreeFormatError as exc:
            outcome, detail = "refused", str(exc)[:300]
        except BaseException as exc:
            outcome, detail = "bad", f"{description}: load raised {type(exc).__name__}: {exc}"
        else:
            try:
                wrong = judge(model, probe, seed)
            except BaseException as exc:
                tail = traceback.format_exc(limit=-3)
                wrong = f"raised {type(exc).__name__}: {str(exc)[:300]}\n{tail}"
            if wrong is not None:
                outcome, detail = "bad", f"{description}: {wrong}"
        print(json.dumps({"id": mutant_id, "outcome": outcome, "detail": detail[:2000]}),
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
