"""Kernel hygiene: decorator flags, and the two extra lanes of the style guide.

- Every compiled function is cached on disk and never uses fastmath (NaN is data here).
- ``NUMBA_DISABLE_JIT=1``: the kernels run as plain Python on tiny data and must build the
  very same trees as the compiled code (this also exercises kernel code under coverage).
- ``NUMBA_BOUNDSCHECK=1``: fits and predictions over many parameter combinations with
  bounds checking compiled in (fresh cache directory, so no unchecked code is reused); any
  out-of-range index raises instead of reading garbage, on threads too.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from _kernel_entry import via_kernel
from _reference import FEATURE_THRESHOLD, entropy, gini
from numba.core.registry import CPUDispatcher

import dtjit
from dtjit.engine import shared_best, sweep_exact, work_queue
from dtjit.engine.compile_pipeline import KernelCompiler
from dtjit.engine.jit import CalleeKernel
from dtjit.engine.kernel_calls import CALLEE_ONLY
from dtjit.engine.threads import even_ranges, run_concurrently
from dtjit.predict import walk as _predict

# Every module of the package, so a new kernel module is checked without being listed here.
KERNEL_MODULES = [
    importlib.import_module(info.name)
    for info in pkgutil.walk_packages(dtjit.__path__, "dtjit.")
    if not info.name.endswith("__main__")
]
assert {"dtjit.engine.grow", "dtjit.predict.walk"} <= {m.__name__ for m in KERNEL_MODULES}

# The workload run in the subprocess lanes; it prints the trees as JSON.
LANE_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    import dtjit
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(80, 3)).astype(np.float32)
    X[:, 2] += rng.normal(scale=0.1, size=80).astype(np.float32)
    y = (X[:, 0] + X[:, 2] > 4).astype(int) + (X[:, 1] > 3)
    yr = X[:, 0] * 2.0 - X[:, 2]
    w = rng.integers(1, 3, size=80).astype(float)
    Xn = X.copy()
    Xn[::9, 1] = np.nan
    C, R = dtjit.DecisionTreeClassifier, dtjit.DecisionTreeRegressor
    X01 = np.c_[X, X[:, 0] > 2].astype(np.float32)  # a 0/1 column: the two-valued search
    fits = [(est, X) for est in (
        C().fit(X, y),
        C(criterion="entropy", min_samples_leaf=3).fit(X, y, w),
        C(max_leaf_nodes=5).fit(X, y),
        C(max_features=2, random_state=0).fit(X, y),
        R(max_depth=3).fit(X, yr),
        R(max_leaf_nodes=4, min_weight_fraction_leaf=0.05).fit(X, yr, w),
        C(splitter="random", random_state=0).fit(X, y, w),
        R(splitter="random", max_features=2, random_state=1).fit(X, yr),
        C(splitter="hist", max_bins=4).fit(X, y),
        C(splitter="hist", criterion="entropy", max_features=2, random_state=0).fit(X, y, w),
        R(splitter="hist", max_bins=3, max_leaf_nodes=6).fit(X, yr, w),
        C(min_samples_leaf=2).fit(Xn, np.c_[y, X[:, 1] > 2], w),
        R(splitter="random", random_state=2).fit(Xn, np.c_[yr, X[:, 0]]),
        C(ccp_alpha=0.02).fit(X, y),
    )]
    fits += [
        (C().fit(X01, y), X01),
        (C(max_leaf_nodes=6).fit(X01, y, w), X01),
    ]
    # Categorical columns (subset searches, bitsets, categorical routing) and the other
    # criteria, with NaN: column 1 holds codes 0-4, and NaN in Xn.
    for splitter in ("best", "hist"):
        fits += [
            (C(splitter=splitter, categorical_features=[1]).fit(Xn, y), Xn),
            (C(splitter=splitter, categorical_features=[0, 1], max_leaf_nodes=7).fit(X, y, w), X),
            (R(splitter=splitter, categorical_features=[1]).fit(Xn, yr), Xn),
            (C(splitter=splitter, criterion="gain_ratio", categorical_features=[1]).fit(Xn, y), Xn),
            (R(splitter=splitter, criterion="poisson").fit(Xn, yr - yr.min() + 1, w), Xn),
        ]
    for splitter in ("best", "random"):  # absolute_error has no histogram search
        model = R(splitter=splitter, criterion="absolute_error", max_depth=4, random_state=0)
        fits.append((model.fit(Xn, yr, w), Xn))
    # A chain 100 levels deep: predict walks it in several phases, compacting the rows
    # still walking between them. When all of them walk on, the compaction wrote one slot
    # past its array: routed here, the rows whose leaves are the deepest.
    Xc = np.arange(101, dtype=np.float32).reshape(-1, 1)
    chain = C().fit(Xc, np.arange(101) % 2)
    leaf_depth = chain.tree_.node_depth[chain.apply(Xc)]
    fits.append((chain, Xc[leaf_depth >= leaf_depth.max() - 4]))
    out = []
    for est, X_fit in fits:
        arrays = {k: v.tolist() for k, v in est.tree_.to_arrays().items()}
        arrays["apply"] = est.apply(X_fit).tolist()
        arrays["path_nnz"] = int(est.decision_path(X_fit).nnz)
        out.append(arrays)
    path = C().cost_complexity_pruning_path(X, y, w)
    out.append({"ccp_alphas": path.ccp_alphas.tolist(), "impurities": path.impurities.tolist()})
    if os.environ.get("NUMBA_BOUNDSCHECK"):
        # Big enough for every threaded step (presort, sweep, partition). The depth limits
        # keep the levels that run threaded and a few serial ones below them (the deeper
        # levels hold less than PARALLEL_MIN_WORK and run the serial steps again); the
        # histogram fits' sweeps of nodes without a stored histogram run threaded only
        # from about depth 7, so the categorical one goes to 10.
        Xb = rng.normal(size=(30_000, 8)).astype(np.float32)
        yb = (Xb[:, 0] + Xb[:, 1] > 0).astype(int)
        for est in (C(n_jobs=2, max_depth=12),
                    R(n_jobs=2, max_leaf_nodes=200),
                    C(n_jobs=2, splitter="random"),
                    C(n_jobs=2, splitter="hist"),
                    R(n_jobs=2, splitter="hist", max_leaf_nodes=300),
                    R(n_jobs=2, criterion="absolute_error", max_depth=3),
                    C(n_jobs=2, criterion="gain_ratio", max_depth=8)):
            est.fit(Xb, yb).predict(Xb)
        C(n_jobs=2, max_depth=4).fit(Xb, np.c_[yb, Xb[:, 2] > 0])
        # Codes in columns 0-4 (5 x 30,000 rows: the threaded subset search), NaN, and a 0/1
        # column 7 without NaN that the tree splits on (the class, a tenth of it flipped: the
        # threaded two-valued search and the kernels of a chosen two-valued split).
        Xc = Xb.copy()
        Xc[:, :5] = rng.integers(0, 12, size=(len(Xc), 5))
        Xc[rng.random(Xc.shape) < 0.02] = np.nan
        Xc[:, 7] = yb != (rng.random(len(Xc)) < 0.1)
        for splitter, depth in (("best", 6), ("hist", 10)):
            model = C(n_jobs=2, splitter=splitter, categorical_features=[0, 1, 2, 3, 4],
                      max_depth=depth)  # fmt: skip
            model.fit(Xc, yb).predict(Xc)
        # Above the binning sample size: the sampled path and its full-column fall-back.
        Xs = rng.integers(0, 6, size=(210_000, 2)).astype(np.float32)
        Xs[:2, 0] = 2.5
        C(splitter="hist", max_depth=3, n_jobs=2).fit(Xs, Xs[:, 0] > 2)
    json.dump(out, sys.stdout)
    """
)


# The bounds-checked lane's environment. NUMBA_OPT=0: the lane checks indexing, not speed, and
# LLVM's optimisation passes were a quarter of its compile time (157 s against 204 s on a cold
# cache, the same trees, for the workload before categorical columns and the other criteria
# joined it); the checks are inserted before LLVM runs.
BOUNDS_CHECKED_LANE = {"NUMBA_BOUNDSCHECK": "1", "NUMBA_OPT": "0"}

# Kernels reading one element past their input: by indexing, and through the shared best's
# atomic accesses (``shared_best``: no numba indexing, its own checks).
KERNEL_READING_PAST_THE_END = textwrap.dedent(
    """
    from dtjit.engine.jit import kernel
    from dtjit.engine.shared_best import new_shared_best, offer_best, read_best

    @kernel
    def shifted_copy(values, out):
        for chunk in range(out.shape[0]):
            out[chunk] = values[chunk + 1]

    @kernel
    def shifted_offer(n):
        best = new_shared_best(n)
        for chunk in range(n):
            offer_best(best, chunk + 1, read_best(best, chunk))
    """
)

# The bounds-checked lane's process first calls them (from its folder): each must raise,
# and their messages go to past_the_end.json, before LANE_SCRIPT runs in the same process.
PAST_THE_END_CHECK = textwrap.dedent(
    """
    import json
    import numpy as np
    import past_the_end
    errors = []
    for call in (
        lambda: past_the_end.shifted_copy(np.zeros(4), np.zeros(4)),
        lambda: past_the_end.shifted_offer(4),
    ):
        try:
            call()
        except IndexError as error:
            errors.append(str(error))
        else:
            errors.append("no error")
    with open("past_the_end.json", "w") as file:
        json.dump(errors, file)
    """
)


def _dispatchers():
    for module in KERNEL_MODULES:
        for name, obj in vars(module).items():
            # Defined here, not imported from another kernel module.
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj


def test_every_kernel_is_cached_serial_never_fastmath_without_c_entry_on_our_pipeline():
    found = list(_dispatchers())
    assert len({name.rsplit(".", 1)[0] for name, _ in found}) >= 15  # the kernel modules
    same_options = dict(found[0][1].targetoptions)
    same_options.pop("inline", None)
    for name, dispatcher in found:
        options = dispatcher.targetoptions
        assert options.get("cache") is True or dispatcher._cache.__class__.__name__ != (
            "NullCache"
        ), f"{name} is not cached"
        assert dispatcher._cache.__class__.__name__ != "NullCache", f"{name} is not cached"
        assert not options.get("fastmath"), f"{name} enables fastmath"
        # Threads run the serial kernels (``threads``): a parallel twin compiles again.
        assert not options.get("parallel"), f"{name} is a parallel kernel"
        # Nothing calls a kernel by address: the C entry would only cost compile time.
        assert options.get("no_cfunc_wrapper") is True, f"{name} emits a C entry point"
        # Inline helpers' front ends built once per process (``compile_pipeline``).
        assert dispatcher._compiler.pipeline_class is KernelCompiler, f"{name}: numba's pipeline"
        # A kernel only kernels call has no Python entry, and says so if called from Python.
        # Its lowering leaves the wrapper out; its flags are every kernel's, which key
        # numba's cache of its own overloads (a flag of its own compiled them again).
        callee_only = isinstance(dispatcher, CalleeKernel)
        assert getattr(dispatcher.py_func, CALLEE_ONLY, False) is callee_only, name
        assert {k: v for k, v in options.items() if k != "inline"} == same_options, name


def _kernel_references(tree):
    """Yield (name, in_kernel) for each name or attribute a module's code refers to."""

    def is_compiled(function):
        return any(ast.unparse(d).endswith("kernel") for d in function.decorator_list)

    def walk(node, in_kernel):
        for child in ast.iter_child_nodes(node):
            inside = in_kernel
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside = is_compiled(child)
            if isinstance(child, ast.Name):
                yield child.id, inside
            elif isinstance(child, ast.Attribute):
                yield child.attr, inside
            yield from walk(child, inside)

    yield from walk(tree, False)


def test_no_python_code_of_dtjit_calls_a_callee_kernel():
    # A callee kernel called from Python raises (``CalleeKernel``); this finds such a call
    # before a fit reaches it: no function outside a kernel, and no module-level code, of
    # dtjit names one. (By name: a name shared with a kernel elsewhere errs on the safe side.)
    callee = {name.rsplit(".", 1)[1] for name, d in _dispatchers() if isinstance(d, CalleeKernel)}
    assert len(callee) >= 20
    named_by_python = set()
    for module in KERNEL_MODULES:
        with open(module.__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        named_by_python |= {
            f"{module.__name__}: {name}"
            for name, in_kernel in _kernel_references(tree)
            if name in callee and not in_kernel
        }
    assert not named_by_python


def _start_lane(env_extra, tmp_path, script=LANE_SCRIPT):
    """Run ``script`` in a fresh interpreter with ``env_extra`` set, in ``tmp_path``."""
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )


def _lane_output(result):
    """The JSON a lane's process printed, once it ended well."""
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _run_lane(env_extra, tmp_path, script=LANE_SCRIPT):
    """Run ``script`` as :func:`_start_lane` does; return its JSON output (tests/test_mdlp.py)."""
    return _lane_output(_start_lane(env_extra, tmp_path, script))


@pytest.fixture(scope="module")
def bounds_checked_lane(tmp_path_factory):
    """The bounds-checked lane's process, run once for its two tests: PAST_THE_END_CHECK,
    then LANE_SCRIPT (a process of its own each imported dtjit and compiled again).

    Returns the folder it ran in and the ``subprocess.CompletedProcess``.
    """
    folder = tmp_path_factory.mktemp("bounds_checked_lane")
    (folder / "past_the_end.py").write_text(KERNEL_READING_PAST_THE_END)
    env = {**BOUNDS_CHECKED_LANE, "NUMBA_CACHE_DIR": str(folder / "cache")}
    return folder, _start_lane(env, folder, PAST_THE_END_CHECK + LANE_SCRIPT)


def _run_here():
    namespace: dict = {}
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(LANE_SCRIPT, namespace)
    return json.loads(buffer.getvalue())


def _assert_same(lane, here):
    assert len(lane) == len(here)
    for k, (a, b) in enumerate(zip(lane, here, strict=True)):
        for name in b:
            np.testing.assert_allclose(
                np.asarray(a[name], dtype=float),
                np.asarray(b[name], dtype=float),
                rtol=1e-12,
                err_msg=f"fit {k}, array {name}",
            )


@pytest.mark.slow
def test_kernels_run_as_python_and_agree(tmp_path):
    lane = _run_lane({"NUMBA_DISABLE_JIT": "1"}, tmp_path)
    _assert_same(lane, _run_here())


@pytest.mark.slow
def test_bounds_checked_kernels(bounds_checked_lane):
    _, result = bounds_checked_lane
    _assert_same(_lane_output(result), _run_here())


@pytest.mark.slow  # the lane's process, shared with test_bounds_checked_kernels
def test_bounds_checked_lane_raises_past_the_end(bounds_checked_lane):
    """An index past the end raises in the lane, also through the shared best's atomic
    accesses (``shared_best``: no numba indexing)."""
    folder, result = bounds_checked_lane
    errors = folder / "past_the_end.json"
    assert errors.is_file(), result.stderr[-3000:]
    assert json.loads(errors.read_text()) == ["index is out of bounds"] * 2


def test_one_signature_per_prediction_kernel_across_layouts():
    rng = np.random.default_rng(1)
    n_rows = _predict.PLAIN_WALK_MAX_VALUES // 4 + 1  # past the plain walk: the packed layouts
    X = np.round(rng.normal(size=(n_rows, 4)) * 4)  # integer-valued: the int64 copy is lossless
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = dtjit.DecisionTreeClassifier(max_depth=4).fit(X, y)
    ro = X.astype(np.float32)
    ro.setflags(write=False)
    expected = est.predict(X)
    for variant in (X, X.astype(np.float32), np.asfortranarray(X), X.astype(np.int64), ro):
        np.testing.assert_array_equal(est.predict(variant), expected)
    # Other tests may have compiled the wide node layout too; count the compact one only.
    compact = numba.from_dtype(_predict.COMPACT_NODE_DTYPE)
    # The last argument is the NaN walk's switch (_predict.route_block): one signature for
    # each value the session used, on purpose; so it is left out of the count.
    signatures = _predict.route_rows_serial.signatures
    compact_signatures = {s[:-1] for s in signatures if s[1].dtype == compact}
    assert numba.config.DISABLE_JIT or len(compact_signatures) == 1


def _fitted_tree(seed: int, n_features: int = 5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3000, n_features)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    return dtjit.DecisionTreeClassifier(max_depth=9, random_state=0).fit(X, y).tree_


def _reference_tree(tree):
    return {name: getattr(tree, name) for name in ("feature", "threshold", "left", "right",
                                                   "missing_left")}  # fmt: skip


@pytest.mark.parametrize("wide", [False, True], ids=["compact", "wide"])
@pytest.mark.parametrize("n_rows", [0, 1, 7, 8, 9, 1000, 50_001])
def test_routing_matches_reference_including_nan(n_rows, wide):
    """The lock-step traversal (8 rows in flight, packed nodes) equals the plain walk.

    NaN never reaches the kernel through the estimators yet (it is rejected), so the
    kernels' NaN routing (``missing_left``) is checked here directly, in both layouts.
    """
    from _reference import reference_apply

    tree = _fitted_tree(n_rows)
    rng = np.random.default_rng(n_rows)
    Xq = rng.normal(size=(n_rows, 5)).astype(np.float32)
    Xq[rng.random(Xq.shape) < 0.1] = np.nan
    expected = reference_apply(_reference_tree(tree), Xq)
    packed = _predict.pack_nodes(
        tree.feature, tree.threshold, tree.left, tree.missing_left, tree.n_features, wide=wide
    )
    assert packed.nodes.dtype == (_predict.WIDE_NODE_DTYPE if wide else _predict.COMPACT_NODE_DTYPE)
    # Three int64 words per node, none of them the node id: each row gets its leaf's row.
    payload = np.arange(tree.node_count * 3, dtype=np.int64).reshape(-1, 3) * 7 + 1
    has_nan = bool(np.isnan(Xq).any())
    for cuts in ([0, n_rows], [0, n_rows // 3, n_rows]):  # one call, or two threads' shares
        out = np.full((n_rows, 3), -1, dtype=np.int64)
        found = max(
            _predict.route_rows(Xq[a:b], packed, payload, out[a:b], True)
            for a, b in zip(cuts[:-1], cuts[1:], strict=True)
        )
        assert found == (_predict.ROWS_HAVE_NAN if has_nan else _predict.ROWS_FINITE)
        np.testing.assert_array_equal(out, payload[expected])
        indptr = np.empty(n_rows + 1, dtype=np.int64)
        indices = np.empty(n_rows * (tree.max_depth + 1), dtype=np.int64)
        found, nnz = _predict.decision_path_rows(Xq, *packed, tree.max_depth + 1, indptr, indices)
        assert found == (_predict.ROWS_HAVE_NAN if has_nan else _predict.ROWS_FINITE)
        np.testing.assert_array_equal(indices[indptr[1:] - 1], expected)  # paths end at leaves


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("row", [0, 7, 12_345, 19_999])
def test_kernels_report_nan_and_infinity_wherever_they_are(bad, row):
    tree = _fitted_tree(3)
    rng = np.random.default_rng(4)
    Xq = rng.normal(size=(20_000, 5)).astype(np.float32)
    Xq[row, row % 5] = bad
    out = np.empty((len(Xq), 1), dtype=np.int64)
    ids = tree.node_ids().reshape(-1, 1)
    found = _predict.route_rows_serial(Xq, *tree.packed_nodes(), ids, out, False, None)
    expected = _predict.ROWS_HAVE_NAN if np.isnan(bad) else _predict.ROWS_HAVE_INF
    assert found == expected
    Xq[row, row % 5] = 1.0
    found = _predict.route_rows_serial(Xq, *tree.packed_nodes(), ids, out, False, None)
    assert found == _predict.ROWS_FINITE


def test_infinity_wins_over_nan_in_the_report():
    tree = _fitted_tree(3)
    Xq = np.zeros((100, 5), dtype=np.float32)
    Xq[10, 1], Xq[90, 2] = np.nan, np.inf
    out = np.empty((100, 1), dtype=np.int64)
    ids = tree.node_ids().reshape(-1, 1)
    found = _predict.route_rows(Xq, tree.packed_nodes(), ids, out, True)
    assert found == _predict.ROWS_HAVE_INF


def test_thresholds_rounded_down_to_float32_keep_comparisons_exact():
    rng = np.random.default_rng(0)
    t = np.concatenate(
        [
            rng.normal(size=10_000) * 10.0 ** rng.integers(-40, 40, size=10_000),
            [0.0, -0.0, 1e-46, -1e-46, 3.5e38, -3.5e38, 1e300, -1e300, np.inf, -np.inf],
        ]
    )
    t32 = _predict.round_down_to_float32(t)
    assert t32.dtype == np.float32
    assert (t32.astype(np.float64) <= t).all()
    # The next float32 up is above t: no float32 x can fall between t32 and t.
    with np.errstate(over="ignore"):  # FLT_MAX steps up to inf, which is above t too
        above = np.nextafter(t32, np.float32(np.inf)).astype(np.float64)
    assert (above[np.isfinite(t)] > t[np.isfinite(t)]).all()


def test_wide_layout_is_chosen_when_the_compact_one_cannot_hold_the_tree():
    n_nodes = 2049
    left = np.full(n_nodes, -1, dtype=np.int32)
    left[: n_nodes // 2] = np.arange(1, n_nodes, 2)
    feature = np.zeros(n_nodes, dtype=np.int32)
    args = (feature, np.zeros(n_nodes), left, np.zeros(n_nodes, dtype=np.uint8))
    # 2**21 features need 21 bits, the nan bit 1, child ids up to 2048 need 12: 34 > 32.
    assert _predict.pack_nodes(*args, 2**21).nodes.dtype == _predict.WIDE_NODE_DTYPE
    assert _predict.pack_nodes(*args, 2**19).nodes.dtype == _predict.COMPACT_NODE_DTYPE


@pytest.mark.parametrize("skipped", [[], [1, 4]])
@pytest.mark.parametrize("kernel", ["serial", "parallel"])
def test_radix_presort_equals_stable_argsort(kernel, skipped):
    """The LSD radix presort is numpy's stable argsort: ties keep sample order.

    Tie-heavy columns, signed zeros, infinities, denormals, float32 extremes and NaN. Skipped
    columns (two-valued ones, in a fit) are not sorted, and the others are unaffected.
    Small integers leave radix digits constant, so the sort skips passes: columns 4, 5 and 6
    move their ids in 0, 2 and 1 of the three passes (an even and an odd count: the order
    ends in either buffer).
    """
    rng = np.random.default_rng(5)
    n = 20_000
    X = np.empty((n, 8), dtype=np.float32)
    X[:, 0] = rng.normal(size=n)
    X[:, 1] = rng.integers(-3, 4, size=n)  # many ties
    X[:, 2] = rng.choice(np.array([-0.0, 0.0, 1e-45, -1e-45, 3.4e38, -3.4e38], np.float32), n)
    X[:, 3] = rng.choice(np.array([np.inf, -np.inf, 1.0, -1.0], np.float32), n)
    X[:, 4] = 7.0  # constant
    X[:, 5] = rng.integers(0, 4000, size=n)  # the lowest 11 bits are zero
    X[:, 6] = 1024 + rng.integers(0, 256, size=n)  # only bits 13-20 vary
    X[:, 7] = np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 50, size=n))  # NaN last
    skip = np.isin(np.arange(8), skipped).astype(np.uint8)
    assert X.size >= sweep_exact.PARALLEL_MIN_WORK  # two threads do share the work
    idx, val = sweep_exact.presort(X, skip, 1 if kernel == "serial" else 2)
    for f in np.flatnonzero(skip == 0):
        expected = np.argsort(X[:, f], kind="stable")
        np.testing.assert_array_equal(idx[f], expected, err_msg=f"feature {f}")
        np.testing.assert_array_equal(val[f], X[expected, f])


@pytest.mark.parametrize("n", [1, 2, 37, 4095])
def test_small_inputs_are_presorted_by_numpy_exactly_as_by_the_radix_kernel(n):
    """Below ``PRESORT_KERNEL_MIN_ROWS`` rows numpy presorts: the same ids and the same value
    bits as the radix kernel (``-0.0`` stored as ``0.0``, every NaN, either sign, as one NaN
    and last), so the trees cannot tell the two apart."""
    assert n < sweep_exact.PRESORT_KERNEL_MIN_ROWS
    rng = np.random.default_rng(n)
    X = np.empty((n, 6), dtype=np.float32)
    X[:, 0] = rng.normal(size=n)
    X[:, 1] = rng.integers(-3, 4, size=n)
    X[:, 2] = rng.choice(np.array([-0.0, 0.0, 1e-45, -1e-45, 3.4e38, -3.4e38], np.float32), n)
    X[:, 3] = rng.choice(np.array([np.inf, -np.inf, 1.0, -1.0], np.float32), n)
    X[:, 4] = np.where(rng.random(n) < 0.3, -np.float32(np.nan), 1.0)
    X[:, 5] = np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 50, size=n))
    skip = np.array([0, 0, 0, 1, 0, 0], dtype=np.uint8)
    columns = np.flatnonzero(skip == 0).astype(np.int64)
    idx, val = sweep_exact.presort(X, skip, 1)
    kernel_idx = np.zeros((6, n), dtype=np.int32)
    kernel_val = np.zeros((6, n), dtype=np.float32)
    sweep_exact.copy_columns(X, columns, np.int64(0), np.int64(n), kernel_val)
    sweep_exact.sort_columns(columns, kernel_idx, kernel_val, np.zeros(1, dtype=np.int64))
    np.testing.assert_array_equal(idx[columns], kernel_idx[columns])
    assert val[columns].tobytes() == kernel_val[columns].tobytes()


@pytest.mark.parametrize("n_chunks", [None, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_sorted_codes_follow_the_sorted_ids(n_chunks, dtype):
    """One call (``None``) and blocks on threads against numpy's gather, uneven blocks included.

    Both output widths the estimator uses (one byte up to 256 classes, two past that).
    """
    rng = np.random.default_rng(2)
    idx = np.stack([rng.permutation(100) for _ in range(3)]).astype(np.int32)
    code = rng.integers(0, np.iinfo(dtype).max + 1, size=100).astype(np.int32)
    out = np.full(idx.shape, 9, dtype=dtype)
    skip = np.array([0, 1, 0], np.uint8)
    if n_chunks is None:
        sweep_exact.sorted_codes(idx, code, skip, 0, 100, out)
    else:  # blocks of positions on threads, as ``prepare`` runs them
        run_concurrently([
            functools.partial(sweep_exact.sorted_codes, idx, code, skip, first, stop, out)
            for first, stop in even_ranges(100, n_chunks)
        ])  # fmt: skip
    np.testing.assert_array_equal(out[[0, 2]], code[idx[[0, 2]]])
    assert (out[1] == 9).all()  # a skipped feature's row is left as it was


@pytest.mark.parametrize("per_sample_y", [True, False])
def test_renumbered_samples_keep_every_row_and_value(per_sample_y):
    """``renumber_samples`` against numpy: ids become positions of the row feature.

    Each (feature, position) names the same sample as before, through the new ids, and a
    sample's code, contribution, weight and target follow it; the row of a feature that is
    never partitioned (``UPKEEP_NEVER``) is not read or written. A classification ``y``
    (one unused entry) is returned as it is.
    """
    rng = np.random.default_rng(4)
    n = 200
    idx = np.stack([rng.permutation(n) for _ in range(4)]).astype(np.int32)
    idx[2] = -7  # not ids: a two-valued feature's row
    upkeep = np.array([0, 1, 2, 0], np.uint8)
    code = rng.integers(0, 5, n).astype(np.int32)
    contrib, weight = rng.random(n), rng.random(n)
    y = rng.random(n) if per_sample_y else np.zeros(1)
    before = idx.copy()
    new_code, new_contrib, new_weight, new_y = sweep_exact.renumber_samples(
        idx, np.int64(1), upkeep, code, contrib, weight, y
    )
    np.testing.assert_array_equal(idx[1], np.arange(n))  # the row feature's ids: positions
    assert (idx[2] == -7).all()
    for f in (0, 1, 3):
        np.testing.assert_array_equal(new_code[idx[f]], code[before[f]])
        np.testing.assert_array_equal(new_contrib[idx[f]], contrib[before[f]])
        np.testing.assert_array_equal(new_weight[idx[f]], weight[before[f]])
        if per_sample_y:
            np.testing.assert_array_equal(new_y[idx[f]], y[before[f]])
    if not per_sample_y:
        np.testing.assert_array_equal(new_y, y)


def test_sorted_codes_of_a_block_of_positions():
    idx = np.array([[3, 1, 0, 2]], np.int32)
    code = np.array([10, 11, 12, 13], np.int32)
    out = np.zeros((1, 4), np.uint16)
    sweep_exact.sorted_codes(idx, code, np.zeros(1, np.uint8), 1, 3, out)
    np.testing.assert_array_equal(out[0], [0, 11, 10, 0])


def _unit_sweep_reference(val, codes, n_classes, min_left, min_right, impurity=gini):
    """Score every cut between distinct values with scikit-learn's proxy; first max wins."""
    n = len(val)
    best = (-np.inf, n, 0.0)
    for r in range(1, n):
        if not val[r] > val[r - 1] + FEATURE_THRESHOLD:
            continue
        if r < min_left or n - r < min_right:
            continue
        w_left, w_right = float(r), float(n - r)
        impurity_left = impurity(np.bincount(codes[:r], minlength=n_classes), w_left)
        impurity_right = impurity(np.bincount(codes[r:], minlength=n_classes), w_right)
        proxy = -w_right * impurity_right - w_left * impurity_left
        if proxy > best[0]:
            best = (proxy, r, float(val[r - 1]) / 2.0 + float(val[r]) / 2.0)
    return best


@pytest.mark.parametrize("n_classes", [2, 7, 8])
def test_add_block_to_left_equals_row_by_row(n_classes):
    """A block moved at once leaves the counts and sums of squares of row-by-row moves."""
    rng = np.random.default_rng(n_classes)
    for trial in range(30):
        n = int(rng.integers(1, 256))
        codes = rng.integers(0, n_classes, size=n).astype(np.uint8)
        if trial % 3 == 0:
            codes[:] = codes[0]  # a block of one class: its lane reaches n (up to 255)
        start = rng.integers(0, 50, size=n_classes)
        total = start + np.bincount(codes, minlength=n_classes) + rng.integers(0, 50, n_classes)
        total = total.astype(np.float64)
        sq_left = int(np.sum(start**2))
        sq_right = int(np.sum((total.astype(np.int64) - start) ** 2))
        counts = start.astype(np.int64)
        got = sweep_exact.add_block_to_left(
            codes, np.uint64(0), np.uint64(n), counts, total, np.int64(n_classes),
            np.int64(sq_left), np.int64(sq_right),
        )  # fmt: skip
        left = start + np.bincount(codes, minlength=n_classes)
        right = total.astype(np.int64) - left
        assert got == (int(np.sum(left**2)), int(np.sum(right**2))), trial
        np.testing.assert_array_equal(counts, left)


def _sweep_block():
    """Scratch for the Gini sweep in blocks (``sweep_exact.gini_cuts_in_blocks``)."""
    return np.empty((4, sweep_exact.SWEEP_BLOCK), dtype=np.int64)


@pytest.mark.parametrize("n_classes", [2, 5, 8, 9])
def test_unit_gini_sweep_on_long_runs_of_ties(n_classes):
    """Segments of a few distinct values: the large-segment sweep moves tied runs in blocks.

    Runs from one row to thousands, mixed-class and pure, and values that differ by less than
    ``FEATURE_THRESHOLD`` (one chain of ties); up to 8 classes the blocks are used, 9 checks
    the row-by-row path. Proxy, position and threshold must equal the reference's.
    """
    rng = np.random.default_rng(n_classes)
    for trial in range(12):
        n = sweep_exact.BRANCHY_SWEEP_MIN_ROWS + int(rng.integers(1, 6000))
        n_distinct = int(rng.choice([2, 5, 40, 300]))
        val = np.sort(rng.integers(0, n_distinct, size=n)).astype(np.float32)
        if trial % 3 == 1:
            val = (val * np.float32(1e-9)).astype(np.float32)  # every step is a tie
        elif trial % 3 == 2:
            val[rng.random(n) < 0.01] += np.float32(0.5)
            val.sort()
        codes = rng.integers(0, n_classes, size=n).astype(np.uint8)
        if trial % 2:
            codes = np.sort(codes)  # long pure runs
        min_leaf = int(rng.choice([1, 20]))
        total = np.bincount(codes, minlength=n_classes).astype(np.float64)
        got = sweep_exact.unit_gini_sweep(
            val, codes, np.int64(0), np.int64(0), np.int64(n), total, float(n), 0.0,
            np.int64(n_classes), np.int64(min_leaf), np.int64(min_leaf), 0.0,
            np.zeros(n_classes), sweep_exact.NO_SPLIT, _sweep_block(),
        )  # fmt: skip
        expected = _unit_sweep_reference(val, codes, n_classes, min_leaf, min_leaf)
        assert got == expected, trial


def _gini_sweep_with_classes(n_classes, segment, limits, known_proxy):
    """``unit_gini_sweep`` on a two-class segment, padded with empty classes to ``n_classes``."""
    val, codes, p, counts, start_counts, weight, weight_left = segment
    min_left, min_right, min_weight = limits
    extra = np.zeros(n_classes - 2)
    return sweep_exact.unit_gini_sweep(
        val, codes, np.int64(0), np.int64(p), np.int64(len(val)),
        np.concatenate([counts, extra]).astype(np.float64), weight, weight_left,
        np.int64(n_classes), np.int64(min_left), np.int64(min_right), min_weight,
        np.concatenate([start_counts, extra]).astype(np.float64), known_proxy, _sweep_block(),
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_two_class_gini_sweep_equals_the_general_sweep(seed):
    """Two classes give the same cut as the same rows with an empty third class.

    ``gini_cuts_in_blocks`` computes the sums of squares of two classes from one running
    count, of more classes row by row (and segments past ``BRANCHY_SWEEP_MIN_ROWS`` of tied
    values take the row-by-row loop). A class with no rows adds nothing to either sum, so
    both must return the same proxy, position and threshold, bit for bit. The segments run
    from one row to a few blocks (``SWEEP_BLOCK``) and past ``BRANCHY_SWEEP_MIN_ROWS``, with
    tied values, the sweep starting after a first group (``p > start``), NaN rows on the left,
    ``min_samples_leaf`` and ``min_weight_leaf`` limits and known proxies.
    """
    rng = np.random.default_rng(100 + seed)
    block = sweep_exact.SWEEP_BLOCK
    for trial in range(60):
        if trial % 6 == 5:
            n = sweep_exact.BRANCHY_SWEEP_MIN_ROWS + int(rng.integers(1, 2000))
        else:
            n = int(rng.choice([1, 2, 3, block - 1, block, block + 1, 2 * block + 7]))
            n = max(1, n + int(rng.integers(-1, 2)) * int(rng.integers(0, 3)))
        val = np.sort(rng.integers(0, max(2, n // int(rng.integers(1, 5))), size=n))
        val = val.astype(np.float32)
        if trial % 3:
            codes = rng.integers(0, 2, size=n)
        else:
            codes = np.resize(rng.integers(0, 2, size=int(rng.integers(1, 5))), n)
        codes = codes.astype(np.uint8)
        missing = rng.integers(0, 4, size=2) * int(rng.integers(0, 2))  # NaN rows, left
        p = int(rng.integers(0, min(n, 40)))
        min_leaf = int(rng.choice([1, 1, 3, 20]))
        min_weight = float(rng.choice([0.0, 0.0, 2.5, 9.0]))
        n_missing = int(missing.sum())
        min_left = min_leaf - n_missing
        weight = float(n + n_missing)
        weight_left = float(p + n_missing)
        counts = np.bincount(codes, minlength=2) + missing
        start_counts = np.bincount(codes[:p], minlength=2) + missing

        segment = (val, codes, p, counts, start_counts, weight, weight_left)
        limits = (min_left, min_leaf, min_weight)

        expected = _gini_sweep_with_classes(3, segment, limits, sweep_exact.NO_SPLIT)
        assert _gini_sweep_with_classes(2, segment, limits, sweep_exact.NO_SPLIT) == expected
        best = expected[0]
        if best > sweep_exact.NO_SPLIT:
            for known_proxy in (best, np.nextafter(best, -np.inf), best - 1e-9 * abs(best)):
                got = _gini_sweep_with_classes(2, segment, limits, known_proxy)
                assert got == _gini_sweep_with_classes(3, segment, limits, known_proxy)


@pytest.mark.parametrize("n_classes", [3, 7, 10])
def test_gini_sweep_in_blocks_on_long_distinct_segments(n_classes):
    """Long segments of mostly distinct values take the block sweep with any class count.

    Past ``BRANCHY_SWEEP_MIN_ROWS`` rows, only mostly tied values take the row-by-row loop;
    these (a few ties, and a sorted-label trial with long pure runs) must be swept in blocks
    of ``SWEEP_BLOCK`` rows and give the reference's proxy, position and threshold, also
    from a known proxy equal to the best.
    """
    rng = np.random.default_rng(n_classes)
    for trial in range(3):
        n = sweep_exact.BRANCHY_SWEEP_MIN_ROWS + int(rng.integers(1, 700))
        val = np.sort(rng.normal(size=n)).astype(np.float32)
        val[rng.random(n) < 0.05] = np.float32(0.25)  # a few ties
        val.sort()
        codes = rng.integers(0, n_classes, size=n).astype(np.uint8)
        if trial == 2:
            codes = np.sort(codes)
        total = np.bincount(codes, minlength=n_classes).astype(np.float64)
        expected = _unit_sweep_reference(val, codes, n_classes, 1, 1)
        for known_proxy in (sweep_exact.NO_SPLIT, expected[0]):
            got = _unit_sweep("gini", val, codes, total, n_classes, 1, 0.0, known_proxy)
            assert got == expected, (trial, known_proxy)


def test_copy_rows_equals_slice_assignment():
    """``copy_rows`` copies ``src[first:stop]`` to ``dst[at:]`` and returns the end position.

    Signed and unsigned positions (the builder passes int64, the partition uint64), empty
    ranges (``stop <= first``) included: nothing is written and ``at`` comes back.
    """
    rng = np.random.default_rng(5)
    src = rng.integers(-1000, 1000, size=300).astype(np.int32)
    for trial in range(40):
        first = int(rng.integers(0, 300))
        stop = int(rng.integers(0, 301)) if trial % 5 else first - int(trial % 2)
        at = int(rng.integers(0, 50))
        dst = np.full(400, -7, dtype=np.int32)
        expected = dst.copy()
        n = max(stop - first, 0)
        expected[at : at + n] = src[first : first + n]
        kind = np.uint64 if trial % 2 else np.int64
        end = sweep_exact.copy_rows(src, kind(first), kind(max(stop, 0)), dst, np.int64(at))
        assert end == at + n, trial
        np.testing.assert_array_equal(dst, expected)


def test_parts_of_batch_cut_the_rows_evenly():
    """Each node lies in exactly one part, parts are runs in batch order of about equal rows."""
    rng = np.random.default_rng(0)
    for trial in range(50):
        n_nodes = int(rng.integers(1, 40))
        sizes = rng.integers(1, 1000, size=n_nodes)
        if trial % 5 == 0:
            sizes[rng.integers(n_nodes)] = 100_000  # one node larger than all the others
        node_end = np.cumsum(sizes).astype(np.int64)
        node_start = node_end - sizes
        nodes = rng.permutation(n_nodes).astype(np.int64)
        n_parts = int(rng.integers(1, 6))
        cuts = sweep_exact.parts_of_batch(nodes, node_start, node_end, np.int64(n_parts))
        assert cuts.shape == (n_parts + 1,)
        assert cuts[0] == 0 and cuts[-1] == n_nodes
        assert np.all(np.diff(cuts) >= 0)
        rows = np.concatenate([[0], np.cumsum(sizes[nodes])])
        for j in range(1, n_parts):
            # Cut j is the first node count whose rows reach j / n_parts of the total.
            assert rows[cuts[j]] * n_parts >= rows[-1] * j
            assert cuts[j] == 0 or rows[cuts[j] - 1] * n_parts < rows[-1] * j


@numba.njit(parallel=True)
def _claim_all(n_items, n_threads):
    owner = np.full(n_items, -1, dtype=np.int64)
    claims = np.zeros(n_items, dtype=np.int64)
    queue = work_queue.new_work_queue()
    for t in numba.prange(n_threads):
        item = work_queue.claim_item(queue)
        while item < n_items:
            owner[item] = t
            claims[item] += 1
            item = work_queue.claim_item(queue)
    return owner, claims


@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_work_queue_hands_out_every_item_once(n_threads):
    """Every item is claimed by exactly one thread, however many threads claim."""
    for n_items in (0, 1, 7, 10_000):
        owner, claims = _claim_all(n_items, n_threads)
        np.testing.assert_array_equal(claims, np.ones(n_items, dtype=np.int64))
        assert np.all((owner >= 0) & (owner < n_threads))


@numba.njit(parallel=True)
def _offer_all(values, slot_of, n_slots, n_threads):
    best = shared_best.new_shared_best(n_slots)
    for t in numba.prange(n_threads):
        for i in range(t, values.shape[0], n_threads):
            shared_best.offer_best(best, slot_of[i], values[i])
    seen = np.empty(n_slots)
    for k in range(n_slots):
        seen[k] = shared_best.read_best(best, k)
    return seen


@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_shared_best_holds_an_offered_value(n_threads):
    """Each slot ends with a value offered to it (never a torn or invented one), the best one
    when a single thread offers; a slot offered nothing stays -inf. The plain-Python bodies
    (the NUMBA_DISABLE_JIT lane) keep the best too."""
    rng = np.random.default_rng(n_threads)
    values = rng.normal(size=20_000)
    slot_of = rng.integers(0, 7, size=values.shape[0])
    slot_of[slot_of == 6] = 5  # slot 6: offered nothing
    seen = _offer_all(values, slot_of, 7, n_threads)
    python_best = np.full(7, -np.inf)
    for value, k in zip(values, slot_of, strict=True):
        shared_best.offer_best(python_best, k, value)
    for k in range(6):
        offered = values[slot_of == k]
        assert seen[k] in offered
        assert python_best[k] == offered.max() == shared_best.read_best(python_best, k)
        if n_threads == 1:
            assert seen[k] == offered.max()
    assert seen[6] == -np.inf == python_best[6]


def _unit_sweep(criterion, val, codes, total, n_classes, min_leaf, min_weight, known_proxy):
    """Run ``unit_gini_sweep`` or ``unit_entropy_sweep`` on the whole segment ``val``."""
    n = len(val)
    args = (
        val, codes, np.int64(0), np.int64(0), np.int64(n), total, float(n), 0.0,
        np.int64(n_classes), np.int64(min_leaf), np.int64(min_leaf), min_weight,
        np.zeros(n_classes), known_proxy,
    )  # fmt: skip
    if criterion == "gini":
        return sweep_exact.unit_gini_sweep(*args, _sweep_block())
    return via_kernel(sweep_exact.unit_entropy_sweep)(*args, sweep_exact.xlogx_table(n))


def test_xlogx_table_holds_n_ln_n_in_fixed_point():
    """Entries are ``n ln n`` in units of ``2**-30``, to the rounding of one float64 product."""
    for n_rows in (0, 1, 5, 100_000):
        table = sweep_exact.xlogx_table(n_rows)
        assert table.dtype == np.int64 and table.shape == (n_rows + 1,)
        n = np.arange(1, n_rows + 1, dtype=np.float64)
        expected = n * np.log(n) * sweep_exact.XLOGX_SCALE
        assert table[0] == 0
        assert np.all(np.abs(table[1:] - expected) <= 1.0 + 4e-16 * expected)
    assert sweep_exact.xlogx_table(sweep_exact.XLOGX_ROWS_LIMIT).shape == (0,)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", range(6))
def test_unit_sweeps_keep_the_first_of_tied_proxies(seed, criterion):
    """The pre-tests of ``unit_gini_sweep`` and ``unit_entropy_sweep`` drop no cut that can win.

    Label patterns repeated along the segment give many cuts with exactly equal proxies
    (the first must win), random labels give near ties; both with and without
    ``min_samples_leaf`` and ``min_weight_leaf`` limits (with unit weights, a least weight
    ``w`` is a least row count ``ceil(w)``). Every fourth segment is longer than
    ``BRANCHY_SWEEP_MIN_ROWS``, so both of the Gini sweep's loops are checked. Proxy, position and
    threshold must equal the reference's, also when the pre-test starts from a proxy known
    to be reached (``known_proxy``: another feature's best) equal to the best or just under
    it; from a higher one, the sweep must report nothing better than the best.
    """
    rng = np.random.default_rng(seed)
    for trial in range(40):
        n_classes = int(rng.integers(2, 6))
        long = trial % 4 == 3
        n = int(rng.integers(2, 300) + (sweep_exact.BRANCHY_SWEEP_MIN_ROWS if long else 0))
        if trial % 2:
            pattern = rng.integers(0, n_classes, size=int(rng.integers(1, 6)))
            codes = np.resize(pattern, n)
        else:
            codes = rng.integers(0, n_classes, size=n)
        codes = codes.astype(np.uint16)
        val = np.sort(rng.integers(0, max(2, n // int(rng.integers(1, 4))), size=n)).astype(
            np.float32
        )
        min_leaf = int(rng.choice([1, 1, 3, 10]))
        min_weight = float(rng.choice([0.0, 0.0, 2.5, 7.0]))
        total = np.bincount(codes, minlength=n_classes).astype(np.float64)
        min_rows = max(min_leaf, int(np.ceil(min_weight)))
        expected = _unit_sweep_reference(
            val, codes, n_classes, min_rows, min_rows, gini if criterion == "gini" else entropy
        )
        best = expected[0]
        known = [sweep_exact.NO_SPLIT]
        if best > sweep_exact.NO_SPLIT:
            known += [best, np.nextafter(best, -np.inf), best - 1e-9 * abs(best), best + 0.5]
        for known_proxy in known:
            got = _unit_sweep(
                criterion, val, codes, total, n_classes, min_leaf, min_weight, known_proxy
            )
            if known_proxy > best:
                assert got[0] <= best, (seed, trial)
            else:
                assert got == expected, (seed, trial, known_proxy)


def _weighted_entropy_reference(val, codes, w, n_classes, min_left, min_weight):
    """The general sweep's rules for entropy, in Python: groups of tied values, a cut between
    two groups pure in one class scored only at the ends of the feasible range, class weights
    and the left weight summed row by row; first max wins."""
    n = len(val)
    total = np.zeros(n_classes)
    for c, wi in zip(codes, w, strict=True):
        total[c] += wi
    weight = float(np.sum(w))
    groups = []  # (first row, end, pure, class)
    p = 0
    while p < n:
        q = p + 1
        while q < n and not val[q] > val[q - 1] + FEATURE_THRESHOLD:
            q += 1
        groups.append((p, q, bool(np.all(codes[p:q] == codes[p])), int(codes[p])))
        p = q
    left = np.zeros(n_classes)
    weight_left = 0.0
    best = (-np.inf, n, 0.0)
    prev = None  # (pure, class, left feasible) of the previous group
    for p, q, pure, code in groups:
        next_weight_left = weight_left
        for u in range(p, q):
            next_weight_left += w[u]
        if p > 0:
            if n - p < min_left or weight - weight_left < min_weight:
                break
            feasible = p >= min_left and weight_left >= min_weight
            last = q >= n or n - q < min_left or weight - next_weight_left < min_weight
            inside_run = pure and prev[0] and code == prev[1] and prev[2]
            if feasible and (not inside_run or last):
                weight_right = weight - weight_left
                proxy = -weight_right * entropy(total - left, weight_right) - (
                    weight_left * entropy(left, weight_left)
                )
                if proxy > best[0]:
                    best = (proxy, p, float(val[p - 1]) / 2.0 + float(val[p]) / 2.0)
            prev = (pure, code, feasible)
        else:
            prev = (pure, code, False)
        for u in range(p, q):
            left[codes[u]] += w[u]
        weight_left = next_weight_left
    return best


@pytest.mark.parametrize("seed", range(6))
def test_weighted_entropy_sweep_keeps_the_first_of_tied_proxies(seed):
    """The screen of ``weighted_entropy_sweep`` drops no cut that can win.

    Against the general sweep's rules in Python, proxies computed from the same sums: equal
    proxy, position and threshold. Repeated label patterns with weights in eighths (exact
    sums, so many exactly tied cuts: the first must win), random labels with weights spread
    over eight orders of magnitude (long segments, where the running sums round the most),
    leaf limits, and ``known_proxy`` equal to the best, one ulp under it, or above it.
    """
    rng = np.random.default_rng(seed)
    for trial in range(40):
        n_classes = int(rng.integers(2, 12))
        n = int(rng.integers(2, 300) + (20_000 if trial % 8 == 7 else 0))
        if trial % 2:
            pattern = rng.integers(0, n_classes, size=int(rng.integers(1, 6)))
            codes = np.resize(pattern, n)
            w = np.resize(rng.integers(1, 17, size=len(pattern)) / 8.0, n)
        else:
            codes = rng.integers(0, n_classes, size=n)
            w = np.exp(rng.uniform(-9.0, 9.0, size=n)) if trial % 4 == 0 else rng.random(n)
        codes = codes.astype(np.uint16)
        val = np.sort(rng.integers(0, max(2, n // int(rng.integers(1, 4))), size=n)).astype(
            np.float32
        )
        min_leaf = int(rng.choice([1, 1, 3, 10]))
        min_weight = float(rng.choice([0.0, 0.0, 0.25, 0.1 * w.sum()]))
        expected = _weighted_entropy_reference(val, codes, w, n_classes, min_leaf, min_weight)
        total = np.zeros(n_classes)
        np.add.at(total, codes, w)
        best = expected[0]
        known = [sweep_exact.NO_SPLIT]
        if best > sweep_exact.NO_SPLIT:
            known += [best, np.nextafter(best, -np.inf), best + 0.5 * abs(best) + 0.5]
        for known_proxy in known:
            got = via_kernel(sweep_exact.weighted_entropy_sweep)(
                np.arange(n, dtype=np.int32), val, codes, np.int64(0), np.int64(0),
                np.int64(n), w, w, total, float(np.sum(w)), 0.0, np.int64(n_classes),
                np.int64(min_leaf), np.int64(min_leaf), min_weight, np.zeros(5 * n_classes),
                known_proxy,
            )  # fmt: skip
            if known_proxy > best:
                assert got[0] <= best, (seed, trial)
            else:
                assert got == expected, (seed, trial, known_proxy)


def test_mostly_distinct_looks_at_sixteen_rows():
    """The tie test that sends weighted entropy to its screen: rows at a stride of a sixteenth
    of the segment, at most 4 of them tied with the row before (float32 FEATURE_THRESHOLD, as
    the sweeps)."""
    rng = np.random.default_rng(0)
    distinct = np.sort(rng.normal(size=1000)).astype(np.float32)
    assert sweep_exact.mostly_distinct(distinct, np.int64(0), np.int64(1000))
    zero_one = np.sort(rng.random(1000) < 0.5).astype(np.float32)
    assert not sweep_exact.mostly_distinct(zero_one, np.int64(0), np.int64(1000))
    for n_tied in range(17):
        # Rows 1, 2, ..., 16 are the ones looked at in a segment of 17 rows.
        steps = np.ones(17, dtype=np.float32)
        steps[1 : n_tied + 1] = np.float32(1e-8)  # within FEATURE_THRESHOLD of the row before
        val = np.cumsum(steps).astype(np.float32)
        expected = n_tied <= 4
        assert sweep_exact.mostly_distinct(val, np.int64(0), np.int64(17)) == expected, n_tied
