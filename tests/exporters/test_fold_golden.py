"""The envelopes of a large mixed input, byte for byte as recorded: a change that should not change what the fold
writes (a faster path, a lazier redaction) is checked against them.

Input: every golden foreign trace (``tests/exporters/foreign``) and ``golden/mixed.otlp.jsonl``: runs of ours with
another instrumentation's spans inside (a model client's view of our model call, HTTP spans), foreign runs of four
vocabularies, secrets in their values, names and errors (``test_ecp_foreign_secrets.hostile_runs``). Expected:
``golden/mixed.ecp.jsonl.gz``, the envelopes as ``otel-agents fold`` writes them (one line each), recorded by the
fold of 2026-12-05 (before foreign values were redacted as they are read); regenerated 2026-12-07 when OpenInference's
``llm.finish_reason`` began to be read (``finish=`` on its model lines, ``gen_ai.response.finish_reasons`` in their
``logs`` attributes: nothing else changed). Regenerate it only for a change meant to change the envelopes, and say so.
"""

from __future__ import annotations

import gzip
import os

from otel_agents.cli import main
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.ecp._json import envelope_line
from otel_agents.exporters.file import read_otlp_json

HERE = os.path.dirname(__file__)
INPUTS = [os.path.join(HERE, "foreign", name) for name in sorted(os.listdir(os.path.join(HERE, "foreign")))
          if name.endswith(".otlp.jsonl")] + [os.path.join(HERE, "golden", "mixed.otlp.jsonl")]


def _expected() -> list[str]:
    with gzip.open(os.path.join(HERE, "golden", "mixed.ecp.jsonl.gz"), "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _first_difference(got: list[str], want: list[str]) -> str:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            at = next(j for j, (x, y) in enumerate(zip(a, b)) if x != y) if a[:len(b)] != b[:len(a)] else min(len(a), len(b))
            return f"envelope {i} differs at character {at}: {a[max(0, at - 80):at + 80]!r} != {b[max(0, at - 80):at + 80]!r}"
    return f"{len(got)} envelopes, {len(want)} expected"


def test_fold_writes_the_recorded_envelopes_byte_for_byte():
    spans = [span for path in INPUTS for span in read_otlp_json(path)]
    assert len(spans) == 488
    got, want = [envelope_line(e) for e in fold(spans)], _expected()
    assert len(want) == 38
    assert got == want, _first_difference(got, want)


def test_otel_agents_fold_writes_the_recorded_envelopes_byte_for_byte(tmp_path):
    """The streaming command over the same input as one file (its own decoder; envelopes in the order their traces
    complete, so compared as a set of lines)."""
    path, out = tmp_path / "traces.jsonl", tmp_path / "envelopes.jsonl"
    with open(path, "wb") as f:
        for name in INPUTS:
            with open(name, "rb") as g:
                f.write(g.read())
    assert main(["fold", str(path), "-o", str(out)]) == 0
    got, want = out.read_text(encoding="utf-8").splitlines(), _expected()
    assert sorted(got) == sorted(want), _first_difference(sorted(got), sorted(want))


_FOLD_FIELDS = ("name", "trace_id", "span_id", "parent_id", "start_time", "end_time", "semantic_kind", "foreign",
                "cancelled", "error", "duration_ms", "span_kind", "protocol", "status_code", "context", "parent")


def _fields(span):
    """What the fold reads of a ``FoldSpan``, comparable (a redacted mapping read item by item, as the fold reads it)."""
    return (tuple(getattr(span, f) for f in _FOLD_FIELDS), type(span.attributes).__name__,
            sorted(span.attributes.items()), span.status.status_code, span.status.description)


def test_otel_agents_fold_decodes_spans_straight_into_what_the_fold_reads(monkeypatch, tmp_path):
    """``otel-agents fold`` decodes each span into a ``FoldSpan`` without the SDK's ``ReadableSpan``
    (``FoldSpan.decoded``): the same fields, attributes (ours, and foreign ones redacted as read) and status as
    ``FoldSpan(ReadableSpan)`` for every golden span, and not one ``ReadableSpan`` made by the command."""
    from opentelemetry.sdk.trace import ReadableSpan

    from otel_agents.exporters.ecp._facts import FoldSpan
    from otel_agents.exporters.file import iter_otlp_json

    for path in INPUTS:
        via_sdk = [_fields(FoldSpan(s)) for _, spans in iter_otlp_json(path) for s in spans]
        decoded = [s for _, spans in iter_otlp_json(path, make=FoldSpan.decoded) for s in spans]
        assert all(type(s) is FoldSpan for s in decoded)
        assert [_fields(s) for s in decoded] == via_sdk, path
    made = []
    init = ReadableSpan.__init__
    monkeypatch.setattr(ReadableSpan, "__init__", lambda self, *a, **k: (made.append(1), init(self, *a, **k))[1])
    assert main(["fold", INPUTS[-1], "-o", str(tmp_path / "envelopes.jsonl")]) == 0
    assert not made
