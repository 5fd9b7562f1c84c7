"""Google ADK: the customer-support ``LlmAgent`` run by a ``Runner`` over a scripted ``BaseLlm``, answering a refund question.

``examples/customer_support/google_adk_agent.py``'s agent, a fresh ``Runner`` (in-memory
sessions) per run, so an instrumentation installed between batches sees it: one run = one
``run_async`` of a refund question in a fresh event loop (three model calls, two tool calls).
Runs in ``.bench-venv-google_adk`` (ADK caps OpenTelemetry below the main venv's: Makefile
ISOLATED). Peers: ADK's **native** tracing (its spans go to the global tracer provider; the
benchmark switches that provider, see ``_native``) and OpenInference's ADK package. ``dispatch``: ADK's own cost of
one plugin (a do-nothing one, added as ours is).
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

from . import instrumentor_variant
from ._native import global_switch, native
from ._support import QUESTION, example, runner

NAME = "google_adk"
FRAMEWORK_DISTS = ("google-adk",)
PEERS = {
    "native": "google-adk",
    "openinference": "openinference-instrumentation-google-adk",
}
IMPORT = "google.adk"  # what must import here for this workload to run in the runner's own venv
VENV = ".bench-venv-google_adk"  # run.py runs this workload with that venv's python when ADK is not here


def workload() -> Callable[[], Any]:
    global_switch()  # before any ADK span: off, ADK's tracers are no-ops as with no provider configured
    module = example("google_adk_agent")
    from google.genai import types

    async def once() -> None:
        adk = module.build()
        session = await adk.session_service.create_session(app_name=module.APP, user_id="customer",
                                                           session_id=str(uuid.uuid4()))
        async for _ in adk.run_async(user_id="customer", session_id=session.id,
                                     new_message=types.Content(role="user", parts=[types.Part(text=QUESTION)])):
            pass

    return runner(once)


def dispatch() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """A plugin that does nothing, put first in each new ``Runner``'s plugins as ours is (``Runner.__init__``
    wrapped): ADK's own cost of running one plugin's callbacks (its plugin manager awaits every plugin's
    callback of each step, overridden or not), which any plugin-based instrumentation pays."""
    import wrapt
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.runners import Runner

    nothing = BasePlugin(name="nothing")
    original = Runner.__dict__["__init__"]

    def add_nothing(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        instance.plugin_manager.plugins.insert(0, nothing)
        return result

    def install() -> None:
        Runner.__init__ = wrapt.FunctionWrapper(original, add_nothing)

    def remove() -> None:
        Runner.__init__ = original

    return install, remove


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if variant == "native":
        return native(provider)
    instrumentor, install_ = instrumentor_variant(variant, provider, {
        "ours": "otel_agents.instrumentors.google_adk:GoogleADKInstrumentor",
        "openinference": "openinference.instrumentation.google_adk:GoogleADKInstrumentor",
    })
    return install_, instrumentor.uninstrument
