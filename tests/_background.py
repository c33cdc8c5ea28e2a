"""Subprocess lanes that run on another core while the in-process tests run.

A lane that shares nothing with the test process (its own numba cache, say) costs the suite
its whole duration when it runs inside its test, while the test process itself keeps one core
busy and leaves the other idle. A test marked ``@pytest.mark.background_lane(lane)`` gets its
lane started as soon as collection ends (``conftest.pytest_collection_finish``); the test then
waits for the result. A lane of a test that was not selected never starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


class BackgroundLane:
    """``python -c script`` with extra environment variables, run in a temporary directory.

    Parameters
    ----------
    script : str
        Python source; it prints its result as JSON on stdout.
    env_extra : dict of str to str
        Added to the environment. ``{dir}`` in a value is replaced by the lane's temporary
        directory (a private ``NUMBA_CACHE_DIR``, for example).
    timeout : float
        Seconds :meth:`result` waits for the lane to finish.
    """

    def __init__(self, script: str, env_extra: dict[str, str], timeout: float = 600.0):
        self.script = script
        self.env_extra = env_extra
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None
        self._dir: Path | None = None

    def start(self) -> None:
        """Start the subprocess (once; later calls do nothing)."""
        if self._proc is not None:
            return
        self._dir = Path(tempfile.mkdtemp(prefix="dtjit-lane-"))
        env = {**os.environ}
        env.update({k: v.replace("{dir}", str(self._dir)) for k, v in self.env_extra.items()})
        # Output goes to files: a pipe nobody reads until the end could fill up and block.
        with open(self._dir / "stdout", "wb") as out, open(self._dir / "stderr", "wb") as err:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", self.script], env=env, stdout=out, stderr=err,
                cwd=self._dir,
            )  # fmt: skip

    def result(self):
        """Wait for the lane (starting it if needed); return its JSON output, or fail."""
        self.start()
        try:
            returncode = self._proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise
        stderr = (self._dir / "stderr").read_text(errors="replace")
        assert returncode == 0, stderr[-3000:]
        return json.loads((self._dir / "stdout").read_text())

    def stop(self) -> None:
        """Kill the subprocess if it still runs and remove its directory."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
