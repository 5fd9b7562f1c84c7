"""Finalisers that end an abandoned stream's span never deadlock (``otel_agents._spans.finalisers``).

Each case leaves an abandoned stream (or what a finaliser is attached to) in a reference cycle, then runs the
garbage collector while the thread holds one of our non-reentrant locks, as an allocation inside that lock does in
a real program (the ECP folding processor allocates in ``on_start`` under its lock; ``test_a_natural_collection``
gets there without forcing anything). Before the fix each case waited for itself forever; it runs in a subprocess
with a timeout, so this suite never hangs. Every span still ends, marked abandoned.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")

_PRELUDE = """
import asyncio, gc, sys, uuid
from types import SimpleNamespace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_agents._spans import Telemetry, wrap_stream
from otel_agents.exporters.ecp._processor import ECPFoldingProcessor
try:
    from otel_agents._spans.finalisers import settle
except ImportError:  # before the fix
    settle = lambda: None
gc.disable()  # the collection below is the only one: while the lock is held
tp = TracerProvider()
ecp = ECPFoldingProcessor()
exporter = InMemorySpanExporter()
tp.add_span_processor(ecp)
tp.add_span_processor(SimpleSpanProcessor(exporter))
t = Telemetry(tp, framework="test")
class Cycle:
    def __init__(self, **kw):
        self.__dict__.update(kw)
        self.me = self
"""

_CHECK = """
import faulthandler; faulthandler.dump_traceback_later(15, exit=True)  # a deadlock: exit with the stacks
with LOCK:
    gc.collect()
assert settle()
ended = [s for s in exporter.get_finished_spans() if s.attributes.get("otel_agents.stream.abandoned")]
print(len(ended), all(s.ended for s in SPANS))
"""

_CASES = {
    "wrap_stream sync (__del__)": """
span = t.start_span("model", "m")
s = Cycle(stream=wrap_stream(iter([1, 2, 3]), span)); next(s.stream); del s
SPANS, LOCK = [span], ecp._lock
""",
    "wrap_stream async (__del__)": """
async def agen():
    yield 1; yield 2
span = t.start_span("model", "m")
s = Cycle(stream=wrap_stream(agen(), span))
asyncio.run(s.stream.__anext__()); del s
SPANS, LOCK = [span], ecp._lock
""",
    "llama_index (weakref.finalize), under its registry's lock": """
from otel_agents.instrumentors.llama_index._streaming import ModelStreams
streams = ModelStreams()
span = t.start_span("model", "m")
s = Cycle(); streams.start("id-1", span, s); del s
SPANS, LOCK = [span], streams._open._lock
""",
    "google_adk (weakref.finalize), under its invocations' lock": """
from otel_agents.instrumentors.google_adk._hooks import Hooks
hooks = Hooks(t)
ctx = Cycle(invocation_id="inv-1", session=SimpleNamespace(id="s", user_id="u"), user_id="u")
hooks.before_run(ctx)
span = t.start_span("tool", "f")
hooks.invocations.get("inv-1").tools["c1"] = span
del ctx
SPANS, LOCK = [span], hooks.invocations._lock
""",
    "autogen_agentchat (__del__, no loop left)": """
from otel_agents.instrumentors.autogen_agentchat._streams import SpanStream
async def agen():
    yield 1; yield 2
span = t.start_span("agent", "a")
s = Cycle(stream=SpanStream(agen, lambda: (span, span.context()), lambda *a: None))
asyncio.run(s.stream.__anext__()); del s
SPANS, LOCK = [span], ecp._lock
""",
    "langchain (__del__)": """
from otel_agents.instrumentors.langchain import patches
from otel_agents.instrumentors.langchain.handler import SpanCallbackHandler, _Run
handler = SpanCallbackHandler(t)
patches._run_dropped = handler.run_dropped
span, rid = t.start_span("model", "m"), uuid.uuid4()
handler.spans.put(rid, span, _Run(None))
async def agen():
    yield 1; yield 2
run = patches._StreamRun(); run.run_id = rid
s = Cycle(stream=patches._ModelAsyncStream(agen(), run)); del s
SPANS, LOCK = [span], ecp._lock
""",
}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", list(_CASES))
def test_a_finaliser_run_by_the_collector_under_our_lock_ends_the_span(case) -> None:
    code = _PRELUDE + textwrap.dedent(_CASES[case]) + _CHECK
    done = _run(code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["1", "True"], done.stdout + done.stderr[-2000:]


def test_a_natural_collection_inside_the_folding_processors_lock() -> None:
    """No forcing: abandoned streams left in cycles while spans start and end under the ECP folding processor, at
    the default collection thresholds (this waited for itself within the first few hundred runs)."""
    code = _PRELUDE.replace("gc.disable()", "import faulthandler; faulthandler.dump_traceback_later(30, exit=True)")
    code += textwrap.dedent("""
    spans = []
    for i in range(3000):
        with t.span("agent", "a"):
            span = t.start_span("model", "m"); spans.append(span)
            s = Cycle(stream=wrap_stream(iter([1, 2, 3]), span)); next(s.stream); del s
    gc.collect()
    assert settle()
    print(all(s.ended for s in spans))
    """)
    done = _run(code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True"]


def test_a_lock_made_while_a_finaliser_looks_at_our_locks_does_not_lose_its_work() -> None:
    """A finaliser asks whether any of our locks is held while other threads make them (PydanticAI makes one a
    run): the set of locks changing under the look must not fail it, or its work (a span's end) is lost. The
    other threads' ``new_lock`` runs here at every line the look executes, where a thread switch could put it
    (before the fix: ``RuntimeError: Set changed size during iteration``, the work dropped)."""
    import sys

    from otel_agents._spans import finalisers

    kept = [finalisers.new_lock() for _ in range(8)]

    def switch(frame, event, arg):  # at each line: "another thread" makes a lock
        if event == "line" and len(kept) < 200:
            kept.append(finalisers.new_lock())
        return switch

    ran: list = []
    sys.settrace(switch)
    try:
        finalisers.from_finaliser(ran.append, "ended")
    finally:
        sys.settrace(None)
    assert ran == ["ended"]


def _run_fork_script(module: str) -> subprocess.CompletedProcess:
    """Run one of the fork scripts in a process of its own (this repository's ``src`` first on the path)."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run([sys.executable, "-m", module], capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"),
                                                                            os.environ.get("PYTHONPATH", "")])})


def test_a_forked_child_has_a_watchdog_of_its_own_and_leaves_the_parents_streams() -> None:
    """The stream watchdog kept its heap, lock and thread across ``fork``: the child ended the parent's idle stream
    as abandoned and exported its span a second time (from the child), and a lock held by the parent's watchdog at
    the fork would stay held in the child forever. The child now starts empty."""
    import json

    done = _run_fork_script("tests.fork_watchdog")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {d["process"]: d for d in map(json.loads, done.stdout.splitlines())}
    assert "child" in lines, f"the child hung (SIGALRM ended it): {done.stdout!r}"
    assert lines["child"] == {"process": "child", "inherited": 0, "child_ended": True, "spans": ["chat child"]}, lines
    assert lines["parent"] == {"process": "parent", "parent_ended": True, "spans": ["chat parent"]}, lines


def test_a_child_forked_while_another_thread_holds_our_locks_still_runs() -> None:
    """A child forked while another thread of the parent was inside our bookkeeping (a registry's, a memo's, the
    handler's, the guard's lock held) waited forever at its first instrumented run: the lock's holder does not
    exist in the child. The child now releases every lock of ours at the fork; its run completes, its spans end
    and an internal error is still logged."""
    import json

    done = _run_fork_script("tests.fork_locks")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {d["process"]: d for d in map(json.loads, done.stdout.splitlines())}
    assert "child" in lines, f"the child hung (SIGALRM ended it): {done.stdout!r}"
    assert lines["child"]["answer"] == lines["parent"]["answer"] == "It is sunny in Paris", lines
    assert {"invoke_agent weather_agent", "execute_tool get_weather"} <= set(lines["child"]["spans"]), lines
    assert "internal error in fork.child" in done.stderr, done.stderr[-3000:]
