"""dtjit installs from the checkout into an environment of its own, as the README says.

The test builds a wheel from a copy of the checkout (pip's ``--no-build-isolation``, so no
network: the build backend comes from this interpreter's environment), installs it with
``--no-deps --no-index`` into a fresh venv, and runs that venv's Python: ``import dtjit``
must come from the venv, not from the checkout, and the shipped tables, the ``dtjit``
command and ``python -m dtjit.datasets`` must work there. The venv sees the test
environment's numpy, numba, scikit-learn and pandas through a ``.pth`` line, which saves
installing them again; the editable dtjit of the test environment is not activated there
(its finder is installed by a ``.pth`` file of that directory, which a path line does not run).
No fit is run: the new install has an empty numba cache, and compiling is tested elsewhere.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS_NEEDED = (77, 0)  # pyproject.toml's [build-system] requires


def _setuptools_version() -> tuple[int, ...] | None:
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return None
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} failed ({result.returncode}):\n"
        f"{result.stdout}\n{result.stderr}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    version = _setuptools_version()
    if version is None or version < SETUPTOOLS_NEEDED:
        pytest.skip(
            f"building the wheel offline needs setuptools>=77 in this environment (found "
            f"{version}): pip install 'setuptools>=77'"
        )
    # A copy, so that the build's build/ and *.egg-info do not land in the checkout.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "dtjit",
        source / "dtjit",
        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"),
    )
    wheelhouse = tmp_path_factory.mktemp("wheelhouse")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(wheelhouse),
            str(source),
        ]
    )
    (built,) = wheelhouse.glob("dtjit-*.whl")
    return built


def test_wheel_holds_the_package_data(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    for table in ("penguins", "play_tennis", "play_tennis_numeric", "spam_words"):
        assert f"dtjit/datasets/data/{table}.csv" in names
    assert "dtjit/datasets/NOTICE.md" in names
    assert "dtjit/py.typed" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith("tests/")]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "dtjit = dtjit.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv(wheel: Path, tmp_path: Path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    # The dependencies, from the test environment (see the module docstring).
    (site / "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ]
    )

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DTJIT_DATA_DIR")}
    check = _run(
        [
            str(python),
            "-c",
            """
import dtjit, dtjit.datasets
from dtjit import criteria
from dtjit.datasets import load_penguins, load_play_tennis
print(dtjit.__file__)
X, y = load_penguins(return_X_y=True)
assert X.shape == (344, 6) and y.nunique() == 3
weather = load_play_tennis()
parent = criteria.class_counts(weather["play"])
branches = criteria.branch_counts(weather["outlook"], weather["play"])
gain = criteria.information_gain(parent, branches)
assert round(gain, 4) == 0.2467, gain
""",
        ],
        cwd=tmp_path,
        env=env,
    )
    installed = Path(check.stdout.strip().splitlines()[0]).resolve()
    assert installed.is_relative_to(venv.resolve()), installed
    assert not installed.is_relative_to(ROOT)

    paths = _run([str(python), "-m", "dtjit.datasets", "penguins"], cwd=tmp_path, env=env)
    assert Path(paths.stdout.strip()).resolve().is_relative_to(venv.resolve())
    version = _run([str(bindir / "dtjit"), "--version"], cwd=tmp_path, env=env)
    assert "0.1.0" in version.stdout + version.stderr
