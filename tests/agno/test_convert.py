"""Agno ``Message`` → our parts (:mod:`otel_agents.instrumentors.agno._convert`): media fields read in one call,
each kind of media in its place, and a message object without Agno's media fields converted all the same."""

from __future__ import annotations

from types import SimpleNamespace

from agno.media import Audio, File, Image, Video
from agno.models.message import Message

from otel_agents._spans import BlobPart, TextPart, ToolCallPart, UriPart
from otel_agents.instrumentors.agno._convert import message_parts


def test_every_media_field_becomes_a_part_in_order() -> None:
    m = Message(role="user", content="look", images=[Image(url="https://example.test/a.png")],
                audio=[Audio(content=b"abc", format="wav")], videos=[Video(url="https://example.test/v.mp4")],
                files=[File(url="https://example.test/f.pdf"), File(content="raw text", mime_type="text/plain")])
    parts = message_parts(m)
    assert [type(p) for p in parts] == [TextPart, UriPart, BlobPart, UriPart, UriPart, BlobPart]
    assert parts[0].content == "look"
    assert (parts[1].uri, parts[1].modality) == ("https://example.test/a.png", "image")
    assert (parts[2].data, parts[2].modality) == (b"abc", "audio")
    assert (parts[3].uri, parts[3].modality) == ("https://example.test/v.mp4", "video")
    assert parts[4].uri == "https://example.test/f.pdf"
    assert (parts[5].modality, parts[5].mime_type) == ("file", "text/plain")


def test_a_message_without_media_has_its_text_and_tool_calls_only() -> None:
    m = Message(role="assistant", content="calling", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"id": "A1"}'}}])
    parts = message_parts(m)
    assert [type(p) for p in parts] == [TextPart, ToolCallPart]
    assert (parts[1].name, parts[1].arguments, parts[1].id) == ("lookup", {"id": "A1"}, "c1")


def test_a_message_object_lacking_media_fields_still_converts() -> None:
    # (a stand-in for a Message: only some of the media fields, as an older or a user's message class)
    m = SimpleNamespace(role="user", content="hi", images=[Image(url="https://example.test/b.png")])
    parts = message_parts(m)
    assert [type(p) for p in parts] == [TextPart, UriPart]
    assert parts[1].uri == "https://example.test/b.png"
