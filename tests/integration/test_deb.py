"""The Debian package, built for real: PyInstaller, then installers/linux/build_deb.py.

Built once for the module (about a minute), extracted into a temporary root with
``dpkg-deb -x`` (never installed on this machine), then checked the way a person would meet
it: what dpkg says about it, where its files land and with which owners and modes, the menu
entry, the icons, ``tabrelay --version``, ``tabrelay serve`` answering /healthz, the tray app
starting offscreen, and the keychain: the Secret Service when one runs, a 0600 file if not.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.installers import INSTALLERS, ROOT, load_installer_module
from support.keychain import SECRET_SERVICE_MISSING, run_in_keyring_session
from tabrelay import __version__
from tabrelay.system import autostart, launcher, resources

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or shutil.which("dpkg-deb") is None,
        reason="builds a Debian package: needs Linux and dpkg-deb",
    ),
    pytest.mark.timeout(900),  # the module's first test also builds the bundle
]

product = load_installer_module("product")
build_deb = load_installer_module("linux/build_deb")
SPEC = INSTALLERS / "pyinstaller" / "tabrelay.spec"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


@dataclass(frozen=True)
class Package:
    deb: Path
    root: Path  # the extracted package: the future "/"
    build_seconds: float

    @property
    def install_dir(self) -> Path:
        return self.root / product.DEB_INSTALL_DIR.lstrip("/")

    @property
    def executable(self) -> Path:
        return self.install_dir / product.CLI_EXECUTABLE


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Package:
    pytest.importorskip("PyInstaller", reason="pip install -e '.[test]' installs PyInstaller")
    work = tmp_path_factory.mktemp("deb")
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "ERROR",
            "--distpath",
            str(work / "dist"),
            "--workpath",
            str(work / "build"),
            str(SPEC),
        ],
        check=True,
        timeout=600,
        cwd=ROOT,
    )
    out = work / "out"
    # gzip -1: a few seconds instead of xz's minute; the package is otherwise the release one.
    subprocess.run(
        [
            sys.executable,
            str(INSTALLERS / "linux" / "build_deb.py"),
            "--bundle",
            str(work / "dist" / product.PACKAGE),
            "--out",
            str(out),
            "--compression",
            "gzip",
            "--level",
            "1",
        ],
        check=True,
        timeout=300,
    )
    [deb] = out.glob("*.deb")
    root = work / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)
    shutil.rmtree(work / "build")  # PyInstaller's work files: 100 MB nobody reads again
    return Package(deb=deb, root=root, build_seconds=time.monotonic() - started)


def field(deb: Path, name: str) -> str:
    return subprocess.run(
        ["dpkg-deb", "-f", str(deb), name], check=True, capture_output=True, text=True
    ).stdout.strip()


def make_variable(name: str) -> list[str]:
    """A Makefile variable as make evaluates it."""
    database = subprocess.run(
        ["make", "-pRrq", "-f", str(ROOT / "Makefile"), "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    line = next(line for line in database.splitlines() if line.startswith(f"{name} :="))
    return line.split(":=", 1)[1].split()


# --- what dpkg sees -------------------------------------------------------------------------


def test_the_package_is_named_versioned_and_built_for_this_machine(package: Package) -> None:
    assert package.deb.name == f"tabrelay_{__version__}_{build_deb.architecture()}.deb"
    assert field(package.deb, "Package") == "tabrelay"
    assert field(package.deb, "Version") == __version__
    assert field(package.deb, "Architecture") == build_deb.architecture()
    assert field(package.deb, "Maintainer")
    assert field(package.deb, "Description").startswith(product.SUMMARY)
    installed = int(field(package.deb, "Installed-Size"))
    extracted = sum(p.lstat().st_size for p in package.root.rglob("*") if not p.is_dir())
    assert abs(installed - extracted / 1024) < 1024  # KiB, give or take block rounding


def test_the_package_depends_on_the_qt_runtime_libraries_and_this_glibc(package: Package) -> None:
    depends = [d.strip() for d in field(package.deb, "Depends").split(",")]
    if shutil.which("make"):
        for library in make_variable("APT_RUN"):
            assert library in depends
    assert {"libegl1", "libxkbcommon-x11-0", "libxcb-cursor0", "libdbus-1-3"} <= set(depends)
    assert any(re.fullmatch(r"libc6 \(>= \d+\.\d+\)", d) for d in depends)


def test_apt_can_install_it_here(package: Package) -> None:
    if shutil.which("apt-get") is None:
        pytest.skip("needs apt-get")
    result = subprocess.run(
        ["apt-get", "--simulate", "--no-install-recommends", "install", str(package.deb)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(rf"^Inst tabrelay \({re.escape(__version__)} ", result.stdout, re.M)


def test_nothing_runs_as_root_at_install_time(package: Package) -> None:
    info = subprocess.run(
        ["dpkg-deb", "--info", str(package.deb)], check=True, capture_output=True, text=True
    ).stdout
    for script in ("preinst", "postinst", "prerm", "postrm", "config"):
        assert not re.search(rf"^\s+\d+ bytes,\s+\d+ lines\s+\*?\s*{script}\b", info, re.M)


def test_every_file_is_root_owned_and_none_is_writable_by_others(package: Package) -> None:
    listing = subprocess.run(
        ["dpkg-deb", "--contents", str(package.deb)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert len(listing) > 100
    for line in listing:
        mode, owner = line.split()[:2]
        assert owner == "root/root", line
        if mode.startswith("l"):
            continue  # a symlink's own mode means nothing
        assert mode[5] != "w" and mode[8] != "w", line  # THREATS I1
        assert mode in ("drwxr-xr-x", "-rwxr-xr-x", "-rw-r--r--"), line
    for path in package.root.rglob("*"):
        if not path.is_symlink():
            assert path.lstat().st_mode & 0o022 == 0, path


# --- where things land ----------------------------------------------------------------------


def test_the_bundle_is_in_opt_and_the_command_on_the_path(package: Package) -> None:
    assert package.executable.is_file() and os.access(package.executable, os.X_OK)
    command = package.root / "usr" / "bin" / "tabrelay"
    assert command.is_symlink()
    assert os.readlink(command) == "/opt/tabrelay/tabrelay"
    assert (package.install_dir / "_internal" / "resources" / "icons" / "tabrelay.svg").is_file()
    extension = package.install_dir / "extension"
    assert extension.is_symlink() and os.readlink(extension) == "_internal/extension"
    manifest = json.loads((extension / "manifest.json").read_text())
    assert manifest["version"] == __version__
    assert (package.root / "usr" / "share" / "doc" / "tabrelay" / "copyright").is_file()
    outside = {p.relative_to(package.root).parts[:2] for p in package.root.rglob("*")}
    assert {parts[0] for parts in outside} == {"opt", "usr"}


def test_the_app_icon_is_in_the_hicolor_theme_at_every_size(package: Package) -> None:
    icons = load_installer_module("icons")
    hicolor = package.root / "usr" / "share" / "icons" / "hicolor"
    for size in product.ICON_SIZES:
        png = hicolor / f"{size}x{size}" / "apps" / "tabrelay.png"
        assert icons.png_size(png.read_bytes()) == (size, size)
    svg = (hicolor / "scalable" / "apps" / "tabrelay.svg").read_text()
    assert svg.lstrip().startswith(("<svg", "<?xml"))


def test_the_menu_entry_is_valid_and_starts_the_installed_command(package: Package) -> None:
    entry = package.root / "usr" / "share" / "applications" / "tabrelay.desktop"
    text = entry.read_text(encoding="utf-8")
    lines = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert text.startswith("[Desktop Entry]\n")
    assert lines["Type"] == "Application" and lines["Name"] == "Tabrelay"
    assert lines["Exec"] == "/usr/bin/tabrelay"
    assert lines["Icon"] == "tabrelay"  # the hicolor name, so every size is used
    assert lines["Terminal"] == "false"
    validator = shutil.which("desktop-file-validate")
    if validator:
        result = subprocess.run(
            [validator, str(entry)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "error" not in result.stdout.lower()


# --- the installed program --------------------------------------------------------------------


def frozen_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return env | {"TABRELAY_HOME": str(home)} | extra


def test_the_installed_command_reports_the_version_also_through_a_symlink(
    package: Package, tmp_path: Path
) -> None:
    direct = subprocess.run(
        [str(package.executable), "--version"], capture_output=True, text=True, timeout=60
    )
    assert (direct.returncode, direct.stdout) == (0, f"tabrelay {__version__}\n")
    # /usr/bin/tabrelay is a symlink: the bundle must find _internal/ through one.
    link = tmp_path / "bin" / "tabrelay"
    link.parent.mkdir()
    link.symlink_to(package.executable)
    through = subprocess.run([str(link), "--version"], capture_output=True, text=True, timeout=60)
    assert (through.returncode, through.stdout) == (0, f"tabrelay {__version__}\n")


@contextlib.contextmanager
def running(command: list[str], env: Mapping[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        command, env=dict(env), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(STOP_TIMEOUT)
        if process.stderr:
            process.stderr.close()


def read_line_matching(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    """Read stderr lines until one matches, within START_TIMEOUT."""
    assert process.stderr is not None
    deadline = time.monotonic() + START_TIMEOUT
    seen = []
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stderr], [], [], left)
        if not ready:
            break
        line = process.stderr.readline()
        if not line:
            break  # it exited
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match
    raise AssertionError(f"no line matching {pattern!r} within {START_TIMEOUT} s: {seen}")


def wait_for_instance(home: Path, process: subprocess.Popen[str]) -> dict[str, int]:
    """The running app's instance.json, polled until it appears (bounded)."""
    path = home / "data" / "instance.json"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            info: dict[str, int] = json.loads(path.read_text())
            if info.get("relay_port"):
                return info
        time.sleep(0.05)
    raise AssertionError(f"no {path} within {START_TIMEOUT} s (exit code {process.poll()})")


def healthz(port: int) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
        answer: dict[str, object] = json.loads(reply.read())
    return answer


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(STOP_TIMEOUT)


def ports_zero(home: Path) -> None:
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.json").write_text(json.dumps({"relay_port": 0, "mcp_port": 0}))


def test_serve_from_the_installed_bundle_answers_healthz(package: Package, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ports_zero(home)
    # No keychain here (tests/conftest.py picks keyring's fail backend): the 0600 file.
    with running([str(package.executable), "serve"], frozen_env(home)) as process:
        match = read_line_matching(process, r"serving relay on ws://127\.0\.0\.1:(\d+)/")
        port = int(match.group(1))
        assert healthz(port) == {"status": "ok", "version": __version__, "browsers": 0}
        instance = wait_for_instance(home, process)
        assert (instance["pid"], instance["relay_port"]) == (process.pid, port)
        mcp = urllib.request.Request(f"http://127.0.0.1:{instance['mcp_port']}/mcp", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(mcp, timeout=5)
        assert refused.value.code == 401  # the MCP endpoint is up, and locked
        assert stop(process) == 0
    paired = subprocess.run(
        [str(package.executable), "pair", "add"],
        env=frozen_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert paired.returncode == 0, paired.stderr
    secrets = home / "secrets" / "secrets.json"
    assert secrets.stat().st_mode & 0o777 == 0o600


def rpc(process: subprocess.Popen[str], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def read_reply(process: subprocess.Popen[str]) -> dict[str, object]:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
    assert ready, f"no reply on stdout within {START_TIMEOUT} s"
    reply: dict[str, object] = json.loads(process.stdout.readline())
    return reply


def test_an_mcp_client_gets_the_tools_through_the_installed_stdio_bridge(
    package: Package, tmp_path: Path
) -> None:
    import psutil

    home = tmp_path / "home"
    ports_zero(home)
    env = frozen_env(home)
    added = subprocess.run(
        [str(package.executable), "client", "add", "probe"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    # Nothing runs yet: the bridge starts the bundle's own `tabrelay serve` in the background.
    bridge = subprocess.Popen(
        [str(package.executable), "mcp-stdio", "--client", "probe"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        client_info = {"name": "probe", "version": "1"}
        rpc(
            bridge,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": client_info,
                },
            },
        )
        assert read_reply(bridge)["id"] == 1
        rpc(bridge, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        rpc(bridge, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = read_reply(bridge)
        tools = {tool["name"] for tool in listed["result"]["tools"]}  # type: ignore[index]
        assert {"browser_status", "browser_snapshot", "browser_click"} <= tools
        served = json.loads((home / "data" / "instance.json").read_text())
        assert Path(psutil.Process(served["pid"]).exe()) == package.executable  # itself
    finally:
        assert bridge.stdin is not None
        bridge.stdin.close()
        bridge.wait(STOP_TIMEOUT)
        with contextlib.suppress(OSError, ValueError, KeyError, psutil.Error):
            headless = psutil.Process(
                json.loads((home / "data" / "instance.json").read_text())["pid"]
            )
            headless.terminate()
            headless.wait(STOP_TIMEOUT)


def test_the_tray_app_starts_from_the_installed_bundle(package: Package, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ports_zero(home)
    env = frozen_env(home, QT_QPA_PLATFORM="offscreen")
    with running([str(package.executable)], env) as process:
        instance = wait_for_instance(home, process)
        assert healthz(instance["relay_port"])["status"] == "ok"
        assert stop(process) == 0
    log = (home / "logs" / "tabrelay.log").read_text()
    assert "Tabrelay ready in" in log
    assert "Traceback" not in log


@pytest.mark.keychain
def test_the_bundle_keeps_tokens_in_the_secret_service_when_one_runs(
    package: Package, tmp_path: Path
) -> None:
    if SECRET_SERVICE_MISSING is not None:
        pytest.skip(SECRET_SERVICE_MISSING)
    home = tmp_path / "home"
    exe = package.executable
    result = run_in_keyring_session(
        f'"{exe}" client add cursor >/dev/null\n"{exe}" doctor || true',
        env=frozen_env(home),
        folder=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "[ok  ] secrets: keychain SecretService.Keyring" in result.stdout
    assert not (home / "secrets").exists()


def test_the_bundle_falls_back_to_a_private_file_without_a_keychain(
    package: Package, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = {
        k: v
        for k, v in frozen_env(home).items()
        if k not in ("PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS")
    } | {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    for command in (["client", "add", "probe"], ["doctor"]):
        result = subprocess.run(
            [str(package.executable), *command], env=env, capture_output=True, text=True, timeout=60
        )
    assert "[WARN] secrets: file" in result.stdout, result.stdout + result.stderr
    assert (home / "secrets" / "secrets.json").stat().st_mode & 0o777 == 0o600
    assert (home / "secrets").stat().st_mode & 0o777 == 0o700


def test_the_bundle_resolves_resources_and_autostart_to_itself(
    package: Package, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the frozen app computes: sys._MEIPASS is _internal/, sys.executable the bundle's.
    contents = package.install_dir / "_internal"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(contents), raising=False)
    monkeypatch.setattr(sys, "executable", str(package.executable))
    assert resources.resources_dir() == contents / "resources"
    assert resources.extension_dir() == contents / "extension"
    assert launcher.tabrelay_command() == [str(package.executable)]
    entry = autostart.Autostart(platform="linux", env={"XDG_CONFIG_HOME": str(tmp_path)})
    entry.set_enabled(True)
    text = Path(entry.location).read_text()
    assert f"Exec={package.executable}\n" in text
    assert f"Icon={contents / 'resources' / 'icons' / 'tabrelay-256.png'}\n" in text
