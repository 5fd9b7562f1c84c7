"""A child forked while a stream is watched (run by tests/test_finalisers.py in a process of its own): the child
must neither end the parent's stream (its span would be exported twice, once from each process) nor inherit the
parent's watchdog state; a stream of its own is watched by a watchdog of its own. Prints one JSON line per process."""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents._spans import Telemetry
from otel_agents.semconv import Kind
from otel_agents._spans.streams import WATCHDOG, watch_stream


def _ended(exporter: InMemorySpanExporter, name: str, limit_s: float = 10.0) -> bool:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if any(s.name == name for s in exporter.get_finished_spans()):
            return True
        time.sleep(0.01)
    return False


def main() -> None:
    faulthandler.dump_traceback_later(30, exit=True)  # a hang prints every thread's stack, then exits
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    t = Telemetry(provider, framework="test")
    parent = watch_stream(t.start_span(Kind.MODEL, "parent"), idle_timeout=0.5)  # held: a stream still open
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)  # the child has no faulthandler thread: a hang (a lock held at the fork) ends it, silent
        inherited = WATCHDOG.size()
        child = watch_stream(t.start_span(Kind.MODEL, "child"), idle_timeout=0.1)  # noqa: F841 - held, as parent
        child_ended = _ended(exporter, "chat child")
        time.sleep(1.0)  # past the parent stream's timeout: a watchdog holding it would have ended it here
        names = [s.name for s in exporter.get_finished_spans()]
        print(json.dumps({"process": "child", "inherited": inherited, "child_ended": child_ended, "spans": names}),
              flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    print(json.dumps({"process": "parent", "parent_ended": _ended(exporter, "chat parent"),
                      "spans": [s.name for s in exporter.get_finished_spans()]}), flush=True)
    assert parent is not None


if __name__ == "__main__":
    sys.exit(main())
