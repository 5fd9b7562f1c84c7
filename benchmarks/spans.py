"""The span layer alone: the cost of one semantic span of each kind, with no framework.

What every instrumentor pays per span before any framework-specific work, measured
against the same bare-SDK-span floor as the overhead tables, in one process,
interleaved (see :mod:`harness`). Shapes, each opened, filled through the public
:class:`~otel_agents._spans.span.SemanticSpan` setters and ended:

* ``chain`` — input (a small dict) and output (a sentence);
* ``tool`` — name, call id, description, arguments and result;
* ``model`` — model, provider, a parameter, two input messages (system, user), one
  output message, token usage;
* ``model_long`` — the same with a 21-message conversation (~11,000 characters),
  an agent's model call a few turns in: here content encoding and redaction dominate;
* ``model_tool`` — the two-message shape whose output is a tool call (arguments a small object), what
  every agent step that calls a tool makes;
* each of the model shapes with content capture off.
"""

from __future__ import annotations

from typing import Any, Callable

from .harness import Variant, bootstrap_ratio, counting_provider, median, rounded, time_interleaved, us, verdict
from .overhead import floor_variant

SPANS_PER_CALL = 20
# Issue 40: a model span ≤ 4× the bare-span floor, a 21-message model span ≤ 8× (content on).
TARGETS = {"model": 4.0, "model_long": 8.0}


def _shapes(telemetry: Any) -> dict[str, Callable[[], None]]:
    from otel_agents._spans.messages import ChatMessage, ToolCallPart
    from otel_agents._spans.span import Usage
    from otel_agents.semconv import Kind

    short = [ChatMessage("system", "You are a terse weather assistant."),
             ChatMessage("user", "What is the weather in Paris?")]
    long_ = [ChatMessage("system", "You are a support agent for an online shop. " * 10)] + [
        ChatMessage("user" if i % 2 == 0 else "assistant",
                    f"Turn {i}: a question or an answer about the order status and the refund policy. " * 6)
        for i in range(20)]
    answer = [ChatMessage("assistant", "Sunny, 21 degrees.", finish_reason="stop")]
    call = [ChatMessage("assistant", tool_calls=[ToolCallPart("get_weather", {"city": "Paris", "unit": "celsius"},
                                                              "call_1")], finish_reason="tool_calls")]

    def chain() -> None:
        s = telemetry.start_span(Kind.CHAIN, "RunnableSequence")
        s.set_input({"q": "What is the weather in Paris?"})
        s.set_output("Sunny, 21 degrees.")
        s.end()

    def tool() -> None:
        s = telemetry.start_span(Kind.TOOL, "get_weather")
        s.set_tool("get_weather", call_id="call_1", description="Current weather for a city.",
                   arguments={"city": "Paris"})
        s.set_tool_result("Sunny, 21 degrees in Paris.")
        s.end()

    def model(messages: list[Any], output: list[Any] = answer) -> Callable[[], None]:
        def run() -> None:
            s = telemetry.start_span(Kind.MODEL, "fake-model", operation="chat")
            s.set_model(request_model="fake-model", provider="fake", parameters={"temperature": 0.0})
            s.set_messages(input=messages)
            s.set_messages(output=output)
            s.set_usage(Usage(input_tokens=120, output_tokens=9))
            s.end()
        return run

    return {"chain": chain, "tool": tool, "model": model(short), "model_tool": model(short, call),
            "model_long": model(long_)}


def _repeat(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        for _ in range(SPANS_PER_CALL):
            fn()
    return run


def _sdk_replay(provider: Any, shape: str) -> tuple[Callable[[], None], int]:
    """The SDK alone (``start_span`` with the attributes, ``end``) making the span ``shape`` makes with
    content on, and its number of attributes."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_agents._spans.settings import Settings
    from otel_agents._spans.span import Telemetry

    memory = InMemorySpanExporter()
    capture = TracerProvider()
    capture.add_span_processor(SimpleSpanProcessor(memory))
    _shapes(Telemetry(capture, settings=Settings(capture_content=True), framework="bench"))[shape]()
    (span,) = memory.get_finished_spans()
    name, kind, attributes = span.name, span.kind, dict(span.attributes or {})
    tracer = provider.get_tracer("benchmarks.sdk_replay")

    def replay() -> None:
        tracer.start_span(name, kind=kind, attributes=attributes).end()

    return replay, len(attributes)


def span_layer(*, rounds: int, batch: int) -> dict[str, Any]:
    """Per-span cost (µs, median over rounds) of each shape, content on and off, and its ratio to the floor
    (ratio of medians, with its 95% bootstrap interval over rounds), checked against :data:`TARGETS`."""
    from otel_agents._spans.settings import Settings
    from otel_agents._spans.span import Telemetry

    provider, exporter = counting_provider()
    on = _shapes(Telemetry(provider, settings=Settings(capture_content=True), framework="bench"))
    off = _shapes(Telemetry(provider, settings=Settings(capture_content=False), framework="bench"))
    variants = [floor_variant(provider)]
    variants += [Variant(name, _repeat(fn), ops_per_call=SPANS_PER_CALL) for name, fn in on.items()]
    variants += [Variant(f"{name}_no_content", _repeat(off[name]), ops_per_call=SPANS_PER_CALL)
                 for name in ("model", "model_tool", "model_long")]
    attributes = {}
    for name in on:  # the SDK alone making each shape's very span (its attribute floor)
        replay, attributes[name] = _sdk_replay(provider, name)
        variants.append(Variant(f"{name}_sdk", _repeat(replay), ops_per_call=SPANS_PER_CALL))
    timings = time_interleaved(variants, exporter, rounds=rounds, batch=max(1, batch // 4))
    provider.shutdown()
    floor = median(timings.seconds["floor"])
    shapes = {}
    for v in variants:
        if v.name == "floor" or v.name.endswith("_sdk"):
            continue
        interval = bootstrap_ratio(timings.seconds[v.name], timings.seconds["floor"])
        shapes[v.name] = {"span_us": us(median(timings.seconds[v.name])), "vs_floor": rounded(interval, 2)}
        if v.name in attributes:
            sdk = timings.seconds[f"{v.name}_sdk"]
            shapes[v.name].update({"attributes": attributes[v.name], "sdk_same_attributes_us": us(median(sdk)),
                                   "vs_sdk_same_attributes": rounded(bootstrap_ratio(timings.seconds[v.name], sdk),
                                                                     2)})
    targets = {}
    for shape, bound in TARGETS.items():
        interval = bootstrap_ratio(timings.seconds[shape], timings.seconds["floor"])
        targets[f"{shape}_le_{bound:g}x_floor"] = {"target": bound, **rounded(interval, 2),
                                                   "verdict": verdict(interval, bound)}
    # Proposed restatement (issue 40): each shape ≤ 3× the SDK alone making the very same span.
    proposed = {}
    for name in attributes:
        interval = bootstrap_ratio(timings.seconds[name], timings.seconds[f"{name}_sdk"])
        proposed[f"{name}_le_3x_sdk"] = {"target": 3.0, **rounded(interval, 2), "verdict": verdict(interval, 3.0)}
    return {"floor_span_us": us(floor), "rounds": rounds, "shapes": shapes, "targets": targets,
            "proposed_targets": proposed}
