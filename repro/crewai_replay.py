"""CrewAI: Crew.replay(task_id) re-runs a crew from one of its tasks (stored by the last kickoff): it runs the tasks
without kickoff. Is the replayed run one trace, under a crew span?"""
import os, sys, tempfile
os.environ["HOME"] = tempfile.mkdtemp(dir="/dev/shm"); os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
sys.path.insert(0, ".")
import logging, warnings; logging.getLogger("crewai").setLevel(logging.ERROR); warnings.simplefilter("ignore")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.crewai import CrewAIInstrumentor
CrewAIInstrumentor().instrument(tracer_provider=provider)
from crewai import Crew
from tests.crewai.fakes import clerk, order_task

agent = clerk()
crew = Crew(agents=[agent], tasks=[order_task(agent), order_task(agent, name="again", description="And order A200?")])
crew.kickoff()
check(exporter, opens, "kickoff")
out = crew.replay(str(crew.tasks[0].id))
print("replayed:", out.raw)
check(exporter, opens, "replay from the first task")
