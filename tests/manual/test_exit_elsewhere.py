"""A reusable context manager of ours (``span(...)``, ``using_*``) exited in another thread or task than the one
that entered it (``__enter__``/``__exit__`` called by hand, an async fixture set up in one task and torn down in
another): the application never sees an error of ours, the span ends, and nothing is left current or set in
either context once both have exited."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Callable

import pytest
from opentelemetry import trace

import otel_agents
from otel_agents._spans import current_run_attributes


def _in_thread(fn: Callable[[], Any]) -> Any:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test asserts there is none
            out["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert "error" not in out, out
    return out["value"]


def _nothing_current() -> bool:
    return not trace.get_current_span().get_span_context().is_valid


@otel_agents.tool
def probe() -> str:
    return "ok"


def test_a_span_exited_on_another_thread_ends_there_and_detaches_at_home(exporter, caplog) -> None:
    step = otel_agents.span("chain", "step")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        step.__enter__()
        assert _in_thread(lambda: (step.__exit__(None, None, None), _nothing_current())) == (False, True)
    assert [s.name for s in exporter.spans] == ["step"]  # ended by that exit
    assert any("another thread or task" in r.getMessage() for r in caplog.records)
    assert not _nothing_current()  # the entering thread's context is its own to undo ...
    assert step.__exit__(None, None, None) is False  # ... at its own exit: no error, no second end
    assert _nothing_current() and [s.name for s in exporter.spans] == ["step"]


def test_the_newest_entry_is_ended_by_an_exit_that_entered_nothing(exporter) -> None:
    step = otel_agents.span("chain", "step")
    entered = threading.Event()
    release = threading.Event()

    def first() -> None:
        with step as s:
            s.set_attribute("who", "first")
            entered.set()
            release.wait(10)
    t = threading.Thread(target=first)
    t.start()
    entered.wait(10)
    with step as s:
        s.set_attribute("who", "second")
        _in_thread(lambda: step.__exit__(None, None, None))  # an exit from a thread that entered nothing
        assert [dict(x.attributes)["who"] for x in exporter.spans if x.name == "step"] == ["second"]
    release.set()
    t.join()
    assert sorted(dict(x.attributes)["who"] for x in exporter.spans if x.name == "step") == ["first", "second"]
    assert _nothing_current()


def test_a_run_context_exited_on_another_thread_is_undone_at_home_too(exporter) -> None:
    session = otel_agents.using_session("s-1")
    session.__enter__()
    assert _in_thread(lambda: session.__exit__(None, None, None)) is None
    assert current_run_attributes().get("session.id") == "s-1"  # not undone from the other thread ...
    session.__exit__(None, None, None)  # ... but here
    assert current_run_attributes() == {}
    probe()
    assert "session.id" not in exporter.spans[-1].attributes


def test_an_async_scope_torn_down_in_another_task(exporter) -> None:
    """An async fixture's shape: entered in one task, exited in a task that did not copy its context."""
    step = otel_agents.span("agent", "support")

    async def main() -> None:
        await asyncio.create_task(_enter())
        await asyncio.create_task(_exit())

    async def _enter() -> None:
        step.__enter__()

    async def _exit() -> None:
        step.__exit__(None, None, None)
        assert _nothing_current()
    asyncio.run(main())
    assert [s.name for s in exporter.spans] == ["invoke_agent support"]
    assert _nothing_current()


def test_an_exit_with_no_enter_anywhere_is_the_callers_error() -> None:
    with pytest.raises(IndexError, match="exit without a matching enter"):
        otel_agents.span("chain", "never").__exit__(None, None, None)
