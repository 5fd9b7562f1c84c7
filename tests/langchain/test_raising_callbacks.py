"""A callback handler of the user's with ``raise_error = True`` that raises (a guardrail refusing a prompt, an
audit hook failing): LangChain propagates the exception out of the dispatch of that event, so the handlers after
it never see it, and the run reports no end. Whatever the order our handler ran in, the run's span ends, with the
exception the caller got, and nothing stays open (uninstrumented, the caller gets the same exception)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage

from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph, get_weather
from tests.spans import SnapshotExporter, tree


class Refused(Exception):
    """The user's handler's exception."""


def _raising_handler(event: str) -> BaseCallbackHandler:
    """A handler raising :class:`Refused` at ``event`` of the outermost run only."""

    class Guardrail(BaseCallbackHandler):
        raise_error = True

    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is None:
            raise Refused(event)

    setattr(Guardrail, event, refuse)
    return Guardrail()


def _run(target: str, aio: bool, handler: BaseCallbackHandler) -> None:
    config = {"callbacks": [handler]}
    if target == "prompt":  # a run folded into its parent: no span, an entry in the fold map
        from langchain_core.prompts import ChatPromptTemplate

        runnable, request = ChatPromptTemplate.from_template("Weather in {city}?"), {"city": "Paris"}
    elif target == "graph":
        graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
        request: Any = {"messages": [HumanMessage("Paris")]}
        runnable: Any = graph
    else:
        runnable, request = ToolCallingChatModel(tool=None), "hi"
    if aio:
        asyncio.run(runnable.ainvoke(request, config))
    else:
        runnable.invoke(request, config)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("target, event", [("graph", "on_chain_start"), ("graph", "on_chain_end"),
                                           ("prompt", "on_chain_start"),
                                           ("model", "on_chat_model_start"), ("model", "on_llm_end")])
def test_a_raising_user_callback_ends_the_run(instrumentor: Any, exporter: SnapshotExporter, target: str,
                                              event: str, aio: bool) -> None:
    with pytest.raises(Refused):
        _run(target, aio, _raising_handler(event))
    assert instrumentor.handler.open_entries() == 0, "the run's span was left open"
    spans = exporter.semantic()
    assert all(s.end_time for s in spans), tree(spans)
    if not spans:  # the user's handler ran before ours, at the start: no run was opened
        assert event.endswith("_start")
        return
    root = next(s for s in spans if s.parent_id is None)
    if root.status.name != "ERROR":  # our handler ran before the user's: the run had ended, truthfully
        assert event.endswith("_end"), tree(spans)
    else:
        assert root.attributes["error.type"].endswith("Refused")
