"""Agno agents and teams for the tests, all over :class:`tests.agno.fakes.ScriptedModel` (offline, no key)."""

from __future__ import annotations

from typing import Any, Callable

from agno.agent import Agent
from agno.team import Team

from .fakes import Reply, ScriptedModel, tool_results, tool_then_answer


def lookup_order(order_id: str) -> str:
    """Look up an order by id."""
    return f"order {order_id} shipped"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def support_agent(script: Callable[[list], Reply] | None = None, tools: list | None = None, **kwargs: Any) -> Agent:
    """An agent "Support" with ``lookup_order``; by default it looks up A100, then answers with the result."""
    model = ScriptedModel(script=script or tool_then_answer("lookup_order", {"order_id": "A100"}))
    return Agent(name="Support", model=model, tools=tools if tools is not None else [lookup_order],
                 telemetry=False, **kwargs)


def desk_team(db: Any = None) -> Team:
    """AG-1's team "Desk": "Weather Agent" (one tool) and "News Agent"; the leader delegates to the weather agent."""
    weather = Agent(name="Weather Agent", id="weather-agent", telemetry=False, tools=[get_weather],
                    model=ScriptedModel(id="member-1", script=tool_then_answer("get_weather", {"city": "Paris"})))
    news = Agent(name="News Agent", id="news-agent", telemetry=False,
                 model=ScriptedModel(id="member-2", script=lambda m: Reply(text="no news")))

    def leader(messages: list) -> Reply:
        results = tool_results(messages[-3:])  # this run's delegation only (history is in the context)
        if not results or messages[-1].role != "tool":
            return Reply(tool_calls=[("delegate_task_to_member",
                                      {"member_id": "weather-agent", "task": "weather in Paris"})])
        return Reply(text=f"Desk says: {results[-1].content}")

    return Team(name="Desk", members=[weather, news], model=ScriptedModel(id="leader-1", script=leader),
                db=db, add_history_to_context=db is not None, telemetry=False)
