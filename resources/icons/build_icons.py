"""Write the tray state icons and the app icon as SVG, and render their PNG sizes.

Run from the repository root: ``.venv/bin/python resources/icons/build_icons.py [NAME…]`` (every
icon, or only those named, e.g. ``tray-waiting``). The SVGs
are the source; the PNGs are checked in so the app and the installers need no renderer. The
glyph is the extension's (a tab with an arrow) so the tray and the toolbar look related.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORANGE = "#E8710A"
GREY = "#80868B"
SLATE = "#5F6B7A"
GREEN = "#1E8E3E"
AMBER = "#F9AB00"
RED = "#D93025"
BLUE = "#1A73E8"

TRAY_SIZES = (16, 22, 24, 32, 48, 64)
APP_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def glyph(background: str, *, arrow: str | None = None, opacity: float = 1.0) -> str:
    arrow = arrow or background
    return f"""  <rect x="2" y="2" width="60" height="60" rx="14" fill="{background}" \
fill-opacity="{opacity:g}"/>
  <path d="M12 19a4 4 0 0 1 4-4h11.5l4.5 5h16a4 4 0 0 1 4 4v21a4 4 0 0 1-4 4H16a4 4 0 0 1-4-4z" \
fill="#FFFFFF"/>
  <path d="M19 34.5h19" stroke="{arrow}" stroke-width="4.5" stroke-linecap="round"/>
  <path d="M33 27.5l7.5 7-7.5 7" fill="none" stroke="{arrow}" stroke-width="4.5" \
stroke-linecap="round" stroke-linejoin="round"/>
"""


def badge(color: str, mark: str) -> str:
    return f"""  <circle cx="49" cy="49" r="14" fill="{color}" stroke="#FFFFFF" stroke-width="3"/>
{mark}"""


PAUSE_BARS = """  <rect x="43.5" y="42" width="4" height="14" rx="1" fill="#FFFFFF"/>
  <rect x="50.5" y="42" width="4" height="14" rx="1" fill="#FFFFFF"/>
"""
EXCLAMATION = """  <rect x="47" y="40" width="4" height="11" rx="2" fill="#FFFFFF"/>
  <circle cx="49" cy="55.5" r="2.3" fill="#FFFFFF"/>
"""
# A person's hand, raised: the agent handed the person a tab and waits for Done.
HAND = """  <path d="M44 56v-9.5a1.6 1.6 0 0 1 3.2 0V45a1.6 1.6 0 0 1 3.2 0v-1a1.6 1.6 0 0 1 \
3.2 0v2a1.6 1.6 0 0 1 3.2 0V52a5 5 0 0 1-5 5h-3.6a5 5 0 0 1-4.2-2.3z" fill="#FFFFFF"/>
"""
WORKING_DOTS = """  <circle cx="43.5" cy="49" r="2.2" fill="#FFFFFF"/>
  <circle cx="49" cy="49" r="2.2" fill="#FFFFFF"/>
  <circle cx="54.5" cy="49" r="2.2" fill="#FFFFFF"/>
"""

ICONS: dict[str, str] = {
    # state name → body; the names are TrayState values in desktop/tabrelay/ui/icons.py
    "tray-no-browser": glyph(GREY, opacity=0.85),
    "tray-connected": glyph(ORANGE),
    "tray-working": glyph(ORANGE) + badge(GREEN, WORKING_DOTS),
    "tray-paused": glyph(SLATE) + badge(AMBER, PAUSE_BARS),
    "tray-waiting": glyph(ORANGE) + badge(BLUE, HAND),
    "tray-attention": glyph(ORANGE) + badge(RED, EXCLAMATION),
    "tabrelay": glyph(ORANGE),
}


def svg(body: str) -> str:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\n'
        f"{body}</svg>\n"
    )


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication(sys.argv[:1])
    wanted = set(sys.argv[1:]) or set(ICONS)
    if unknown := wanted - set(ICONS):
        print(f"no icon named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for name, body in ICONS.items():
        if name not in wanted:
            continue
        source = HERE / f"{name}.svg"
        source.write_text(svg(body), encoding="utf-8")
        renderer = QSvgRenderer(str(source))
        for size in APP_SIZES if name == "tabrelay" else TRAY_SIZES:
            image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(Qt.GlobalColor.transparent)
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            renderer.render(painter)
            painter.end()
            image.save(str(HERE / f"{name}-{size}.png"))
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
