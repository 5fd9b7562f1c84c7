"""PydanticAI ``run_stream()`` whose output validator rejects the final output (PydanticAI raises
``UnexpectedModelBehavior``: "retries are not supported in run_stream()").

The model answered in full, yet its ``chat`` span ends ERROR with ``error.type`` UnexpectedModelBehavior *and*
``otel_agents.stream.abandoned`` (the validation runs while the response's stream is still open, so the exception
unwinds through the model request), and the ``validate_output`` step nests under the model span. In ``run()``
the same rejection leaves the model span UNSET and the step is its sibling under the agent. The ECP envelope so
counts one more error here (the model's). Fixed on h-breaker4: a rejected output is not a failure of the request
that answered it (a consumer's own exception still fails it, as the instrumentor's docstring says).

Run: PYTHONPATH=src /work/hv/.venv/bin/python repro/pa_run_stream_rejected_output_blames_the_model.py
"""
import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
PydanticAIInstrumentor().instrument(tracer_provider=provider)


async def stream(messages, info):  # noqa: ANN001, ANN201
    for word in ("bad ", "answer"):
        yield word


agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("bad answer")]), stream_function=stream),
              name="st")


@agent.output_validator
def reject(ctx: RunContext, output: str) -> str:
    if not ctx.partial_output:
        raise ModelRetry("no")
    return output


async def main() -> None:
    async with agent.run_stream("go") as result:
        async for _ in result.stream_text():
            pass


try:
    asyncio.run(main())
except Exception as exc:  # noqa: BLE001
    print("caller got", type(exc).__name__)
for span in exporter.get_finished_spans():
    print(span.name, span.status.status_code.name, span.attributes.get("error.type"),
          span.attributes.get("otel_agents.stream.abandoned"))
spans = exporter.get_finished_spans()
by_id = {s.context.span_id: s for s in spans}
model = next(s for s in spans if s.name.startswith("chat"))
step = next(s for s in spans if s.name == "validate_output")
assert model.status.status_code.name == "UNSET", "FAULT: the model span is failed"
assert not model.attributes.get("otel_agents.stream.abandoned"), "FAULT: the model span is abandoned"
assert by_id[step.parent.span_id].name == "invoke_agent st", "FAULT: the rejected output is a step of the model"
print("OK")
