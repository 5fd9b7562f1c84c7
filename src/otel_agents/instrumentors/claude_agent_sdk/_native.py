"""The Claude Code CLI's own telemetry (what ``otel-agents doctor`` reports; imports nothing of the SDK).

The CLI exports OpenTelemetry data of its own only when ``CLAUDE_CODE_ENABLE_TELEMETRY`` is set in its
environment (https://code.claude.com/docs/en/monitoring-usage), which it inherits from the application
(plus ``ClaudeAgentOptions.env``), ``OTEL_EXPORTER_OTLP_*`` included. The SDK puts the current context
in the CLI's ``TRACEPARENT``, so its spans then join the run's trace under our agent span. We never set it.
"""

from __future__ import annotations

import os

ENV_CLI_TELEMETRY = "CLAUDE_CODE_ENABLE_TELEMETRY"


def cli_telemetry_note() -> str:
    """One line: whether the CLIs this process starts will export telemetry of their own."""
    value = os.environ.get(ENV_CLI_TELEMETRY)
    on = (value or "").strip().lower() not in ("", "0", "false", "no", "off")
    state = ("on: the CLI exports its own telemetry too (its spans join our traces through TRACEPARENT)" if on
             else "off (instrumenting never turns it on)")
    return f"Claude Code CLI telemetry {state} ({ENV_CLI_TELEMETRY}={value if value is not None else '<unset>'})"
