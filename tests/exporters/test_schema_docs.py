"""The envelope's JSON Schema is valid, is the one shown in ``docs/ecp.md``, and the docs' example passes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from jsonschema import Draft202012Validator

from otel_agents.exporters.ecp import SCHEMA_PATH, envelope_schema

from .conftest import check

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ecp.md"


def json_blocks(text: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", text, flags=re.S)


def test_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(envelope_schema())
    assert SCHEMA_PATH.name == "ecp_envelope.schema.json"


def test_docs_show_the_schema_verbatim():
    blocks = json_blocks(DOCS.read_text(encoding="utf-8"))
    assert blocks[-1] == SCHEMA_PATH.read_text(encoding="utf-8")


def test_docs_example_is_a_valid_envelope():
    example = json.loads(json_blocks(DOCS.read_text(encoding="utf-8"))[0])
    check([example])
    assert isinstance(json.loads(example["logs"]), list)


def test_schema_rejects_what_ecp_rejects():
    validator = Draft202012Validator(envelope_schema())
    example = json.loads(json_blocks(DOCS.read_text(encoding="utf-8"))[0])
    for bad in ({"status": "failed"}, {"public_output": 3}, {"usage": {"input_tokens": -1}},
                {"tool_calls": [{"name": "", "arguments": {}}]},
                {"tool_calls": [{**example["tool_calls"][0], "arguments": "x"}]}):
        assert not validator.is_valid({**example, **bad}), bad
