"""``otel-agents ecp serve`` end to end: stdio and HTTP transports, real ``ecp conformance``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from ecp_runtime.conformance import validate_initialize_result, validate_step_result

from tests.servers import child_server, free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SERVE = [str(BIN / "otel-agents"), "ecp", "serve"]
AGENTS = str(Path(__file__).with_name("agents.py"))


def rpc(method: str, params: dict | None = None, id_: int = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}})


def run_stdio(target: str, lines: list[str], timeout: float = 120) -> list[dict]:
    proc = subprocess.run(SERVE + [target], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_stdio_initialize_step_reset() -> None:
    out = run_stdio(f"{AGENTS}:echo", [rpc("agent/initialize", {"protocol_version": "1.0", "config": {}}, 1),
                                        rpc("agent/step", {"input": "where is A100?"}, 2),
                                        rpc("agent/reset", {}, 3)])
    init, step, reset = (r["result"] for r in out)
    validate_initialize_result(init)
    assert init["name"] == "echo" and init["protocol_version"] == "1.0"
    assert set(init["capabilities"]) == {"tool_calls", "evaluation_context", "usage", "reset"}
    validate_step_result(step)
    assert step["status"] == "done" and step["public_output"] == "echo: where is A100?"
    assert [c["name"] for c in step["tool_calls"]] == ["lookup_order"]
    assert step["tool_calls"][0]["arguments"] == {"order_id": "A100"}
    assert reset is True


def test_stdio_bad_input_keeps_serving() -> None:
    """Malformed JSON-RPC over the real transport: each gets its code, the next valid step still succeeds."""
    out = run_stdio(f"{AGENTS}:failing", [
        "{oops", "[]", rpc("agent/missing", id_=3),
        rpc("agent/step", {"input": 42}, 4), rpc("agent/step", {"input": "x"}, 5), rpc("agent/initialize", id_=6)])
    codes = [r.get("error", {}).get("code") for r in out]
    assert codes == [-32700, -32600, -32601, -32602, -32000, None]
    assert "ValueError" in out[4]["error"]["message"] and len(out[4]["error"]["data"]["trace_id"]) == 32
    assert out[5]["result"]["name"] == "failing"


def test_stateful_target_is_multi_turn_and_resets() -> None:
    out = run_stdio("tests.serve.agents:counter", [rpc("agent/initialize", id_=1), rpc("agent/step", {"input": "a"}, 2),
                                                   rpc("agent/step", {"input": "b"}, 3), rpc("agent/reset", id_=4),
                                                   rpc("agent/step", {"input": "c"}, 5)])
    assert "multi_turn" in out[0]["result"]["capabilities"] and out[0]["result"]["name"] == "counter"
    assert [out[i]["result"]["public_output"] for i in (1, 2, 4)] == ["turn 1: a", "turn 2: b", "turn 1: c"]


def test_async_target() -> None:
    out = run_stdio(f"{AGENTS}:async_echo", [rpc("agent/step", {"input": "x"})])
    assert out[0]["result"]["public_output"] == "async: x"


def test_bad_target_is_a_clear_error() -> None:
    proc = subprocess.run(SERVE + ["no_such_module_xyz:agent"], input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no_such_module_xyz" in proc.stderr and "Traceback" not in proc.stderr


def test_ecp_conformance_stdio() -> None:
    proc = subprocess.run([str(BIN / "ecp"), "conformance", "--target", " ".join(SERVE + [f"{AGENTS}:echo"]),
                           "--json"], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["conformant"] and report["failed"] == 0


@pytest.fixture(scope="module")
def http_server():
    port = free_port()
    with child_server(SERVE + [f"{AGENTS}:echo", "--http", "--port", str(port)], port, cwd=ROOT, timeout=60):
        yield f"http://127.0.0.1:{port}/ecp"


def post(url: str, body: str, headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body.encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_http_step_and_errors(http_server: str) -> None:
    status, body = post(http_server, rpc("agent/step", {"input": "hi"}))
    assert status == 200
    result = json.loads(body)["result"]
    validate_step_result(result)
    assert result["public_output"] == "echo: hi"
    status, body = post(http_server, "{bad")
    assert status == 200 and json.loads(body)["error"]["code"] == -32700
    status, body = post(http_server, '{"jsonrpc":"2.0","method":"agent/reset"}')
    assert status == 202 and body == b""
    status, _ = post(http_server, rpc("agent/step", {"input": "hi"}), {"Origin": "https://evil.example"})
    assert status == 403
    status, _ = post(http_server, rpc("agent/step", {"input": "hi"}), {"Origin": "http://localhost:3000"})
    assert status == 200
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(http_server, timeout=10)
    assert info.value.code == 405


def test_ecp_conformance_http(http_server: str) -> None:
    proc = subprocess.run([str(BIN / "ecp"), "conformance", "--target", http_server, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["conformant"]


def test_http_binds_loopback_by_default() -> None:
    from otel_agents.cli import build_parser

    args = build_parser().parse_args(["ecp", "serve", "x:y", "--http"])
    assert args.host == "127.0.0.1"


def test_unusable_port_or_output_file_is_a_clear_error(tmp_path: Path) -> None:
    """Each was a traceback, or worse: --port 99999 served on port 34463 (99999 mod 65536)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    busy = taken.getsockname()[1]
    try:
        for args, says in ((["--http", "--port", "99999"], "argument --port: must be a port, 0-65535, got 99999"),
                           (["--http", "--port", "-1"], "argument --port: must be a port, 0-65535, got -1"),
                           (["--http", "--port", str(busy)], f"cannot listen on 127.0.0.1:{busy}"),
                           (["--log-file", str(blocker / "x.log")], f"cannot write {blocker / 'x.log'}"),
                           (["--trace-file", str(blocker / "t.jsonl")], f"cannot write {blocker / 't.jsonl'}")):
            proc = subprocess.run(SERVE + [f"{AGENTS}:echo", *args], input=rpc("agent/initialize") + "\n",
                                  capture_output=True, text=True, timeout=120, cwd=ROOT)
            assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    finally:
        taken.close()


def test_sigterm_exits_cleanly_and_keeps_the_trace_file(tmp_path: Path) -> None:
    """ecp-runtime ends stdio agents with SIGTERM: the server exits 0 and its spans are on disk."""
    trace_file = tmp_path / "sub" / "traces.jsonl"
    log_file = tmp_path / "logs" / "serve.log"
    proc = subprocess.Popen(SERVE + [f"{AGENTS}:echo", "--trace-file", str(trace_file), "--log-file", str(log_file)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    proc.stdin.write(rpc("agent/step", {"input": "hi"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["public_output"] == "echo: hi"
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    from otel_agents.exporters.file import read_otlp_json

    names = {s.name for s in read_otlp_json(str(trace_file))}
    assert {"agent/step", "invoke_agent echo", "execute_tool lookup_order"} <= names
    assert log_file.exists()


def test_function_target_named_after_its_module(tmp_path: Path) -> None:
    from otel_agents.serve import load_target

    (tmp_path / "support_desk.py").write_text("def agent(user_input):\n    return user_input\n")
    assert load_target(f"{tmp_path / 'support_desk.py'}:agent").name == "support_desk"


def test_a_function_whose_parameters_have_defaults_is_an_agent_and_a_zero_argument_one_a_factory(
        tmp_path: Path) -> None:
    """``def agent(q=""):`` takes the step input: it is served as the agent (it was taken for a factory, called
    with no argument, and its answer, a string, refused for having no ``step``); a function without positional
    parameters (``def make():``, ``def make(*, greeting="hi"):``) is still a factory, one agent per session."""
    (tmp_path / "desk.py").write_text(
        "class Echo:\n    def __init__(self, greeting='hi'):\n        self.greeting = greeting\n"
        "    def step(self, text):\n        return f'{self.greeting} {text}'\n\n"
        "def agent(q=''):\n    return 'got ' + q\n\n"
        "async def agent_async(q='', *, loud=False):\n    return 'got ' + q\n\n"
        "def make():\n    return Echo()\n\n"
        "def make_keyword(*, greeting='hey'):\n    return Echo(greeting)\n")
    import asyncio

    from otel_agents.serve import load_target

    for attr in ("agent", "agent_async"):
        target = load_target(f"{tmp_path / 'desk.py'}:{attr}")
        assert target.factory is None and not target.stateful, attr
        step, reset = target.instance()
        answer = step("where is my order")
        answer = asyncio.run(answer) if asyncio.iscoroutine(answer) else answer
        assert (answer, reset) == ("got where is my order", None), attr
    for attr, greeting in (("make", "hi"), ("make_keyword", "hey")):
        target = load_target(f"{tmp_path / 'desk.py'}:{attr}")
        assert target.factory is not None and target.step is None, attr
        first, second = target.instance()[0], target.instance()[0]
        assert first.__self__ is not second.__self__, "one agent per session"
        assert first("q") == f"{greeting} q"


def test_a_decorated_agent_is_served_under_the_name_its_decorator_declares(tmp_path: Path) -> None:
    """``@otel_agents.agent(name=...)`` on a served function (sync, async, generator) names it in
    ``agent/initialize``, as its spans name it; it said the attribute's name (``faulty``). A bare ``@agent``
    declares none: the module's name for a generic attribute, as undecorated."""
    (tmp_path / "desk.py").write_text(
        "import otel_agents\n\n"
        "@otel_agents.agent(name='support')\ndef faulty(user_input):\n    return user_input\n\n"
        "@otel_agents.agent('support')\nasync def slow(user_input):\n    return user_input\n\n"
        "@otel_agents.agent(name='support')\ndef chatty(user_input):\n    yield user_input\n\n"
        "@otel_agents.agent\ndef agent(user_input):\n    return user_input\n")
    from otel_agents.serve import load_target

    names = {attr: load_target(f"{tmp_path / 'desk.py'}:{attr}").name for attr in ("faulty", "slow", "chatty", "agent")}
    assert names == {"faulty": "support", "slow": "support", "chatty": "support", "agent": "desk"}
    assert load_target(f"{AGENTS}:echo").name == "echo"


@pytest.mark.parametrize(("source", "said"), [
    ("X = (\n", "SyntaxError in {path}, line 1: '(' was never closed"),
    ("import os\nKEY = os.environ['OTEL_AGENTS_TEST_NO_SUCH_KEY']\n",
     "KeyError: 'OTEL_AGENTS_TEST_NO_SUCH_KEY' ({path}, line 2)"),
    ("import json\n\ndef load():\n    return json.loads('{')\n\nCONFIG = load()\n",
     "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) ({path}, line 4)"),
    ("import sys\nsys.exit(3)\n", "SystemExit: 3 ({path}, line 2)"),
])
def test_a_target_that_fails_to_import_is_named_with_its_line(tmp_path: Path, source: str, said: str) -> None:
    """An agent file that raises while imported (a syntax error, a missing variable, a failing call) is reported
    as the exception and the line of the agent's file that raised (it was the exception's repr alone:
    ``KeyError('...')``, with no line; a SyntaxError as a tuple), and ``ecp serve`` exits 2."""
    from otel_agents.serve.target import TargetError, load_target

    agent = tmp_path / "agent.py"
    agent.write_text(source)
    with pytest.raises(TargetError) as raised:
        load_target(f"{agent}:agent")
    assert str(raised.value) == f"target '{agent}:agent': importing {agent} failed: {said.format(path=agent)}"
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "ecp", "serve", f"{agent}:agent"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith(said.format(path=agent)), proc.stderr


def test_a_directory_target_is_not_called_missing(tmp_path: Path) -> None:
    from otel_agents.serve.target import TargetError, load_target

    with pytest.raises(TargetError, match="a directory, not a file"):
        load_target(f"{tmp_path}:agent")


def test_public_output_is_the_whole_answer() -> None:
    """The envelope's public_output is what the agent returned, not its budget-cut span copy."""
    (out,) = run_stdio(f"{AGENTS}:long_answer", [rpc("agent/step", {"input": "x"})])
    assert out["result"]["public_output"].endswith("FINAL VERDICT") and len(out["result"]["public_output"]) == 20_014


@pytest.mark.parametrize("content", ["NO_CONTENT", "SPAN_ONLY"])
def test_agent_error_follows_the_content_switch(content: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    (out,) = run_stdio(f"{AGENTS}:leaky_failure", [rpc("agent/step", {"input": "x"})])
    message = out["error"]["message"]
    assert message.startswith("agent raised PermissionError") and "sk-proj-AbCd" not in message
    assert ("SECRET-CONTENT" in message) is (content == "SPAN_ONLY")


def test_writes_to_the_stdout_descriptor_and_lone_surrogates_do_not_break_the_protocol() -> None:
    out = run_stdio(f"{AGENTS}:noisy", [rpc("agent/step", {"input": "x"}, 1), rpc("agent/step", {"input": "y"}, 2)])
    assert [r["id"] for r in out] == [1, 2]
    assert out[0]["result"]["public_output"].startswith("bad name")


def test_sys_exit_in_the_agent_is_a_step_error_and_the_server_keeps_serving() -> None:
    out = run_stdio(f"{AGENTS}:exits", [rpc("agent/step", {"input": "x"}, 1), rpc("agent/initialize", id_=2)])
    assert out[0]["error"]["code"] == -32000 and "SystemExit" in out[0]["error"]["message"]
    assert out[1]["result"]["name"] == "exits"


def test_generator_target_is_consumed() -> None:
    (out,) = run_stdio(f"{AGENTS}:chunks", [rpc("agent/step", {"input": "Ann"})])
    assert out["result"]["public_output"] == "Hello, Ann"


def test_every_example_agent_and_twin_is_served_under_its_agents_own_name() -> None:
    """``ecp serve`` on a customer-support example's ``agent``, ``faulty_agent`` or ``side_effect_agent`` says the
    agent's own name (the framework agent's, ``customer_support``, or the declared one of the plain-Python and
    provider-client loops), as the spans do; it said ``faulty_agent`` or ``langchain_agent`` (the attribute, the
    file) for the framework examples, whose functions declared none. Examples of a framework not installed here
    (Google ADK) are left out."""
    examples = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples" / "customer_support").glob("*_agent.py"))
    examples.append("examples/plain_python/agent.py")
    script = (
        "import json, sys\n"
        "from otel_agents.serve.target import TargetError, load_target\n"
        "names = {}\n"
        "for path in sys.argv[1:]:\n"
        "    for attr in ('agent', 'faulty_agent', 'side_effect_agent'):\n"
        "        try:\n"
        "            names[f'{path}:{attr}'] = load_target(f'{path}:{attr}').name\n"
        "        except TargetError as exc:\n"
        "            names[f'{path}:{attr}'] = 'not installed' if 'No module named' in str(exc) else str(exc)\n"
        "print(json.dumps(names))\n")
    proc = subprocess.run([sys.executable, "-c", script, *examples], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, "CREWAI_DISABLE_TELEMETRY": "true",
                                         "CREWAI_TRACING_ENABLED": "false"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = {target: name for target, name in json.loads(proc.stdout.splitlines()[-1]).items()
             if name != "not installed"}
    assert len(names) >= 3 * 12, names
    assert names == dict.fromkeys(names, "customer_support")
