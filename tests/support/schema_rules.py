"""What OpenAI's strict mode and Gemini's function declarations accept in a tool's schema.

Written from their documentation; each checker returns the problems it finds, one sentence
each with the JSON path, so a failing test says what to change. Where the documentation and the
APIs disagree, the stricter reading wins.

OpenAI, Structured Outputs / function calling with ``strict: true``
(https://platform.openai.com/docs/guides/structured-outputs#supported-schemas; the same list
as a profile: https://jsonschemaprofiles.unitvectorylabs.com/schemas/openai):
- types string, number, boolean, integer, object, array, and enum and anyOf (not at the root);
- string: pattern, format (date-time, time, date, duration, email, hostname, ipv4, ipv6,
  uuid); number: multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum; array:
  minItems, maxItems; objects: properties, required, additionalProperties; $defs and $ref;
- the root is an object; every object sets ``additionalProperties: false``; every property is
  required, an optional one is a union with null (clients that put MCP tools under strict mode
  do that rewrite: ``strictified`` below);
- unsupported: allOf, not, dependentRequired, dependentSchemas, if/then/else, and ``default``
  ("'default' is not permitted": dotnet/extensions#6196, 567-labs/instructor#1074);
- at most 5 levels of nesting and 100 properties (the older, smaller limits);
- function names match ``^[a-zA-Z0-9_-]{1,64}$``.

Gemini, ``FunctionDeclaration`` (https://ai.google.dev/api/caching#FunctionDeclaration) and its
``Schema`` (https://ai.google.dev/api/caching#Schema, "a select subset of an OpenAPI 3.0 schema
object"; Vertex AI: https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/Schema):
- fields type, format, title, description, nullable, enum, maxItems, minItems, properties,
  required, minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf,
  propertyOrdering, default, items, minimum, maximum; ``additionalProperties`` only as
  ``false`` (Vertex AI's Schema has it, and ``parametersJsonSchema``'s documented example sets
  it); no $ref/$defs, no exclusive bounds, no const, oneOf or allOf;
- ``type`` is one type name, never a list, and null is ``nullable: true``, not a type;
  ``enum`` is a list of strings on a string; format is "enum" or "date-time" for strings,
  "float"/"double", "int32"/"int64" for numbers;
- an OBJECT below the root names its properties (the API answers "properties: should be
  non-empty for OBJECT type" otherwise);
- function names start with a letter or underscore, then letters, digits, ``_ . -``, at most
  64; parameter names letters, digits and underscores, at most 64.
"""

from __future__ import annotations

import copy
import re
from typing import Any

OPENAI_KEYWORDS = frozenset(
    {
        "type", "description", "enum", "const", "anyOf", "properties", "required",
        "additionalProperties", "items", "$defs", "$ref", "pattern", "format", "multipleOf",
        "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
    }
)  # fmt: skip
OPENAI_TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
OPENAI_MAX_DEPTH = 5
OPENAI_MAX_PROPERTIES = 100
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

GEMINI_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
        "maximum", "additionalProperties",
    }
)  # fmt: skip
GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
GEMINI_FORMATS = {
    "string": {"enum", "date-time"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")
GEMINI_PARAMETER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")


def nodes(schema: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node under ``schema`` (itself first), with its JSON path."""
    if not isinstance(schema, dict):
        return []
    found = [(path, schema)]
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            found += nodes(sub, f"{path}.{key}.{name}")
    for key in ("items", "additionalProperties", "not", "contains"):
        if isinstance(schema.get(key), dict):
            found += nodes(schema[key], f"{path}.{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            found += nodes(sub, f"{path}.{key}[{i}]")
    return found


def _depth(schema: dict[str, Any]) -> int:
    """Levels of nested objects (the root object is level 1)."""
    below = [
        _depth(sub)
        for key in ("properties",)
        for sub in (schema.get(key) or {}).values()
        if isinstance(sub, dict)
    ]
    below += [_depth(schema["items"])] if isinstance(schema.get("items"), dict) else []
    below += [_depth(sub) for sub in schema.get("anyOf") or [] if isinstance(sub, dict)]
    own = 1 if schema.get("type") == "object" else 0
    return own + max(below, default=0)


def house_problems(schema: dict[str, Any]) -> list[str]:
    """Tabrelay's own rules: self-contained, no null unions, no titles, no defaults."""
    problems = []
    for path, node in nodes(schema):
        for key in ("$ref", "$defs", "definitions", "title", "default", "nullable"):
            if key in node:
                problems.append(f"{path}: has {key!r}")
        kinds = node.get("type")
        if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
            problems.append(f"{path}: allows null")
    return problems


def openai_problems(
    schema: dict[str, Any], *, complete: bool = False, output: bool = False
) -> list[str]:
    """What OpenAI's strict mode refuses in ``schema``.

    ``complete``: also require every property to be listed in ``required`` (a schema after
    ``strictified``). ``output``: a tool's outputSchema, which no model is held to: its objects
    may stay open.
    """
    problems = []
    if schema.get("type") != "object":
        problems.append("$: the root is not an object")
    if "anyOf" in schema:
        problems.append("$: the root is an anyOf")
    properties = 0
    for path, node in nodes(schema):
        for key in node.keys() - OPENAI_KEYWORDS:
            problems.append(f"{path}: {key!r} is not supported in strict mode")
        kinds = node.get("type", [])
        for kind in kinds if isinstance(kinds, list) else [kinds]:
            if kind not in OPENAI_TYPES:
                problems.append(f"{path}: type {kind!r} is not supported")
        if "type" not in node and "anyOf" not in node and "$ref" not in node and "enum" not in node:
            problems.append(f"{path}: no type")
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            problems.append(f"{path}: format {node['format']!r} is not supported")
        if node.get("type") == "object" or "properties" in node:
            names = list(node.get("properties") or {})
            properties += len(names)
            if not output and node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties is not false")
            if complete and set(node.get("required", [])) != set(names):
                problems.append(f"{path}: not every property is required")
    if properties > OPENAI_MAX_PROPERTIES:
        problems.append(f"$: {properties} properties, more than {OPENAI_MAX_PROPERTIES}")
    if _depth(schema) > OPENAI_MAX_DEPTH:
        problems.append(f"$: objects nested deeper than {OPENAI_MAX_DEPTH} levels")
    return problems


def gemini_problems(schema: dict[str, Any]) -> list[str]:
    """What a Gemini function declaration's ``Schema`` refuses or mangles in ``schema``."""
    problems = []
    for path, node in nodes(schema):
        for key in node.keys() - GEMINI_KEYWORDS:
            problems.append(f"{path}: {key!r} is not a Schema field")
        kind = node.get("type")
        if isinstance(kind, list):
            problems.append(f"{path}: type is a list {kind!r}, not one type")
        elif kind is None and "anyOf" not in node:
            problems.append(f"{path}: no type")
        elif kind is not None and kind not in GEMINI_TYPES:
            problems.append(f"{path}: type {kind!r} is not supported")
        if "additionalProperties" in node and node["additionalProperties"] is not False:
            problems.append(f"{path}: additionalProperties other than false")
        if "enum" in node and (
            kind != "string" or not all(isinstance(v, str) for v in node["enum"])
        ):
            problems.append(f"{path}: enum of other than strings")
        if "format" in node and node["format"] not in GEMINI_FORMATS.get(str(kind), set()):
            problems.append(f"{path}: format {node['format']!r} on {kind!r}")
        if kind == "object" and path != "$" and not node.get("properties"):
            problems.append(f"{path}: an object below the root without properties")
        for name in node.get("properties") or {}:
            if not GEMINI_PARAMETER.fullmatch(name):
                problems.append(f"{path}: property name {name!r}")
    return problems


def name_problems(name: str) -> list[str]:
    problems = []
    if not OPENAI_NAME.fullmatch(name):
        problems.append(f"{name!r} is not a valid OpenAI function name")
    if not GEMINI_NAME.fullmatch(name):
        problems.append(f"{name!r} is not a valid Gemini function name")
    return problems


def strictified(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as a client puts it under OpenAI's strict mode: every property required, the
    ones that were optional as a union with null (the rewrite OpenAI documents)."""
    schema = copy.deepcopy(schema)
    for _, node in nodes(schema):
        properties = node.get("properties")
        if not properties:
            continue
        required = set(node.get("required", []))
        for name, prop in properties.items():
            if name not in required:
                properties[name] = {"anyOf": [prop, {"type": "null"}]}
        node["required"] = list(properties)
    return schema
