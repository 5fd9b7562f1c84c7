"""LangChain 1.x's ``create_agent`` where the matrix (tests/matrix, entries ``create_agent ...``) does not reach:
the structured-output hook when ``instrument()`` runs before ``langchain.agents`` is imported, and its removal."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from otel_agents.instrumentors.langchain import LangChainInstrumentor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    assert "langchain.agents.factory" not in sys.modules, "instrument() imported langchain.agents"
    from tests.matrix.drivers import langchain as driver  # imports langchain.agents now
    from tests.matrix.truth import Truth
    result = driver._agent(Truth("output_retry")).invoke(driver.INPUT)
    assert result["structured_response"].answer == "It is sunny in Paris", result
    rejected = [s for s in exporter.get_finished_spans() if s.name == "structured_output"]
    assert len(rejected) == 1 and rejected[0].status.status_code.name == "ERROR", \\
        [s.name for s in exporter.get_finished_spans()]
    assert rejected[0].attributes["error.type"].endswith("StructuredOutputValidationError"), rejected[0].attributes
    inst.uninstrument()
    import langchain.agents.factory as factory
    assert not hasattr(factory._handle_structured_output_error, "__wrapped__"), "wrapper left after uninstrument()"
    print("ok")
""")


def test_rejected_structured_output_is_a_failed_step_when_instrumented_before_langchain_agents_import() -> None:
    """``instrument()`` does not import ``langchain.agents``; imported later, its structured-output retry still
    gives one failed ``structured_output`` step per rejected answer, and ``uninstrument()`` removes the wrapper."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
