"""Tell the user, once per process, that dtjit is compiling its kernels.

A first fit on a new machine (or after an upgrade, or in a fresh environment) compiles
numba kernels for seconds before the first result; afterwards they load from numba's
on-disk cache. Without a word the wait looks like a hang. So the first time a dtjit kernel
starts to compile in a process, a :class:`CompileWarning` names it, says about how long
the first use takes and where the compiled code is kept. Loading from the cache emits no
``numba:compile`` event, so a warm start stays silent.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numba
from numba.core import event

# What a first use compiles, in CPU seconds on the machines we measured (one core): a plain
# fit and predict, or one further path (another splitter, criterion, NaN, categorical ...).
FIRST_USE_SECONDS = "2-15"


class CompileWarning(UserWarning):
    """dtjit is compiling kernels for a first use; later calls and processes reuse them."""


def dtjit_kernel_name(data: Any) -> str | None:
    """Return ``module.function`` of a ``numba:compile`` event's dtjit kernel, else None."""
    dispatcher = data.get("dispatcher") if isinstance(data, dict) else None
    py_func = getattr(dispatcher, "py_func", None)
    module = getattr(py_func, "__module__", None) or ""
    if module != "dtjit" and not module.startswith("dtjit."):
        return None
    return f"{module}.{getattr(py_func, '__qualname__', '<kernel>')}"


def cache_location() -> str:
    """Return where numba keeps dtjit's compiled kernels, in words."""
    if numba.config.CACHE_DIR:
        return f"NUMBA_CACHE_DIR ({numba.config.CACHE_DIR})"
    return "__pycache__ next to dtjit's modules (or numba's user cache if not writable)"


# Frames of these packages (and of the standard library's helpers numba compiles through)
# are skipped: the warning points at the user's line that set off the compile.
INTERNAL_PACKAGES = ("numba", "dtjit", "contextlib", "functools")


def caller_stacklevel() -> int:
    """Return the ``stacklevel`` of the first frame outside numba and dtjit (the user's call)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not any(module == p or module.startswith(p + ".") for p in INTERNAL_PACKAGES):
            return level
        frame = frame.f_back
        level += 1
    return 1


class FirstCompileNotice(event.Listener):
    """Warn at the start of the first dtjit compile of the process; then stay quiet."""

    def __init__(self) -> None:
        self.shown = False

    def on_start(self, ev: event.Event) -> None:
        """Warn at the first dtjit compile of the process."""
        if self.shown:
            return
        name = dtjit_kernel_name(ev.data)
        if name is None:
            return
        self.shown = True
        warnings.warn(
            f"dtjit is compiling its kernels for a first use (starting with {name}): about "
            f"{FIRST_USE_SECONDS} s of CPU per kind of fit, once. Compiled code is reused by "
            f"later calls and processes from {cache_location()}; `dtjit compile` compiles "
            "every path ahead of time.",
            CompileWarning,
            stacklevel=caller_stacklevel(),
        )

    def on_end(self, ev: event.Event) -> None:
        """Nothing to do when a compile ends."""


NOTICE = FirstCompileNotice()
event.register("numba:compile", NOTICE)
