"""Pack ``extension/`` into ``dist/tabrelay-extension-<version>.zip`` for the Chrome Web Store.

Only what the browser loads goes in: ``manifest.json``, ``src/`` and ``icons/`` (no tests, no
``package.json``, no dotfiles). The store refuses a manifest with a ``key`` (it assigns the
item's own), so the store zip leaves it out; ``--keep-key`` keeps it, for a zip people unpack
and load themselves, which then has the pinned id the app knows. Before writing, the packer
checks that the manifest's version is Tabrelay's, that every file the manifest names is in
the zip, that every module import resolves inside it, and that no private key slipped in.
The zip is reproducible: sorted entries, fixed timestamps and modes. Standard library only.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from product import EXTENSION, ROOT, version

SHIPPED_DIRS = ("src", "icons")
FORBIDDEN_SUFFIXES = {".pem", ".key", ".crx", ".map"}
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
_IMPORT = re.compile(r"""(?:^|\s)(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']""", re.M)
_BARE_IMPORT = re.compile(r"""^\s*import\s+["']([^"']+)["']""", re.M)


class PackError(Exception):
    """The extension cannot be packed as it is; the message says what to fix."""


def shipped_files(extension: Path = EXTENSION) -> list[PurePosixPath]:
    """The files the browser needs, relative to ``extension``, sorted."""
    found = [PurePosixPath("manifest.json")]
    for folder in SHIPPED_DIRS:
        for path in sorted((extension / folder).rglob("*")):
            relative = PurePosixPath(path.relative_to(extension).as_posix())
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                found.append(relative)
    return sorted(found)


def manifest(extension: Path = EXTENSION) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((extension / "manifest.json").read_text(encoding="utf-8"))
    return data


def _named_by_manifest(data: dict[str, Any]) -> Iterator[str]:
    background = data.get("background", {})
    if "service_worker" in background:
        yield background["service_worker"]
    action = data.get("action", {})
    if "default_popup" in action:
        yield action["default_popup"]
    yield from action.get("default_icon", {}).values()
    if "page" in data.get("options_ui", {}):
        yield data["options_ui"]["page"]
    yield from data.get("icons", {}).values()


def _imports(text: str) -> Iterator[str]:
    yield from _IMPORT.findall(text)
    yield from _BARE_IMPORT.findall(text)


def check(extension: Path = EXTENSION, *, expected_version: str | None = None) -> None:
    """Refuse to pack an extension that would not load, or that says another version.

    Raises:
        PackError: what is wrong, in one sentence.
    """
    data = manifest(extension)
    wanted = expected_version or version()
    if data.get("version") != wanted:
        raise PackError(
            f"extension/manifest.json says version {data.get('version')!r}, Tabrelay is "
            f"{wanted!r}: set both to the same (desktop/tabrelay/__init__.py is the source)"
        )
    files = set(shipped_files(extension))
    for name in _named_by_manifest(data):
        if PurePosixPath(name) not in files:
            raise PackError(f"manifest.json names {name}, which would not be in the zip")
    for path in sorted(files):
        if path.suffix in FORBIDDEN_SUFFIXES:
            raise PackError(f"{path} must not be shipped (keys, packed crx and maps stay out)")
        if path.suffix in {".js", ".mjs"}:
            text = (extension / path).read_text(encoding="utf-8")
            for target in _imports(text):
                if not target.startswith("."):
                    raise PackError(f"{path} imports {target!r}: the extension has no bundler")
                resolved = _normalise(path.parent / target)
                if resolved not in files:
                    raise PackError(f"{path} imports {target}, which would not be in the zip")
        text_file = path.suffix in {".js", ".json", ".html"}
        if text_file and "PRIVATE KEY" in (extension / path).read_text(encoding="utf-8"):
            raise PackError(f"{path} contains a private key")


def _normalise(path: PurePosixPath) -> PurePosixPath:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePosixPath(*parts)


def zip_bytes(extension: Path = EXTENSION, *, keep_key: bool = False) -> bytes:
    """The zip's bytes: the manifest first (without ``key`` unless asked), then the files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for relative in shipped_files(extension):
            if relative == PurePosixPath("manifest.json"):
                data = manifest(extension)
                if not keep_key:
                    data.pop("key", None)
                content = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
            else:
                content = (extension / relative).read_bytes()
            info = zipfile.ZipInfo(str(relative), date_time=ZIP_TIME)
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, content)
    return buffer.getvalue()


def zip_name(the_version: str, *, keep_key: bool = False) -> str:
    suffix = "-unpacked" if keep_key else ""
    return f"tabrelay-extension-{the_version}{suffix}.zip"


def pack(out_dir: Path, *, keep_key: bool = False, extension: Path = EXTENSION) -> Path:
    """Check the extension and write its zip into ``out_dir``; the zip's path.

    Raises:
        PackError: the extension cannot be packed as it is.
    """
    the_version = version()
    check(extension, expected_version=the_version)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / zip_name(the_version, keep_key=keep_key)
    target.write_bytes(zip_bytes(extension, keep_key=keep_key))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (dist/)")
    parser.add_argument(
        "--keep-key",
        action="store_true",
        help="keep the manifest key (a zip to load unpacked, not for the store)",
    )
    args = parser.parse_args(argv)
    try:
        target = pack(args.out, keep_key=args.keep_key)
    except PackError as exc:
        print(f"pack_extension: {exc}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(target) as zf:
        count = len(zf.namelist())
    print(f"wrote {target} ({count} files, {target.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
