"""Watching one file for changes another process makes: the kernel's inotify on Linux (no
system call while nothing changes), a ``stat`` poll elsewhere.

``FileWatch.changes`` yields when the file may have changed; what changed is for the caller
to read (``SettingsStore.refresh`` compares the file's signature). It never reads the file.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import struct
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from tabrelay.config.files import make_private_dir

logger = logging.getLogger(__name__)

# inotify(7): the folder is watched, not the file, since an atomic write replaces the file.
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
FILE_EVENTS = IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
FOLDER_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
READ_SIZE = 64 * 1024


class FileWatch:
    """Tells when ``path`` may have changed; see the module docstring."""

    def __init__(self, path: Path, *, poll_interval: float) -> None:
        self.path = path
        self.poll_interval = poll_interval
        self.kind = "poll"  # or "inotify", once ``changes`` runs

    async def changes(self) -> AsyncIterator[None]:
        """Yield whenever the file may have changed (and once at the start, so nothing
        written before the watch began is missed). Runs until cancelled."""
        fd = _inotify(self.path)
        if fd is None:
            async for _ in self._poll():
                yield
            return
        self.kind = "inotify"
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()
        gone = False

        def readable() -> None:
            nonlocal gone
            mine, lost = _drain(fd, self.path.name.encode())
            gone = gone or lost
            if mine or lost:
                woken.set()

        loop.add_reader(fd, readable)
        try:
            yield
            while not gone:
                await woken.wait()
                woken.clear()
                yield
        finally:
            loop.remove_reader(fd)
            os.close(fd)
        # The folder was removed or moved away: nothing tells of it any more.
        logger.warning("%s went away; watching it by polling", self.path.parent)
        self.kind = "poll"
        async for _ in self._poll():
            yield

    async def _poll(self) -> AsyncIterator[None]:
        while True:
            yield
            await asyncio.sleep(self.poll_interval)


def _inotify(path: Path) -> int | None:
    """An inotify descriptor watching ``path``'s folder, or ``None`` where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        make_private_dir(path.parent)
    except OSError as exc:
        logger.warning("cannot watch %s with inotify (%s); polling it", path, exc)
        return None
    fd = int(libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
    if fd < 0:
        logger.warning(
            "inotify_init1 failed (%s); polling %s", os.strerror(ctypes.get_errno()), path
        )
        return None
    watch = libc.inotify_add_watch(
        fd, os.fsencode(path.parent), FILE_EVENTS | IN_DELETE_SELF | IN_MOVE_SELF
    )
    if watch < 0:
        logger.warning(
            "inotify_add_watch failed (%s); polling %s", os.strerror(ctypes.get_errno()), path
        )
        os.close(fd)
        return None
    return fd


def _drain(fd: int, name: bytes) -> tuple[bool, bool]:
    """Read every queued event: (one is about the file named ``name``, the folder is gone)."""
    mine = gone = False
    while True:
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return mine, gone
        if not data:
            return mine, gone
        offset = 0
        while offset + EVENT.size <= len(data):
            _wd, mask, _cookie, length = EVENT.unpack_from(data, offset)
            offset += EVENT.size
            event_name = data[offset : offset + length].rstrip(b"\0")
            offset += length
            if mask & IN_Q_OVERFLOW:
                mine = True  # events were lost: look, in case one was ours
            elif mask & FOLDER_GONE:
                gone = True
            elif event_name == name:
                mine = True
