"""What ``import dtjit`` does: it compiles no kernel and imports no plotting library.

numba compiles each kernel, or loads it from its on-disk cache, on the kernel's first call.
A kernel called at import time would make every ``import dtjit`` pay for it (minutes on a
cold cache, a cache load on a warm one), even in a process that never fits. matplotlib is
imported by the plotting functions when they draw. The start-up time itself is a figure
reported by ``benchmarks/bench_startup.py`` next to scikit-learn's, not a test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import dtjit

# Run in a fresh process: records numba's compile events from before `import dtjit`, then
# lists dtjit's kernels and the signatures each holds (a kernel loaded from the cache holds
# one too, without a compile event).
_PROBE = textwrap.dedent(
    """
    import json, sys
    from numba.core import event
    from numba.core.registry import CPUDispatcher

    class Recorder(event.Listener):
        names = []

        def on_start(self, ev):
            self.names.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Recorder())
    import dtjit

    def kernels():
        found = {}
        for name, module in list(sys.modules.items()):
            if name == "dtjit" or name.startswith("dtjit."):
                for obj in vars(module).values():
                    if isinstance(obj, CPUDispatcher):
                        found[obj.py_func.__qualname__] = len(obj.signatures)
        return found

    report = {"import": {"compiled": list(Recorder.names), "kernels": kernels()}}
    if sys.argv[1:] == ["fit"]:
        import numpy as np
        X = np.array([[0.0], [1.0], [2.0], [3.0]])
        dtjit.DecisionTreeClassifier().fit(X, [0, 0, 1, 1]).predict(X)
        report["fit"] = {"compiled": list(Recorder.names), "kernels": kernels()}
    report["modules"] = sorted(m for m in ("matplotlib", "dtjit.cli") if m in sys.modules)
    print(json.dumps(report))
    """
)


def _probe(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def test_import_compiles_no_kernel_and_imports_no_plotting_library():
    report = _probe()
    kernels = report["import"]["kernels"]
    assert len(kernels) > 20, kernels  # the probe sees dtjit's kernels
    assert report["import"]["compiled"] == []
    assert {name: n for name, n in kernels.items() if n} == {}
    assert report["modules"] == []


def test_the_probe_sees_the_kernels_a_first_fit_compiles():
    """The same probe after one fit finds signatures, compiled or loaded from the cache."""
    report = _probe("fit")
    assert report["import"]["compiled"] == []
    loaded = {name for name, n in report["fit"]["kernels"].items() if n}
    assert len(loaded) > 3, loaded
    assert set(report["fit"]["compiled"]) <= loaded


def test_every_public_name_is_importable():
    assert all(hasattr(dtjit, name) for name in dtjit.__all__)
    assert set(dtjit.__all__) <= set(dir(dtjit))
