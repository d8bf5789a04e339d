"""MCP clients: each has a name and its own bearer token (DESIGN §4.6).

Names and creation times live in the settings; tokens live in the secret store. Adding or
revoking bumps ``secrets_revision`` so a running app reloads its token table at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabrelay.config.secrets import TokenStore
from tabrelay.config.settings import CLIENT_NAME, McpClient, Settings, SettingsStore
from tabrelay.errors import ConfigError, UsageError


@dataclass(frozen=True, slots=True)
class NewClient:
    name: str
    token: str


class ClientTokens:
    def __init__(self, store: SettingsStore, tokens: TokenStore) -> None:
        self._store = store
        self._tokens = tokens

    def names(self) -> list[McpClient]:
        return list(self._clients())

    def _clients(self) -> list[McpClient]:
        """The clients as the file has them now (blocking: a look at the file, read only if
        another process changed it)."""
        self._store.refresh()
        return self._store.current.clients

    def add(self, name: str) -> NewClient:
        """Create a client and its token (shown once to the person).

        Raises:
            UsageError: the name is not valid or already taken.
        """
        if not CLIENT_NAME.match(name):
            raise UsageError(f"{name!r} is not a client name (1-64 letters, digits, '.', '_', '-')")
        if any(c.name == name for c in self._clients()):
            raise UsageError(
                f"a client named {name!r} exists; revoke it first or pick another name"
            )
        token = self._tokens.create_client_token(name)

        def add(settings: Settings) -> None:
            settings.clients.append(McpClient(name=name))
            settings.secrets_revision += 1

        self._store.update(add)
        return NewClient(name, token)

    def revoke(self, name: str) -> None:
        """Remove a client: its token stops working at once, its rules go with it.

        Raises:
            ConfigError: no client has that name.
        """
        if not any(c.name == name for c in self._clients()):
            raise ConfigError(f"no MCP client is named {name!r}")
        self._tokens.delete_client_token(name)

        def remove(settings: Settings) -> None:
            settings.clients = [c for c in settings.clients if c.name != name]
            settings.policy_rules = [r for r in settings.policy_rules if r.client != name]
            settings.secrets_revision += 1

        self._store.update(remove)

    def table(self) -> dict[str, str]:
        """Every client's token by name (blocking: reads the keychain)."""
        table = {}
        for client in self._store.current.clients:
            token = self._tokens.client_token(client.name)
            if token:
                table[client.name] = token
        return table
