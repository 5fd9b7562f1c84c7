"""Run ``phoenix serve`` with its OTLP/gRPC listener switched off. Runs under Phoenix's own venv.

Phoenix 20.26 binds its gRPC collector to every interface (``[::]:PORT``, hard-coded; ``PHOENIX_HOST``
only moves the HTTP listener). Our tests export over OTLP/HTTP, so the gRPC server is not needed:
this launcher passes ``disabled=True`` to Phoenix's ``GrpcServer`` and then calls Phoenix's own
``main()``. The HTTP listener (UI, REST, GraphQL, ``/v1/traces``) stays on ``PHOENIX_HOST``.

Usage: ``<phoenix-venv>/bin/python launcher.py [serve]`` with the ``PHOENIX_*`` environment that
``server.py`` sets.
"""

import sys

from phoenix.server import grpc_server

_original_init = grpc_server.GrpcServer.__init__


def _init_disabled(self, *args, **kwargs):
    kwargs["disabled"] = True
    _original_init(self, *args, **kwargs)


grpc_server.GrpcServer.__init__ = _init_disabled

from phoenix.server.main import main  # noqa: E402  (after the patch, so app.py sees it)

if __name__ == "__main__":
    sys.argv = ["phoenix", *(sys.argv[1:] or ["serve"])]
    sys.exit(main())
