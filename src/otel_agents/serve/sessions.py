"""Sessions of the Streamable HTTP transport (MCP 2025-06-18, "Session Management", which ECP follows).

``agent/initialize`` without an ``Mcp-Session-Id`` header opens a session; its id
goes back in that header, and requests that carry it run against that session's
own agent (a class or factory target makes one per session; a shared agent object
or an async function is shared; a sync function runs in the session's own thread).
A request carrying an unknown or ended id is answered ``404`` (the client starts
over with ``agent/initialize``); ``DELETE`` ends a session. Requests without the
header (ecp-runtime 0.10 sends none) use one default session, as a single-agent
server would.

Sessions are bounded: at most ``max_sessions`` (the least recently used idle one
is ended to make room; when all are busy, opening one fails) and each ends after
``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from typing import Callable

from .session import AgentRunner, ECPSession, Tracing, shares_one_runner
from .target import Target

DEFAULT_MAX_SESSIONS = 256
DEFAULT_SESSION_IDLE_TIMEOUT = 900.0  # seconds


class SessionsFull(Exception):
    """Every session is busy running a step: no room for a new one."""


class SessionManager:
    """Session id → :class:`ECPSession`, bounded in number and idle time.

    Args:
        target: the agent.
        tracing: the tracing all sessions share.
        name: the agent name ``agent/initialize`` reports.
        step_timeout: seconds, per step (see :class:`ECPSession`).
        max_sessions: sessions open at once, the default session not counted.
        idle_timeout: seconds without a request after which a session ends.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, target: Target, tracing: Tracing, name: str | None = None, *,
                 step_timeout: float | None = None, max_sessions: int = DEFAULT_MAX_SESSIONS,
                 idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.target = target
        self.tracing = tracing
        self.name = name
        self.step_timeout = step_timeout
        self.max_sessions = max(1, max_sessions)
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._shared = AgentRunner(target) if shares_one_runner(target) else None
        self._sessions: OrderedDict[str, tuple[ECPSession, float]] = OrderedDict()  # least recently used first
        self.default = self._new_session()

    def _new_session(self) -> ECPSession:
        return ECPSession(self.target, name=self.name, step_timeout=self.step_timeout, tracing=self.tracing,
                          runner=self._shared or AgentRunner(self.target))

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self) -> tuple[str, ECPSession]:
        """A new session and its id (a visible-ASCII token, as the transport requires).

        Raises:
            SessionsFull: ``max_sessions`` are open and every one is running a step.
        """
        self.reap()
        while len(self._sessions) >= self.max_sessions:
            idle = next((sid for sid, (s, _) in self._sessions.items() if not s.runner.lock.locked()), None)
            if idle is None:
                raise SessionsFull(f"{len(self._sessions)} sessions open, all busy")
            self.end(idle)
        sid = secrets.token_urlsafe(24)
        session = self._new_session()
        self._sessions[sid] = (session, self._clock())
        return sid, session

    def get(self, sid: str) -> ECPSession | None:
        """The session, marked used now; ``None`` when unknown, ended or expired."""
        self.reap()
        entry = self._sessions.get(sid)
        if entry is None:
            return None
        self._sessions[sid] = (entry[0], self._clock())
        self._sessions.move_to_end(sid)
        return entry[0]

    def end(self, sid: str) -> bool:
        """End a session (its agent's thread exits after any call in flight); ``False`` when unknown."""
        entry = self._sessions.pop(sid, None)
        if entry is None:
            return False
        if entry[0].runner is not self._shared:
            entry[0].close()
        return True

    def reap(self) -> int:
        """End the sessions idle for longer than ``idle_timeout``; how many were ended."""
        cutoff = self._clock() - self.idle_timeout
        stale = [sid for sid, (s, used) in self._sessions.items() if used < cutoff and not s.runner.lock.locked()]
        for sid in stale:
            self.end(sid)
        return len(stale)

    def close(self) -> None:
        """End every session (:meth:`end`) and close the default one."""
        for sid in list(self._sessions):
            self.end(sid)
        self.default.close()
