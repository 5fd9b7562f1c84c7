"""Start, check and stop a throw-away Arize Phoenix on 127.0.0.1, and read its spans back.

Standard library only, so it runs under any interpreter (the tests import it from the project's
venv) while Phoenix itself runs from its own venv (see ``provision.sh``)::

    with PhoenixServer() as px:          # ~15-30 s until GET /healthz answers
        px.otlp_url                      # "http://127.0.0.1:<port>/v1/traces" (OTLP/HTTP protobuf)
        px.wait_for_spans("project", 4)  # REST GET /v1/projects/{name}/spans, polled

The server gets free loopback ports, a temporary working directory (its sqlite database, and
``TMPDIR`` for its pid files), no gRPC listener (``launcher.py``), and
``PHOENIX_ALLOW_EXTERNAL_RESOURCES=false``, ``PHOENIX_DISABLE_AGENT_ASSISTANT=true``,
``PHOENIX_TELEMETRY_ENABLED=false``. Every ``PHOENIX_*``/``OTEL_*`` variable of the caller is dropped,
so a developer's own settings cannot point it at another database.

Which Python runs Phoenix: ``$PHOENIX_PYTHON``, else ``<repo>/.phoenix-venv/bin/python``.

CLI: ``python scripts/phoenix/server.py serve [--port 6006]`` runs one in the foreground on
127.0.0.1 (port 6006 by default, where the ``phoenix`` preset sends) and prints its URLs as JSON;
Ctrl-C (or SIGTERM) stops it and removes its working directory: its database is thrown away.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LAUNCHER = HERE / "launcher.py"

sys.path.insert(0, str(HERE.parent))
from local_server import LocalServer, free_port  # noqa: E402 - scripts/local_server.py, beside this directory


def phoenix_python() -> Path:
    """The interpreter of Phoenix's venv (it may not exist: check ``.exists()``)."""
    return Path(os.environ.get("PHOENIX_PYTHON") or REPO / ".phoenix-venv" / "bin" / "python")


class PhoenixServer(LocalServer):
    """One Phoenix process (``LocalServer``: ``start()`` blocks until ``GET /healthz`` answers, or raises
    with its log tail). ``otlp_url`` is protobuf only (JSON gets 415).

    Args:
        python: the interpreter of Phoenix's venv.
        startup_timeout: seconds to wait for ``GET /healthz`` (first start compiles .pyc: ~30 s).
        port: the loopback HTTP port; ``0`` = a free one.
    """

    name = "Phoenix"
    env_prefix = "PHOENIX_"
    health_path = "/healthz"
    provision_hint = "run scripts/phoenix/provision.sh"

    def __init__(self, python: str | os.PathLike[str] | None = None, startup_timeout: float = 120.0,
                 port: int = 0):
        super().__init__(python or phoenix_python(), port=port, startup_timeout=startup_timeout)

    def command(self) -> list[str]:
        return [self.python, str(LAUNCHER), "serve"]

    def server_env(self) -> dict[str, str]:
        return dict(
            PHOENIX_WORKING_DIR=self.workdir or "",
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(free_port()),  # unused (gRPC is disabled), but never the default 4317
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
            PHOENIX_DISABLE_AGENT_ASSISTANT="true",
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_LOG_MIGRATIONS="false",
        )

    # -- reading back ------------------------------------------------------------------------
    def spans(self, project: str) -> list[dict[str, Any]]:
        """``GET /v1/projects/{project}/spans`` in insertion order, all pages; ``[]`` while the project
        does not exist (Phoenix creates it with its first span).

        Each span: ``name``, ``context.trace_id``/``span_id`` (lower-case hex), ``parent_id`` (hex or
        ``None``), ``span_kind`` (``AGENT``, ``LLM``, ...), ``attributes`` (flat dotted keys, without
        ``openinference.span.kind``), ``status_code``, ``events``.
        """
        path = f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans"
        params: dict[str, Any] = {"limit": 1000, "order": "asc"}
        out: list[dict[str, Any]] = []
        while True:
            url = f"{self.base_url}{path}?{urllib.parse.urlencode(params)}"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    body = json.load(response)
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return out
                raise
            out.extend(body["data"])
            if not body.get("next_cursor"):
                return out
            params["cursor"] = body["next_cursor"]

    def wait_for_spans(self, project: str, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll :meth:`spans` until at least ``count`` are stored (ingestion is asynchronous: the
        OTLP POST returns before the database write)."""
        deadline = time.monotonic() + timeout
        spans: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            spans = self.spans(project)
            if len(spans) >= count:
                return spans
            time.sleep(0.1)
        raise TimeoutError(f"Phoenix shows {len(spans)} of {count} spans in project {project!r}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="a throw-away Arize Phoenix on 127.0.0.1 (gRPC off)")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run one in the foreground; Ctrl-C stops it and deletes its database")
    serve.add_argument("--port", type=int, default=6006, help="loopback HTTP port (default 6006, the phoenix preset's)")
    args = parser.parse_args()
    sys.exit(PhoenixServer(port=args.port).serve_forever())
