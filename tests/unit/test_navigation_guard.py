"""Where agents may navigate: schemes, Tabrelay's own ports, private networks, the lists."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.scale import examples
from tabrelay.config.settings import NavigationSettings
from tabrelay.errors import NavigationBlocked
from tabrelay.tools.state.guard import NavigationGuard, origin_of


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


# -- hosts spelled the many ways the browser reads them (URL Standard, DESIGN §4.8) -----------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.1:23001/",
        "http://127.0.1:23001/",
        "http://2130706433:23001/",
        "http://0x7f000001:23001/",
        "http://0x7F000001:23001/",
        "http://0177.0.0.1:23001/",
        "http://017700000001:23001/",
        "http://0x7f.1:23001/",
        "http://0X7F.1:23001/",
        "http://0x7f.0.0.0x1:23001/",
        "http://0177.0x0.0.1:23001/",
        "http://127.0.0.1.:23001/",
        "http://127.0.0.1..:23001/",
        "http://127.0.0.1%2e:23001/",
        "http://１２７．０．０．１:23001/",
        "http://127。0。0。1:23001/",
        "http://%31%32%37.0.0.1:23001/",
        "http://%31%32%37%2e%30%2e%30%2e%31:23001/",
        "http://ｌｏｃａｌｈｏｓｔ:23001/",
        "http://LOCALHOST:23001/",
        "http://LOCALHOST.:23001/",
        "http://localhost..:23002/",
        "http://sub.localhost.:23001/",
        "http://localhost.localdomain:23001/",
        "http://127.0.0.1:023001/",
        "http://127.0.0.1:0000023002/",
        "http://[::1]:23001/",
        "http://[0:0:0:0:0:0:0:1]:23001/",
        "http://[::ffff:127.0.0.1]:23001/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]:23001/",
        "http://[::ffff:7f00:1]:23001/",
        "http://[::FFFF:7F00:0001]:23001/",
        "http://[::127.0.0.1]:23001/",
        "http://[64:ff9b::127.0.0.1]:23001/",
        "http://[::]:23001/",
        "http://[::ffff:0.0.0.0]:23001/",
        "http://0:23001/",
        "http://0x:23001/",
        "http://0.0.0.0.:23001/",
        "http://12\t7.0.0.1:23001/",
        "http://127.0.\n0.1:23001/",
        "http://127.0.0.1:230\r01/",
        "ht\ttp://127.1:23001/",
        "http:\\\\127.1:23001\\x",
        "http:127.1:23001",
        "http:/127.1:23001",
        "HTTP:\\/127.1:23001/",
        " \x00\x1fhttp://127.1:23001/ \n",
        "https://127.1:23002/mcp",
    ],
)
def test_tabrelay_is_refused_however_its_address_is_spelled(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="Tabrelay itself"):
        guard().check(url)
    with pytest.raises(NavigationBlocked, match="Tabrelay itself"):
        guard(allow_private_networks=True, allow=["127.0.0.1", "localhost"]).check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://0xc0a80101/",
        "http://3232235777/",
        "http://0300.0250.0001.0001/",
        "http://192.168.257/",
        "http://0xc0.0xa8.1.1/",
        "http://192.168.1.1./",
        "http://192.168.1.1../",
        "http://%31%39%32.168.1.1/",
        "http://１９２．１６８．１．１/",
        "http://10.1/",
        "http://10.0.0.5./",
        "http://012.1/",
        "http://0xa000005:8080/admin",
        "http://167772165/",
        "http://172.16.0.1/",
        "http://0xac100001/",
        "http://172.31.255.255/",
        "http://100.64.0.1/",  # shared address space (RFC 6598, carrier-grade NAT)
        "http://100.127.255.254/",
        "http://0x64400001/",
        "http://169.254.169.254/latest/meta-data",
        "http://0xa9fea9fe/latest/meta-data",
        "http://2852039166/",
        "http://0251.0376.0251.0376/",
        "http://240.0.0.1/",  # reserved
        "http://255.255.255.255/",
        "http://224.0.0.1/",  # multicast
        "http://0.1.2.3/",  # "this network"
        "http://198.18.0.1/",
        "http://[::ffff:192.168.1.1]/",
        "http://[0:0:0:0:0:ffff:192.168.1.1]/",
        "http://[::ffff:c0a8:101]/",
        "http://[::ffff:10.0.0.5]:8080/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:100.64.0.1]/",
        "http://[::192.168.1.1]/",  # IPv4-compatible
        "http://[::10.0.0.5]/",
        "http://[::127.0.0.1]:8000/",  # IPv4-compatible loopback is not this machine's loopback
        "http://[64:ff9b::192.168.1.1]/",  # NAT64
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[64:ff9b::127.0.0.1]:8000/",
        "http://[2002:c0a8:101::]/",  # 6to4 of 192.168.1.1
        "http://[fd00::1]/",
        "http://[fc00::1]/",
        "http://[fe80::1]/",
        "http://[fec0::1]/",  # site-local
        "http://[ff02::1]/",
        "http://[100::1]/",
        "http:\\\\0xc0a80101\\",
        "http:10.1",
    ],
)
def test_private_networks_are_refused_however_they_are_spelled(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="private-network address"):
        guard().check(url)
    assert guard(allow_private_networks=True).check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://1.2.3.4.5/",
        "http://1.2.3.4.5:23001/",
        "http://127.0.0.1.1:23001/",
        "http://256.0.0.1/",
        "http://127.0.0.256:23001/",
        "http://0x100000000/",
        "http://4294967296:23001/",
        "http://0x100000000../",
        "http://08/",
        "http://0x7g.1/",
        "http://127..1:23001/",
        "http://.127.0.0.1:23001/",
        "http://example.123/",
        "http://[::ffff:127.0.0.1/",
        "http://[::1::2]/",
        "http://[::ffff:127.0.0.01]:23001/",
        "http://[1:2:3:4:5:6:7:8:9]/",
        "http://[]/",
        "http://127.0.0.1 /",
        "http://127.0.0.1%20:23001/",
        "http://%zz/",
        "http://ex%2Fample.com/",
        "http://%00/",
        "http://a^b/",
        "http://xn--a/",
        "http://a\u200cb/",
        "http://127.0.0.1:23001x/",
        "http://127.0.0.1:-23001/",
    ],
)
def test_urls_the_browser_would_refuse_are_refused_as_invalid(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="is not a valid URL"):
        guard(allow_private_networks=True).check(url)


@pytest.mark.parametrize(
    "url",
    ["http:///nohost", "http:////127.1:23001/", "http:\\\\\\127.1:23001", "http://", "http://:80/"],
)
def test_urls_without_a_host_say_so(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="no host"):
        guard().check(url)


@pytest.mark.parametrize(
    "url",
    ["http://user@127.1:23001/", "http://user:pw@evil@127.1:23001/", "http://:pw@example.com/"],
)
def test_urls_with_credentials_stay_refused(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="credentials"):
        guard().check(url)


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("HTTPS://EXAMPLE.COM/", "https://example.com/"),
        (" https://example.com:443/a/../b?c d#e\n", "https://example.com/b?c%20d#e"),
        ("http:\\\\example.com\\a b", "http://example.com/a%20b"),
        ("https://bücher.de/", "https://xn--bcher-kva.de/"),
        ("https://ＥＸＡＭＰＬＥ．com/", "https://example.com/"),
        ("http://0x7f.1:3000/", "http://127.0.0.1:3000/"),
        ("http://[::ffff:127.0.0.1]:8000/", "http://[::ffff:7f00:1]:8000/"),
        ("http://localhost.:3000/", "http://localhost.:3000/"),
        ("http://134744072/", "http://8.8.8.8/"),
        ("http://[64:ff9b::8.8.8.8]/", "http://[64:ff9b::808:808]/"),
        ("http://[2606:4700:4700::1111]/", "http://[2606:4700:4700::1111]/"),
        ("http://@example.com/", "http://example.com/"),
        ("about:blank", "about:blank"),
        (" about:blank\n", "about:blank"),
        ("ABOUT:blank", "about:blank"),
    ],
)
def test_the_guard_returns_the_canonical_url_it_checked(url: str, sent: str) -> None:
    assert guard().check(url) == sent
    assert guard().check(sent) == sent


def test_about_urls_other_than_blank_are_refused() -> None:
    for url in ("about:srcdoc", "about:blank#x", "about:BLANK", "about:settings"):
        with pytest.raises(NavigationBlocked, match="about: URLs are refused"):
            guard().check(url)


def test_list_entries_are_read_like_the_urls_they_must_match() -> None:
    g = guard(block=["BANK.example.", "bücher.de", "https://ＳＨＯＰ.example.:443", "0xc0a80102"])
    for url in (
        "https://bank.example/",
        "https://bank.example./",
        "https://ＢＡＮＫ.example/",
        "https://login.bank.example../",
        "https://xn--bcher-kva.de/",
        "https://BÜCHER.de./x",
        "https://shop.example/",
        "https://shop.example.:443/",
        "http://192.168.1.2/",
        "http://[::ffff:192.168.1.2]/",
    ):
        with pytest.raises(NavigationBlocked, match="block list"):
            g.check(url)
    assert g.check("https://notbank.example/")
    assert g.check("https://shop.example:8443/")


def test_allowed_addresses_admit_every_spelling_and_only_that_address() -> None:
    g = guard(allow=["192.168.1.1", "[fd00::1]", "10.1"])
    assert g.check("http://0xc0a80101/") == "http://192.168.1.1/"
    assert g.check("http://[::ffff:192.168.1.1]/")
    assert g.check("http://[fd00:0::1]/")
    assert g.check("http://10.0.0.1/")
    with pytest.raises(NavigationBlocked, match="private-network address"):
        g.check("http://192.168.1.10/")
    with pytest.raises(NavigationBlocked, match="private-network address"):
        guard(allow=["1.1"]).check("http://192.168.1.1/")  # an address is not a host suffix


def test_only_allowed_mode_reads_the_url_like_the_browser() -> None:
    g = guard(allow=["docs.example"], only_allowed=True)
    assert g.check("https://DOCS.example.:443/guide") == "https://docs.example./guide"
    for url in ("https://docs.example@attacker.test/", "https://attacker.test\\@docs.example/"):
        with pytest.raises(NavigationBlocked):
            g.check(url)


def test_origin_of_reads_urls_like_the_browser() -> None:
    assert origin_of("http://0x7f.1:8000/x") == "http://127.0.0.1:8000"
    assert origin_of("https://EXAMPLE.com./") == "https://example.com"
    assert origin_of("https://bücher.de/") == "https://xn--bcher-kva.de"
    assert origin_of("http:\\\\[::ffff:127.0.0.1]:80\\") == "http://[::ffff:7f00:1]"
    assert origin_of("http://user:pw@example.com/") is None
    assert origin_of("http://256.0.0.1/") is None
    assert origin_of("ws://example.com/") is None


GUARD_PIECES = st.sampled_from(
    [
        "http://", "https:", "\\", "/", "@", ":", "[", "]", ".", "0x", "0", "7f", "127", "1",
        "255", "%2e", "%31", "%", "23001", "23002", "ffff", "::", "\t", "１", "．", "ü", "xn--",
        "localhost", "?", "#", " ", "\x00",
    ]
)  # fmt: skip


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(GUARD_PIECES, max_size=12).map("".join)))
def test_arbitrary_text_is_admitted_or_refused_with_a_reason(text: str) -> None:
    g = guard(block=["bank.example", "https://x.example:8443"], allow=["10.0.0.1"])
    refused: NavigationBlocked | None = None
    try:
        sent = g.check(text)
    except NavigationBlocked as blocked:
        refused = blocked
    if refused is not None:
        assert refused.message
        return
    assert g.check(sent) == sent  # what the browser is sent passes the same check again
    assert origin_of(sent) is not None or sent == "about:blank"


@pytest.mark.parametrize(
    "url",
    [
        "http://router/",
        "http://intranet:8080/wiki",
        "http://printer.local/",
        "http://nas.lan/",
        "http://camera.home.arpa/",
        "http://build.corp/",
        "http://svc.internal/",
        "http://ROUTER./",
    ],
)
def test_names_only_a_local_network_answers_are_private_networks(url: str) -> None:
    with pytest.raises(NavigationBlocked, match="is a private-network name"):
        guard().check(url)
    assert guard(allow_private_networks=True).check(url)
    assert guard(allow=[url.split("/")[2].split(":")[0].rstrip(".")]).check(url)


def test_public_names_and_local_development_names_are_not_private_networks() -> None:
    for url in ("https://example.com/", "http://localhost:3000/", "http://app.localhost:5173/"):
        assert guard().check(url)
