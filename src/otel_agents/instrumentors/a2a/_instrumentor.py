"""``A2AInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``a2a`` only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry, guard
from .._base import OtelAgentsInstrumentor
from .._patch import Patch


class A2AInstrumentor(OtelAgentsInstrumentor):
    """Instruments a2a-sdk (``a2a``), client and server; see :mod:`otel_agents.instrumentors.a2a`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None, settings=None,
    propagate=None)``; ``propagate=False`` sends and takes no trace context in the service parameters
    (``None``: ``OTEL_AGENTS_A2A_PROPAGATE``, default on). ``uninstrument()`` restores the SDK exactly,
    its own telemetry included.
    """

    framework = "a2a"
    _patches: list[Any]  # Patch, HierarchyPatch
    _server: Any = None
    _propagate: bool | None = None

    def _instrument(self, **kwargs: Any) -> None:
        propagate = kwargs.get("propagate")
        self._propagate = None if propagate is None else bool(propagate)
        super()._instrument(**kwargs)
        # FastA2A (PydanticAI's A2A server) does not import a2a-sdk: hooked when it is imported, on its own.
        if self.telemetry is not None:
            with guard("a2a.install.fasta2a"):
                from . import _fasta2a

                _fasta2a.install(self.telemetry, self._propagate)

    def _uninstrument(self, **kwargs: Any) -> None:
        from . import _fasta2a

        with guard("a2a.remove.fasta2a"):
            _fasta2a.remove()
        super()._uninstrument(**kwargs)

    def _install(self, telemetry: Telemetry) -> None:
        from a2a.client.base_client import BaseClient
        from a2a.server.request_handlers.request_handler import RequestHandler
        from a2a.server.tasks.base_push_notification_sender import BasePushNotificationSender

        from .._hierarchy import HierarchyPatch
        from . import _client, _server, _telemetry

        client = _client.ClientSide(telemetry, self._propagate)
        server = self._server = _server.ServerSide(telemetry, self._propagate)
        hooks: list[tuple[type, str, Any]] = []
        hooks += [(BaseClient, name, client.call(name)) for name in _client.METHODS]
        hooks += [(BaseClient, name, client.stream(name)) for name in _client.STREAMS]
        hooks.append((BasePushNotificationSender, "_dispatch_notification", server.dispatch_notification))
        # Every request handler, a2a-sdk's and the application's own: the on_* methods each RequestHandler
        # subclass defines, now and later (an override calling super() reaches two wrappers: one span).
        handlers = {**{name: server.call(name) for name in _server.METHODS},
                    **{name: server.stream(name) for name in _server.STREAMS}}
        self._patches = []
        try:  # all or nothing: a renamed attribute leaves the SDK untouched
            for owner, name, wrapper in hooks:
                self._patches.append(Patch(owner, name, wrapper))
            self._patches.append(HierarchyPatch(RequestHandler, handlers, site="a2a.patch"))
        except Exception:
            self._remove()
            raise
        with guard("a2a.install.telemetry"):
            _telemetry.silence()

    def _remove(self) -> None:
        from . import _telemetry

        with guard("a2a.remove.telemetry"):
            _telemetry.restore()
        for patch in getattr(self, "_patches", ()):
            patch.remove()
        self._patches = []
        if self._server is not None:
            self._server.remove()
            self._server = None
