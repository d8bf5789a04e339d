"""Every exception Tabrelay raises on purpose, with a title and a message a person can read.

Boundaries translate these (relay → close codes, tools → MCP error results, Qt → dialogs);
nothing here knows about those boundaries. The tree::

    TabrelayError
    ├── ConfigError
    │   ├── SettingsError
    │   └── SecretStoreError
    ├── RelayError
    │   ├── StartupError              (port taken, non-loopback host)
    │   ├── ProtocolViolation         (a peer sent something malformed)
    │   ├── EventsClosed              (the events a waiter listened to ended)
    │   ├── DuplicateBrowser          (a second connection under a connected browser's id)
    │   └── BrowserError
    │       ├── NoBrowserError
    │       ├── BrowserDisconnected
    │       ├── CommandTimeout
    │       ├── TooManyPendingCommands
    │       └── CommandFailed         (the extension answered with an error)
    ├── ToolError                     (a tool cannot do what the agent asked)
    │   ├── NavigationBlocked
    │   ├── CdpMethodBlocked
    │   ├── TargetChanged
    │   └── ApprovalDenied
    └── UsageError                    (command line)
"""

from __future__ import annotations

from pydantic import ValidationError


class TabrelayError(Exception):
    """Base class: ``title`` is a short heading, ``message`` the sentence shown to people."""

    title = "Tabrelay error"

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title

    def __str__(self) -> str:
        return self.message


class ConfigError(TabrelayError):
    title = "Configuration problem"


class SettingsError(ConfigError):
    title = "Settings file problem"


class SecretStoreError(ConfigError):
    title = "Secret storage problem"


class RelayError(TabrelayError):
    title = "Browser relay problem"


class StartupError(RelayError):
    title = "Tabrelay could not start"


class ProtocolViolation(RelayError):
    """A peer sent a frame that breaks the relay protocol. ``code`` names the class of error."""

    title = "Invalid relay message"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class EventsClosed(RelayError):
    """The event subscription a waiter listened to was closed (its owner left, or Tabrelay is
    stopping): the waiter stops instead of waiting for events that cannot come."""

    title = "Events ended"


class DuplicateBrowser(RelayError):
    """A second connection tried to enter the registry under a connected browser's id."""

    title = "Browser already connected"


class BrowserError(RelayError):
    title = "Browser problem"


class NoBrowserError(BrowserError):
    title = "No browser connected"


class BrowserDisconnected(BrowserError):
    title = "Browser disconnected"


class CommandTimeout(BrowserError):
    title = "Browser did not answer"


class TooManyPendingCommands(BrowserError):
    title = "Browser is busy"


class CommandFailed(BrowserError):
    """A browser command failed; ``code`` says why, when known: an ``ErrorCode`` of the
    protocol when the extension answered with an error (a method it did not announce is its
    ``unknown_method`` too), or the app's own for what Chrome answered without one
    (``tools.acting.loading.LoadCode``). Decide by it, never by the message's words."""

    title = "Browser command failed"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class ToolError(TabrelayError):
    title = "Tool failed"


class NavigationBlocked(ToolError):
    title = "Navigation blocked"


class CdpMethodBlocked(ToolError):
    title = "CDP method blocked"


class TargetChanged(ToolError):
    title = "Tab changed"


class ApprovalDenied(ToolError):
    """A call was not allowed; ``decision`` says by whom, for the command log."""

    title = "Denied"

    def __init__(self, message: str, *, decision: str = "denied") -> None:
        super().__init__(message)
        self.decision = decision


class UsageError(TabrelayError):
    title = "Usage error"


def validation_text(error: ValidationError, *, limit: int = 5, whole: str = "arguments") -> str:
    """The first ``limit`` problems pydantic found, as ``where: what; …`` (``whole`` names a
    problem of the whole input)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or whole}: {item['msg']}"
        for item in error.errors()[:limit]
    )
