"""The span layer's one rule of when a streamed chat completion is whole (:class:`otel_agents._spans.ChoiceFinishes`,
which the openai client's chunk accumulator and the Hugging Face inference watch both use): only when every choice
got its ``finish_reason``. Chunks in the ``ChatCompletionChunk`` shape, as dicts (a wire body) and as objects (an
SDK's models)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from otel_agents._spans import ChoiceFinishes

USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}


def _chunk(*choices: tuple[int, dict[str, Any], str | None], usage: Any = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o", "usage": usage,
            "choices": [{"index": i, "delta": delta, "finish_reason": finish} for i, delta, finish in choices]}


def _text(index: int, text: str, finish: str | None = None) -> tuple[int, dict[str, Any], str | None]:
    return index, {"content": text}, finish


def _call(index: int, piece: str, *, first: bool = False, finish: str | None = None
          ) -> tuple[int, dict[str, Any], str | None]:
    call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
    if first:
        call.update(id="call_1", type="function", function={"name": "lookup_order", "arguments": piece})
    return index, {"tool_calls": [call]}, finish


USAGE_ONLY = _chunk(usage=USAGE)  # stream_options.include_usage: after the last finish reason, no choices

# (the chunks served, what the rule says is missing)
STREAMS = {
    "one choice, whole": ([_chunk(_text(0, "Order A100 ")), _chunk(_text(0, "has shipped.")),
                           _chunk((0, {}, "stop")), USAGE_ONLY], None),
    "one choice, cut before its finish reason": ([_chunk(_text(0, "Order A100 ")), _chunk(_text(0, "has"))],
                                                 "finish_reason"),
    "one choice, cut before its finish reason, a usage-only chunk after": (
        [_chunk(_text(0, "Order A100 ")), USAGE_ONLY], "finish_reason"),
    "n=2 interleaved, both finish": ([_chunk(_text(0, "Yes")), _chunk(_text(1, "No")), _chunk(_text(1, ".", "stop")),
                                      _chunk(_text(0, ".", "length")), USAGE_ONLY], None),
    "n=2, one choice never finishes": ([_chunk(_text(0, "Yes")), _chunk(_text(1, "No")),
                                        _chunk(_text(0, ".", "stop")), USAGE_ONLY], "finish_reason"),
    "n=2 in one chunk, both finish together": ([_chunk(_text(0, "Yes", "stop"), _text(1, "No", "stop"))], None),
    "tool-call deltas, whole": ([_chunk((0, {"role": "assistant", "content": None}, None)),
                                 _chunk(_call(0, "", first=True)), _chunk(_call(0, '{"order_id": ')),
                                 _chunk(_call(0, '"A100"}')), _chunk((0, {}, "tool_calls")), USAGE_ONLY], None),
    "tool-call deltas, cut mid-arguments": ([_chunk(_call(0, "", first=True)), _chunk(_call(0, '{"order_id": '))],
                                            "finish_reason"),
    "a finish reason then more deltas of that choice": ([_chunk(_text(0, "Yes", "stop")), _chunk(_text(0, ""))],
                                                        None),
    "an empty finish reason is none": ([_chunk(_text(0, "Yes", ""))], "finish_reason"),
    "usage-only chunk alone (no choice came)": ([USAGE_ONLY], "finish_reason"),
    "nothing at all": ([], "finish_reason"),
}


def _as_objects(value: Any) -> Any:
    """The same chunk as an SDK's model object (attributes, not keys)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _as_objects(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_as_objects(v) for v in value]
    return value


@pytest.mark.parametrize("shape", ["dict", "object"])
@pytest.mark.parametrize("stream", list(STREAMS))
def test_a_chat_stream_is_whole_only_when_every_choice_finished(stream: str, shape: str) -> None:
    chunks, missing = STREAMS[stream]
    finishes = ChoiceFinishes()
    for chunk in chunks:
        finishes.note_chunk(chunk if shape == "dict" else _as_objects(chunk))
    assert finishes.missing() == missing


def test_a_choice_without_index_is_choice_zero() -> None:
    """A server that leaves ``index`` out of its single choice: that choice is choice 0, and its finish reason
    finishes it."""
    finishes = ChoiceFinishes()
    finishes.note_chunk({"choices": [{"delta": {"content": "Yes"}}]})
    assert finishes.missing() == "finish_reason"
    finishes.note(0, "stop")
    assert finishes.missing() is None
