"""Handing a span's ready attributes to the OTel SDK span in one call, without the SDK's re-validation
when every value is already one the SDK would store unchanged.

A semantic span collects its attributes while it is open and hands them over once, at its end
(:meth:`~.span.SemanticSpan._flush`). Every value it collects came out of :mod:`.pipeline`: a ``str``,
``bool``, ``int``, ``float``, or a non-empty list of one of those types. For such values the SDK's
``Span.set_attributes`` (``BoundedAttributes._set_items``) only re-checks each key and value (a Python
call per value) and turns a list into a tuple: about a third of a model span's cost for nothing.

:func:`set_attributes` does exactly what ``Span.set_attributes`` would do with those values — under the
span's lock, the ended check, then under the attributes' lock each key removed and re-inserted (a key set
again moves last), lists stored as tuples — by writing to the SDK's attribute map, but only when all of
these hold; otherwise it calls the public ``span.set_attributes``:

* the span is the SDK's own ``_Span`` with a ``BoundedAttributes`` of a plain ``dict`` (the SDK's classes,
  not a subclass or another SDK), mutable, not ended;
* no attribute value length limit (``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``/``SpanLimits``: the SDK cuts
  strings) and room under the attribute count limit for every new key (else the SDK drops the oldest and
  counts them);
* every key a non-empty ``str``, every value of exactly the types above (a ``str`` subclass, ``None``, a
  mixed or empty list, ``bytes``… all go to the SDK, which cleans them as it always has).

The SDK's private names used (``_attributes``, ``_lock``, ``_end_time``; ``BoundedAttributes._dict``,
``_lock``, ``_immutable``, ``maxlen``, ``max_value_len``) are those of opentelemetry-sdk 1.44 and 1.45;
``tests/test_span_sdk_write.py`` pins that this path is taken with the installed SDK and that it leaves a
span exactly as ``set_attributes`` does (values, types, order, dropped count), and falls back where it must.
"""

from __future__ import annotations

from typing import Any, Mapping

try:  # the SDK is a dependency; a missing or reshaped one only disables the direct path
    from opentelemetry.attributes import BoundedAttributes as _Bounded
    from opentelemetry.sdk.trace import (ConcurrentMultiSpanProcessor, SynchronousMultiSpanProcessor,
                                         Tracer as _SdkTracer, _Span as _SdkSpan)
    from opentelemetry.sdk.trace import sampling as _sampling
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
except ImportError:  # pragma: no cover
    _Bounded = _SdkSpan = _SdkTracer = None  # type: ignore[assignment,misc]

SCALARS = frozenset((str, bool, int, float))
_SEQUENCES = frozenset((list, tuple))


def stored(value: Any) -> Any:
    """``value`` as the SDK stores it unchanged (a list as a tuple) when it is a ``str``/``bool``/``int``/
    ``float`` or a non-empty list or tuple of one of those exact types; else ``None`` (the SDK's to clean)."""
    t = type(value)
    if t in SCALARS:
        return value
    if t not in _SEQUENCES or not value or type(value[0]) not in SCALARS or len(set(map(type, value))) != 1:
        return None
    return tuple(value)


def _legal(attributes: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``attributes`` as the SDK would store them (lists as tuples) when each key is a non-empty ``str`` and
    each value one :func:`stored` keeps; else ``None``. One pass in Python: cheaper than passes of
    ``map(type, …)`` in C, which cost more per item."""
    out = None
    for k, v in attributes.items():
        if type(k) is not str or not k:
            return None
        if type(v) in SCALARS:
            continue
        v = stored(v)
        if v is None:
            return None
        if out is None:
            out = dict(attributes)
        out[k] = v
    return attributes if out is None else out


def direct(span: Any) -> bool:
    """Whether :func:`set_attributes` may write to ``span`` directly, as far as the span alone tells (the
    SDK's own span and attribute map, mutable, no value length limit); the values, the count limit and
    the end are checked when writing."""
    if _SdkSpan is None or type(span) is not _SdkSpan:
        return False
    bounded = getattr(span, "_attributes", None)
    return (type(bounded) is _Bounded and type(getattr(bounded, "_dict", None)) is dict
            and getattr(bounded, "max_value_len", 0) is None and getattr(bounded, "_immutable", True) is False)


def set_attributes(span: Any, attributes: Mapping[str, Any]) -> None:
    """``span.set_attributes(attributes)``, written directly when the module's conditions hold."""
    if direct(span):
        legal = _legal(attributes)
        try:
            if legal is not None and _write(span, legal):
                return
        except AttributeError:  # an SDK reshaped under the same class names: every read precedes the write
            pass
    span.set_attributes(attributes)


def set_stored_attributes(span: Any, attributes: Mapping[str, Any]) -> None:
    """:func:`set_attributes` of ``attributes`` the caller knows to be in their stored form (each key a non-empty
    ``str``, each value kept by :func:`stored` and equal to what it returns: no list), without checking each
    again: a semantic span builds its attributes so (:meth:`~.span.SemanticSpan._flush`). :func:`direct`'s checks
    are made by :func:`_write` itself, under the span's lock (one call per span fewer: every span runs this)."""
    if type(span) is _SdkSpan and _SdkSpan is not None:
        try:
            if _write(span, attributes, checked=False):
                return
        except AttributeError:  # an SDK reshaped under the same class names: every read precedes the write
            pass
    span.set_attributes(attributes)


_STR = frozenset((str,))


def set_start_attributes(span: Any, attributes: Mapping[str, Any]) -> None:
    """:func:`set_attributes` of a span's start attributes right after the SDK started it without them (see
    :class:`StartWrite`): when the span is the SDK's own, holds no attribute yet and every key is a non-empty
    ``str`` and every value a plain ``str``/``bool``/``int``/``float`` (checked in C, not value by value), they
    are put in its (empty) attribute map as they are, which is what the SDK would have stored; else as
    :func:`set_attributes` writes them."""
    if type(span) is _SdkSpan and _SCALARS_ONLY(map(type, attributes.values())) \
            and _STR.issuperset(map(type, attributes)) and "" not in attributes:
        try:
            bounded = span._attributes
            maxlen = bounded.maxlen
            with bounded._lock:
                d = bounded._dict
                if type(bounded) is _Bounded and type(d) is dict and not d and bounded._immutable is False and \
                        bounded.max_value_len is None and (maxlen is None or len(attributes) <= maxlen):
                    d.update(attributes)
                    return
        except AttributeError:  # an SDK reshaped under the same class names: every read precedes the write
            pass
    set_attributes(span, attributes)


_SCALARS_ONLY = SCALARS.issuperset


# What may see a span as it starts without reading its attributes: the SDK's own samplers (exact classes: a subclass
# may read them) and processors whose ``on_start`` does nothing (the SDK's batch and simple ones).
_BLIND_SAMPLERS = frozenset() if _SdkTracer is None else frozenset(
    (_sampling.StaticSampler, _sampling.TraceIdRatioBased, _sampling.ParentBased, _sampling.ParentBasedTraceIdRatio))
_PARENT_DELEGATES = ("_root", "_remote_parent_sampled", "_remote_parent_not_sampled", "_local_parent_sampled",
                     "_local_parent_not_sampled")
_BLIND_PROCESSORS = frozenset() if _SdkTracer is None else frozenset((SimpleSpanProcessor, BatchSpanProcessor))
_MULTI_PROCESSORS = frozenset() if _SdkTracer is None else frozenset(
    (SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor))


class StartWrite:
    """Whether a span's start attributes may be written after the SDK opened it (:func:`set_attributes`) rather than
    given to ``Tracer.start_span``, where the SDK checks each value again (``BoundedAttributes._set_items``, about
    half the cost of a span's few start attributes), with nothing able to tell: the tracer is the SDK's own, with
    no attribute value length limit, a sampler of the SDK's own that decides without reading attributes
    (``ALWAYS_ON``/``ALWAYS_OFF``, ``TraceIdRatioBased``, ``ParentBased`` over those: the default is
    ``ParentBased(ALWAYS_ON)``), and only span processors whose ``on_start`` reads nothing (the SDK's
    ``BatchSpanProcessor`` and ``SimpleSpanProcessor``). Any other sampler or processor (one that reads a span's
    attributes as it starts, as the ECP folding processor does) gets them at the start, as the OTel API gives them.

    The answer is kept for the provider's tuple of processors (adding one makes a new tuple), so a processor
    added later is seen at the next span. The tracer, that tuple and the answer are kept as one tuple, replaced at
    once: a thread asking while another stores a new answer gets the old triple or the new one, never the new
    processors with the old answer."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: tuple[Any, Any, bool] = (None, None, False)  # the tracer and its processors' tuple, the answer

    def __call__(self, tracer: Any) -> bool:
        """Whether the next span ``tracer`` starts may have its start attributes written after it opens."""
        if type(tracer) is not _SdkTracer or _SdkTracer is None:
            return False
        multi = tracer.span_processor
        processors = getattr(multi, "_span_processors", None)
        kept_tracer, seen, answer = self._kept
        if processors is not seen or tracer is not kept_tracer or processors is None:
            answer = _blind(tracer, multi, processors)
            self._kept = (tracer, processors, answer)
        return answer


def _blind(tracer: Any, multi: Any, processors: Any) -> bool:
    try:
        limits = tracer._span_limits
        sampler = tracer.sampler
        samplers = [sampler, *(getattr(sampler, name) for name in _PARENT_DELEGATES)] \
            if isinstance(sampler, _sampling.ParentBased) else [sampler]
        return (type(multi) in _MULTI_PROCESSORS and type(processors) is tuple and
                all(type(p) in _BLIND_PROCESSORS for p in processors) and
                all(type(s) in _BLIND_SAMPLERS for s in samplers) and limits.max_span_attribute_length is None)
    except AttributeError:  # an SDK reshaped under the same names: the start attributes go to start_span
        return False


def _write(span: Any, attributes: Mapping[str, Any], checked: bool = True) -> bool:
    """Write under the SDK's two locks, as ``_set_items`` does (a key set again is removed and re-inserted:
    it moves last); ``False`` (nothing written) when the span has ended or a new key would pass the count
    limit (the public call then decides, warns and counts). ``checked``: the caller made :func:`direct`'s
    checks on ``span``; else they are made here (the span is the SDK's own ``_Span``)."""
    bounded = span._attributes
    if not checked and (type(bounded) is not _Bounded or bounded.max_value_len is not None):
        return False
    with span._lock:
        if span._end_time is not None or bounded._immutable is not False:
            return False
        with bounded._lock:
            d = bounded._dict
            if type(d) is not dict:
                return False
            maxlen = bounded.maxlen
            if maxlen is not None and len(d) + len(attributes) > maxlen and \
                    len(d) + sum(1 for k in attributes if k not in d) > maxlen:
                return False
            if d.keys().isdisjoint(attributes):
                d.update(attributes)
            else:
                for k, v in attributes.items():
                    d.pop(k, None)
                    d[k] = v
    return True
