"""A bounded map of open spans, for callback-style frameworks (run id → span).

Frameworks such as LangChain report a run's start and end in two callbacks,
sometimes on different threads; the span opened at the start waits here. The
map is capped in size and age: an entry that is pushed out (a framework that
never reported the end) has its span ended with ``otel_agents.span.evicted``,
so no span is ever leaked and memory stays flat. A forked child starts with an empty map. A span still open
when the interpreter exits (a stream the script broke out of and still holds, whose end the framework reports
only when the stream is finalised, after the tracer provider has shut down) is ended then, marked
``otel_agents.stream.abandoned``, before the provider shuts down.
"""

from __future__ import annotations

import atexit
import time
import weakref
from collections import OrderedDict
from typing import Any, Hashable

from ..semconv import attributes as A
from .finalisers import in_forked_child, new_lock
from .guard import guard
from .span import SemanticSpan

DEFAULT_MAX_SPANS = 10_000
DEFAULT_MAX_AGE_S = 3600.0
_NO_AGE_LIMIT = float("inf")


class SpanRegistry:
    """Open spans keyed by a framework's run id.

    Args:
        max_size: the most entries kept; the oldest is evicted past it.
        max_age_s: seconds after which an entry is evicted on the next insert.

    Counters (for tests and ``doctor``): ``opened``, ``closed``, ``evicted``; ``len()``
    is the number of entries open now.
    """

    def __init__(self, max_size: int = DEFAULT_MAX_SPANS, max_age_s: float = DEFAULT_MAX_AGE_S):
        self.max_size = max_size
        self.max_age_s = max_age_s
        self._lock = new_lock()
        self._at_exit = False  # _end_at_exit registered
        self._forget()
        in_forked_child(SpanRegistry._forget, self)

    def _forget(self) -> None:
        """No entries, counters at zero: a new registry, and a forked child's (the parent's open spans are the
        parent's to end: evicted or cleared here, they would be exported twice)."""
        self._entries: OrderedDict[Hashable, tuple[float, SemanticSpan, Any]] = OrderedDict()
        self.opened = 0
        self.closed = 0
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, key: Hashable, span: SemanticSpan, extra: Any = None) -> None:
        """Keep ``span`` (and any ``extra`` state) under ``key``; evicts old entries first."""
        max_age = self.max_age_s
        now = time.monotonic() if max_age != _NO_AGE_LIMIT else 0.0  # no age limit: no clock read per span
        # Evicted entries are let go after the lock: their extra state may be the last reference to an object
        # with a finaliser, which must not run under the lock (see .finalisers).
        evict: list[tuple[float, SemanticSpan, Any]] = []
        entries = self._entries
        with self._lock:
            old = entries.pop(key, None)
            if old is not None:
                evict.append(old)
            # (nothing to evict, without reading the oldest entry, when under the size and without an age limit)
            while entries and (max_age != _NO_AGE_LIMIT or len(entries) >= self.max_size):
                k = next(iter(entries))
                entry = entries[k]
                if len(entries) < self.max_size and now - entry[0] < max_age:
                    break
                del entries[k]
                evict.append(entry)
            entries[key] = (now, span, extra)
            self.opened += 1
            if evict:
                self.evicted += len(evict)
            if not self._at_exit:
                # Registered at the first span, after the tracer provider's own atexit shutdown (made before any
                # span): atexit runs the last registered first, so the spans still open end before that shutdown.
                self._at_exit = True
                atexit.register(_end_at_exit, weakref.ref(self))
        for _, s, _ in evict:
            s.set_attribute(A.OTEL_AGENTS_SPAN_EVICTED, True)
            s.end()

    def get(self, key: Hashable) -> SemanticSpan | None:
        """The span under ``key``, or ``None``."""
        entry = self._entries.get(key)
        return entry[1] if entry else None

    def get_extra(self, key: Hashable) -> Any:
        """The extra state stored with ``key``'s span, or ``None``."""
        entry = self._entries.get(key)
        return entry[2] if entry else None

    def pop(self, key: Hashable) -> SemanticSpan | None:
        """Remove and return the span under ``key`` (the caller ends it), or ``None``."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self.closed += 1
        return entry[1] if entry else None

    def pop_with_extra(self, key: Hashable) -> tuple[SemanticSpan | None, Any]:
        """Like :meth:`pop`, also returning the extra state."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self.closed += 1
        return (entry[1], entry[2]) if entry else (None, None)

    def pop_where(self, keep: Any) -> list[tuple[SemanticSpan, Any]]:
        """Remove and return, oldest first, every ``(span, extra)`` for which ``keep(extra)`` is true (the
        caller ends them): what a run that is over left open."""
        with self._lock:
            keys = [k for k, (_, _, extra) in self._entries.items() if keep(extra)]
            entries = [self._entries.pop(k) for k in keys]
            self.closed += len(entries)
        return [(span, extra) for _, span, extra in entries]

    def end_open(self) -> None:
        """End every open span as abandoned, the newest (a run's innermost) first, and forget them (at exit)."""
        with self._lock:
            entries = list(self._entries.values())  # let go after the lock, as in put
            self._entries.clear()
            self.closed += len(entries)
        for _, s, _ in reversed(entries):
            with guard("registry.exit"):
                s.mark_abandoned()
                s.end()

    def clear(self) -> None:
        """End every open span (as evicted) and forget them (used by ``uninstrument``)."""
        with self._lock:
            entries = list(self._entries.values())  # let go after the lock, as in put
            self._entries.clear()
            self.evicted += len(entries)
        for _, s, _ in entries:
            s.set_attribute(A.OTEL_AGENTS_SPAN_EVICTED, True)
            s.end()


def _end_at_exit(ref: "weakref.ref[SpanRegistry]") -> None:
    registry = ref()
    if registry is not None:
        registry.end_open()
