"""Launching Debian's Chromium with the unpacked Tabrelay extension and a fresh profile.

Flags are the ones ENVIRONMENT.md checked for root and headless. The browser runs in its own
process group, which ``stop`` ends as a whole; the profile is a temporary directory removed
afterwards. ``--remote-debugging-port=0`` gives the tests their own CDP connection.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from support.processes import log_tail, stop_group

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "extension"
# The id Chromium derives from the manifest's pinned "key"; test_extension_manifest.py checks it.
EXTENSION_ID = "eoaagjoooodkomhaagnbdmknnndlhkmk"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# Other sites for the pages (pay-e2e.test, verify-e2e.test…) on the tests' page server: each its
# own site, so its frames run in processes of their own, as a payment provider's do.
HOST_RULES = "--host-resolver-rules=MAP *-e2e.test 127.0.0.1"


def chromium_path() -> str | None:
    """Debian's Chromium, or ``None`` when it is not installed."""
    override = os.environ.get("TABRELAY_CHROMIUM")
    for candidate in (override, *CHROMIUM_CANDIDATES):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def extension_id_from_key(key_b64: str) -> str:
    """Chromium's id for an extension key: sha256 of the DER key, first 32 hex digits as a–p."""
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def manifest() -> dict[str, object]:
    return json.loads((EXTENSION_DIR / "manifest.json").read_text(encoding="utf-8"))


class Chromium:
    """One headless Chromium process with the extension loaded."""

    def __init__(self, binary: str, *, extension_dir: Path = EXTENSION_DIR) -> None:
        self.binary = binary
        self.extension_dir = extension_dir
        self.profile = Path(tempfile.mkdtemp(prefix="tabrelay-e2e-profile-"))
        self.log_path = self.profile.parent / f"{self.profile.name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.devtools_url = ""

    def argv(self) -> list[str]:
        extension = str(self.extension_dir)
        return [
            self.binary,
            "--headless=new",
            "--no-sandbox",
            f"--user-data-dir={self.profile}",
            f"--load-extension={extension}",
            f"--disable-extensions-except={extension}",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
            "--window-size=1280,800",
            "--enable-features=WebMCP",  # pages may declare tools (document.modelContext)
            HOST_RULES,
            "about:blank",
        ]

    async def start(self, *, timeout: float = 20.0) -> str:
        """Launch and return the browser's DevTools WebSocket URL."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.argv(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, ended as a whole in stop()
            )
        active_port_file = self.profile / "DevToolsActivePort"
        async with asyncio.timeout(timeout):
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"Chromium exited early: {self.log_tail()}")
                with contextlib.suppress(FileNotFoundError, ValueError):
                    lines = active_port_file.read_text().splitlines()
                    if len(lines) >= 2:
                        self.devtools_url = f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
                        return self.devtools_url
                await asyncio.sleep(0.05)

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)

    async def stop(self) -> None:
        if self.process is not None:
            await asyncio.to_thread(stop_group, self.process, grace=10)
        shutil.rmtree(self.profile, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            self.log_path.unlink()
