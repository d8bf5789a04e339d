"""Who may talk to the MCP endpoint (DESIGN §4.6, THREATS M1, M2, M4, M6)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import httpx2
import pytest

from support.harness import RelayHarness, running_core
from support.http import raw_request
from support.mcp import INITIALIZE, JSON_HEADERS, PROTOCOL, mcp_client, text_of
from tabrelay.config.paths import Paths


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        yield harness


async def post(app: RelayHarness, headers: dict[str, str], body: bytes | None = None) -> int:
    payload = body if body is not None else json.dumps(INITIALIZE).encode()
    async with httpx2.AsyncClient() as http:
        reply = await http.post(
            f"{app.base_mcp()}/mcp", content=payload, headers={**JSON_HEADERS, **headers}
        )
    return reply.status_code


@pytest.mark.parametrize("path", ["/mcp", "/sse", "/messages/"])
async def test_no_token_gets_401_with_www_authenticate(app: RelayHarness, path: str) -> None:
    response = await raw_request(app.mcp_port, path, method="GET")
    assert response.status == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_wrong_relay_or_revoked_tokens_are_refused(app: RelayHarness) -> None:
    token = await app.add_client("cursor")
    assert await post(app, {"Authorization": f"Bearer {token}"}) == 200
    assert await post(app, {"Authorization": "Bearer wrong"}) == 401
    assert await post(app, {"Authorization": f"Bearer {app.token}"}) == 401  # the relay token
    assert await post(app, {"Authorization": f"Basic {token}"}) == 401
    non_ascii = await raw_request(
        app.mcp_port, "/mcp", method="POST", headers={"Authorization": "Bearer " + "ü" * 43}
    )
    assert non_ascii.status == 401  # never a 500
    await asyncio.to_thread(app.core.clients.revoke, "cursor")
    async with asyncio.timeout(2):
        while "cursor" in app.core.client_tokens():
            await asyncio.sleep(0.01)
    assert await post(app, {"Authorization": f"Bearer {token}"}) == 401


async def test_a_revoked_client_is_cut_off_mid_session(app: RelayHarness) -> None:
    token = await app.add_client("cursor")
    async with mcp_client(app.base_mcp(), token) as client:
        assert not (await client.call_tool("browser_status", {})).is_error
        await asyncio.to_thread(app.core.clients.revoke, "cursor")
        async with asyncio.timeout(2):
            while "cursor" in app.core.client_tokens():
                await asyncio.sleep(0.01)
        with pytest.raises(Exception, match=r"error response|401|Unauthorized"):
            await client.call_tool("browser_status", {})


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://localhost:3000"}, 403),  # a local web page
        ({"Origin": "https://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Host": "evil.example:23002"}, 421),  # DNS rebinding
        ({"Content-Type": "text/plain"}, 400),  # a no-preflight "simple" request
    ],
)
async def test_browser_requests_are_refused_even_with_a_valid_token(
    app: RelayHarness, headers: dict[str, str], status: int
) -> None:
    token = await app.add_client()
    assert await post(app, {"Authorization": f"Bearer {token}", **headers}) == status


async def test_huge_bodies_are_refused(app: RelayHarness) -> None:
    token = await app.add_client()
    body = b'{"jsonrpc": "2.0", "pad": "' + b"x" * (10 * 2**20) + b'"}'
    assert await post(app, {"Authorization": f"Bearer {token}"}, body) == 413


async def test_a_session_cannot_be_used_with_another_clients_token(app: RelayHarness) -> None:
    alice = await app.add_client("alice")
    mallory = await app.add_client("mallory")
    async with httpx2.AsyncClient() as http:
        opened = await http.post(
            f"{app.base_mcp()}/mcp",
            json=INITIALIZE,
            headers={**JSON_HEADERS, "Authorization": f"Bearer {alice}"},
        )
        session = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        stolen = await http.post(
            f"{app.base_mcp()}/mcp",
            json=call,
            headers={
                **JSON_HEADERS,
                "Authorization": f"Bearer {mallory}",
                "mcp-session-id": session,
                "mcp-protocol-version": PROTOCOL,
            },
        )
    assert stolen.status_code == 404
    assert "Session not found" in stolen.text


async def test_repeated_bad_tokens_are_rate_limited_but_never_a_valid_one(
    app: RelayHarness,
) -> None:
    token = await app.add_client()
    for _ in range(20):
        assert await post(app, {"Authorization": "Bearer guess"}) == 401
    assert await post(app, {"Authorization": "Bearer guess"}) == 429
    assert await post(app, {"Authorization": f"Bearer {token}"}) == 200


async def test_the_endpoint_listens_only_on_loopback(app: RelayHarness) -> None:
    import psutil

    ours = [
        c.laddr
        for c in psutil.Process().net_connections()
        if c.status == "LISTEN" and c.laddr.port in (app.port, app.mcp_port)
    ]
    assert len(ours) == 2 and all(addr.ip == "127.0.0.1" for addr in ours)


async def test_too_many_calls_at_once_from_one_client_are_refused(app: RelayHarness) -> None:
    extension = await app.extension()
    await app.browser_count(1)
    extension.hold_replies = True
    token = await app.add_client()
    async with mcp_client(app.base_mcp(), token) as client:
        calls = [asyncio.create_task(client.call_tool("browser_list_tabs", {})) for _ in range(17)]
        async with asyncio.timeout(10):
            while len(extension._held) < 16:
                await asyncio.sleep(0.01)
        extra = await client.call_tool("browser_list_tabs", {})
        await extension.release_held()
        results = await asyncio.gather(*calls)
    assert extra.is_error and "already has 16 calls running" in text_of(extra)
    assert sum(not r.is_error for r in results) == 16


async def test_connections_are_accepted_with_nagle_off(app: RelayHarness) -> None:
    """asyncio turns TCP_NODELAY on for accepted sockets only when the listening socket says
    IPPROTO_TCP; with Nagle on, every MCP call waited ~40 ms for a delayed ACK."""
    assert app.core.endpoint is not None and app.core.endpoint._server is not None
    [listening] = [s for server in app.core.endpoint._server.servers for s in server.sockets]
    assert listening.proto == socket.IPPROTO_TCP
    _, writer = await asyncio.open_connection("127.0.0.1", app.mcp_port)
    try:
        accepted = await _accepted_socket(app, writer)
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        writer.close()


async def _accepted_socket(app: RelayHarness, writer: asyncio.StreamWriter) -> socket.socket:
    """The server side of our connection, found among uvicorn's open transports."""
    assert app.core.endpoint is not None and app.core.endpoint._server is not None
    local = writer.get_extra_info("sockname")
    async with asyncio.timeout(5):
        while True:
            for connection in app.core.endpoint._server.server_state.connections:
                transport = getattr(connection, "transport", None)
                if transport is not None and transport.get_extra_info("peername") == local:
                    return transport.get_extra_info("socket")
            await asyncio.sleep(0.01)
