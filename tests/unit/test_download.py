"""Downloads (tools/acting/download.py and its store, tools/state/downloads.py) against a scripted
extension and real files: following one to its end, what lands on disk (where, under what name,
modes 0700/0600, never outside the folder), what each session may see, what a download that fails,
lasts, vanishes or is not text says, and what a forged answer cannot make Tabrelay take.
End to end in real Chromium: tests/e2e/test_reach_downloads.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tabrelay.config.settings import Settings
from tabrelay.errors import ApprovalDenied, BrowserDisconnected, CommandFailed, ToolError
from tabrelay.protocol.messages import HeldDownload
from tabrelay.relay.held_downloads import HeldDownloads
from tabrelay.tools.acting import download
from tabrelay.tools.context import ToolContext
from tabrelay.tools.results import plain
from tabrelay.tools.state.downloads import Downloads

URL = "https://shop.test/export?format=csv"
BEGAN = 1_700_000_000.0  # the action's start: earlier than every file the tests write


class Browser:
    def __init__(self, answers: list[Any], *, methods: tuple[str, ...] = ("downloads.search",)):
        self.answers = answers
        self.methods = methods
        self.asked: list[dict[str, Any]] = []
        self.decided: list[dict[str, Any]] = []  # downloads.decide's
        self.held = HeldDownloads(self.send_command)

    def supports(self, method: str) -> bool:
        return method in self.methods

    async def send_command(self, method: str, params: dict[str, Any]) -> Any:
        if method in ("downloads.hold", "downloads.decide"):
            self.decided += [params] if method == "downloads.decide" else []
            return {}
        assert method == "downloads.search"
        self.asked.append(params)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer


class Ctx:
    """The parts of a ToolContext following and reading use."""

    owner = ToolContext.owner
    settle = ToolContext.settle

    def __init__(
        self, browser: Browser, store: Downloads, source: Path, *, session: str = "s1",
        folder: str = "",
    ) -> None:  # fmt: skip
        self.browser = browser
        self.downloads = store
        self.client = "agent"
        self.session = session
        self.settings = Settings(download_dir=folder, browser_download_dir=str(source))
        self.background: set[asyncio.Future[Any]] = set()
        self.confirm_download: Any = None

    def need_browser(self) -> Browser:
        return self.browser

    async def progress(self, *args: Any) -> None:
        pass


def item(path: Path, state: str = "complete", **extra: Any) -> dict[str, Any]:
    size = path.stat().st_size if path.is_file() else 0
    return {"id": 7, "url": URL, "finalUrl": URL, "filename": str(path), "mime": "text/csv",
            "state": state, "fileSize": size, **extra}  # fmt: skip


@pytest.fixture
def chrome(tmp_path: Path) -> Path:
    """Chrome's download folder."""
    folder = tmp_path / "Downloads"
    folder.mkdir()
    return folder


async def follow(ctx: Ctx, since: float = BEGAN) -> str:
    return plain(await download.follow(ctx, URL, since))  # type: ignore[arg-type]


async def test_a_finished_download_is_moved_into_a_private_folder_and_named_in_the_answer(
    tmp_path: Path, chrome: Path
) -> None:
    written = chrome / "report.csv"
    written.write_bytes(b"a,b\n1,2\n")
    browser = Browser([[item(written, "in_progress")], [item(written)]])
    store = Downloads(tmp_path / "data" / "downloads")
    said = await follow(Ctx(browser, store, chrome))
    assert said.startswith("It downloaded a file, download d1: report.csv (8 bytes, text/csv)")
    kept = tmp_path / "data" / "downloads" / "report.csv"
    assert kept.read_bytes() == b"a,b\n1,2\n" and not written.exists()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert browser.asked[0] == {"url": URL, "startedAfter": int(BEGAN * 1000)}


async def test_the_folder_the_person_chose_is_used_and_names_never_collide_or_escape(
    tmp_path: Path, chrome: Path
) -> None:
    chosen = tmp_path / "chosen"
    store = Downloads(tmp_path / "default")
    names = ["report.csv", "report.csv", "..x", "évil name;rm -rf.sh", ".bashrc", "x" * 250]
    for name in names:
        written = chrome / name
        written.write_text(name)
        said = await follow(Ctx(Browser([[item(written)]]), store, chrome, folder=str(chosen)))
        assert said.startswith("It downloaded a file"), said
    kept = sorted(p.name for p in chosen.iterdir())
    assert len(kept) == len(names) == len(store.of(("agent", "s1")))
    assert "report.csv" in kept and "report (2).csv" in kept
    assert all(len(k) <= 130 and not k.startswith(".") and "/" not in k for k in kept), kept
    assert not (tmp_path / "default").exists()


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ([[{"state": "interrupted", "error": "NETWORK_FAILED"}]], "which stopped (NETWORK_FAILED)"),
        ([[{"state": "in_progress", "bytesReceived": 5120}]], "after 0.2 s (5,120 bytes"),
        ([[{"state": "in_progress", "bytesReceived": "9e99"}]], "still going after 0.2 s (0 bytes"),
        ([[]], "still going after 0.2 s;"),
        ([CommandFailed("downloads.search failed")], "and then: downloads.search failed"),
        ([[{"state": "complete", "filename": "relative.csv"}]], "cannot find it where Chrome"),
        ([[{"state": "complete"}, {"state": "complete"}]], "another download of that address"),
        (["not a list"], "still going after"),
    ],
)  # fmt: skip
async def test_a_download_that_fails_lasts_or_vanishes_is_said_and_never_fails_the_action(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chrome: Path, answers: list[Any], said: str
) -> None:
    monkeypatch.setattr(download, "FOLLOW_TIMEOUT", 0.2)
    monkeypatch.setattr(download, "POLL", 0.02)
    store = Downloads(tmp_path / "d")
    text = await follow(Ctx(Browser(answers), store, chrome))
    assert said in text, text
    assert store.of(("agent", "s1")) == []


async def test_no_file_but_the_one_the_download_wrote_is_ever_taken(
    tmp_path: Path, chrome: Path
) -> None:
    """Whatever the extension says (a forged one included): a file of the person's outside
    Chrome's download folder (even one just written), a link, a second name of a file, a file
    of another size or one that was there before the action stays where it is."""
    began = time.time() - 1
    diary = tmp_path / "diary.txt"
    diary.write_text("just written, outside")
    old = chrome / "old.csv"
    old.write_text("there before")
    os.utime(old, (began - 3600, began - 3600))
    link = chrome / "link.csv"
    link.symlink_to(diary)
    twice = chrome / "twice.csv"
    twice.write_text("two names")
    os.link(twice, tmp_path / "elsewhere.csv")
    resized = chrome / "resized.csv"
    resized.write_text("12345")
    nested = chrome / "sub"
    nested.mkdir()
    (nested / "deep.csv").write_text("in a subfolder")
    linked_folder = tmp_path / "linked"
    linked_folder.symlink_to(chrome)
    fresh = chrome / "fresh.csv"
    fresh.write_text("fresh")
    claims = {
        "outside": item(diary),
        "before": item(old),
        "link": item(link),
        "two names": item(twice),
        "size": {**item(resized), "fileSize": 4},
        "subfolder": item(nested / "deep.csv"),
        "through a link": item(linked_folder / "fresh.csv"),
    }
    store = Downloads(tmp_path / "d")
    for why, claimed in claims.items():
        said = await follow(Ctx(Browser([[claimed]]), store, chrome), began)
        assert "cannot find it" in said or "outside" in said, (why, said)
    assert store.of(("agent", "s1")) == []
    assert diary.exists() and old.exists() and twice.exists() and resized.exists()
    assert fresh.exists() and link.is_symlink()


async def test_an_extension_without_downloads_says_so(tmp_path: Path, chrome: Path) -> None:
    text = await follow(Ctx(Browser([[]], methods=()), Downloads(tmp_path), chrome))
    assert "cannot follow downloads (update it)" in text


async def test_an_action_follows_each_address_once_and_at_most_three(
    tmp_path: Path, chrome: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    followed: list[tuple[str, float | None]] = []

    async def fake(ctx: Any, url: str, since: float, *, appear: float | None = None) -> str:
        followed.append((url, appear))
        return f"followed {url}"

    monkeypatch.setattr(download, "follow", fake)
    urls = ["https://a.test/1", "https://a.test/1", "https://a.test/2", "https://a.test/3",
            "https://a.test/4", "https://a.test/5"]  # fmt: skip
    said = await download.follow_all(
        Ctx(Browser([[]]), Downloads(tmp_path), chrome),  # type: ignore[arg-type]
        urls,
        BEGAN,
        unconfirmed=frozenset({"https://a.test/2"}),  # a download link's, no event said so
    )
    assert followed == [("https://a.test/1", None), ("https://a.test/2", download.APPEAR_TIMEOUT),
                        ("https://a.test/3", None)]  # fmt: skip
    assert "2 more download(s)" in plain(said[-1])


async def test_a_download_only_expected_that_chrome_never_shows_is_given_up_soon(
    tmp_path: Path, chrome: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "POLL", 0.02)
    browser = Browser([[]])  # Chrome shows no download of it, ever
    ctx = Ctx(browser, Downloads(tmp_path), chrome)
    said = await download.follow(ctx, "https://a.test/r.txt", BEGAN, appear=0.1)  # type: ignore[arg-type]
    assert plain(said) == "No download of https://a.test/r.txt began within 0.1 s."
    assert 2 <= len(browser.asked) <= 20  # asked until the bound, not for FOLLOW_TIMEOUT


async def test_a_cancel_while_following_keeps_nothing_and_during_the_move_loses_nothing(
    tmp_path: Path, chrome: Path
) -> None:
    written = chrome / "slow.csv"
    written.write_text("x")
    store = Downloads(tmp_path / "d")
    ctx = Ctx(Browser([[item(written, "in_progress")]]), store, chrome)
    following = asyncio.ensure_future(follow(ctx))
    await asyncio.sleep(0.05)
    following.cancel()
    with pytest.raises(asyncio.CancelledError):
        await following
    assert store.of(("agent", "s1")) == [] and written.exists()
    # Cancelled while the file moves: it ends moved and remembered, not lost between the two.
    ctx = Ctx(Browser([[item(written)]]), store, chrome)
    moving = asyncio.ensure_future(follow(ctx))
    for _ in range(200):
        await asyncio.sleep(0)
        if ctx.background:
            break
    moving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await moving
    await asyncio.gather(*ctx.background)
    assert [d.name for d in store.of(("agent", "s1"))] == ["slow.csv"]


async def test_each_session_sees_and_reads_only_its_own(tmp_path: Path, chrome: Path) -> None:
    written = chrome / "mine.csv"
    written.write_text("id\n1\n")
    store = Downloads(tmp_path / "d")
    await follow(Ctx(Browser([[item(written)]]), store, chrome, session="s1"))
    other = Ctx(Browser([[]]), store, chrome, session="s2")
    assert store.of(("agent", "s2")) == []
    with pytest.raises(ToolError, match=r"no download 'd1' \(its downloads: none\)"):
        await download.read_text(other, "d1")  # type: ignore[arg-type]
    mine = Ctx(Browser([[]]), store, chrome, session="s1")
    kept, text = await download.read_text(mine, "d1")  # type: ignore[arg-type]
    assert (kept.id, text) == ("d1", "id\n1\n")


async def test_a_binary_file_or_one_gone_is_refused_plainly(tmp_path: Path, chrome: Path) -> None:
    written = chrome / "photo.jpg"
    written.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" * 10)
    store = Downloads(tmp_path / "d")
    ctx = Ctx(Browser([[item(written, mime="image/jpeg")]]), store, chrome)
    await follow(ctx)
    with pytest.raises(ToolError) as refused:
        await download.read_text(ctx, "d1")  # type: ignore[arg-type]
    assert "(image/jpeg) is not text, CSV, JSON or a PDF" in plain(refused.value.message)
    store.of(("agent", "s1"))[0].path.unlink()
    with pytest.raises(ToolError, match="can no longer be read"):
        await download.read_text(ctx, "d1")  # type: ignore[arg-type]


def test_text_is_told_from_binary_by_its_bytes() -> None:
    assert download._looks_like_text("naïve,café\n".encode())
    assert download._looks_like_text(("é" * 3000).encode()[:4095])  # a character cut short
    assert not download._looks_like_text(b"PK\x03\x04\x00\x00")
    assert not download._looks_like_text(b"\xff\xfe\xfd plain")


async def unsettled(held: HeldDownload) -> bool:
    raise AssertionError(f"download {held.id} was left to the end of the action")


class Person:
    """``ToolContext.confirm_download`` as the endpoint gives it: what it was asked, and its
    answer (an exception to raise, or None: allowed)."""

    def __init__(self, answer: BaseException | None = None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, bool]] = []

    async def __call__(self, what: str, *, beyond: bool) -> None:
        self.asked.append((plain(what), beyond))
        if self.answer is not None:
            raise self.answer


async def held_follow(
    ctx: Ctx, person: Person, **facts: Any
) -> tuple[asyncio.Future[str], HeldDownload]:
    """Follow ``URL`` while the extension holds its download (``facts`` change what it says)."""
    ctx.confirm_download = person
    holds = ctx.browser.held
    holds.start()
    await asyncio.sleep(0)
    assert holds.holding
    fields = {"id": 7, "url": URL, "final_url": URL, "filename": "report.csv", "mime": "text/csv",
              "total_bytes": 8, "danger": "safe"} | facts  # fmt: skip
    held = HeldDownload(**fields)
    async with holds.acting(unsettled):
        following = asyncio.ensure_future(follow(ctx))
        await asyncio.sleep(0.01)
        holds.arrived(held)
        await asyncio.wait([following], timeout=5)
    return following, held


async def test_a_held_download_goes_on_once_the_person_allowed_it_knowing_what_it_is(
    tmp_path: Path, chrome: Path
) -> None:
    written = chrome / "report.csv"
    written.write_bytes(b"a,b\n1,2\n")
    ctx = Ctx(Browser([[item(written)]]), Downloads(tmp_path / "d"), chrome)
    person = Person()
    following, _ = await held_follow(ctx, person)
    assert following.result().startswith("It downloaded a file, download d1: report.csv")
    assert person.asked == [(f"report.csv (8 bytes, text/csv) from {URL}", False)]
    assert ctx.browser.decided == [{"id": 7, "allow": True}]


@pytest.mark.parametrize(
    ("facts", "shown", "beyond"),
    [
        ({"total_bytes": 101 * 1024 * 1024}, f"(105,906,176 bytes, text/csv) from {URL}", True),
        ({"total_bytes": -1, "mime": ""}, f"(size not given, type unknown) from {URL}", True),
        ({"danger": "file"}, f"report.csv (8 bytes, text/csv) from {URL}, which Chrome flags as "
         "'file'", True),
        ({"filename": "Tool.AppImage"}, f"from {URL}, a program or an installer", True),
        ({"filename": "report.exe.csv"}, f"report.exe.csv (8 bytes, text/csv) from {URL}", False),
        ({"final_url": "https://cdn.test/r.csv"}, "from https://cdn.test/r.csv", False),
        ({"filename": ""}, "a file (8 bytes", False),
    ],
)  # fmt: skip
async def test_what_the_person_is_shown_and_whether_it_is_beyond_what_a_click_covered(
    tmp_path: Path, chrome: Path, facts: dict[str, Any], shown: str, beyond: bool
) -> None:
    person = Person(ApprovalDenied("denied by the person"))
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    await held_follow(ctx, person, **facts)
    [(what, asked_beyond)] = person.asked
    assert shown in what and asked_beyond is beyond, what


async def test_a_held_download_the_person_refuses_is_cancelled_and_never_looked_for(
    tmp_path: Path, chrome: Path
) -> None:
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    following, _ = await held_follow(ctx, Person(ApprovalDenied("denied by the person")))
    said = plain(following.result())
    assert said == (
        f"It began downloading report.csv (8 bytes, text/csv) from {URL}, and Chrome cancelled "
        "it: denied by the person."
    )
    assert ctx.browser.decided == [{"id": 7, "allow": False}]
    assert ctx.browser.asked == [], "nothing is followed, nothing kept"


class Undecided:
    """``confirm_download`` of a person who has not answered yet: the questions withdrawn."""

    def __init__(self) -> None:
        self.asking = asyncio.Event()
        self.withdrawn: list[str] = []

    async def __call__(self, what: str, *, beyond: bool) -> None:
        self.asking.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn.append(plain(what))  # the dialog is taken down
            raise


@contextlib.asynccontextmanager
async def deciding(ctx: Ctx) -> AsyncIterator[tuple[asyncio.Future[str], Undecided]]:
    """An action under way whose held download the person is being asked about: the follow,
    and the person."""
    person = Undecided()
    ctx.confirm_download = person
    holds = ctx.browser.held
    holds.start()
    await asyncio.sleep(0)
    async with holds.acting(unsettled):
        following = asyncio.ensure_future(follow(ctx))
        holds.arrived(HeldDownload(7, URL, URL, "r.csv", "text/csv", 8, "safe"))
        await asyncio.wait_for(person.asking.wait(), 5)
        yield following, person


async def test_a_call_cancelled_while_the_person_decides_cancels_its_download(
    tmp_path: Path, chrome: Path
) -> None:
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    async with deciding(ctx) as (following, _):
        following.cancel()
        with pytest.raises(asyncio.CancelledError):
            await following
    await asyncio.gather(*ctx.background)
    assert ctx.browser.decided == [{"id": 7, "allow": False}]


async def test_a_browser_gone_while_the_person_decides_ends_the_call_with_the_question(
    tmp_path: Path, chrome: Path
) -> None:
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    async with deciding(ctx) as (following, person):
        ctx.browser.held.close()  # the extension's worker stopped, or the browser quit
        said = plain(await asyncio.wait_for(following, 5))
    assert said.startswith(
        f"It started downloading {URL}, and then: the browser disconnected while the person "
        "was being asked about its download"
    ), said
    assert person.withdrawn == [f"r.csv (8 bytes, text/csv) from {URL}"]
    assert ctx.browser.decided == [], "nothing is sent on a connection that ended"


async def test_a_download_link_whose_download_never_comes_is_given_up_on_once(
    tmp_path: Path, chrome: Path
) -> None:
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    ctx.confirm_download = Person()
    ctx.browser.held.start()
    await asyncio.sleep(0)
    async with ctx.browser.held.acting(unsettled):
        began = time.monotonic()
        said = plain(await download.follow(ctx, URL, BEGAN, appear=0.3))  # type: ignore[arg-type]
    assert said == f"No download of {URL} began within 0.3 s."
    assert time.monotonic() - began < 0.55, "the wait for it to be held counts toward appear"


async def test_a_held_download_is_told_apart_from_anothers_of_the_same_address_by_its_id(
    tmp_path: Path, chrome: Path
) -> None:
    written = chrome / "report.csv"
    written.write_bytes(b"a,b\n1,2\n")
    person_s = chrome / "report (1).csv"
    person_s.write_bytes(b"the person's own copy")
    theirs = {**item(person_s), "id": 8}
    ctx = Ctx(Browser([[theirs, item(written)]]), Downloads(tmp_path / "d"), chrome)
    following, _ = await held_follow(ctx, Person())
    assert following.result().startswith("It downloaded a file, download d1: report.csv")
    assert person_s.read_bytes() == b"the person's own copy", "theirs stays where it is"


async def test_a_download_its_aftermath_did_not_follow_is_asked_about_whatever_was_foreseen(
    tmp_path: Path, chrome: Path
) -> None:
    ctx = Ctx(Browser([[]]), Downloads(tmp_path / "d"), chrome)
    ctx.browser.held.start()
    await asyncio.sleep(0)
    held = HeldDownload(9, URL, URL, "r.csv", "text/csv", 8, "safe")
    person = Person()
    ctx.confirm_download = person
    assert await download.settle(ctx, held) is True  # type: ignore[arg-type]
    assert person.asked == [
        (f"r.csv (8 bytes, text/csv) from {URL}; it began while this call ran, from nothing "
         "Tabrelay followed", True)
    ]  # fmt: skip
    person.answer = ApprovalDenied("denied by the person")
    assert await download.settle(ctx, held) is False  # type: ignore[arg-type]
    ctx.confirm_download = None
    assert await download.settle(ctx, held) is False, "nobody to ask: cancelled"  # type: ignore[arg-type]
    ctx.confirm_download = person
    ctx.browser.held.close()  # the browser went: there is no download left to ask about
    with pytest.raises(BrowserDisconnected, match="while the person was being asked"):
        await download.settle(ctx, held)  # type: ignore[arg-type]
