"""Write a file under a temporary name and rename it into place only when writing succeeded."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress

TEMP_SUFFIX = ".tmp"


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it to ``path`` on success, else delete it.

    The temporary file lives in the destination's directory, so the final ``os.replace`` is
    a rename within one file system (atomic on POSIX): readers see either the old file or the
    complete new one. On any exception, ``KeyboardInterrupt`` included, the temporary file is
    removed and the exception propagates; ``path`` is left untouched.

    Parameters
    ----------
    path : str, bytes or path-like
        Final destination; its directory must exist (``FileNotFoundError`` naming it).

    Yields
    ------
    str
        Path of an empty temporary file (``.<name>.<random>.tmp``) the caller writes to.
    """
    path = os.fsdecode(path)  # bytes too, as open() takes them
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):  # else mkstemp's error would name the temporary file
        raise FileNotFoundError(errno.ENOENT, "No such directory to write into", directory)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=TEMP_SUFFIX, dir=directory
        )
    except OSError as exc:
        raise _naming(exc, path) from exc
    os.close(fd)
    try:
        yield tmp
        # mkstemp creates the file 0600; give the result the permissions of a plain open().
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and tmp in (exc.filename, exc.filename2):
            raise _naming(exc, path) from exc
        raise


def _naming(exc: OSError, path: str) -> OSError:
    """Return ``exc`` again, naming ``path``: the temporary file is an implementation detail.

    The same ``OSError`` subclass (``PermissionError``, ``IsADirectoryError`` ...) with the
    same ``errno``, so callers catching either keep working.
    """
    return type(exc)(exc.errno, exc.strerror or str(exc), path)


def _current_umask() -> int:
    mask = os.umask(0)  # the only portable way to read the umask is to set it and restore it
    os.umask(mask)
    return mask
