"""``uninstrument()`` restores pydantic-ai exactly (X-4, for PydanticAI's patched attributes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import wrapt
from pydantic_ai import Agent

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from tests.spans import SnapshotExporter

from .agents import Deps, lookup_agent
from .conftest import ORIGINALS, PATCHED


def current() -> dict[tuple[type, str], Any]:
    return {(owner, name): owner.__dict__[name] for owner, name in PATCHED}


def run_once() -> None:
    lookup_agent().run_sync("order 1", deps=Deps())
    with lookup_agent().run_stream_sync("order 1", deps=Deps()) as result:
        list(result.stream_text(delta=True, debounce_by=None))


def test_uninstrument_restores_the_original_objects(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4: after uninstrument(), ``Agent.iter`` and the stream hooks are pydantic-ai's own objects again."""
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    assert all(current()[key] is not ORIGINALS[key] for key in ORIGINALS)
    inst.uninstrument()
    assert all(current()[key] is ORIGINALS[key] for key in ORIGINALS), current()
    run_once()
    assert exporter.semantic() == []


def test_instrument_uninstrument_cycles(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4: instrument/uninstrument repeatedly: one set of spans while on, none while off, originals at the end."""
    inst = PydanticAIInstrumentor()
    for _ in range(3):
        inst.instrument(tracer_provider=provider)
        inst.instrument(tracer_provider=provider)
        exporter.clear()
        run_once()
        assert [s.semantic_kind for s in exporter.semantic()].count("agent") == 2
        inst.uninstrument()
    exporter.clear()
    run_once()
    assert exporter.semantic() == []
    assert current() == ORIGINALS


def test_wrapper_added_after_us_survives_and_is_peeled_later(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4: another instrumentation wraps ``Agent.iter`` after us: uninstrument leaves it working (ours goes
    inert inside its chain); instrumenting again records each run once, and ends with the originals."""
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    ours = Agent.__dict__["iter"]
    calls: list[int] = []

    def foreign(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        calls.append(1)
        return wrapped(*args, **kwargs)

    wrapt.wrap_function_wrapper(Agent, "iter", foreign)
    try:
        inst.uninstrument()
        run_once()
        assert calls and exporter.semantic() == []
        inst.instrument(tracer_provider=provider)
        exporter.clear()
        run_once()
        assert [s.semantic_kind for s in exporter.semantic()].count("agent") == 2
        inst.uninstrument()
    finally:
        setattr(Agent, "iter", ours)  # the other instrumentation goes away the way it came
    inst.instrument(tracer_provider=provider)  # peels our inert wrapper off
    inst.uninstrument()
    assert current() == ORIGINALS


def test_importing_the_instrumentor_does_not_import_pydantic_ai() -> None:
    """Zero-code entry points import every instrumentor module: pydantic-ai is imported by instrument() only."""
    code = ("import sys, otel_agents.instrumentors.pydantic_ai; "
            "sys.exit(1 if any(m.split('.')[0] == 'pydantic_ai' for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def test_instrument_before_pydantic_ai_is_imported() -> None:
    """instrument() first, pydantic-ai imported afterwards (the zero-code order): runs are still recorded."""
    code = """
import sys
sys.path.insert(0, ".")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from tests.spans import SnapshotExporter
exporter = SnapshotExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
PydanticAIInstrumentor().instrument(tracer_provider=provider)
assert "pydantic_ai" not in sys.modules
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
Agent(TestModel(), name="late").run_sync("hi")
names = sorted(s.name for s in exporter.semantic())
sys.exit(0 if names == ["chat test", "invoke_agent late"] else 1)
"""
    repo = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=repo, timeout=120).returncode == 0
