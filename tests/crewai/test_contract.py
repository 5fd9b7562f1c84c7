"""The cross-cutting cases X-1 … X-7 for CrewAI, through the contract kit."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from crewai import Agent, Crew, Task
from crewai.tools import tool

from otel_agents.instrumentors.crewai import CrewAIInstrumentor, _models
from tests.contract.kit import _INHERITED_LOOPS, ContractSuite, Scenario
from tests.crewai.fakes import FULL_USAGE, ReactLLM
from tests.spans import SpanSnapshot, parent_of, tree

# X-3 mixes runs whose models report full, partial and no usage.
_USAGES = [FULL_USAGE, {"completion_tokens": 7}, None]


class CrewAIScenario(Scenario):
    """A one-agent crew on the ReAct path: the model calls ``lookup_order``, then answers with its result.

    ``streams`` is off: ``Crew(stream=True)`` relays event-bus chunks while an
    ordinary kickoff runs on a thread underneath, and abandoning its iterator
    does not stop that run, so there is no stream of ours to abandon; the
    streamed kickoff is covered by ``test_crewai.py`` (CR-3).
    """

    instrumentor_cls = CrewAIInstrumentor
    kinds = ("chain", "agent", "model", "tool")
    streams = False

    def __init__(self) -> None:
        super().__init__()
        self._runs = 0

    def crew(self, marker: str = "", tag: str = "", *, fail: bool = False) -> Crew:
        scenario = self

        @tool("lookup_order")
        def lookup_order(order_id: str) -> str:
            """Look up an order by its id and return its status."""
            scenario.probe(tag)
            return scenario.result(f"Order {order_id}: shipped. {marker}")

        self._runs += 1
        llm = ReactLLM(fail=fail, usage=_USAGES[self._runs % len(_USAGES)])
        agent = Agent(role="Order Clerk", goal="Answer order questions", backstory=f"Knows every order. {marker}",
                      llm=llm, tools=[lookup_order], max_retry_limit=0)
        task = Task(name="order_status", description=f"What is the status of order A100? {marker}",
                    expected_output="The order's status", agent=agent)
        return Crew(agents=[agent], tasks=[task])

    def after_fork_in_child(self) -> None:
        """CrewAI's event bus (``crewai_event_bus``) starts a thread pool and an event-loop thread at its first
        event and keeps them: a forked child inherits the pool's count of idle workers but not the workers, so
        the next ``kickoff()`` waits forever for its ``CrewKickoffStartedEvent`` handlers (CrewAI's own, with
        or without us). CrewAI 1.15 has no public way to start them again; this private flag makes its next event
        do it (README, "Forking"). The bus's locks start free too: a worker of the parent's that held one at the
        fork (a run in flight) never releases it in the child. Its inherited event loop is kept, never closed here:
        it shares its epoll instance with the parent's (see ``_INHERITED_LOOPS``)."""
        from crewai.events.event_bus import crewai_event_bus as bus
        from crewai.utilities.rw_lock import RWLock

        _INHERITED_LOOPS.append(getattr(bus, "_loop", None))
        type(bus)._instance_lock = threading.RLock()
        bus._rwlock, bus._futures_lock, bus._pending_futures = RWLock(), threading.Lock(), set()
        bus._executor_initialized = False

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self.crew(marker, tag).kickoff().raw

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return (await self.crew(marker, tag).akickoff()).raw

    def run_failing(self) -> None:
        self.crew(fail=True).kickoff()

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(llm: Any) -> dict:
            raise AttributeError("'ReactLLM' object has no attribute 'temperature'")

        monkeypatch.setattr(_models, "_request_parameters", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return Crew, "kickoff"

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        """crew → agent → model/tool, each in direct parentage."""
        for s in spans:
            parent = parent_of(s, spans)
            expected = {"agent": "chain", "model": "agent", "tool": "agent"}.get(s.semantic_kind)
            if expected:
                assert parent is not None and parent.semantic_kind == expected, tree(spans)


class TestCrewAIContract(ContractSuite):
    """X-1 … X-7 on a real CrewAI crew over a scripted model."""

    scenario_cls = CrewAIScenario
