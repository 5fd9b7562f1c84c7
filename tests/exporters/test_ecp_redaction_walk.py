"""The fold's short cut for JSON text of other instrumentations (``_redaction.redact_value``): parsed and walked
instead of scanned member by member, it must never keep a secret ``redact_text`` removes, whatever the JSON
(secret-named keys among keys with key words, secrets nested in JSON strings, ``\\u`` escapes, duplicated keys,
any whitespace), and give ``redact_text``'s very text on every value of the golden foreign traces."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from otel_agents._spans.redaction import redact_text
from otel_agents.exporters.ecp._redaction import redact_value
from otel_agents.exporters.file import read_otlp_json

MARK = "Zq9hostile"  # in every secret of the pools below, nowhere else
KEYS = ["input_tokens", "token_count", "max_tokens", "author", "keywords", "monkey", "passage", "content", "role",
        "password", "api_key", "apiKey", "session_token", "Authorization", "x-api-key", "client_secret", "args",
        "kwargs", "id", "pass\\u0077ord", f"sk-proj-{MARK}{MARK}"]
TEXTS = ["hello world, nothing here at all", "Order A100 has shipped.", "the author's keyword list", "token usage: 3",
         f"sk-proj-{MARK}{MARK}", f"Bearer {MARK}abcdef", f"Authorization: Basic {MARK}xyz", f"password={MARK}",
         f"{{'api_key': '{MARK}'}}", f"postgres://bob:{MARK}@db/x", f"ghp_{MARK * 4}", "--password", MARK + "pw",
         json.dumps({"api_key": MARK + "k"}), json.dumps({"note": "plain"}), f"x-api-key: {MARK}", "http://u:",
         "x@h", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + MARK]


def _json(children):
    return st.one_of(st.lists(children, max_size=4),
                     st.dictionaries(st.sampled_from(KEYS), children, max_size=4))


VALUES = st.recursive(st.one_of(st.sampled_from(TEXTS), st.integers(-5, 5), st.none(), st.booleans()), _json,
                      max_leaves=12)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_json(VALUES), compact=st.booleans(), ascii_=st.booleans(), duplicate=st.sampled_from(KEYS + [None]))
def test_the_walk_keeps_no_secret_redact_text_removes(data, compact, ascii_, duplicate) -> None:
    text = json.dumps(data, separators=(",", ":") if compact else None, ensure_ascii=ascii_).replace("\\\\u", "\\u")
    if duplicate is not None and text.startswith("{") and len(text) > 2:  # a key twice: the parse keeps the last
        text = '{"%s": "%s", ' % (duplicate, f"sk-proj-{MARK}{MARK}") + text[1:]
    ours, theirs = redact_value(text), redact_text(text)
    assert ours in (text, theirs)
    assert ours.count(MARK) <= theirs.count(MARK), (text, ours, theirs)


FOREIGN = os.path.join(os.path.dirname(__file__), "foreign")


def test_every_value_of_the_golden_foreign_traces_is_redacted_as_redact_text_redacts_it() -> None:
    values = [v for name in sorted(os.listdir(FOREIGN)) if name.endswith(".otlp.jsonl")
              for span in read_otlp_json(os.path.join(FOREIGN, name)) for v in span.attributes.values()
              if isinstance(v, str)]
    assert len(values) > 1000
    assert [redact_value(v) for v in values] == [redact_text(v) for v in values]
