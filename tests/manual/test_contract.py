"""The cross-cutting cases for decorated code: X-1, X-2, X-3, X-5, X-6, X-7 through the
contract kit, plus X-1's ``current_agent_span()`` check and X-6 with every odd value
through a decorated tool. X-4 (uninstrument) does not apply: decorators have nothing to undo."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import datetime
import decimal
import json
import threading
from typing import Any

import pydantic
import pytest
from opentelemetry import trace

import otel_agents
from otel_agents import manual
from otel_agents._spans import pipeline
from otel_agents._spans import span as span_module
from otel_agents.manual import Usage, current_span
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SnapshotExporter, tree


class DecoratorsOn:
    """Stands in for an instrumentor in the kit: decorated code needs none, this only
    points it at the test's provider (and back at the global one)."""

    def instrument(self, tracer_provider: Any = None, **_: Any) -> None:
        manual.set_providers(tracer_provider)

    def uninstrument(self) -> None:
        manual.set_providers()


class ManualScenario(Scenario):
    """A decorated agent: model call → tool call → answer; the tool probes and records
    ``current_agent_span()`` per run tag."""

    instrumentor_cls = DecoratorsOn
    ids = ("session", "user")

    def __init__(self) -> None:
        super().__init__()
        self.agents_seen: list[tuple[str, Any]] = []
        seen_lock = threading.Lock()
        scenario = self

        @otel_agents.span("model", "fake-1", provider="fake")
        def model(prompt: str) -> str:
            current_span().set_usage(Usage(input_tokens=len(prompt) % 97, output_tokens=3))
            return "call lookup_order"

        @otel_agents.tool
        def lookup_order(order_id: str, note: str, tag: str) -> dict:
            scenario.probe(tag)
            with seen_lock:
                scenario.agents_seen.append((tag, otel_agents.current_agent_span()))
            return scenario.result({"order_id": order_id, "status": "shipped", "note": note})

        @otel_agents.tool
        async def alookup_order(order_id: str, note: str, tag: str) -> dict:
            await asyncio.sleep(0)
            result = lookup_order.__wrapped__(order_id, note, tag)
            await asyncio.sleep(0.001)  # the tool's own I/O after its work: where X-11's cancellation lands
            return result

        @otel_agents.agent(name="support", description="Support agent. ")
        def support(question: str, marker: str = "", tag: str = "") -> str:
            model(question)
            result = lookup_order("A1", marker, tag)
            return f"Order {result['order_id']} is {result['status']}. {marker}"

        @otel_agents.agent(name="support", description="Support agent. ")
        async def asupport(question: str, marker: str = "", tag: str = "") -> str:
            model(question)
            result = await alookup_order("A1", marker, tag)
            return f"Order {result['order_id']} is {result['status']}. {marker}"

        @otel_agents.tool
        def broken_tool(order_id: str) -> dict:
            raise LookupError(f"no order {order_id}")

        @otel_agents.agent(name="support")
        def failing(question: str) -> str:
            model(question)
            return broken_tool(question)

        @otel_agents.agent(name="support")
        def streaming(question: str):
            model(question)
            for word in ("Order", " A1", " is", " shipped."):
                yield word

        self._support, self._asupport, self._failing, self._streaming = support, asupport, failing, streaming

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self._support(f"Where is order A1? {marker}", marker, tag)

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return await self._asupport(f"Where is order A1? {marker}", marker, tag)

    def run_with_ids(self, session: Any = None, user: Any = None) -> Any:
        with otel_agents.using_session(session), otel_agents.using_user(user):
            return self.run()

    def run_failing(self) -> None:
        from tests.contract.kit import MARKER
        self._failing(f"A1-{MARKER}")

    def run_stream(self, consume: bool) -> None:
        stream = self._streaming("Where is order A1?")
        if consume:
            assert "".join(stream) == "Order A1 is shipped."
        else:
            next(iter(stream))
            del stream

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(*_: Any, **__: Any) -> Any:
            raise RuntimeError("content pipeline broke")
        # every content value's first step (plain JSON data no longer goes through to_jsonable)
        monkeypatch.setattr(pipeline, "prepare", broken)

    def open_entries(self, instrumentor: Any) -> int:
        return len(span_module._OPEN)


class TestManualContract(ContractSuite):
    """X-1 … X-7 for decorated plain-Python code (see the kit)."""

    scenario_cls = ManualScenario

    def test_x4_uninstrument_only_ours(self, *args: Any, **kwargs: Any) -> None:
        pytest.skip("X-4 does not apply: decorators patch nothing, so there is nothing to uninstrument")

    @staticmethod
    def _assert_own_agent(scenario: ManualScenario, exporter: SnapshotExporter) -> None:
        agents = {s.trace_id: s for s in exporter.semantic("agent")}
        assert len(scenario.agents_seen) == 20
        for tag, agent in scenario.agents_seen:
            assert agent is not None, tag
            ctx = agent.span.get_span_context()
            assert agents[ctx.trace_id].span_id == ctx.span_id, f"run {tag}: another run's agent span"
            probe_traces = {s.get_span_context().trace_id for t, s in scenario.probes if t == tag}
            assert probe_traces == {ctx.trace_id}, f"run {tag}: current_agent_span() from another run"

    def test_x1_current_agent_span_gather(self, scenario: ManualScenario, instrumented: Any,
                                          exporter: SnapshotExporter) -> None:
        """X-1: with 20 runs at once (asyncio.gather), current_agent_span() in each run's tool is that run's span."""

        async def main() -> None:
            await asyncio.gather(*(scenario.arun(tag=f"run{i}") for i in range(20)))

        asyncio.run(main())
        self._assert_own_agent(scenario, exporter)

    def test_x1_current_agent_span_threads(self, scenario: ManualScenario, instrumented: Any,
                                           exporter: SnapshotExporter) -> None:
        """X-1: with 20 runs in a thread pool (contexts copied), each run sees its own agent span."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            futures = [pool.submit(contextvars.copy_context().run, scenario.run, "", f"run{i}") for i in range(20)]
            for f in futures:
                f.result()
        self._assert_own_agent(scenario, exporter)

    def test_x5_our_own_binding_failure(self, scenario: ManualScenario, instrumented: Any,
                                        exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch,
                                        caplog: pytest.LogCaptureFixture) -> None:
        """X-5: the decorators' own argument binding raising: the result is unchanged, spans end,
        one warning."""
        import logging

        from otel_agents._spans.guard import reset_reported_sites

        normal = scenario.run()
        exporter.clear()
        reset_reported_sites()

        def broken(*_: Any) -> Any:
            raise RuntimeError("binding broke")
        monkeypatch.setattr(manual._Arguments, "bind", broken)
        with caplog.at_level(logging.DEBUG, logger="otel_agents"):
            assert scenario.run() == normal
            assert scenario.run() == normal
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "manual.record_input" in warnings[0].getMessage()
        assert len(exporter.semantic()) == 6 and all(s.end_time for s in exporter.semantic())


class Point(pydantic.BaseModel):
    x: int
    label: str


@dataclasses.dataclass
class Box:
    width: float


def test_x6_odd_values_through_a_decorated_tool(exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    """X-6: a circular reference, a 5 MB string, bytes, a datetime, a Decimal, a set, a pydantic model,
    a dataclass, a dict with non-string keys and non-ASCII text as arguments and result: every attribute
    OTel-legal, JSON attributes valid after truncation, the big value cut with the marker, the rest kept."""
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "4096")
    circular: list[Any] = [1]
    circular.append(circular)
    odd = {
        "circular": circular, "bytes": b"\x00\xffraw", "when": datetime.datetime(2025, 3, 2, 10, 30),
        "amount": decimal.Decimal("12.50"), "tags": {"b", "a"}, "point": Point(x=1, label="p"),
        "box": Box(2.5), "keys": {1: "one", (2, 3): "tuple"}, "text": "ünïcødé ✓ 日本",
    }

    @otel_agents.tool
    def odd_tool(big: str, values: dict) -> dict:
        return {"echo": values, "size": len(big)}

    @otel_agents.agent
    def odd_agent(big: str) -> Any:
        return odd_tool(big, odd)

    result = odd_agent("x" * 5_000_000)
    assert result["size"] == 5_000_000
    spans = exporter.semantic()
    tool_span = next(s for s in spans if s.semantic_kind == "tool")
    assert tool_span.attributes["otel_agents.truncated"] is True
    for s in spans:
        for key, value in s.attributes.items():
            assert isinstance(value, (str, bool, int, float, tuple)), (key, type(value))
            if isinstance(value, str):
                assert len(value) <= 4096, (s.name, key, len(value))
            if key.endswith(".value") and s.attributes.get(key[:-6] + ".mime_type") == "application/json" or \
                    key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):
                json.loads(value)
    args = tool_span.json_attr("gen_ai.tool.call.arguments")
    values = args["values"]
    assert args["big"].startswith("xxx") and args["big"].endswith("…")
    assert values["when"] == "2025-03-02T10:30:00" and values["amount"] == "12.50"
    assert values["tags"] == ["a", "b"] and values["point"] == {"x": 1, "label": "p"}
    assert values["box"] == {"width": 2.5} and values["keys"]["1"] == "one"
    assert values["text"] == "ünïcødé ✓ 日本" and "circular" in json.dumps(values["circular"])
    result_json = tool_span.json_attr("gen_ai.tool.call.result")
    assert result_json["size"] == 5_000_000 and result_json["echo"]["amount"] == "12.50"
    assert not trace.get_current_span().get_span_context().is_valid, tree(spans)
