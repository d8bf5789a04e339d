"""A person's desktop for end-to-end tests: an X display with a window manager and a system
tray, a D-Bus session and GNOME Keyring with a login password, as on a Debian desktop.

``DesktopSession`` starts Xvfb, openbox, trayer, a private session bus (whose activated
services, such as GNOME's password prompter ``gcr-prompter``, see the display) and
gnome-keyring-daemon unlocked with ``PASSWORD``. Every process runs in a group of its own with
its output in a file under the session's folder, never a pipe of the test's: a service the
bus starts later would hold a pipe open and hang the test. ``xdotool`` plays the person's
keyboard and finds windows by title.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.processes import stop_group

PASSWORD = "login-password"
TOOLS = (
    "Xvfb",
    "openbox",
    "trayer",
    "xdotool",
    "xwininfo",
    "dbus-daemon",
    "dbus-update-activation-environment",
    "gnome-keyring-daemon",
)
DESKTOP_MISSING = next(
    (
        f"needs {tool} (make test installs it)"
        for tool in TOOLS
        if shutil.which(tool) is None and not Path("/usr/bin", tool).exists()
    ),
    None,
)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.1)
    return value


class DesktopSession:
    """See the module docstring. ``env`` is what a program started in the session gets."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.display = ""
        self.logs = folder / "desktop-logs"
        self.env: dict[str, str] = {}
        self.tray_panel = ""  # trayer's window: tray icons are embedded in it
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> DesktopSession:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _start(self) -> None:
        self.logs.mkdir(mode=0o700, parents=True)
        private = {
            "HOME": self.folder / "home",
            "XDG_RUNTIME_DIR": self.folder / "runtime",
            "XDG_DATA_HOME": self.folder / "data",
            "XDG_CONFIG_HOME": self.folder / "config",
            "XDG_CACHE_HOME": self.folder / "cache",
        }
        for path in private.values():
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        dropped = ("PYTHON_KEYRING_BACKEND", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
        self.env = {k: v for k, v in os.environ.items() if k not in dropped}
        self.env |= {k: str(v) for k, v in private.items()}
        self.display = self._start_x()
        self.env |= {"DISPLAY": self.display, "QT_QPA_PLATFORM": "xcb"}
        self.start("openbox", ["--sm-disable"])
        self._start_tray()

        bus = self.start("dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        address_file = self.logs / "dbus-daemon.out"
        address = wait_for(lambda: address_file.read_text().strip(), "the session bus starts")
        self.env["DBUS_SESSION_BUS_ADDRESS"] = address.splitlines()[0]
        assert bus.poll() is None
        # Services the bus starts (gcr-prompter) need the display to show their windows.
        self.run("dbus-update-activation-environment", "DISPLAY", "XDG_RUNTIME_DIR", "HOME")
        self.start(
            "gnome-keyring-daemon",
            ["--foreground", "--unlock", "--components=secrets"],
            stdin_text=PASSWORD,
        )
        wait_for(self._secret_service_answers, "GNOME Keyring answers on the bus")

    def _start_x(self) -> str:
        """Xvfb on a display number it picks itself (a fixed number races a display that is
        still going away); it writes the number once it accepts clients."""
        read_end, write_end = os.pipe()
        with (self.logs / "Xvfb.out").open("wb") as out:
            proc = subprocess.Popen(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write_end),
                    *("-screen", "0", "1280x800x24"),
                    "-nolisten",
                    "tcp",
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
                start_new_session=True,
            )
        self._stack.callback(stop_group, proc, grace=5)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as numbers:
            number = numbers.readline().strip().decode()
        if not number:
            raise RuntimeError(f"Xvfb did not start; see {self.logs / 'Xvfb.out'}")
        return f":{number}"

    def _start_tray(self) -> None:
        """trayer, the system tray. Now and then it exits at once while the window manager
        starts (seen under load, with nothing in its output); then it is started again."""
        for _ in range(3):
            tray = self.start(
                "trayer", ["--edge", "top", "--align", "right", "--SetDockType", "true"]
            )
            with contextlib.suppress(TimeoutError):
                wait_for(
                    lambda tray=tray: tray.poll() is not None or self.window_ids("^panel$"),
                    "trayer shows its panel",
                )
            panels = self.window_ids("^panel$")
            if tray.poll() is None and panels:
                self.tray_panel = panels[0]
                return
        raise RuntimeError(f"trayer did not show its panel; see {self.logs / 'trayer.out'}")

    def start(
        self, program: str, args: list[str], *, stdin_text: str | None = None
    ) -> subprocess.Popen[bytes]:
        """A program of the desktop, in a group of its own, ended with the session."""
        out = self.logs / f"{Path(program).name}.out"
        with out.open("wb") as stdout:
            proc = subprocess.Popen(
                [program, *args],
                stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        if stdin_text is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin_text.encode())
            proc.stdin.close()
        self._stack.callback(stop_group, proc, grace=5)
        return proc

    def run(self, *argv: str, check: bool = True, timeout: float = 20) -> str:
        """A short command in the session; its output (stdout and stderr) goes to a file."""
        out = self.logs / "commands.out"
        with out.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            result = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.env,
                timeout=timeout,
                check=False,
            )
        if check and result.returncode != 0:
            raise RuntimeError(f"{argv} failed ({result.returncode}); see {out}")
        return result.stdout.decode(errors="replace")

    def _secret_service_answers(self) -> bool:
        probe = self.keyring_python("import secretstorage; secretstorage.dbus_init()")
        return probe.returncode == 0

    def keyring_python(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=False,
        )

    # --- the keychain -----------------------------------------------------------------------

    def lock_keyring(self) -> None:
        result = self.keyring_python(
            "import secretstorage; c = secretstorage.dbus_init(); "
            "secretstorage.get_default_collection(c).lock()"
        )
        assert result.returncode == 0, result.stderr

    def keyring_locked(self) -> bool:
        result = self.keyring_python(
            "import secretstorage; c = secretstorage.dbus_init(); "
            "print(secretstorage.get_default_collection(c).is_locked())"
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.strip() == "True"

    def unlock_keyring(self, prompt_title: str = "^Unlock ") -> None:
        """The person unlocks their keyring for another program: its unlock prompt opens,
        they type their password and press Return."""
        asking = self.start(
            sys.executable,
            [
                "-c",
                "import secretstorage; c = secretstorage.dbus_init(); "
                "secretstorage.get_default_collection(c).unlock()",
            ],
        )
        prompt = self.window(prompt_title)
        self.type_text(prompt, PASSWORD)
        self.keys(prompt, "Return")
        wait_for(lambda: asking.poll() is not None, "the unlock prompt is answered")
        assert not self.keyring_locked()

    # --- windows and the keyboard -----------------------------------------------------------

    def window_ids(self, pattern: str, *, by: str = "name") -> list[str]:
        """Visible windows whose title (or class) matches the regular expression."""
        out = self.run("xdotool", "search", "--onlyvisible", f"--{by}", pattern, check=False)
        return out.split()

    def window(self, pattern: str, *, timeout: float = 20.0) -> str:
        ids = wait_for(lambda: self.window_ids(pattern), f"a window {pattern!r}", timeout)
        return str(ids[-1])

    def active_window(self) -> str:
        return self.run("xdotool", "getactivewindow", check=False).strip()

    def title(self, window: str) -> str:
        return self.run("xdotool", "getwindowname", window).strip()

    def keys(self, window: str, *keys: str) -> None:
        """The person brings ``window`` forward (a click on it) and presses ``keys``."""
        self.run("xdotool", "windowactivate", "--sync", window)
        self.run("xdotool", "key", "--clearmodifiers", "--delay", "120", *keys)

    def type_text(self, window: str, text: str) -> None:
        self.run("xdotool", "windowactivate", "--sync", window)
        self.run("xdotool", "type", "--delay", "40", text)

    def click(self, window: str, *, right: int, bottom: int) -> None:
        """A left click at a point given from the window's bottom-right corner."""
        shell = self.run("xdotool", "getwindowgeometry", "--shell", window)
        geometry = dict(line.split("=", 1) for line in shell.split())
        x, y = int(geometry["WIDTH"]) - right, int(geometry["HEIGHT"]) - bottom
        self.run("xdotool", "mousemove", "--window", window, str(x), str(y), "click", "1")

    def tray_holds(self, window_class: str) -> bool:
        """Whether an icon of a program with this window class sits in the tray."""
        tree = self.run("xwininfo", "-tree", "-id", self.tray_panel)
        return f'"{window_class}")' in tree
