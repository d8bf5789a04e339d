"""Where Tabrelay keeps its files, and the keychain namespace it uses.

``TABRELAY_HOME=DIR`` puts everything under DIR and namespaces the keychain entries, so tests
and portable installs never touch the person's real install (DESIGN §12).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

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
