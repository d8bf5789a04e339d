"""Where agents may go and which tabs they may see (DESIGN §4.8, §4.9). Pure decisions.

``NavigationGuard.check`` admits ``http``, ``https`` and ``about:blank`` only, never Tabrelay's
own ports, never private-network addresses unless allowed, and applies the person's per-site
block and allow lists (and the "only these sites" mode). Sites in the lists are written as a
host (``example.com``, which covers its subdomains), a wildcard host (``*.example.com``) or an
origin (``https://example.com:8443``). Loopback stays reachable so agents can work on local
development servers; Tabrelay's own ports are refused there.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from tabrelay.config.settings import NavigationSettings
from tabrelay.errors import NavigationBlocked

ALLOWED_SCHEMES = ("http", "https")
LOOPBACK_NAMES = ("localhost", "localhost.localdomain")


@dataclass(frozen=True, slots=True)
class Site:
    scheme: str
    host: str
    port: int

    @property
    def origin(self) -> str:
        default = {"http": 80, "https": 443}.get(self.scheme)
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def origin_of(url: str) -> str | None:
    """The origin of an http(s) URL (``https://example.com``), else ``None``."""
    try:
        parts = urlsplit(url)
        return _site(parts).origin if parts.scheme.lower() in ALLOWED_SCHEMES else None
    except (ValueError, NavigationBlocked):
        return None


class NavigationGuard:
    def __init__(self, settings: NavigationSettings, *, own_ports: Iterable[int]) -> None:
        self.settings = settings
        self.own_ports = frozenset(p for p in own_ports if p)

    def check(self, url: str) -> str:
        """Return ``url`` if an agent may open it.

        Raises:
            NavigationBlocked: with the reason, phrased for the agent.
        """
        if url.strip() == "about:blank":
            return "about:blank"
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            raise NavigationBlocked(f"{_short(url)} is not a valid URL") from None
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            shown = f"{scheme}: URLs are" if scheme else "URLs without http:// or https:// are"
            raise NavigationBlocked(
                f"{shown} refused: Tabrelay lets agents open http, https and about:blank only"
            )
        site = _site(parts)
        address = _ip(site.host)
        loopback = (
            site.host in LOOPBACK_NAMES
            or site.host.endswith(".localhost")
            or bool(address and (address.is_loopback or address.is_unspecified))
        )
        if loopback and site.port in self.own_ports:
            raise NavigationBlocked(
                f"{site.origin} is Tabrelay itself; agents may not open Tabrelay's own ports"
            )
        if self._listed(site, self.settings.block):
            raise NavigationBlocked(f"{site.origin} is on the person's block list")
        allowed = self._listed(site, self.settings.allow)
        if self.settings.only_allowed and not allowed:
            raise NavigationBlocked(
                f"{site.origin} is not on the person's list of allowed sites (only those may be "
                "opened); ask them to add it in Tabrelay's settings"
            )
        private = address is not None and _private(address) and not loopback
        if private and not allowed and not self.settings.allow_private_networks:
            raise NavigationBlocked(
                f"{site.origin} is a private-network address; the person must allow it (or "
                "private networks) in Tabrelay's settings first"
            )
        return parts.geturl()

    @staticmethod
    def _listed(site: Site, patterns: Iterable[str]) -> bool:
        return any(_pattern_matches(p, site) for p in patterns)


def _site(parts: SplitResult) -> Site:
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise NavigationBlocked("the URL has no host")
    if parts.username or parts.password:
        raise NavigationBlocked("URLs with credentials (user:password@) are refused")
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower(), 0)
    except ValueError:
        raise NavigationBlocked("the URL's port is not a number between 0 and 65535") from None
    return Site(parts.scheme.lower(), host, port)


def _pattern_matches(pattern: str, site: Site) -> bool:
    pattern = pattern.strip().lower().rstrip("/")
    if not pattern:
        return False
    if "://" in pattern:
        try:
            return _site(urlsplit(pattern)).origin == site.origin
        except (ValueError, NavigationBlocked):
            return False
    host = pattern.removeprefix("*.")
    return site.host == host or site.host.endswith("." + host)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _private(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_private or address.is_link_local or address.is_reserved


def _short(text: str) -> str:
    return repr(text[:80] + ("…" if len(text) > 80 else ""))
