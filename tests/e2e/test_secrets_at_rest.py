"""Secrets at rest, in real Chromium: a canary typed through every typing tool and every
outcome of a call never reaches a file under TABRELAY_HOME, the approval dialog's request, or
the output of any command that reads the log.

Password, new-password, one-time-code and card fields are found from the page itself; plain
fields are masked when the agent marks the text secret. Outcomes: allowed, denied by the
person, by a rule, by a pause and by the approval timing out, failed (bad ref, bad arguments,
unknown arguments, a form failing after it typed the password), and cancelled. The app logs at
DEBUG meanwhile, and half the calls go through the older SSE transport, whose SDK logs bodies.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from e2e.agent import Agent, ref
from e2e.chromium import EXTENSION_ID
from e2e.conftest import E2E
from e2e.harness import AppUnderTest, ExtensionBrowser, PageServer, wait_until
from support.cli import run_cli
from support.harness import ScriptedToolApprover
from support.logs import logging_restored
from support.mcp import mcp_client
from tabrelay.approval.gate import Choice
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule, SettingsStore
from tabrelay.endpoint.calls import Caller
from tabrelay.system.logs import Redactor, setup_logging
from tabrelay.tools.catalog import BY_NAME

pytestmark = E2E

CANARY = f"Canary{uuid.uuid4().hex[:12]}"
PIN = 700_000_000_000 + uuid.uuid4().int % 10**11  # a secret an agent sends as a number


@pytest.fixture(scope="module")
def debug_log(module_paths: Paths) -> Iterator[Path]:
    """Everything logged while the module runs, at DEBUG, into the home's log file."""
    with logging_restored():
        setup_logging(Redactor(), log_file=module_paths.log_file, level=logging.DEBUG, stderr=False)
        yield module_paths.log_file


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(module_paths: Paths, debug_log: Path) -> AsyncIterator[AppUnderTest]:
    async with AppUnderTest(
        module_paths, allowed=(EXTENSION_ID,), tool_approver=ScriptedToolApprover()
    ) as app:
        yield app


async def test_a_typed_canary_never_reaches_a_file_the_dialog_or_a_command_output(
    app: AppUnderTest, browser: ExtensionBrowser, pages: PageServer, module_paths: Paths
) -> None:
    await app.browser(timeout=15)
    core = app.harness.core
    approver = app.harness.tool_approver
    token = await app.harness.add_client("canary-agent")
    settings = SettingsStore(module_paths.settings_file)
    secrets = iter(f"{CANARY}-{n}" for n in range(1000))
    async with (
        mcp_client(app.harness.base_mcp(), token) as http_client,
        mcp_client(app.harness.base_mcp(), token, transport="sse") as sse_client,
    ):
        http, sse = Agent(http_client), Agent(sse_client)
        tab = await http.open(pages.url(f"tools/secrets.html?run={uuid.uuid4().hex[:6]}"))
        snapshot = await http.snapshot(tab)
        field = {name: ref(snapshot, "textbox", name) for name in ("User", "Password", "Code")}
        field["Shown password"] = ref(snapshot, "textbox", "Shown password")
        field["Card"] = ref(snapshot, "textbox", "Card")
        field["PIN"] = ref(snapshot, "textbox", "PIN")
        field["Notes"] = ref(snapshot, "textbox", "Notes")
        pin, nick = ref(snapshot, "button", "PIN"), ref(snapshot, "button", "Nickname")

        # --- allowed ------------------------------------------------------------------------
        for agent, name in ((http, "Password"), (sse, "Shown password"), (http, "Code")):
            said = await agent.ok("browser_type", tab_id=tab, ref=field[name], text=next(secrets))
            assert said.startswith("Typed a "), said
        await sse.ok("browser_type", tab_id=tab, ref=field["Card"], text=next(secrets))
        await http.ok("browser_type", tab_id=tab, ref=field["PIN"], text=next(secrets))
        await http.ok(
            "browser_type", tab_id=tab, ref=field["Notes"], text=next(secrets), secret=True
        )
        await sse.ok(
            "browser_fill_form",
            tab_id=tab,
            fields=[
                {"ref": field["User"], "value": "ada"},
                {"ref": field["Password"], "value": next(secrets)},
                {"ref": field["Notes"], "value": next(secrets), "secret": True},
            ],
        )
        await http.ok("browser_click", tab_id=tab, ref=pin)  # "Enter your PIN": a secret prompt
        await sse.ok("browser_handle_dialog", tab_id=tab, accept=True, prompt_text=next(secrets))
        await http.ok("browser_click", tab_id=tab, ref=nick)
        await http.ok(
            "browser_handle_dialog",
            tab_id=tab,
            accept=True,
            prompt_text=next(secrets),
            secret=True,
        )

        # --- denied -------------------------------------------------------------------------
        approver.answer = Choice.DENY
        await sse.fails("browser_type", tab_id=tab, ref=field["Password"], text=next(secrets))
        approver.answer = None  # waits: the approval times out
        await asyncio.to_thread(settings.update, lambda s: setattr(s, "approval_timeout", 0.5))
        said = await http.fails("browser_type", tab_id=tab, ref=field["Code"], text=next(secrets))
        assert "did not answer" in said
        await asyncio.to_thread(settings.update, lambda s: setattr(s, "approval_timeout", 60))
        pausing = asyncio.create_task(
            sse.fails("browser_type", tab_id=tab, ref=field["Card"], text=next(secrets))
        )
        await wait_until(lambda: core.gate.pending, timeout=10, message="the question is asked")
        core.gate.set_paused(True)
        assert "paused by the person" in await pausing
        core.gate.set_paused(False)
        approver.answer = Choice.ALLOW_ONCE
        rule = PolicyRule(tool="browser_type", decision="deny")
        await asyncio.to_thread(settings.update, lambda s: s.policy_rules.append(rule))
        await wait_until(
            lambda: core.gate.settings().policy_rules, timeout=5, message="the rule applies"
        )
        await http.fails("browser_type", tab_id=tab, ref=field["Password"], text=next(secrets))
        await asyncio.to_thread(settings.update, lambda s: s.policy_rules.clear())

        # --- failed -------------------------------------------------------------------------
        await http.fails("browser_type", tab_id=tab, ref="e999999", text=next(secrets))
        await sse.fails("browser_type", tab_id=tab, ref=5, text=next(secrets))
        await http.fails(
            "browser_type", tab_id=tab, ref=field["Password"], text=next(secrets), bogus=1
        )
        await sse.fails("browser_type", tab_id=tab, ref=field["Password"], value=next(secrets))
        await http.fails("browser_type", tab_id=tab, ref=field["Code"], text=PIN)
        await sse.fails("browser_fill_form", tab_id=tab, fields=[{"value": next(secrets)}])
        part_way = await http.fails(
            "browser_fill_form",
            tab_id=tab,
            fields=[
                {"ref": field["Password"], "value": next(secrets)},
                {"ref": pin, "value": "plain"},  # a button takes no text: fails after
            ],
        )
        assert "takes no text" in part_way

    # --- cancelled (as the MCP SDK cancels a handler) ----------------------------------------
    runner = core.runner
    assert runner is not None
    approver.answer = None

    async def no_progress(done: float, total: float | None, message: str | None) -> None:
        pass

    cancelled = asyncio.create_task(
        runner.call(
            BY_NAME["browser_type"],
            {"tab_id": tab, "ref": field["Password"], "text": next(secrets)},
            Caller("canary-agent"),
            no_progress,
        )
    )
    await wait_until(lambda: core.gate.pending, timeout=10, message="the question is asked")
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    approver.answer = Choice.ALLOW_ONCE

    # --- what was stored and shown --------------------------------------------------------
    assert core.command_log is not None
    rows = core.command_log.recent(200)
    masked = [r for r in rows if "[secret: " in r.arguments]
    assert len(masked) >= 21, [r.arguments for r in rows]
    statuses = {r.status for r in masked}
    assert {"ok", "denied", "error", "cancelled"} <= statuses, statuses
    for request in approver.requests:
        assert CANARY not in repr(request), "the approval dialog was shown a secret"
        assert str(PIN) not in repr(request)
    logging.getLogger("tabrelay.test").info("the canary run ends")  # the log file exists
    for handler in logging.getLogger().handlers:
        handler.flush()
    await asyncio.to_thread(_assert_nowhere, module_paths)


def _assert_nowhere(paths: Paths) -> None:
    home = paths.config_dir.parent
    checked = []
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        checked.append(path.name)
        for canary in (CANARY, str(PIN)):
            for encoding in ("utf-8", "utf-16-le"):
                assert canary.encode(encoding) not in data, f"the canary is in {path}"
    assert "commands.sqlite3" in checked and "tabrelay.log" in checked, checked
    export = home / "export.jsonl"
    outputs = [
        _cli(paths, "log", "tail", "-n", "500"),
        _cli(paths, "log", "export", "--format", "jsonl"),
        _cli(paths, "log", "export", "--format", "csv"),
        _cli(paths, "log", "export", "--format", "jsonl", "--output", str(export)),
        export.read_text(encoding="utf-8"),
    ]
    assert "[secret: " in outputs[0]
    for output in outputs:
        assert CANARY not in output and str(PIN) not in output


def _cli(paths: Paths, *args: str) -> str:
    done = run_cli(paths, *args)
    return done.stdout + done.stderr
