"""The PDF a tab shows, as text page by page (issue 26): for ``browser_get_content``.

The bytes are the tab's: fetched again in the tab's own network context
(``Network.loadNetworkResource`` with its cookies, from the HTTP cache where the response allows),
never by a request of Tabrelay's own, and read in chunks (``IO.read``) up to ``MAX_BYTES``.
pypdf parses them in a worker thread, page by page, for at most ``PARSE_SECONDS``; it was
chosen over pdfminer.six by measuring both on PDFs of five producers (``make bench``, "pdf"):
the same words, 2 to 9 times faster, no ``(cid:N)`` for glyphs without a mapping, and no
dependencies. What a PDF says is the page's words: the caller marks it as data. The pages read
are kept in the tab's state for that document (``TabState.pdf``), so continuing does not fetch
or parse again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import time
from typing import Any

from tabrelay.errors import CommandFailed, TabrelayError, ToolError
from tabrelay.protocol.constants import ErrorCode
from tabrelay.tools.context import ToolContext
from tabrelay.tools.state.tab_state import PdfPages

MIME_TYPE = "application/pdf"
MAX_BYTES = 64 * 1024 * 1024
CHUNK = 1024 * 1024  # bytes asked for in one IO.read
PARSE_SECONDS = 20.0  # the text stops at the page being read when this runs out
CLOSE_TIMEOUT = 2.0


def shown(tree: dict[str, Any]) -> dict[str, Any] | None:
    """The tab's main frame (from ``Page.getFrameTree``) when it shows a PDF, else None."""
    frame: dict[str, Any] = tree.get("frameTree", {}).get("frame", {})
    return frame if frame.get("mimeType") == MIME_TYPE else None


def text_of(pdf: PdfPages) -> str:
    """The pages read, each under a marker: ``--- page N of TOTAL ---``."""
    parts = [f"--- page {n} of {pdf.total} ---\n{text.strip()}\n" for n, text in enumerate(
        pdf.pages, 1
    )]  # fmt: skip
    if pdf.cut:
        parts.append(f"--- pages {len(pdf.pages) + 1} to {pdf.total} not read: {pdf.cut} ---\n")
    return "\n".join(parts)


async def read(ctx: ToolContext, frame: dict[str, Any]) -> PdfPages:
    """The text of the PDF ``frame`` (the tab's main frame) shows.

    Raises:
        ToolError: it could not be fetched in the tab's context, is too large, is protected by a
            password, or is not a PDF pypdf can read (each says so).
    """
    state = ctx.state
    loader = str(frame.get("loaderId", ""))
    if state.pdf is not None and state.pdf.loader_id == loader:
        return state.pdf
    data = await _fetch(ctx, str(frame["id"]), str(frame.get("url", "")))
    await ctx.progress(0, None, f"reading a PDF of {len(data):,} bytes")
    pages, total, cut = await asyncio.to_thread(parse, data, PARSE_SECONDS)
    read = PdfPages(loader, tuple(pages), total, cut)
    if cut is None:  # a read cut short is tried again whole next time
        state.pdf = read
    return read


async def _fetch(ctx: ToolContext, frame_id: str, url: str) -> bytes:
    """The PDF's bytes, fetched again in the tab; once more when Chrome's viewer took the tab's
    page into another process meanwhile (a stream being read is lost with the session)."""
    try:
        return await _fetch_once(ctx, frame_id, url)
    except CommandFailed as failed:
        if failed.code != ErrorCode.DETACHED:
            raise _unfetched(failed) from None
    try:
        return await _fetch_once(ctx, frame_id, url)
    except CommandFailed as failed:
        raise _unfetched(failed) from None


def _unfetched(failed: CommandFailed) -> ToolError:
    return ToolError(f"the PDF could not be fetched in the tab ({failed.message})")


async def _fetch_once(ctx: ToolContext, frame_id: str, url: str) -> bytes:
    loaded = await ctx.cdp(
        "Network.loadNetworkResource",
        {
            "frameId": frame_id,
            "url": url,
            "options": {"disableCache": False, "includeCredentials": True},
        },
    )
    resource = loaded.get("resource", {})
    stream = resource.get("stream")
    status = resource.get("httpStatusCode")
    refused = isinstance(status, int) and status >= 400
    if not resource.get("success") or refused or not isinstance(stream, str):
        if isinstance(stream, str):
            await ctx.settle(_close(ctx, stream))
        why = resource.get("netErrorName") or f"HTTP {resource.get('httpStatusCode', '?')}"
        raise ToolError(f"the PDF could not be fetched again with the tab's cookies ({why})")
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            part = await ctx.cdp("IO.read", {"handle": stream, "size": CHUNK})
            data = str(part.get("data", ""))
            chunk = base64.b64decode(data) if part.get("base64Encoded") else data.encode()
            size += len(chunk)
            if size > MAX_BYTES:
                raise ToolError(
                    f"the PDF is larger than {MAX_BYTES // (1024 * 1024)} MB; Tabrelay does not "
                    "read PDFs that large"
                )
            chunks.append(chunk)
            if part.get("eof") or not chunk:
                return b"".join(chunks)
    finally:
        await ctx.settle(_close(ctx, stream))


async def _close(ctx: ToolContext, stream: str) -> None:
    with contextlib.suppress(TimeoutError, TabrelayError):
        async with asyncio.timeout(CLOSE_TIMEOUT):
            await ctx.cdp("IO.close", {"handle": stream})


def parse(data: bytes, seconds: float) -> tuple[list[str], int, str | None]:
    """The text of each page of the PDF ``data`` (as many as ``seconds`` allow), how many pages
    it has, and why the text stops early (None: every page was read).

    Raises:
        ToolError: a password protects it, or pypdf cannot read it.
    """
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError

    deadline = time.monotonic() + seconds
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolError("the PDF is protected by a password; Tabrelay cannot read it")
        total = len(reader.pages)
        pages: list[str] = []
        for page in reader.pages:
            if time.monotonic() > deadline:
                return pages, total, f"reading took longer than {seconds:g} s"
            pages.append(page.extract_text() or "")
        return pages, total, None
    except ToolError:
        raise
    except FileNotDecryptedError:
        raise ToolError("the PDF is protected by a password; Tabrelay cannot read it") from None
    # A PDF is a page's bytes: whatever pypdf raises on them (its own errors, and the ValueError,
    # KeyError, TypeError… of a structure it did not expect) means it cannot be read.
    # (Its message is left out: it may quote the PDF.)
    except Exception as error:  # noqa: BLE001
        raise ToolError(f"Tabrelay could not read this PDF ({type(error).__name__})") from None
