"""The code in README.md and docs/*.md runs as written, on a fresh directory with nothing beside it.

Every ```python block of a file runs, in order, as one script (later blocks may use what earlier
ones defined); every ```bash block runs in bash with ``set -e``, with this interpreter's ``bin``
first on ``PATH`` so that ``python`` and ``dtjit`` are the ones under test. Both run in an empty
temporary directory. The blocks that set up an environment (``make``, ``pip install``) are not
run here: ``tests/test_install.py`` installs a built wheel instead, and ``make test`` is what
runs this file. The test checks that only such blocks are left out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
# A shell block is set-up, not an example, when one of its commands starts like this.
SETUP_COMMANDS = ("make ", "pip ", "pip3 ", "python -m pip ")
TIMEOUT_SECONDS = 900  # a cold numba cache compiles the categorical kernels first


def code_blocks(path: Path, language: str) -> list[str]:
    """The fenced blocks of ``path`` in ``language``, in order."""
    return [body for lang, body in FENCE.findall(path.read_text()) if lang == language]


def is_setup(block: str) -> bool:
    commands = [line.strip() for line in block.splitlines()]
    return any(c.startswith(SETUP_COMMANDS) for c in commands)


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MPLBACKEND"] = "Agg"
    env.pop("DTJIT_DATA_DIR", None)  # the examples must not need the shared data
    return env


def _run(args: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run(
        args,
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    if result.returncode != 0:
        pytest.fail(
            f"{what} failed with status {result.returncode}\n--- stdout ---\n{result.stdout}"
            f"\n--- stderr ---\n{result.stderr}",
            pytrace=False,
        )


def test_readme_has_examples():
    readme = ROOT / "README.md"
    assert code_blocks(readme, "python"), "README.md has no python example"
    assert [b for b in code_blocks(readme, "bash") if not is_setup(b)], "no command example"
    # The two commands come first, in the first block.
    first = code_blocks(readme, "bash")[0]
    assert first.splitlines()[0].startswith("make demo")
    assert first.splitlines()[1].startswith("make test")


def test_setup_blocks_only_set_up():
    """A block left out as set-up holds nothing but set-up commands and comments."""
    allowed = (*SETUP_COMMANDS, "dtjit compile", "#")
    for path in DOCUMENTS:
        for block in code_blocks(path, "bash"):
            if is_setup(block):
                lines = [line.strip() for line in block.splitlines() if line.strip()]
                stray = [line for line in lines if not line.startswith(allowed)]
                assert not stray, f"{path.name}: example commands in a set-up block: {stray}"


def test_readme_is_a_users_document():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 12_500, f"README.md is {len(text.encode())} bytes"
    assert "../shared" not in text
    hashes = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert not hashes, f"commit hashes in README.md: {hashes}"
    for path in DOCUMENTS:
        for link in re.findall(r"\]\(([^)#]+)", path.read_text()):
            if "://" in link:
                continue
            target = (path.parent / link).resolve()
            # Pages other engineers write may land later; every other link must resolve.
            if target.name not in {"model-file.md", "limits.md", "interop.md"}:
                assert target.exists(), f"{path.name}: broken link {link}"


RUNNABLE_PYTHON = [p for p in DOCUMENTS if code_blocks(p, "python")]
RUNNABLE_BASH = [p for p in DOCUMENTS if any(not is_setup(b) for b in code_blocks(p, "bash"))]


@pytest.mark.parametrize("path", RUNNABLE_PYTHON, ids=_ids(RUNNABLE_PYTHON))
def test_python_blocks_run(path: Path, tmp_path: Path):
    script = tmp_path / "blocks.py"
    script.write_text("\n\n".join(code_blocks(path, "python")))
    _run([sys.executable, str(script)], tmp_path, f"the python blocks of {path.name}")


@pytest.mark.parametrize("path", RUNNABLE_BASH, ids=_ids(RUNNABLE_BASH))
def test_bash_blocks_run(path: Path, tmp_path: Path):
    for i, block in enumerate(code_blocks(path, "bash")):
        if is_setup(block):
            continue
        _run(
            ["bash", "-e", "-u", "-o", "pipefail", "-c", block],
            tmp_path,
            f"bash block {i} of {path.name}",
        )
    assert list(tmp_path.iterdir()), "the commands wrote nothing"
