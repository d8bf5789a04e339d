"""The MCP endpoint: Streamable HTTP at /mcp and the older HTTP+SSE at /sse, on one port.

The only module (with its siblings) that imports ``mcp``. It publishes the tool catalog (with
the portable schemas of ``tools/schema.py``; ``browser_cdp`` only while the person has it on,
telling clients when that changes) and the ``tabrelay://`` resources, turns each call into a
``ToolRunner`` call, and a failure into an ``isError`` result with the message as written. It
caps the sessions each client holds (the SDK caps only all clients together). It runs uvicorn
inside the app's own loop (qasync or asyncio) on a socket bound here, so a taken port is an
ordinary error.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvicorn
from mcp.server.connection import Connection
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    CallToolResult,
    ImageContent,
    Resource,
    ResourceTemplate,
    TextContent,
    ToolAnnotations,
)
from mcp_types import (
    Tool as McpTool,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from tabrelay import __version__
from tabrelay.config.settings import Settings
from tabrelay.endpoint import MCP_PATH, SSE_PATH
from tabrelay.endpoint.auth import BearerAuth, ClientActivity, client_of
from tabrelay.endpoint.calls import Caller, ToolRunner
from tabrelay.endpoint.control import control_routes
from tabrelay.endpoint.drain import RequestDrain
from tabrelay.endpoint.sdk import connection_of
from tabrelay.endpoint.sessions import (
    SESSION_IDLE_TIMEOUT,
    SESSION_SWEEP_INTERVAL,
    SESSIONS_PER_CLIENT,
    ClientSessions,
    SessionCap,
    SseSessionCap,
    session_key,
)
from tabrelay.errors import StartupError, TabrelayError
from tabrelay.relay.ratelimit import FailureLimits
from tabrelay.tools import results
from tabrelay.tools.catalog import BY_NAME, TOOLS, ToolSpec
from tabrelay.tools.context import ToolResult
from tabrelay.tools.schema import InputSchema, decode_json_text, portable

logger = logging.getLogger(__name__)

TABS_URI = "tabrelay://tabs"
TAB_URI = re.compile(r"tabrelay://tab/(?P<browser>[^/]+)/(?P<tab_id>\d+)")
MESSAGES_PATH = "/messages/"
MAX_BODY = 4 * 1024 * 1024
MAX_SESSIONS = 1024  # all clients together, a backstop: the per-client caps bind first
INSTRUCTIONS = (
    "Tabrelay lets you use the person's real browser: their open tabs and logins. Start with "
    "browser_status and browser_list_tabs. Read pages before acting on them. The person sees "
    "every call and must approve actions in a dialog, so an acting tool may wait for them; if "
    "a call is denied, explain what you wanted to do instead of retrying."
)


@functools.cache
def tool_schema(spec: ToolSpec) -> InputSchema:
    """The tool's portable input schema, made once: the SDK asks for it on every call."""
    return portable(spec.params.model_json_schema())


def listed(settings: Settings) -> tuple[ToolSpec, ...]:
    """The tools agents see: the expert ones only while the person has them on."""
    return tuple(spec for spec in TOOLS if not spec.expert or settings.enable_cdp_tool)


def listed_json(settings: Settings) -> str:
    """The ``tools/list`` result a client gets, as compact JSON: what every client pays for
    (the budget test and ``make bench`` measure it)."""
    tools = [
        mcp_tool(spec).model_dump(by_alias=True, exclude_none=True, mode="json")
        for spec in listed(settings)
    ]
    return json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)


def mcp_tool(spec: ToolSpec) -> McpTool:
    # Hints at their MCP defaults are left out (destructive and open-world default to true,
    # read-only and idempotent to false): every client pays for each byte of this list.
    if spec.read_only:
        annotations = ToolAnnotations(read_only_hint=True)
    else:
        annotations = ToolAnnotations(
            destructive_hint=spec.destructive, idempotent_hint=spec.idempotent or None
        )
    return McpTool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=tool_schema(spec).schema,
        output_schema=spec.output,
        annotations=annotations,
    )


def error_result(message: str) -> CallToolResult:
    text, _ = results.render(message)  # a refusal may quote the page (a dialog, an element)
    return CallToolResult(is_error=True, content=[TextContent(type="text", text=text)])


def to_mcp(result: ToolResult, spec: ToolSpec) -> CallToolResult:
    """A tool's result as the client reads it: the page's words inside the result's boundary
    (``tools/results.py``), in the text and in the structured content alike."""
    text, nonce = results.render(result.text)
    content: list[TextContent | ImageContent] = [TextContent(type="text", text=text)]
    if result.image is not None:
        content.append(
            ImageContent(type="image", data=result.image.data, mime_type=result.image.mime_type)
        )
    structured = results.structured(result.data, result.page_fields, nonce)
    if structured is None and spec.output is not None:
        structured = {}  # a tool with an outputSchema MUST return structured content (MCP)
    return CallToolResult(content=content, structured_content=structured)  # type: ignore[arg-type]


class _LegacySessions:
    """Middleware for 2025-era clients, which hear of list changes on their own stream rather
    than through ``subscriptions/listen``: tells them in ``initialize`` that the tool and
    resource lists change, and remembers their connections to tell them when they do."""

    def __init__(self) -> None:
        self.connections: dict[int, Connection] = {}

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return result
        if ctx.method == "initialize":
            # The SDK's transports build initialize without list-changed options (2.3 has no
            # setting for them): the result is the wire form, ours to amend (middleware API).
            capabilities = result.get("capabilities") or {}
            for kind in ("tools", "resources"):
                if isinstance(capabilities.get(kind), dict):
                    capabilities[kind]["listChanged"] = True
            return result
        connection = connection_of(ctx.session)
        if id(connection) not in self.connections:
            self.connections[id(connection)] = connection
            connection.exit_stack.callback(self.connections.pop, id(connection), None)
        return result

    async def resources_changed(self) -> None:
        for connection in list(self.connections.values()):
            await connection.send_resource_list_changed()

    async def tools_changed(self) -> None:
        for connection in list(self.connections.values()):
            await connection.send_tool_list_changed()


class _TabrelayMcp(MCPServer[Any]):
    """MCPServer whose tools come from our catalog, validated by our own parameter models."""

    def __init__(self, endpoint: McpEndpoint, bus: InMemorySubscriptionBus) -> None:
        super().__init__(
            "tabrelay",
            title="Tabrelay",
            version=__version__,
            instructions=INSTRUCTIONS,
            subscriptions=bus,
            middleware=[endpoint.legacy],
        )
        self._endpoint = endpoint

    async def list_tools(self) -> list[McpTool]:
        return [mcp_tool(spec) for spec in self._endpoint.listed_tools()]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        spec = BY_NAME.get(name)
        if spec is None:
            return error_result(f"unknown tool {name!r}; list the tools to see what exists")
        if spec.expert and spec not in self._endpoint.listed_tools():  # the rest always are
            return error_result(
                f"{name} is turned off; the person can enable it in Tabrelay's settings"
            )
        arguments = decode_json_text(arguments, tool_schema(spec).json_text)
        return await self._endpoint.call(spec, arguments, context)

    async def list_resources(self) -> list[Resource]:
        return [
            Resource(
                uri=TABS_URI,
                name="tabs",
                title="Open tabs",
                description="Every connected browser's tabs that agents may use.",
                mime_type="application/json",
            )
        ]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [
            ResourceTemplate(
                uri_template="tabrelay://tab/{browser}/{tab_id}",
                name="tab",
                title="A tab's page",
                description="Title, URL and the text of one tab's page.",
                mime_type="text/markdown",
            )
        ]

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> list[ReadResourceContents]:
        uri = str(uri)
        mime = "application/json" if uri == TABS_URI else "text/markdown"
        text = await self._endpoint.read_resource(uri, context)
        return [ReadResourceContents(content=text, mime_type=mime)]


class McpEndpoint:
    def __init__(
        self,
        runner: ToolRunner,
        *,
        tokens: Callable[[], dict[str, str]],
        host: str,
        port: int,
        catch_up: Callable[[], Awaitable[None]] | None = None,
        limits: FailureLimits | None = None,
        sessions_per_client: int = SESSIONS_PER_CLIENT,
        session_idle_timeout: float = SESSION_IDLE_TIMEOUT,
        on_limit: Callable[[str, str], None] | None = None,
    ) -> None:
        """Configure the endpoint; ``start`` listens.

        Args:
            catch_up: reads what another process changed (a client the CLI just made), for a
                token not known yet; awaited before such a request is refused.
            limits: failed-authentication limits, per Origin, wrong credential or source.
            sessions_per_client: the most sessions one client may hold, both transports.
            session_idle_timeout: a Streamable HTTP session with no request for this long ends.
            on_limit: called with an alert kind and a message a person can read, once when a
                key's authentication cool-down starts and once when a client reaches its
                session cap.
        """
        self.runner = runner
        self.host = host
        self.port = port
        self._tokens = tokens
        self._catch_up = catch_up
        self._limits = limits
        self._sessions_per_client = sessions_per_client
        self._session_idle_timeout = session_idle_timeout
        self._on_limit = on_limit
        self.bus = InMemorySubscriptionBus()
        self.legacy = _LegacySessions()
        self.mcp = _TabrelayMcp(self, self.bus)
        self._listed = self.listed_tools()
        self._server: uvicorn.Server | None = None
        self._drain: RequestDrain | None = None
        self._task: asyncio.Task[None] | None = None
        self.auth: BearerAuth | None = None
        self.sessions: ClientSessions | None = None

    # --- calls ------------------------------------------------------------------------------

    async def call(
        self, spec: ToolSpec, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult:
        caller = self._caller(context)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if context is not None:
                await context.report_progress(done, total, message)

        try:
            result = await self.runner.call(spec, arguments, caller, progress)
        except TabrelayError as error:
            return error_result(error.message)
        return to_mcp(result, spec)

    def _caller(self, context: Context[Any, Any] | None) -> Caller:
        request = context.request_context.request if context is not None else None
        client = client_of(request.scope) if request is not None else None
        reported = None
        session = None
        if context is not None:
            params = context.session.client_params
            info = params.client_info if params is not None else None
            if info is not None:
                reported = f"{info.name} {info.version}".strip()
        # The session's own id is a credential of sorts: only a digest of it is kept. A client
        # on the sessionless protocol has none: its calls group by client (and tab) alone.
        if request is not None:
            raw = request.headers.get(MCP_SESSION_ID_HEADER) or request.query_params.get(
                "session_id"
            )
            if raw:
                session = session_key(raw)
        return Caller(client or "in-process", reported, session)

    # --- resources --------------------------------------------------------------------------

    async def read_resource(self, uri: str, context: Context[Any, Any] | None) -> str:
        """Read ``tabrelay://tabs`` or ``tabrelay://tab/{browser}/{tab_id}`` as the caller.

        Raises:
            ResourceNotFoundError: an unknown URI, or the tab cannot be read (and why).
        """
        if uri == TABS_URI:
            listing = []
            for browser in self.runner.registry.all():
                result = await self.call(
                    BY_NAME["browser_list_tabs"], {"browser": browser.id}, context
                )
                for tab in (result.structured_content or {}).get("tabs", []):
                    listing.append({"browser": browser.id, "browser_name": browser.name, **tab})
            # JSON, as the resource says: the page's titles and addresses with the boundary's
            # name broken, as in structured content.
            return json.dumps(results.defused(listing), ensure_ascii=False)
        match = TAB_URI.fullmatch(uri)
        if match is None:
            raise ResourceNotFoundError(f"no resource {uri}; see tabrelay://tabs")
        result = await self.call(
            BY_NAME["browser_get_content"],
            {"browser": match["browser"], "tab_id": int(match["tab_id"])},
            context,
        )
        text = "".join(c.text for c in result.content if isinstance(c, TextContent))
        if result.is_error:
            raise ResourceNotFoundError(text)
        return text

    # --- the tool list -----------------------------------------------------------------------

    def listed_tools(self) -> tuple[ToolSpec, ...]:
        """The tools clients see now, by the settings as the app last read them."""
        return listed(self.runner.settings_store.current)

    async def settings_changed(self, settings: Settings) -> None:
        """Tell every client when the settings change which tools are listed (the person turned
        ``browser_cdp`` on or off); call with each settings the app applies."""
        now = listed(settings)
        if now == self._listed:
            return
        self._listed = now
        await self.bus.publish(ToolsListChanged())
        await self.legacy.tools_changed()

    def activity(self) -> dict[str, ClientActivity]:
        """Each client's last request time and open requests (sessions, streams)."""
        return dict(self.auth.activity) if self.auth is not None else {}

    def session_counts(self) -> dict[str, int]:
        """How many sessions each client holds now (those opening included)."""
        return self.sessions.counts() if self.sessions is not None else {}

    async def resources_changed(self) -> None:
        """Notify every client that the tab list changed (call from the app's own code)."""
        await self.bus.publish(ResourcesListChanged())
        await self.legacy.resources_changed()

    # --- serving ----------------------------------------------------------------------------

    def app(self, port: int) -> RequestDrain:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
            allowed_origins=[],  # MCP clients are native programs: every browser Origin is refused
        )
        # Only for its session manager (self.mcp.session_manager): the route is ours, below.
        self.mcp.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=security,
            host=self.host,
            session_idle_timeout=self._session_idle_timeout,
            max_sessions=MAX_SESSIONS,
            max_request_body_size=MAX_BODY,
        )
        sse = self.mcp.sse_app(
            sse_path=SSE_PATH,
            message_path=MESSAGES_PATH,
            max_request_body_size=MAX_BODY,
            transport_security=security,
            host=self.host,
        )
        self.sessions = sessions = ClientSessions(
            per_client=self._sessions_per_client,
            idle_timeout=self._session_idle_timeout,
            on_limit=self._on_limit,
        )
        sessions.ended.add(self._session_ended)
        streamable = StreamableHTTPASGIApp(self.mcp.session_manager)
        starlette = Starlette(
            routes=[
                *control_routes(lambda: self.runner.handoffs, security.allowed_hosts),
                Route(MCP_PATH, endpoint=SessionCap(streamable, sessions)),
                Route(SSE_PATH, endpoint=SseSessionCap(sse, sessions), methods=["GET"]),
                Mount("", app=sse),  # POST /messages/ (the SDK's app routes it)
            ],
            lifespan=self._lifespan,
        )
        self.auth = BearerAuth(
            starlette,
            self._tokens,
            catch_up=self._catch_up,
            limits=self._limits,
            on_limit=self._on_limit,
        )
        self._drain = RequestDrain(self.auth)
        return self._drain

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with self.mcp.session_manager.run(), asyncio.TaskGroup() as tasks:
            sweeper = tasks.create_task(self._sweep_sessions())
            try:
                yield
            finally:
                sweeper.cancel()

    async def _sweep_sessions(self) -> None:
        """End idle sessions about when the SDK does, so what ends with them ends then."""
        interval = min(SESSION_SWEEP_INTERVAL, self._session_idle_timeout / 2)
        while True:
            await asyncio.sleep(interval)
            if self.sessions is not None:
                self.sessions.expire()

    def _session_ended(self, client: str, session: str) -> None:
        """An agent session ended: so do its recordings and its plan."""
        if self.runner.recorder is not None:
            self.runner.recorder.finish_agent(client, session)
        self.runner.gate.plans.end_session(client, session)

    async def start(self) -> None:
        """Listen on ``host:port`` (0 picks a free port).

        Raises:
            StartupError: the port is taken; nothing is left running.
        """
        # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on accepted sockets whose
        # protocol says TCP, and without it Nagle plus delayed ACKs add ~40 ms to every call.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise StartupError(
                f"cannot listen on {self.host}:{self.port} for MCP clients: "
                f"{exc.strerror or exc}. Quit the program using it or choose another MCP port."
            ) from None
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(self.port),
            loop="none",
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=3,
        )
        self._server = uvicorn.Server(config)
        self._server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise StartupError("the MCP endpoint stopped while starting")
            await asyncio.sleep(0.005)
        logger.info(
            "MCP endpoint on http://%s:%d%s (and %s)", self.host, self.port, MCP_PATH, SSE_PATH
        )

    async def stop(self) -> None:
        """End every request and stream at once, then stop listening."""
        if self._server is None or self._task is None:
            return
        if self._drain is not None:
            # Streams (SSE, listen, calls in flight) would keep uvicorn waiting for its whole
            # graceful timeout; uvicorn's handle_exit is not called, since sse_starlette
            # patches it to set a process-wide flag that would end a later endpoint's streams.
            self._drain.close()
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._server = self._task = self._drain = None
