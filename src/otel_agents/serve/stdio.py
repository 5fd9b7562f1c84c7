"""ECP over stdio: one JSON-RPC object per line in, one per line out (the ECP default transport).

Responses are ASCII JSON (``\\uXXXX`` escapes), so any string an agent returns, lone surrogates
included, travels as valid UTF-8.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, TextIO

from .jsonrpc import handle


def serve_stdio(methods: Mapping[str, Any], stdin: TextIO, stdout: TextIO) -> None:
    """Answer each non-blank line of ``stdin`` on ``stdout`` until end of input."""
    for line in stdin:
        if not line.strip():
            continue
        response = handle(line, methods)
        if response is not None:
            stdout.write(json.dumps(response) + "\n")
            stdout.flush()
