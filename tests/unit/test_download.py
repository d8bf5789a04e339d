"""Downloads (tools/download.py and its store, tools/downloads.py) against a scripted extension
and real files: following one to its end, what lands on disk (where, under what name, modes
0700/0600, never outside the folder), what each session may see, and what a download that
fails, lasts, vanishes or is not text says.
End to end in real Chromium: tests/e2e/test_reach_downloads.py."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Any

import pytest

from tabrelay.config.settings import Settings
from tabrelay.errors import CommandFailed, ToolError
from tabrelay.tools import download
from tabrelay.tools.downloads import Downloads
from tabrelay.tools.results import plain

URL = "https://shop.test/export?format=csv"


class Browser:
    def __init__(self, answers: list[Any], *, methods: tuple[str, ...] = ("downloads.search",)):
        self.answers = answers
        self.methods = methods
        self.asked: list[dict[str, Any]] = []

    def supports(self, method: str) -> bool:
        return method in self.methods

    async def send_command(self, method: str, params: dict[str, Any]) -> Any:
        assert method == "downloads.search"
        self.asked.append(params)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer


class Ctx:
    def __init__(
        self, browser: Browser, store: Downloads, *, session: str = "s1", folder: str = ""
    ):
        self.browser = browser
        self.downloads = store
        self.client = "agent"
        self.session = session
        self.settings = Settings(download_dir=folder)
        self.budget_bytes = 4000

    def need_browser(self) -> Browser:
        return self.browser

    async def progress(self, *args: Any) -> None:
        pass


def item(path: Path, state: str = "complete", **extra: Any) -> dict[str, Any]:
    return {"id": 7, "url": URL, "finalUrl": URL, "filename": str(path), "mime": "text/csv",
            "state": state, "bytesReceived": 10, **extra}  # fmt: skip


@pytest.fixture
def chrome_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "Downloads"
    folder.mkdir()
    return folder


async def follow(ctx: Ctx) -> str:
    return await download.follow(ctx, URL, 1_700_000_000.0)  # type: ignore[arg-type]


async def test_a_finished_download_is_moved_into_a_private_folder_and_named_in_the_answer(
    tmp_path: Path, chrome_folder: Path
) -> None:
    written = chrome_folder / "report.csv"
    written.write_bytes(b"a,b\n1,2\n")
    browser = Browser([[item(written, "in_progress")], [item(written)]])
    store = Downloads(tmp_path / "data" / "downloads")
    said = await follow(Ctx(browser, store))
    assert said.startswith("It downloaded a file, download d1: ")
    assert "report.csv" in said and "(8 bytes, text/csv)" in said
    kept = tmp_path / "data" / "downloads" / "report.csv"
    assert kept.read_bytes() == b"a,b\n1,2\n" and not written.exists()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert browser.asked[0] == {"url": URL, "startedAfter": 1_700_000_000_000}


async def test_the_folder_the_person_chose_is_used_and_names_never_collide_or_escape(
    tmp_path: Path, chrome_folder: Path
) -> None:
    chosen = tmp_path / "chosen"
    store = Downloads(tmp_path / "default")
    names = ["report.csv", "report.csv", "..", "évil name;rm -rf.sh", ".bashrc", "x" * 250]
    kept = []
    for n, name in enumerate(names):
        written = chrome_folder / f"{n}" / (name if name != ".." else "dotdot")
        written.parent.mkdir()
        written.write_text(name)
        await follow(Ctx(Browser([[item(written)]]), store, folder=str(chosen)))
    kept = sorted(p.name for p in chosen.iterdir())
    assert "report.csv" in kept and "report (2).csv" in kept
    assert all(Path(chosen / k).resolve().parent == chosen.resolve() for k in kept)
    assert all(len(k) <= 130 for k in kept)
    assert not (tmp_path / "default").exists()


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ([[{"state": "interrupted", "error": "NETWORK_FAILED"}]], "which stopped (NETWORK_FAILED)"),
        (
            [[{"state": "in_progress", "bytesReceived": 5120}]],
            "still going after 0.2 s (5,120 bytes",
        ),
        ([[]], "still going after 0.2 s;"),
        ([CommandFailed("downloads.search failed")], "and then: downloads.search failed"),
        ([[{"state": "complete", "filename": "/nowhere/x.csv"}]], "cannot find it where Chrome"),
        ([[{"state": "complete", "filename": "relative.csv"}]], "cannot find it where Chrome"),
        (["not a list"], "still going after"),
    ],
)
async def test_a_download_that_fails_lasts_or_vanishes_is_said_and_never_fails_the_action(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answers: list[Any], said: str
) -> None:
    monkeypatch.setattr(download, "FOLLOW_TIMEOUT", 0.2)
    monkeypatch.setattr(download, "POLL", 0.02)
    store = Downloads(tmp_path / "d")
    text = plain(await follow(Ctx(Browser(answers), store)))
    assert said in text, text
    assert store.of(("agent", "s1")) == []


async def test_an_extension_without_downloads_says_so(tmp_path: Path) -> None:
    text = await follow(Ctx(Browser([[]], methods=()), Downloads(tmp_path)))
    assert "cannot follow downloads (update it)" in text


async def test_a_cancel_while_following_keeps_nothing(tmp_path: Path, chrome_folder: Path) -> None:
    written = chrome_folder / "slow.csv"
    written.write_text("x")
    store = Downloads(tmp_path / "d")
    following = asyncio.ensure_future(follow(Ctx(Browser([[item(written, "in_progress")]]), store)))
    await asyncio.sleep(0.05)
    following.cancel()
    with pytest.raises(asyncio.CancelledError):
        await following
    assert store.of(("agent", "s1")) == [] and written.exists()


async def test_each_session_sees_and_reads_only_its_own(
    tmp_path: Path, chrome_folder: Path
) -> None:
    written = chrome_folder / "mine.csv"
    written.write_text("id\n1\n")
    store = Downloads(tmp_path / "d")
    await follow(Ctx(Browser([[item(written)]]), store, session="s1"))
    other = Ctx(Browser([[]]), store, session="s2")
    assert store.of(("agent", "s2")) == []
    with pytest.raises(ToolError, match=r"no download 'd1' \(its downloads: none\)"):
        await download.read_text(other, "d1")  # type: ignore[arg-type]
    mine = Ctx(Browser([[]]), store, session="s1")
    kept, text = await download.read_text(mine, "d1")  # type: ignore[arg-type]
    assert (kept.id, text) == ("d1", "id\n1\n")


async def test_a_binary_file_or_one_gone_is_refused_plainly(
    tmp_path: Path, chrome_folder: Path
) -> None:
    written = chrome_folder / "photo.jpg"
    written.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" * 10)
    store = Downloads(tmp_path / "d")
    ctx = Ctx(Browser([[item(written, mime="image/jpeg")]]), store)
    await follow(ctx)
    with pytest.raises(ToolError, match=r"\(image/jpeg\) is not text, CSV, JSON or a PDF"):
        await download.read_text(ctx, "d1")  # type: ignore[arg-type]
    store.of(("agent", "s1"))[0].path.unlink()
    with pytest.raises(ToolError, match="can no longer be read"):
        await download.read_text(ctx, "d1")  # type: ignore[arg-type]


def test_text_is_told_from_binary_by_its_bytes() -> None:
    assert download._looks_like_text("naïve,café\n".encode())
    assert download._looks_like_text(("é" * 3000).encode()[:4095])  # a character cut short
    assert not download._looks_like_text(b"PK\x03\x04\x00\x00")
    assert not download._looks_like_text(b"\xff\xfe\xfd plain")


async def test_no_file_that_was_there_before_the_action_or_a_link_is_ever_taken(
    tmp_path: Path, chrome_folder: Path
) -> None:
    """Whatever the extension says (a forged one included): a secret file of the person's, or a
    link to one, is not moved into what agents may read."""
    import os
    import time as clock

    key = tmp_path / "id_ed25519"
    key.write_text("PRIVATE KEY")
    os.utime(key, (clock.time() - 3600, clock.time() - 3600))
    link = chrome_folder / "report.csv"
    link.symlink_to(key)
    store = Downloads(tmp_path / "d")
    began = clock.time()
    for claimed in (key, link):
        said = plain(await download.follow(Ctx(Browser([[item(claimed)]]), store), URL, began))  # type: ignore[arg-type]
        assert "cannot find it where Chrome says it is" in said, said
    assert key.read_text() == "PRIVATE KEY" and link.is_symlink()
    assert store.of(("agent", "s1")) == []
