"""The first compile of a process says so, once (``dtjit.engine.compile_notice``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("always")
    import numpy as np
    from dtjit import DecisionTreeClassifier
    from dtjit.engine.compile_notice import CompileWarning
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        DecisionTreeClassifier().fit(X, y).predict(X)
        DecisionTreeClassifier(criterion="entropy").fit(X, y).predict(X)
    notices = [w for w in seen if issubclass(w.category, CompileWarning)]
    print(len(notices))
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
    assert cold[0] == "1", cold  # two kinds of fit compiled, one notice
    assert "dtjit is compiling its kernels" in cold[1]
    assert str(tmp_path) in cold[1]  # says where the compiled code is kept
    warm = _run(str(tmp_path))
    assert warm == ["0"], warm  # everything loads from the cache: nothing to say
