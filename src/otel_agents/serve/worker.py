"""The thread an agent runs in: one at a time, with its own event loop, never able to take the server down.

The server's event loop never runs agent code: each call is handed to a
:class:`Worker`, a daemon thread with a persistent event loop (so an async agent
keeps its loop-bound clients from one step to the next). Whatever the call
raises, ``BaseException`` included (``KeyboardInterrupt``, ``SystemExit``), comes
back as the :class:`Outcome`'s ``error``. A call that does not return in time is
abandoned: :meth:`Worker.abandon` cancels it when it is a coroutine and retires
the thread, which exits once the call returns; a new worker takes its place.
An agent's forked child that returns here (``os.fork()`` with no ``os._exit``) exits
(:func:`.fork.end_forked_child`): it never runs the server's code as a second server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import itertools
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable

from .fork import end_forked_child

_ids = itertools.count(1)


@dataclass
class Outcome:
    """What an agent call produced: ``value``, or ``error`` (any ``BaseException``) when it raised."""

    value: Any = None
    error: BaseException | None = None


async def _collect_async(agen: Any) -> list[Any]:
    return [item async for item in agen]


class Worker:
    """A daemon thread running calls one at a time, each with :func:`call` semantics."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name=f"ecp-agent-{next(_ids)}", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any,
               context: contextvars.Context | None = None) -> concurrent.futures.Future[Outcome]:
        """Queue ``fn(*args)``, run in ``context`` (a fresh copy of the thread's when ``None``; a
        coroutine it returns runs in that context too). The future's result is always an
        :class:`Outcome`: it never raises."""
        future: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        self._jobs.put((future, fn, args, context))
        return future

    def abandon(self) -> None:
        """Give up on the running call: cancel it if it is a coroutine, and let the thread exit after it."""
        task, loop = self._task, self._loop
        if task is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
        self.retire()

    def retire(self) -> None:
        """Let the thread exit once the queued calls are done."""
        self._jobs.put(None)

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            while (job := self._jobs.get()) is not None:
                future, fn, args, context = job
                if future.set_running_or_notify_cancel():
                    outcome = (context or contextvars.copy_context()).run(self._call, loop, fn, args)
                    if os.getpid() != self._pid:  # the agent forked and its child returned here
                        end_forked_child(outcome.error)
                    future.set_result(outcome)
        finally:
            with contextlib.suppress(Exception):
                loop.close()

    def _call(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple) -> Outcome:
        """``fn(*args)``; an awaitable is run, a (async) generator consumed and its text chunks joined."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                self._task = loop.create_task(_awaited(result))
                result = loop.run_until_complete(self._task)
            if inspect.isasyncgen(result):
                self._task = loop.create_task(_collect_async(result))
                result = loop.run_until_complete(self._task)
            elif inspect.isgenerator(result):
                result = list(result)
            if isinstance(result, list) and result and all(isinstance(x, str) for x in result):
                result = "".join(result)
            return Outcome(value=result)
        except BaseException as exc:  # noqa: BLE001 - an agent's KeyboardInterrupt/SystemExit is its own failure
            return Outcome(error=exc)
        finally:
            self._task = None


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
