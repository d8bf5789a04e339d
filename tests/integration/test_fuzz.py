"""Property-based fuzzing of the app's edges, over real sockets (issue 8, THREATS C1, R10, M7).

- the config endpoint: any path and headers; a paired browser's credential is never sent, a new
  one only to an exact request inside a pairing window, and nothing answers 500;
- MCP tool arguments: any JSON for any tool; every call ends as a result (success or a clear
  ``isError``), never a protocol error, a crash or a hang, and the app keeps answering.

Coverage-guided fuzzing (atheris) was considered and left out: the parsers are thin Python
over ``json`` and pydantic, which these structured strategies reach directly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.fake_extension import EXTENSION_ID
from support.harness import RelayHarness, ScriptedApprover
from support.http import raw_request
from support.mcp import mcp_client, text_of
from support.net import json_values
from support.scale import examples
from support.threaded import CoreThread
from tabrelay.config.settings import PolicyRule
from tabrelay.tools.catalog import TOOLS

PAIRED = f"chrome-extension://{EXTENSION_ID}"
SLOW = settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


async def _prepare(relay: RelayHarness) -> dict[str, Any]:
    await asyncio.to_thread(
        relay.core.settings_store.update,
        lambda s: s.policy_rules.append(PolicyRule(tool="*", decision="allow")),
    )
    await relay.extension()
    await relay.browser_count(1)
    return {"token": await relay.add_client("fuzzer")}


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CoreThread]:
    # The person denies every pairing request the fuzzer's strange extensions raise.
    refuse = ScriptedApprover(answer=False)
    with CoreThread(tmp_path_factory.mktemp("fuzz"), ready=_prepare, approver=refuse) as runner:
        yield runner


origins = st.one_of(
    st.just(PAIRED),
    st.just(PAIRED + "/"),
    st.just(PAIRED.upper()),
    st.just("chrome-extension://" + "b" * 32),
    st.sampled_from(["https://evil.example", "null", "http://127.0.0.1", ""]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
)
header_values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@SLOW
@given(
    path=st.sampled_from(
        [
            "/api/browser-relay/config",
            "/api/browser-relay/config?x=1",
            "/api/browser-relay/config?code=ABCDEF",  # not the request the window is for
            "/healthz",
            "/",
            "/api/browser-relay/config/..",
            "/ws/browser-relay",
            "/%2e%2e/etc",
        ]
    ),
    origin=origins,
    fetch_mode=st.sampled_from([None, "cors", "navigate", "no-cors", "websocket"]),
    fetch_dest=st.sampled_from([None, "empty", "document", "iframe"]),
    host=st.sampled_from(["good", "localhost", "evil", "none"]),
    extra=st.dictionaries(
        st.sampled_from(["X-Forwarded-For", "Referer", "Cookie", "Authorization", "Origin"]),
        header_values,
        max_size=2,
    ),
)
def test_no_request_gets_a_credential_unless_exact_and_inside_a_pairing_window(
    core: CoreThread,
    path: str,
    origin: str,
    fetch_mode: str | None,
    fetch_dest: str | None,
    host: str,
    extra: dict[str, str],
) -> None:
    relay = core.harness
    headers = dict(extra)
    if origin:
        headers["Origin"] = origin
    if fetch_mode:
        headers["Sec-Fetch-Mode"] = fetch_mode
    if fetch_dest:
        headers["Sec-Fetch-Dest"] = fetch_dest
    host_header = {
        "good": f"127.0.0.1:{relay.port}",
        "localhost": f"localhost:{relay.port}",
        "evil": f"evil.example:{relay.port}",
        "none": f"127.0.0.1:{relay.port + 1}",
    }[host]

    async def open_window() -> None:  # every time: the person has just allowed a pairing
        relay.core.pairing.open_window(EXTENSION_ID)

    core.call(open_window())
    paired = relay.token
    response = asyncio.run(raw_request(relay.port, path, headers=headers, host=host_header))
    assert response.status < 500
    assert paired.encode() not in response.body, "a paired browser's credential leaked"
    issued = response.status == 200 and b'"token"' in response.body
    exact = (
        path.startswith("/api/browser-relay/config")
        and not path.startswith("/api/browser-relay/config/")
        and "code=" not in path
        and headers.get("Origin") == PAIRED
        and host in ("good", "localhost")
        and fetch_mode != "navigate"
        and fetch_dest not in ("document", "iframe")
    )
    assert issued == exact, (response.status, headers)
    if not exact:
        assert "access-control-allow-origin" not in response.headers


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    spec = draw(st.sampled_from([t for t in TOOLS if t.name != "browser_wait_for"]))
    known = list(spec.params.model_json_schema().get("properties", {}))
    keys = (
        draw(st.lists(st.sampled_from(known) | st.text(max_size=10), max_size=4, unique=True))
        if known
        else []
    )
    arguments = {key: draw(json_values) for key in keys}
    if "tab_id" in arguments and draw(st.booleans()):
        arguments["tab_id"] = draw(st.sampled_from([1, 2, 999]))
    return spec.name, arguments


@SLOW
@given(call=tool_calls())
def test_any_tool_arguments_end_as_a_result_never_a_crash(
    core: CoreThread, call: tuple[str, dict[str, Any]]
) -> None:
    tool, arguments = call
    relay = core.harness
    token = core.extra["token"]

    async def scenario() -> tuple[Any, Any]:
        async with mcp_client(relay.base_mcp(), token) as client:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), 20)
            status = await client.call_tool("browser_status", {})
        return result, status

    result, status = asyncio.run(scenario())
    text = text_of(result)
    if result.is_error:
        assert text, (tool, arguments)
        assert "Traceback" not in text and "Error executing tool" not in text, text
    assert not status.is_error
    assert json.dumps(arguments) is not None  # the arguments were JSON all along
