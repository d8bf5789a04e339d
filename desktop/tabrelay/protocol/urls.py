"""URLs read the way the browser reads them (WHATWG URL Standard), so what is checked is what opens.

``parse_url`` runs the Standard's basic URL parser, without a base URL, for the special schemes
that have a host (``http``, ``https``, ``ws``, ``wss``, ``ftp``): input clean-up, userinfo,
the host parser (percent-decoding, UTS #46 ToASCII, the IPv4 number forms, IPv6), the port,
path, query and fragment, and ``href``, the serialisation the browser is then sent. It
deliberately does not resolve relative URLs, parse ``file:`` or non-special URLs (only
``url_scheme`` reads their scheme), encode queries in anything but UTF-8, or decide what is
allowed: that is the navigation guard's. Pure: no I/O.

Where implementations part, it follows the Standard, as Chromium does for international
names (RFC 5893 for every label of a right-to-left domain; a Punycode label must decode to
something non-ASCII), which is stricter than Node's URL there: refusing more fails closed.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

import idna

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

#: The special schemes this module parses, with their default ports (URL Standard §3.1).
DEFAULT_PORTS: Mapping[str, int] = {"ftp": 21, "http": 80, "https": 443, "ws": 80, "wss": 443}


class InvalidUrl(ValueError):
    """The text is not a valid URL by the URL Standard (the browser refuses it too), or not a
    URL of a scheme ``parse_url`` reads. ``str(error)`` says why, for a person."""


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """An absolute URL of a special scheme, every part already in the browser's canonical form.

    ``host`` is serialised as the browser serialises it: an ASCII domain (Punycode for IDNs,
    lower case), a dotted IPv4 address, or an IPv6 address in brackets.
    """

    scheme: str
    username: str
    password: str
    host: str
    port: int | None  # None: the scheme's default port
    path: str
    query: str | None
    fragment: str | None

    @property
    def effective_port(self) -> int:
        """The port the browser connects to: ``port`` or the scheme's default."""
        return DEFAULT_PORTS[self.scheme] if self.port is None else self.port

    @property
    def has_credentials(self) -> bool:
        """Whether the URL carries a user name or password (``user:pw@host``)."""
        return bool(self.username or self.password)

    @property
    def address(self) -> IPAddress | None:
        """The host's IP address (an IPv4-mapped IPv6 address as its IPv4), else ``None``."""
        return host_address(self.host)

    @property
    def origin(self) -> str:
        """The serialised origin, as ``URL.origin`` in the browser: ``https://example.com``."""
        return serialize_origin(self.scheme, self.host, self.port)

    @property
    def href(self) -> str:
        """The whole URL, serialised exactly as the browser serialises it."""
        userinfo = ""
        if self.has_credentials:
            userinfo = self.username + (f":{self.password}" if self.password else "") + "@"
        port = "" if self.port is None else f":{self.port}"
        query = "" if self.query is None else f"?{self.query}"
        fragment = "" if self.fragment is None else f"#{self.fragment}"
        return f"{self.scheme}://{userinfo}{self.host}{port}{self.path}{query}{fragment}"


def preprocess(text: str) -> str:
    """The text the browser's URL parser actually reads.

    Leading and trailing C0 controls and spaces go, ASCII tabs and newlines go everywhere, and
    lone surrogates become U+FFFD (a JavaScript string reaches the parser as scalar values).
    """
    return _scalar_values(text).strip(_C0_CONTROL_OR_SPACE).translate(_NO_TAB_OR_NEWLINE)


def url_scheme(text: str) -> str | None:
    """The scheme the browser reads in ``text``, lower-cased (``"javascript"``), for any scheme.

    ``None`` when ``text`` has no scheme (``example.com``): without a base URL the browser
    refuses it.
    """
    found = _SCHEME.match(preprocess(text))
    return found.group(1).lower() if found else None


def parse_url(text: str) -> ParsedUrl:
    """Parse ``text`` as the browser's URL parser does, without a base URL.

    A tool call reads its tab's address several times (the guard, the origin for the policy,
    the command log's row): the last ``_KEPT_URLS`` of up to ``_KEPT_LENGTH`` characters are
    kept parsed (a parse takes some 40 µs; the result is immutable).

    Raises:
        InvalidUrl: ``text`` is not a valid URL, or its scheme is not one of ``DEFAULT_PORTS``
            (``file:``, ``javascript:``, no scheme…); the message says which.
    """
    return _parse_kept(text) if len(text) <= _KEPT_LENGTH else _parse_url(text)


_KEPT_URLS = 256
_KEPT_LENGTH = 2048  # a page's address can be megabytes: those are parsed each time


def _parse_url(text: str) -> ParsedUrl:
    text = preprocess(text)
    found = _SCHEME.match(text)
    if not found:
        raise InvalidUrl("it has no scheme such as https://")
    scheme = found.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidUrl(f"{scheme}: URLs are not parsed here, only {', '.join(DEFAULT_PORTS)}")
    # Special authority (ignore) slashes states: any run of / and \ leads to the authority.
    rest = text[found.end() :].lstrip("/\\")
    end = _AUTHORITY_END.search(rest)
    authority, rest = (rest[: end.start()], rest[end.start() :]) if end else (rest, "")
    username = password = ""
    userinfo, at, hostport = authority.rpartition("@")
    if at:
        if not hostport:
            raise InvalidUrl("it has credentials but no host")
        user, colon, secret = userinfo.partition(":")
        username = _percent_encode(user, _USERINFO_SET)
        password = _percent_encode(secret, _USERINFO_SET) if colon else ""
    host_text, port_text = _split_port(hostport)
    if not host_text:
        raise InvalidUrl("it has no host")
    host = parse_host(host_text)
    port = None if port_text is None else _parse_port(port_text)
    if port == DEFAULT_PORTS[scheme]:
        port = None
    before_fragment, hash_sign, fragment = rest.partition("#")
    path, question_mark, query = before_fragment.partition("?")
    return ParsedUrl(
        scheme=scheme,
        username=username,
        password=password,
        host=host,
        port=port,
        path=_parse_path(path),
        query=_percent_encode(query, _SPECIAL_QUERY_SET) if question_mark else None,
        fragment=_percent_encode(fragment, _FRAGMENT_SET) if hash_sign else None,
    )


_parse_kept = functools.lru_cache(maxsize=_KEPT_URLS)(_parse_url)


def parse_host(text: str) -> str:
    """The URL Standard's host parser for a special scheme: ``text`` as the browser's host.

    ``ＥＸＡＭＰＬＥ．com`` is ``example.com``, ``bücher.de`` is ``xn--bcher-kva.de``,
    ``0x7f.1`` is ``127.0.0.1`` and ``[::FFFF:127.0.0.1]`` is ``[::ffff:7f00:1]``.

    Raises:
        InvalidUrl: not a valid host: an IPv4 form out of range (``256.0.0.1``), a bad IPv6
            address, a forbidden code point, or a name UTS #46 refuses.
    """
    text = _scalar_values(text)
    if text.startswith("["):
        if not text.endswith("]"):
            raise InvalidUrl("its IPv6 address has no closing ]")
        return f"[{_serialize_ipv6(_parse_ipv6(text[1:-1]))}]"
    domain = _percent_decode(text).decode("utf-8", "replace")
    ascii_domain = _domain_to_ascii(domain)
    if _ends_in_number(ascii_domain):
        return str(ipaddress.IPv4Address(_parse_ipv4(ascii_domain)))
    return ascii_domain


def host_address(host: str) -> IPAddress | None:
    """The IP address a canonical host (from ``parse_url`` or ``parse_host``) names.

    An IPv4-mapped IPv6 address (``[::ffff:7f00:1]``) is returned as its IPv4 address, since
    connecting to it reaches that IPv4 address. ``None`` for a domain.
    """
    try:
        if host.startswith("[") and host.endswith("]"):
            address = ipaddress.IPv6Address(host[1:-1])
            return address.ipv4_mapped or address
        return ipaddress.IPv4Address(host)
    except ValueError:
        return None


def site_host(host: str) -> str:
    """A canonical host as a site: a domain without its trailing root dots, read again.

    ``example.com.`` and ``example.com`` are one DNS name, so the lists and approval rules
    compare them as one; what is left is parsed again, so ``127.0.0.1..`` is ``127.0.0.1``.

    Raises:
        InvalidUrl: what is left is not a valid host (``0x100000000..``).
    """
    stripped = host.rstrip(".")
    if host.startswith("[") or stripped == host or not stripped:
        return host
    return parse_host(stripped)


def site_origin(url: ParsedUrl) -> str:
    """``url``'s origin with its host read by ``site_host``: what site rules are compared in.

    Raises:
        InvalidUrl: the host without its trailing dots is not a valid host.
    """
    return serialize_origin(url.scheme, site_host(url.host), url.port)


def serialize_origin(scheme: str, host: str, port: int | None) -> str:
    """``scheme://host[:port]`` for a canonical host, leaving out the scheme's default port."""
    shown = "" if port is None or port == DEFAULT_PORTS.get(scheme) else f":{port}"
    return f"{scheme}://{host}{shown}"


_C0_CONTROL_OR_SPACE = "".join(chr(c) for c in range(0x21))
_NO_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*):")
_AUTHORITY_END = re.compile(r"[/\\?#]")
_DIGITS = {10: frozenset("0123456789"), 8: frozenset("01234567")}
_DIGITS[16] = _DIGITS[10] | frozenset("abcdefABCDEF")
# URL Standard §3.2 (forbidden host and domain code points) and §1.3 (percent-encode sets).
# Every percent-encode set also holds the C0 controls and everything above U+007E.
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN = _FORBIDDEN_HOST | frozenset(map(chr, range(0x20))) | frozenset("%\x7f")
_FRAGMENT_SET = frozenset(' "<>`')
_QUERY_SET = frozenset(' "#<>')
_SPECIAL_QUERY_SET = _QUERY_SET | frozenset("'")
_PATH_SET = _QUERY_SET | frozenset("?^`{}")
_USERINFO_SET = _PATH_SET | frozenset("/:;=@[\\]|")
_ZERO_WIDTH_JOINERS = frozenset("\u200c\u200d")
_BIDI_RTL = frozenset(("R", "AL", "AN"))


def _scalar_values(text: str) -> str:
    """Surrogate pairs joined and lone surrogates as U+FFFD, as a JavaScript string is read."""
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _split_port(hostport: str) -> tuple[str, str | None]:
    """The host state: the first ``:`` outside brackets starts the port."""
    inside_brackets = False
    for index, char in enumerate(hostport):
        if char == ":" and not inside_brackets:
            return hostport[:index], hostport[index + 1 :]
        if char == "[":
            inside_brackets = True
        elif char == "]":
            inside_brackets = False
    return hostport, None


def _parse_port(text: str) -> int | None:
    if not text:
        return None
    if not set(text) <= _DIGITS[10]:
        raise InvalidUrl("its port is not a number between 0 and 65535")
    digits = text.lstrip("0") or "0"
    if len(digits) > 5 or int(digits) > 65535:
        raise InvalidUrl("its port is not a number between 0 and 65535")
    return int(digits)


def _parse_path(text: str) -> str:
    """The path start and path states for a special URL: ``\\`` is ``/``, dot segments go."""
    if text[:1] in ("/", "\\"):
        text = text[1:]
    segments = re.split(r"[/\\]", text)
    path: list[str] = []
    for index, raw in enumerate(segments):
        last = index == len(segments) - 1
        segment = _percent_encode(raw, _PATH_SET)
        lowered = segment.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if path:
                path.pop()
            if last:
                path.append("")
        elif lowered in (".", "%2e"):
            if last:
                path.append("")
        else:
            path.append(segment)
    return "/" + "/".join(path)


def _percent_encode(text: str, encode_set: frozenset[str]) -> str:
    if text.isascii() and not any(c in encode_set or c < " " or c == "\x7f" for c in text):
        return text
    return "".join(
        "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
        if char in encode_set or not " " <= char <= "~"
        else char
        for char in text
    )


def _percent_decode(text: str) -> bytes:
    data = text.encode("utf-8")
    if b"%" not in data:
        return data
    out = bytearray()
    index = 0
    while index < len(data):
        pair = data[index + 1 : index + 3]
        if data[index] == 0x25 and len(pair) == 2 and all(chr(b) in _DIGITS[16] for b in pair):
            out.append(int(pair, 16))
            index += 3
        else:
            out.append(data[index])
            index += 1
    return bytes(out)


def _domain_to_ascii(domain: str) -> str:
    """URL Standard "domain to ASCII" with beStrict false."""
    # The Standard's shortcut: for ASCII without an "xn--" label, UTS #46 only lower-cases.
    if domain.isascii() and not any(label[:4].lower() == "xn--" for label in domain.split(".")):
        result = domain.lower()
    else:
        result = _uts46_to_ascii(domain)
    if not result:
        raise InvalidUrl("its host is empty")
    forbidden = next((char for char in result if char in _FORBIDDEN_DOMAIN), None)
    if forbidden is not None:
        raise InvalidUrl(f"its host contains {forbidden!r}, which a host may not")
    return result


def _uts46_to_ascii(domain: str) -> str:
    """UTS #46 ToASCII with the URL Standard's flags: CheckHyphens, UseSTD3ASCIIRules and
    VerifyDnsLength off, CheckBidi and CheckJoiners on, nontransitional processing."""
    try:
        mapped = idna.uts46_remap(domain, std3_rules=False)
    except idna.InvalidCodepoint:
        raise InvalidUrl("its host has a character that host names may not use") from None
    except idna.IDNAError:  # longer than the idna package reads (1024 code points)
        raise InvalidUrl("its host is too long to read as an international name") from None
    labels = mapped.split(".")
    decoded = [_decode_label(label) for label in labels]
    bidi_domain = any(
        unicodedata.bidirectional(char) in _BIDI_RTL for label in decoded for char in label
    )
    for label in decoded:
        _check_label(label, bidi=bidi_domain)
    return ".".join(
        label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
        for label in labels
    )


def _decode_label(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except UnicodeError:
        raise InvalidUrl(f"its host has an invalid Punycode label {label[:40]!r}") from None
    # UTS #46 §4 step 4 (revision 31 on): a decoded label is not empty, not ASCII, does not
    # itself start with "xn--", and is already mapped and in NFC, as if typed so.
    if decoded.isascii() or decoded.startswith("xn--") or _remapped(decoded) != decoded:
        raise InvalidUrl(f"its host has an invalid Punycode label {label[:40]!r}")
    return decoded


def _remapped(label: str) -> str | None:
    try:
        return idna.uts46_remap(label, std3_rules=False)
    except idna.IDNAError:
        return None


def _check_label(label: str, *, bidi: bool) -> None:
    """UTS #46 §4.1 validity criteria that the mapping step does not already enforce."""
    if not label or (label.isascii() and not bidi):
        return
    try:
        idna.check_initial_combiner(label)
        joiners_ok = all(
            idna.valid_contextj(label, index)
            for index, char in enumerate(label)
            if char in _ZERO_WIDTH_JOINERS
        )
        if bidi:  # RFC 5893 holds for every label of a domain with a right-to-left one
            idna.check_bidi(label, check_ltr=True)
    except ValueError as error:  # idna.IDNAError, or a code point unknown to unicodedata
        raise InvalidUrl(f"its host breaks the rules for international names: {error}") from None
    if not joiners_ok:
        raise InvalidUrl("its host has a zero-width joiner where RFC 5892 forbids one")


def _ends_in_number(domain: str) -> bool:
    """URL Standard "ends in a number checker": such a host must be an IPv4 address."""
    parts = domain.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    if last and set(last) <= _DIGITS[10]:
        return True
    return _ipv4_number(last) is not None


def _ipv4_number(part: str) -> int | None:
    """URL Standard "IPv4 number parser": decimal, ``0`` octal or ``0x`` hex; None if not."""
    if not part:
        return None
    radix = 10
    if len(part) >= 2 and part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) >= 2 and part[0] == "0":
        part, radix = part[1:], 8
    if not part:
        return 0
    if not set(part) <= _DIGITS[radix]:
        return None
    digits = part.lstrip("0") or "0"
    # Anything this long overflows an IPv4 address; int() refuses huge decimal strings.
    return 1 << 40 if len(digits) > 12 else int(digits, radix)


def _parse_ipv4(domain: str) -> int:
    """URL Standard "IPv4 parser": one to four numbers, the last filling the remaining bytes."""
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        raise InvalidUrl("its host ends in a number but is not an IPv4 address (too many parts)")
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            raise InvalidUrl(f"its host ends in a number but {part[:20]!r} is not a number")
        numbers.append(number)
    if any(number > 255 for number in numbers[:-1]) or numbers[-1] >> 8 * (5 - len(numbers)):
        raise InvalidUrl("its IPv4 address is out of range")
    return numbers[-1] + sum(n << 8 * (3 - i) for i, n in enumerate(numbers[:-1]))


def _parse_ipv6(text: str) -> list[int]:
    """URL Standard "IPv6 parser", including a trailing dotted IPv4 part."""
    invalid = InvalidUrl(f"its IPv6 address [{text[:60]}] is not valid")
    address = [0] * 8
    piece = 0
    compress: int | None = None
    pointer = 0
    length_of = len(text)

    def at(i: int) -> str:
        return text[i] if i < length_of else ""

    if at(0) == ":":
        if at(1) != ":":
            raise invalid
        pointer, piece, compress = 2, 1, 1
    while pointer < length_of:
        if piece == 8:
            raise invalid
        if at(pointer) == ":":
            if compress is not None:
                raise invalid
            pointer += 1
            piece += 1
            compress = piece
            continue
        value = length = 0
        while length < 4 and at(pointer) and at(pointer) in _DIGITS[16]:
            value = value * 16 + int(at(pointer), 16)
            pointer += 1
            length += 1
        if at(pointer) == ".":
            if length == 0 or piece > 6:
                raise invalid
            pointer -= length
            numbers_seen = 0
            while pointer < length_of:
                if numbers_seen > 0:
                    if at(pointer) != "." or numbers_seen >= 4:
                        raise invalid
                    pointer += 1
                if not at(pointer) or at(pointer) not in _DIGITS[10]:
                    raise invalid
                ipv4_piece: int | None = None
                while at(pointer) and at(pointer) in _DIGITS[10]:
                    if ipv4_piece == 0:
                        raise invalid  # no leading zeros in an embedded IPv4 address
                    ipv4_piece = int(at(pointer)) + 10 * (ipv4_piece or 0)
                    if ipv4_piece > 255:
                        raise invalid
                    pointer += 1
                address[piece] = address[piece] * 0x100 + (ipv4_piece or 0)
                numbers_seen += 1
                if numbers_seen in (2, 4):
                    piece += 1
            if numbers_seen != 4:
                raise invalid
            break
        if at(pointer) == ":":
            pointer += 1
            if pointer >= length_of:
                raise invalid
        elif pointer < length_of:
            raise invalid
        address[piece] = value
        piece += 1
    if compress is not None:
        swaps = piece - compress
        piece = 7
        while piece != 0 and swaps > 0:
            other = compress + swaps - 1
            address[piece], address[other] = address[other], address[piece]
            piece -= 1
            swaps -= 1
    elif piece != 8:
        raise invalid
    return address


def _serialize_ipv6(pieces: list[int]) -> str:
    """URL Standard "IPv6 serializer": the first longest run of two or more zeros is ``::``."""
    best_start, best_length = -1, 1
    index = 0
    while index < 8:
        end = index
        while end < 8 and pieces[end] == 0:
            end += 1
        if end - index > best_length:
            best_start, best_length = index, end - index
        index = max(end, index + 1)
    if best_start < 0:
        return ":".join(f"{p:x}" for p in pieces)
    head = ":".join(f"{p:x}" for p in pieces[:best_start])
    tail = ":".join(f"{p:x}" for p in pieces[best_start + best_length :])
    return f"{head}::{tail}"
