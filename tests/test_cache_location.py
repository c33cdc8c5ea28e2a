"""numba's on-disk cache still works when dtjit's package folder is not writable.

A system-wide or container install leaves ``site-packages`` read-only to the user, so numba
cannot write ``__pycache__`` next to dtjit's modules and falls back to its user-wide cache
(``~/.cache/numba`` or ``$XDG_CACHE_HOME/numba``). Here a copy of the package is made read
only, and two fresh processes import dtjit from it and fit an MDLP discretiser: the first
compiles into the user cache, the second must load everything from there and compile nothing.

Root ignores permission bits (the capabilities CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so
as root the processes run without those two: a root that honours the bits as any user does.
(Not as ``nobody``: the interpreter may sit where only root can reach it, as under
``/root/.pyenv``.) Each process checks that it cannot write to the package folder.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numba
import pytest

import dtjit

# prctl(2) and capability(7) numbers (Linux).
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2

CHILD = textwrap.dedent(
    """
    import json, sys
    from numba.core import event
    from numba.core.registry import CPUDispatcher

    compiled = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            py_func = ev.data["dispatcher"].py_func
            if (getattr(py_func, "__module__", "") or "").startswith("dtjit"):
                compiled.append(f"{py_func.__module__}.{py_func.__qualname__}")

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())

    import os, tempfile
    import numpy as np
    import dtjit

    try:
        tempfile.TemporaryFile(dir=os.path.dirname(dtjit.__file__)).close()
        package_writable = True
    except OSError:
        package_writable = False

    # A fit that compiles little: MDLP's four kernels, of two modules, take about 2.5 s of CPU
    # cold, a tree fit about 9 s.
    X = np.random.default_rng(0).random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    dtjit.MDLPDiscretizer().fit(X, y).transform(X)
    locators, paths = set(), set()
    for name, module in list(sys.modules.items()):
        if name != "dtjit" and not name.startswith("dtjit."):
            continue
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher) and obj.signatures:
                locators.add(type(obj._cache._impl.locator).__name__)
                paths.add(obj._cache.cache_path)
    print(json.dumps({"dtjit": dtjit.__file__, "compiled": compiled,
                      "package_writable": package_writable,
                      "locators": sorted(locators), "cache_paths": sorted(paths)}))
    """
)


def _walk_chmod(root: Path, dir_mode: int, file_mode: int) -> None:
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, dir_mode)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), file_mode)


@pytest.fixture
def read_only_install() -> Iterator[tuple[Path, Path]]:
    """A read-only copy of dtjit in a fresh folder, and an empty home for the user cache."""
    base = Path(tempfile.mkdtemp(prefix="dtjit-read-only-"))
    try:
        site = base / "site"
        shutil.copytree(
            Path(dtjit.__file__).parent, site / "dtjit",
            ignore=shutil.ignore_patterns("__pycache__"),
        )  # fmt: skip
        _walk_chmod(site, 0o555, 0o444)
        home = base / "home"
        home.mkdir()
        yield site, home
    finally:
        _walk_chmod(base, stat.S_IRWXU, stat.S_IRUSR | stat.S_IWUSR)  # so it can be deleted
        shutil.rmtree(base)


def _without_root_override() -> None:
    """In the child before exec: drop the two capabilities from its bounding set, which
    root's new program then does not get."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run_fit(site: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "NUMBA_BOUNDSCHECK")}  # fmt: skip
    env.update(PYTHONPATH=str(site), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    try:
        proc = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", CHILD], env=env, cwd=home,
            capture_output=True, text=True, timeout=1800,
            preexec_fn=_without_root_override if os.geteuid() == 0 else None,
        )  # fmt: skip
    except subprocess.SubprocessError as exc:  # preexec_fn failed: no CAP_SETPCAP here
        pytest.skip(f"cannot run a process that honours permission bits: {exc}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not result["package_writable"], "the test's package copy is writable"
    return result


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's JIT is off: nothing is cached")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux permissions")
def test_a_read_only_package_caches_in_the_user_cache(read_only_install) -> None:
    site, home = read_only_install
    first = run_fit(site, home)
    assert Path(first["dtjit"]).parent == site / "dtjit"  # the copy, not the installed dtjit
    assert first["compiled"], "the first process should compile (a new copy of the source)"
    assert first["locators"] == ["UserWideCacheLocator"] or first["locators"] == [
        "_UserWideCacheLocator"  # numba < 0.62
    ], first["locators"]
    cache = home / ".cache" / "numba"
    assert all(Path(p).is_relative_to(cache) for p in first["cache_paths"]), first["cache_paths"]
    assert any(cache.rglob("*.nbi")), "nothing was written to the user cache"
    assert not any((site / "dtjit").rglob("__pycache__"))

    second = run_fit(site, home)
    assert second["compiled"] == [], f"compiled again: {second['compiled']}"
