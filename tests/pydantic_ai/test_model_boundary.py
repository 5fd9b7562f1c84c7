"""Where the model span opens (issue 40): at PydanticAI's model-call boundary, where its own instrumentation
records the prepared request, rather than in a ``prepare_model_request`` hook. Overriding that hook makes
PydanticAI copy every tool definition (JSON schemas included) for each attempt; the boundary gives the same
spans without the copy, and a release without it falls back to the hook."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import trace
from pydantic_ai import Agent, RetryModelRequest
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from otel_agents.instrumentors.pydantic_ai import _capability
from tests.spans import SnapshotExporter, SpanSnapshot, by_id

from .agents import Deps, lookup_agent


@dataclass(eq=False)
class _Offered(AbstractCapability[Any]):
    """Records the tool definitions each request offers, as the ``before_model_request`` hooks leave them."""

    seen: list[Any]

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        self.seen.append(list(request_context.model_request_parameters.function_tools))
        return request_context


def test_the_model_gets_the_requests_own_tool_definitions(instrumented: Any, exporter: SnapshotExporter) -> None:
    """With our capability in the run, the model is offered the very tool schemas the request carries
    (PydanticAI copies every tool definition, schema included, per attempt for a capability overriding
    ``prepare_model_request``), and each request still gets its model span, current while the model runs."""
    offered: list[Any] = []
    sent: list[Any] = []
    current: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(list(info.function_tools))
        current.append(trace.get_current_span().get_span_context().span_id)
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": "A1"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), name="offer", capabilities=[_Offered(offered)])

    @agent.tool_plain
    def lookup(query: str) -> str:
        """Look an order up."""
        return query

    assert agent.run_sync("where is A1?").output == "done"
    assert len(offered) == len(sent) == 2 and all(o for o in offered)
    assert all(s.parameters_json_schema is o.parameters_json_schema
               for want, got in zip(offered, sent) for s, o in zip(got, want))
    assert current == [s.span_id for s in exporter.semantic("model")]


def _shape(spans: list[SpanSnapshot]) -> list[tuple]:
    """The spans as a backend sees them, less ids and times: name, kind, parent's name, attributes, status,
    events (each in export order)."""
    ids = by_id(spans)
    return [(s.name, s.kind, ids[s.parent_id].name if s.parent_id in ids else None,
             {k: v for k, v in s.attributes.items() if k not in _FIRST_CHUNK}, s.status,
             s.status_description, s.events) for s in spans]


# A streamed request's time to first chunk: PydanticAI hands it over at the boundary only (a release without it
# gives none but the last response's, read when the run ends); times besides.
_FIRST_CHUNK = ("gen_ai.response.time_to_first_chunk", "langfuse.observation.completion_start_time")


@dataclass(eq=False)
class _RejectOnce(AbstractCapability[Any]):
    """Rejects the first response (another attempt at the same request, in the same model span)."""

    rejected: list[int]

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        if not self.rejected:
            self.rejected.append(1)
            raise RetryModelRequest()
        return response


def _runs(current: list[int]) -> None:
    deps = Deps(marker="A", probe=lambda _tag: current.append(trace.get_current_span().get_span_context().span_id))
    lookup_agent().run_sync("order 1", deps=deps, run_id="r1", conversation_id="c1",
                            model_settings={"temperature": 0.2})
    with lookup_agent().run_stream_sync("order 2", deps=deps, run_id="r2", conversation_id="c2") as streamed:
        streamed.get_output()
    lookup_agent().run_sync("order 3", deps=deps, run_id="r3", conversation_id="c3", capabilities=[_RejectOnce([])])


@pytest.mark.parametrize("content", [True, False])
def test_the_boundary_and_the_hook_give_the_same_spans(instrument: Any, exporter: SnapshotExporter,
                                                       monkeypatch: pytest.MonkeyPatch, content: bool) -> None:
    """The same runs (sync, streamed, an attempt a hook rejects) give the same spans, less ids and times, from
    the model-call boundary as from the ``prepare_model_request`` fallback of a release without it."""
    shapes = []
    for captures in (_capability._CAPTURES, None):
        monkeypatch.setattr(_capability, "_CAPTURES", captures)
        inst = instrument(capture_content=content)
        current: list[int] = []
        _runs(current)
        inst.uninstrument()
        assert current == [s.span_id for s in exporter.semantic("tool")]  # a tool sees its own span
        assert [s.semantic_kind for s in exporter.spans].count("model") == 6
        shapes.append(_shape(exporter.spans))
        exporter.clear()
    assert shapes[0] == shapes[1]


def test_the_fallback_opens_in_prepare_model_request(instrument: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the boundary hand-overs the capability overrides ``prepare_model_request`` (the fallback);
    with them it does not, so PydanticAI does not copy the tool definitions."""
    assert _capability.capability_type() is _capability.OtelAgentsCapability
    assert "prepare_model_request" not in vars(_capability.OtelAgentsCapability)
    monkeypatch.setattr(_capability, "_CAPTURES", None)
    assert _capability.capability_type() is _capability.OpensInPrepare


def test_a_wrapper_handing_on_another_request_context_keeps_the_model_span(instrumented: Any,
                                                                          exporter: SnapshotExporter) -> None:
    """A ``wrap_model_request`` outside ours that calls its handler with a copy of the request context hides the
    request from the model-call boundary (PydanticAI knows a request by its context object): the request still
    gets its model span, opened once the model has answered, with the run's other spans around it."""
    from dataclasses import replace

    @dataclass(eq=False)
    class Copying(AbstractCapability[Any]):
        async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
            return await handler(replace(request_context))

    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("hi")]),
                                model_name="fake-llm"), name="copying", capabilities=[Copying()])
    assert agent.run_sync("hello").output == "hi"
    (model,) = exporter.semantic("model")
    (run,) = exporter.semantic("agent")
    assert model.parent_id == run.span_id and model.end_time <= run.end_time
    assert model.name == "chat fake-llm"
    assert model.json_attr("gen_ai.output.messages")[0]["parts"] == [{"type": "text", "content": "hi"}]
