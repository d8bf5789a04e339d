"""Every tool's schemas are portable: JSON Schema 2020-12, OpenAI's strict mode, Gemini.

The checks run over the whole catalog (the expert tool too), so a tool added later is held to
them without anyone listing it here. The checkers (tests/support/schema_rules.py, with the
vendors' documented rules) are shown to refuse what pydantic emits unshaped, so they can fail.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from support.schema_rules import (
    gemini_problems,
    house_problems,
    name_problems,
    nodes,
    openai_problems,
    strictified,
)
from tabrelay.endpoint.server import tool_schema
from tabrelay.tools.catalog import BY_NAME, TOOLS, ToolSpec
from tabrelay.tools.groups.forms import FillFormParams, FormField
from tabrelay.tools.groups.navigation import NavigateParams
from tabrelay.tools.groups.recipes import MAX_NAME_GIVEN, RunRecipeParams
from tabrelay.tools.schema import decode_json_text, portable

# Arguments each tool accepts: the smallest valid call. A tool added to the catalog needs one.
VALID: dict[str, dict[str, Any]] = {
    "browser_status": {},
    "browser_list_tabs": {},
    "browser_new_tab": {},
    "browser_close_tab": {"tab_id": 1},
    "browser_activate_tab": {"tab_id": 1},
    "browser_navigate": {"url": "https://example.com/"},
    "browser_wait_for": {"text": "Done"},
    "browser_snapshot": {},
    "browser_find": {"text": "Sign in"},
    "browser_get_content": {},
    "browser_screenshot": {},
    "browser_click": {"ref": "e1"},
    "browser_type": {"ref": "e1", "text": "hello"},
    "browser_fill_form": {"fields": [{"ref": "e1", "value": "hello"}]},
    "browser_select_option": {"ref": "e1", "values": ["red"]},
    "browser_hover": {"ref": "e1"},
    "browser_press_key": {"key": "Enter"},
    "browser_scroll": {"direction": "down"},
    "browser_drag": {"source_ref": "e1", "target_ref": "e2"},
    "browser_page_tool": {"name": "search"},
    "browser_upload_file": {"ref": "e1", "paths": ["/tmp/report.pdf"]},
    "browser_handle_dialog": {"accept": True},
    "browser_handoff": {"reason": "sign in"},
    "browser_request_access": {"purpose": "order tea", "sites": ["https://shop.example"]},
    "browser_list_recipes": {},
    "browser_run_recipe": {"name": "order tea"},
    "browser_console_messages": {},
    "browser_network_requests": {},
    "browser_evaluate": {"expression": "document.title"},
    "browser_cdp": {"method": "Page.reload"},
}

by_name = pytest.mark.parametrize("spec", TOOLS, ids=lambda spec: spec.name)


def listed_input(spec: ToolSpec) -> dict[str, Any]:
    return tool_schema(spec).schema


@by_name
def test_input_schemas_are_json_schema_2020_12_and_self_contained(spec: ToolSpec) -> None:
    schema = listed_input(spec)
    Draft202012Validator.check_schema(schema)
    assert house_problems(schema) == []
    assert name_problems(spec.name) == []


@by_name
def test_input_schemas_take_only_what_openai_strict_mode_accepts(spec: ToolSpec) -> None:
    schema = listed_input(spec)
    assert openai_problems(schema) == []
    # As a client puts it under strict mode: every property required, optional ones nullable.
    assert openai_problems(strictified(schema), complete=True) == []


@by_name
def test_input_schemas_take_only_what_gemini_function_declarations_accept(
    spec: ToolSpec,
) -> None:
    assert gemini_problems(listed_input(spec)) == []


@by_name
def test_output_schemas_are_portable_objects(spec: ToolSpec) -> None:
    if spec.output is None:
        return
    Draft202012Validator.check_schema(spec.output)
    assert spec.output["type"] == "object"  # MCP: an outputSchema describes an object
    assert house_problems(spec.output) == []
    assert openai_problems(spec.output, output=True) == []
    assert gemini_problems(spec.output) == []


@by_name
def test_the_smallest_valid_call_passes_both_the_schema_and_the_tool(spec: ToolSpec) -> None:
    assert spec.name in VALID, f"add the smallest valid call of {spec.name} to VALID"
    arguments = VALID[spec.name]
    Draft202012Validator(listed_input(spec)).validate(
        {k: v for k, v in arguments.items() if k not in tool_schema(spec).json_text}
    )
    spec.params.model_validate(arguments)


def with_nulls(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with null for every property it leaves out, at every depth."""
    properties = schema.get("properties") or {}
    if isinstance(value, dict) and properties:
        given = {k: with_nulls(properties.get(k, {}), v) for k, v in value.items()}
        return {**{name: None for name in properties if name not in value}, **given}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_nulls(schema["items"], item) for item in value]
    return value


@by_name
def test_null_for_an_optional_argument_means_it_was_not_given(spec: ToolSpec) -> None:
    """What a strict-mode client sends for each argument the model leaves out."""
    arguments = VALID[spec.name]
    schema = listed_input(spec)
    nulls = with_nulls(schema, arguments)
    assert nulls != arguments or set(schema["properties"]) == set(arguments)
    Draft202012Validator(strictified(schema)).validate(nulls)
    assert spec.params.model_validate(nulls) == spec.params.model_validate(arguments)


@by_name
def test_a_required_argument_given_as_null_is_refused_and_named(spec: ToolSpec) -> None:
    for name in listed_input(spec).get("required", []):
        with pytest.raises(ValidationError) as refused:
            spec.params.model_validate({**VALID[spec.name], name: None})
        assert [e["loc"][0] for e in refused.value.errors()] == [name]


def test_the_checkers_refuse_what_pydantic_emits_unshaped() -> None:
    navigate = NavigateParams.model_json_schema()  # titles, null unions, defaults, bounds
    form = FillFormParams.model_json_schema()  # $defs and $ref
    assert any("'title'" in p for p in house_problems(navigate))
    assert any("allows null" in p for p in house_problems(navigate))
    assert any("'$ref'" in p for p in house_problems(form))
    assert any("'default' is not supported" in p for p in openai_problems(navigate))
    assert any("'exclusiveMinimum' is not a Schema field" in p for p in gemini_problems(navigate))
    assert any("'$ref' is not a Schema field" in p for p in gemini_problems(form))
    assert any("type 'null'" in p for p in gemini_problems(navigate))  # a null branch
    free = {"type": "object", "properties": {"params": {"type": "object"}}}
    assert any("additionalProperties is not false" in p for p in openai_problems(free))
    assert any("without properties" in p for p in gemini_problems(free))
    assert openai_problems({"anyOf": [{"type": "object"}]}) != []
    assert gemini_problems({"type": ["string", "null"]}) != []
    assert openai_problems(strictified(portable(navigate).schema)) == []
    assert openai_problems(portable(navigate).schema, complete=True) != []  # optional ones
    assert name_problems("browser tabs") != [] and name_problems("9tabs") != []


def test_portable_inlines_references_and_drops_null_titles_and_defaults() -> None:
    shaped = portable(FillFormParams.model_json_schema()).schema
    field = shaped["properties"]["fields"]["items"]
    assert field["type"] == "object" and field["required"] == ["value"]
    assert field["properties"]["ref"] == {
        "type": "string",
        "description": FormField.model_fields["ref"].description,
    }
    assert all("title" not in node and "default" not in node for _, node in nodes(shaped))


def test_defaults_that_say_something_move_into_the_description() -> None:
    shaped = portable(NavigateParams.model_json_schema()).schema["properties"]
    assert shaped["wait_until"]["description"].endswith(" Default: load.")
    assert shaped["timeout"]["description"].endswith(" Default: 30.")
    assert "minimum" not in shaped["timeout"]  # exclusive bounds stay with validation
    with pytest.raises(ValidationError, match="greater than 0"):
        NavigateParams.model_validate({"url": "https://example.com/", "timeout": 0})
    assert "Default" not in shaped["url"].get("description", "")  # None says nothing


def test_a_free_form_object_argument_is_advertised_as_json_text_and_decoded() -> None:
    raw = {
        "type": "object",
        "properties": {"params": {"type": "object", "additionalProperties": True}},
        "additionalProperties": False,
    }
    shaped = portable(raw)
    assert shaped.json_text == {"params"}
    assert shaped.schema["properties"]["params"]["type"] == "string"
    assert decode_json_text({"params": '{"depth": 1}'}, shaped.json_text) == {
        "params": {"depth": 1}
    }
    # An object passes as it came; text that is no JSON object is left for validation.
    assert decode_json_text({"params": {"a": 1}}, shaped.json_text) == {"params": {"a": 1}}
    assert decode_json_text({"params": "[1]"}, shaped.json_text) == {"params": "[1]"}
    assert decode_json_text({"params": "{"}, shaped.json_text) == {"params": "{"}


def test_a_recipe_name_too_long_is_refused_by_validation_not_the_schema() -> None:
    """The schema cannot bound it (strict mode has no maxLength); validation does, saying so."""
    assert "maxLength" not in json.dumps(tool_schema(BY_NAME["browser_run_recipe"]).schema)
    RunRecipeParams(name="n" * MAX_NAME_GIVEN)
    with pytest.raises(ValidationError, match=f"at most {MAX_NAME_GIVEN}") as refused:
        RunRecipeParams(name="n" * (MAX_NAME_GIVEN + 1))
    assert [e["loc"] for e in refused.value.errors()] == [("name",)]
