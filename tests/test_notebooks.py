"""Every notebook under ``notebooks/`` is committed without outputs and runs from top to bottom.

Each notebook is executed with nbclient in a fresh kernel that runs *this* interpreter
(``sys.executable``): the kernelspec is written into a temporary directory instead of being
looked up among the installed ones, whose ``python`` may be another interpreter. The kernel
runs in a temporary working directory with ``DTJIT_NOTEBOOK_ROWS`` set small, so a notebook
that predicts a large generated batch by default stays quick here.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(p for p in NOTEBOOK_DIR.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
KERNEL_NAME = "python3"
CELL_TIMEOUT_SECONDS = 300
NOTEBOOK_ENV = {"DTJIT_NOTEBOOK_ROWS": "20000"}
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(NOTEBOOK_DIR).as_posix() for p in paths]


def test_notebooks_are_found():
    assert NOTEBOOKS, f"no notebooks found under {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        f"cell {i}: {len(cell.outputs)} outputs, execution_count {cell.execution_count}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name} must be committed with outputs stripped:\n" + "\n".join(dirty)


def _kernel_manager(kernel_dir: Path) -> AsyncKernelManager:
    """A kernel manager whose only kernelspec, "python3", runs ``sys.executable``."""
    write_kernel_spec(kernel_dir / KERNEL_NAME)  # argv[0] is sys.executable
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    assert km.kernel_spec.argv[0] == sys.executable, km.kernel_spec.argv
    return km


def _failure_report(nb: nbformat.NotebookNode, exc: CellExecutionError) -> str:
    """The failing cell's index, source and traceback, without terminal colour codes."""
    for i, cell in enumerate(nb.cells):
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if cell.cell_type == "code" and errors:
            traceback = "\n".join(errors[0].traceback)
            return (
                f"cell {i} raised {exc.ename}: {exc.evalue}\n"
                f"--- cell source ---\n{cell.source}\n"
                f"--- traceback ---\n{ANSI_ESCAPE.sub('', traceback)}"
            )
    return ANSI_ESCAPE.sub("", str(exc))  # nbclient's own message also holds the cell source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    # Connection files and IPython's profile go to tmp_path, not the user's home.
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        km=_kernel_manager(tmp_path / "kernels"),
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT_SECONDS,
        resources={"metadata": {"path": str(workdir)}},
    )
    failure = None
    try:
        client.execute(cwd=str(workdir), env={**os.environ, **NOTEBOOK_ENV})
    except CellExecutionError as exc:
        failure = _failure_report(nb, exc)
    except (CellTimeoutError, DeadKernelError) as exc:
        failure = f"{type(exc).__name__}: {exc}"
    if failure is not None:  # failed outside the except block: no chained traceback
        pytest.fail(f"{path.name}: {failure}", pytrace=False)
