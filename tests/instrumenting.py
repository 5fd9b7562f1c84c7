"""The ``instrument`` / ``instrumented`` fixtures every framework's tests use, written once: a framework's
conftest says ``instrument, instrumented = fixtures(ItsInstrumentor)``."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

import pytest

from otel_agents._spans import Settings

_SETTINGS = frozenset(f.name for f in dataclasses.fields(Settings))


def fixtures(instrumentor_class: type) -> tuple[Any, Any]:
    """Two pytest fixtures: ``instrument`` — ``instrument(**options)`` instruments one ``instrumentor_class``
    on the test's ``provider`` and returns it, uninstrumented at teardown: the options that are
    :class:`~otel_agents._spans.Settings` fields make its ``settings`` (``capture_content=False``), the others
    go to ``instrument()`` as they are (``propagate=False``) — and ``instrumented``, that instrumentor
    instrumented with the defaults."""

    @pytest.fixture
    def instrument(provider: Any) -> Iterator[Callable[..., Any]]:
        inst = instrumentor_class()

        def start(**options: Any) -> Any:
            settings = {name: options.pop(name) for name in list(options) if name in _SETTINGS}
            inst.instrument(tracer_provider=provider, settings=Settings(**settings) if settings else None, **options)
            return inst

        yield start
        inst.uninstrument()

    @pytest.fixture
    def instrumented(instrument: Callable[..., Any]) -> Any:
        return instrument()

    return instrument, instrumented
