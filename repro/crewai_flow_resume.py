"""CrewAI flow paused for async human feedback (a provider raising HumanFeedbackPending), then resumed with
Flow.resume(feedback) / resume_async: are the resumed methods under a flow span, in one trace?"""
import asyncio, os, sys, tempfile
os.environ["HOME"] = tempfile.mkdtemp(dir="/dev/shm"); os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
sys.path.insert(0, ".")
import logging, warnings; logging.getLogger("crewai").setLevel(logging.ERROR); warnings.simplefilter("ignore")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.crewai import CrewAIInstrumentor
CrewAIInstrumentor().instrument(tracer_provider=provider)
from crewai.flow.flow import Flow, start, listen
from crewai.flow.human_feedback import human_feedback
from crewai.flow.async_feedback.types import HumanFeedbackPending
from crewai.flow.persistence import SQLiteFlowPersistence


class Later:
    def request_feedback(self, context, flow):
        raise HumanFeedbackPending(context=context)


class Review(Flow):
    @start()
    @human_feedback(message="Publish?", provider=Later())
    def draft(self):
        return "the draft"

    @listen(draft)
    def publish(self, result):
        return f"published: {result.feedback}"


db = SQLiteFlowPersistence(os.path.join(os.environ["HOME"], "flows.db"))
flow = Review(persistence=db)
pending = flow.kickoff()
print("paused:", type(pending).__name__)
check(exporter, opens, "kickoff paused")
again = Review.from_pending(pending.context.flow_id, db)
print("resumed:", again.resume("looks good"))
check(exporter, opens, "resume")
