"""Proof that a change to the fold leaves its envelopes byte-identical, on a broad corpus.

Two steps, run from the repository root (no timing; the machine's load does not matter):

1. **Record** the runs the test suites fold: this module is also a pytest plugin that keeps every run
   handed to ``build_envelope`` (fold, folding processor, ``StreamFolder``, ``TraceGatherer``), as
   plain tuples, in ``$FOLD_CORPUS`` (a pickle)::

       FOLD_CORPUS=/tmp/corpus/exporters.pkl .venv/bin/python -m pytest tests/exporters tests/collect \\
           -p benchmarks.fold_equivalence -p no:randomly -q -m 'not slow'
       FOLD_CORPUS=/tmp/corpus/matrix.pkl .venv/bin/python -m pytest tests/matrix tests/customer_support \\
           tests/replay -p benchmarks.fold_equivalence -p no:randomly -q -m 'not slow'

2. **Fold** the corpus with each version of the package and compare the outputs byte for byte::

       .venv/bin/python -m benchmarks.fold_equivalence synthetic /tmp/corpus   # once: the benchmark's trace set
       PYTHONPATH=/path/to/old/src .venv/bin/python -m benchmarks.fold_equivalence fold /tmp/corpus old.txt
       .venv/bin/python -m benchmarks.fold_equivalence fold /tmp/corpus new.txt
       cmp old.txt new.txt

   ``fold`` writes one line per envelope (``envelope_line``: the exact bytes ``otel-agents fold`` and the
   file exporter write) for: every recorded run through ``build_envelope``, its spans rebuilt as the SDK's
   (``BoundedAttributes``) and again as plain ``dict`` attributes (the file reader's); all of them through
   ``fold()`` (grouping, duplicate ids, parent cycles: the problems it reports are compared too), with and
   without ``include_thoughts``; the foreign golden traces of ``tests/exporters/foreign`` and the synthetic
   set read from OTLP/JSON through ``fold()`` and through ``StreamFolder``; and those traces replayed through
   a ``TracerProvider`` with ``ECPFoldingProcessor`` (their own ids and times).

3. **One large file** for ``otel-agents fold`` (its speed on a mixed input; compare its envelopes and standard
   error with ``cmp`` too)::

       .venv/bin/python -m benchmarks.fold_equivalence otlp /tmp/corpus /tmp/corpus.jsonl 15

   each distinct recorded run (not the ``include_thoughts`` copies) as one OTLP/JSON line with a trace id of its
   own, its spans in end order; the foreign golden traces and the synthetic set each copied that many times with
   fresh trace ids; every source's lines spread evenly over the file in their own order (15 copies: ~125,000
   spans, ~140 MB).
"""

from __future__ import annotations

import glob
import os
import pickle
import sys
from typing import Any

_records: list[Any] = []


def _plain(span: Any) -> tuple[Any, ...]:
    ctx, par, st = span.context, span.parent, span.status
    kind = getattr(span, "kind", None)
    return (span.name, (ctx.trace_id, ctx.span_id, ctx.is_remote) if ctx is not None else None,
            (par.trace_id, par.span_id, par.is_remote) if par is not None else None,
            dict(span.attributes) if span.attributes else {},
            (st.status_code.value, st.description) if st is not None else None,
            kind.value if kind is not None else None, span.start_time, span.end_time)


# -- step 1: the pytest plugin ------------------------------------------------------------------------
def pytest_configure(config: Any) -> None:
    import otel_agents.exporters.ecp as ecp
    from otel_agents.exporters.ecp import _envelope, _gather, _processor, _stream

    original = _envelope.build_envelope

    def recording(run: Any, *, include_thoughts: bool = False) -> Any:
        try:
            record = (include_thoughts, run.trace_id, _plain(run.root) if run.root is not None else None,
                      run.incomplete, [_plain(s) for s in run.spans])
            pickle.dumps(record)  # a value that does not pickle (a test's own class) leaves the run out
            _records.append(record)
        except Exception:  # noqa: BLE001 - recording must never change what the test sees
            pass
        return original(run, include_thoughts=include_thoughts)

    for module in (_envelope, _processor, _gather, _stream, ecp):
        module.build_envelope = recording


def pytest_unconfigure(config: Any) -> None:
    with open(os.environ["FOLD_CORPUS"], "wb") as f:
        pickle.dump(_records, f)


# -- step 2: folding the corpus -----------------------------------------------------------------------
def _span(t: tuple[Any, ...], bounded: bool) -> Any:
    from opentelemetry.attributes import BoundedAttributes
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    name, ctx, par, attrs, st, kind, start, end = t
    return ReadableSpan(
        name=name, context=SpanContext(ctx[0], ctx[1], ctx[2], TraceFlags(1)) if ctx else None,
        parent=SpanContext(par[0], par[1], par[2], TraceFlags(1)) if par else None,
        attributes=BoundedAttributes(attributes=attrs, immutable=True, max_value_len=None) if bounded else dict(attrs),
        kind=SpanKind(kind) if kind is not None else SpanKind.INTERNAL,
        status=Status(StatusCode(st[0]), st[1]) if st else None, start_time=start, end_time=end)


def fold_corpus(corpus: str, out_path: str) -> None:
    from otel_agents.exporters.ecp import StreamFolder, fold
    from otel_agents.exporters.ecp._envelope import build_envelope
    from otel_agents.exporters.ecp._json import envelope_line
    from otel_agents.exporters.ecp._runs import Run
    from otel_agents.exporters.file import read_otlp_json

    records: list[Any] = []
    for path in sorted(glob.glob(os.path.join(corpus, "*.pkl"))):
        with open(path, "rb") as f:
            records += pickle.load(f)
    with open(out_path, "w", encoding="utf-8") as out:
        def write(tag: str, envelope: Any) -> None:
            out.write(f"{tag}\t{envelope_line(envelope) if envelope is not None else None}\n")

        for bounded in (True, False):
            every = []
            for i, (thoughts, trace_id, root, incomplete, plain) in enumerate(records):
                spans = [_span(t, bounded) for t in plain]
                top = None
                if root is not None:
                    top = next((s for s, t in zip(spans, plain) if t == root), None) or _span(root, bounded)
                try:
                    write(f"run{bounded}{i}", build_envelope(Run(trace_id, top, spans, incomplete),
                                                             include_thoughts=thoughts))
                except Exception as exc:  # noqa: BLE001 - the same failure on both sides is the same output
                    out.write(f"run{bounded}{i}\traised {exc!r}\n")
                if not thoughts:
                    every += spans
            problems: list[str] = []
            for j, envelope in enumerate(fold(every, problems=problems)):
                write(f"fold{bounded}{j}", envelope)
            out.write(f"problems{bounded}\t{problems!r}\n")
            for j, envelope in enumerate(fold(every, include_thoughts=True, problems=[])):
                write(f"thoughts{bounded}{j}", envelope)
        files = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                              "tests", "exporters", "foreign", "*.jsonl")))
        files.append(os.path.join(corpus, "synthetic.jsonl"))
        for path in files:
            spans = read_otlp_json(path)
            for j, envelope in enumerate(fold(spans)):
                write(f"file:{os.path.basename(path)}:{j}", envelope)
            streamed: list[Any] = []
            folder = StreamFolder(streamed.append)
            for k in range(0, len(spans), 7):
                folder.add(spans[k:k + 7])
            folder.finish()
            for j, envelope in enumerate(streamed):
                write(f"stream:{os.path.basename(path)}:{j}", envelope)
        for j, envelope in enumerate(_through_processor(
                read_otlp_json(files[-1])[:6000] + [s for p in files[:-1] for s in read_otlp_json(p)])):
            write(f"processor{j}", envelope)


def _through_processor(spans: list[Any]) -> list[Any]:
    """The spans replayed through a ``TracerProvider`` with the folding processor, with their own ids,
    attributes, status and times (started in start order, ended in end order, per trace)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    from otel_agents.exporters.ecp import ECPFoldingProcessor

    class Ids(IdGenerator):
        def __init__(self) -> None:
            self.next: list[int] = []

        def generate_span_id(self) -> int:
            return self.next.pop(0)

        def generate_trace_id(self) -> int:
            return self.next.pop(0)

    got: list[Any] = []
    ids = Ids()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(ECPFoldingProcessor(on_envelope=got.append))
    tracer = provider.get_tracer("fold_equivalence")
    traces: dict[int, list[Any]] = {}
    for s in spans:
        traces.setdefault(s.context.trace_id, []).append(s)
    for trace_id, members in traces.items():
        opened: dict[int, Any] = {}
        for s in sorted(members, key=lambda s: (s.start_time, s.context.span_id)):
            parent = opened.get(s.parent.span_id) if s.parent is not None else None
            ids.next = [s.context.span_id] if parent is not None else [trace_id, s.context.span_id]
            context = trace.set_span_in_context(parent if parent is not None else trace.INVALID_SPAN)
            opened[s.context.span_id] = live = tracer.start_span(s.name, context=context, kind=s.kind,
                                                                 attributes=dict(s.attributes),
                                                                 start_time=s.start_time)
            live._status = s.status
        for s in sorted(members, key=lambda s: s.end_time or 0):
            opened[s.context.span_id].end(end_time=s.end_time)
    provider.shutdown()
    return got


def write_synthetic(corpus: str, spans: int = 3000) -> None:
    """The benchmark's synthetic trace set (``benchmarks.synthetic``), stored once as OTLP/JSON (its
    timestamps are the moment it was made: both versions must read the same file)."""
    from benchmarks.synthetic import trace_set
    from otel_agents.exporters.file import OTLPJsonFileExporter

    exporter = OTLPJsonFileExporter(os.path.join(corpus, "synthetic.jsonl"))
    data = trace_set(spans)
    for i in range(0, len(data), 512):
        exporter.export(data[i:i + 512])
    exporter.shutdown()


def write_otlp(corpus: str, out_path: str, copies: int) -> None:
    """The corpus as one OTLP/JSON-lines file (step 3 of the module docstring)."""
    import hashlib
    import json
    import re

    from otel_agents.exporters.file import to_otlp_json

    def new_id(*key: Any) -> int:
        return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=16).digest(), "big")

    records: list[Any] = []
    for path in sorted(glob.glob(os.path.join(corpus, "*.pkl"))):
        with open(path, "rb") as f:
            records += pickle.load(f)
    ours, seen = [], set()
    for i, (thoughts, trace_id, _, _, plain) in enumerate(records):
        key = (trace_id, tuple(sorted(t[1][1] for t in plain if t[1])))
        if thoughts or key in seen:  # the same run recorded twice (by two fold paths of one test): once
            continue
        seen.add(key)
        tid = new_id("run", i, trace_id)
        spans = [_span((t[0], (tid, *t[1][1:]), (tid, *t[2][1:]) if t[2] else None, *t[3:]), False)
                 for t in plain if t[1]]
        spans.sort(key=lambda s: s.end_time or 0)  # stored as they end
        ours.append(json.dumps(to_otlp_json(spans), separators=(",", ":")))
    trace_id_field = re.compile(r'"traceId": ?"([0-9a-fA-F]{32})"')
    sources = [ours]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in sorted(glob.glob(os.path.join(root, "tests", "exporters", "foreign", "*.jsonl"))) + [
            os.path.join(corpus, "synthetic.jsonl")]:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
        for c in range(copies):
            sources.append([trace_id_field.sub(lambda m: '"traceId":"%032x"' % new_id(path, c, m.group(1)), line)
                            for line in lines])
    order = sorted((k / len(lines), j, k) for j, lines in enumerate(sources) for k in range(len(lines)))
    with open(out_path, "w", encoding="utf-8") as out:
        for _, j, k in order:
            out.write(sources[j][k] + "\n")


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)  # the corpus's damaged traces are reported; the output compares them
    if sys.argv[1:2] == ["synthetic"]:
        write_synthetic(sys.argv[2])
    elif sys.argv[1:2] == ["fold"]:
        fold_corpus(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["otlp"]:
        write_otlp(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
