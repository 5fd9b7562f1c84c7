"""A stream still open when the interpreter exits (a script's module-level ``stream`` it ``break``s out of): its
model span ends as abandoned before the tracer provider shuts down, so it is exported, whether the span layer wraps
the stream (the provider clients) or a framework's callbacks hold its run open (LangChain's ``stream()``). Before, the span ended
only when the module's globals were torn down, after the provider's ``atexit`` shutdown: the span was lost and
the SDK printed "Processor is already shutdown, ignoring call". Real processes, the real clients over
``httpx.MockTransport``, LangChain's own fake chat model."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_agents.exporters.file import OTLPJsonFileExporter
import otel_agents
from tests.clients.fakes import Recorder, anthropic_client, anthropic_text_stream, chat_stream, openai_client

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(sys.argv[1])))
otel_agents.instrument(tracer_provider=provider, frameworks=[{framework!r}])
{body}
for chunk in stream:
    break  # the rest is never read; `stream` stays referenced until the interpreter exits
"""

_BODIES = {
    "openai": """
client = openai_client(Recorder(chat_stream(include_usage=True)))
stream = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True)
""",
    "anthropic": """
import httpx2
client = anthropic_client(Recorder(anthropic_text_stream("Order A100 has shipped."), http=httpx2))
stream = client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                                stream=True)
""",
    "langchain": """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
model = GenericFakeChatModel(messages=iter([AIMessage(content="Order A100 has shipped.")]))
stream = model.stream("Where is order A100?")
""",
}


@pytest.mark.parametrize("framework", list(_BODIES))
def test_a_stream_open_at_exit_ends_abandoned_and_is_exported(framework: str, tmp_path: Path) -> None:
    out = tmp_path / "traces.jsonl"
    script = textwrap.dedent(_SCRIPT).format(framework=framework, body=textwrap.dedent(_BODIES[framework]))
    done = subprocess.run([sys.executable, "-c", script, str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "already shutdown" not in done.stderr, done.stderr[-3000:]
    spans = [span for line in out.read_text(encoding="utf-8").splitlines()
             for rs in json.loads(line)["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]
    assert len(spans) == 1, spans
    attributes = {a["key"]: next(iter(a["value"].values())) for a in spans[0]["attributes"]}
    assert attributes["otel_agents.span.kind"] == "model"
    assert attributes["otel_agents.stream.abandoned"] is True
