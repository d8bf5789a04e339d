"""Which tool arguments are secrets, and the copy of the arguments that may be stored or shown.

A tool that types text declares ``SecretFields``: the argument names that can carry typed text
and a check that proves, from the target element and the caller's own ``secret`` hint, which
of those values are not secret. Everything under those names is masked unless proven otherwise
— a target that could not be inspected, a call cancelled before the check stay masked; and
arguments that are not what the tool takes (a misspelt name, a number for text) are masked
whole, since nothing says where the secret went. The runner redacts at the door, so the
approval dialog, the command log, its exports and the dashboard only ever hold the masked copy;
a tool that learns later that a field is secret (the page swapped it) adds its path to
``ToolContext.secrets``. Text read from the page for the person (``targets.py``) goes through
``scrub``, so a secret the page happens to echo is masked there too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tabrelay.tools.context import ToolContext

# Paths name one value in the arguments: "text", "fields.2.value".
MIN_SCRUBBED = 3  # characters
Clearance = Callable[["ToolContext", Any], Awaitable[frozenset[str]]]


@dataclass(frozen=True, slots=True)
class SecretFields:
    """Argument names that may carry a secret, and the check that clears the ones that don't."""

    names: frozenset[str]
    clear: Clearance


def mask(text: str) -> str:
    """What a secret becomes: its length, never its text."""
    return f"[secret: {len(text)} characters]"


def redact(arguments: dict[str, Any], names: frozenset[str], cleared: frozenset[str]) -> Any:
    """A copy of ``arguments`` with every string or number under ``names`` masked unless its
    path is in ``cleared``. Other values are copied as they are."""
    return _redact(arguments, "", names, cleared, _mask_all)


def secret_values(
    arguments: dict[str, Any], names: frozenset[str], cleared: frozenset[str]
) -> frozenset[str]:
    """The texts ``redact`` masks (numbers as written), for ``scrub``."""
    found: set[str] = set()

    def collect(value: Any) -> Any:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            found.add(str(value))
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        return value

    _redact(arguments, "", names, cleared, collect)
    return frozenset(found)


def scrub(text: str, secrets: frozenset[str]) -> str:
    """``text`` with every occurrence of a secret masked; shorter ones than ``MIN_SCRUBBED``
    are left, since they would mask ordinary words rather than protect anything."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SCRUBBED and secret in text:
            text = text.replace(secret, mask(secret))
    return text


def redact_all(arguments: dict[str, Any]) -> Any:
    """A copy of ``arguments`` with every string and number masked (their names kept)."""
    return _mask_all(arguments)


def _redact(
    value: Any,
    path: str,
    names: frozenset[str],
    cleared: frozenset[str],
    secret: Callable[[Any], Any],
) -> Any:
    """``value`` copied, with ``secret`` applied to what sits under a name not cleared."""
    if isinstance(value, dict):
        copied = {}
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            hidden = key in names and inner not in cleared
            copied[key] = secret(item) if hidden else _redact(item, inner, names, cleared, secret)
        return copied
    if isinstance(value, list):
        return [
            _redact(item, f"{path}.{n}", names, cleared, secret) for n, item in enumerate(value)
        ]
    return value


def _mask_all(value: Any) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, int | float) and not isinstance(value, bool):  # a PIN as a number
        return mask(str(value))
    if isinstance(value, dict):
        return {key: _mask_all(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_all(item) for item in value]
    return value
