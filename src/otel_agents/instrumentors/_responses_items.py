"""The OpenAI Responses API's items that call a tool the client runs, and the items that answer them: read alike by
the openai client's instrumentor (``openai._responses``) and the Agents SDK's (``openai_agents._convert``).

Shapes: OpenAI API reference, Responses, input and output items: ``function_call`` (``name``, ``arguments`` as JSON
text), ``custom_tool_call`` (``name``, ``input`` as free text), and the built-in client tools ``shell_call`` and
``local_shell_call`` (an ``action``), ``apply_patch_call`` (an ``operation``), ``computer_call`` (an ``action``),
each with its ``call_id``; each answered by the item of the same type with ``_output`` appended (``output``, the
same ``call_id``; ``local_shell_call_output`` has only an ``id`` in the API, the Agents SDK adds ``call_id``). A
built-in tool's call names no tool: its name is the tool's type (``shell``, ``apply_patch``, ``local_shell``,
``computer``), as a request's ``tools`` give it and the Agents SDK names its tool span.
"""

from __future__ import annotations

from typing import Any

from ._sdk_client import field_of

CALL_ARGUMENTS = {"function_call": "arguments", "custom_tool_call": "input", "shell_call": "action",
                  "local_shell_call": "action", "apply_patch_call": "operation", "computer_call": "action"}
"""Each call item's type → the field holding what the model asked for (the call's arguments)."""

CALL_OUTPUTS = frozenset(f"{kind}_output" for kind in CALL_ARGUMENTS)
"""The types of the items answering a call (the tool's result, sent back to the model)."""


def call_of(item: Any, kind: str) -> tuple[str, Any, Any]:
    """``(name, arguments, call_id)`` of a call item (a dict or an ``openai`` model) of type ``kind``, a key of
    :data:`CALL_ARGUMENTS`; ``arguments`` as the item holds them (JSON text, free text or an object)."""
    name = field_of(item, "name") if kind in ("function_call", "custom_tool_call") else kind[:-len("_call")]
    arguments = field_of(item, CALL_ARGUMENTS[kind])
    dump = getattr(arguments, "model_dump", None)
    if callable(dump):  # an action or operation model: the fields the model sent, not the ones it left out as None
        arguments = dump(exclude_unset=True)
    return name or "", arguments, field_of(item, "call_id") or field_of(item, "id")


def answer_of(item: Any) -> tuple[Any, Any]:
    """``(output, call_id)`` of an item (a dict or an ``openai`` model) of a type in :data:`CALL_OUTPUTS`."""
    return field_of(item, "output"), field_of(item, "call_id") or field_of(item, "id")


def finish_reason(status: Any, incomplete_reason: Any, calls: bool) -> str | None:
    """The OTel GenAI finish reason of a ``Response`` with this ``status`` and ``incomplete_details.reason``, whose
    output requested a tool call when ``calls``. The Responses API sends a status, not a finish reason:
    ``incomplete`` gives its reason (``max_output_tokens``, ``content_filter``), or the status itself where none
    was sent; ``failed`` gives ``error``; ``completed`` is told apart by what it produced (``tool_call`` or
    ``stop``). Any other status (``in_progress``, ``queued``) or none: ``None``, none invented."""
    if status == "incomplete":
        return incomplete_reason or "incomplete"
    if status == "failed":
        return "error"
    if status == "completed":
        return "tool_call" if calls else "stop"
    return None
