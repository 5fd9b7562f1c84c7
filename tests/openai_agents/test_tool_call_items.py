"""The model's calls of the Agents SDK's other client-run tools — shell, apply_patch and custom tools (Responses API
items ``shell_call``, ``apply_patch_call``, ``custom_tool_call``, answered by ``shell_call_output``,
``apply_patch_call_output``, ``custom_tool_call_output``) — are tool calls on the model span, as a function call is:
a ``tool_call`` part with the call's id, the tool's name and what the model asked for, the finish reason
``tool_call``; the answer in the next request is that call's tool response; the tool span carries the call's id.
Ground truth: the scripted response items and the requests the fake received."""

from __future__ import annotations

import json
from typing import Any

import pytest

agents = pytest.importorskip("agents")
from agents import Agent, Runner  # noqa: E402

from tests.spans import SnapshotExporter  # noqa: E402

from .fakes import ScriptedResponses, responses_model, say  # noqa: E402


def _shell() -> Any:
    return agents.ShellTool(executor=lambda request: "total 0")


def _apply_patch() -> Any:
    class Editor:
        def create_file(self, operation: Any) -> str:
            return "created notes.txt"

        update_file = delete_file = create_file

    return agents.ApplyPatchTool(editor=Editor())


def _custom() -> Any:
    return agents.CustomTool(name="grep", description="Search the notes.",
                             on_invoke_tool=lambda _ctx, text: "2 matches")


# (tool, the model's output item, the tool's name, what the model asked for as the call's arguments)
KINDS = {
    "shell": (_shell, {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed",
                       "action": {"commands": ["ls"]}}, "shell", {"commands": ["ls"]}),
    "apply_patch": (_apply_patch, {"type": "apply_patch_call", "id": "ap_1", "call_id": "call_ap",
                                   "status": "completed",
                                   "operation": {"type": "create_file", "path": "notes.txt", "diff": "+hello"}},
                    "apply_patch", {"type": "create_file", "path": "notes.txt", "diff": "+hello"}),
    "custom": (_custom, {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_ct", "name": "grep",
                         "input": "TODO"}, "grep", "TODO"),
}


def _call_parts(messages: list[dict]) -> list[dict]:
    return [p for m in messages for p in m["parts"] if p["type"] == "tool_call"]


@pytest.mark.parametrize("name", list(KINDS))
def test_a_client_tool_call_item_is_a_tool_call_on_the_model_span(instrumented: Any, exporter: SnapshotExporter,
                                                                   name: str) -> None:
    make, item, tool_name, asked = KINDS[name]
    if not hasattr(agents, {"shell": "ShellTool", "apply_patch": "ApplyPatchTool", "custom": "CustomTool"}[name]):
        pytest.skip(f"this openai-agents has no {name} tool")
    handler = ScriptedResponses([{"output": [item]}, say("Finished.")])
    agent = Agent(name="dev", instructions="x", model=responses_model(handler), tools=[make()])
    result = Runner.run_sync(agent, "Do it")
    assert result.final_output == "Finished."
    first, second = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    # The first response: one call of the tool, with the model's id and what it asked for; it stopped to call it.
    [out] = json.loads(first.attributes["gen_ai.output.messages"])
    [part] = _call_parts([out])
    assert (part["id"], part["name"]) == (item["call_id"], tool_name)
    assert part["arguments"] == asked
    assert out["finish_reason"] == "tool_call"
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    # The second request: the call again, then the tool's answer to that call id (what the fake received).
    [sent] = [i for i in handler.requests[-1]["input"] if i.get("type", "").endswith("_output")]
    given = json.loads(second.attributes["gen_ai.input.messages"])
    assert [p["id"] for p in _call_parts(given)] == [item["call_id"]]
    [answer] = [p for m in given for p in m["parts"] if p["type"] == "tool_call_response"]
    assert answer["id"] == sent["call_id"] == item["call_id"]
    # The tool span: the call's id.
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.name"] == tool_name
    assert tool.attributes["gen_ai.tool.call.id"] == item["call_id"]
