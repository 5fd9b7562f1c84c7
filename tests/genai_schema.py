"""JSON Schemas for the OTel GenAI message attributes, written from the constraints of semconv v1.41.0
(``docs/gen-ai/gen-ai-{input,output}-messages.json``, ``gen-ai-system-instructions.json``,
``gen-ai-tool-definitions.json``): the required fields and types of each part, message and tool definition.

Stricter than the published files in one way, on purpose: there, every part also matches ``GenericPart``
(any object with a string ``type``), so a malformed ``text`` part still validates. Here a part whose ``type``
is one of the defined ones must satisfy that part's definition (an ``if``/``then`` per type).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

_STR_OR_NULL = {"type": ["string", "null"]}
_MODALITY = {"type": "string"}  # the enum image/video/audio, or any other string


def _part(type_: str, required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {"if": {"properties": {"type": {"const": type_}}, "required": ["type"]},
            "then": {"type": "object", "required": ["type", *required], "properties": properties}}


PART = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"type": "string"}},
    "allOf": [
        _part("text", ["content"], {"content": {"type": "string"}}),
        _part("reasoning", ["content"], {"content": {"type": "string"}}),
        _part("tool_call", ["name"], {"id": _STR_OR_NULL, "name": {"type": "string"}}),
        _part("tool_call_response", ["response"], {"id": _STR_OR_NULL}),
        _part("blob", ["modality", "content"],
              {"mime_type": _STR_OR_NULL, "modality": _MODALITY, "content": {"type": "string"}}),
        _part("uri", ["modality", "uri"], {"mime_type": _STR_OR_NULL, "modality": _MODALITY, "uri": {"type": "string"}}),
        _part("file", ["modality", "file_id"],
              {"mime_type": _STR_OR_NULL, "modality": _MODALITY, "file_id": {"type": "string"}}),
    ],
}

INPUT_MESSAGES = {
    "type": "array",
    "items": {"type": "object", "required": ["role", "parts"],
              "properties": {"role": {"type": "string"}, "parts": {"type": "array", "items": PART},
                             "name": _STR_OR_NULL}},
}

OUTPUT_MESSAGES = {
    "type": "array",
    "items": {"type": "object", "required": ["role", "parts", "finish_reason"],
              "properties": {"role": {"type": "string"}, "parts": {"type": "array", "items": PART},
                             "name": _STR_OR_NULL,
                             # stop, length, content_filter, tool_call, error — or a provider's own word
                             "finish_reason": {"type": "string"}}},
}

SYSTEM_INSTRUCTIONS = {"type": "array", "items": PART}

TOOL_DEFINITIONS = {
    "type": "array",
    "items": {"type": "object", "required": ["type", "name"],
              "properties": {"type": {"type": "string"}, "name": {"type": "string"},
                             "description": _STR_OR_NULL, "parameters": {"type": ["object", "null"]}}},
}

SCHEMAS = {
    "gen_ai.input.messages": INPUT_MESSAGES,
    "gen_ai.output.messages": OUTPUT_MESSAGES,
    "gen_ai.system_instructions": SYSTEM_INSTRUCTIONS,
    "gen_ai.tool.definitions": TOOL_DEFINITIONS,
}


def validate_genai_json(attributes: dict[str, Any]) -> dict[str, Any]:
    """Parse and validate every GenAI message/tool JSON attribute present; returns them parsed.

    Raises ``jsonschema.ValidationError`` (or ``json.JSONDecodeError``) naming the attribute's problem.
    """
    parsed = {}
    for key, schema in SCHEMAS.items():
        if key in attributes:
            value = json.loads(attributes[key])
            jsonschema.validate(value, schema)
            parsed[key] = value
    return parsed


def json_attribute(attributes: dict[str, Any], key: str) -> Any:
    """The JSON-encoded attribute ``key``, decoded (``KeyError`` when the span lacks it)."""
    return json.loads(attributes[key])


def openinference_under(attributes: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The OpenInference flattened attributes under ``prefix`` (e.g. ``llm.output_messages.0``), with the
    prefix and its dot removed from the keys."""
    return {k[len(prefix) + 1:]: v for k, v in attributes.items() if k.startswith(prefix + ".")}
