"""Where agents may go and which tabs they may see (DESIGN §4.8, §4.9). Pure decisions.

``NavigationGuard.check`` admits ``http``, ``https`` and ``about:blank`` only, never Tabrelay's
own ports, never private-network addresses unless allowed, and applies the person's per-site
block and allow lists (and the "only these sites" mode). Sites in the lists are written as a
host (``example.com``, which covers its subdomains), a wildcard host (``*.example.com``) or an
origin (``https://example.com:8443``). Loopback stays reachable so agents can work on local
development servers; Tabrelay's own ports are refused there. URLs, hosts and list entries are
all read by ``tabrelay.protocol.urls``, the way the browser reads them, so ``127.1``,
``0x7f000001`` or ``[::ffff:127.0.0.1]`` are the loopback address they name.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tabrelay.config.settings import NavigationSettings
from tabrelay.errors import NavigationBlocked
from tabrelay.protocol.urls import (
    InvalidUrl,
    IPAddress,
    ParsedUrl,
    host_address,
    parse_host,
    parse_url,
    preprocess,
    serialize_origin,
    site_host,
    site_origin,
    url_scheme,
)

ALLOWED_SCHEMES = ("http", "https")
# Names Chromium answers with loopback itself, without asking DNS (net::IsLocalHostname).
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6")
# ``http:///x`` is ``http://x/`` to the browser, which is not what a person reading it sees.
_EMPTY_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:[/\\]{3}")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
# RFC 6762 (.local), RFC 8375 (.home.arpa), ICANN's reserved .internal, and suffixes routers and
# companies use for names only their own network answers.
_LOCAL_SUFFIXES = (".local", ".home.arpa", ".internal", ".lan", ".home", ".intranet", ".corp")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # RFC 4291 §2.5.5.1, deprecated


@dataclass(frozen=True, slots=True)
class Site:
    """What the lists compare: scheme, host without its root dot, and the port connected to."""

    scheme: str
    host: str
    port: int

    @property
    def origin(self) -> str:
        return serialize_origin(self.scheme, self.host, self.port)


def origin_of(url: str) -> str | None:
    """The origin of an http(s) URL (``https://example.com``), else ``None``.

    The host is read as the browser reads it and as a site (``https://EXAMPLE.com./`` gives
    ``https://example.com``); URLs with credentials have none.
    """
    try:
        parsed = parse_url(url)
        if parsed.scheme not in ALLOWED_SCHEMES or parsed.has_credentials:
            return None
        return site_origin(parsed)
    except InvalidUrl:
        return None


class NavigationGuard:
    """The decisions for one version of the settings; its lists are read once, when made."""

    def __init__(self, settings: NavigationSettings, *, own_ports: Iterable[int]) -> None:
        self.settings = settings
        self.own_ports = frozenset(p for p in own_ports if p)
        self._block = _patterns(settings.block)
        self._allow = _patterns(settings.allow)

    def refusal(self, url: str) -> str | None:
        """Why a page may not load ``url`` (itself, a frame, a redirect hop), else ``None``.

        Only http(s) loads leave the page for a site: ``blob:``, ``data:`` and ``about:``
        documents stay within it, and are the page's own business.
        """
        if not url.lower().startswith(("http:", "https:")):
            return None
        try:
            self.check(url)
        except NavigationBlocked as blocked:
            return blocked.message
        return None

    def check(self, url: str) -> str:
        """Return the URL to send the browser if an agent may open ``url``.

        The URL returned is ``url`` as the browser serialises it (``HTTP://127.1`` is
        ``http://127.0.0.1/``): the exact URL that was checked.

        Raises:
            NavigationBlocked: with the reason, phrased for the agent.
        """
        text = preprocess(url)
        scheme = url_scheme(text)
        if scheme == "about" and text[len("about:") :] == "blank":
            return "about:blank"
        if scheme not in ALLOWED_SCHEMES:
            shown = f"{scheme}: URLs are" if scheme else "URLs without http:// or https:// are"
            raise NavigationBlocked(
                f"{shown} refused: Tabrelay lets agents open http, https and about:blank only"
            )
        if _EMPTY_AUTHORITY.match(text):
            raise NavigationBlocked(
                f"{_short(url)} has no host: nothing stands between // and the next /"
            )
        try:
            parsed = parse_url(text)
        except InvalidUrl as invalid:
            raise NavigationBlocked(f"{_short(url)} is not a valid URL: {invalid}") from None
        if parsed.has_credentials:
            raise NavigationBlocked("URLs with credentials (user:password@) are refused")
        site = _site(parsed)
        address = host_address(site.host)
        loopback = _loopback_name(site.host) or (address is not None and _loopback(address))
        if (loopback or _embeds_loopback(address)) and site.port in self.own_ports:
            raise NavigationBlocked(
                f"{site.origin} is Tabrelay itself; agents may not open Tabrelay's own ports"
            )
        if any(matches(site) for matches in self._block):
            raise NavigationBlocked(f"{site.origin} is on the person's block list")
        allowed = any(matches(site) for matches in self._allow)
        if self.settings.only_allowed and not allowed:
            raise NavigationBlocked(
                f"{site.origin} is not on the person's list of allowed sites (only those may be "
                "opened); ask them to add it in Tabrelay's settings"
            )
        private = (_private(address) if address is not None else _private_name(site.host)) and (
            not loopback
        )
        if private and not allowed and not self.settings.allow_private_networks:
            what = "address" if address is not None else "name"
            raise NavigationBlocked(
                f"{site.origin} is a private-network {what}; the person must allow it (or "
                "private networks) in Tabrelay's settings first"
            )
        return parsed.href


def _site(url: ParsedUrl) -> Site:
    """``url`` as the lists see it.

    Raises:
        NavigationBlocked: the host without its trailing dots is not a valid host.
    """
    try:
        host = site_host(url.host)
    except InvalidUrl as invalid:
        raise NavigationBlocked(f"{_short(url.href)} is not a valid URL: {invalid}") from None
    return Site(url.scheme, host, url.effective_port)


def _patterns(entries: Iterable[str]) -> list[Callable[[Site], bool]]:
    """Each list entry as a test of a site, read once."""
    return [matcher for entry in entries if (matcher := _pattern(entry)) is not None]


def _pattern(pattern: str) -> Callable[[Site], bool] | None:
    """An entry as a test: an origin matches itself; a host, itself and its subdomains; an
    address, that address however written. ``None`` for an entry that names nothing."""
    pattern = pattern.strip()
    if not pattern:
        return None
    if "://" in pattern:
        try:
            parsed = parse_url(pattern)
        except InvalidUrl:
            return None
        if parsed.scheme not in ALLOWED_SCHEMES:
            return None
        origin = site_origin(parsed)
        return lambda site: site.origin == origin
    host = _pattern_host(pattern.removeprefix("*.").rstrip("/"))
    address = host_address(host)
    if address is not None:  # an address names one host, however written, never a "subdomain"
        return lambda site: host_address(site.host) == address
    return lambda site: site.host == host or site.host.endswith("." + host)


def _pattern_host(text: str) -> str:
    """A list entry's host as the browser would read it, so ``EXAMPLE.com.``, ``bücher.de``
    or ``0xc0a80101`` match the tab they name; an entry that is no host stays as written."""
    bracketed = f"[{text}]" if ":" in text and not text.startswith("[") else text
    try:
        return site_host(parse_host(bracketed))
    except InvalidUrl:
        return text.lower().rstrip(".")


def _loopback_name(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.endswith(".localhost")


def _loopback(address: IPAddress) -> bool:
    # 0.0.0.0 and :: reach the machine's own services on Linux.
    return address.is_loopback or address.is_unspecified


def _embedded_ipv4(address: IPAddress | None) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv4-compatible, NAT64 or 6to4 IPv6 address."""
    if not isinstance(address, ipaddress.IPv6Address) or _loopback(address):
        return None
    if address in _IPV4_COMPATIBLE or address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def _embeds_loopback(address: IPAddress | None) -> bool:
    embedded = _embedded_ipv4(address)
    return embedded is not None and _loopback(embedded)


def _private_name(host: str) -> bool:
    """A name only a local network answers: one label (``router``, ``intranet``) or a
    special-use or customary local suffix (``printer.local``, ``nas.lan``, ``x.home.arpa``).

    Names in public DNS that resolve to private addresses are not seen here (see
    docs/security.md): the guard reads URLs, it does not resolve them.
    """
    return "." not in host or host.endswith(_LOCAL_SUFFIXES)


def _private(address: IPAddress) -> bool:
    """Private, link-local, reserved, shared (100.64/10), multicast, or an IPv6 form of one."""
    embedded = _embedded_ipv4(address)
    if embedded is not None and (_loopback(embedded) or _private(embedded)):
        return True
    if embedded is not None and address in _NAT64:
        return False  # a public IPv4 address behind the NAT64 prefix (which Python calls reserved)
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    return (
        not address.is_global  # also 100.64.0.0/10, which is neither private nor global
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or site_local
    )


def _short(text: str) -> str:
    return repr(text[:80] + ("…" if len(text) > 80 else ""))
