"""Token counts of one model call, as the span layer records them."""

from __future__ import annotations


class Usage:
    """Token counts of one model call (all ints, tokens; ``None`` = not reported).

    ``total_tokens`` defaults to ``input_tokens + output_tokens`` when both are known.
    """

    __slots__ = ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens",
                 "cache_creation_tokens", "reasoning_tokens")

    def __init__(self, input_tokens: int | None = None, output_tokens: int | None = None,
                 total_tokens: int | None = None, cache_read_tokens: int | None = None,
                 cache_creation_tokens: int | None = None, reasoning_tokens: int | None = None):
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        if total_tokens is None and input_tokens is not None and output_tokens is not None:
            total_tokens = input_tokens + output_tokens
        self.total_tokens = total_tokens
        self.cache_read_tokens = cache_read_tokens
        self.cache_creation_tokens = cache_creation_tokens
        self.reasoning_tokens = reasoning_tokens

    def completeness(self) -> int:
        """How many of the three main counts are known (to prefer the fuller of two sources)."""
        return sum(v is not None for v in (self.input_tokens, self.output_tokens, self.total_tokens))

    def __repr__(self) -> str:
        return f"Usage(in={self.input_tokens}, out={self.output_tokens}, total={self.total_tokens})"
