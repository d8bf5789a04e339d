"""The tray's state icons and the app icon, loaded from ``resources/icons``.

``system/resources.py`` finds ``resources/`` in a source checkout and in a frozen build
alike. Where it is missing (a bare wheel install), a plain drawn icon of the state's colour
keeps the tray usable rather than blank.
"""

from __future__ import annotations

import enum

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from tabrelay.system.resources import APP_ICON_SIZES, desktop_icon, resource

TRAY_SIZES = (16, 22, 24, 32, 48, 64)
APP_SIZES = APP_ICON_SIZES


class TrayState(enum.Enum):
    """What the tray icon says, most urgent last (the icon shows the most urgent that holds)."""

    NO_BROWSER = "no-browser"
    CONNECTED = "connected"
    WORKING = "working"
    PAUSED = "paused"
    WAITING = "waiting"  # an agent handed the person a tab and waits for Done
    ATTENTION = "attention"


STATE_TEXT = {
    TrayState.NO_BROWSER: "no browser connected",
    TrayState.CONNECTED: "connected",
    TrayState.WORKING: "an agent is working",
    TrayState.PAUSED: "agent access paused",
    TrayState.WAITING: "an agent waits for you to finish in a tab",
    TrayState.ATTENTION: "needs your attention",
}
_FALLBACK_COLOURS = {
    TrayState.NO_BROWSER: "#80868B",
    TrayState.CONNECTED: "#E8710A",
    TrayState.WORKING: "#1E8E3E",
    TrayState.PAUSED: "#5F6B7A",
    TrayState.WAITING: "#1A73E8",
    TrayState.ATTENTION: "#D93025",
}


def _icon(name: str, sizes: tuple[int, ...], fallback: str) -> QIcon:
    icon = QIcon()
    for size in sizes:
        png = resource("icons", f"{name}-{size}.png")
        if png is not None:
            icon.addFile(str(png))
    if icon.isNull():
        svg = resource("icons", f"{name}.svg")
        if svg is not None:
            icon.addFile(str(svg))
    if icon.isNull():
        icon = _drawn(fallback)
    return icon


def _drawn(colour: str) -> QIcon:
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(2, 2, 60, 60, 14, 14)
    painter.end()
    return QIcon(pixmap)


def tray_icon(state: TrayState) -> QIcon:
    return _icon(f"tray-{state.value}", TRAY_SIZES, _FALLBACK_COLOURS[state])


def app_icon() -> QIcon:
    return _icon("tabrelay", APP_SIZES, _FALLBACK_COLOURS[TrayState.CONNECTED])


def app_icon_path() -> str:
    """A file for places that take a path (the autostart entry), else the theme name."""
    return desktop_icon()
