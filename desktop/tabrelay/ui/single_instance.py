"""One tray app per person and Tabrelay home: a second launch shows the first one's dashboard.

The first app listens on a local socket (a Unix socket only its user may use, or a named pipe
on Windows) named after the user and the config directory; a second launch connects, says
``show`` and exits. A socket left behind by a crash is detected (nobody answers) and replaced.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import os

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from tabrelay.config.paths import Paths

logger = logging.getLogger(__name__)

SHOW = b"show\n"
CONNECT_TIMEOUT_MS = 1000


def instance_name(paths: Paths) -> str:
    digest = hashlib.sha256(str(paths.config_dir).encode("utf-8")).hexdigest()[:12]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    safe = "".join(c for c in user if c.isalnum()) or "user"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        # The person's own runtime dir (0700) rather than the shared /tmp.
        return os.path.join(runtime, f"tabrelay-{digest}.sock")
    return f"tabrelay-{safe}-{digest}"


def ask_running_instance_to_show(name: str, *, timeout_ms: int = CONNECT_TIMEOUT_MS) -> bool:
    """Tell a running app to show its dashboard; ``False`` if none answers."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(SHOW)
    socket.flush()
    answered = socket.waitForReadyRead(timeout_ms) and bytes(socket.readAll().data()).startswith(
        b"ok"
    )
    socket.disconnectFromServer()
    return bool(answered)


class InstanceServer(QObject):
    """Listens for later launches; ``show_requested`` when one asks."""

    show_requested = Signal()

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._connected)

    def listen(self) -> bool:
        """Start listening; ``False`` if another live app already does."""
        # Ask first: with UserAccessOption, Qt's listen() replaces a live socket silently.
        if ask_running_instance_to_show(self.name, timeout_ms=500):
            return False
        QLocalServer.removeServer(self.name)  # left behind by a crash
        if not self.server.listen(self.name):
            # Run anyway: only the "bring up the dashboard" convenience is lost.
            logger.warning("cannot listen for second launches: %s", self.server.errorString())
        return True

    def close(self) -> None:
        self.server.close()

    @Slot()
    def _connected(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(SHOW.strip()):
            socket.write(b"ok\n")
            socket.flush()
            self.show_requested.emit()
