"""The first compile of a process says so, once (``dtjit.engine.compile_notice``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

# Two calls that compile different kernels, and the notices they raise.
SCRIPT = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("always")
    import numpy as np
    from numba.core import event
    from dtjit import Tree
    from dtjit.engine.compile_notice import CompileWarning, dtjit_kernel_name

    compiled = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            name = dtjit_kernel_name(ev.data)
            if name is not None:
                compiled.append(name)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())
    # A stump's traversal compiles in about 1 s of CPU, a tree fit in about 9 s: the notice
    # only needs two calls that compile different dtjit kernels.
    stump = Tree(
        n_features=3, n_classes=[2],
        feature=np.array([0, -2, -2], np.int32), threshold=np.array([0.5, -2.0, -2.0]),
        left=np.array([1, -1, -1], np.int32), right=np.array([2, -1, -1], np.int32),
        value=np.array([[[0.5, 0.5]], [[1.0, 0.0]], [[0.0, 1.0]]]),
        impurity=np.array([0.5, 0.0, 0.0]), n_node_samples=np.array([60, 30, 30]),
        weighted_n_node_samples=np.array([60.0, 30.0, 30.0]),
        missing_left=np.zeros(3, np.uint8),
    )
    X = np.random.default_rng(0).random((60, 3)).astype(np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        stump.apply(X)
        by_apply = set(compiled)
        stump.decision_path(X)
        by_decision_path = set(compiled) - by_apply
    notices = [w for w in seen if issubclass(w.category, CompileWarning)]
    print(len(by_apply), len(by_decision_path), len(notices))
    for w in notices:
        print(str(w.message))
    """
)


def _run(cache_dir: str) -> list[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def test_first_compile_warns_once_then_a_warm_process_is_silent(tmp_path):
    cold = _run(str(tmp_path))
    compiled_by_apply, compiled_by_decision_path, notices = map(int, cold[0].split())
    assert compiled_by_apply > 0 and compiled_by_decision_path > 0, cold  # two compiles
    assert notices == 1, cold  # ... and one notice
    assert "dtjit is compiling its kernels" in cold[1]
    assert str(tmp_path) in cold[1]  # says where the compiled code is kept
    warm = _run(str(tmp_path))
    assert warm == ["0 0 0"], warm  # everything loads from the cache: nothing to say
