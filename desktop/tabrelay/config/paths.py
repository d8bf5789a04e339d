"""Where Tabrelay keeps its files, and the keychain namespace it uses.

``TABRELAY_HOME=DIR`` puts everything under DIR and namespaces the keychain entries, so tests
and portable installs never touch the person's real install (DESIGN §12). The app's folders
are private to their owner; ``tighten`` closes an older install, never reaching outside them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from tabrelay.config.files import CHMOD, GROUP_AND_OTHER

APP_NAME = "Tabrelay"
KEYRING_SERVICE = "tabrelay"
HOME_VARIABLE = "TABRELAY_HOME"


@dataclass(frozen=True, slots=True)
class Paths:
    config_dir: Path
    data_dir: Path
    log_dir: Path
    secrets_dir: Path
    keyring_service: str
    home: Path | None = None

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Paths:
        """The paths for this process: ``TABRELAY_HOME`` if set, else the platform's dirs."""
        env = os.environ if env is None else env
        home = env.get(HOME_VARIABLE)
        if home:
            root = Path(home).expanduser().resolve()
            digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:12]
            return cls(
                config_dir=root / "config",
                data_dir=root / "data",
                log_dir=root / "logs",
                secrets_dir=root / "secrets",
                keyring_service=f"{KEYRING_SERVICE}-{digest}",
                home=root,
            )
        config_dir = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
        return cls(
            config_dir=config_dir,
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
            secrets_dir=config_dir / "secrets",
            keyring_service=KEYRING_SERVICE,
        )

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def command_log_file(self) -> Path:
        return self.data_dir / "commands.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "tabrelay.log"

    @property
    def secrets_file(self) -> Path:
        return self.secrets_dir / "secrets.json"

    @property
    def instance_file(self) -> Path:
        """Written by a running app: its pid and ports, for the CLI and a second launch."""
        return self.data_dir / "instance.json"

    @property
    def recipes_dir(self) -> Path:
        """Saved recipes, one readable JSON file each (``recipes/store.py``)."""
        return self.data_dir / "recipes"

    @property
    def downloads_dir(self) -> Path:
        """Where files agents' actions downloaded are kept, unless the settings name a folder."""
        return self.data_dir / "downloads"

    @property
    def recordings_dir(self) -> Path:
        """The agent sessions and demonstrations being recorded (``recipes/recorder.py``)."""
        return self.recipes_dir / "recordings"

    @property
    def own_dirs(self) -> tuple[Path, ...]:
        """The folders that hold Tabrelay's files and nothing else, none inside another."""
        dirs = [self.config_dir, self.data_dir, self.log_dir, self.secrets_dir]
        return tuple(
            d
            for i, d in enumerate(dirs)
            if d not in dirs[:i] and not any(d != o and d.is_relative_to(o) for o in dirs)
        )

    def tighten(self) -> None:
        """Take group and other access from everything in the app's folders (an older install,
        a file someone widened); what cannot be changed is left for ``doctor`` to report."""
        self._walk(fix=True)

    def find_loose(self) -> list[Path]:
        """The folders and files in the app's folders that users other than the owner may use."""
        return self._walk(fix=False)

    def _walk(self, *, fix: bool) -> list[Path]:
        """What others may use; with ``fix``, only what could not be tightened."""
        if not CHMOD:
            return []
        loose: list[Path] = []
        for path, mode, target, dir_fd in self._entries():
            if not stat.S_IMODE(mode) & GROUP_AND_OTHER:
                continue
            if fix:
                try:
                    os.chmod(target, stat.S_IMODE(mode) & ~GROUP_AND_OTHER, dir_fd=dir_fd)
                    continue
                except OSError:
                    pass  # someone else's: left for doctor to report
            loose.append(path)
        return loose

    def _entries(self) -> Iterator[tuple[Path, int, int | str | Path, int | None]]:
        """Each folder and regular file of the app: its path, mode, and what to chmod (in
        ``dir_fd``), valid until the next one is asked for."""
        if self.home is not None:
            # The home itself, not what else may be in it: the app's folders are walked below.
            # A sticky folder (/tmp) is shared by design, never ours to close.
            with contextlib.suppress(OSError):
                home = self.home.lstat()
                if stat.S_ISDIR(home.st_mode) and not home.st_mode & stat.S_ISVTX:
                    yield self.home, home.st_mode, self.home, None
        # The secret store repairs its own file and tells the person to rotate what may have
        # leaked (config/secrets.py): tightening it here first would hide that.
        secrets_file = self.secrets_file.resolve()
        for top in self.own_dirs:
            # An app folder that is a symlink was put there on purpose: walk where it points.
            # Symlinks inside are never followed (fwalk does not descend into them, files are
            # checked with lstat): they may point anywhere.
            with contextlib.suppress(OSError):  # not created yet, or unreadable
                for folder, _dirs, files, fd in os.fwalk(top.resolve(), follow_symlinks=False):
                    yield Path(folder), os.fstat(fd).st_mode, fd, None
                    for name in files:
                        try:
                            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                        except OSError:
                            continue  # gone meanwhile
                        path = Path(folder, name)
                        if stat.S_ISREG(mode) and path != secrets_file:
                            yield path, mode, name, fd
