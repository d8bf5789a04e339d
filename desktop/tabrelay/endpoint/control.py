"""The person's own channel to the running app, for what only the person may do from a
terminal: end a handoff (``tabrelay handoff list|done|cancel``). ``tabrelay recipe run`` needs no
route of its own: it is an MCP client (``run_recipe_in_app``), asked and logged like any other.

The routes sit behind the endpoint's bearer authentication and answer only the command line's
own client, ``CLI_CLIENT`` (its token is made on first use and kept in the secret store like any
client's), so an agent's token cannot end the handoff it asked for. A request a browser could
send (any ``Origin``) is refused, as on the MCP routes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp import Client, Implementation
from mcp.client.streamable_http import streamable_http_client
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tabrelay import __version__
from tabrelay.endpoint import MCP_PATH
from tabrelay.endpoint.auth import client_of
from tabrelay.tools.state.handoffs import Handoffs

CLI_CLIENT = "tabrelay-cli"  # the command line's MCP client and control identity
CONTROL_PATH = "/control"
HANDOFFS_PATH = f"{CONTROL_PATH}/handoffs"


def control_routes(handoffs: Callable[[], Handoffs | None], hosts: list[str]) -> list[Route]:
    """The control routes, reading the app's open handoffs through ``handoffs``; a request
    must name one of ``hosts`` (``127.0.0.1:PORT``) as its Host (DNS rebinding)."""

    async def list_handoffs(request: Request) -> Response:
        owner = handoffs()
        now = time.time()
        shown = [
            {
                "id": h.id,
                "reason": h.reason,
                "browser": h.browser_id,
                "tab_id": h.tab_id,
                "url": h.url,
                "title": h.title,
                "client": h.client,
                "started": h.started,
                "seconds_left": max(0, round(h.deadline - now)),
            }
            for h in (owner.open() if owner is not None else [])
        ]
        return JSONResponse({"handoffs": shown})

    async def end_handoff(request: Request) -> Response:
        owner = handoffs()
        handoff_id = request.path_params["handoff_id"]
        outcome = request.path_params["outcome"]
        if outcome not in ("done", "cancel"):
            return _error(404, f"no action {outcome!r}: use done or cancel")
        ended = owner is not None and owner.end(
            handoff_id, "done" if outcome == "done" else "cancelled", by="cli"
        )
        if not ended:
            return _error(404, f"no open handoff {handoff_id!r}; see `tabrelay handoff list`")
        return JSONResponse({"ended": handoff_id})

    return [
        Route(HANDOFFS_PATH, _person_only(list_handoffs, hosts), methods=["GET"]),
        Route(
            HANDOFFS_PATH + "/{handoff_id}/{outcome}",
            _person_only(end_handoff, hosts),
            methods=["POST"],
        ),
    ]


def _person_only(
    handler: Callable[[Request], Awaitable[Response]], hosts: list[str]
) -> Callable[[Request], Awaitable[Response]]:
    async def guarded(request: Request) -> Response:
        if request.headers.get("host") not in hosts:
            return _error(421, "this request names another host")
        if "origin" in request.headers:  # a web page's request: never the person's terminal
            return _error(403, "control requests from web pages are refused")
        if client_of(request.scope) != CLI_CLIENT:
            return _error(403, f"only Tabrelay's command line ({CLI_CLIENT}) may do this")
        return await handler(request)

    return guarded


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def decode_error(body: bytes) -> str:
    """The sentence a control route's error answer carries (or the raw start of it)."""
    try:
        value: Any = json.loads(body)
        return str(value["error"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")


async def run_recipe_in_app(
    base: str,
    token: str,
    arguments: dict[str, Any],
    on_progress: Callable[[str], None],
) -> tuple[bool, str]:
    """Call ``browser_run_recipe`` on the running app at ``base`` as the command line's MCP
    client; returns (failed, the result's text). Each progress message goes to ``on_progress``."""

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        if message:
            on_progress(message)

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http,
        Client(
            streamable_http_client(base + MCP_PATH, http_client=http),
            client_info=Implementation(name=CLI_CLIENT, version=__version__),
        ) as client,
    ):
        result = await client.call_tool("browser_run_recipe", arguments, progress_callback=progress)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text
