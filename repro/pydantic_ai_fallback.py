"""PydanticAI FallbackModel: the first model fails (an HTTP 500 from a provider; or a FunctionModel raising
ModelHTTPError), the fallback answers. What model spans do we make, and what does PydanticAI's own
instrumentation (InstrumentedModel) make?"""
import sys

sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor  # noqa: E402

PydanticAIInstrumentor().instrument(tracer_provider=provider)
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ModelHTTPError  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart  # noqa: E402
from pydantic_ai.models.fallback import FallbackModel  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402


def broken(messages, info):
    raise ModelHTTPError(503, "primary-1", {"error": "overloaded"})


def works(messages, info):
    return ModelResponse(parts=[TextPart("fine")])


model = FallbackModel(FunctionModel(broken, model_name="primary-1"), FunctionModel(works, model_name="backup-1"))
native = len(sys.argv) > 1  # PydanticAI's own instrumentation as well, on the same provider
if native:
    from pydantic_ai.models.instrumented import InstrumentationSettings
    agent = Agent(model, name="support", instrument=InstrumentationSettings(tracer_provider=provider))
else:
    agent = Agent(model, name="support")
print("OUTPUT", agent.run_sync("go").output)
show()
