"""Limits on the MCP endpoint are per offender, never global (THREATS M1, M2, M6).

Failed authentication is limited per Origin, per wrong credential and per source, so a web page
or a program guessing tokens cannot lock out a client that has a valid token. Sessions are
capped per client, so one client opening many cannot starve the others; a session's slot
frees when it is deleted, goes idle, or its client disconnects, and what the session recorded
ends with it then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from mcp import Client

from support.harness import RelayHarness, running_core
from support.http import raw_request
from support.mcp import INITIALIZE, JSON_HEADERS, PROTOCOL, mcp_client, text_of
from tabrelay.config.paths import Paths
from tabrelay.config.settings import PolicyRule
from tabrelay.endpoint.server import McpEndpoint
from tabrelay.endpoint.sessions import session_key
from tabrelay.relay.ratelimit import FailureLimits

RATE_LIMITED = "mcp_auth_rate_limited"
SESSIONS_CAPPED = "mcp_sessions_capped"


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        await harness.extension()
        await harness.browser_count(1)
        yield harness


@dataclass
class Limited:
    """A second endpoint on the running core's tools, with small limits and alerts recorded."""

    endpoint: McpEndpoint
    alerts: list[tuple[str, str]]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.endpoint.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.alerts]


@contextlib.asynccontextmanager
async def limited(app: RelayHarness, **options: Any) -> AsyncIterator[Limited]:
    alerts: list[tuple[str, str]] = []
    endpoint = McpEndpoint(
        app.core.runner,
        tokens=app.core.client_tokens,
        host="127.0.0.1",
        port=0,
        on_limit=lambda kind, message: alerts.append((kind, message)),
        **options,
    )
    await endpoint.start()
    try:
        yield Limited(endpoint, alerts)
    finally:
        await endpoint.stop()


async def open_session(http: httpx2.AsyncClient, url: str, token: str) -> httpx2.Response:
    """POST an initialize without a session id, as a 2025-era client opens a session."""
    return await http.post(
        url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": f"Bearer {token}"}
    )


def session_headers(token: str, session: str) -> dict[str, str]:
    return {
        **JSON_HEADERS,
        "Authorization": f"Bearer {token}",
        "mcp-session-id": session,
        "mcp-protocol-version": PROTOCOL,
    }


async def wait_until_opened(
    http: httpx2.AsyncClient, url: str, token: str, timeout: float = 5.0
) -> httpx2.Response:
    """Try to open a session until one opens (a slot freed); bounded."""
    async with asyncio.timeout(timeout):
        while True:
            opened = await open_session(http, url, token)
            if opened.status_code == 200:
                return opened
            assert opened.status_code == 429, opened.text
            await asyncio.sleep(0.05)


def messages(error: BaseException) -> str:
    """The messages of an error and, for a group, of everything in it."""
    if isinstance(error, BaseExceptionGroup):
        return " | ".join(messages(inner) for inner in error.exceptions)
    return str(error)


async def wait_for_counts(endpoint: McpEndpoint, expected: dict[str, int]) -> None:
    async with asyncio.timeout(5):
        while endpoint.session_counts() != expected:
            await asyncio.sleep(0.01)


# --- failed authentication ------------------------------------------------------------------


async def test_a_valid_client_answers_at_once_after_a_web_page_and_guessers_fail_40_times(
    app: RelayHarness,
) -> None:
    token = await app.add_client()
    url = f"{app.base_mcp()}/mcp"
    alerts = app.core.hub.subscribe(accept=lambda e: e.kind == "alert")
    async with httpx2.AsyncClient() as http:
        page = [
            await http.post(
                url,
                content=json.dumps(INITIALIZE),
                headers={"Content-Type": "text/plain", "Origin": "https://evil.example"},
            )
            for _ in range(40)
        ]
        guesses = [
            await http.post(
                url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": "Bearer guess"}
            )
            for _ in range(40)
        ]
        anonymous = [await http.post(url, json=INITIALIZE, headers=JSON_HEADERS) for _ in range(25)]
    for replies in (page, guesses, anonymous):
        assert [r.status_code for r in replies[:20]] == [401] * 20
        assert {r.status_code for r in replies[20:]} == {429}
        assert 0 < int(replies[-1].headers["retry-after"]) <= 31
        assert replies[0].headers["www-authenticate"].startswith("Bearer")
    assert page[0].json()["error_description"] == "no token was sent"
    assert "not valid (revoked or mistyped)" in guesses[0].json()["error_description"]
    assert "guess" not in guesses[0].text
    async with asyncio.timeout(5), mcp_client(app.base_mcp(), token) as client:
        status = await client.call_tool("browser_status", {})
    assert not status.is_error, text_of(status)
    # The person sees each cool-down with the app's alerts (the dashboard's Events page).
    assert [a.method for a in alerts.drain()] == ["mcp_auth_rate_limited"] * 3


async def test_each_cool_down_raises_one_alert_naming_what_failed(app: RelayHarness) -> None:
    token = await app.add_client()
    async with limited(app) as server, httpx2.AsyncClient() as http:
        for _ in range(45):
            await http.post(
                server.url,
                content=json.dumps(INITIALIZE),
                headers={"Content-Type": "text/plain", "Origin": "https://evil.example"},
            )
            await http.post(
                server.url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": "Basic x"}
            )
        assert (await open_session(http, server.url, token)).status_code == 200
    assert server.kinds() == [RATE_LIMITED, RATE_LIMITED]
    page, guesser = (message for _, message in server.alerts)
    assert "https://evil.example" in page
    assert "wrong client token" in guesser and "Basic x" not in guesser


async def test_web_pages_on_many_origins_raise_one_alert_not_one_each(app: RelayHarness) -> None:
    async with limited(app) as server, httpx2.AsyncClient() as http:
        for n in range(60):
            await http.post(
                server.url,
                content=json.dumps(INITIALIZE),
                headers={"Content-Type": "text/plain", "Origin": f"https://a{n}.evil.example"},
            )
    assert server.kinds() == [RATE_LIMITED], "one cool-down for every web page together"


async def test_hostile_authorization_headers_get_401_and_the_key_map_stays_bounded(
    app: RelayHarness,
) -> None:
    token = await app.add_client()
    limits = FailureLimits(max_failures=20, window=10, cooldown=30, max_keys=64)
    async with limited(app, limits=limits) as server:
        port = server.endpoint.port
        for value, status in [
            ("Bearer " + "x" * 2**20, 401),  # uvicorn's httptools parser takes it whole
            ("Bearer " + "ü" * 43, 401),
            ("Bearer " + "ü".encode().decode("latin-1") * 43, 401),  # UTF-8 bytes on the wire
            ("Bearer \x7f\x80\xff\xfe", 400),  # uvicorn refuses a control character itself
            ("Bearer", 401),
            ("Bearer      ", 401),
            ("bearer a b c", 401),
            ("Basic " + token, 401),
            ("Bearer " + token + "x", 401),
            (token, 401),
        ]:
            response = await raw_request(
                port, "/mcp", method="POST", headers={"Authorization": value}
            )
            assert response.status == status, (value[:20], response.status)
            assert b"\xc3" not in response.body and token.encode() not in response.body
        for origin in ["https://" + "e" * 2**20, "null", "\x80\xff"]:
            response = await raw_request(port, "/mcp", method="POST", headers={"Origin": origin})
            assert response.status == 401
        odd_page = "https://\x85\x9b" + "e" * 1000
        for _ in range(20):
            await raw_request(port, "/mcp", method="POST", headers={"Origin": odd_page})
        [(_, alert)] = server.alerts
        assert len(alert) < 400 and "\x85" not in alert and "\x9b" not in alert
        async with httpx2.AsyncClient() as http:
            twice = await http.post(
                server.url,
                json=INITIALIZE,
                headers=[
                    ("Authorization", "Bearer wrong"),
                    ("Authorization", "Bearer also-wrong"),
                    ("Content-Type", "application/json"),
                ],
            )
            assert twice.status_code == 401
            gate = asyncio.Semaphore(8)

            async def guess(n: int) -> int:
                async with gate:
                    reply = await http.post(
                        server.url, json=INITIALIZE, headers={"Authorization": f"Bearer g{n}"}
                    )
                    return reply.status_code

            statuses = await asyncio.gather(*(guess(n) for n in range(2000)))
            assert set(statuses) == {401}
            assert limits.tracked <= 64
            assert (await open_session(http, server.url, token)).status_code == 200


# --- sessions per client --------------------------------------------------------------------


async def test_a_client_at_its_session_cap_is_refused_while_another_opens_a_session(
    app: RelayHarness,
) -> None:
    greedy = await app.add_client("greedy")
    other = await app.add_client("other")
    url = f"{app.base_mcp()}/mcp"
    async with httpx2.AsyncClient() as http:
        opened = 0
        for _ in range(80):
            reply = await open_session(http, url, greedy)
            if reply.status_code != 200:
                break
            opened += 1
    assert opened == 16
    assert reply.status_code == 429
    assert "holds 16 MCP sessions" in reply.text and "close some" in reply.text
    with pytest.raises(ExceptionGroup) as refused:
        async with asyncio.timeout(10), mcp_client(app.base_mcp(), greedy, mode="legacy"):
            pass
    assert "holds 16 MCP sessions" in messages(refused.value)  # what the agent is told
    async with asyncio.timeout(10), mcp_client(app.base_mcp(), other, mode="legacy") as client:
        tabs = await client.call_tool("browser_list_tabs", {})
    assert not tabs.is_error, text_of(tabs)


async def test_sse_sessions_count_against_the_same_cap(app: RelayHarness) -> None:
    greedy = await app.add_client("greedy")
    other = await app.add_client("other")
    async with limited(app, sessions_per_client=2) as server, contextlib.AsyncExitStack() as held:
        for _ in range(2):
            await held.enter_async_context(mcp_client(server.base, greedy, transport="sse"))
        refused = await raw_request(
            server.endpoint.port, "/sse", headers={"Authorization": f"Bearer {greedy}"}
        )
        assert refused.status == 429
        assert b"holds 2 MCP sessions" in refused.body
        async with httpx2.AsyncClient() as http:
            assert (await open_session(http, server.url, greedy)).status_code == 429
        async with mcp_client(server.base, other, transport="sse") as client:
            assert not (await client.call_tool("browser_status", {})).is_error
        await wait_for_counts(server.endpoint, {"greedy": 2})  # other's stream ended with it
    assert server.kinds() == [SESSIONS_CAPPED]  # one alert, though refused twice


async def test_a_deleted_session_frees_its_slot(app: RelayHarness) -> None:
    token = await app.add_client()
    async with limited(app, sessions_per_client=2) as server, httpx2.AsyncClient() as http:
        first = await open_session(http, server.url, token)
        assert (await open_session(http, server.url, token)).status_code == 200
        assert (await open_session(http, server.url, token)).status_code == 429
        deleted = await http.delete(
            server.url, headers=session_headers(token, first.headers["mcp-session-id"])
        )
        assert deleted.status_code == 200
        assert (await open_session(http, server.url, token)).status_code == 200
        assert (await open_session(http, server.url, token)).status_code == 429  # full again
    async with limited(app, sessions_per_client=1) as server:  # the SDK client DELETEs on close
        async with mcp_client(server.base, token, mode="legacy") as client:
            assert not (await client.call_tool("browser_status", {})).is_error
        async with mcp_client(server.base, token, mode="legacy") as client:
            assert not (await client.call_tool("browser_status", {})).is_error
        assert server.endpoint.session_counts() == {}


async def test_an_idle_session_expires_and_frees_its_slot(app: RelayHarness) -> None:
    token = await app.add_client()
    options = {"sessions_per_client": 1, "session_idle_timeout": 0.5}
    async with limited(app, **options) as server, httpx2.AsyncClient() as http:
        first = await open_session(http, server.url, token)
        opened_at = time.monotonic()
        assert (await open_session(http, server.url, token)).status_code == 429
        await wait_until_opened(http, server.url, token)
        assert time.monotonic() - opened_at >= 0.45
        stale = await http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers=session_headers(token, first.headers["mcp-session-id"]),
        )
        assert stale.status_code == 404  # the SDK ended it too
    assert server.kinds() == [SESSIONS_CAPPED]


async def test_a_session_in_use_does_not_expire(app: RelayHarness) -> None:
    token = await app.add_client()
    options = {"sessions_per_client": 1, "session_idle_timeout": 0.3}
    async with (
        limited(app, **options) as server,
        mcp_client(server.base, token, mode="legacy") as client,
        httpx2.AsyncClient() as http,
    ):
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # its open GET stream holds the session
            assert (await open_session(http, server.url, token)).status_code == 429
            await asyncio.sleep(0.1)
        assert not (await client.call_tool("browser_status", {})).is_error


async def test_clients_on_the_2026_protocol_hold_no_sessions(app: RelayHarness) -> None:
    token = await app.add_client()
    async with limited(app, sessions_per_client=1) as server, httpx2.AsyncClient() as http:
        assert (await open_session(http, server.url, token)).status_code == 200
        for _ in range(3):
            async with mcp_client(server.base, token, mode="2026-07-28") as client:
                assert not (await client.call_tool("browser_status", {})).is_error
        assert server.endpoint.session_counts() == {"test-agent": 1}
    assert server.kinds() == []


# --- what ends with a session ---------------------------------------------------------------


def allowed(app: RelayHarness) -> None:
    """A person's rule ahead of time, so a navigation waits for nobody."""
    app.core.settings_store.update(
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow"))
    )


def navigation(step: int) -> dict[str, Any]:
    return {"tab_id": 1, "url": f"https://example.com/step-{step}"}


async def navigate(app: RelayHarness, client: Client, step: int) -> str:
    """An agent's navigation, a step of its session's recording: that recording's id."""
    assert not (await client.call_tool("browser_navigate", navigation(step))).is_error
    return recorded(app)


def recorded(app: RelayHarness) -> str:
    latest = app.core.recorder.latest("agent")
    assert latest is not None and latest.live and latest.steps >= 1
    return latest.id


async def ended(app: RelayHarness, recording_id: str) -> None:
    async with asyncio.timeout(5):
        while app.core.recorder.info(recording_id).live:
            await asyncio.sleep(0.01)


async def test_an_agent_sessions_recording_ends_when_the_client_closes_the_session(
    app: RelayHarness,
) -> None:
    allowed(app)
    token = await app.add_client()
    async with limited(app) as server:
        async with mcp_client(server.base, token, mode="legacy") as closing:
            async with mcp_client(server.base, token, mode="legacy") as staying:
                first = await navigate(app, closing, 1)
                second = await navigate(app, staying, 2)
                assert first != second  # a recording per session
            await ended(app, second)  # the SDK client DELETEs its session on close
            assert app.core.recorder.info(first).live
            assert await navigate(app, closing, 3) == first  # the live one goes on
        await ended(app, first)


async def test_an_idle_sessions_recording_ends_when_the_session_expires_unasked(
    app: RelayHarness,
) -> None:
    allowed(app)
    token = await app.add_client()
    async with limited(app, session_idle_timeout=0.5) as server, httpx2.AsyncClient() as http:
        opened = await open_session(http, server.url, token)
        session = opened.headers["mcp-session-id"]
        headers = session_headers(token, session)
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(server.url, json=initialized, headers=headers)).status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "browser_navigate", "arguments": navigation(1)},
        }
        answer = await http.post(server.url, json=call, headers=headers)
        assert answer.status_code == 200 and '"isError":false' in answer.text, answer.text
        recording = recorded(app)
        assert app.core.recorder.info(recording).session == session_key(session)
        began = time.monotonic()
        await ended(app, recording)  # nobody asks again: the endpoint's sweep notices
        assert time.monotonic() - began >= 0.4


async def test_an_sse_sessions_recording_ends_with_its_stream(app: RelayHarness) -> None:
    allowed(app)
    token = await app.add_client()
    async with limited(app) as server:
        async with mcp_client(server.base, token, transport="sse") as client:
            recording = await navigate(app, client, 1)
        await ended(app, recording)


# --- cancellation ---------------------------------------------------------------------------


async def test_a_client_that_disconnects_while_opening_a_session_leaves_no_slot(
    app: RelayHarness,
) -> None:
    token = await app.add_client()
    async with limited(app, sessions_per_client=1) as server:
        body = json.dumps(INITIALIZE).encode()
        _, writer = await asyncio.open_connection("127.0.0.1", server.endpoint.port)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.endpoint.port}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body[:20])
        await writer.drain()
        async with asyncio.timeout(5):
            while server.endpoint.session_counts() != {"test-agent": 1}:  # the opening counts
                await asyncio.sleep(0.01)
        writer.close()
        await wait_for_counts(server.endpoint, {})
        async with httpx2.AsyncClient() as http:
            assert (await open_session(http, server.url, token)).status_code == 200


async def test_an_sse_client_that_disconnects_frees_its_slot(app: RelayHarness) -> None:
    token = await app.add_client()
    async with limited(app, sessions_per_client=1) as server:
        for _ in range(3):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.endpoint.port)
            writer.write(
                f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{server.endpoint.port}\r\n"
                f"Authorization: Bearer {token}\r\n\r\n".encode()
            )
            async with asyncio.timeout(5):
                head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200")
            await wait_for_counts(server.endpoint, {"test-agent": 1})
            writer.close()
            await wait_for_counts(server.endpoint, {})


async def test_a_client_that_disconnects_mid_call_leaves_its_session_to_expire(
    app: RelayHarness,
) -> None:
    extension = app.extensions[0]
    token = await app.add_client()
    options = {"sessions_per_client": 1, "session_idle_timeout": 0.5}
    async with limited(app, **options) as server, httpx2.AsyncClient() as http:
        opened = await open_session(http, server.url, token)
        headers = session_headers(token, opened.headers["mcp-session-id"])
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(server.url, json=initialized, headers=headers)).status_code == 202
        extension.hold_replies = True
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "browser_list_tabs", "arguments": {}},
        }
        async with httpx2.AsyncClient() as doomed:
            pending = asyncio.create_task(doomed.post(server.url, json=call, headers=headers))
            await extension.held_count(1)
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pending
        extension.hold_replies = False
        await extension.release_held()
        await wait_until_opened(http, server.url, token)
        assert server.endpoint.session_counts() == {"test-agent": 1}


async def test_a_session_s_plan_ends_when_the_client_closes_the_session(
    app: RelayHarness,
) -> None:
    """Issue 25: a task's plan lasts as long as the session that asked for it."""
    token = await app.add_client()
    plans = app.core.gate.plans
    async with limited(app) as server:
        async with mcp_client(server.base, token, mode="legacy") as client:
            asked = await client.call_tool(
                "browser_request_access",
                {"purpose": "read the example", "sites": ["https://example.com"]},
            )
            assert not asked.is_error, text_of(asked)
            (plan,) = plans.live()
            assert plan.session is not None
            call = await client.call_tool("browser_navigate", navigation(1))
            assert not call.is_error  # the plan's site: nobody asked
            assert len(app.tool_approver.requests) == 1  # the plan's own question
        async with asyncio.timeout(5):
            while plans.live():
                await asyncio.sleep(0.01)
