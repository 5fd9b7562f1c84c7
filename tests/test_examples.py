"""Every framework example in ``examples/`` runs offline as a script and prints its span tree."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import textwrap
import sys
from pathlib import Path

import pytest

from tests.backends.runs import others_disabled

ROOT = Path(__file__).resolve().parents[1]

# example → lines its tree must contain (kind markers, the agent and the tool that ran)
EXPECTED = {
    "langchain_agent.py": ["invoke_agent travel_agent [agent]", "execute_tool get_weather [tool]", "[model]"],
    "llama_index_agent.py": ["invoke_agent calculator [agent]", "execute_tool add [tool]", "[model]"],
    "pydantic_ai_agent.py": ["invoke_agent weather [agent]", "execute_tool get_weather [tool]", "[model]"],
    "crewai_crew.py": ["invoke_workflow Support crew [chain]", "invoke_agent Support Lead [agent]",
                       "execute_tool lookup_order [tool]", "[model]"],
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_runs_offline_and_prints_its_tree(example: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false"}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / example)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for expected in EXPECTED[example]:
        assert any(expected in line for line in proc.stdout.splitlines()), (expected, proc.stdout[-3000:])
    _assert_prints_its_docstring_trees(ROOT / "examples" / example, proc.stdout)


def _docstring_trees(path: Path) -> list[list[str]]:
    """The literal blocks (reST: after a paragraph ending ``::``) of the module docstring of ``path`` that show
    a span tree (a line with a ``[kind]`` marker), dedented, blank lines left out."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    blocks = []
    for block in re.findall(r"::\n\n((?:(?: {4}.*)?\n)+)", doc + "\n"):
        lines = [line for line in textwrap.dedent(block).splitlines() if line.strip()]
        if any(re.search(r" \[[a-z_]+\]", line) for line in lines):
            blocks.append(lines)
    return blocks


def _assert_prints_its_docstring_trees(path: Path, stdout: str) -> None:
    """Each span tree the example's docstring shows is what it prints: its lines are lines of ``stdout``, in
    order (``…`` alone stands for lines left out; a line ending ``…`` for any line it begins)."""
    printed = stdout.splitlines()
    for block in _docstring_trees(path):
        at = 0
        for line in block:
            if line.strip() in ("…", "..."):
                continue
            head = line.removesuffix("…")
            found = next((i for i in range(at, len(printed))
                          if printed[i] == line or (head != line and printed[i].startswith(head))), None)
            assert found is not None, f"{path.name}'s docstring shows {line!r}, not printed (in this order):\n{stdout}"
            at = found + 1


def _spans_in(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                names += [span["name"] for span in ss["spans"]]
    return names


def test_example_under_opentelemetry_instrument_exports_and_prints(tmp_path: Path) -> None:
    """#26: under the zero-code launcher an example joins the launcher's provider: its tree is printed
    and the same spans reach the configured exporter; no 'already instrumented' warning."""
    traces = tmp_path / "traces.jsonl"
    env = {**os.environ, "HOME": str(tmp_path), "OTEL_AGENTS_TRACES_FILE": str(traces),
           "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": others_disabled("langchain")}  # the example's framework alone
    launcher = Path(sys.executable).with_name("opentelemetry-instrument")
    proc = subprocess.run([str(launcher), "--traces_exporter", "otlp_json_file", "--metrics_exporter", "none",
                           "--logs_exporter", "none", sys.executable, str(ROOT / "examples" / "langchain_agent.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "invoke_agent travel_agent [agent]" in proc.stdout
    assert "already instrumented" not in proc.stderr
    assert "invoke_agent travel_agent" in _spans_in(traces)


def test_example_follows_otel_agents_exporters(tmp_path: Path) -> None:
    """#26: with OTEL_AGENTS_EXPORTERS set, an example exports through configure() as well as printing."""
    traces = tmp_path / "traces.jsonl"
    env = {**os.environ, "HOME": str(tmp_path), "OTEL_AGENTS_EXPORTERS": "file", "OTEL_AGENTS_TRACES_FILE": str(traces)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "plain_python" / "agent.py")], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "invoke_agent customer_support [agent]" in proc.stdout
    assert "invoke_agent customer_support" in _spans_in(traces)
    _assert_prints_its_docstring_trees(ROOT / "examples" / "plain_python" / "agent.py", proc.stdout)


def test_every_tree_an_example_shows_is_checked() -> None:
    """The docstrings whose trees the runs above compare with what is printed: every example that shows one."""
    shown = {p.relative_to(ROOT / "examples").as_posix() for p in (ROOT / "examples").rglob("*.py")
             if _docstring_trees(p)}
    assert shown == {"langchain_agent.py", "llama_index_agent.py", "plain_python/agent.py"}, shown


CUSTOMER_SUPPORT = ROOT / "examples" / "customer_support"


def _run_to_receiver(example: str, tmp_path: Path, preset: str = "phoenix") -> list:
    """``OTEL_AGENTS_EXPORTERS=phoenix python examples/customer_support/EXAMPLE`` (#36: it exported nothing),
    with Phoenix's collector played by a loopback OTLP receiver; the spans it received. ``preset="otlp"``:
    ``OTEL_AGENTS_EXPORTERS=otlp OTEL_EXPORTER_OTLP_ENDPOINT=...`` (what ``docs/collect.md`` runs against
    ``otel-agents ecp collect``) instead."""
    from tests.backends.receiver import Receiver

    with Receiver() as rx:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "CUSTOMER_SUPPORT_"))}
        env.update(HOME=str(tmp_path), OTEL_AGENTS_EXPORTERS=preset)
        if preset == "phoenix":
            env.update(PHOENIX_COLLECTOR_ENDPOINT=rx.url, PHOENIX_PROJECT_NAME="newcomer")
        else:
            env.update(OTEL_EXPORTER_OTLP_ENDPOINT=rx.url)
        proc = subprocess.run([sys.executable, str(CUSTOMER_SUPPORT / example)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "A100" in proc.stdout
        return rx.spans()


@pytest.mark.parametrize(("example", "model_scope"), [("langchain_agent.py", "langchain"),
                                                      ("anthropic_agent.py", "anthropic")])
def test_customer_support_example_sends_its_run_where_otel_agents_exporters_says(example: str, model_scope: str,
                                                                                   tmp_path: Path) -> None:
    spans = _run_to_receiver(example, tmp_path)
    kinds = {s.attributes.get("openinference.span.kind") for s in spans}
    assert {"AGENT", "TOOL", "LLM"} <= kinds, kinds
    assert any(model_scope in s.scope for s in spans if s.attributes.get("openinference.span.kind") == "LLM")
    assert {s.resource.get("openinference.project.name") for s in spans} == {"newcomer"}
    assert {s.resource.get("service.name") for s in spans} == {f"customer-support-{example.removesuffix('_agent.py')}"}
    assert len({s.trace_id for s in spans if s.parent_id is None}) == 2  # the agent's run and its faulty twin's


@pytest.mark.parametrize("preset", ["phoenix", "otlp"])
def test_mcp_example_and_its_server_send_one_trace(preset: str, tmp_path: Path) -> None:
    """The MCP example's server process inherits the variable: its ``tools/call`` spans reach the same
    backend, children of the agent's tool spans (trace context in ``params._meta``). With ``otlp`` the
    server saw the OTLP endpoint and exported in batches: the client kills it at exit, and its spans were lost."""
    _assert_server_spans_join("mcp_agent.py", "customer-support-mcp", "customer-support-mcp-server", preset, tmp_path)


@pytest.mark.parametrize("preset", ["phoenix", "otlp"])
def test_a2a_example_and_its_remote_agent_send_one_trace(preset: str, tmp_path: Path) -> None:
    """The A2A example's Orders Agent process sends its spans where the caller's go: its server span and its
    LangGraph run are in the caller's trace, under its ``invoke_agent Orders Agent`` client span. (It traced
    nothing with ``phoenix``, and with ``otlp`` it exported in batches and died of the SIGTERM uvicorn re-raises.)"""
    spans = _assert_server_spans_join("a2a_agent.py", "customer-support-a2a", "customer-support-a2a-orders", preset,
                                      tmp_path)
    assert any(s.attributes.get("gen_ai.tool.name") == "lookup_order" for s in spans
               if s.resource.get("service.name") == "customer-support-a2a-orders")


def _assert_server_spans_join(example: str, client: str, server: str, preset: str, tmp_path: Path) -> list:
    spans = _run_to_receiver(example, tmp_path, preset)
    by_id = {s.span_id: s for s in spans}
    served = [s for s in spans if s.resource.get("service.name") == server]
    client_traces = {a.trace_id for a in spans if a.resource.get("service.name") == client}
    assert served and all(s.trace_id in client_traces for s in served), sorted({s.resource.get("service.name")
                                                                               for s in spans})
    calls = [s for s in served if s.parent_id in by_id and by_id[s.parent_id].resource.get("service.name") == client]
    assert calls, [(s.name, s.parent_id) for s in served]
    return spans


def test_every_customer_support_example_configures_tracing_before_building_its_agent() -> None:
    """Every example run as a script calls ``common.configure_tracing`` (the one documented way, README) before
    its agents are built: instrumentors that hook construction (ADK's ``Runner``) must come first."""
    for path in sorted(CUSTOMER_SUPPORT.glob("*_agent.py")):
        text = path.read_text(encoding="utf-8")
        call = text.find(f'configure_tracing("{path.name.removesuffix("_agent.py")}"')
        main = text.find('if __name__ == "__main__":')
        assert 0 < main < call, path.name
        first_def = min(i for i in (text.find("\ndef "), text.find("\nasync def "), text.find("\nclass ")) if i > 0)
        assert call < first_def, f"{path.name}: configure_tracing after the first definition"


# the customer-support README's names of the agent modules (examples/customer_support/{module}_agent.py)
_MODULE_NAMES = {"LangChain": "langchain", "LlamaIndex": "llama_index", "CrewAI": "crewai", "PydanticAI": "pydantic_ai",
                 "smolagents": "smolagents", "the OpenAI Agents SDK": "openai_agents", "Agno": "agno",
                 "Google ADK": "google_adk", "AutoGen AgentChat": "autogen_agentchat",
                 "the Claude Agent SDK": "claude_agent_sdk", "MCP": "mcp", "A2A": "a2a"}


def test_the_readme_says_which_examples_agents_are_coroutines() -> None:
    """``examples/customer_support/README.md`` lists the modules whose ``agent`` is ``async`` (a caller must await
    it): exactly those whose ``agent`` is an ``async def``."""
    readme = (CUSTOMER_SUPPORT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"`agent\(user_input\) -> str` \(async for ([^)]*)\)", readme)
    assert said, "the README no longer says which agents are async"
    named = {module for name, module in _MODULE_NAMES.items() if re.search(rf"(^|, | and ){name}(,| and |$)", said[1])}
    coroutines = set()
    for path in CUSTOMER_SUPPORT.glob("*_agent.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.AsyncFunctionDef) and node.name == "agent" for node in tree.body):
            coroutines.add(path.name.removesuffix("_agent.py"))
    assert named == coroutines, said[0]


def test_a2a_examples_remote_agent_says_why_it_did_not_start_answers_loopback_only_ends_with_its_agent(
        tmp_path: Path) -> None:
    """The Orders Agent's process, started by the A2A example's agent as a script would:

    - one that cannot start (its spans file is a directory) shows its error, and the agent says it exited (its
      standard error went nowhere: all a user saw was "did not start");
    - it binds loopback and refuses a request naming another host (a page whose name was rebound to 127.0.0.1:
      DNS rebinding): it answered any ``Host``;
    - it ends when the agent's process ends without its ``atexit`` (a SIGTERM): it outlived it, listening, for
      ever.
    """
    import signal
    import time

    script = """if True:
        import os, sys
        import a2a_agent

        os.environ["CUSTOMER_SUPPORT_A2A_TRACES"] = sys.argv[1]
        try:
            a2a_agent.remote_url()
        except RuntimeError as exc:
            print(exc, file=sys.stderr, flush=True)
        del os.environ["CUSTOMER_SUPPORT_A2A_TRACES"]
        a2a_agent.remote_url()
        print(a2a_agent._remote["process"].pid, flush=True)
        sys.stdin.read()
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "CUSTOMER_SUPPORT_"))}
    errors = tmp_path / "stderr.txt"
    server = None
    try:
        with errors.open("w") as stderr, subprocess.Popen(
                [sys.executable, "-c", script, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr, text=True, cwd=CUSTOMER_SUPPORT, env=env) as agent:
            try:
                line = agent.stdout.readline()
                assert line, errors.read_text()[-3000:]
                server = int(line)
                said = errors.read_text()
                assert f"IsADirectoryError: [Errno 21] path={str(tmp_path)!r}: cannot append spans" in said, said
                assert said.rstrip().endswith("the Orders Agent (a2a_server.py) did not start: it exited with "
                                              "status 1 (its error is above)"), said[-2000:]
                port = int(Path(f"/proc/{server}/cmdline").read_bytes().split(b"\0")[2])
                hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"evil.example:{port}", "127.0.0.1.evil.example"]
                assert [_card_status(port, host) for host in hosts] == [200, 200, 400, 400]
            finally:
                agent.send_signal(signal.SIGTERM)  # no atexit: the server is not terminated by it
        deadline = time.monotonic() + 60
        while _running(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(server), "the Orders Agent outlived the agent that started it"
    finally:
        if server is not None and _running(server):
            os.kill(server, signal.SIGKILL)


def _card_status(port: int, host: str) -> int:
    """The HTTP status of ``GET /.well-known/agent-card.json`` on loopback ``port``, sent with ``Host: host``."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", "/.well-known/agent-card.json", headers={"Host": host})
        return connection.getresponse().status
    finally:
        connection.close()


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_fake_mail_service_answers_loopback_names_only() -> None:
    """The side-effect twins' fake mail service (``common._mail_service``, on loopback) refuses a request naming
    another host (DNS rebinding), as the Orders Agent does; it took any ``Host``."""
    script = """if True:
        import http.client, sys
        import common

        port = int(common._mail_service().rpartition(":")[2])
        for host in sys.argv[1:]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("POST", "/v1/send", body=b"{}", headers={"Host": host})
            print(host, connection.getresponse().status)
    """
    hosts = ["127.0.0.1:1", "localhost:1", "evil.example:1", "127.0.0.1.evil.example", "127.0.0.1"]
    proc = subprocess.run([sys.executable, "-c", script, *hosts], capture_output=True, text=True, timeout=300,
                          cwd=CUSTOMER_SUPPORT, env={k: v for k, v in os.environ.items() if not k.startswith("OTEL_")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == ["127.0.0.1:1 202", "localhost:1 202", "evil.example:1 400",
                                        "127.0.0.1.evil.example 400", "127.0.0.1 202"], proc.stdout
