"""What a refused MCP request is told (DESIGN §4.6): missing, malformed or not valid, and nothing
about which clients exist. Over real HTTP against the running endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from support.harness import RelayHarness, running_core
from support.http import raw_request
from support.mcp import INITIALIZE, JSON_HEADERS
from tabrelay.config.paths import Paths

MISSING = "no token was sent"
INVALID = "the token is not valid (revoked or mistyped)"
MALFORMED = "malformed Authorization header"


@pytest.fixture
async def app(home: Paths) -> AsyncIterator[RelayHarness]:
    async with running_core(home) as harness:
        yield harness


def said(body: bytes, challenge: str) -> str:
    """The reason a 401 gives, checked to be the same in the body and the header."""
    reply = json.loads(body)
    assert reply["error"] in {"invalid_token", "invalid_request"}
    assert challenge.startswith('Bearer realm="tabrelay"')
    assert f'error="{reply["error"]}"' in challenge
    assert f'error_description="{reply["error_description"]}"' in challenge
    return str(reply["error_description"])


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, MISSING),
        ("", MISSING),
        ("Bearer", MISSING),
        ("Bearer    ", MISSING),
        ("Bearer nope", INVALID),
        ("bearer " + "x" * 43, INVALID),
        ("Basic dXNlcjpwYXNz", MALFORMED),
        ("Bearer a b c", MALFORMED),
        ("Bearer " + "ü".encode().decode("latin-1") * 43, MALFORMED),
        ("Bearernope", MALFORMED),
        ("nope", MALFORMED),
    ],
)
async def test_a_refusal_says_whether_the_token_was_missing_malformed_or_not_valid(
    app: RelayHarness, authorization: str | None, reason: str
) -> None:
    token = await app.add_client("cursor")
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await raw_request(app.mcp_port, "/mcp", method="POST", headers=headers)
    assert response.status == 401
    assert response.headers["content-type"] == "application/json"
    assert said(response.body, response.headers["www-authenticate"]) == reason
    assert b"cursor" not in response.body and token.encode() not in response.body


async def test_a_raw_client_token_without_its_scheme_is_malformed_not_valid(
    app: RelayHarness,
) -> None:
    token = await app.add_client("cursor")
    for value in (token, f"Basic {token}"):
        response = await raw_request(
            app.mcp_port, "/mcp", method="POST", headers={"Authorization": value}
        )
        assert response.status == 401
        assert said(response.body, response.headers["www-authenticate"]) == MALFORMED
        assert token.encode() not in response.body


async def test_two_authorization_headers_are_malformed_even_if_one_is_valid(
    app: RelayHarness,
) -> None:
    token = await app.add_client("cursor")
    async with httpx2.AsyncClient() as http:
        for pair in (["wrong", token], [token, "wrong"], [token, token]):
            reply = await http.post(
                f"{app.base_mcp()}/mcp",
                json=INITIALIZE,
                headers=[
                    *(("Authorization", f"Bearer {value}") for value in pair),
                    ("Content-Type", "application/json"),
                ],
            )
            assert reply.status_code == 401
            assert said(reply.content, reply.headers["www-authenticate"]) == MALFORMED


async def test_a_revoked_token_and_one_that_never_existed_get_the_same_answer(
    app: RelayHarness,
) -> None:
    """Nothing tells a guesser which names or tokens exist or existed."""
    revoked = await app.add_client("cursor")
    await app.add_client("claude")
    await asyncio.to_thread(app.core.clients.revoke, "cursor")
    async with asyncio.timeout(2):
        while "cursor" in app.core.client_tokens():
            await asyncio.sleep(0.01)
    answers = []
    async with httpx2.AsyncClient() as http:
        for token in (revoked, "x" * len(revoked), app.token):  # the relay token is no client's
            reply = await http.post(
                f"{app.base_mcp()}/mcp",
                json=INITIALIZE,
                headers={**JSON_HEADERS, "Authorization": f"Bearer {token}"},
            )
            assert reply.status_code == 401
            answers.append((reply.content, reply.headers["www-authenticate"]))
    assert answers[0] == answers[1] == answers[2]
    assert said(*answers[0]) == INVALID
    assert b"cursor" not in answers[0][0] and b"claude" not in answers[0][0]


@pytest.mark.parametrize("authorization", [None, "Basic dXNlcjpwYXNz", "Bearer guess"])
async def test_each_kind_of_refusal_is_still_rate_limited_per_offender(
    app: RelayHarness, authorization: str | None
) -> None:
    token = await app.add_client()
    headers = {} if authorization is None else {"Authorization": authorization}
    async with httpx2.AsyncClient() as http:
        url = f"{app.base_mcp()}/mcp"
        replies = [
            await http.post(url, json=INITIALIZE, headers={**JSON_HEADERS, **headers})
            for _ in range(21)
        ]
        assert [r.status_code for r in replies] == [401] * 20 + [429]
        valid = {**JSON_HEADERS, "Authorization": f"Bearer {token}"}
        assert (await http.post(url, json=INITIALIZE, headers=valid)).status_code == 200
