"""Our capability among the agent's own capabilities (issue 40): an agent's first run adds it there, so later runs
are not composed anew (PydanticAI composes a run's capabilities, and collects what they contribute, for every run
that brings one). A run bringing capabilities of its own, an ``override()`` of the agent's, or an agent that
cannot take it gets it per run, as before; the spans are the same either way."""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering
from pydantic_ai.capabilities.abstract import leaf_capabilities

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor, _capability, _wiring
from otel_agents.semconv import attributes as A
from tests.spans import SnapshotExporter, SpanSnapshot, parent_of, tree

from .agents import Deps, lookup_agent


def ours_in(agent: Agent) -> int:
    """How many capabilities of ours the agent's own capabilities hold (our combination of them, or ours among
    them)."""
    root = agent.root_capability
    return isinstance(root, _capability.ObservedCapabilities) \
        + sum(leaf.id == "otel_agents" for leaf in leaf_capabilities(root))


@dataclass(eq=False)
class RootSeen(AbstractCapability[Any]):
    """Records each run's root capability (the agent's own, or one PydanticAI composed for the run)."""

    roots: list[Any]

    async def before_run(self, ctx: Any) -> None:
        self.roots.append(ctx.root_capability)


@dataclass(eq=False)
class CurrentAtTool(AbstractCapability[Any]):
    """Records the span current when its ``wrap_tool_execute`` runs (ours inside it: the agent span)."""

    names: list[str]

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        self.names.append(getattr(trace.get_current_span(), "name", ""))
        return await handler(args)


@dataclass(eq=False)
class Yielding(AbstractCapability[Any]):
    """Lets the other runs of the event loop go on between the start of a request and the model call."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        await asyncio.sleep(0.001)
        return request_context


def one_run(spans: list[SpanSnapshot]) -> list[str]:
    return [s.name for s in spans]


RUN = ["invoke_agent support", "chat fake-llm", "execute_tool lookup", "chat fake-llm"]


def test_later_runs_use_the_agents_own_capabilities(instrumented: Any, exporter: SnapshotExporter) -> None:
    """After its first run the agent holds our capability once, and its runs use the agent's capabilities as
    they are (not a root composed for the run); uninstrument() gives the agent its own capabilities back."""
    roots: list[Any] = []
    agent = lookup_agent(capabilities=[RootSeen(roots)])
    own = agent.root_capability
    for marker in ("a", "b"):
        agent.run_sync(f"order {marker}", deps=Deps(marker=marker))
    assert ours_in(agent) == 1
    assert roots[1] is agent.root_capability
    assert one_run(exporter.semantic()) == RUN * 2, tree(exporter.semantic())
    instrumented.uninstrument()
    assert agent.root_capability is own
    exporter.clear()
    agent.run_sync("order c", deps=Deps(marker="c"))
    assert exporter.spans == []


def test_an_agent_made_before_instrument_is_recorded(provider: Any, exporter: SnapshotExporter) -> None:
    """An agent constructed (and run) before instrument(): its next runs are recorded, once each."""
    agent = lookup_agent()
    agent.run_sync("order 0", deps=Deps())
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        agent.run_sync("order 1", deps=Deps())
        agent.run_sync("order 2", deps=Deps())
    finally:
        inst.uninstrument()
    assert one_run(exporter.semantic()) == RUN * 2
    assert ours_in(agent) == 0


def _check_own_runs(exporter: SnapshotExporter, markers: list[str]) -> None:
    spans = exporter.semantic()
    runs = [s for s in spans if s.semantic_kind == "agent"]
    assert len(runs) == len(markers)
    for run in runs:
        children = [s for s in spans if s.parent_id == run.span_id]
        assert [s.semantic_kind for s in children] == ["model", "tool", "model"], tree(spans)
        marker = run.attributes[A.INPUT_VALUE].split()[-1]
        (tool,) = [s for s in children if s.semantic_kind == "tool"]
        assert tool.attributes[A.GEN_AI_TOOL_CALL_RESULT] == f"found {marker}"
        for model in children[::2]:  # each request's span has its own run's messages
            assert f"order {marker}" in model.attributes[A.GEN_AI_INPUT_MESSAGES]
    assert sorted(r.attributes[A.INPUT_VALUE].split()[-1] for r in runs) == sorted(markers)


@pytest.mark.parametrize("boundary", [True, False])
def test_concurrent_runs_of_one_agent_keep_their_own_spans(boundary: bool, instrument: Any, exporter: SnapshotExporter,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """One capability instance serves every run: runs of one agent in one event loop and in threads, at the
    same time, each get their own model and tool spans under their own agent span (with the model span opened
    at the model-call boundary, and in ``prepare_model_request`` on a release without it)."""
    if not boundary:
        monkeypatch.setattr(_capability, "_CAPTURES", None)
    instrumented = instrument()
    agent = lookup_agent(capabilities=[Yielding()])

    async def together() -> None:
        await asyncio.gather(*(agent.run(f"order t{i}", deps=Deps(marker=f"t{i}")) for i in range(4)))

    asyncio.run(together())
    _check_own_runs(exporter, [f"t{i}" for i in range(4)])
    exporter.clear()
    threads = [threading.Thread(target=agent.run_sync, args=(f"order s{i}",), kwargs={"deps": Deps(marker=f"s{i}")})
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check_own_runs(exporter, [f"s{i}" for i in range(3)])
    assert instrumented.open_runs() == 0


def test_run_capabilities_stay_outside_ours(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A run bringing capabilities gets ours after them, as before (PydanticAI keeps only the run's copy of
    ours): their hooks wrap ours, so the tool's span is not yet current in theirs; each run is recorded once."""
    names: list[str] = []
    agent = lookup_agent()
    agent.run_sync("order 1", deps=Deps(marker="1"))
    agent.run_sync("order 2", deps=Deps(marker="2"), capabilities=[CurrentAtTool(names)])
    agent.run_sync("order 3", deps=Deps(marker="3"))
    assert names == ["invoke_agent support"]
    _check_own_runs(exporter, ["1", "2", "3"])
    assert ours_in(agent) == 1


def test_a_copy_is_recorded_once_and_not_after_uninstrument(provider: Any, exporter: SnapshotExporter) -> None:
    """An agent copied while it holds our capability (an ``Agent`` cannot be deep-copied, its capabilities can):
    the copy's runs are recorded once; after uninstrument() the capability it kept is inert; instrumenting again
    records them once more."""
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    agent = lookup_agent()
    agent.run_sync("order 1", deps=Deps(marker="1"))
    assert ours_in(agent) == 1 and copy.deepcopy(agent.root_capability) is not None
    twin = copy.copy(agent)
    twin.run_sync("order 2", deps=Deps(marker="2"))
    _check_own_runs(exporter, ["1", "2"])
    inst.uninstrument()
    exporter.clear()
    twin.run_sync("order 3", deps=Deps(marker="3"))
    agent.run_sync("order 4", deps=Deps(marker="4"))
    assert exporter.spans == []
    inst.instrument(tracer_provider=provider)
    try:
        twin.run_sync("order 5", deps=Deps(marker="5"))
        twin.run_sync("order 6", deps=Deps(marker="6"), capabilities=[CurrentAtTool([])])
    finally:
        inst.uninstrument()
    _check_own_runs(exporter, ["5", "6"])


def test_a_run_in_flight_at_uninstrument_is_recorded_whole(instrumented: Any, exporter: SnapshotExporter) -> None:
    """uninstrument() while an ``iter()`` run is half-way: that run's spans are all there and ended; the agent's
    next run records nothing."""
    agent = lookup_agent()

    async def main() -> str:
        async with agent.iter("order 7", deps=Deps(marker="7")) as run:
            node, i = run.next_node, 0
            while type(node).__name__ != "End":
                if i == 2:
                    instrumented.uninstrument()
                node = await run.next(node)
                i += 1
        return run.result.output

    assert asyncio.run(main()) == "answer: found 7"
    _check_own_runs(exporter, ["7"])
    assert ours_in(agent) == 0
    exporter.clear()
    agent.run_sync("order 8", deps=Deps(marker="8"))
    assert exporter.spans == []


def test_a_suppressed_run_of_an_agent_holding_ours_records_nothing(instrumented: Any,
                                                                   exporter: SnapshotExporter) -> None:
    """The agent holds our capability; a run of it inside suppress_instrumentation() makes no span at all, and
    the runs around it are recorded as before."""
    agent = lookup_agent()
    agent.run_sync("order 1", deps=Deps(marker="1"))
    with suppress_instrumentation():
        agent.run_sync("order 2", deps=Deps(marker="2"))
    agent.run_sync("order 3", deps=Deps(marker="3"))
    _check_own_runs(exporter, ["1", "3"])
    assert instrumented.open_runs() == 0


@dataclass(eq=False)
class Innermost(AbstractCapability[Any]):
    """A capability in PydanticAI's innermost ordering tier, where durability capabilities are."""

    def get_ordering(self) -> CapabilityOrdering:
        return CapabilityOrdering(position="innermost")


def test_an_agent_with_an_innermost_capability_gets_ours_per_run(instrumented: Any,
                                                                 exporter: SnapshotExporter) -> None:
    """Durability capabilities bind the agent's capabilities once, in their own tier: such an agent's own
    capabilities are left alone and each run gets ours, recorded as usual."""
    agent = lookup_agent(capabilities=[Innermost()])
    own = agent.root_capability
    agent.run_sync("order 1", deps=Deps(marker="1"))
    agent.run_sync("order 2", deps=Deps(marker="2"))
    assert agent.root_capability is own
    _check_own_runs(exporter, ["1", "2"])


@pytest.mark.skipif("capabilities" not in inspect.signature(Agent.override).parameters,
                    reason="override(capabilities=...) is newer than this pydantic-ai")
def test_an_override_of_the_agents_capabilities_gets_ours_per_run(instrumented: Any,
                                                                  exporter: SnapshotExporter) -> None:
    """Under ``override(capabilities=...)`` the agent's own capabilities (and ours among them) are not used:
    the run gets ours per run; before and after, the agent's copy records."""
    names: list[str] = []
    agent = lookup_agent()
    agent.run_sync("order 1", deps=Deps(marker="1"))
    with agent.override(capabilities=[CurrentAtTool(names)]):
        agent.run_sync("order 2", deps=Deps(marker="2"))
    agent.run_sync("order 3", deps=Deps(marker="3"))
    assert names == ["invoke_agent support"]
    _check_own_runs(exporter, ["1", "2", "3"])


def test_without_the_agent_hook_every_run_gets_ours(provider: Any, exporter: SnapshotExporter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A pydantic-ai without ``Agent._effective_root_capability``: the agent's capabilities are left alone and
    each run gets ours, with the same spans."""
    shapes = []
    for hook in (True, False):
        monkeypatch.setattr(_wiring, "AGENT_LEVEL", hook)
        inst = PydanticAIInstrumentor()
        inst.instrument(tracer_provider=provider)
        try:
            agent = lookup_agent()
            own = agent.root_capability
            agent.run_sync("order 1", deps=Deps(marker="1"))
            agent.run_sync("order 2", deps=Deps(marker="2"))
            assert (agent.root_capability is own) is not hook
        finally:
            inst.uninstrument()
        spans = exporter.semantic()
        shapes.append([(s.name, parent_of(s, spans).name if s.parent_id else None,
                        {k: v for k, v in s.attributes.items()}) for s in spans])
        exporter.clear()
    assert shapes[0] == shapes[1]


@dataclass(eq=False)
class BoundToAgent(AbstractCapability[Any]):
    """Keeps the agent it is bound to (``for_agent`` may return an agent-bound copy)."""

    agent: Any = None

    def for_agent(self, agent: Any) -> "BoundToAgent":
        return BoundToAgent(agent=agent)


def test_an_agent_holding_ours_is_collected(instrumented: Any, exporter: SnapshotExporter) -> None:
    """What we keep about the agents holding our capability does not keep them alive, even when their own
    capabilities refer to them (bounded bookkeeping)."""
    import gc
    import weakref

    refs = []
    for i in range(3):
        agent = lookup_agent(capabilities=[BoundToAgent()])
        agent.run_sync(f"order {i}", deps=Deps(marker=str(i)))
        assert ours_in(agent) == 1
        refs.append(weakref.ref(agent))
    del agent
    # run_sync reuses the thread's event loop: a callback the last run scheduled as the loop stopped (anyio's task
    # group tidying up) waits there, holding that run's frames, until the loop runs again (one CI run of 2026-12-08
    # kept the last agent alive, never reproduced alone): run it once, as the next run_sync would
    asyncio.get_event_loop().run_until_complete(asyncio.sleep(0))
    gc.collect()
    alive = [ref() for ref in refs]
    assert alive == [None, None, None], [sorted({type(r).__qualname__ for r in gc.get_referrers(a)}) for a in alive
                                         if a is not None]
    del alive
    assert len(exporter.semantic("agent")) == 3


def test_pydantic_ai_dispatches_no_hook_to_ours(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Once the agent holds ours, a run's root capability is the agent's own capabilities with our hooks on their
    combination: none of its capabilities is ours, so PydanticAI's dispatch of every hook to every capability (a
    copy of the run context each) has nothing more to do for ours; the spans are as before."""
    roots: list[Any] = []
    agent = lookup_agent(capabilities=[RootSeen(roots)])
    own = leaf_capabilities(agent.root_capability)
    for marker in ("a", "b"):
        agent.run_sync(f"order {marker}", deps=Deps(marker=marker))
    assert isinstance(roots[1], _capability.ObservedCapabilities) and roots[1] is agent.root_capability
    assert leaf_capabilities(roots[1]) == own
    assert one_run(exporter.semantic()) == RUN * 2, tree(exporter.semantic())


def test_the_agents_own_wrappers_stay_outside_ours(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Our hooks on the combination sit where ours sat as the agent's last capability: inside the agent's own
    ``wrap_*`` hooks (the tool's span is not yet current in theirs, the agent's is)."""
    names: list[str] = []
    agent = lookup_agent(capabilities=[CurrentAtTool(names)])
    for marker in ("1", "2"):
        agent.run_sync(f"order {marker}", deps=Deps(marker=marker))
    assert names == ["invoke_agent support"] * 2
    _check_own_runs(exporter, ["1", "2"])


def _compose(agent: Agent, how: str) -> Any:
    """A run PydanticAI composes a root capability for (merging the agent's combination in): the context manager
    to run it in, and the arguments of the run."""
    import contextlib

    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_ai.models.instrumented import InstrumentationSettings, InstrumentedModel

    settings = InstrumentationSettings(tracer_provider=TracerProvider())  # pydantic-ai's spans go nowhere
    if how == "instrument_all":
        Agent.instrument_all(settings)
    elif how == "agent.instrument":
        agent.instrument = settings
    elif how == "run model":
        return contextlib.nullcontext(), {"model": InstrumentedModel(agent.model, settings)}
    elif how == "override model":
        return agent.override(model=InstrumentedModel(agent.model, settings)), {}
    elif how == "event hook":
        @agent.on_event
        async def seen(ctx: Any, event: Any) -> None:
            pass
    return contextlib.nullcontext(), {}


@pytest.mark.parametrize("how", ["instrument_all", "agent.instrument", "run model", "override model", "event hook"])
def test_a_run_pydantic_ai_composes_gets_ours_per_run(how: str, instrumented: Any,
                                                      exporter: SnapshotExporter) -> None:
    """A run whose root PydanticAI composes from the agent's capabilities and its instrumentation or event hooks
    (merging in our combination, whose hooks then never run) gets ours per run: every run recorded, once."""
    agent = lookup_agent()
    agent.run_sync("order 1", deps=Deps(marker="1"))
    assert ours_in(agent) == 1
    context, arguments = _compose(agent, how)
    with context:
        agent.run_sync("order 2", deps=Deps(marker="2"), **arguments)
    agent.instrument = None
    Agent.instrument_all(False)
    agent.run_sync("order 3", deps=Deps(marker="3"))
    _check_own_runs(exporter, ["1", "2", "3"])


@dataclass(eq=False)
class ModelSupplier(RootSeen):
    """A capability that can supply the agent's model (it makes no selection): PydanticAI may compose such an
    agent's runs for the ``InstrumentedModel`` it could supply."""

    def get_model(self) -> Any:
        return None


@pytest.mark.parametrize("how", ["instrument_all", "agent.instrument", "agent model", "event hook", "model supplier"])
def test_an_agent_composed_from_its_first_run_holds_ours_among_its_own(how: str, instrumented: Any,
                                                                       exporter: SnapshotExporter) -> None:
    """An agent whose runs PydanticAI composes from the first (its instrumentation on, an ``InstrumentedModel``
    as the agent's model, event hooks, a capability that can supply the model) gets ours among its own capabilities, as a leaf the composed root keeps:
    its runs bring no capability of ours to be composed once more (issue 40: +0.71M instructions a run), and
    each run is recorded once, composed or not."""
    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_ai.models.instrumented import InstrumentationSettings, InstrumentedModel

    roots: list[Any] = []
    agent = lookup_agent(capabilities=[(ModelSupplier if how == "model supplier" else RootSeen)(roots)])
    model = agent.model
    if how == "model supplier":
        pass
    elif how == "agent model":
        agent.model = InstrumentedModel(model, InstrumentationSettings(tracer_provider=TracerProvider()))
    else:
        _compose(agent, how)
    agent.run_sync("order 1", deps=Deps(marker="1"))
    agent.run_sync("order 2", deps=Deps(marker="2"))
    assert ours_in(agent) == 1 and not isinstance(agent.root_capability, _capability.ObservedCapabilities)
    assert instrumented._installation.agents.holds(agent, {})  # no capability of ours for the run
    assert [sum(leaf.id == "otel_agents" for leaf in leaf_capabilities(root)) for root in roots] == [1, 1]
    agent.instrument = None
    agent.model = model
    Agent.instrument_all(False)
    agent.run_sync("order 3", deps=Deps(marker="3"))
    _check_own_runs(exporter, ["1", "2", "3"])
