"""Secrets never reach an attribute (issue 26): secret-named keys in every serialisation (a mapping,
JSON text, Python repr text as LangGraph's ``Send(...)`` outputs carry it, ``key=value`` and query
strings, header and YAML lines), credentials in URLs, and token formats (Stripe ``sk_live_``/``rk_live_``,
bare JWTs, PEM private-key blocks, OpenAI keys, ``x-api-key:`` and ``Authorization: Token`` lines).

A property test draws secrets of each kind, wraps each in its serialisation and in surrounding text,
sends it through the span layer as a tool's arguments and result, a span's input and output and an
exception message, and checks that no exported attribute or event holds the secret.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_agents._spans import Settings, Telemetry
from otel_agents._spans.redaction import REDACTED, redact_text
from tests.spans import SnapshotExporter

_ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
_value = st.text(_ALNUM, min_size=10, max_size=24).map(lambda v: "Zq" + v)  # "Zq": never part of our own text
_ident_key = st.sampled_from(["password", "api_key", "client_secret", "access_token", "DB_PASSWORD", "auth_token",
                              "secret", "private_key", "apikey",
                              # issue 35: the secret word not at the end of the key, camelCase
                              "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SECRET_KEY", "secretAccessKey",
                              "accessToken", "webhook_secret", "db_password_hash", "STRIPE_SECRET_KEY"])
# A presigned URL's signature (AWS SigV4 and its credential and session token, Google Cloud Storage V4, an Azure
# SAS token, version-2 signatures), spelled as each provider's documentation does
_SIGNATURE_PARAMS = ["X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature",
                     "X-Goog-Credential", "sig", "Signature"]
_header_key = st.sampled_from(["x-api-key", "Authorization", "X-Auth-Token", "api-key", "password", "Proxy-Authorization"])
_filler = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


def _b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


_KINDS = ("repr_dict", "send_repr", "kwargs_repr", "json_text", "mapping", "assignment", "query", "url_param", "header",
          "yaml", "url", "stripe", "jwt", "pem", "openai", "google", "slack")


def _percent_encoded(key: str, every: bool) -> str:
    """``key`` as a URL may carry it: its ``_`` (or every character) percent-encoded."""
    return "".join(f"%{ord(c):02X}" if every or c == "_" else c for c in key)


@st.composite
def secret_texts(draw: Any, kinds: tuple[str, ...] = _KINDS) -> tuple[str, Any]:
    """``(secret, carrier)``: the secret, and a value (text or data) that carries it."""
    secret = draw(_value)
    kind = draw(st.sampled_from(kinds))
    key = draw(_ident_key)
    if kind == "repr_dict":
        return secret, repr({"query": "refund", key: secret, "n": 2})
    if kind == "send_repr":
        return secret, f"[Send(node='tools', arg={ {'name': 'login', 'args': {key: secret}} !r})]"
    if kind == "kwargs_repr":
        return secret, f"Credentials(user='ann', {key}='{secret}', port=5432)"
    if kind == "json_text":
        return secret, json.dumps({"tool": "login", "args": {key: secret}})
    if kind == "mapping":
        return secret, {"tool": "login", "args": {key: secret}, "note": f"{key}={secret}"}
    if kind == "assignment":
        return secret, f"export {key.upper()}={secret}"
    if kind == "query":
        return secret, f"GET https://api.example.com/v1/orders?{key}={secret}&limit=5"
    if kind == "url_param":  # a URL's parameter: its name percent-encoded, a path, a fragment or ";" after it
        key = draw(st.sampled_from(_SIGNATURE_PARAMS) | st.just(key))
        nested = draw(st.booleans())  # the URL percent-encoded in another's parameter (one level: its name plain)
        name = key if nested else draw(st.sampled_from([key, _percent_encoded(key, False), _percent_encoded(key, True)]))
        after = draw(st.sampled_from(["", "/more", "/more?x=1", "#frag", ";", "&limit=5", ")"]))
        url = f"https://api.example.com/v1/orders?{draw(st.sampled_from(['', 'a=1&']))}{name}={secret}{after}"
        if nested:
            url = f"https://h/login?redirect={quote(url, safe='')}"
        return secret, draw(st.sampled_from([url, f"ENDPOINT={url}", f'url="{url}"', f"see {url}, then",
                                             f"https://h/cb?redirect={url}"]))
    if kind == "header":
        header = draw(_header_key)
        prefix = draw(st.sampled_from(["", "Token ", "Bearer ", "Basic "]))
        return secret, f"POST /v1/refunds HTTP/1.1\nHost: api.example.com\n{header}: {prefix}{secret}\nAccept: */*"
    if kind == "yaml":
        return secret, f"database:\n  host: db.internal\n  {key}: {secret}\n  port: 5432"
    if kind == "url":
        scheme = draw(st.sampled_from(["postgresql", "mysql+pymysql", "redis", "https", "amqp"]))
        return secret, f"connecting to {scheme}://app_user:{secret}@db.internal:5432/orders"
    if kind == "stripe":  # secret and restricted keys, webhook signing secrets; glued after an underscore too
        secret = draw(st.sampled_from(["sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"])) + secret
        return secret, draw(st.sampled_from([f"stripe key {secret} loaded", f"STRIPE_{secret}", f"key={secret}"]))
    if kind == "google":  # API key (AIza + 35), OAuth access token, refresh token, OAuth client secret
        shape = draw(st.sampled_from(["AIza", "ya29.", "1//0", "GOCSPX-"]))
        secret = shape + (secret * 3)[:35] if shape == "AIza" else shape + secret
        return secret, draw(st.sampled_from([f"google {secret} ok", f"GOOGLE_{secret}", f'{{"k": "{secret}"}}']))
    if kind == "slack":  # bot/user/app-level/rotating tokens, incoming-webhook URLs
        shape = draw(st.sampled_from(["xoxb-", "xoxp-", "xapp-1-", "xoxe.xoxp-1-", "xoxe-1-", "webhook"]))
        if shape == "webhook":
            secret = f"T0{secret[:8]}/B0{secret[:8]}/{secret}"
            return secret, f"posting to https://hooks.slack.com/services/{secret} now"
        secret = shape + secret
        return secret, draw(st.sampled_from([f"slack {secret} ok", f"SLACK_{secret}"]))
    if kind == "jwt":
        secret = f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': secret})}.{secret[::-1]}"
        return secret, f"token {secret} expired"
    if kind == "pem":
        body = "\n".join([secret * 3] * 3)
        return secret, f"key file:\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nloaded"
    secret = "sk-proj-" + secret
    return secret, f"OPENAI_KEY is {secret}"


def _wrap(carrier: Any, before: str, after: str) -> Any:
    return f"{before}\n{carrier}\n{after}" if isinstance(carrier, str) else {"before": before, "value": carrier}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(secret_texts(), _filler, _filler)
def test_no_generated_secret_survives_in_any_attribute(case: tuple[str, Any], before: str, after: str) -> None:
    secret, carrier = case
    value = _wrap(carrier, before, after)
    exporter = SnapshotExporter()
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(provider, settings=Settings(capture_content=True), framework="manual")
    with telemetry.span("agent", "support") as agent:
        agent.set_input(value)
        with telemetry.span("tool", "login") as tool:
            tool.set_tool("login", call_id="c1", arguments=value)
            tool.set_tool_result(value)
        agent.set_output(value)
        failing = telemetry.start_span("tool", "fails")
        failing.record_error(RuntimeError(value if isinstance(value, str) else repr(value)))
        failing.end()
    provider.shutdown()
    assert len(exporter.spans) == 3
    for span in exporter.spans:
        texts = [str(v) for v in span.attributes.values()]
        texts += [str(v) for _, attrs in span.events for v in attrs.values()]
        texts.append(span.status_description or "")
        leaked = [t for t in texts if secret in t]
        assert not leaked, (span.name, leaked)
    assert any(REDACTED in str(v) for s in exporter.spans for v in s.attributes.values())


@pytest.mark.parametrize(("text", "expected"), [
    ("Send(node='tools', arg={'password': 'hunter2xyz', 'q': 1})",
     "Send(node='tools', arg={'password': '[REDACTED]', 'q': 1})"),
    ("postgresql://admin:S3cretPw@db.internal:5432/app", "postgresql://admin:[REDACTED]@db.internal:5432/app"),
    ("x-api-key: abcdef123456\nAuthorization: Token 9944b09199c62bcf94\nAccept: */*",
     "x-api-key: [REDACTED]\nAuthorization: [REDACTED]\nAccept: */*"),
    ("User(name='ann', password='hunter2xyz') max_tokens=5", "User(name='ann', password='[REDACTED]') max_tokens=5"),
    ("key sk_live_51Habcdefghij", "key [REDACTED]"),
    # a Python repr that begins as a JSON array would (found by the property test above): the repr rules apply
    ("[\n{'query': 'refund', 'password': 'Zq2222222222', 'n': 2}\n",
     "[\n{'query': 'refund', 'password': '[REDACTED]', 'n': 2}\n"),
    ("[1, {'token': 'abcdefghijkl'}]", "[1, {'token': '[REDACTED]'}]"),
    ('[{"id": 1}, {\'password\': \'hunter2xyz\'}]', '[{"id": 1}, {\'password\': \'[REDACTED]\'}]'),
])
def test_each_kind_keeps_the_text_around_it(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a URL's secret parameter followed by more of the URL: a query value holds "/" and "?" (RFC 3986 3.4), so
    # the value runs to "&", ";", "#" or the URL's end, and the fragment and the parameters after it are kept
    ("https://h/x?api_key=Zq2222222222/more", "https://h/x?api_key=[REDACTED]"),
    ("https://h/x?token=Zq2222222222#frag", "https://h/x?token=[REDACTED]#frag"),
    ("https://h/x?a=1&access_token=Zq2222222222;b=2", "https://h/x?a=1&access_token=[REDACTED];b=2"),
    ("https://h/cb#access_token=Zq2222222222&token_type=bearer", "https://h/cb#access_token=[REDACTED]&token_type=bearer"),
    # a percent-encoded name is read decoded, its secret word hidden or not; so is a form body's
    ("https://h/x?api%5Fkey=Zq2222222222&b=2", "https://h/x?api%5Fkey=[REDACTED]&b=2"),
    ("https://h/x?%70%61%73%73%77%6F%72%64=Zq2222222222", "https://h/x?%70%61%73%73%77%6F%72%64=[REDACTED]"),
    ("client%5Fsecret=Zq2222222222&grant_type=x", "client%5Fsecret=[REDACTED]&grant_type=x"),
    # the URL as the value of another rule's key, or of another URL's parameter
    ("OTEL_EXPORTER_OTLP_ENDPOINT=https://h/v1/traces?api_key=Zq2222222222/x",
     "OTEL_EXPORTER_OTLP_ENDPOINT=https://h/v1/traces?api_key=[REDACTED]"),
    ('url="https://h/x?a=1&access_token=Zq2222222222;"', 'url="https://h/x?a=1&access_token=[REDACTED];"'),
    ("https://h/login?next=https://h/cb?token=Zq2222222222&x=1", "https://h/login?next=https://h/cb?token=[REDACTED]&x=1"),
    ('{"url": "https://h/x?p%61ssword=Zq2222222222#f"}', '{"url": "https://h/x?p%61ssword=[REDACTED]#f"}'),
    ("fetch(https://h/x?token=Zq2222222222)", "fetch(https://h/x?token=[REDACTED])"),
    # a presigned URL's signature, credential and session token: AWS SigV4, Google Cloud Storage V4, Azure SAS
    ("https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=Zq2222222222%2F20130721%2Fus-east-1"
     "%2Fs3%2Faws4_request&X-Amz-Date=20130721T201207Z&X-Amz-Expires=86400&X-Amz-Security-Token=Zq3333333333"
     "&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
     "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[REDACTED]"
     "&X-Amz-Date=20130721T201207Z&X-Amz-Expires=86400&X-Amz-Security-Token=[REDACTED]"
     "&X-Amz-SignedHeaders=host&X-Amz-Signature=[REDACTED]"),
    ("https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20190301T190859Z"
     "&X-Goog-SignedHeaders=host&X-Goog-Signature=1ad3a5e8f6b3c1d2e4f5#f",
     "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20190301T190859Z"
     "&X-Goog-SignedHeaders=host&X-Goog-Signature=[REDACTED]#f"),
    ("https://a.blob.core.windows.net/c/b?sv=2015-04-05&se=2015-04-30T02%3A23%3A26Z&sr=b&sp=rw&sig=F6GRVAZ5Cdj2Pw4%3D",
     "https://a.blob.core.windows.net/c/b?sv=2015-04-05&se=2015-04-30T02%3A23%3A26Z&sr=b&sp=rw&sig=[REDACTED]"),
    # a URL nested percent-encoded in another's parameter: one level is read, its parameters kept encoded
    ("https://h/login?redirect=https%3A%2F%2Fh%2F%3Fapi_key%3DZq2222222222%26x%3D1&y=2",
     "https://h/login?redirect=https%3A%2F%2Fh%2F%3Fapi_key%3D[REDACTED]%26x%3D1&y=2"),
    ("https://h/login?next=https%3a%2f%2fh%2f%3fa%3d1%26X-Amz-Signature%3DZq2222222222%23top",
     "https://h/login?next=https%3a%2f%2fh%2f%3fa%3d1%26X-Amz-Signature%3D[REDACTED]%23top"),
])
def test_a_urls_secret_parameter_is_redacted_wherever_the_url_is(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "https://h/x?max_tokens=5&page=2#top", "50%25 done: a%20b=c", "https://h/x?q=a%3Db",
    "Token usage: 12 tokens in, 4 out", "max_tokens=512, temperature=0.2", "see https://example.com/a?b=c",
    "ratio a=b c: d", "the key: is under the mat",  # 'key' alone is not a secret-named key
    "design=1 signal=3 sig=4", "https://h/x?design=1&signal=3&q=https%3A%2F%2Fh%2F%3Fsignal%3D3",  # sig: a URL's
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.recursive(st.none() | st.integers() | st.text(max_size=20) | st.sampled_from(
    ["password='x1234567'", "{'token': 'abcdefgh'}", "api_key=zzzzzzzz", "Authorization: Token abcdefgh",
     "postgresql://u:pw123456@h/db", "x'secret': {"]),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(["a", "note", "password"]), c, max_size=4),
    max_leaves=12))
def test_json_text_stays_valid_json(data: Any) -> None:
    """The text rules never cut across a JSON string: redacted JSON text still parses."""
    json.loads(redact_text(json.dumps(data)))


# Kinds whose line holding the secret is a secret on its own, after code on a source line (not a PEM body
# line, a header or YAML line, which are secrets only at the start of their line)
_LINE_KINDS = ("repr_dict", "send_repr", "kwargs_repr", "json_text", "mapping", "assignment", "query", "url_param",
               "url", "stripe", "jwt", "openai", "google", "slack")


def _secret_line(case: tuple[str, Any]) -> tuple[str, str]:
    """``(secret, the line of the carrier's text that holds it)``: a name, a label, one line of source."""
    secret, carrier = case
    text = carrier if isinstance(carrier, str) else json.dumps(carrier)
    return secret, next((ln for ln in text.splitlines() if secret in ln), text.replace("\n", " "))


def _recording(content: bool) -> tuple[Any, SnapshotExporter, Telemetry]:
    """A provider exporting each span as it ends to a :class:`SnapshotExporter`, and a span layer over it."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    exporter = SnapshotExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter, Telemetry(provider, settings=Settings(capture_content=content), framework="manual")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(secret_texts(_LINE_KINDS), st.booleans())
def test_issue35_names_and_stack_traces_are_redacted_content_on_or_off(case: tuple[str, Any], content: bool) -> None:
    """Issue 35: span names (and the ``gen_ai.tool.name``/``tool.name``/``gen_ai.agent.name`` copied from
    them) were never redacted, content on or off; with content off ``exception.stacktrace`` (the failing
    source line) was exported without redaction. Every one goes through the one pipeline now."""
    import linecache

    (secret, line), (provider, exporter, telemetry) = _secret_line(case), _recording(content)
    with telemetry.span("agent", line) as agent:
        agent.set_agent(line)
        with telemetry.span("tool", line) as tool:
            tool.set_tool(line, call_id="c1")
        plain = telemetry.start_plain_span(line)
        plain.end()
        failing = telemetry.start_span("tool", "fails")
        failing.rename(line)
        filename = f"<issue35-{abs(hash(line))}>"
        source = f"raise RuntimeError('boom')  # {line}\n"
        linecache.cache[filename] = (len(source), None, [source], filename)
        try:
            exec(compile(source, filename, "exec"))  # noqa: S102 - a failing source line that quotes the secret
        except RuntimeError as exc:
            failing.record_error(exc)
        failing.end()
    provider.shutdown()
    spans = exporter.spans
    assert len(spans) == 4
    for span in spans:
        assert secret not in span.name, span.name
        texts = [str(v) for v in span.attributes.values()]
        texts += [str(v) for _, attrs in span.events for v in attrs.values()]
        leaked = [t for t in texts if secret in t]
        assert not leaked, (span.name, leaked)
    [(_, event)] = next(s for s in spans if s.events).events
    assert "raise RuntimeError" in event["exception.stacktrace"] or len(line) > 3000


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(secret_texts(_LINE_KINDS), st.booleans(), st.booleans())
def test_a_finish_reason_is_redacted_in_every_attribute_that_carries_it(case: tuple[str, Any], content: bool,
                                                                         calls: bool) -> None:
    """A finish reason is a label: redacted in ``gen_ai.response.finish_reasons`` and ``llm.finish_reason``, and in
    each output message's ``finish_reason`` (``gen_ai.output.messages``, and ``output.value`` when the output requests
    tools: the same JSON messages), content on or off; before it is lower-cased (a shape is case-sensitive:
    ``AKIA…``, ``eyJ…``), so neither the secret nor its lower case survives."""
    from otel_agents._spans import ChatMessage, ToolCallRequest

    (secret, reason), (provider, exporter, telemetry) = _secret_line(case), _recording(content)
    with telemetry.span("model", "m") as model:
        tool_calls = [ToolCallRequest("lookup", {"q": 1}, "c1")] if calls else []
        model.set_messages(input=[ChatMessage("user", "hi")],
                           output=[ChatMessage("assistant", "done", tool_calls=tool_calls, finish_reason=reason)])
    provider.shutdown()
    [span] = exporter.spans
    texts = [str(v) for v in span.attributes.values()]
    leaked = [t for t in texts if secret in t or secret.lower() in t]
    assert not leaked, leaked
    assert REDACTED in span.attributes["llm.finish_reason"]
    if content:
        [message] = json.loads(span.attributes["gen_ai.output.messages"])
        assert message["finish_reason"] == span.attributes["llm.finish_reason"]


def test_a_repeated_key_is_judged_once_from_the_cache() -> None:
    """Field names repeat on every message (role, content, parts…): whether one names a secret is decided
    once and reused, and the URL redaction of the CLI's messages does not take that cache."""
    from otel_agents._spans import redaction

    assert redaction.is_secret_key("apiKey") and not redaction.is_secret_key("max_tokens")
    hits = redaction.is_secret_key.cache_info().hits
    assert not redaction.is_secret_key("max_tokens") and redaction.is_secret_key.cache_info().hits == hits + 1
    assert redaction.redact_url("http://user:pw@host/x") == f"http://{redaction.REDACTED}@host/x"
    assert not hasattr(redaction.redact_url, "cache_info")


def test_a_repeated_text_is_redacted_the_same_from_the_cache() -> None:
    """Long texts are redacted once and the result reused (an agent loop resends its conversation): a
    repeated message gives the same redaction, and a str subclass is never hashed (its hash is user code)."""
    from otel_agents._spans import redaction

    text = "turn 3: the key is sk-proj-" + "a" * 40 + " and the rest of the message " * 4
    first = redaction.redact_text(text)
    assert "sk-proj-" not in first and redaction.REDACTED in first
    hits = redaction._redact_cached.cache_info().hits
    assert redaction.redact_text(text) == first and redaction._redact_cached.cache_info().hits == hits + 1

    class Hostile(str):
        def __hash__(self) -> int:
            raise AssertionError("hashed")

    assert redaction.redact_text(Hostile(text)) == first


def test_a_repr_secret_in_text_that_starts_with_a_double_quote_is_redacted() -> None:
    """Text that starts with ``"`` (a JSON string literal, or text quoted by its first character) is not
    JSON with members: the repr rule reads it (hypothesis found ``"\\n{'password': '…'}``)."""
    from otel_agents._spans.redaction import redact_text

    for text in (json.dumps("{'password': 'Zq2222222222'}"), "\"\n{'query': 'refund', 'password': 'Zq2222222222'}"):
        redacted = redact_text(text)
        assert "Zq2222222222" not in redacted and "'password': '[REDACTED]'" in redacted


def test_a_repeated_json_text_is_checked_once_and_answered_alike() -> None:
    """``leaves_unchanged`` (the C-speed check a JSON value's text takes instead of a walk of its strings) keeps its
    answer for a text seen again (a workflow event is one step's output and the next step's input): the same answer,
    from the cache, for texts with and without something to redact; short texts and str subclasses are scanned."""
    from otel_agents._spans import redaction

    clean = '{"event":"AgentOutput","response":"The answer is 5.","tool_calls":[],"current_agent_name":"calc"}'
    secret = '{"event":"ToolCall","tool_kwargs":{"api_key":"abc"},"tool_name":"lookup","tool_id":"call-1"}'
    shaped = '{"event":"ToolCallResult","tool_output":"Bearer abcdefghijklmnop","tool_name":"lookup"}'
    for text, expected in ((clean, True), (secret, False), (shaped, False)):
        assert redaction.leaves_unchanged(text) is expected
        hits = redaction._leaves_unchanged_cached.cache_info().hits
        assert redaction.leaves_unchanged(text) is expected
        assert redaction._leaves_unchanged_cached.cache_info().hits == hits + 1

    class Hostile(str):
        def __hash__(self) -> int:
            raise AssertionError("hashed")

    assert redaction.leaves_unchanged(Hostile(clean)) is True and redaction.leaves_unchanged('{"a":"b"}') is True
