"""A URL given to a command may carry credentials (``http://user:password@host``, a token as the user name): every
message that names the endpoint shows it with ``[REDACTED]@`` in their place (``otel-agents export --to``, ``ecp
annotate -o``, ``ecp collect --forward``, a malformed URL's error). Before, each quoted the URL whole, password and
all, into the terminal and the CI log. Real processes against a loopback port nobody listens on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import free_port

from .test_cli_export import traces

OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")
SECRET = "s3cr3t-pw"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_EXPORTER_OTLP", "PHOENIX_"))}
    return subprocess.run([OTEL_AGENTS, *args], capture_output=True, text=True, timeout=120, env=env)


def report(tmp_path: Path) -> Path:
    """An ``ecp run`` report of one step with one check, graded on the step's root span."""
    step = {"input": "q", "output": "a", "status": "ok", "duration_ms": 1.0, "tool_calls": [],
            "logs": json.dumps([{"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331",
                                 "parent_id": None, "kind": "chain", "name": "agent/step", "attributes": {}}]),
            "checks": [{"type": "text_match", "field": "public_output", "passed": True, "score": 1.0,
                        "reasoning": "ok"}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"manifest": "m.yaml", "scenarios": [{"name": "s", "status": "ok", "steps": [step]}]}))
    return path


@pytest.mark.parametrize("user", [f"user:{SECRET}", SECRET])
def test_export_never_shows_the_urls_credentials(rec, tmp_path: Path, user: str) -> None:
    proc = run("export", str(traces(rec, tmp_path)), "--to", f"http://{user}@127.0.0.1:{free_port()}/v1/traces",
               "--timeout", "0.5")
    assert proc.returncode == 1
    assert "not accepted by http://[REDACTED]@127.0.0.1:" in proc.stderr and SECRET not in proc.stderr, proc.stderr


@pytest.mark.parametrize("to", ["otlp", "phoenix"])
def test_annotate_never_shows_the_urls_credentials(tmp_path: Path, to: str) -> None:
    proc = run("ecp", "annotate", str(report(tmp_path)), "--to", to, "-o",
               f"http://user:{SECRET}@127.0.0.1:{free_port()}" + ("/v1/logs" if to == "otlp" else ""), "--wait", "0")
    assert proc.returncode == 1
    assert f"0 sent to {to} http://[REDACTED]@127.0.0.1:" in proc.stderr and SECRET not in proc.stderr, proc.stderr


def test_a_malformed_urls_error_never_shows_its_credentials(tmp_path: Path) -> None:
    proc = run("export", str(tmp_path / "none.jsonl"), "--to", f"http://user:{SECRET}@127.0.0.1:99999")
    assert proc.returncode == 2
    assert "got 'http://[REDACTED]@127.0.0.1:99999'" in proc.stderr and SECRET not in proc.stderr, proc.stderr


def test_the_forwarders_summary_never_shows_the_urls_credentials() -> None:
    from otel_agents.serve.otlp import Forwarder

    forwarder = Forwarder(f"http://{SECRET}@127.0.0.1:{free_port()}/v1/traces")
    try:
        assert forwarder.summary().startswith("--forward http://[REDACTED]@127.0.0.1:")
        assert SECRET not in forwarder.summary()
    finally:
        forwarder.close()


def test_the_forwarder_sends_the_urls_user_info_as_basic_auth() -> None:
    """``ecp collect --forward http://user:password@host`` (and ``ecp serve --collect`` to such an endpoint): the
    user info is HTTP Basic auth (percent-escapes decoded), as the requests-based OTLP exporters take it, winning
    over an ``Authorization`` header given, and the request goes to the host alone. Before, urllib took
    ``user:password@127.0.0.1`` for the host name: every request failed."""
    import base64

    from otel_agents.serve.otlp import Forwarder
    from tests.backends.receiver import Receiver

    with Receiver() as rx:
        hostport = rx.url.removeprefix("http://")
        forwarder = Forwarder(f"http://user:{SECRET}%40x@{hostport}/v1/traces", {"authorization": "Bearer old"})
        forwarder.submit((b"", "application/x-protobuf", None, None))
        forwarder.close(timeout=30)
        (request,) = rx.requests
    assert request.headers["authorization"] == "Basic " + base64.b64encode(f"user:{SECRET}@x".encode()).decode()
    assert request.headers["host"] == hostport and request.path == "/v1/traces"
    assert forwarder.summary() == f"--forward http://[REDACTED]@{hostport}/v1/traces: 1 request(s) sent, 0 failed, " \
                                  "0 dropped"


@pytest.mark.parametrize(("url", "shown"), [
    ("exporter -> http://u:pw@h:1/v1/traces: refused", "exporter -> http://[REDACTED]@h:1/v1/traces: refused"),
    ("http://user:pw@h:1/v1/traces", "http://[REDACTED]@h:1/v1/traces"),
    ("https://tok3n@h/x?q=a@b", "https://[REDACTED]@h/x?q=a@b"),
    ("http://h?q=a@b", "http://h?q=a@b"),  # an @ in the query is no user info
    ("http://h:1/v1/traces?api_key=abc&x=1", "http://h:1/v1/traces?api_key=[REDACTED]&x=1"),
    ("http://127.0.0.1:4318/v1/logs", "http://127.0.0.1:4318/v1/logs"),
])
def test_redact_url(url: str, shown: str) -> None:
    from otel_agents._spans.redaction import redact_url

    assert redact_url(url) == shown


def test_doctor_never_shows_a_token_given_as_the_urls_user() -> None:
    """``doctor`` redacted a URL's password (``user:[REDACTED]@``) but showed a token given alone as its user."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_EXPORTER_OTLP", "PHOENIX_"))}
    env.update(OTEL_AGENTS_EXPORTERS="phoenix", PHOENIX_COLLECTOR_ENDPOINT=f"http://{SECRET}@127.0.0.1:{free_port()}")
    proc = subprocess.run([OTEL_AGENTS, "doctor"], capture_output=True, text=True, timeout=120, env=env)
    assert "phoenix(endpoint='http://[REDACTED]@127.0.0.1:" in proc.stdout and SECRET not in proc.stdout, proc.stdout
