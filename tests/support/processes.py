"""Child processes the tests and benchmarks start in their own session (Chromium, the app, X)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any


def stop_group(process: subprocess.Popen[Any], *, grace: float) -> None:
    """SIGTERM the process's group (started with ``start_new_session``), SIGKILL it after
    ``grace`` seconds; returns once the process has exited."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def log_tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a process's log file, for an error message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"
