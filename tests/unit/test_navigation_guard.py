"""Where agents may navigate: schemes, Tabrelay's own ports, private networks, the lists."""

from __future__ import annotations

import pytest

from tabrelay.config.settings import NavigationSettings
from tabrelay.errors import NavigationBlocked
from tabrelay.tools.guard import NavigationGuard, origin_of


def guard(**settings: object) -> NavigationGuard:
    return NavigationGuard(NavigationSettings(**settings), own_ports=[23001, 23002])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "file: URLs are refused"),
        ("javascript:alert(1)", "javascript: URLs are refused"),
        ("data:text/html,<h1>x</h1>", "data: URLs are refused"),
        ("chrome://settings", "chrome: URLs are refused"),
        ("view-source:https://example.com", "view-source: URLs are refused"),
        ("chrome-extension://abcdefghijklmnopabcdefghijklmnop/options.html", "chrome-extension:"),
        ("ftp://example.com/", "ftp: URLs are refused"),
        ("example.com", "URLs without http:// or https:// are refused"),
        ("http://127.0.0.1:23001/api/browser-relay/config", "Tabrelay itself"),
        ("http://localhost:23002/mcp", "Tabrelay itself"),
        ("http://[::1]:23001/", "Tabrelay itself"),
        ("http://0.0.0.0:23001/", "Tabrelay itself"),
        ("http://app.localhost:23002/", "Tabrelay itself"),
        ("http://192.168.1.1/", "private-network address"),
        ("http://10.0.0.5:8080/admin", "private-network address"),
        ("http://169.254.169.254/latest/meta-data", "private-network address"),
        ("http://[fd00::1]/", "private-network address"),
        ("http://user:pw@example.com/", "credentials"),
        ("http://example.com:99999/", "port"),
        ("http:///nohost", "no host"),
    ],
)
def test_refused_urls_say_why(url: str, reason: str) -> None:
    with pytest.raises(NavigationBlocked) as raised:
        guard().check(url)
    assert reason in str(raised.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "http://example.com:8080/a?b=c#d",
        "about:blank",
        "http://localhost:3000/",
        "http://127.0.0.1:8000/page",
        "HTTPS://EXAMPLE.COM/",
    ],
)
def test_ordinary_and_local_development_urls_pass(url: str) -> None:
    assert guard().check(url)


def test_block_list_matches_hosts_subdomains_wildcards_and_origins() -> None:
    g = guard(block=["bank.example", "*.mail.example", "https://shop.example:8443"])
    for url in (
        "https://bank.example/",
        "https://login.bank.example/",
        "https://x.mail.example/",
        "https://shop.example:8443/cart",
    ):
        with pytest.raises(NavigationBlocked, match="block list"):
            g.check(url)
    assert g.check("https://shop.example/")  # another port is another origin
    assert g.check("https://notbank.example/")


def test_only_allowed_mode_admits_just_the_allow_list() -> None:
    g = guard(allow=["docs.example"], only_allowed=True)
    assert g.check("https://docs.example/guide")
    with pytest.raises(NavigationBlocked, match="not on the person's list of allowed sites"):
        g.check("https://attacker.test/?d=secret")


def test_private_networks_can_be_allowed_per_host_or_wholesale() -> None:
    assert guard(allow=["192.168.1.1"]).check("http://192.168.1.1/")
    assert guard(allow_private_networks=True).check("http://10.0.0.5/")


def test_origin_of() -> None:
    assert origin_of("https://Example.com/a/b?c") == "https://example.com"
    assert origin_of("http://example.com:8080/") == "http://example.com:8080"
    assert origin_of("https://example.com:443/") == "https://example.com"
    assert origin_of("chrome://settings") is None
    assert origin_of("about:blank") is None
