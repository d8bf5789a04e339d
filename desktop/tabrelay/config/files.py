"""Files written safely: private modes, atomic replacement, an exclusive lock between processes.

What Tabrelay writes is its owner's alone: folders 0700, files 0600, set when they are created
so it holds under any umask. This module makes single files and folders private; walking an
install to tighten it is ``Paths.tighten``. On Windows, modes are left to the folder's ACLs.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tabrelay.errors import ConfigError

GROUP_AND_OTHER = 0o077  # the mode bits that let anyone but the owner in
PRIVATE_UMASK = GROUP_AND_OTHER
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# Modes are POSIX; on Windows a file's privacy comes from its folder's ACL instead.
CHMOD = os.name != "nt"


def restrict_umask() -> None:
    """Make every file and folder this process creates from now on private to its owner.

    The first thing each entry point does, so libraries that create files without a mode
    (SQLite, logging, subprocess logs) cannot leave them readable by others.
    """
    os.umask(PRIVATE_UMASK)


def make_private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents as 0700; folders that exist are left alone.

    Raises:
        OSError: a folder could not be created.
    """
    missing = []
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process was quicker
            folder.mkdir(mode=PRIVATE_DIR_MODE)
            if CHMOD:
                os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode went through the umask


def tighten_dir(path: Path) -> None:
    """An existing folder of ours (made under someone else's umask) loses group and other
    access; one that is not ours is left for ``doctor`` to report."""
    if not CHMOD:
        return
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & GROUP_AND_OTHER:
            os.chmod(path, mode & ~GROUP_AND_OTHER)


def read_regular(path: Path, *, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them.

    Raises:
        FileNotFoundError: there is no such file.
        ConfigError: anything else (not a regular file, unreadable, larger than ``limit``),
            the message naming ``path``.
    """
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ConfigError(f"{path} is not a regular file")
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ConfigError(f"{path} is larger than {limit >> 20} MiB")
    return data


def make_private_file(path: Path, *, create: bool = True) -> None:
    """Create ``path`` empty as 0600 if missing (and ``create``); an existing file loses group
    and other access.

    An existing file is never opened: closing any descriptor of a file drops every POSIX lock
    this process holds on it, and SQLite holds such locks on its database
    (https://sqlite.org/howtocorrupt.html, section 2.2).

    Raises:
        OSError: the file could not be created.
    """
    if create:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
            return
        except FileExistsError:
            pass
    if not CHMOD:
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & GROUP_AND_OTHER:
            os.chmod(path, mode & ~GROUP_AND_OTHER)
    except (FileNotFoundError, PermissionError):
        pass  # not there, or someone else's file: doctor says so


def private_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open`: a new file is 0600, an existing one loses others' access.

    Only regular files change mode (never a terminal or a pipe given as an output), and only
    those this user may change.
    """
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    if CHMOD:
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) & GROUP_AND_OTHER:
            with contextlib.suppress(PermissionError):  # someone else's file: doctor says so
                os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd


def atomic_write(path: Path, data: bytes, *, mode: int = 0o600, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never half.
    ``durable``: wait until the disk holds it (an fsync, which a busy disk can take a tenth of
    a second or more over); without, a power cut may leave the old file, or on some file
    systems an empty one.

    Raises:
        ConfigError: the directory is not writable or the disk is full.
    """
    try:
        make_private_dir(path.parent)
        # mkstemp creates the temporary file 0600 whatever the umask: never readable by others.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise ConfigError(f"could not write {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock between processes (flock on POSIX, msvcrt on Windows).

    The lock file is created 0600, like everything else the app writes.
    """
    with open(path, "a+b", opener=private_opener) as handle:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
