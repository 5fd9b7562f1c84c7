"""CrewAI cells: a crew of one agent and one task over a ``BaseLLM`` subclass (the ReAct shape of
``tests/crewai/fakes.py``'s ``ReactLLM``) answering from the matrix's script, reporting usage and finish
reason through CrewAI's own call-completed event as its provider classes do.

Stops: ``max_turns``: the model asks for the tool every turn, the agent has ``max_iter=1``: after one iteration
CrewAI forces a final answer from one more call, and what it returns is the run's output. (One iteration: a
second identical call would be refused by CrewAI as a repeated usage, not run.) ``guardrail``: the task's
``guardrail`` rejects the answer and ``guardrail_max_retries=0`` allows no retry: CrewAI raises."""

from __future__ import annotations

import json
from typing import Any

from crewai import Agent, Crew, Process, Task
from crewai.flow.flow import Flow, listen, start
from crewai.tools import tool
from crewai.events.types.llm_events import LLMCallType
from crewai.llms.base_llm import llm_call_context

from otel_agents.instrumentors.crewai import CrewAIInstrumentor
from tests.crewai.fakes import ReactLLM, _observation
from tests.matrix.truth import ANSWER, CITY, REJECTED, RUN, TOOL, Truth

INSTRUMENTOR = CrewAIInstrumentor
PLAN = "Look up the weather in Paris."


class TruthLLM(ReactLLM):
    truth: Any = None
    agent: str = ""  # a crew's member: its own calls count
    role: Any = None  # a member's own turn: ``truth -> Call`` (a planner's message)
    delegate: Any = None  # a delegating agent's first call: ``(tool, args)`` (the coworker delegation tool)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, from_task=from_task, from_agent=from_agent)
            if self.role is not None:
                call = self.role(self.truth)
            elif self.delegate is not None and self.truth.delegates(self.agent):
                call = self.truth.delegate(self.agent, *self.delegate)
            elif self.agent:
                call = self.truth.reply(self.agent)
            else:
                call = self.truth.reply(has_tool_result=_observation(messages) is not None)
            turn = call.turn
            if turn.is_tool_call:
                name, args = turn.tool_calls[0]
                text = f"Thought: I should use {name}.\nAction: {name}\nAction Input: {json.dumps(args)}"
            else:
                text = f"Thought: I now know the final answer\nFinal Answer: {turn.text}"
            u = turn.usage
            call.sent(finish="stop")
            self._emit_call_completed_event(response=text, call_type=LLMCallType.LLM_CALL, from_task=from_task,
                                            from_agent=from_agent, messages=messages, finish_reason="stop",
                                            usage={"prompt_tokens": u[0], "completion_tokens": u[1],
                                                   "total_tokens": sum(u)}, response_id="resp-1")
            return text


def _crew(truth: Truth, two: bool | str = False) -> Crew:
    seen: set[tuple[int, int]] = set()

    @tool(TOOL)
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        run = RUN.get()
        key = (run, sum(1 for c in truth.calls if c.run == run))
        if key in seen:  # CrewAI's own retries of a failed tool, within the one call the model made
            recorded = len(truth.tools)
            try:
                return truth.tool(city=city)
            finally:
                del truth.tools[recorded:]
        seen.add(key)
        return truth.tool(city=city)

    agent = Agent(role="Weather Clerk", goal="Answer weather questions", backstory="Knows the weather.",
                  llm=TruthLLM(truth=truth, agent="Weather Clerk" if two else ""), tools=[get_weather],
                  max_retry_limit=0, max_iter=1 if truth.ending == "max_turns" else 3)

    def whole_sentence(output):  # (CrewAI checks an annotated return against typing.Tuple[bool, Any])
        """output_retry: a bare word is rejected (CrewAI has the agent execute the task again)."""
        return (False, "Answer in a sentence.") if output.raw == REJECTED else (True, output.raw)

    guardrail = {"guardrail": whole_sentence, "guardrail_max_retries": 1} if truth.ending == "output_retry" else \
        {"guardrail": _no_answer, "guardrail_max_retries": 0} if truth.ending == "guardrail" else {}
    task = Task(agent=agent, description="What is the weather in {city}?" if two == "for_each" else
                f"What is the weather in {CITY}?", expected_output="The weather", name="weather", **guardrail)
    if two == "for_each":  # each input's kickoff starts a run of its own (a copy of the crew)
        return Crew(agents=[agent], tasks=[task], before_kickoff_callbacks=[_run_started(truth)])
    if not two:
        return Crew(agents=[agent], tasks=[task])
    if two == "hierarchical":
        # Multi-agent (Process.hierarchical): CrewAI's own manager agent ("Crew Manager", over ``manager_llm``)
        # delegates the task to the clerk, then answers
        args = {"task": f"What is the weather in {CITY}?", "context": "A customer asks.", "coworker": "Weather Clerk"}
        manager_llm = TruthLLM(truth=truth, agent="Crew Manager", delegate=("Delegate work to coworker", args))
        unassigned = Task(description=f"What is the weather in {CITY}?", expected_output="The weather",
                          name="weather")
        truth.agents = [("Crew Manager", None), ("Weather Clerk", "Crew Manager")]
        truth.top = "Crew Manager"
        return Crew(agents=[agent], tasks=[unassigned], process=Process.hierarchical, manager_llm=manager_llm)
    if two == "delegation":
        # Multi-agent (delegation): the lead's task; it delegates to the clerk (CrewAI's "Delegate work to
        # coworker" tool, which runs the clerk), then answers
        args = {"task": f"What is the weather in {CITY}?", "context": "A customer asks.", "coworker": "Weather Clerk"}
        lead = Agent(role="Support Lead", goal="Answer customers", backstory="Delegates.", allow_delegation=True,
                     max_retry_limit=0, max_iter=3,
                     llm=TruthLLM(truth=truth, agent="Support Lead", delegate=("Delegate work to coworker", args)))
        ticket = Task(agent=lead, description=f"A customer asks about the weather in {CITY}.",
                      expected_output="An answer", name="ticket")
        truth.agents = [("Support Lead", None), ("Weather Clerk", "Support Lead")]
        truth.top = "Support Lead"
        return Crew(agents=[lead, agent], tasks=[ticket])
    # Multi-agent (sequential): a planner's task, then the clerk's, whose answer is the crew's output
    planner = Agent(role="Planner", goal="Plan the work", backstory="Plans.", max_retry_limit=0, max_iter=3,
                    llm=TruthLLM(truth=truth, agent="Planner", role=lambda t: t.say("Planner", PLAN)))
    plan = Task(agent=planner, description="Plan the weather report.", expected_output="A plan", name="plan")
    truth.agents = [("Planner", None), ("Weather Clerk", None)]  # (the crew is a workflow span)
    return Crew(agents=[planner, agent], tasks=[plan, task])


def _run_started(truth: Truth) -> Any:
    def started(inputs: dict) -> dict:
        truth.run_started()
        return inputs
    return started


INPUTS = [{"city": CITY}, {"city": CITY}]
"""``kickoff_for_each``'s inputs: two runs of the crew."""


class WeatherFlow(Flow):
    """A flow (CrewAI's docs' shape): its start method takes the question, the method listening to it kicks off the
    crew and returns its answer, which is the flow's output."""

    truth: Any = None

    @start()
    def question(self) -> str:
        return CITY

    @listen(question)
    def answer(self, city: str) -> str:
        return _forced(self.truth, _crew(self.truth).kickoff()).raw


class AsyncWeatherFlow(Flow):
    """The same flow with an async step: it awaits the crew's ``akickoff``."""

    truth: Any = None

    @start()
    def question(self) -> str:
        return CITY

    @listen(question)
    async def answer(self, city: str) -> str:
        return (await _crew(self.truth).akickoff()).raw


def _flow(truth: Truth, cls: type = WeatherFlow) -> Flow:
    flow = cls()
    flow.truth = truth
    return flow


def _no_answer(output: Any):  # (CrewAI checks an annotated return type: none here)
    """The ``guardrail`` cell's task guardrail: it rejects the answer."""
    return (False, "answers about the weather are blocked") if ANSWER in output.raw else (True, output.raw)


def _forced(truth: Truth, result: Any) -> Any:
    """``max_turns``: the answer CrewAI forced is the run's output."""
    if truth.ending == "max_turns":
        truth.output = result.raw
    return result


async def _forced_async(truth: Truth, run: Any) -> Any:
    return _forced(truth, await run)


ENTRIES = {
    "Crew.kickoff": lambda t: (lambda: _forced(t, _crew(t).kickoff()), lambda r: r.raw),
    "Crew.kickoff_async": lambda t: (lambda: _forced_async(t, _crew(t).kickoff_async()), lambda r: r.raw),
    "Crew.akickoff": lambda t: (lambda: _crew(t).akickoff(), lambda r: r.raw),
    "two agents Crew.kickoff": lambda t: (lambda: _crew(t, True).kickoff(), lambda r: r.raw),
    "two agents Crew.akickoff": lambda t: (lambda: _crew(t, True).akickoff(), lambda r: r.raw),
    "delegation Crew.kickoff": lambda t: (lambda: _crew(t, "delegation").kickoff(), lambda r: r.raw),
    "Process.hierarchical Crew.kickoff": lambda t: (lambda: _crew(t, "hierarchical").kickoff(), lambda r: r.raw),
    "Crew.kickoff_for_each": lambda t: (lambda: _crew(t, "for_each").kickoff_for_each(INPUTS), _raws),
    "Crew.kickoff_for_each_async": lambda t: (lambda: _crew(t, "for_each").kickoff_for_each_async(INPUTS), _raws),
    "Crew.akickoff_for_each": lambda t: (lambda: _crew(t, "for_each").akickoff_for_each(INPUTS), _raws),
    "Flow.kickoff": lambda t: (lambda: _flow(t).kickoff(), lambda r: r),
    "Flow.kickoff_async": lambda t: (lambda: _flow(t).kickoff_async(), lambda r: r),
    "Flow.akickoff": lambda t: (lambda: _flow(t).akickoff(), lambda r: r),
    "Flow.kickoff_async (async step, Crew.akickoff)": lambda t: (lambda: _flow(t, AsyncWeatherFlow).kickoff_async(),
                                                               lambda r: r),
}


def _raws(results: Any) -> list:
    return [r.raw for r in results]
