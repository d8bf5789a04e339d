"""Text the page shows the person is scrubbed of the call's secrets, the same ones ``redact``
masks in the arguments (tools/redaction.py)."""

from __future__ import annotations

from tabrelay.tools.redaction import mask, redact, scrub, secret_values

CANARY = "hunter2-canary"


def test_the_secrets_are_exactly_what_redact_masks() -> None:
    arguments = {
        "fields": [
            {"ref": "e1", "value": "Ada"},
            {"ref": "e2", "value": CANARY},
            {"ref": "e3", "value": 4242},
            {"ref": "e4", "value": True},
        ],
        "text": "not a name that may hold a secret here",
    }
    names, cleared = frozenset({"value"}), frozenset({"fields.0.value"})
    found = secret_values(arguments, names, cleared)
    assert found == {CANARY, "4242"}
    shown = repr(redact(arguments, names, cleared))
    assert all(secret not in shown for secret in found)


def test_every_echo_of_a_secret_is_masked_and_tiny_ones_are_left() -> None:
    text = f"Hint: {CANARY} (again {CANARY}); ok"
    assert scrub(text, frozenset({CANARY, "ok"})) == (
        f"Hint: {mask(CANARY)} (again {mask(CANARY)}); ok"
    )
    assert scrub("nothing here", frozenset({CANARY})) == "nothing here"


def test_a_secret_inside_another_is_masked_whole() -> None:
    assert CANARY not in scrub(f"[{CANARY}]", frozenset({CANARY, "hunter2"}))
