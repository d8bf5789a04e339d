"""Decoding the screenshots the extension returns, with the standard library only.

PNG: every chunk's CRC is checked and the image data is inflated, so the size is that of a
whole, readable image, not just a header. JPEG: the frame header gives the size; the stream
must start and end with its markers.
"""

from __future__ import annotations

import base64
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Bytes per pixel for 8-bit PNG colour types (greyscale, RGB, palette, grey+alpha, RGBA).
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


class NotAnImage(Exception):
    pass


def decode_data_url(data_url: str) -> tuple[str, bytes]:
    """("png" | "jpeg" | ..., the bytes) of a base64 image data URL."""
    head, _, payload = data_url.partition(",")
    if not head.startswith("data:image/") or not head.endswith(";base64"):
        raise NotAnImage(f"not a base64 image data URL: {head[:40]!r}")
    return head[len("data:image/") : -len(";base64")], base64.b64decode(payload, validate=True)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a complete, valid 8-bit PNG."""
    if not data.startswith(PNG_SIGNATURE):
        raise NotAnImage("no PNG signature")
    offset, width, height, channels, idat = len(PNG_SIGNATURE), 0, 0, 0, b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise NotAnImage(f"bad CRC in the {kind!r} chunk")
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in PNG_CHANNELS:
                raise NotAnImage(f"unexpected PNG format (depth {depth}, colour type {colour})")
            channels = PNG_CHANNELS[colour]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        offset += 12 + length
    pixels = zlib.decompress(idat)
    if len(pixels) != height * (1 + width * channels):  # one filter byte per row
        raise NotAnImage("the PNG's pixel data does not match its size")
    return width, height


def jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from a JPEG's frame header."""
    if not (data.startswith(b"\xff\xd8") and data.rstrip(b"\x00").endswith(b"\xff\xd9")):
        raise NotAnImage("not a complete JPEG stream")
    offset = 2
    while offset < len(data):
        marker, length = data[offset + 1], struct.unpack(">H", data[offset + 2 : offset + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return width, height
        offset += 2 + length
    raise NotAnImage("no JPEG frame header")
