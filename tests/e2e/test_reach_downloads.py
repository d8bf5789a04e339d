"""Downloads (issue 26, finding 3): an action that starts a download follows it and answers with
the file's name, size, type, source and a download id; the file is moved into Tabrelay's private
folder (0700, the file 0600); the session lists its downloads (``browser_status``) and reads
one's text (``browser_get_content`` with ``download_id``: CSV, text, PDF) within the budget,
and no other session can.

Real Chromium with the extension (its ``downloads`` permission, ``downloads.search``), files the
tests' page server sends as attachments (tests/e2e/pages/reach/export.html links to them).
"""

from __future__ import annotations

import asyncio
import base64
import re
import stat
import time
import urllib.parse
import uuid
from pathlib import Path

from e2e.agent import Agent, ref
from e2e.conftest import E2E
from e2e.effect_probe import grant_site
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from support.mcp import mcp_client, raw_text_of, text_of
from tabrelay.approval.gate import Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import Settings
from tabrelay.tools.results import plain

pytestmark = E2E

CSV = b"id,name,total\n1,Ada,12.50\n2,Grace,7.25\n"


async def export_page(agent: Agent, pages: PageServer, **files: str) -> tuple[int, str]:
    query = urllib.parse.urlencode(files)
    tab = await agent.open(pages.url(f"reach/export.html?{query}&t={uuid.uuid4().hex[:6]}"))
    return tab, await agent.snapshot(tab)


def download_id(said: str) -> str:
    match = re.search(r"download (d\d+):", said)
    assert match, said
    return match.group(1)


async def test_a_click_that_downloads_answers_with_the_file_and_keeps_it_private(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/report", CSV, "text/csv",
                      attachment="report.csv")  # fmt: skip
    tab, snapshot = await export_page(agent, pages, csv=csv)
    person = app.harness.tool_approver
    before = len(person.requests)
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Export CSV"))
    # The person was asked, the click judged a download (the control issue's effects), and
    # once: the file Chrome then held is no larger than the settings' limit.
    [asked] = person.requests[before:]
    assert asked.tool == "browser_click" and asked.effect is not None
    assert asked.effect.kind.value == "download" and not asked.effect.certain
    assert re.search(
        rf"download d\d+: report\.csv \({len(CSV)} bytes, text/csv\) from {re.escape(csv)}", said
    ), said
    kept = module_paths.downloads_dir / "report.csv"
    assert kept.read_bytes() == CSV
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(module_paths.downloads_dir.stat().st_mode) == 0o700
    assert not (Path.home() / "Downloads" / "report.csv").exists(), "moved, not copied"

    listed = await agent.ok("browser_status")
    assert f"- download {download_id(said)}: report.csv" in listed, listed
    read = await agent.call("browser_get_content", download_id=download_id(said))
    assert not read.is_error, text_of(read)
    assert "1,Ada,12.50" in text_of(read)
    # The file's words, its name and address are data.
    assert re.search(r"<page-text \w+>id,name,total\n", raw_text_of(read)), raw_text_of(read)
    assert re.search(r"<page-text \w+>report\.csv</page-text", raw_text_of(read))


async def test_a_pdf_and_a_long_download_are_read_and_continue_from_an_offset(
    agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    printer = await browser.open_page(pages.url("reach/invoice.html?pages=3"))
    printed = await printer.session.send("Page.printToPDF", {"preferCSSPageSize": True})
    await printer.close()
    pdf = pages.serve(f"files/{uuid.uuid4().hex[:6]}/inv", base64.b64decode(printed["data"]),
                      "application/pdf", attachment="invoice.pdf")  # fmt: skip
    notes = pages.serve(f"files/{uuid.uuid4().hex[:6]}/notes", b"line\n" * 40_000, "text/plain",
                        attachment="notes.txt")  # fmt: skip
    tab, snapshot = await export_page(agent, pages, pdf=pdf)

    said = await agent.ok(
        "browser_click", tab_id=tab, ref=ref(snapshot, "link", "Download the invoice")
    )
    text = await agent.ok("browser_get_content", download_id=download_id(said))
    assert "--- page 3 of 3 ---" in text and "Total due: 1,234.56 EUR" in text

    # A long text, followed to its end and read in parts.
    tab, snapshot = await export_page(agent, pages, csv=notes)
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Export CSV"))
    assert re.search(r"notes( \(\d+\))?\.txt \(200,000 bytes", said), said  # Chrome's own name
    first = await agent.ok("browser_get_content", download_id=download_id(said))
    match = re.search(r"call again with offset=(\d+)", first)
    assert match, first[-300:]
    rest = await agent.ok("browser_get_content", download_id=download_id(said),
                          offset=int(match.group(1)))  # fmt: skip
    assert rest.count("line") > 0


async def test_a_link_with_a_download_attribute_is_followed_though_it_starts_no_navigation(
    agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    # Not an attachment: the page's own `download="notes.txt"` makes the link a download, which
    # Chrome begins once the server answers (here 0.4 s after the click: a slow server), with
    # no navigation of the tab to wait for.
    body = b"remember the milk\n"
    notes = pages.serve(f"files/{uuid.uuid4().hex[:6]}/plain", body, "text/plain")
    tab, snapshot = await export_page(agent, pages, named=f"{notes}?delay=400")
    said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Save notes"))
    assert re.search(r"download d\d+: notes[^./]*\.txt \(18 bytes, text/plain\)", said), said
    assert "did not open a page" not in said, said
    assert "remember the milk" in await agent.ok(
        "browser_get_content", download_id=download_id(said)
    )


async def test_another_session_cannot_list_or_read_a_download_and_bad_ids_are_refused(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/mine", CSV, "text/csv", attachment="mine.csv")
    tab, snapshot = await export_page(agent, pages, csv=csv)
    mine = download_id(
        await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Export CSV"))
    )
    token = await app.harness.add_client("another-agent")
    async with mcp_client(app.harness.base_mcp(), token) as client:
        other = Agent(client)
        assert "downloads" not in await other.ok("browser_status")
        refused = await other.fails("browser_get_content", download_id=mine)
        assert f"no download '{mine}'" in refused, refused
    for bad in ("d999999", "../../etc/passwd", "", "d1; rm -rf /"):
        said = await agent.fails("browser_get_content", download_id=bad)
        assert "no download" in said or "download_id" in said, said


async def prepare_page(
    app: AppUnderTest, agent: Agent, pages: PageServer, name: str
) -> tuple[int, str, str]:
    """A page whose button sends its tab to a CSV attachment ``name`` (nothing on the button
    says so), the button allowed on the site ahead ("always allow browser_click here"): the
    tab, the button's ref and the file's address."""
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/{name}", CSV, "text/csv", attachment=name)
    tab, snapshot = await export_page(agent, pages, prepare=csv)
    await grant_site(app, pages.url("reach/export.html"), tools=("browser_click",))
    return tab, ref(snapshot, "button", "Prepare the numbers"), csv


async def without_grants(app: AppUnderTest) -> None:
    def forget(settings: Settings) -> None:
        settings.policy_rules.clear()
        settings.download_ask_over_mb = Settings().download_ask_over_mb

    await asyncio.to_thread(app.harness.core.settings_store.update, forget)


def chromes_copies(name: str) -> list[Path]:
    """What Chrome's download folder holds of a file (whole, or half-written)."""
    stem = name.rsplit(".", 1)[0]
    return sorted((Path.home() / "Downloads").glob(f"{stem}*"))


async def test_a_download_no_approval_foresaw_waits_until_the_person_allows_it_knowing_its_size(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    tab, button, csv = await prepare_page(app, agent, pages, "numbers.csv")
    person = app.harness.tool_approver
    before = len(person.requests)
    try:
        said = await agent.ok("browser_click", tab_id=tab, ref=button)
    finally:
        await without_grants(app)
    # The click itself ran under the grant (a button that says nothing of files is routine);
    # the download it began was held by the extension until the person allowed it, shown its
    # file, size, type and source.
    [asked] = person.requests[before:]
    assert asked.tool == "browser_click" and asked.effect is not None
    assert asked.effect.kind.value == "download" and asked.effect.certain
    shown = plain(asked.effect.why)
    assert shown == f"numbers.csv ({len(CSV)} bytes, text/csv) from {csv}", shown
    assert asked.effect.sentence("click", "x").startswith("This click will DOWNLOAD A FILE on x")
    assert re.search(rf"download d\d+: numbers\.csv \({len(CSV)} bytes, text/csv\)", said), said
    assert (module_paths.downloads_dir / "numbers.csv").read_bytes() == CSV


async def test_a_download_the_person_refuses_is_cancelled_and_nothing_of_it_is_kept(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    tab, button, _csv = await prepare_page(app, agent, pages, "refused.csv")
    person = app.harness.tool_approver
    person.answer = Choice.DENY
    try:
        said = await agent.ok("browser_click", tab_id=tab, ref=button)
    finally:
        person.answer = Choice.ALLOW_ONCE
        await without_grants(app)
    assert re.search(
        rf"It began downloading refused\.csv \({len(CSV)} bytes, text/csv\) from .*, and Chrome "
        r"cancelled it: denied by the person",
        said,
    ), said
    assert "download d" not in said and "download_id" not in said, said
    assert "refused.csv" not in await agent.ok("browser_status")
    assert not (module_paths.downloads_dir / "refused.csv").exists()
    for _ in range(20):  # Chrome removes a cancelled download's part file as it cancels
        if not chromes_copies("refused.csv"):
            break
        await asyncio.sleep(0.1)
    assert chromes_copies("refused.csv") == [], "nothing of it stays in Chrome's folder"


async def test_a_foreseen_download_larger_than_the_limit_is_asked_about_again_with_its_size(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    def no_limit(settings: Settings) -> None:
        settings.download_ask_over_mb = 0  # every file is larger

    await asyncio.to_thread(app.harness.core.settings_store.update, no_limit)
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/big", CSV, "text/csv", attachment="big.csv")
    tab, snapshot = await export_page(agent, pages, csv=csv)
    person = app.harness.tool_approver
    before = len(person.requests)
    try:
        said = await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "link", "Export CSV"))
    finally:
        await without_grants(app)
    foreseen, seen = person.requests[before:]
    assert foreseen.effect is not None and not foreseen.effect.certain
    assert seen.effect is not None and seen.effect.certain
    assert f"big.csv ({len(CSV)} bytes, text/csv) from {csv}" in plain(seen.effect.why)
    assert "download d" in said, said


async def test_the_persons_own_download_goes_on_without_a_question_while_tabrelay_holds_them(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer
) -> None:
    name = f"mine-{uuid.uuid4().hex[:6]}.csv"
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/own", CSV, "text/csv", attachment=name)
    person = app.harness.tool_approver
    before = len(person.requests)
    page = await browser.open_page(pages.url("reach/export.html"), own_window=True)
    try:
        await page.session.send("Runtime.evaluate", {"expression": f"location.href = {csv!r}"})
        kept = Path.home() / "Downloads" / name
        for _ in range(100):
            if kept.exists():
                break
            await asyncio.sleep(0.1)
        assert kept.read_bytes() == CSV, "Chrome finished it: the app let it go at once"
        kept.unlink()
    finally:
        await page.close()
    assert person.requests[before:] == []


async def test_navigating_to_a_file_that_downloads_follows_it_as_a_click_does(
    app: AppUnderTest, agent: Agent, pages: PageServer, module_paths: Paths
) -> None:
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/went", CSV, "text/csv", attachment="went.csv")
    tab, _ = await export_page(agent, pages)
    person = app.harness.tool_approver
    before = len(person.requests)
    said = await agent.ok("browser_navigate", tab_id=tab, url=csv)
    # Asked about once for the navigation (its address), and once for what it turned out to
    # be: a download, named with its size.
    navigation, download = person.requests[before:]
    assert navigation.tool == download.tool == "browser_navigate"
    assert download.effect is not None and download.effect.certain
    assert plain(download.effect.why) == f"went.csv ({len(CSV)} bytes, text/csv) from {csv}"
    assert re.search(rf"download d\d+: went\.csv \({len(CSV)} bytes, text/csv\)", said), said
    assert (module_paths.downloads_dir / "went.csv").read_bytes() == CSV
    assert re.search(r"The tab stayed on \S*reach/export\.html", said), said


async def test_a_download_that_began_elsewhere_during_an_action_is_asked_about_as_it_ends(
    app: AppUnderTest, agent: Agent, pages: PageServer
) -> None:
    # The page opens the file in a tab of its own: the click's aftermath follows its tab, not
    # that one, so nothing claims the download; the click settles it as it ends.
    csv = pages.serve(f"files/{uuid.uuid4().hex[:6]}/elsewhere", CSV, "text/csv",
                      attachment="elsewhere.csv")  # fmt: skip
    tab, snapshot = await export_page(agent, pages, popup=csv)
    await grant_site(app, pages.url("reach/export.html"), tools=("browser_click",))
    person = app.harness.tool_approver
    person.answer = Choice.DENY
    before = len(person.requests)
    try:
        await agent.ok("browser_click", tab_id=tab, ref=ref(snapshot, "button", "Show the numbers"))
    finally:
        person.answer = Choice.ALLOW_ONCE
        await without_grants(app)
    [asked] = person.requests[before:]
    assert asked.effect is not None and asked.effect.certain
    assert plain(asked.effect.why) == (
        f"elsewhere.csv ({len(CSV)} bytes, text/csv) from {csv}; it began while this call ran, "
        "from nothing Tabrelay followed"
    )
    for _ in range(20):
        if not chromes_copies("elsewhere.csv"):
            break
        await asyncio.sleep(0.1)
    assert chromes_copies("elsewhere.csv") == [], "refused: nothing of it stays"


async def test_a_download_held_when_the_extensions_worker_stops_is_undone_and_the_call_answers(
    app: AppUnderTest, agent: Agent, browser: ExtensionBrowser, pages: PageServer
) -> None:
    # Chrome stops the extension's worker (a crash, an update, serviceworker-internals' Stop)
    # while a download waits for the person. Its listener goes with it, and Chrome completes
    # the download under its own name: the next worker, woken by that, removes the file.
    name = f"stopped-{uuid.uuid4().hex[:6]}.csv"
    tab, button, csv = await prepare_page(app, agent, pages, name)
    person = app.harness.tool_approver
    person.answer = None  # the person has not decided yet
    before = len(person.requests)
    relay = await app.browser()
    began = time.time()
    click = asyncio.create_task(agent.call("browser_click", tab_id=tab, ref=button))
    try:
        for _ in range(100):
            if person.requests[before:] or click.done():
                break
            await asyncio.sleep(0.1)
        [asked] = person.requests[before:]
        assert asked.effect is not None and asked.effect.certain, "held, and asked about"
        await browser.cdp.send("Target.closeTarget", {"targetId": await browser.worker_target_id()})
        said = text_of(await asyncio.wait_for(click, 10))
    finally:
        person.answer = Choice.ALLOW_ONCE
        await without_grants(app)
    # The call answers at once (its other commands fail with the connection, or the question
    # does), and the question went with the browser.
    assert "disconnected" in said and "download d" not in said, said
    assert asked in person.withdrawn
    back = await wait_until(  # the new worker reconnects (at the latest by its 30 s alarm)
        lambda: next((b for b in app.browsers() if b is not relay), None),
        timeout=40,
        message="the extension came back",
    )

    async def settled() -> list[dict[str, object]] | None:
        found: list[dict[str, object]] = await back.send_command(
            "downloads.search", {"url": csv, "startedAfter": int(began * 1000)}
        )
        complete = found and found[0]["state"] == "complete" and found[0]["exists"]
        return found if found and not complete else None

    # Chrome did go on with it when the worker went; the next worker took it back.
    [download] = await wait_until(settled, timeout=5, message="the download undone")
    assert download["state"] == "interrupted" or (
        download["state"] == "complete" and download["exists"] is False
    ), download
    assert chromes_copies(name) == [], "nothing of it stays in Chrome's folder"
