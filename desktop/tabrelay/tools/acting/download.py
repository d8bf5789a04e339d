"""Following a download an agent's action started, keeping its file, and reading it back
(issue 26).

Following: the tab's ``Page.downloadWillBegin`` (seen by the action's aftermath) names the
address. An extension that holds downloads for Tabrelay's word (``relay/held_downloads.py``)
has this one let go once the call's approval covers it (``_let_through``: the person is asked
about its file, size, type and source unless the call's own approval weighed a download), and
names Chrome's id for it. The extension's ``downloads.search`` (exactly that address, since the
action began: never a list of the person's downloads) says where Chrome writes the file and how
far it got, asked at growing intervals up to ``POLL`` seconds until it is complete,
interrupted, or ``FOLLOW_TIMEOUT`` passes.
A complete file is moved out of Chrome's download folder (``Settings.browser_download_dir``, by
default the system's downloads folder: the only one files are taken from) into
``Settings.download_dir`` (by default a private folder of Tabrelay's data, 0700; each file 0600)
under a name of its own, and kept in ``Downloads`` for the session. An action follows at most
``MAX_FOLLOWED`` downloads. ``browser_status`` lists a session's downloads;
``browser_get_content`` with ``download_id`` reads one (``read_text``): text, CSV and JSON as
they are, a PDF through ``tools/page/pdf.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import shutil
import stat
import time
from pathlib import Path
from typing import Any

import platformdirs

from tabrelay.config.files import make_private_dir
from tabrelay.errors import ApprovalDenied, BrowserError, ToolError
from tabrelay.protocol.messages import HeldDownload
from tabrelay.relay.browser import Browser
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import pdf
from tabrelay.tools.results import page_text
from tabrelay.tools.state.downloads import Download
from tabrelay.tools.state.tab_state import PdfPages

FOLLOW_TIMEOUT = 30.0  # seconds a download may take before the answer says it is still going
POLL = 0.1  # at most, between two looks at how far it got
FIRST_POLL = 0.01  # the first wait, doubled each time up to POLL
APPEAR_TIMEOUT = 2.0  # seconds an expected download (a download link's) has to show in Chrome
CLOCK_SLACK = 2.0  # seconds a file's time may lag the action's start (file systems round it)
MAX_READ_BYTES = 64 * 1024 * 1024
TEXT_TYPES = re.compile(
    r"^(text/.*|application/(json|.*\+json|xml|.*\+xml|csv|x-ndjson|javascript|x-yaml|yaml))$"
)
_UNSAFE_NAME = re.compile(r"[^\w.\- ()\[\]]+")


MAX_FOLLOWED = 3  # downloads one action follows; more are named, not followed
CLAIM_TIMEOUT = 5.0  # seconds for a download the tab said began to be held by the extension
SAFE_DANGER = frozenset({"safe", "accepted"})  # Chrome's words for a download it does not flag
# Files that run or install: asked about even when the action foresaw a download (Chrome names
# its own danger only after it has asked extensions for a file name, so this is Tabrelay's).
_PROGRAM = re.compile(
    r"\.(exe|msi|msix|appx|appxbundle|bat|cmd|com|scr|pif|cpl|ps1|psm1|vbs|vbe|js|jse|wsf|wsh|"
    r"hta|jar|apk|aab|ipa|dmg|pkg|mpkg|app|sh|bash|zsh|command|run|bin|deb|rpm|appimage|snap|"
    r"flatpak|dll|so|dylib|reg|lnk|url|iso|img|vhd|vhdx|xpi|crx)$",
    re.IGNORECASE,
)


async def follow_all(
    ctx: ToolContext, urls: list[str], since: float, *, unconfirmed: frozenset[str] = frozenset()
) -> list[str]:
    """What became of each download an action started (each address once, at most
    ``MAX_FOLLOWED`` followed; ``since``: time.time() when it began): a sentence each.
    ``unconfirmed``: addresses only expected to download (a download link's, no event said so),
    given up on when Chrome shows no download of them within ``APPEAR_TIMEOUT``."""
    unique = list(dict.fromkeys(urls))
    said = [
        await follow(ctx, url, since, appear=APPEAR_TIMEOUT if url in unconfirmed else None)
        for url in unique[:MAX_FOLLOWED]
    ]
    if rest := unique[MAX_FOLLOWED:]:
        said.append(
            f"It started {len(rest)} more download(s) that Tabrelay did not follow: "
            + ", ".join(page_text(url[:200]) for url in rest)
            + "."
        )
    return said


async def follow(ctx: ToolContext, url: str, since: float, *, appear: float | None = None) -> str:
    """Follow the download of ``url`` the call's action started to its end; the sentence the
    action's answer adds (the action happened: what became of its download never makes the call
    fail). ``appear``: seconds within which Chrome must show the download, else none began."""
    try:
        return await _follow(ctx, url, since, appear)
    except (ToolError, BrowserError) as error:
        return f"It started downloading {page_text(url[:300])}, and then: {error.message}."


async def _follow(ctx: ToolContext, url: str, since: float, appear: float | None) -> str:
    browser = ctx.need_browser()
    if ctx.downloads is None or not browser.supports("downloads.search"):
        return (
            f"It started downloading {page_text(url[:300])}; this browser's Tabrelay extension "
            "cannot follow downloads (update it)."
        )
    await ctx.progress(0, None, f"following the download of {url[:200]}")
    began = time.monotonic()
    try:
        held = await _let_through(ctx, browser, url, appear)
    except _Refused as refused:
        return refused.sentence
    deadline = time.monotonic() + FOLLOW_TIMEOUT  # from when the person let it go
    item: dict[str, Any] = {}
    for polls in itertools.count():
        found = await browser.send_command(
            "downloads.search", {"url": url, "startedAfter": int(since * 1000)}
        )
        items = [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []
        if held is not None:  # Chrome's id for it is known: others of that address are not it
            items = [i for i in items if i.get("id") == held]
        if len(items) > 1:  # the person (or another agent) downloading the same file meanwhile
            return (
                f"It started downloading {page_text(url[:300])}, and another download of that "
                "address began at the same time; Tabrelay cannot tell its own apart, and leaves "
                "both in Chrome's download folder."
            )
        item = items[0] if items else item
        state = item.get("state")
        if state == "complete":
            break
        if state == "interrupted":
            return (
                f"It started downloading {page_text(url[:300])}, which stopped "
                f"({page_text(str(item.get('error') or 'interrupted')[:80])})."
            )
        if not item and appear is not None and time.monotonic() >= began + appear:
            return f"No download of {page_text(url[:300])} began within {appear:g} s."
        if time.monotonic() >= deadline:
            got = f" ({_count(item.get('bytesReceived')):,} bytes so far)" if item else ""
            return (
                f"It started downloading {page_text(url[:300])}, still going after "
                f"{FOLLOW_TIMEOUT:g} s{got}; Chrome keeps it in its download folder."
            )
        await asyncio.sleep(min(POLL, FIRST_POLL * 2**polls))  # a small file is done at once
    kept = await _keep(ctx, item, url, since)
    return (
        f"It downloaded a file, {kept.describe()}; browser_get_content with "
        f"download_id='{kept.id}' reads it."
    )


class _Refused(Exception):
    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


async def _let_through(
    ctx: ToolContext, browser: Browser, url: str, appear: float | None
) -> int | None:
    """Let the download of ``url``, which the extension holds for Tabrelay's word, go on once
    the call's approval covers it (``ToolContext.confirm_download``: the person asked about its
    file, size, type and source, unless the call's own approval weighed a download and this
    one is no larger or riskier than that covers): Chrome's id for it, or ``None`` when the
    extension held none. A call cancelled meanwhile cancels the download too.

    Raises:
        _Refused: it was not allowed, and was cancelled (the sentence says why).
    """
    if not browser.held.holding or ctx.confirm_download is None:
        return None
    held = await browser.held.claim(url, timeout=CLAIM_TIMEOUT if appear is None else appear)
    if held is None:
        return None  # none was held: followed as before (Chrome may show none: ``appear``)
    what = _held_words(held, url)
    try:
        await _ask(ctx, what, beyond=_beyond(ctx, held))
    except ApprovalDenied as denied:
        await _cancel(browser, held.id)
        raise _Refused(
            f"It began downloading {what}, and Chrome cancelled it: {denied.message}."
        ) from None
    except BaseException:  # cancelled while the person decides: the download ends with it
        browser.held.decide_later(held.id, allow=False)
        raise
    await browser.held.decide(held.id, allow=True)
    return held.id


async def settle(ctx: ToolContext, held: HeldDownload) -> bool:
    """Whether a download that began while the call's action was under way, and that its
    aftermath did not follow (a page's script, another tab, a frame of another process, past
    ``MAX_FOLLOWED``), may go on: the person is asked whatever the call's approval covered."""
    if ctx.confirm_download is None:
        return False
    try:
        await _ask(
            ctx,
            f"{_held_words(held, held.url)}; it began while this call ran, from nothing Tabrelay "
            "followed",
            beyond=True,
        )
    except ApprovalDenied:
        return False
    return True


async def _ask(ctx: ToolContext, what: str, *, beyond: bool) -> None:
    """The call's approval asked about a held download (``ToolContext.confirm_download``),
    withdrawn when the browser goes meanwhile (``HeldDownloads.asking``).

    Raises:
        ApprovalDenied: it was not allowed.
        BrowserDisconnected: the browser went first.
    """
    assert ctx.confirm_download is not None
    async with ctx.need_browser().held.asking():
        await ctx.confirm_download(what, beyond=beyond)


def _beyond(ctx: ToolContext, held: HeldDownload) -> bool:
    """Whether a download is more than an approval that foresaw one covers: larger than the
    settings' limit, of a size the server did not say, a program, or flagged by Chrome."""
    limit = ctx.settings.download_ask_over_mb * 1024 * 1024
    return (
        held.danger not in SAFE_DANGER
        or not 0 <= held.total_bytes <= limit
        or _PROGRAM.search(held.filename) is not None
    )


def _held_words(held: HeldDownload, url: str) -> str:
    """A held download in words for the person and the agent: name, size, type, source."""
    size = f"{held.total_bytes:,} bytes" if held.total_bytes >= 0 else "size not given"
    flagged = "" if held.danger in SAFE_DANGER else f", which Chrome flags as {held.danger!r}"
    if _PROGRAM.search(held.filename):
        flagged += ", a program or an installer"
    name = page_text(held.filename) if held.filename else "a file"
    kind = page_text(held.mime) if held.mime else "type unknown"
    return f"{name} ({size}, {kind}) from {page_text((held.final_url or url)[:300])}{flagged}"


async def _cancel(browser: Browser, download_id: int) -> None:
    """A held download cancelled; a browser gone meanwhile cancels what it held itself."""
    with contextlib.suppress(BrowserError):
        await browser.held.decide(download_id, allow=False)


def _count(value: Any) -> int:
    """A byte count from the extension's answer (0 for anything else)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


async def _keep(ctx: ToolContext, item: dict[str, Any], url: str, since: float) -> Download:
    """Move the complete file ``item`` into the person's folder and remember it; a cancel
    meanwhile still ends with the file kept and remembered.

    Raises:
        ToolError: the file is not one this download wrote in Chrome's download folder, or the
            folder cannot take it.
    """
    downloads = ctx.downloads
    assert downloads is not None
    written = Path(str(item.get("filename") or ""))
    source = Path(ctx.settings.browser_download_dir or platformdirs.user_downloads_dir())
    folder = downloads.folder(ctx.settings.download_dir)
    size = _count(item.get("fileSize")) or _count(item.get("bytesReceived"))
    kept: list[Download] = []

    async def move_and_remember() -> None:
        path, moved = await asyncio.to_thread(_move, written, source, folder, since, size)
        kept.append(downloads.add(
            ctx.owner, name=path.name, path=path, size=moved,
            mime=str(item.get("mime") or "")[:100], url=str(item.get("finalUrl") or url),
        ))  # fmt: skip

    try:
        await ctx.settle(move_and_remember())
    except _Outside:
        raise ToolError(
            f"Chrome saved the file outside {source}, the only folder Tabrelay takes downloads "
            "from (browser_download_dir in the settings names another); it stays where Chrome "
            "put it"
        ) from None
    except FileNotFoundError:
        raise ToolError(
            "Chrome downloaded the file, but Tabrelay cannot find it where Chrome says it is; "
            "look in Chrome's downloads (chrome://downloads)"
        ) from None
    except OSError as error:
        raise ToolError(
            f"the download could not be moved into {folder} ({error.strerror})"
        ) from None
    return kept[0]


class _Outside(OSError):
    """The file Chrome named is not in the folder downloads are taken from."""


def _move(written: Path, source: Path, folder: Path, since: float, size: int) -> tuple[Path, int]:
    """``written`` moved from ``source`` (Chrome's download folder) into ``folder`` under a free
    name, the file made 0600 (``folder`` made 0700 when it is made): where it is now, and its
    size. Whatever the extension says, only the file this download wrote is taken: a regular
    file right in ``source`` (no link on the way), the person's own, with one name, last
    written since the action began, of the size Chrome reported.

    Raises:
        _Outside: ``written`` is not in ``source``.
        FileNotFoundError: it is not such a file.
        OSError: the folder cannot take it.
    """
    if not written.is_absolute():
        raise FileNotFoundError(written)
    if Path(os.path.realpath(written)) != written or written.parent != Path(
        os.path.realpath(source)
    ):
        raise _Outside(written)
    found = written.lstat()
    if (
        not stat.S_ISREG(found.st_mode)
        or found.st_nlink != 1
        or found.st_uid != os.geteuid()
        or found.st_mtime < since - CLOCK_SLACK
        or (size and found.st_size != size)
    ):
        raise FileNotFoundError(written)
    make_private_dir(folder)
    stem = _UNSAFE_NAME.sub("_", written.stem)[:100].strip(" .") or "download"
    suffix = _UNSAFE_NAME.sub("_", written.suffix)[:20]
    for n in itertools.count(1):
        target = folder / (f"{stem}{suffix}" if n == 1 else f"{stem} ({n}){suffix}")
        try:  # claimed atomically: two moves never pick the same name
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            break
        except FileExistsError:
            continue
    try:
        shutil.move(written, target)
    except OSError:
        with contextlib.suppress(OSError):
            target.unlink()
        raise
    os.chmod(target, 0o600)
    return target, target.stat().st_size


async def read_text(ctx: ToolContext, download_id: str) -> tuple[Download, str]:
    """The session's download ``download_id`` and its text.

    Raises:
        ToolError: no such download for this session, its file is gone, or it is not text,
            CSV, JSON or a PDF pypdf can read.
    """
    if ctx.downloads is None:
        raise ToolError("this Tabrelay keeps no downloads")
    download = ctx.downloads.get(ctx.owner, download_id)
    try:
        data = await asyncio.to_thread(_read, download.path)
    except OSError as error:
        raise ToolError(
            f"{download.id} can no longer be read from {download.path} ({error.strerror})"
        ) from None
    if data.startswith(b"%PDF-") or download.mime == pdf.MIME_TYPE:
        pages, total, cut = await asyncio.to_thread(pdf.parse, data, pdf.PARSE_SECONDS)
        return download, pdf.text_of(PdfPages("", tuple(pages), total, cut))
    if TEXT_TYPES.match(download.mime.split(";")[0].strip()) or _looks_like_text(data):
        return download, data.decode("utf-8", errors="replace")
    raise ToolError(
        f"{download.id} ({page_text(download.mime or 'type unknown')}) is not text, CSV, JSON or "
        "a PDF; Tabrelay reads only those"
    )


def _read(path: Path) -> bytes:
    with path.open("rb") as file:
        data = file.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise OSError(0, f"larger than {MAX_READ_BYTES // (1024 * 1024)} MB")
    return data


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start > len(head) - 4  # a character cut at the end of the sample
    return True
