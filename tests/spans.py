"""Test helpers: an exporter that snapshots spans at export time, and span-tree queries.

The snapshot is taken in ``export()``, so a test sees exactly what a backend
would have received, not a live span object that might change later.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode


@dataclass(frozen=True)
class SpanSnapshot:
    """An immutable copy of one exported span."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: str
    attributes: dict[str, Any]
    status: StatusCode
    status_description: str | None
    events: tuple[tuple[str, dict[str, Any]], ...]
    start_time: int
    end_time: int
    scope: str = ""
    resource: dict[str, Any] = field(default_factory=dict)

    @property
    def semantic_kind(self) -> str | None:
        return self.attributes.get("otel_agents.span.kind")

    def json_attr(self, key: str) -> Any:
        return json.loads(self.attributes[key])


def snapshot(span: ReadableSpan) -> SpanSnapshot:
    return SpanSnapshot(
        name=span.name,
        trace_id=span.context.trace_id,
        span_id=span.context.span_id,
        parent_id=span.parent.span_id if span.parent else None,
        kind=span.kind.name,
        attributes=dict(span.attributes or {}),
        status=span.status.status_code,
        status_description=span.status.description,
        events=tuple((e.name, dict(e.attributes or {})) for e in span.events),
        start_time=span.start_time or 0,
        end_time=span.end_time or 0,
        scope=span.instrumentation_scope.name if span.instrumentation_scope else "",
        resource=dict(span.resource.attributes) if span.resource else {},
    )


class SnapshotExporter(SpanExporter):
    """Keeps an immutable snapshot of every span it is given."""

    def __init__(self) -> None:
        self._spans: list[SpanSnapshot] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        snaps = [snapshot(s) for s in spans]
        with self._lock:
            self._spans.extend(snaps)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    @property
    def spans(self) -> list[SpanSnapshot]:
        with self._lock:
            return list(self._spans)

    def clear(self) -> None:
        with self._lock:
            self._spans.clear()

    def semantic(self, kind: str | None = None) -> list[SpanSnapshot]:
        """Exported spans that carry our kind attribute (of ``kind`` if given), in start order."""
        out = [s for s in self.spans if s.semantic_kind and (kind is None or s.semantic_kind == kind)]
        return sorted(out, key=lambda s: s.start_time)


def by_id(spans: Iterable[SpanSnapshot]) -> dict[int, SpanSnapshot]:
    return {s.span_id: s for s in spans}


def parent_of(span: SpanSnapshot, spans: Iterable[SpanSnapshot]) -> SpanSnapshot | None:
    return by_id(spans).get(span.parent_id) if span.parent_id else None


def ancestors(span: SpanSnapshot, spans: Iterable[SpanSnapshot]) -> list[SpanSnapshot]:
    index = by_id(spans)
    out, cur = [], span
    while cur.parent_id and cur.parent_id in index:
        cur = index[cur.parent_id]
        out.append(cur)
    return out


def nearest(span: SpanSnapshot, spans: Iterable[SpanSnapshot], kind: str) -> SpanSnapshot | None:
    """The nearest ancestor of ``span`` whose semantic kind is ``kind``."""
    for a in ancestors(span, spans):
        if a.semantic_kind == kind:
            return a
    return None


def assert_system_prompt(models: Sequence[SpanSnapshot], text: str) -> None:
    """Case M-4 on model spans: the instructions ``text`` are ``gen_ai.system_instructions`` and the first
    OpenInference input message, role system; never a ``gen_ai.input.messages`` entry."""
    assert models
    for model in models:
        a = model.attributes
        assert model.json_attr("gen_ai.system_instructions") == [{"type": "text", "content": text}], model.name
        assert (a["llm.input_messages.0.message.role"], a["llm.input_messages.0.message.content"]) == ("system", text)
        assert "system" not in [m["role"] for m in model.json_attr("gen_ai.input.messages")], model.name


def assert_reasoning_then_answer(model: SpanSnapshot, agent: SpanSnapshot, thought: str, answer: str) -> None:
    """Case M-1: the model's output is a reasoning part with ``thought`` then a text part with ``answer``; its
    OpenInference content and the agent's output are the answer alone."""
    [out] = model.json_attr("gen_ai.output.messages")
    assert out["parts"] == [{"type": "reasoning", "content": thought}, {"type": "text", "content": answer}]
    assert model.attributes["llm.output_messages.0.message.content"] == answer
    assert agent.attributes["output.value"] == answer


def assert_refused_unknown_tool(span: SpanSnapshot, arguments: Any, answer: str) -> None:
    """``span`` is a tool call the framework refused as naming no tool it has: ERROR, ``error.type``
    ``unknown_tool``, ``otel_agents.tool.denied``, the model's ``arguments``, the framework's ``answer`` as the
    result and the status description, zero length (no tool ran)."""
    assert span.status is StatusCode.ERROR and span.attributes["error.type"] == "unknown_tool", span.attributes
    assert span.attributes["otel_agents.tool.denied"] is True
    assert span.json_attr("gen_ai.tool.call.arguments") == arguments
    assert span.attributes["gen_ai.tool.call.result"] == answer == span.status_description
    assert span.start_time == span.end_time


def tree(spans: Iterable[SpanSnapshot]) -> str:
    """An indented text tree of spans (for assertion messages)."""
    spans = sorted(spans, key=lambda s: s.start_time)
    ids = {s.span_id for s in spans}
    children: dict[int | None, list[SpanSnapshot]] = {}
    for s in spans:
        children.setdefault(s.parent_id if s.parent_id in ids else None, []).append(s)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for s in children.get(parent, []):
            lines.append(f"{'  ' * depth}{s.name} [{s.semantic_kind}] {s.status.name}")
            walk(s.span_id, depth + 1)

    walk(None, 0)
    return "\n".join(lines)


def spy_calls(monkeypatch: Any, targets: Iterable[tuple[Any, str]]) -> list[str]:
    """Replace each ``(module, function_name)`` with a pass-through spy; returns the list the spies
    append each called function's name to, in call order (the cost tests count conversions with it)."""
    calls: list[str] = []
    for module, name in targets:
        original = getattr(module, name)

        def spy(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    return calls


def clear_content_caches() -> None:
    """Empty every cache of the span layer's rendered content (the message, flattened-message, tools and
    request-parameter memos, the one-text and system-instruction lru caches), so a span renders cold."""
    from otel_agents._spans import content, model

    for cache in (content._TOOLS, content._MESSAGES, content._FLAT, model._PARAMETERS):
        cache.clear()
    content._text_message.cache_clear()
    content._instructions_json.cache_clear()


def attribute_diff(got: Mapping[str, Any], want: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The keys whose values differ between two spans' attributes, each with ``(got, want)`` (``None``: absent)."""
    return {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}


class ModelSpans:
    """Model spans made through the span layer on a provider of their own (:meth:`render`), for the content
    caches' tests; use it as ``with ModelSpans() as spans:`` — the caches are cold when it starts and when it ends."""

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.exporter = SnapshotExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def __enter__(self) -> "ModelSpans":
        clear_content_caches()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.provider.shutdown()
        clear_content_caches()

    def render(self, settings: Any, fill: Any) -> dict[str, Any]:
        """The attributes of one ``chat m`` model span made with ``settings`` (a span layer ``Settings``) and
        filled by ``fill(span)``."""
        from otel_agents._spans import Telemetry

        span = Telemetry(self.provider, settings=settings, framework="test").start_span("model", "m", operation="chat")
        fill(span)
        span.end()
        return dict(self.exporter.spans[-1].attributes)


def encode_otlp(spans: Sequence[ReadableSpan]) -> Any:
    """The OTLP protobuf request of ``spans`` (the real encoder), asserting that every attribute of every span
    and event was encoded: the encoder drops a value it cannot carry (an integer past 64 bits) with an error logged,
    or, in other versions, raises for the whole batch."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(spans)
    request.SerializeToString()
    encoded = {(s.span_id, e.name if e is not None else None): len(e.attributes if e is not None else s.attributes)
               for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans
               for e in (None, *s.events)}
    for span in spans:
        sid = span.context.span_id.to_bytes(8, "big")
        assert encoded[(sid, None)] == len(span.attributes), span.name
        for event in span.events:
            assert encoded[(sid, event.name)] == len(event.attributes), (span.name, event.name)
    return request
