"""Run ``opentelemetry-instrument``'s entry-point loader with frameworks pretended absent or at another
version, and print what it instrumented and logged (JSON on stdout).

    python loader_probe.py '{"langchain-core": "0.2.1", "crewai": null}'

Each key is a distribution: a version string pretends that version is installed, ``null`` pretends it
is not installed (its top-level module then fails to import, as it would). The loader is the real one
(``_load_instrumentors`` with the real distro, as ``sitecustomize`` calls it); only the version lookup
it shares with our instrumentors is replaced.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from importlib.metadata import PackageNotFoundError

from opentelemetry.instrumentation import dependencies

MODULES = {"langchain-core": "langchain_core", "llama-index-core": "llama_index", "crewai": "crewai",
           "pydantic-ai-slim": "pydantic_ai", "agno": "agno"}


def main(pretend: dict[str, str | None]) -> dict[str, object]:
    real_version = dependencies.version

    def version(name: str) -> str:
        if name in pretend:
            if pretend[name] is None:
                raise PackageNotFoundError(name)
            return str(pretend[name])
        return real_version(name)

    dependencies.version = version
    for dist, value in pretend.items():
        if value is None:
            sys.modules[MODULES[dist]] = None  # type: ignore[assignment]  # import fails as if absent

    records: list[dict[str, str]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append({"logger": record.name, "level": record.levelname, "message": record.getMessage()})

    logging.getLogger().addHandler(Keep())
    logging.getLogger().setLevel(logging.DEBUG)

    from opentelemetry.instrumentation.auto_instrumentation._load import _load_distro, _load_instrumentors

    _load_instrumentors(_load_distro())

    from otel_agents.instrumentors import FRAMEWORKS

    instrumented = {}
    for name, fw in FRAMEWORKS.items():
        instrumentor = getattr(importlib.import_module(fw.module), fw.cls)()
        instrumented[name] = instrumentor.is_instrumented_by_opentelemetry
        if instrumented[name]:
            instrumentor.uninstrument()
    return {"instrumented": instrumented, "records": records}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
