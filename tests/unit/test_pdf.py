"""Reading the PDF a tab shows (tools/page/pdf.py): parsing real PDFs (made here by ReportLab and
pypdf), and fetching against scripted CDP answers: what a failed or oversized fetch says, that
the stream is always closed (a cancel included), and that the tab's state keeps the pages for
the document they came from. End to end in real Chromium: tests/e2e/test_reach_pdf.py."""

from __future__ import annotations

import asyncio
import base64
import io
import re
from typing import Any

import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.pdfgen import canvas

from support.scripted import ScriptedTab
from tabrelay.errors import CommandFailed, ToolError
from tabrelay.tools.context import ToolContext
from tabrelay.tools.page import pdf
from tabrelay.tools.state.tab_state import PdfPages, TabState


def made(pages: int) -> bytes:
    out = io.BytesIO()
    sheet = canvas.Canvas(out)
    for n in range(1, pages + 1):
        sheet.drawString(72, 720, f"Sheet {n} says hello")
        sheet.showPage()
    sheet.save()
    return out.getvalue()


def test_a_pdf_is_read_page_by_page_with_markers() -> None:
    pages, total, cut = pdf.parse(made(3), 10)
    assert (total, cut) == (3, None)
    assert [p.strip() for p in pages] == [f"Sheet {n} says hello" for n in (1, 2, 3)]
    text = pdf.text_of(PdfPages("L", tuple(pages), total))
    assert text.splitlines()[0] == "--- page 1 of 3 ---"
    assert text.count("--- page ") == 3


def test_a_read_that_runs_out_of_time_says_where_it_stopped() -> None:
    pages, total, cut = pdf.parse(made(4), -1)  # out of time before the first page
    assert (pages, total) == ([], 4)
    assert cut == "reading took longer than -1 s"
    text = pdf.text_of(PdfPages("L", (), total, cut))
    assert text == "--- pages 1 to 4 not read: reading took longer than -1 s ---\n"


def test_a_password_or_a_broken_file_is_said_plainly() -> None:
    locked = PdfWriter(clone_from=PdfReader(io.BytesIO(made(1))))
    locked.encrypt("open sesame")
    sealed = io.BytesIO()
    locked.write(sealed)
    with pytest.raises(ToolError, match="protected by a password"):
        pdf.parse(sealed.getvalue(), 10)
    # Only an owner password: it opens for reading.
    owned = PdfWriter(clone_from=PdfReader(io.BytesIO(made(1))))
    owned.encrypt("", owner_password="owner")
    opened = io.BytesIO()
    owned.write(opened)
    assert pdf.parse(opened.getvalue(), 10)[0][0].strip() == "Sheet 1 says hello"
    for broken in (b"", b"%PDF-1.7\n garbage", b"<html>not a pdf</html>", made(2)[:300]):
        with pytest.raises(ToolError, match=r"could not read this PDF \(\w+\)"):
            pdf.parse(broken, 10)


def test_a_pdf_is_told_by_the_main_frames_mime_type() -> None:
    frame = {"id": "F", "url": "https://x/a.pdf", "mimeType": "application/pdf"}
    assert pdf.shown({"frameTree": {"frame": frame}}) is frame
    assert pdf.shown({"frameTree": {"frame": {"mimeType": "text/html"}}}) is None
    assert pdf.shown({}) is None


class Tab(ScriptedTab):
    settle = ToolContext.settle

    def __init__(self, **answers: Any) -> None:
        super().__init__(**answers)
        self.state = TabState(("b", 1))
        self.background: set[asyncio.Future[Any]] = set()

    async def progress(self, *args: Any) -> None:
        pass


FRAME = {"id": "F", "loaderId": "L1", "url": "https://shop.test/invoice.pdf"}


def streamed(data: bytes, chunk: int = 1000) -> list[dict[str, Any]]:
    parts = [data[i : i + chunk] for i in range(0, len(data), chunk)] or [b""]
    return [
        {"base64Encoded": True, "data": base64.b64encode(p).decode(), "eof": i == len(parts) - 1}
        for i, p in enumerate(parts)
    ]


def loaded(stream: str = "S") -> dict[str, Any]:
    return {"resource": {"success": True, "stream": stream, "httpStatusCode": 200}}


async def test_the_bytes_are_fetched_in_the_tab_with_its_cookies_and_kept_for_the_document() -> (
    None
):
    data = made(2)
    tab = Tab(Network_loadNetworkResource=loaded(), IO_read=streamed(data))
    read = await pdf.read(tab, FRAME)  # type: ignore[arg-type]
    assert read.total == 2 and read.loader_id == "L1"
    method, params = tab.sent[0]
    assert method == "Network.loadNetworkResource"
    assert params == {"frameId": "F", "url": FRAME["url"],
                      "options": {"disableCache": False, "includeCredentials": True}}  # fmt: skip
    assert tab.sent[-1] == ("IO.close", {"handle": "S"})
    # The same document again: no second fetch. Another document: fetched anew.
    assert await pdf.read(tab, FRAME) is read  # type: ignore[arg-type]
    assert sum(m == "Network.loadNetworkResource" for m, _ in tab.sent) == 1
    tab.answers.update(Network_loadNetworkResource=loaded("T"), IO_read=streamed(made(1)))
    assert (await pdf.read(tab, {**FRAME, "loaderId": "L2"})).total == 1  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"resource": {"success": False, "netErrorName": "net::ERR_ACCESS_DENIED"}},
         "ERR_ACCESS_DENIED"),
        ({"resource": {"success": False, "httpStatusCode": 403}}, "HTTP 403"),
        ({"resource": {"success": True}}, "HTTP ?"),  # no stream
        ({"resource": {"success": True, "httpStatusCode": 404, "stream": "S"}}, "HTTP 404"),
        ({}, "HTTP ?"),
        (CommandFailed("Frame not found"), "could not be fetched in the tab (Frame not found)"),
    ],
)  # fmt: skip
async def test_a_fetch_that_fails_says_why_and_reads_nothing(answer: Any, said: str) -> None:
    tab = Tab(Network_loadNetworkResource=answer)
    with pytest.raises(ToolError, match=re.escape(said)):
        await pdf.read(tab, FRAME)  # type: ignore[arg-type]
    assert tab.state.pdf is None


async def test_a_pdf_too_large_is_refused_and_its_stream_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = made(3)
    monkeypatch.setattr(pdf, "MAX_BYTES", len(data) // 2)
    tab = Tab(Network_loadNetworkResource=loaded(), IO_read=streamed(data, len(data) // 4 + 1))
    with pytest.raises(ToolError, match="larger than"):
        await pdf.read(tab, FRAME)  # type: ignore[arg-type]
    assert tab.sent[-1] == ("IO.close", {"handle": "S"})
    assert [m for m, _ in tab.sent].count("IO.read") == 2  # of 4: it stopped once past the limit


async def test_a_cancel_while_reading_still_closes_the_stream() -> None:
    gate: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    tab = Tab(Network_loadNetworkResource=loaded(), IO_read=[gate])
    reading = asyncio.ensure_future(pdf.read(tab, FRAME))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    await asyncio.sleep(0.01)
    assert ("IO.close", {"handle": "S"}) in tab.sent
    assert tab.state.pdf is None


async def test_a_read_cut_short_by_time_is_not_kept_and_is_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = made(2)
    monkeypatch.setattr(pdf, "PARSE_SECONDS", -1)
    tab = Tab(Network_loadNetworkResource=loaded(), IO_read=streamed(data))
    read = await pdf.read(tab, FRAME)  # type: ignore[arg-type]
    assert read.cut and tab.state.pdf is None
    monkeypatch.setattr(pdf, "PARSE_SECONDS", 10)
    tab.answers.update(Network_loadNetworkResource=loaded("T"), IO_read=streamed(data))
    assert (await pdf.read(tab, FRAME)).cut is None  # type: ignore[arg-type]
    assert tab.state.pdf is not None


async def test_a_fetch_the_viewer_interrupts_is_made_again_once() -> None:
    # Chrome's PDF viewer takes the tab's page into another process once it has the file: a
    # stream being read then is lost with the debugger session that opened it.
    data = made(2)
    detached = CommandFailed("The debugger was detached from tab 1", code="detached")
    tab = Tab(
        Network_loadNetworkResource=[loaded("S"), loaded("T")],
        IO_read=[detached, *streamed(data)],
    )
    assert (await pdf.read(tab, FRAME)).total == 2  # type: ignore[arg-type]
    assert tab.methods().count("Network.loadNetworkResource") == 2
    closed = [params["handle"] for method, params in tab.sent if method == "IO.close"]
    assert closed == ["S", "T"]
    # Lost twice: said, not tried forever.
    tab = Tab(Network_loadNetworkResource=[loaded("S"), loaded("T")], IO_read=[detached, detached])
    with pytest.raises(ToolError, match="could not be fetched in the tab"):
        await pdf.read(tab, FRAME)  # type: ignore[arg-type]
    assert tab.state.pdf is None
