"""A child forked while another thread of the parent holds the span layer's locks (run by tests/test_finalisers.py
in a process of its own): an instrumented LangGraph run in the child must complete, not wait forever for a lock
whose holder (a thread the child does not have) will never let it go. ``multiprocessing``'s default start method
on Linux (before Python 3.14) forks, at any moment, a program that runs agents in threads. Prints one JSON line
per process."""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents._spans import finalisers
import otel_agents._spans.guard  # noqa: F401 - the module (the package exports a function of that name)
from tests.langchain.test_contract import LangChainScenario

guard_module = sys.modules["otel_agents._spans.guard"]


def main() -> None:
    faulthandler.dump_traceback_later(60, exit=True)  # a hang in the parent prints every thread's stack, then exits
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    scenario = LangChainScenario()
    inst = scenario.instrumentor_cls()
    inst.instrument(tracer_provider=provider)
    scenario.run()  # every lazily made lock exists now
    exporter.clear()
    # Another thread in the middle of our bookkeeping at the moment of the fork: it holds every lock we made.
    locks = [lock for lock in (ref() for ref in tuple(finalisers._LOCKS)) if lock is not None]
    locks.append(guard_module._seen_lock)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        for lock in locks:
            lock.acquire()
        holding.set()
        release.wait()
        for lock in locks:
            lock.release()

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait()
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)  # the child has no faulthandler thread: a hang (a lock held at the fork) ends it, silent
        answer = scenario.run()
        guard_module.report_internal_error("fork.child", RuntimeError("logged in the child"))
        print(json.dumps({"process": "child", "answer": answer,
                          "spans": sorted(s.name for s in exporter.get_finished_spans())}), flush=True)
        os._exit(0)
    release.set()
    holder.join()
    os.waitpid(pid, 0)
    print(json.dumps({"process": "parent", "answer": scenario.run(), "locks": len(locks)}), flush=True)
    inst.uninstrument()


if __name__ == "__main__":
    sys.exit(main())
