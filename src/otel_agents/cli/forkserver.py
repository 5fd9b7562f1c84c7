"""A fork server for ``otel-agents ecp serve`` and ``ecp run``: import a framework once, serve each ECP run from a fork.

``ecp run`` starts its stdio agent afresh for every scenario, and most of an ``ecp serve`` start-up is
importing the framework (1-5 s of CPU). ``otel-agents demo`` grades each framework's three twins, two
scenarios each, so it starts one fork server per framework instead, which does what ``ecp serve`` does
before it serves (a tracer provider, :func:`otel_agents.instrument`, the targets imported, in that
order), imports what the first step of each run folds it with (the ECP fold, genai-prices' price table;
each child imported them again) and then waits on a Unix socket. The manifests' targets run this file as a client::

    exec python -I forkserver.py SOCKET otel-agents ecp serve FILE:ATTR --trace-file ... --log-file ...

The client hands its standard input, output and error (``SCM_RIGHTS``), working directory, environment
and the command to the server, whose forked child runs that ``ecp serve`` command on them: a process of
its own per scenario, as with the command itself, without importing anything again. The client passes
SIGTERM/SIGINT on to the child (ecp-runtime ends a scenario's agent with SIGTERM) and exits with its
status; a client killed outright (SIGKILL) ends its child all the same, by closing its end of the
connection. A client whose environment differs from the one the server started in (beyond what a shell sets)
is told to exec the command itself (the server's log names the variables that differ), so its exit status is
still the command's; a target is
imported again in the fork when ``ecp serve`` changed the environment before loading it (``--collect``: an
example may read it at import). With no server listening on SOCKET (the demo is over) the client execs the
command itself, so the manifests stay runnable by hand. The client is run by path and imports the standard library only.

``--serve-ecp-run SOCKET`` (:func:`serve_ecp_run`) is the same server for ``ecp run`` itself: it imports
ecp-runtime's CLI (~0.35 s of CPU, most of what an ``ecp run`` of the demo's costs besides its agent), and
each client's ``python -I forkserver.py SOCKET ecp run ...`` runs in a fork calling its entry point.

The socket lives in a directory only its user can open, and the server serves only that user
(``SO_PEERCRED``). A server that finds threads running after the imports (a fork would copy their locks)
does not listen: its clients exec their commands.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import threading
from collections.abc import Callable


def client(path: str, command: list[str]) -> int:
    """Run ``command`` (``otel-agents ecp serve ...``) in a fork of the server at ``path``; its exit status."""
    child = 0
    pending: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        if child:
            os.kill(child, signum)
        else:
            pending.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        os.execvp(command[0], command)
    request = json.dumps({"argv": command, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(sock, [struct.pack("!I", len(request)) + request], [0, 1, 2])
    own = [os.dup(0), os.dup(1)]  # for an exec of our own (below)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the child holds the pipes now: their ends close when it exits
        os.dup2(null, fd)
    reply = sock.makefile("rb")
    first = reply.readline()
    if not first:
        return 1
    if first == b"exec\n":  # the server's imports are not for our environment: the command itself, here
        for fd, saved in enumerate(own):  # (the command's exit status is then this process's)
            os.dup2(saved, fd)
        for signum in pending:  # what we were sent meanwhile, as the command would have taken it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        os.execvp(command[0], command)
    for saved in own:
        os.close(saved)
    child = int(first)
    for signum in pending:
        os.kill(child, signum)
    status = reply.readline()  # written by the child when its command returned
    reply.read()  # end of file: the child has exited
    return int(status) if status.strip() else 1


def serve(path: str, specs: list[str]) -> int:
    """The server of ``ecp serve``: instrument, import ``specs`` (``FILE:ATTR``), then :func:`_listen` on
    ``path``, each child running its client's ``otel-agents ecp serve ...`` on what was imported here."""
    import contextlib

    from opentelemetry import trace

    from .. import instrument, instrumentation_status
    from ..serve import load_target
    from . import ecp, log_to_stderr

    environ = dict(os.environ)  # before the imports: what a client's must match
    log_to_stderr()
    provider = ecp._provider(None)
    trace.set_tracer_provider(provider)
    instrument(provider)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # as ecp serve loads its target
            targets = {spec: load_target(spec) for spec in specs}
    except Exception as exc:  # noqa: BLE001 - each client's own `ecp serve` reports it in its log
        print(f"not forking: {exc}", flush=True)
        return 1
    # what every child's first step folds its run with: the fold's modules and genai-prices' price table
    # (0.4-0.5 s of CPU in a fresh process), imported here once rather than in each child
    from ..exporters.ecp import fold  # noqa: F401
    from ..exporters.ecp._cost import load_prices
    load_prices()
    failed = [s.name for s in instrumentation_status().values() if s.reason.startswith("failed")]
    if failed or threading.active_count() > 1:  # the clients' own `ecp serve` log the failure where it is read
        print(f"not forking: instrumentation of {failed} failed, {threading.active_count()} threads", flush=True)
        return 1

    def run(argv: list[str]) -> int:
        from . import ecp, main

        ecp.PRELOADED = (provider, targets, dict(os.environ))
        return main(argv[1:])

    return _listen(path, environ, run)


def serve_ecp_run(path: str) -> int:
    """The server of ``ecp run`` (ecp-runtime's CLI, the demo's graders): import it (~0.35 s of CPU a process,
    most of what an ``ecp run`` costs), then :func:`_listen` on ``path``, each child calling its entry point
    with its client's arguments, as the ``ecp`` script does."""

    environ = dict(os.environ)
    from ecp_runtime.cli import app

    if threading.active_count() > 1:
        print(f"not forking: {threading.active_count()} threads", flush=True)
        return 1
    return _listen(path, environ, lambda argv: app(args=argv[1:], prog_name="ecp"))


def _listen(path: str, environ: dict, run: Callable[[list[str]], int]) -> int:
    """Listen on ``path`` and fork a child per client until SIGTERM, then end the children still running; each
    child calls ``run`` with its client's command (in the client's environment, see :func:`_child`), unless that
    environment differs from ``environ``. Prints ``ready`` on stdout when it listens."""
    import contextlib
    import gc

    gc.freeze()  # the children's collections leave the imported objects alone: their pages stay shared
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    listener.settimeout(0.5)
    children: set[int] = set()
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)
    while not stopping:
        children -= {pid for pid in list(children) if os.waitpid(pid, os.WNOHANG)[0]}
        try:
            conn, _ = listener.accept()
        except (TimeoutError, InterruptedError):
            continue
        conn.settimeout(None)
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        pid = os.fork() if uid == os.getuid() else -1
        if pid == 0:
            listener.close()
            _child(conn, environ, run)  # never returns
        conn.close()
        if pid > 0:
            children.add(pid)
            print(f"forked {pid}", file=sys.stderr, flush=True)
    os.unlink(path)
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
    return 0


def _child(conn: socket.socket, environ: dict, run: Callable[[list[str]], int]) -> None:
    """In the forked child: take the client's descriptors and run its command (``run``, or an exec of it when its
    environment differs from ``environ``, the server's)."""
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        size = struct.unpack("!I", data[:4])[0]
        while len(data) < size + 4:
            more = conn.recv(1 << 16)
            if not more:
                raise EOFError("the client went away")
            data += more
        request = json.loads(data[4:])
        differs = sorted(k for k in _without_shell(request["env"]).keys() | _without_shell(environ).keys()
                         if request["env"].get(k) != environ.get(k))
        if differs:  # not what we imported in: the client runs the command itself (an exec here would never
            # tell it the command's exit status); said to the server's log, still our standard error (the names
            # alone: values may be secrets)
            print(f"{os.getpid()}: its client execs its command: its environment differs in {', '.join(differs)}",
                  file=sys.stderr, flush=True)
            conn.sendall(b"exec\n")
            os._exit(0)  # the server's atexit handlers are the server's
        for target_fd, fd in enumerate(fds):
            os.dup2(fd, target_fd)
            os.close(fd)
        os.chdir(request["cwd"])
        conn.sendall(f"{os.getpid()}\n".encode())
        os.environ.update({k: v for k, v in request["env"].items() if k not in _without_shell(request["env"])})
        threading.Thread(target=_end_with_client, args=(conn,), daemon=True).start()
        code = run(request["argv"])
    except BaseException as exc:  # noqa: BLE001 - reported as the exit status, as the process would
        code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 1
    try:
        conn.sendall(f"{code}\n".encode())
    except OSError:
        pass
    sys.exit(code)  # a normal exit: the agent's atexit handlers run (they stop its child processes)


def _end_with_client(conn: socket.socket) -> None:
    """In the forked child, beside its command: end it as the client's SIGTERM would, when the client has gone
    without passing one on. A client killed (SIGKILL: the demo's timeout of an ``ecp run``) closes its end of
    ``conn``, which otherwise sends nothing; the fork, in the server's process group, ran on until the demo ended."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def _without_shell(env: dict) -> dict:
    """``env`` without what a shell sets by itself (ecp-runtime starts targets with ``sh -c``)."""
    return {k: v for k, v in env.items() if k not in ("PWD", "OLDPWD", "SHLVL", "_")}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(serve(sys.argv[2], sys.argv[3:]))
    if sys.argv[1:2] == ["--serve-ecp-run"]:
        sys.exit(serve_ecp_run(sys.argv[2]))
    sys.exit(client(sys.argv[1], sys.argv[2:]))
