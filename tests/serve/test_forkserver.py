"""``otel_agents.cli.forkserver``: ``ecp run`` graded through a fork server (what ``otel-agents demo`` does),
and the same manifest once the server is gone (the client runs ``ecp serve`` itself). Real processes,
the real ECP runtime, the plain-Python example (no framework to import)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

from otel_agents.exporters.file import read_otlp_json

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EXAMPLE = ROOT / "examples" / "plain_python" / "agent.py"
FORKSERVER = ROOT / "src" / "otel_agents" / "cli" / "forkserver.py"
MANIFEST = yaml.safe_load((ROOT / "examples" / "customer_support" / "manifest.yaml").read_text(encoding="utf-8"))
N_STEPS = sum(len(s["steps"]) for s in MANIFEST["scenarios"])
N_CHECKS = sum(len(step["graders"]) for s in MANIFEST["scenarios"] for step in s["steps"])


def grade(tmp: Path, sock: Path, name: str, env: dict | None = None) -> tuple[dict, list]:
    """``ecp run`` on the example manifest whose target goes through the fork server at ``sock``."""
    out = tmp / name
    out.mkdir()
    command = [str(BIN / "otel-agents"), "ecp", "serve", f"{EXAMPLE}:agent", "--trace-file", str(out / "trace.jsonl"),
               "--log-file", str(out / "serve.log")]
    manifest = dict(MANIFEST, target="exec " + shlex.join([sys.executable, "-I", str(FORKSERVER), str(sock), *command]))
    (out / "m.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    subprocess.run([str(BIN / "ecp"), "run", "--manifest", str(out / "m.yaml"), "--json-out", str(out / "r.json")],
                   capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    return json.loads((out / "r.json").read_text()), read_otlp_json(out / "trace.jsonl")


@contextlib.contextmanager
def fork_server(tmp: Path, *how: str) -> Iterator[tuple[subprocess.Popen, Path, Path]]:
    """The fork server started with ``how`` (``--serve``, ``FILE:ATTR``; or ``--serve-ecp-run``) on a socket in
    ``tmp``, ready: ``(server, socket, its log)``; stopped on leaving, with exit status 0."""
    sock = tmp / "s.sock"
    log = tmp / "forkserver.log"
    with open(log, "w", encoding="utf-8") as err:
        server = subprocess.Popen([sys.executable, "-m", "otel_agents.cli.forkserver", how[0], str(sock), *how[1:]],
                                  stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT)
    try:
        assert server.stdout.readline().strip() == "ready"
        yield server, sock, log
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0


def test_ecp_run_through_a_fork_server_and_without_it(tmp_path: Path) -> None:
    with fork_server(tmp_path, "--serve", f"{EXAMPLE}:agent") as (server, sock, log):
        report, spans = grade(tmp_path, sock, "forked")
        assert (report["passed"], report["total"]) == (N_CHECKS, N_CHECKS)
        assert sum(s.name == "agent/step" for s in spans) == N_STEPS
        assert {s.resource.attributes["service.name"] for s in spans} == {"otel-agents-ecp"}
        assert server.poll() is None  # each scenario's `ecp serve` was a fork that ended, not the server
        forks = [line for line in log.read_text().splitlines() if line.startswith("forked ")]
        assert len(forks) == len(MANIFEST["scenarios"])  # ecp run starts the agent for every scenario
        # a client in another environment execs its command itself (what the server imported is not its)
        report, spans = grade(tmp_path, sock, "other-env", dict(os.environ, OTEL_SERVICE_NAME="another"))
        assert (report["passed"], report["total"]) == (N_CHECKS, N_CHECKS)
        assert {s.resource.attributes["service.name"] for s in spans} == {"another"}
        assert "Overriding" not in (tmp_path / "other-env" / "serve.log").read_text()
        execs = [line for line in log.read_text().splitlines() if " execs its command: " in line]
        assert len(execs) == len(forks) and all("differs in " in x and "OTEL_SERVICE_NAME" in x for x in execs), execs
        assert server.poll() is None
    assert not sock.exists()
    report, spans = grade(tmp_path, sock, "alone")  # no server: the client execs `ecp serve` itself
    assert (report["passed"], report["total"]) == (N_CHECKS, N_CHECKS)
    assert sum(s.name == "agent/step" for s in spans) == N_STEPS
    assert len([line for line in log.read_text().splitlines() if line.startswith("forked ")]) == 2 * len(forks)


_PRELOAD_PROBE = """
import os, sys
from otel_agents.cli import forkserver

def fork():  # what the children would start with, said instead of forking (-1: the connection is refused)
    print(all(m in sys.modules for m in ("otel_agents.exporters.ecp", "genai_prices.data")), flush=True)
    return -1

os.fork = fork
sys.exit(forkserver.serve(sys.argv[1], sys.argv[2:]))
"""


def test_the_fork_server_imports_the_fold_and_its_prices_for_its_children(tmp_path: Path) -> None:
    """Each child's first step folds its run: the fold's modules and genai-prices' price table (0.4 s of CPU in a
    fresh process) are imported by the server before it forks, not by every child (78 of them in the demo)."""
    import socket

    sock = tmp_path / "s.sock"
    server = subprocess.Popen([sys.executable, "-c", _PRELOAD_PROBE, str(sock), f"{EXAMPLE}:agent"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert server.stdout.readline().strip() == "ready"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(sock))
            assert server.stdout.readline().strip() == "True"
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0


def test_ecp_run_in_a_fork_of_a_server_that_imported_ecp_runtime(tmp_path: Path) -> None:
    """``otel-agents demo``'s ``ecp run``s are forks of one server that imported ecp-runtime's CLI once (~0.35 s of
    CPU each ``ecp run`` spent on it): a fork answers as the ``ecp`` script does, same output, same exit status,
    for a graded manifest (its failed checks: status 2) and for arguments it refuses (status 2, a usage error)."""
    faulty = tmp_path / "faulty.yaml"
    command = [str(BIN / "otel-agents"), "ecp", "serve", f"{EXAMPLE}:faulty_agent"]
    manifest = dict(MANIFEST, target="exec " + shlex.join(command), scenarios=MANIFEST["scenarios"][:1])
    faulty.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    with fork_server(tmp_path, "--serve-ecp-run") as (server, sock, log):
        results = {}
        for how, prefix in (("forked", [sys.executable, "-I", str(FORKSERVER), str(sock)]), ("script", [])):
            graded = subprocess.run([*prefix, str(BIN / "ecp"), "run", "--manifest", str(faulty), "--json-out",
                                     str(tmp_path / f"{how}.json")], capture_output=True, text=True, timeout=300,
                                    cwd=ROOT)
            refused = subprocess.run([*prefix, str(BIN / "ecp"), "run", "--manifest", str(tmp_path / "missing.yaml")],
                                     capture_output=True, text=True, timeout=300, cwd=ROOT)
            report = json.loads((tmp_path / f"{how}.json").read_text())
            logged = [re.sub(r"^\d\d:\d\d:\d\d \| ", "", line).replace(how, "X")
                      for line in graded.stderr.splitlines()]  # the time of each log line, the report's name
            results[how] = (graded.returncode, graded.stdout, logged, refused.returncode, refused.stdout,
                            refused.stderr, (report["passed"], report["failed"]))
        assert results["forked"] == results["script"]
        passed, failed = results["forked"][-1]
        assert results["forked"][0] == 2 and failed > 0, results
        assert f"INFO | ecp_runtime.runner | Run Complete. Passed: {passed}/{passed + failed}" in results["forked"][2]
        assert results["forked"][3] == 2, results
        assert "Invalid value for '--manifest'" in results["forked"][5] and "Traceback" not in results["forked"][5]
        assert len([line for line in log.read_text().splitlines() if line.startswith("forked ")]) == 2
        assert server.poll() is None
    assert not sock.exists()


def test_a_fork_ends_when_its_client_is_killed(tmp_path: Path) -> None:
    """A client killed with SIGKILL (the demo's timeout of an ``ecp run``) cannot pass a signal on to its fork,
    which is in the server's process group: the fork ends all the same, as on a SIGTERM passed on, instead of
    serving on (here: waiting for a request on a standard input still open) until the server stops."""
    with fork_server(tmp_path, "--serve", f"{EXAMPLE}:agent") as (_, sock, log):
        client = subprocess.Popen([sys.executable, "-I", str(FORKSERVER), str(sock), str(BIN / "otel-agents"), "ecp",
                                   "serve", f"{EXAMPLE}:agent"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=ROOT)
        client.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        client.stdin.flush()
        client.stdout.readline()  # an answer: the fork serves, its standard input (our pipe) open
        fork = int(next(line for line in log.read_text().splitlines() if line.startswith("forked ")).split()[1])
        client.kill()
        client.wait(timeout=30)
        for _ in range(600):  # up to a minute (a loaded machine), not a measure of time
            if not _alive(fork):
                break
            time.sleep(0.1)
        assert not _alive(fork), "the fork served on after its client was killed"
        client.stdin.close()
        client.stdout.close()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended and not yet reaped by the server, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_client_in_another_environment_exits_with_its_commands_status(tmp_path: Path) -> None:
    """A client whose environment is not the server's runs its command by exec, not in a fork of the server.
    The fork used to exec it, and nobody then told the client the command's exit status: the client always
    exited 1 (an ``ecp serve --replay`` that ended 0, or 2 on a bad file, said 1). Now the client execs the
    command itself: its status, its output, its standard input."""
    command = [sys.executable, "-c", "import sys; print(sys.stdin.read().upper()); sys.exit(3)"]
    with fork_server(tmp_path, "--serve", f"{EXAMPLE}:agent") as (server, sock, log):
        proc = subprocess.run([sys.executable, "-I", str(FORKSERVER), str(sock), *command], input="from stdin",
                              capture_output=True, text=True, timeout=60, env=dict(os.environ, OTEL_SERVICE_NAME="x"))
        assert (proc.returncode, proc.stdout) == (3, "FROM STDIN\n"), proc
        assert any(" execs its command: " in line and "OTEL_SERVICE_NAME" in line
                   for line in log.read_text().splitlines()), log.read_text()
        assert server.poll() is None
