"""The files agents' actions downloaded, by MCP session: ``Downloads``, their one owner (made by
the core, handed to each call). Following a download, keeping its file and reading it back are
``tools/acting/download.py``'s; this holds what was kept, and answers a session only with its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from tabrelay.errors import ToolError
from tabrelay.tools.results import page_text

MAX_PER_SESSION = 500  # downloads kept per session; the oldest are forgotten (their files stay)
Owner = tuple[str, str | None]  # (client, MCP session)


@dataclass(frozen=True, slots=True)
class Download:
    """A file an agent's action downloaded, where Tabrelay keeps it."""

    id: str  # "d1", "d2"… never reused while Tabrelay runs
    name: str
    path: Path
    size: int
    mime: str
    url: str
    owner: Owner

    def describe(self) -> str:
        return (
            f"download {self.id}: {page_text(self.name)} ({self.size:,} bytes, "
            f"{page_text(self.mime or 'type unknown')}) from {page_text(self.url[:300])}"
        )


class Downloads:
    """The downloads of each MCP session: the one owner (made by the core)."""

    def __init__(self, default_dir: Path) -> None:
        self.default_dir = default_dir
        self._by_id: dict[str, Download] = {}
        self._numbers = itertools.count(1)

    def add(
        self, owner: Owner, *, name: str, path: Path, size: int, mime: str, url: str
    ) -> Download:
        made = Download(f"d{next(self._numbers)}", name, path, size, mime, url, owner)
        self._by_id[made.id] = made
        mine = self.of(owner)
        for old in mine[:-MAX_PER_SESSION]:
            self._by_id.pop(old.id, None)
        return made

    def of(self, owner: Owner) -> list[Download]:
        return [d for d in self._by_id.values() if d.owner == owner]

    def get(self, owner: Owner, download_id: str) -> Download:
        """The session's download ``download_id``.

        Raises:
            ToolError: there is none of that id for this session (another session's is not
                told apart from one that does not exist).
        """
        found = self._by_id.get(download_id)
        if found is None or found.owner != owner:
            listed = ", ".join(d.id for d in self.of(owner)) or "none"
            raise ToolError(
                f"this session has no download {download_id!r} (its downloads: {listed}); "
                "browser_status lists them"
            )
        return found

    def folder(self, chosen: str) -> Path:
        return Path(chosen).expanduser() if chosen else self.default_dir
