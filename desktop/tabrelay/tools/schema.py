"""Tool schemas every model vendor accepts, made from what pydantic generates.

Pydantic's JSON schema is correct but not portable: OpenAI's strict mode and Gemini's function
declarations take only a subset of JSON Schema (tests/unit/test_tool_schemas.py checks both,
with their sources). ``portable`` rewrites a parameter model's schema into that subset and
drops what costs every client tokens without telling the model anything (titles, null unions,
``default: null``). It never loosens validation: the model still validates every call, so a
bound the schema can no longer state exactly (``exclusiveMinimum``) is still enforced, with a
clear error. It does not decide what a tool takes; the parameter models do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Keywords that only name or explain a schema for people, or that some vendors refuse.
_DROPPED = frozenset({"title", "$defs", "definitions", "discriminator", "examples", "$schema"})
# Keywords whose value is a schema, or a list or map of schemas.
_SUBSCHEMA = frozenset({"items", "not", "additionalProperties", "contains"})
_SUBSCHEMAS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_NULL = {"type": "null"}
JSON_TEXT_NOTE = 'A JSON object as text, e.g. {"depth": 1}.'


@dataclass(frozen=True, slots=True)
class InputSchema:
    """A tool's portable input schema, and the arguments it advertises as JSON text."""

    schema: dict[str, Any]
    # Top-level arguments that take any JSON object. No vendor's subset can say "an object with
    # any keys" (OpenAI wants every object closed, Gemini every object's properties named), so
    # the schema says "a string holding a JSON object" and the endpoint decodes it.
    json_text: frozenset[str]


def portable(schema: dict[str, Any]) -> InputSchema:
    """A copy of a pydantic model's JSON schema that OpenAI's strict mode and Gemini accept.

    ``$ref``s are inlined; ``title``, ``default`` (folded into the description where it says
    something), ``null`` branches and ``default: null`` go; ``const`` becomes a one-value
    ``enum``, ``oneOf`` an ``anyOf`` (pydantic emits it only for disjoint branches); exclusive
    bounds are left to validation.
    """
    defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    shaped = _shape(schema, defs)
    json_text = set()
    for name, prop in shaped.get("properties", {}).items():
        if _free_object(prop):
            shaped["properties"][name] = _as_json_text(prop)
            json_text.add(name)
    return InputSchema(shaped, frozenset(json_text))


def decode_json_text(arguments: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    """``arguments`` with each of ``names`` given as JSON text decoded to its object.

    Text that is not a JSON object is left as it is, for the tool's own validation to refuse
    with its usual message.
    """
    decoded = dict(arguments)
    for name in names & decoded.keys():
        value = decoded[name]
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                decoded[name] = parsed
    return decoded


def _shape(node: Any, defs: dict[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    node = _resolve(node, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: _shape(sub, defs) for name, sub in value.items()}
        elif key in _SUBSCHEMA:
            out[key] = _shape(value, defs)
        elif key in _SUBSCHEMAS:
            out[key] = [_shape(sub, defs) for sub in value]
        else:
            out[key] = value
    return _simplify(out)


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The node with a ``$ref`` (or pydantic's one-item ``allOf`` around one) merged in."""
    while True:
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
        else:
            return node


def _simplify(node: dict[str, Any]) -> dict[str, Any]:
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if "anyOf" in node:
        branches = [b for b in node["anyOf"] if b != _NULL]
        if len(branches) == 1:
            del node["anyOf"]
            node = {**branches[0], **node}
        else:
            node["anyOf"] = branches
    if isinstance(node.get("type"), list):
        types = [t for t in node["type"] if t != "null"]
        node["type"] = types[0] if len(types) == 1 else types
    if "const" in node:
        node["enum"] = [node.pop("const")]
    # Gemini has no exclusive bounds, and an inclusive one would advertise a value the model
    # refuses: the schema says nothing and validation keeps the bound.
    node.pop("exclusiveMinimum", None)
    node.pop("exclusiveMaximum", None)
    if "default" in node:
        default = node.pop("default")
        said = _default_text(default)
        description = node.get("description", "")
        if said is not None and "default" not in description.lower():
            node["description"] = f"{description} Default: {said}.".strip()
    return node


def _default_text(value: Any) -> str | None:
    """How a description states a default, or None where leaving it out says the same."""
    if value is None or value is False or value == 0 or value in ("", [], {}):
        return None
    if value is True:
        return "true"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _free_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" and not node.get("properties")


def _as_json_text(node: dict[str, Any]) -> dict[str, Any]:
    description = f"{node.get('description', '')} {JSON_TEXT_NOTE}".strip()
    return {"type": "string", "description": description}
