"""Token counts of one model call, as the span layer records them."""

from __future__ import annotations

import math
import operator
from typing import Any

from .pipeline import INT64_MAX  # an OTel attribute's largest integer


def token_count(value: Any) -> int | None:
    """``value`` as a token count (an ``int`` from 0 to 2**63 - 1), or ``None`` when it is not one: what every
    count a provider reports passes through before it is recorded. An integer (also a NumPy one) or an integral
    finite float within that range is kept (as an ``int``); a ``bool``, a negative number, a fraction, NaN, an
    infinity, a number past 64 bits (OTLP cannot carry it: an encoder drops it with an error, or fails the whole
    batch), text, anything
    else is left out, never replaced by a default: the span then records no such count."""
    if type(value) is int:
        return value if 0 <= value <= INT64_MAX else None
    if value is None or isinstance(value, (bool, str, bytes)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None
        value = int(value)
    else:
        try:
            value = operator.index(value)  # an int subclass, a NumPy integer
        except Exception:  # noqa: BLE001 - anything else is not a count (its __index__ is the provider's code)
            return None
    return value if 0 <= value <= INT64_MAX else None


def token_sum(*values: Any) -> int | None:
    """The sum of the token counts ``values`` (tokens), those that are ``None`` (not reported) left out; ``None``
    when none is reported, or when one reported is not a token count (:func:`token_count`): a sum with a part
    left out would not be true. A sum past 64 bits is ``None`` too."""
    total = None
    for value in values:
        if value is not None:
            count = token_count(value)
            if count is None:
                return None
            total = count if total is None else total + count
    return token_count(total)


class Usage:
    """Token counts of one model call (all ints, tokens; ``None`` = not reported or not a count).

    Every count passes :func:`token_count` here, once: a value that is not a token count is left out (``None``),
    never replaced. ``total_tokens`` defaults to ``input_tokens + output_tokens`` when both are counts (and the
    sum within 64 bits). Set the counts when making a ``Usage``: a later assignment is checked again only when a
    span records it (:meth:`~.model.ModelSetters.set_usage`).
    """

    __slots__ = ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens",
                 "cache_creation_tokens", "reasoning_tokens")

    def __init__(self, input_tokens: int | None = None, output_tokens: int | None = None,
                 total_tokens: int | None = None, cache_read_tokens: int | None = None,
                 cache_creation_tokens: int | None = None, reasoning_tokens: int | None = None):
        # token_count for each, written out for its usual cases (None, an int in range): every model call makes one.
        if input_tokens is not None and (type(input_tokens) is not int or not 0 <= input_tokens <= INT64_MAX):
            input_tokens = token_count(input_tokens)
        if output_tokens is not None and (type(output_tokens) is not int or not 0 <= output_tokens <= INT64_MAX):
            output_tokens = token_count(output_tokens)
        if total_tokens is None:
            if input_tokens is not None and output_tokens is not None:
                total_tokens = input_tokens + output_tokens
                if total_tokens > INT64_MAX:
                    total_tokens = None
        elif type(total_tokens) is not int or not 0 <= total_tokens <= INT64_MAX:
            total_tokens = token_count(total_tokens)
        self.input_tokens, self.output_tokens, self.total_tokens = input_tokens, output_tokens, total_tokens
        self.cache_read_tokens = None if cache_read_tokens is None else token_count(cache_read_tokens)
        self.cache_creation_tokens = None if cache_creation_tokens is None else token_count(cache_creation_tokens)
        self.reasoning_tokens = None if reasoning_tokens is None else token_count(reasoning_tokens)

    def completeness(self) -> int:
        """How many of the three main counts are known (to prefer the fuller of two sources)."""
        return sum(v is not None for v in (self.input_tokens, self.output_tokens, self.total_tokens))

    def __repr__(self) -> str:
        return f"Usage(in={self.input_tokens}, out={self.output_tokens}, total={self.total_tokens})"
