"""Secrets inside JSON *text* kept as text (a model's tool-call arguments as it sent them, a tool's arguments
recorded as ``input.value``): the key rule reads members (``"password": …``) and the strings that are member
values, but a string that is an array element (``{"argv": ["psql", "password=…"]}``) is never read by the
assignment, repr or header rules, so its secret is written as it came. The same arguments given as data, or
decoded (``gen_ai.tool.call.arguments``), are redacted: the attributes of one value disagree."""

from __future__ import annotations

import json

import pytest

from otel_agents._spans import ChatMessage, Settings, Telemetry
from otel_agents._spans.messages import ToolCallPart
from otel_agents._spans.redaction import redact_text
from otel_agents.semconv import attributes as A

SECRET = "hunter2hunter2XYZ"
ARGV = {"argv": ["psql", "postgres://db.internal/orders", f"password={SECRET}"]}
_ARRAY_STRINGS = ("a string that is a JSON array element in JSON text is not read by the assignment/repr/header "
                  "rules (only member values are): its secret is kept")


def test_the_same_secret_as_data_or_as_a_member_value_is_redacted() -> None:
    """What holds today, and the contrast for the xfail below."""
    assert SECRET not in redact_text(json.dumps({"note": f"password={SECRET}"}))
    assert SECRET not in redact_text(f"password={SECRET}")


@pytest.mark.parametrize("text", [
    json.dumps(ARGV),
    json.dumps(["ok", f"{{'token': '{SECRET}'}}"]),
    json.dumps({"headers": ["Accept: */*", f"x-api-key: {SECRET}"]}),
], ids=["assignment", "repr", "header"])
def test_a_secret_in_a_json_array_element_is_redacted(text: str) -> None:
    assert SECRET not in redact_text(text)


def test_tool_call_arguments_sent_as_json_text_keep_no_secret(provider, exporter) -> None:
    t = Telemetry(provider, settings=Settings(capture_content=True), framework="test")
    model = t.start_span("model", "m", operation="chat")
    model.set_messages(input=[ChatMessage("user", "connect to the orders database")],
                       output=[ChatMessage("assistant", None, tool_calls=[ToolCallPart("run", json.dumps(ARGV), "c1")],
                                           finish_reason="tool_calls")])
    model.end()
    tool = t.start_span("tool", "run")
    tool.set_tool("run", call_id="c1", arguments=json.dumps(ARGV))
    tool.end()
    model_attrs, tool_attrs = (dict(s.attributes) for s in exporter.spans)
    assert SECRET not in tool_attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS]  # decoded, then redacted string by string: holds
    leaks = [(k, v) for attrs in (model_attrs, tool_attrs) for k, v in attrs.items() if SECRET in str(v)]
    assert leaks == []  # gen_ai.output.messages, llm.output_messages…arguments, output.value, the tool's input.value


@pytest.mark.parametrize("data", [
    ARGV,
    ["ok", "x, y", "a]b", "password=" + SECRET, {"k": ["[", ",", "token: " + SECRET]}],
    {"a": "x,", "b": ["x-api-key: " + SECRET, "Accept: */*"], "c": "]"},
])
def test_redacted_json_text_still_parses_and_keeps_the_other_elements(data) -> None:
    """Only the element holding the secret changes: the text stays JSON, every other value as it was."""
    text = json.dumps(data)
    out = redact_text(text)
    assert SECRET not in out
    back = json.loads(out)

    def pairs(a, b):  # walk both: equal except where a string held the secret
        if isinstance(a, dict):
            assert list(a) == list(b)
            for k in a:
                pairs(a[k], b[k])
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                pairs(x, y)
        elif isinstance(a, str) and SECRET in a:
            assert isinstance(b, str) and "[REDACTED]" in b and SECRET not in b
        else:
            assert a == b

    pairs(data, back)


def test_text_without_a_secret_is_returned_as_it_was() -> None:
    plain = json.dumps({"argv": ["psql", "--host=db", "keyboard=us"], "headers": ["Accept: */*", "x-keyboard: us"]})
    assert redact_text(plain) == plain


@pytest.mark.parametrize("text", [
    '["psql", "p\\u0061ssword=abcdefgh"]',  # an element
    '{"argv": ["psql", "\\u0070assword=abcdefgh"]}',
    '{"note": "p\\u0061ssword=abcdefgh"}',  # a member's string value
])
def test_a_key_word_written_with_a_unicode_escape_is_read_as_a_decoder_reads_it(text: str) -> None:
    """JSON text may escape any character (``\\u0061`` is ``a``): a string element or member value whose
    secret-named key is spelled with an escape is the same string to every reader, and is redacted as
    the unescaped one is (a secret-named member *key* already is, see ``_is_secret_json_key``)."""
    plain = json.loads(text)
    out = redact_text(text)
    assert "abcdefgh" not in out and "abcdefgh" not in json.dumps(json.loads(out))
    assert "abcdefgh" not in redact_text(json.dumps(plain))  # the same data, unescaped: redacted today


@pytest.mark.parametrize("text", [
    "mysql -u app --password=abcdefgh orders",
    '["mysql", "-u", "app", "--password=abcdefgh"]',
    '{"argv": ["curl", "--api-key=abcdefgh", "https://example.com"]}',
    "run -token=abcdefgh",
])
def test_a_command_line_option_with_a_secret_named_key_is_redacted(text: str) -> None:
    """An argv's ``--password=…`` (the commonest way a secret sits in an argv): the option's dashes are not
    part of a word before the key, so ``password`` is the key of an assignment as in ``password=…``."""
    out = redact_text(text)
    assert "abcdefgh" not in out
    assert out.count("[REDACTED]") == 1
    if text.startswith(("[", "{")):
        json.loads(out)


def test_a_dashed_key_stays_whole_with_or_without_an_option_s_dashes() -> None:
    """The dashes that may lead an option are not a word's inside: ``my-password=`` is the whole key
    ``my-password`` (itself secret-named), kept whole before the redacted value."""
    assert redact_text("my-password=abcdefgh") == "my-password=[REDACTED]"
    assert redact_text("--my-password=abcdefgh") == "--my-password=[REDACTED]"


@pytest.mark.parametrize("text", [
    '["mysql", "-u", "app", "--password", "abcdefgh", "orders"]',
    '{"argv": ["curl", "--api-key",  "abcdefgh"], "cwd": "/srv"}',
    '["run", "-token", "abcdefgh"]',
])
def test_the_value_of_a_secret_named_option_in_an_argv_is_redacted(text: str) -> None:
    """An argv often gives an option's value as the next element (``--password abcdefgh``): that element is
    the secret, and only it is redacted (the other elements come back as they were, the JSON still parses)."""
    out = redact_text(text)
    assert "abcdefgh" not in out
    expected = json.loads(text)
    argv = expected["argv"] if isinstance(expected, dict) else expected
    argv[argv.index("abcdefgh")] = "[REDACTED]"
    assert json.loads(out) == expected


def test_an_option_that_names_no_secret_keeps_its_value() -> None:
    text = '["psql", "--user", "app", "--port", "5432", "--max-tokens", "100", "--password", ""]'
    assert redact_text(text) == text


@pytest.mark.parametrize("data", [
    ["mysql", "-u", "app", "--password", "abcdefgh", "orders"],
    {"argv": ["curl", "--api-key", "abcdefgh"], "cwd": "/srv"},
])
def test_the_value_of_a_secret_named_option_in_an_argv_given_as_data_is_redacted(data) -> None:
    """The argv rule held for JSON text only: the same argv as data (a tool's argument or result, a
    decorated function's input) was written with its password (``{"x":["mysql","--password","…"]}``)."""
    from otel_agents._spans.redaction import REDACTED, redact_data

    out, _ = redact_data(data, 10_000)
    expected = json.loads(json.dumps(data))
    argv = expected["argv"] if isinstance(expected, dict) else expected
    argv[argv.index("abcdefgh")] = REDACTED
    assert out == expected


def test_an_argv_given_as_data_leaves_no_secret_on_the_tool_span(provider, exporter) -> None:
    t = Telemetry(provider, settings=Settings(capture_content=True), framework="test")
    tool = t.start_span("tool", "run")
    tool.set_tool("run", call_id="c1", arguments={"argv": ["mysql", "--password", SECRET]})
    tool.set_output(["mysql", "--password", SECRET])
    tool.end()
    assert [(k, v) for k, v in exporter.spans[0].attributes.items() if SECRET in str(v)] == []
