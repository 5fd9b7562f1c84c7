"""What the CLI and the docs say (issue 26): ``--help`` without reST markup, the demo's plurals, one
LangChain version range in README, ``doctor`` and the ``langchain`` extra, docs that stand alone."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from otel_agents.cli import demo
from otel_agents.instrumentors._frameworks import FRAMEWORKS

REPO = Path(__file__).resolve().parents[1]
REST = re.compile(r"``|:(?:func|class|mod|meth|data|attr):`")


@pytest.mark.parametrize("command", [[], ["demo"], ["doctor"], ["fold"], ["export"], ["ecp"], ["ecp", "serve"]])
def test_help_is_plain_text(command: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "otel_agents.cli", *command, "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("usage: otel-agents")
    assert not REST.search(out), out


@pytest.mark.parametrize("command", [["--help"], ["fold", "--help"]])
def test_help_does_not_import_the_fold(command: list[str]) -> None:
    """``otel-agents --help`` and ``fold --help`` imported the whole ECP fold to show ``--idle-spans``'s default:
    genai-prices with its 1.6 MB price table, pydantic and an HTTP client, most of their start-up time. Help
    imports none of them, and the default it shows is the fold's own."""
    code = ("import contextlib, io, sys; from otel_agents.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
            f"    main({command!r})\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'genai_prices', 'pydantic', 'httpx', 'httpx2'}),"
            " 'otel_agents.exporters.ecp' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "[] False\n"
    from otel_agents.cli.fold import DEFAULT_IDLE_SPANS
    from otel_agents.exporters.ecp._stream import DEFAULT_IDLE_SPANS as FOLDS

    assert DEFAULT_IDLE_SPANS == FOLDS


def test_python_m_otel_agents_is_the_command() -> None:
    """``python -m otel_agents ...`` (the way to run it where the venv's scripts are not on PATH) is the
    ``otel-agents`` command; it was ``No module named otel_agents.__main__`` (only ``otel_agents.cli`` ran)."""
    as_package = subprocess.run([sys.executable, "-m", "otel_agents", "fold", "--help"], capture_output=True,
                                text=True)
    assert as_package.returncode == 0, as_package.stderr
    assert as_package.stdout == subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", "--help"],
                                               capture_output=True, text=True, check=True).stdout
    bad = subprocess.run([sys.executable, "-m", "otel_agents", "fold", "x.jsonl", "--frob"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized arguments: --frob" in bad.stderr


def test_demo_says_one_framework_not_one_frameworks(tmp_path: Path) -> None:
    runs = [demo.Run("langchain", "agent", tmp_path, passed=5, total=5, check_results=[True] * 5)]
    runs.append(demo.Run("langchain", "faulty_agent", tmp_path / "faulty", passed=3, total=5,
                         check_results=[True, True, True, False, False], faults=2, caught_ecp=2))
    text = demo.render(runs, tmp_path)
    assert "1 frameworks" not in text and "1/1 frameworks" not in text
    assert "of 1 framework agree" in text


@functools.cache
def _doctor_as_is() -> str:
    """``otel-agents doctor``'s standard output in the environment the tests run in: one process for the tests
    that read it alike (each run of doctor costs ~0.5 s of CPU)."""
    return subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_one_range_everywhere(name: str) -> None:
    """Each framework's supported range is the same in its extra, the README's table and ``doctor``."""
    fw = FRAMEWORKS[name]
    supported = SpecifierSet(fw.supported)
    pyproject = (REPO / "pyproject.toml").read_text()
    extra = re.search(rf"^{re.escape(name.replace('_', '-'))} = \[(.*)\]$", pyproject, re.MULTILINE)
    assert extra, f"no extra named {name.replace('_', '-')}"
    (req,) = [Requirement(r) for r in re.findall(r'"([^"]+)"', extra.group(1))
              if Requirement(r).name == fw.distribution]
    assert req.specifier == supported, (str(req.specifier), str(supported))
    readme = (REPO / "README.md").read_text()
    shown = re.findall(rf"`{re.escape(fw.distribution)} ?([<>=!~][^`]*)`", readme)
    assert shown and all(SpecifierSet(s) == supported for s in shown), shown
    doctor = _doctor_as_is()
    assert fw.supported in doctor, doctor
    # the instrumentor's manual said "langchain-core >= 0.3, < 2" (while 1.8.3 was the floor), "agno 3.x", ...
    manual = " ".join(importlib.import_module(fw.module).__doc__.split())
    assert f"``{fw.distribution} {fw.supported}``" in manual, f"{fw.module}'s docstring does not say {fw.requirement}"


def test_docs_do_not_link_outside_the_repository() -> None:
    for doc in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        text = doc.read_text()
        for target in re.findall(r"\]\(([^)]+)\)", text) + re.findall(r"`(\.\./[^`]+)`", text):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (doc.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(REPO) and path.exists(), f"{doc.name} links to {target}"


def _doctor(env: dict[str, str] | None = None, code: int = 0, cwd: Path | None = None) -> str:
    """``otel-agents doctor``'s standard output; its exit status must be ``code`` and its standard error empty."""
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True,
                          env=env, cwd=cwd)
    assert (proc.returncode, proc.stderr) == (code, ""), (proc.returncode, proc.stderr, proc.stdout)
    return proc.stdout


def test_doctor_rows_are_aligned_for_every_framework_name() -> None:
    """The framework table's columns line up, ``openai_agents`` (13 characters) included."""
    rows = [line for line in _doctor().splitlines() if " installed " in line]
    assert len(rows) == len(FRAMEWORKS), rows
    for column in (" installed ", " supported "):
        assert len({row.index(column) for row in rows}) == 1, rows


@pytest.mark.parametrize(("value", "shown"), [(None, "on"), ("false", "off"), ("1", "on")])
def test_doctor_shows_mcp_propagation(value: str | None, shown: str) -> None:
    """``OTEL_AGENTS_MCP_PROPAGATE`` (the MCP instrumentation's trace-context switch) is a setting
    ``doctor`` reports, as it reports the content switch."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENTS_MCP_PROPAGATE"}
    if value is not None:
        env["OTEL_AGENTS_MCP_PROPAGATE"] = value
    out = _doctor(env)
    assert f"mcp trace context in params._meta: {shown} (OTEL_AGENTS_MCP_PROPAGATE={value or '<unset>'})" in out, out


_MIXED = str(Path(__file__).parent / "exporters" / "golden" / "mixed.otlp.jsonl")


@pytest.mark.parametrize(("command", "code"), [(["doctor"], 1), (["--help"], 0),  # argparse ignores it
                                               (["fold", _MIXED], 1)])
def test_output_into_a_closed_pipe_is_no_traceback(command: list[str], code: int) -> None:
    """``otel-agents doctor | head -1``, ``otel-agents fold traces.jsonl | head``: the reader went away; the
    command stops quietly (exit 1): no ``BrokenPipeError`` traceback, and no "cannot write standard output"
    (fold said it, exit 2, as if the output had failed)."""
    read, write = os.pipe()
    os.close(read)  # before the command starts: closed after it, a loaded machine let it write into the pipe first
    try:
        proc = subprocess.Popen([sys.executable, "-m", "otel_agents.cli", *command], stdout=write,
                                stderr=subprocess.PIPE)
    finally:
        os.close(write)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == code
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert "cannot write" not in stderr, stderr


@pytest.mark.parametrize("unbuffered", ["1", ""])  # PYTHONUNBUFFERED=1 (Docker images set it): print() fails at once
@pytest.mark.parametrize("stdout", ["full", "closed"])
@pytest.mark.parametrize("command", [["doctor"], ["--help"], ["ecp", "report", "REPORT"]])
def test_standard_output_that_cannot_be_written_is_one_line_not_a_traceback(command: list[str], stdout: str,
                                                                            unbuffered: str, tmp_path: Path) -> None:
    """``otel-agents doctor > /dev/full`` ended in an ``OSError`` traceback (``ecp report`` too), ``>&-`` (descriptor
    1 closed) in an ``AttributeError`` traceback, and ``--help > /dev/full`` unbuffered said nothing, exit status 0."""
    import os

    report = tmp_path / "report.json"
    report.write_text(json.dumps({"scenarios": [{"name": "s", "steps": [{"checks": [{"type": "x", "passed": True}]}]}]}))
    argv = [sys.executable, "-m", "otel_agents.cli", *[str(report) if a == "REPORT" else a for a in command]]
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    if stdout == "full":
        with open("/dev/full", "w") as full:
            proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    else:
        proc = subprocess.run(argv, stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                              preexec_fn=lambda: os.close(1))
    says = "No space left on device" if stdout == "full" else "it is closed"
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"otel-agents: cannot write standard output: {says}", proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(("command", "says"), [
    (["fold", "-"], "otel-agents fold: cannot read -: standard input is closed"),
    (["export", "-", "--to", "http://127.0.0.1:9"], "otel-agents export: cannot read <stdin>: standard input is closed"),
    (["ecp", "serve", "--replay", "TRACES"], "otel-agents ecp serve: standard input closed: the stdio transport"),
])
def test_standard_input_closed_is_one_line_not_a_traceback(command: list[str], says: str, tmp_path: Path) -> None:
    """``otel-agents fold - <&-``: a ``TypeError`` traceback (``sys.stdin`` is ``None``); ``ecp serve <&-``: an
    ``OSError`` traceback from ``os.dup(0)``."""
    import os

    traces = tmp_path / "t.jsonl"
    traces.write_text((REPO / "tests/exporters/foreign/otel_genai_openai_v2.otlp.jsonl").read_text())
    argv = [sys.executable, "-m", "otel_agents.cli", *[str(traces) if a == "TRACES" else a for a in command]]
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                          preexec_fn=lambda: os.close(0))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert any(line.startswith(says) for line in proc.stderr.splitlines()), proc.stderr


@pytest.mark.parametrize(("command", "says"), [
    (["ecp", "collect", "-o", "OUT"], "otel-agents ecp collect: "),
    (["ecp", "serve", "TARGET", "--http", "--port", "0"], "otel-agents ecp serve: --http: "),
    (["ecp", "serve", "TARGET", "--collect", "0"], "otel-agents ecp serve: --collect: "),
    (["ecp", "serve", "--replay", "TRACES", "--http", "--port", "0"], "otel-agents ecp serve: --http: "),
])
def test_http_commands_without_the_ecp_extra_say_so_in_one_line(command: list[str], says: str, tmp_path: Path) -> None:
    """Without Uvicorn (no ``ecp`` extra) ``ecp collect`` and ``ecp serve --http``/``--collect`` ended in a
    ``RuntimeError`` traceback after the set-up (``collect`` had created its output and printed its summary):
    one line naming the extra, exit 2, nothing written."""
    traces = tmp_path / "t.jsonl"
    traces.write_text((REPO / "tests/exporters/foreign/otel_genai_openai_v2.otlp.jsonl").read_text())
    (tmp_path / "agent.py").write_text("def agent(text):\n    return text\n")
    out = tmp_path / "envelopes.jsonl"
    argv = [{"OUT": str(out), "TARGET": f"{tmp_path / 'agent.py'}:agent", "TRACES": str(traces)}.get(a, a)
            for a in command]
    code = ("import sys; sys.modules['uvicorn'] = None; from otel_agents.cli import main; "
            f"sys.exit(main({argv!r}))")
    proc = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == says + "the HTTP server needs uvicorn: pip install 'otel-agents[ecp]'\n", proc.stderr
    assert not out.exists() and proc.stdout == ""


def test_a_second_demo_writing_the_same_rows_is_refused(tmp_path: Path) -> None:
    """Two ``otel-agents demo --out same`` at once deleted each other's traces and reports and rewrote each other's
    manifests (whose targets name their own fork server): one demo's agents were stopped by the other's fork
    server at its end, an ERROR row (``-32003 server shutting down``). The second demo is refused at start, naming
    the first; other rows (a ``--venv`` child's) stay free, and a demo that ended (even by SIGKILL) holds nothing."""
    import contextlib
    import signal

    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import contextlib, pathlib, sys, time; from otel_agents.cli import demo; "
         "held = contextlib.ExitStack(); "
         "print(demo._lock_rows(held, pathlib.Path(sys.argv[1]), ['plain_python']), flush=True); time.sleep(120)",
         str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "None\n"
        proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "demo", "--frameworks", "plain_python",
                               "--out", str(out), "--examples", str(REPO / "examples/customer_support")],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (f"otel-agents demo: another otel-agents demo (pid {holder.pid}) is writing "
                               f"{out / 'plain_python'}: wait for it to finish, or give this one another --out\n")
        assert not (out / "manifests").exists()
        with contextlib.ExitStack() as held:
            assert demo._lock_rows(held, out, ["openai", "anthropic"]) is None  # other rows
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with contextlib.ExitStack() as held:
        assert demo._lock_rows(held, out, ["plain_python"]) is None
        assert (out / "plain_python" / demo.LOCK_NAME).read_text() == f"{os.getpid()}\n"


def test_a_demo_of_no_row_is_refused(tmp_path: Path) -> None:
    """``otel-agents demo --frameworks "$ROWS"`` with ROWS empty printed an empty table and exited 0: a CI job
    that graded nothing passed. Now exit 2 saying so, before anything is written (``""`` beside a ``--venv`` that
    grades rows stays allowed: that is how ``make demo`` hands rows to another venv, and so is ``--json -``, a
    program's call, answered ``{"runs": []}``)."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "demo", "--frameworks", "", "--out", str(out),
                           "--examples", str(REPO / "examples/customer_support")],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("otel-agents demo: --frameworks '' names no row and no --venv grades any"), proc.stderr
    assert not (out / "manifests").exists() and proc.stdout == ""


@pytest.mark.parametrize(("attr", "label"), [("agent", "agent"), ("faulty_agent", "faulty twin"),
                                             ("side_effect_agent", "side-effect twin")])
def test_demo_names_each_twin_in_its_phoenix_line(attr: str, label: str, tmp_path: Path, capsys) -> None:
    """#36: ``demo --phoenix`` said "agent" for the side-effect twin's annotations. (A report with no
    check sends nothing: no server is needed to see the line.)"""
    run = demo.Run("langchain", attr, tmp_path, report={"scenarios": []})
    demo.annotate(run, "http://127.0.0.1:9")
    assert capsys.readouterr().out.splitlines() == [f"  langchain {label}: 0 checks annotated in Phoenix"]


@pytest.mark.parametrize(("set_here", "seen"), [(None, "True"), ("False", "False")])
def test_demo_ecp_run_is_told_to_read_litellms_bundled_price_list(set_here: str | None, seen: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """ecp-runtime imports LiteLLM whenever it is installed, and LiteLLM then fetches its price list from GitHub
    unless LITELLM_LOCAL_MODEL_COST_MAP=True: the demo's ``ecp run`` (a fake one here, reporting its environment)
    gets it, a value the user set is kept."""
    if set_here is None:
        monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    else:
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", set_here)
    ecp = tmp_path / "ecp"
    ecp.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                   "out = sys.argv[sys.argv.index('--json-out') + 1]\n"
                   "json.dump({'env': os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP')}, open(out, 'w'))\n")
    ecp.chmod(0o755)
    run = demo.Run("plain_python", "agent", tmp_path, manifest=tmp_path / "manifest.yaml")
    demo.run_ecp(run, ecp, 5)
    assert run.error is None and run.report == {"env": seen}


# -- #36: the counts and the framework lists the docs and --help give ----------------------------------------

_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                       "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
# The name the docs use for each instrumented system (the registry's keys): adding a framework to the registry
# without naming it here fails test_doc_names_cover_the_registry, and then every list below must name it.
DOC_NAMES = {"langchain": "LangChain", "llama_index": "LlamaIndex", "crewai": "CrewAI", "pydantic_ai": "PydanticAI",
             "smolagents": "smolagents", "openai_agents": "OpenAI Agents SDK", "agno": "Agno", "google_adk": "Google ADK",
             "autogen_agentchat": "AutoGen AgentChat", "claude_agent_sdk": "Claude Agent SDK", "anthropic": "anthropic",
             "openai": "openai", "mcp": "MCP", "a2a": "A2A"}


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def _counts(text: str, noun: str) -> list[int]:
    """Every count written before ``noun`` ("thirteen rows", "8 frameworks")."""
    words = re.findall(rf"\b(\w+) {noun}\b", text.replace("\n", " "))
    return [int(w) if w.isdigit() else _NUMBERS[w.lower()] for w in words if w.isdigit() or w.lower() in _NUMBERS]


@functools.cache
def _demo_help() -> str:
    """``otel-agents --help`` and ``otel-agents demo --help``, run once for the tests that read them."""
    return subprocess.run([sys.executable, "-m", "otel_agents.cli", "--help"], capture_output=True, text=True,
                          check=True).stdout + subprocess.run([sys.executable, "-m", "otel_agents.cli", "demo", "--help"],
                                                              capture_output=True, text=True, check=True).stdout


def test_doc_names_cover_the_registry() -> None:
    assert set(DOC_NAMES) == set(FRAMEWORKS)
    assert set(demo.FRAMEWORKS) - {demo.PLAIN_PYTHON} <= set(FRAMEWORKS)


def test_counts_in_readme_and_help_are_the_registrys() -> None:
    """README said "twelve rows" and ``--help`` "8 frameworks" once AutoGen made them 13 and 9."""
    rows, frameworks = len(demo.FRAMEWORKS), len(demo.agent_frameworks())
    shows = _section((REPO / "README.md").read_text(), "## What `make demo` shows")
    help_text = _demo_help()
    assert _counts(shows, "rows") == [rows], _counts(shows, "rows")
    for text in (shows, help_text):
        assert all(n == frameworks for n in _counts(text, "frameworks")), _counts(text, "frameworks")
    assert f"{frameworks} frameworks" in help_text and f"{rows} rows" in " ".join(help_text.split())


@pytest.mark.parametrize("name", sorted(DOC_NAMES))
def test_every_framework_is_named_where_the_docs_list_them(name: str) -> None:
    readme = (REPO / "README.md").read_text()
    shown = DOC_NAMES[name]
    instrument = readme[readme.index("otel_agents.instrument()   #"):]
    instrument = instrument[:instrument.index("```")]
    assert shown in instrument, f"the instrument() comment in README.md does not name {shown}"
    if name in demo.FRAMEWORKS:
        assert shown in _section(readme, "## What `make demo` shows"), f"README's 'What make demo shows' misses {shown}"
        assert shown in " ".join(demo.__doc__.split()), f"demo --help misses {shown}"


@pytest.mark.parametrize("row", demo.FRAMEWORKS)
def test_customer_support_readme_lists_every_demo_row(row: str) -> None:
    """examples/customer_support/README.md: its file table and its sample of the demo's output show every row."""
    text = (REPO / "examples" / "customer_support" / "README.md").read_text()
    example = "../plain_python/agent.py" if row == demo.PLAIN_PYTHON else f"{row}_agent.py"
    assert f"| `{example}`" in text or f"`{example}`, " in text, f"no file-table row for {example}"
    sample = _section(text, "## Run it")
    sample = sample[sample.index("```\nframework"):]
    sample = sample[:sample.index("\n```", 4)]
    tables = sample.split("\n\n")
    assert [t for t in tables if t.startswith("framework")], sample
    for table in (t for t in tables if t.startswith("framework")):
        assert any(line.split()[0] == row for line in table.splitlines()[2:]), f"{row} missing from {table[:60]}"


def test_customer_support_readme_names_every_demo_option() -> None:
    text = (REPO / "examples" / "customer_support" / "README.md").read_text()
    options = text[text.index("Options:"):]
    options = options[:options.index("\n\n")]
    parser = argparse.ArgumentParser()
    demo.register(parser.add_subparsers())
    (sub,) = parser._subparsers._group_actions[0].choices.values()
    flags = [a.option_strings[-1] for a in sub._actions if a.option_strings and a.dest != "help"]
    assert flags and all(f"`{flag}" in options for flag in flags), (flags, options)


@pytest.mark.parametrize("argv,option,says", [
    # each was taken: the endpoint failed at the first export, the path was announced as
    # http://127.0.0.1:18790noslash, a negative timeout or grace meant "at once", a gate above 1 could never
    # pass, and `demo --frameworks ,` printed an empty table with exit status 0
    (["ecp", "serve", "m:a", "--otlp-endpoint", "notaurl"], "--otlp-endpoint", "http:// or https:// URL"),
    (["ecp", "serve", "m:a", "--otlp-endpoint", "127.0.0.1:4318"], "--otlp-endpoint", "http://127.0.0.1:4318"),
    (["ecp", "serve", "m:a", "--http", "--path", "noslash"], "--path", "must start with '/'"),
    # before, taken: the URL announced, http://127.0.0.1:8765/a?b, is the path /a, and every request got 404
    (["ecp", "serve", "m:a", "--http", "--path", "/a?b"], "--path", "'/a?b' holds '?', where a URL's path ends"),
    (["ecp", "serve", "m:a", "--http", "--path", "/a#b"], "--path", "holds '#'"),
    (["ecp", "serve", "m:a", "--session-idle-timeout", "-1"], "--session-idle-timeout", "above 0"),
    (["ecp", "serve", "m:a", "--session-idle-timeout", "nan"], "--session-idle-timeout", "above 0"),
    (["ecp", "serve", "m:a", "--collect-grace", "-1"], "--collect-grace", "0 or more"),
    (["ecp", "report", "r.json", "--fail-under", "pass_k=1.5"], "--fail-under", "pass_k=1.5: VALUE must be a share"),
    (["ecp", "report", "r.json", "--fail-under", "pass_rate=-0.1"], "--fail-under", "share from 0 to 1"),
    (["ecp", "report", "r.json", "--fail-under", "speed=0.5"], "--fail-under", "METRIC must be one of"),
    # these were refused after parsing, exit status 2 but in a message of their own, not argparse's
    (["ecp", "serve", "m:a", "--step-timeout", "-1"], "--step-timeout", "0 or more"),
    (["ecp", "serve", "m:a", "--max-sessions", "0"], "--max-sessions", "at least 1"),
    (["ecp", "serve", "m:a", "--connection-timeout", "0"], "--connection-timeout", "above 0"),
    (["ecp", "serve", "m:a", "--max-body-bytes", "0"], "--max-body-bytes", "at least 1"),
    (["ecp", "serve", "m:a", "--collect", "70000"], "--collect", "0-65535"),
    (["demo", "--phoenix", "127.0.0.1:6006"], "--phoenix", "http://127.0.0.1:6006"),  # annotate failed at the end
    # the commands outside `ecp serve` took any float or int: `ecp collect --connection-timeout inf --grpc-port 0`
    # ended in an OverflowError traceback, `nan` answered every request body 408 at once, `export --timeout nan`
    # passed its "> 0" check, `annotate --wait inf` retried forever
    (["ecp", "collect", "--connection-timeout", "inf"], "--connection-timeout", "above 0"),
    (["ecp", "collect", "--connection-timeout", "nan"], "--connection-timeout", "above 0"),
    (["ecp", "collect", "--trace-idle", "inf"], "--trace-idle", "0 or more"),
    (["ecp", "collect", "--trace-timeout", "nan"], "--trace-timeout", "0 or more"),
    (["ecp", "collect", "--max-body-bytes", "0"], "--max-body-bytes", "at least 1"),
    (["ecp", "collect", "--max-traces", "-1"], "--max-traces", "at least 1"),
    (["ecp", "collect", "--grpc-port", "70000"], "--grpc-port", "0-65535"),
    (["ecp", "serve", "m:a", "--http", "--port", "70000"], "--port", "0-65535"),
    (["export", "t.jsonl", "--to", "http://127.0.0.1:4318", "--timeout", "nan"], "--timeout", "above 0"),
    (["export", "t.jsonl", "--to", "http://127.0.0.1:4318", "--batch-size", "0"], "--batch-size", "at least 1"),
    (["ecp", "annotate", "r.json", "--wait", "inf"], "--wait", "0 or more"),
    (["demo", "--frameworks", ","], "--frameworks", "',' names no framework"),
    (["demo", "--frameworks", " , "], "--frameworks", "names no framework"),
])
def test_bad_option_values_are_argparse_errors(argv: list[str], option: str, says: str, capsys) -> None:
    from otel_agents.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"error: argument {option}: " in err and says in err, err


@pytest.mark.parametrize(("argv", "command"), [
    (["fold", "t.jsonl", "--frob"], "fold"),
    (["ecp", "serve", "agent.py:agent", "--htpp"], "ecp serve"),
    (["ecp", "annotate", "r.json", "--bogus", "x"], "ecp annotate"),
    (["doctor", "extra"], "doctor"),
    (["--frob"], None),
])
def test_an_unknown_option_is_said_by_its_command_with_its_usage(argv: list[str], command: str | None, capsys) -> None:
    """``otel-agents fold t.jsonl --frob`` said ``otel-agents: error: unrecognized arguments: --frob`` under the top
    level's usage (``otel-agents [-h] COMMAND ...``), which shows none of fold's options."""
    from otel_agents.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    prog = "otel-agents" + (f" {command}" if command else "")
    unknown = " ".join(argv[argv.index(next(a for a in argv if a in ("--frob", "--htpp", "--bogus", "extra"))):])
    assert exit_.value.code == 2
    assert err.startswith(f"usage: {prog} [-h]"), err
    assert err.endswith(f"\n{prog}: error: unrecognized arguments: {unknown}\n"), err


def test_good_option_values_still_parse() -> None:
    from otel_agents.cli import build_parser

    args = build_parser("ecp").parse_args(["ecp", "serve", "m:a", "--otlp-endpoint", "http://127.0.0.1:4318/v1/traces",
                                           "--path", "/agent", "--session-idle-timeout", "0.5", "--collect-grace", "0",
                                           "--step-timeout", "0", "--collect", "0", "--max-sessions", "1"])
    assert (args.otlp_endpoint, args.path, args.session_idle_timeout, args.collect_grace) == \
        ("http://127.0.0.1:4318/v1/traces", "/agent", 0.5, 0.0)
    assert (args.step_timeout, args.collect, args.max_sessions) == (0.0, 0, 1)  # 0 = no limit, any free port
    args = build_parser("ecp").parse_args(["ecp", "report", "r.json", "--fail-under", "pass_k=1",
                                           "--fail-under", "tool_success=0"])
    assert args.fail_under == ["pass_k=1", "tool_success=0"]
    assert build_parser("demo").parse_args(["demo", "--frameworks", ""]).frameworks == ""  # none here (--venv)
    assert build_parser("demo").parse_args(["demo", "--frameworks", "openai,"]).frameworks == "openai,"


def test_readme_shows_the_signature_of_instrument() -> None:
    """README showed instrument(tracer_provider=None, *, frameworks=None, capture_content=None): without
    meter_provider and vocabularies."""
    import inspect

    import otel_agents

    parts = []
    for p in inspect.signature(otel_agents.instrument).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(f"{p.name}={p.default!r}")
    shown = f"`instrument({', '.join(parts)})`"
    assert shown in (REPO / "README.md").read_text(encoding="utf-8"), shown


def test_doctor_names_the_exporters_configure_would_use_and_their_problems(tmp_path: Path) -> None:
    """A broken exporter setup was invisible to ``doctor`` (it listed frameworks and content settings only):
    now each preset of ``OTEL_AGENTS_EXPORTERS`` is a line with the problem ``configure()`` would raise (an unknown
    name, a missing key, a directory as the trace file) or an endpoint that refuses a TCP connection; one that
    takes it has no problem. Loopback only: a port just closed, and one listening."""
    import os
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = closed.getsockname()[1]
    closed.close()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
        env.update(OTEL_AGENTS_EXPORTERS="phoenix,phoenx,otlp,langfuse,file", OTEL_AGENTS_TRACES_FILE=str(tmp_path),
                   PHOENIX_COLLECTOR_ENDPOINT=f"http://127.0.0.1:{refused}",
                   OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{listening.getsockname()[1]}")
        out = _doctor(env, code=1)
    lines = out[out.index("exporters configure() would use"):].splitlines()
    assert lines[0] == "exporters configure() would use (OTEL_AGENTS_EXPORTERS=phoenix,phoenx,otlp,langfuse,file):"
    assert lines[1].startswith(f"  phoenix(endpoint='http://127.0.0.1:{refused}/v1/traces'") and \
        f"problem: 127.0.0.1:{refused}: Connection refused" in lines[1], lines
    assert lines[2].startswith("  phoenx: problem: unknown exporter preset 'phoenx'"), lines
    assert lines[3].endswith(f"-> {env['OTEL_EXPORTER_OTLP_ENDPOINT']}/v1/traces "  # no problem
                             "(opentelemetry-exporter-otlp-proto-http installed)"), lines
    assert "langfuse: problem: the langfuse preset needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in lines[4]
    assert lines[5] == f"  file(path={str(tmp_path)!r}): problem: {tmp_path} is a directory", lines
    assert lines[6:] == ["problems: 4", *(f"  {line.strip().replace(': problem: ', ': ')}"
                                          for line in (lines[1], lines[2], lines[4], lines[5]))], lines


def test_doctor_lists_each_problem_once_and_tries_the_endpoint_whatever_else_is_wrong() -> None:
    """``OTEL_EXPORTER_OTLP_COMPRESSION=brotli`` (ignored with a WARNING) with an ``otlp`` endpoint that refuses:
    before, ``problems: 2`` were the variable twice (as a variable, and again as the ``otlp`` preset's problem),
    and the endpoint was not tried (its problem was the variable), so the refusal showed only once the variable was
    fixed. Now each is listed once, the refusal whatever else is wrong with the preset; the preset's line still says
    both."""
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = closed.getsockname()[1]
    closed.close()
    out = _doctor(_clean_env(OTEL_AGENTS_EXPORTERS="otlp", OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{refused}",
                             OTEL_EXPORTER_OTLP_COMPRESSION="brotli"), code=1)
    brotli = ("OTEL_EXPORTER_OTLP_COMPRESSION='brotli' is not valid; allowed over http/protobuf: gzip, deflate, none; "
              "ignored, as if unset")
    refusal = f"127.0.0.1:{refused}: Connection refused (spans sent there are dropped at exit)"
    line = next(line for line in out.splitlines() if line.startswith("  otlp("))
    assert line.endswith(f"/v1/traces: problem: {brotli}; {refusal}"), line
    assert out[out.index("problems:"):].splitlines() == [
        "problems: 2", f"  {brotli}", f"  {line.strip().split(': problem: ')[0]}: {refusal}"], out


def test_doctor_checks_the_files_of_the_zero_code_exporters(tmp_path: Path) -> None:
    """``OTEL_AGENTS_ECP_FILE`` naming a directory (or a path under a file) made ``opentelemetry-instrument
    --traces_exporter ecp`` write no envelope, with one logged error at start, and ``doctor`` said "no problems
    found": it checked only the ``file`` preset's trace file. Now the envelope file (when ``ecp`` is named or the
    variable set) and ``otlp_json_file``'s trace file (when named) are lines with their problem; files not used
    are not shown, and a writable one has no problem."""
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    under_a_file = tmp_path / "a-file"
    under_a_file.write_text("")
    env = {**clean, "OTEL_AGENTS_ECP_FILE": str(tmp_path), "OTEL_TRACES_EXPORTER": "otlp_json_file,console",
           "OTEL_AGENTS_TRACES_FILE": f"{under_a_file}/t.jsonl", "OTEL_AGENTS_EXPORTERS": "console"}
    out = _doctor(env, code=1)
    envelopes = (f"  ECP envelopes file of the 'ecp' traces exporter: {tmp_path} (OTEL_AGENTS_ECP_FILE={tmp_path}): "
                 f"problem: {tmp_path} is a directory")
    traces = (f"  traces file of the 'otlp_json_file' traces exporter: {under_a_file}/t.jsonl "
              f"(OTEL_AGENTS_TRACES_FILE={under_a_file}/t.jsonl): problem: cannot append to {under_a_file}/t.jsonl: "
              "Not a directory")
    assert envelopes in out.splitlines() and traces in out.splitlines(), out
    assert out.splitlines()[-3:] == ["problems: 2", *(f"  {line.strip().replace(': problem: ', ': ')}"
                                                      for line in (envelopes, traces))], out
    writable = _doctor({**clean, "OTEL_TRACES_EXPORTER": "ecp", "OTEL_AGENTS_EXPORTERS": "console"}, cwd=tmp_path)
    assert "  ECP envelopes file of the 'ecp' traces exporter: otel-agents-envelopes.jsonl " \
           "(OTEL_AGENTS_ECP_FILE=<unset>)" in writable.splitlines(), writable
    assert "'otlp_json_file'" not in writable and os.listdir(tmp_path) == ["a-file"]
    assert "traces exporter:" not in _doctor({**clean, "OTEL_AGENTS_EXPORTERS": "console"}).replace(
        "otlp traces exporter:", "")


def test_doctor_counts_one_destination_given_twice_as_a_problem(tmp_path: Path) -> None:
    """``OTEL_AGENTS_EXPORTERS=file,console,file``, which ``configure()`` refuses (every span written twice), is a
    problem of the exporters' list."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    out = _doctor({**env, "OTEL_AGENTS_EXPORTERS": "file,console,file"}, code=1, cwd=tmp_path)
    said = "exporters: file(path='otel-agents-traces.jsonl') is given twice: every span would be exported to it twice"
    assert out.splitlines()[-4:] == ["  file(path='otel-agents-traces.jsonl')", f"  problem: {said}", "problems: 1",
                                     f"  {said}"], out


def test_doctor_counts_an_exporters_variable_naming_no_preset_as_a_problem(monkeypatch, capsys) -> None:
    """``OTEL_AGENTS_EXPORTERS=,,`` makes ``configure()`` raise: doctor showed the problem under the exporters but
    ended with "no problems found" and exit status 0, so a CI gate on ``doctor`` let it through."""
    from otel_agents import _api
    from otel_agents.cli import doctor

    for name in [k for k in __import__("os").environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(_api, "_installed_version", lambda fw: None)
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", ",,")
    assert doctor.run(argparse.Namespace()) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == ["problems: 1", "  OTEL_AGENTS_EXPORTERS=',,' names no exporter preset; valid: "
                                     "['console', 'file', 'langfuse', 'mlflow', 'otlp', 'phoenix'] (unset it for the "
                                     "default, file)"], out


_HUNG_RESOLVER = """
import socket
import threading

_lookup = socket.getaddrinfo


def getaddrinfo(host, *args, **kwargs):  # a resolver that never answers for *.hang
    if isinstance(host, str) and host.endswith(".hang"):
        threading.Event().wait()
    return _lookup(host, *args, **kwargs)


socket.getaddrinfo = getaddrinfo
"""


def test_doctor_bounds_an_endpoint_that_never_answers(tmp_path: Path) -> None:
    """``create_connection``'s timeout bounds the connect, not the name lookup before it: a resolver that does not
    answer held ``doctor`` for as long as it took. Now each endpoint gets 2 s in all, and its line says which
    endpoint and why: the lookup that did not finish (a resolver that never answers, put in the doctor's own
    process by a ``sitecustomize``), a connect that got no answer (a loopback listener whose backlog is full)."""
    import os
    import socket

    (tmp_path / "sitecustomize.py").write_text(_HUNG_RESOLVER, encoding="utf-8")
    env = _clean_env(OTEL_AGENTS_EXPORTERS="otlp,phoenix",
                     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://collector.hang:4318/v1/traces",
                     PYTHONPATH=os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        queued = [socket.create_connection(("127.0.0.1", port), timeout=5)]  # the backlog's one connection
        env["PHOENIX_COLLECTOR_ENDPOINT"] = f"http://127.0.0.1:{port}"
        try:
            proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True,
                                  env=env, cwd=tmp_path, timeout=120)  # hung (before): TimeoutExpired
        finally:
            for sock in queued:
                sock.close()
    assert (proc.returncode, proc.stderr) == (1, ""), (proc.stderr, proc.stdout)
    lines = proc.stdout[proc.stdout.index("exporters configure() would use"):].splitlines()
    assert lines[1].endswith("-> http://collector.hang:4318/v1/traces: problem: collector.hang:4318: the name "
                             "lookup did not finish within 2 s (spans sent there are dropped at exit)"), lines
    assert lines[2].endswith(f"problem: 127.0.0.1:{port}: no answer within 2 s (spans sent there are dropped at "
                             "exit)"), lines


_SENDERS = """
import sys
from otel_agents.evaluations import EvaluationResult, annotate_phoenix, score_langfuse
result = EvaluationResult(name="execution:agent", score=1.0, label="pass", explanation=None, trace_id="ab" * 16,
                          span_id="cd" * 8, grader="execution", scenario="s", step=1, check=1)
print(annotate_phoenix([result], "http://phoenix.hang:6006", wait=0, timeout=60).failed)
print(score_langfuse([result], "https://langfuse.hang", public_key="pk", secret_key="sk", timeout=60).failed)
"""


def test_export_and_annotate_bound_a_name_lookup_that_never_answers(tmp_path: Path) -> None:
    """urllib's timeout (and the OTLP/HTTP exporter's) bounds the connect and the reads, not the name lookup before
    them: a resolver that never answers (a ``sitecustomize`` in the process) held ``otel-agents export`` and ``ecp
    annotate``'s Phoenix and Langfuse deliveries for as long as it took. Now the name gets 2 s, doctor's bound, and
    the error names the endpoint and why; nothing is sent."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_HUNG_RESOLVER, encoding="utf-8")
    env = _clean_env(PYTHONPATH=os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "s", "kind": 1, "startTimeUnixNano": "1",
            "endTimeUnixNano": "2"}
    (tmp_path / "t.jsonl").write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {}, "spans": [span]}]}]}) + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "export", "t.jsonl", "--to",
                           "http://collector.hang:4318", "--timeout", "60"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)  # hung (before): TimeoutExpired
    assert (proc.returncode, proc.stderr) == (1, "otel-agents export: cannot reach http://collector.hang:4318/v1/traces: "
                                              "collector.hang:4318: the name lookup did not finish within 2 s; no "
                                              "span sent\n"), proc.stderr
    proc = subprocess.run([sys.executable, "-c", _SENDERS], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120)
    assert proc.stdout.splitlines() == [
        "['http://phoenix.hang:6006: phoenix.hang:6006: the name lookup did not finish within 2 s; 1 annotations not "
        "sent']",
        "['https://langfuse.hang: langfuse.hang:443: the name lookup did not finish within 2 s; 1 scores not sent']"], \
        proc.stdout + proc.stderr


def test_annotate_to_otlp_bounds_a_name_lookup_that_never_answers(tmp_path: Path) -> None:
    """``ecp annotate --to otlp`` (the OTel SDK's OTLP/HTTP log exporter, whose timeout does not cover the name
    lookup either) sat in a lookup a resolver never answered until the log provider's shutdown gave up on it (30 s),
    left the export thread behind and said "1 of 1 evaluation records not accepted … (see the log above)" with
    nothing above. Now its name gets 2 s, as the other targets' do: exit 1, the line names the logs URL (given, or
    as the exporter resolves it from ``OTEL_EXPORTER_OTLP_ENDPOINT``) and why, nothing sent. ``export_otlp()``
    says it as one WARNING."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_HUNG_RESOLVER, encoding="utf-8")
    env = _clean_env(PYTHONPATH=os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    report = {"scenarios": [{"steps": [{"checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    annotate = [sys.executable, "-m", "otel_agents.cli", "ecp", "annotate", "r.json", "--to", "otlp"]
    for extra, variables, url in (
            (["-o", "http://collector.hang:4318/v1/logs"], {}, "http://collector.hang:4318/v1/logs"),
            ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://logs.hang:4318"}, "http://logs.hang:4318/v1/logs")):
        proc = subprocess.run(annotate + extra, capture_output=True, text=True, env={**env, **variables}, cwd=tmp_path,
                              timeout=120)
        host = url.split("/")[2]
        assert (proc.returncode, proc.stderr.splitlines()[-1]) == (
            1, f"otel-agents ecp annotate: {url}: {host}: the name lookup did not finish within 2 s; 1 evaluation "
               "records not sent"), proc.stderr
        assert "0 sent to otlp" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    proc = subprocess.run([sys.executable, "-c", _SENDERS.split("print(")[0] + "from otel_agents.evaluations import "
                           "export_otlp\nprint(export_otlp([result], 'http://logs.hang:4318/v1/logs'))\n"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert (proc.stdout, proc.stderr) == ("0\n", "otel_agents: http://logs.hang:4318/v1/logs: logs.hang:4318: the name "
                                          "lookup did not finish within 2 s; 1 evaluation records not sent\n"), proc


def test_doctor_shows_no_credential_of_an_endpoint(tmp_path: Path) -> None:
    """An endpoint carrying a credential (``https://user:PASSWORD@host``, which the OTLP/HTTP exporter sends as
    basic auth) was printed whole, three times, in the lines and the problems a user pastes into an issue: now
    redacted wherever it appears, the rest of the line kept."""
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = closed.getsockname()[1]
    closed.close()
    env = _clean_env(OTEL_AGENTS_EXPORTERS="otlp",
                     OTEL_EXPORTER_OTLP_ENDPOINT=f"http://alice:s3cr3t@127.0.0.1:{refused}")
    out = _doctor(env, code=1, cwd=tmp_path)
    assert "s3cr3t" not in out, out
    assert f"-> http://[REDACTED]@127.0.0.1:{refused}/v1/traces: problem: 127.0.0.1:{refused}" in out, out
    # a key in the traces URL's query: its name percent-encoded, a fragment after it (shown by both the exporter's
    # line and opentelemetry-instrument's)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"http://127.0.0.1:{refused}/v1/traces?access%5Ftoken=s3cr3t#f"
    out = _doctor(env, code=1, cwd=tmp_path)
    assert "s3cr3t" not in out, out
    assert f"-> http://127.0.0.1:{refused}/v1/traces?access%5Ftoken=[REDACTED]#f: problem: 127.0.0.1:{refused}" \
        in out, out


def _clean_env(**values: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    env.update(values)
    return env


def test_doctor_names_a_disabled_instrumentation_that_is_none(tmp_path: Path) -> None:
    """``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=langchan`` (misspelt) disabled nothing, and doctor said "no problems
    found" (the LangChain row: "not instrumented yet", as always). Now each name that is neither one of ours nor an
    installed ``opentelemetry_instrumentor`` entry point (``requests``, ``*`` are) is a problem, with the name it
    resembles."""
    env = _clean_env(OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="langchan, requests,*,crewai")
    out = _doctor(env, code=1, cwd=tmp_path)
    assert out.count("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names") == 1, out  # under problems:, not requests or *
    assert ("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names 'langchan', no instrumentation installed here: it disables "
            "nothing (did you mean 'langchain'?)") in out, out
    _doctor(_clean_env(OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="langchain, requests,*,crewai"), cwd=tmp_path)


def test_doctor_exits_0_when_it_found_no_problem(tmp_path: Path) -> None:
    """Nothing wrong (the default file exporter in a writable directory, no variable set): exit status 0."""
    out = _doctor(_clean_env(), code=0, cwd=tmp_path)
    assert out.splitlines()[-1] == "no problems found", out
    assert "OpenTelemetry SDK: enabled (OTEL_SDK_DISABLED=<unset>)" in out, out


BAD_VALUES = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "maybe", "OTEL_AGENTS_MAX_CONTENT_LENGTH": "abc",
              "OTEL_AGENTS_MAX_MEDIA_BYTES": "4k", "OTEL_AGENTS_STREAM_IDLE_TIMEOUT": "5m",
              "OTEL_AGENTS_STATUS_OK": "sure", "OTEL_AGENTS_VOCABULARIES": "phoenix",
              "OTEL_AGENTS_MCP_PROPAGATE": "perhaps", "OTEL_AGENTS_A2A_PROPAGATE": "nope", "OTEL_SDK_DISABLED": "1"}


def test_doctor_exits_1_naming_each_variable_whose_value_is_not_valid(tmp_path: Path) -> None:
    """``doctor`` always exited 0, and a bad value was a warning on standard error (where it read like a crash of
    doctor itself), or not read at all (``OTEL_AGENTS_STATUS_OK``, the media budget, the idle timeout,
    ``OTEL_SDK_DISABLED``, which the SDK reads as enabled unless it is ``true``): now each is one line under
    ``problems:``, naming the variable and the value, and the exit status is 1."""
    out = _doctor(_clean_env(**BAD_VALUES), code=1, cwd=tmp_path)
    problems = out[out.index("problems: "):].splitlines()
    assert problems[0] == f"problems: {len(BAD_VALUES)}", out
    for name, value in BAD_VALUES.items():
        assert sum(line.startswith(f"  {name}={value!r}") for line in problems) == 1, (name, out)
    assert "OpenTelemetry SDK: enabled (OTEL_SDK_DISABLED=1)" in out, out


def test_doctor_names_a_number_out_of_its_range_as_a_problem(monkeypatch, capsys) -> None:
    """``OTEL_AGENTS_MAX_CONTENT_LENGTH=-5`` was a budget of 64 and ``OTEL_AGENTS_MAX_MEDIA_BYTES=-1`` one of 0:
    doctor showed the value used and "no problems found". Now each is ignored (the default used, as the
    OpenTelemetry specification asks of a numeric variable out of range) and listed, with its range."""
    import os

    from otel_agents import _api
    from otel_agents.cli import doctor

    for name in [k for k in os.environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "console")
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "-5")
    monkeypatch.setenv("OTEL_AGENTS_MAX_MEDIA_BYTES", "-1")
    assert doctor.run(argparse.Namespace()) == 1
    out = capsys.readouterr().out
    assert "content budget: 16384 characters per attribute (OTEL_AGENTS_MAX_CONTENT_LENGTH=-5)" in out, out
    assert "inline media budget: 4096 bytes per part (OTEL_AGENTS_MAX_MEDIA_BYTES=-1)" in out, out
    assert out[out.index("problems: "):].splitlines() == [
        "problems: 2",
        "  OTEL_AGENTS_MAX_CONTENT_LENGTH='-5' is not valid; it must be a whole number of characters, at least 64; "
        "using the default, 16384",
        "  OTEL_AGENTS_MAX_MEDIA_BYTES='-1' is not valid; it must be a whole number of bytes, at least 0; using the "
        "default, 4096"], out


def test_doctor_says_the_sdk_is_disabled(tmp_path: Path) -> None:
    """``OTEL_SDK_DISABLED=true`` is a choice, not a problem: doctor says that no spans will be recorded."""
    out = _doctor(_clean_env(OTEL_SDK_DISABLED="TRUE"), code=0, cwd=tmp_path)
    assert "OpenTelemetry SDK: disabled: no spans are recorded" in out, out


def test_doctor_shows_a_huge_budget_exactly(monkeypatch, capsys) -> None:
    """A budget past a float's 53 bits was read through ``float`` and shown (and applied) rounded
    (``123456789012345678901`` as ``123456789012345683968``); an integer is now read as written, from the
    environment or from ``Settings`` (where one past a float's range raised in ``math.isfinite``)."""
    from otel_agents import _api
    from otel_agents._spans import Settings
    from otel_agents.cli import doctor

    for name in [k for k in __import__("os").environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "console")
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "123456789012345678901")
    monkeypatch.setenv("OTEL_AGENTS_MAX_MEDIA_BYTES", "98765432109876543210")
    doctor.run(argparse.Namespace())
    out = capsys.readouterr().out
    assert "content budget: 123456789012345678901 characters per attribute" in out, out
    assert "inline media budget: 98765432109876543210 bytes per part" in out, out
    assert Settings(max_content_length=10 ** 400, max_media_bytes=10 ** 400).span_policy()[1::3] == (10 ** 400,) * 2


def test_doctor_counts_an_unsupported_framework_version_as_a_problem(monkeypatch, capsys) -> None:
    """A framework installed at a version we do not support is not instrumented: a problem (exit status 1)."""
    from otel_agents import _api
    from otel_agents.cli import doctor

    for name in [k for k in __import__("os").environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(_api, "_installed_version", lambda fw: "0.0.1" if fw.name == "crewai" else None)
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "console")
    assert doctor.run(argparse.Namespace()) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == ["problems: 1", f"  crewai: unsupported version 0.0.1 (supported: "
                                                    f"{FRAMEWORKS['crewai'].supported}): it is not instrumented"], out


def test_doctor_says_whether_opentelemetry_instrument_would_load_and_export(monkeypatch) -> None:
    """Without a distro ``opentelemetry-instrument`` instruments, records into a no-op provider and exports
    nothing, silently; run from a source tree (importable, not installed) it loads none of our instrumentors.
    ``doctor`` said neither."""
    from importlib import metadata

    from otel_agents.cli import doctor

    real = metadata.entry_points
    assert doctor.zero_code_line().startswith(f"opentelemetry-instrument: {len(FRAMEWORKS)} otel-agents "
                                              "instrumentors registered; SDK configurator: ")
    # it said "SDK configurator configurator (opentelemetry-distro)": the distribution first, then its entry point
    assert "; SDK configurator: opentelemetry-distro (entry point configurator)" in doctor.zero_code_line()
    for group in ("opentelemetry_configurator", "opentelemetry_instrumentor"):
        monkeypatch.setattr(metadata, "entry_points",
                            lambda group=None, _gone=group, **kw: [] if group == _gone else real(group=group, **kw))
        line = doctor.zero_code_line()
        if group == "opentelemetry_configurator":
            assert line.endswith("note: no SDK configurator (distro) is installed: it would export nothing "
                                 "(pip install 'otel-agents[zero-code]')"), line
        else:
            assert line.startswith("opentelemetry-instrument: 0 otel-agents instrumentors registered (otel-agents is "
                                   "importable but not installed here"), line


@pytest.mark.parametrize("path", ["/proc/otel-agents-doctor/t.jsonl", "/proc/t.jsonl"])
def test_doctor_tries_the_trace_file_as_configure_would(path: str, tmp_path: Path) -> None:
    """``doctor`` judged the trace file by ``os.access``, which says yes to root everywhere: as root (a container)
    it reported no problem for a file under ``/proc``, where ``configure()`` then raised. Now it tries (and leaves
    nothing behind); ``configure()`` fails on the same path."""
    out = _doctor(_clean_env(OTEL_AGENTS_TRACES_FILE=path), code=1, cwd=tmp_path)
    assert f"  file(path={path!r}): problem: cannot append to {path}: " in out, out
    proc = subprocess.run([sys.executable, "-c", "import otel_agents; otel_agents.configure(frameworks=[])"],
                          capture_output=True, text=True, env=_clean_env(OTEL_AGENTS_TRACES_FILE=path), cwd=tmp_path)
    assert proc.returncode == 1 and f"OTEL_AGENTS_TRACES_FILE={path!r}: cannot append spans to it" in proc.stderr


def test_doctor_leaves_no_probe_behind(tmp_path: Path) -> None:
    for name in ("t.jsonl", "new/dir/t.jsonl"):
        out = _doctor(_clean_env(OTEL_AGENTS_TRACES_FILE=str(tmp_path / name)), code=0, cwd=tmp_path)
        assert out.splitlines()[-1] == "no problems found", out
        assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_doctor_reports_the_same_problems_on_a_second_run_in_one_process(monkeypatch, capsys, tmp_path) -> None:
    """``doctor`` found bad values through the warnings the code reading them logs once per process (and the
    vocabularies' parse cache): a second ``doctor.run()`` in the same process saw none of them and said "no
    problems found". Its problem list no longer depends on what was warned before."""
    import os

    from otel_agents.cli import doctor

    for name in [k for k in os.environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    for name, value in {**BAD_VALUES, "OTEL_AGENTS_EXPORTERS": "console"}.items():
        monkeypatch.setenv(name, value)
    outputs = []
    for _ in range(2):
        assert doctor.run(argparse.Namespace()) == 1
        out = capsys.readouterr().out
        outputs.append(out[out.index("problems: "):].splitlines())
    assert outputs[0] == outputs[1], outputs
    assert outputs[0][0] == f"problems: {len(BAD_VALUES)}", outputs[0]
    for name, value in BAD_VALUES.items():
        assert sum(line.startswith(f"  {name}={value!r}") for line in outputs[1]) == 1, (name, outputs[1])


def test_doctor_says_which_otlp_protocol_and_endpoint_and_whether_the_exporter_imports(monkeypatch) -> None:
    """``doctor`` reported ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` as a problem (``configure()`` refused it) and probed
    the HTTP endpoint. Now it names the protocol, the endpoint the exporter will use (gRPC: no ``/v1/traces``; the
    traces variables win), and whether that protocol's exporter can be imported (package and extra when not); the
    same for ``opentelemetry-instrument``'s ``otlp`` exporter (the standard distro defaults to gRPC)."""
    import os
    import socket

    from otel_agents.cli import doctor

    for name in [k for k in os.environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        url = f"http://127.0.0.1:{listening.getsockname()[1]}"
        monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        assert doctor.exporter_lines()[1] == (f"  otlp(protocol='grpc', endpoint='from OTEL_EXPORTER_OTLP_* environment',"
                                              f" headers=[]) -> {url} (opentelemetry-exporter-otlp-proto-grpc installed)")
        assert doctor.zero_code_otlp_line() == ("  opentelemetry-instrument's otlp traces exporter: grpc "
                                                f"(OTEL_EXPORTER_OTLP_PROTOCOL) to {url} "
                                                "(opentelemetry-exporter-otlp-proto-grpc installed)")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")  # wins
        assert doctor.exporter_lines()[1].endswith(f"-> {url}/v1/traces (opentelemetry-exporter-otlp-proto-http "
                                                   "installed)")
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
        line = doctor.exporter_lines()[1]
        assert line.startswith(f"  otlp(protocol='grpc', ") and line.endswith(
            "problem: the OTLP exporter for grpc cannot be imported (import of "
            "opentelemetry.exporter.otlp.proto.grpc.trace_exporter halted; None in sys.modules): "
            "pip install 'otel-agents[otlp-grpc]' (it brings opentelemetry-exporter-otlp-proto-grpc)"), line
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL")  # the standard distro's default, gRPC
        assert doctor.zero_code_otlp_line() == (
            "  opentelemetry-instrument's otlp traces exporter: grpc (the standard distro's default) to "
            f"{url}; note: the OTLP exporter for grpc cannot be imported (import of "
            "opentelemetry.exporter.otlp.proto.grpc.trace_exporter halted; None in sys.modules): pip install "
            "'otel-agents[otlp-grpc]' (it brings opentelemetry-exporter-otlp-proto-grpc), or the launcher's set-up "
            "fails (no instrumentation, no export)")


def test_demo_help_counts_protocols_apart_from_frameworks() -> None:
    """``--help`` said "11 frameworks, PydanticAI over MCP, ...": A2A, a protocol row (PydanticAI over A2A)
    like MCP, was counted as a framework and not named."""
    assert demo.MCP not in demo.agent_frameworks() and demo.A2A not in demo.agent_frameworks()
    help_text = " ".join(_demo_help().split())
    assert "A2A" in demo.summary() and f"{len(demo.agent_frameworks())} frameworks" in help_text


def test_top_level_help_names_every_ecp_subcommand() -> None:
    """``otel-agents --help`` listed ``ecp serve, ecp annotate`` only: a user looking for ``collect`` or
    ``report`` (README's reliability and cross-process sections) did not find them there."""
    from otel_agents import cli

    ecp = argparse.ArgumentParser()
    importlib.import_module("otel_agents.cli.ecp").register(ecp.add_subparsers())
    names = next(a for a in ecp._subparsers._group_actions).choices["ecp"]._subparsers._group_actions[0].choices
    first_line = cli.__doc__.splitlines()[0]
    for name in names:
        assert f"``ecp {name}``" in first_line, (name, first_line)


def test_demo_json_dash_prints_no_table_as_its_help_says(tmp_path: Path) -> None:
    """``--json -``'s help said "progress and table on standard error"; the demo prints no table then (the
    calling ``--venv`` demo folds the rows into its own): the help and the module docstring now say so."""
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "demo", "--frameworks", "", "--json", "-",
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"runs": []}, proc
    assert "framework " not in proc.stderr, proc.stderr
    (option,) = [a for a in build_demo_parser()._actions if "--json" in a.option_strings]
    assert "no table" in option.help and "no table" in " ".join(demo.__doc__.split())


def build_demo_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    demo.register(parser.add_subparsers())
    (sub,) = parser._subparsers._group_actions[0].choices.values()
    return sub


def test_doctor_reports_the_otlp_settings_the_exporter_refuses_or_ignores(monkeypatch) -> None:
    """``OTEL_EXPORTER_OTLP_TIMEOUT=abc`` made ``configure()`` raise over gRPC, and over HTTP the exporter fell back
    to 10 s with a warning (so did an unknown compression, a header entry that is not name=value), while
    ``doctor`` said only whether the endpoint answered. Now each is the preset's problem, a header entry never
    quoted (it may be a credential); valid settings are none. The timeout that is no number is ignored with our
    WARNING over both protocols (the OpenTelemetry specification's rule for a numeric variable)."""
    import os
    import socket

    from otel_agents.cli import doctor

    for name in [k for k in os.environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))]:
        monkeypatch.delenv(name)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{listening.getsockname()[1]}")
        monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "5")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=ai")
        assert doctor.exporter_lines()[1].endswith("(opentelemetry-exporter-otlp-proto-http installed)")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "abc")  # ignored with a WARNING over HTTP and gRPC alike
        ignored = ("OTEL_EXPORTER_OTLP_TIMEOUT='abc' is not valid; it must be a positive number of seconds (every "
                   "export would fail with it); ignored, as if unset")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "brotli")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization Bearer s3cr3t")
        line = doctor.exporter_lines()[1]
        assert line.endswith(f"problem: {ignored}; OTEL_EXPORTER_OTLP_COMPRESSION='brotli' is not valid; allowed "
                             "over http/protobuf: gzip, deflate, none; ignored, as if unset; the OpenTelemetry "
                             "exporter says: OTEL_EXPORTER_OTLP_(TRACES_)HEADERS holds an entry that is not name=value "
                             "(URL-encoded)"), line
        assert "s3cr3t" not in line
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_COMPRESSION")
        line = doctor.exporter_lines()[1]
        assert f"problem: {ignored}; " in line and "refuses" not in line, line  # configure() raised (before)


def test_doctor_never_shows_a_header_value_or_a_key(monkeypatch) -> None:
    """``doctor`` showed a variable's value as it was (``_shown``, and a bad value's WARNING): a headers variable or
    a key would have been printed whole, with nothing saying which credentials configure() would send. Now the
    headers variables show their header names only and the keys ``[REDACTED]`` (an entry that is not
    ``name=value``, which may be a whole ``Authorization Bearer ...``, wholly), in one line saying which are set;
    a bad value's message shows it the same way."""
    import contextlib
    import io
    import os

    from otel_agents._spans import settings
    from otel_agents.cli import doctor

    for name in [k for k in os.environ if k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_", "MLFLOW_"))]:
        monkeypatch.delenv(name)
    values = {"OTEL_EXPORTER_OTLP_HEADERS": "x-honeycomb-team=hc0ffee42,x-team=ai",
              "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=tr4cesk3y,Authorization Bearer b34rer",
              "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-logs=l0gsk3y", "PHOENIX_API_KEY": "phx-k3y-0123456789",
              "LANGFUSE_PUBLIC_KEY": "pk-lf-pub0123456", "LANGFUSE_SECRET_KEY": "sk-lf-sec0123456",
              "MLFLOW_TRACKING_TOKEN": "mlfl0wt0k3n"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "console")
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        doctor.run(None)
    out = report.getvalue()
    assert ("credentials from the environment (header names only, no value): "
            "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=[REDACTED],x-team=[REDACTED]; "
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS=api-key=[REDACTED],[REDACTED]; "
            "OTEL_EXPORTER_OTLP_LOGS_HEADERS=x-logs=[REDACTED]; PHOENIX_API_KEY=[REDACTED]; "
            "LANGFUSE_PUBLIC_KEY=[REDACTED]; LANGFUSE_SECRET_KEY=[REDACTED]; MLFLOW_TRACKING_TOKEN=[REDACTED]\n") in out
    for name, value in values.items():
        assert doctor._shown(name) in out and value not in doctor._shown(name)
    assert not any(secret in out for secret in ("hc0ffee42", "tr4cesk3y", "b34rer", "l0gsk3y", "0123456", "t0k3n"))
    said: list[str] = []
    with settings.bad_values(said):
        settings.warn_bad_variable("PHOENIX_API_KEY", "phx-k3y-0123456789", "ignored")
        settings.warn_bad_variable("OTEL_EXPORTER_OTLP_HEADERS", "x-team=s3cr3t", "ignored")
    assert said == ["PHOENIX_API_KEY='[REDACTED]' is not valid; ignored",
                    "OTEL_EXPORTER_OTLP_HEADERS='x-team=[REDACTED]' is not valid; ignored"]
