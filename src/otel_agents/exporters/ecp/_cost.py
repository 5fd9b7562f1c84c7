"""The price of a model call, from the `genai-prices` package (offline).

``genai-prices`` ships a snapshot of providers' prices inside the package;
:func:`genai_prices.calc_price` reads that snapshot and only uses fresher,
downloaded data when the application itself starts ``genai_prices.UpdatePrices``
(we never do). So pricing needs no network. The request time is the span's
start, so a re-fold of old traces prices them as they were billed (as far as
the snapshot's price history goes).

OTel GenAI ``gen_ai.provider.name`` values are mapped to genai-prices provider
ids where the two differ (``aws.bedrock`` → ``aws``, ``gcp.*`` → ``google`` …).
A span whose provider is named but unknown to genai-prices is not priced (we do
not guess a provider for it); a span with no provider is priced only when
genai-prices recognises the model name by itself.
"""

from __future__ import annotations

import functools
import logging
import warnings
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Callable

from ...semconv import attributes as A
from . import _facts as F

logger = logging.getLogger("otel_agents")

_PROVIDER_IDS = {
    "aws.bedrock": "aws",
    "azure.ai.openai": "azure",
    "azure.ai.inference": "azure",
    "gcp.gemini": "google",
    "gcp.vertex_ai": "google",
    "gcp.gen_ai": "google",
    "mistral_ai": "mistral",
    "x_ai": "x-ai",
}

# genai-prices (pydantic models, its HTTP client, its 1.6 MB price table: 0.3-0.4 s of CPU) is imported by
# load_prices(), once per process, not with this module: a process that folds no model call (``otel-agents
# --help``, ``doctor``, ``export``, a ``collect`` that receives no model span, a fold of spans without usage)
# never pays it. Where a fold runs beside an application (``ECPFoldingProcessor``: when it is set up) or a
# receiver (``TraceGatherer``: with the first model span it holds), it calls load_prices() itself, so that no
# run waits for the import when it is folded (it made a process's first fold ~20% slower).
genai_prices = None  # the module, once load_prices() imported it
_available: bool | None = None  # None: not yet asked


def load_prices() -> bool:
    """Import genai-prices and its price table unless done already; whether it is installed. The first call
    of a process without it logs (INFO) that ``metrics.cost_usd`` will be null."""
    global genai_prices, _available
    if _available is None:
        try:
            import genai_prices  # the global: this module's name for it from here on
            import genai_prices.data  # noqa: F401 - the price table the first calc_price would load
        except ImportError:
            genai_prices, _available = None, False
            logger.info("otel_agents: genai-prices is not installed; ECP metrics.cost_usd is null "
                        "(pip install 'otel-agents[ecp]')")
        else:
            _available = True
    return _available


def span_cost(span: F.FoldSpan, tokens: tuple[int | None, int | None, int | None] | None = None) -> Decimal | None:
    """The price in USD of one model span, or ``None`` when it cannot be priced.

    Needs the model name and token usage on the span and the ``genai-prices``
    package (extra ``otel-agents[ecp]``); any lookup failure gives ``None``. ``tokens``: the span's
    :func:`~._facts.usage` when the caller has it already (read here otherwise).
    """
    model = F.model_name(span)
    if tokens is not None:
        inp, out = tokens[0], tokens[1]
    else:
        inp = F.token_count(span, A.GEN_AI_USAGE_INPUT_TOKENS)
        out = F.token_count(span, A.GEN_AI_USAGE_OUTPUT_TOKENS)
    if not model or (inp is None and out is None) or not load_prices():
        return None
    provider = F.provider(span)
    provider_id = _PROVIDER_IDS.get(provider, provider) if provider else None
    a = span.attributes
    cache_read = F.token_count(span, A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS) \
        if A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS in a else None
    # v1.41's name (what we write), or the name the conventions' main branch gives it (what some spans carry).
    write_key = A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS if A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS in a \
        else A.GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS
    cache_write = F.token_count(span, write_key) if write_key in a else None
    start = span.start_time
    return _price(model, provider_id, inp, out, cache_read, cache_write, _day(start / 1e9) if start else None)


_DAY = 86_400


def _day(seconds: float) -> date:
    """The UTC date of a time in seconds since the epoch: ``datetime.fromtimestamp``'s, through a cache by day
    (a fold prices many calls of the same few days)."""
    into = seconds % _DAY
    if into < 1e-3 or into > _DAY - 1e-3:  # near midnight: fromtimestamp's own rounding decides
        return datetime.fromtimestamp(seconds, tz=timezone.utc).date()
    return _date_of_day(int(seconds // _DAY))


@functools.lru_cache(maxsize=64)
def _date_of_day(day: int) -> date:
    return datetime.fromtimestamp(day * _DAY + _DAY // 2, tz=timezone.utc).date()


@functools.lru_cache(maxsize=4096)
def _price(model: str, provider_id: str | None, input_tokens: int | None, output_tokens: int | None,
           cache_read_tokens: int | None, cache_write_tokens: int | None, day: date | None) -> Decimal | None:
    """genai-prices' total for one call; cached (one flat key: the model, provider, token counts and day)
    because pricing is most of a fold's cost and the same model, usage and day recur (re-folds,
    deterministic agents). Prices change by date, not within a day."""
    when = datetime(day.year, day.month, day.day, 12, tzinfo=timezone.utc) if day else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            price = genai_prices.calc_price(
                genai_prices.Usage(**{k: v for k, v in (("input_tokens", input_tokens),
                                                         ("output_tokens", output_tokens),
                                                         ("cache_read_tokens", cache_read_tokens),
                                                         ("cache_write_tokens", cache_write_tokens))
                                      if v is not None}),
                model, provider_id=provider_id, genai_request_timestamp=when)
    except Exception:  # noqa: BLE001 - an unknown model or provider is simply not priced
        return None
    return price.total_price


def run_cost(model_spans: list[F.FoldSpan],
             usage: Callable[[F.FoldSpan], tuple[int | None, int | None, int | None]] | None = None) -> float | None:
    """The summed price in USD of a run's model calls (rounded to 1e-9 USD). ``usage``: a span's
    :func:`~._facts.usage`, memoised by the caller (:meth:`~._runs.RunTree.usage`), else read per span.

    ``None`` when the run made no model call or any call could not be priced:
    a partial sum would understate the cost.
    """
    if not model_spans:
        return None
    total = Decimal(0)
    for span in model_spans:
        cost = span_cost(span, usage(span) if usage is not None else None)
        if cost is None:
            return None
        total += cost
    return round(float(total), 9)
