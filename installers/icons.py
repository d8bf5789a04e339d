"""The Windows ``.ico`` and the macOS ``.icns`` of the app icon, packed from its PNG sizes.

Both formats hold PNG images as they are (ICO since Windows Vista, ICNS since 10.7), so no
image library is needed; the PNGs come from ``resources/icons`` (drawn by
``build_icons.py``). The results are checked in (``installers/windows/tabrelay.ico``,
``installers/macos/Tabrelay.icns``) because Inno Setup and the macOS build read them;
``tests/unit/test_installers.py`` fails when they drift from the PNGs. Run
``python3 installers/icons.py`` after changing the icon.
"""

from __future__ import annotations

import struct
import sys

from product import RESOURCES, ROOT

ICO_FILE = ROOT / "installers" / "windows" / "tabrelay.ico"
ICNS_FILE = ROOT / "installers" / "macos" / "Tabrelay.icns"

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # 256 is the largest an ICO entry can say
# The element types iconutil writes for an .iconset, PNG-encoded: (type, pixel size).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"ic11", 32),  # 16 pt @2x
    (b"icp5", 32),
    (b"ic12", 64),  # 32 pt @2x
    (b"ic07", 128),
    (b"ic13", 256),  # 128 pt @2x
    (b"ic08", 256),
    (b"ic14", 512),  # 256 pt @2x
    (b"ic09", 512),
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png(size: int) -> bytes:
    """The app icon's PNG at ``size`` pixels.

    Raises:
        ValueError: the file is missing its PNG header or has another size.
    """
    data = (RESOURCES / "icons" / f"tabrelay-{size}.png").read_bytes()
    width, height = png_size(data)
    if (width, height) != (size, size):
        raise ValueError(f"tabrelay-{size}.png is {width}x{height}, not {size}x{size}")
    return data


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk.

    Raises:
        ValueError: not a PNG.
    """
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def ico() -> bytes:
    """An ICO file (ICONDIR, one ICONDIRENTRY per size, then the PNGs)."""
    images = [png(size) for size in ICO_SIZES]
    offset = 6 + 16 * len(images)
    header = struct.pack("<HHH", 0, 1, len(images))
    entries = b""
    for size, image in zip(ICO_SIZES, images, strict=True):
        side = size % 256  # 0 means 256
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(image), offset)
        offset += len(image)
    return header + entries + b"".join(images)


def icns() -> bytes:
    """An ICNS file: ``icns``, the total length, then (type, length, PNG) elements."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(image)) + image
        for kind, image in ((kind, png(size)) for kind, size in ICNS_TYPES)
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    ICO_FILE.write_bytes(ico())
    ICNS_FILE.write_bytes(icns())
    for path in (ICO_FILE, ICNS_FILE):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
