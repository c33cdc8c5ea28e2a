"""Checks that a private part of numba is the one dtjit's compile-time shortcuts were read from.

``liveness``, ``call_types``, ``ssa`` and ``kernel_calls`` replace or mirror private numba
functions. Each checks on import, with :func:`written_as`, that the installed numba's
function still takes the same parameters and still holds the lines the shortcut relies on;
where not, the shortcut stays off and numba's own code runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence


def written_as(
    function: Callable, phrases: Sequence[str], parameters: Sequence[str] | None = None
) -> bool:
    """Return whether ``function``'s source holds every phrase (and, if given, these parameters).

    False when the source cannot be read (a build without it, a C function).
    """
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    if parameters is not None and list(inspect.signature(function).parameters) != list(parameters):
        return False
    return all(phrase in source for phrase in phrases)
