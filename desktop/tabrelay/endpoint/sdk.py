"""What the MCP SDK (2.3) lacks in public, in one place; the rest of the house uses its public API.

The SDK is missing one thing Tabrelay needs: a handle on a client's connection from
``MCPServer`` middleware. Middleware gets a per-request ``ServerSession``; the connection
behind it (``mcp.server.connection.Connection``: the client's standalone channel, where
handshake-era clients hear ``notifications/tools/list_changed`` outside any request, and its
``exit_stack``, which says when the client left) is public, but 2.3 reaches it only through the
session's private ``_connection`` (the low-level ``Context.connection`` exists, but
``MCPServer`` never hands that context to middleware). ``tests/unit/test_sdk_adapter.py`` pins
this reach against the installed SDK, and checks that no other module touches a private SDK
name, so an upgrade that moves it fails there, not in a client's session.
"""

from __future__ import annotations

from mcp.server.connection import Connection
from mcp.server.session import ServerSession

from tabrelay.errors import TabrelayError


class SdkChanged(TabrelayError):
    """The installed MCP SDK no longer has what this adapter reaches for."""

    title = "MCP SDK changed"


def connection_of(session: ServerSession) -> Connection:
    """The client connection behind a request's session (one per client, across its requests).

    Raises:
        SdkChanged: the SDK keeps the connection elsewhere now (update this adapter).
    """
    connection = getattr(session, "_connection", None)
    if not isinstance(connection, Connection):
        raise SdkChanged(
            "the MCP SDK's ServerSession no longer holds its connection in `_connection`; "
            "update tabrelay/endpoint/sdk.py for the installed SDK"
        )
    return connection
