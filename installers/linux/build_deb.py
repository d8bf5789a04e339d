"""Build ``dist/tabrelay_<version>_<arch>.deb`` from the PyInstaller bundle (``make deb``).

The package holds the onedir bundle under ``/opt/tabrelay`` (with ``/opt/tabrelay/extension``
pointing at the unpacked extension inside it), ``/usr/bin/tabrelay`` linking to its
executable, a menu entry rendered from ``resources/linux/tabrelay.desktop.in`` and the app
icon in the hicolor theme. No maintainer scripts: dpkg's triggers refresh the menu and icon
caches, and nothing runs as root at install time (THREATS I4). Every file is root-owned,
0644 or 0755 (THREATS I1). ``Depends`` lists the Qt runtime libraries from the Makefile's
``APT_RUN`` and the C library the bundle was built against. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from product import (
    APP_NAME,
    CLI_EXECUTABLE,
    DEB_COMMAND,
    DEB_INSTALL_DIR,
    ICON_SIZES,
    PACKAGE,
    RESOURCES,
    ROOT,
    SUMMARY,
    version,
)

DEFAULT_BUNDLE = ROOT / "dist" / PACKAGE
DESKTOP_TEMPLATE = RESOURCES / "linux" / "tabrelay.desktop.in"
MAKEFILE = ROOT / "Makefile"
DEFAULT_MAINTAINER = "Tabrelay maintainers <maintainers@tabrelay.invalid>"
# dpkg-deb's compressors and the level a release uses (xz -6: 63 MB in about 70 s on two
# cores; gzip -1 is what the tests use, in a few seconds).
COMPRESSIONS = {"xz": 6, "gzip": 9, "zstd": 19, "none": 0}
DESCRIPTION = f"""{SUMMARY}
 Tabrelay is a tray app that lets AI agents (MCP clients such as Claude, Cursor
 or VS Code) use the browser you already have open, through the Tabrelay
 browser extension, while you stay in control: it listens on 127.0.0.1 only,
 authenticates every connection, keeps its secrets in your keychain, logs every
 command and asks you before an agent acts on a page.
 .
 The unpacked browser extension is in {DEB_INSTALL_DIR}/extension."""


class BuildError(Exception):
    """The package cannot be built; the message says why."""


def apt_run_packages(makefile: Path = MAKEFILE) -> list[str]:
    """The Makefile's ``APT_RUN`` list: the system libraries Qt needs to show the tray.

    Raises:
        BuildError: the Makefile has no ``APT_RUN :=`` assignment.
    """
    text = makefile.read_text(encoding="utf-8").replace("\\\n", " ")
    match = re.search(r"^APT_RUN\s*:?=(.*)$", text, re.MULTILINE)
    if match is None:
        raise BuildError(f"no APT_RUN := … line in {makefile}")
    return match.group(1).split()


def architecture() -> str:
    return _output(["dpkg", "--print-architecture"])


def libc_dependency() -> str:
    """``libc6 (>= X.Y)``: the bundle's Python and bootloader need the build host's glibc."""
    found = _output(["dpkg-query", "-W", "-f=${Version}", "libc6"])
    upstream = re.match(r"(?:\d+:)?(\d+\.\d+)", found)
    if upstream is None:
        raise BuildError(f"cannot read the libc6 version from {found!r}")
    return f"libc6 (>= {upstream.group(1)})"


def control(*, the_version: str, arch: str, installed_kib: int, depends: list[str]) -> str:
    maintainer = DEFAULT_MAINTAINER
    if os.environ.get("DEBEMAIL"):
        name = os.environ.get("DEBFULLNAME", APP_NAME)
        maintainer = f"{name} <{os.environ['DEBEMAIL']}>"
    return (
        f"Package: {PACKAGE}\n"
        f"Version: {the_version}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: {maintainer}\n"
        f"Installed-Size: {installed_kib}\n"
        f"Depends: {', '.join(depends)}\n"
        "Section: web\n"
        "Priority: optional\n"
        f"Description: {DESCRIPTION}\n"
    )


def desktop_entry() -> str:
    """The menu entry: the packagers' template with the installed command and theme icon."""
    template = DESKTOP_TEMPLATE.read_text(encoding="utf-8")
    return (
        template.replace("@EXEC@", DEB_COMMAND)
        .replace("@TRYEXEC@", DEB_COMMAND)
        .replace("@ICON@", PACKAGE)
    )


def copyright_text() -> str:
    return (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {APP_NAME}\n"
        "\n"
        "Files: *\n"
        f"Copyright: {APP_NAME} authors\n"
        "License: MIT\n"
        "\n"
        f"Files: {DEB_INSTALL_DIR.lstrip('/')}/_internal/*\n"
        "Copyright: the authors of Python, Qt for Python and the other bundled libraries\n"
        "License: various\n"
        " Each bundled Python distribution keeps its licence in its *.dist-info folder.\n"
    )


def stage(bundle: Path, root: Path) -> None:
    """Lay the package's files out under ``root`` (the future ``/``)."""
    executable = bundle / CLI_EXECUTABLE
    if not (executable.is_file() and os.access(executable, os.X_OK)):
        raise BuildError(f"{executable} is missing: build the bundle first (make dist)")
    install_dir = root / DEB_INSTALL_DIR.lstrip("/")
    install_dir.parent.mkdir(parents=True)
    shutil.copytree(bundle, install_dir, symlinks=True)
    if (install_dir / "_internal" / "extension").is_dir():
        (install_dir / "extension").symlink_to(Path("_internal") / "extension")

    command = root / DEB_COMMAND.lstrip("/")
    command.parent.mkdir(parents=True)
    command.symlink_to(f"{DEB_INSTALL_DIR}/{CLI_EXECUTABLE}")

    applications = root / "usr" / "share" / "applications"
    applications.mkdir(parents=True)
    (applications / f"{PACKAGE}.desktop").write_text(desktop_entry(), encoding="utf-8")

    hicolor = root / "usr" / "share" / "icons" / "hicolor"
    for size in ICON_SIZES:
        target = hicolor / f"{size}x{size}" / "apps" / f"{PACKAGE}.png"
        target.parent.mkdir(parents=True)
        shutil.copyfile(RESOURCES / "icons" / f"{PACKAGE}-{size}.png", target)
    scalable = hicolor / "scalable" / "apps" / f"{PACKAGE}.svg"
    scalable.parent.mkdir(parents=True)
    shutil.copyfile(RESOURCES / "icons" / f"{PACKAGE}.svg", scalable)

    doc = root / "usr" / "share" / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_text(), encoding="utf-8")
    normalise_modes(root)


def normalise_modes(root: Path) -> None:
    """Directories 0755, files 0755 when executable else 0644; links untouched."""
    for folder, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o755)
        for name in filenames:
            path = Path(folder) / name
            if path.is_symlink():
                continue
            executable = path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            path.chmod(0o755 if executable else 0o644)
    root.chmod(0o755)


def installed_size_kib(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            total += path.lstat().st_size
    return (total + 1023) // 1024


def build(
    *,
    bundle: Path = DEFAULT_BUNDLE,
    out_dir: Path = ROOT / "dist",
    compression: str = "xz",
    level: int | None = None,
    work_dir: Path | None = None,
) -> Path:
    """Build the package from ``bundle`` into ``out_dir``; the .deb's path.

    Raises:
        BuildError: the bundle is missing, or a Debian tool failed.
    """
    if shutil.which("dpkg-deb") is None:
        raise BuildError("dpkg-deb is missing: this builds Debian packages on Debian or Ubuntu")
    the_version = version()
    arch = architecture()
    depends = [libc_dependency(), *apt_run_packages()]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{PACKAGE}_{the_version}_{arch}.deb"
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="deb-") as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        stage(bundle, root)
        (root / "DEBIAN").mkdir(mode=0o755)
        text = control(
            the_version=the_version,
            arch=arch,
            installed_kib=installed_size_kib(root),
            depends=depends,
        )
        (root / "DEBIAN" / "control").write_text(text, encoding="utf-8")
        (root / "DEBIAN" / "control").chmod(0o644)
        command = ["dpkg-deb", "--root-owner-group", f"-Z{compression}"]
        if compression != "none":
            command.append(f"-z{COMPRESSIONS[compression] if level is None else level}")
        subprocess.run([*command, "--build", str(root), str(target)], check=True)
    return target


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"{' '.join(command)} failed: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="dist/tabrelay")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (dist/)")
    parser.add_argument("--compression", choices=sorted(COMPRESSIONS), default="xz")
    parser.add_argument("--level", type=int, help="compression level (default: per compressor)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        target = build(
            bundle=args.bundle, out_dir=args.out, compression=args.compression, level=args.level
        )
    except (BuildError, subprocess.CalledProcessError) as exc:
        print(f"build_deb: {exc}", file=sys.stderr)
        return 1
    size = target.stat().st_size / 2**20
    print(f"wrote {target} ({size:.0f} MiB, {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
