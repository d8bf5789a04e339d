"""Redaction at the door: typed text is masked unless proven plain, whatever shape it has."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tabrelay.tools.redaction import mask, redact, redact_all

CANARY = "hunter2-canary"


def test_a_secret_shows_its_length_never_its_text() -> None:
    assert mask(CANARY) == f"[secret: {len(CANARY)} characters]"
    assert CANARY not in mask(CANARY)


def test_text_is_masked_unless_its_path_was_cleared() -> None:
    arguments = {"ref": "e3", "text": CANARY, "submit": True}
    assert redact(arguments, frozenset({"text"}), frozenset()) == {
        "ref": "e3",
        "text": mask(CANARY),
        "submit": True,
    }
    assert redact(arguments, frozenset({"text"}), frozenset({"text"})) == arguments


def test_form_fields_are_masked_one_by_one() -> None:
    fields = [
        {"ref": "e1", "value": "Ada"},
        {"ref": "e2", "value": CANARY},
        {"ref": "e3", "value": True},
        {"ref": "e4", "value": ["Cheese", "Basil"]},
    ]
    cleared = frozenset({"fields.0.value", "fields.3.value"})
    shown = redact({"fields": fields}, frozenset({"value"}), cleared)["fields"]
    assert shown[0]["value"] == "Ada"
    assert shown[1]["value"] == mask(CANARY)
    assert shown[2]["value"] is True  # a checkbox state is no secret
    assert shown[3]["value"] == ["Cheese", "Basil"]


def test_arguments_of_an_unexpected_shape_stay_masked() -> None:
    odd = {"fields": [{"value": {"nested": [CANARY]}}], "text": [CANARY, {"x": CANARY}]}
    shown = redact(odd, frozenset({"value", "text"}), frozenset())
    assert CANARY not in repr(shown)


def test_redacting_leaves_the_arguments_themselves_alone() -> None:
    arguments = {"text": CANARY}
    redact(arguments, frozenset({"text"}), frozenset())
    assert arguments == {"text": CANARY}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(["text", "value", "ref", "fields"]), json_values))
def test_no_string_under_a_secret_name_survives_redaction(arguments: dict[str, Any]) -> None:
    shown = redact(arguments, frozenset({"text", "value"}), frozenset())

    def strings_under_secret_names(value: Any, secret: bool) -> list[str]:
        if isinstance(value, dict):
            return [
                s
                for k, v in value.items()
                for s in strings_under_secret_names(v, secret or k in ("text", "value"))
            ]
        if isinstance(value, list):
            return [s for v in value for s in strings_under_secret_names(v, secret)]
        return [value] if secret and isinstance(value, str) else []

    for text in strings_under_secret_names(shown, False):
        assert text.startswith("[secret: ")


def test_numbers_under_a_secret_name_are_masked_too() -> None:
    shown = redact({"text": 482913, "submit": True}, frozenset({"text"}), frozenset())
    assert shown == {"text": mask("482913"), "submit": True}


def test_arguments_a_tool_does_not_take_are_masked_whole() -> None:
    misspelt = {"ref": "e3", "value": CANARY, "Text": [CANARY, 77], "slowly": True}
    assert redact_all(misspelt) == {
        "ref": mask("e3"),
        "value": mask(CANARY),
        "Text": [mask(CANARY), mask("77")],
        "slowly": True,
    }
