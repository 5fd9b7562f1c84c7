import asyncio, gc, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
AutoGenAgentChatInstrumentor().instrument(tracer_provider=provider)
from autogen_agentchat.agents import AssistantAgent, SocietyOfMindAgent, UserProxyAgent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from tests.autogen_agentchat.fakes import replay, call, text, ScriptedClient, INFO
from autogen_ext.models.replay import ReplayChatCompletionClient
from pydantic import BaseModel

class Out(BaseModel):
    answer: str

async def main():
    # 1. structured output
    info = dict(INFO, json_output=True, structured_output=True)
    a = AssistantAgent("s", model_client=ReplayChatCompletionClient([text('{"answer": "42"}')], model_info=info), output_content_type=Out)
    r = await a.run(task="q"); print(type(r.messages[-1]).__name__, r.messages[-1].content)
    check(exporter, opens, "structured output")
    # 2. society of mind
    inner = RoundRobinGroupChat([AssistantAgent("w", model_client=replay(text("draft TERMINATE")))], termination_condition=TextMentionTermination("TERMINATE"))
    som = SocietyOfMindAgent("som", team=inner, model_client=replay(text("final")))
    r = await som.run(task="q"); print(r.messages[-1].content)
    check(exporter, opens, "society of mind")
    # 3. user proxy whose input raises
    def bad_input(prompt):
        raise EOFError("no stdin")
    team = RoundRobinGroupChat([AssistantAgent("a", model_client=replay(text("ask"))), UserProxyAgent("user", input_func=bad_input)], max_turns=2)
    try:
        await team.run(task="q")
    except Exception as e:
        print("raised", type(e).__name__, e)
    check(exporter, opens, "user proxy raising")
    # 4. team save_state / load_state then run
    t1 = AssistantAgent("t1", model_client=replay(text("one"), text("three TERMINATE")))
    team = RoundRobinGroupChat([t1], termination_condition=TextMentionTermination("TERMINATE"), max_turns=1)
    await team.run(task="go")
    st = await team.save_state()
    t1b = AssistantAgent("t1", model_client=replay(text("three TERMINATE")))
    team2 = RoundRobinGroupChat([t1b], termination_condition=TextMentionTermination("TERMINATE"))
    await team2.load_state(st)
    await team2.run()
    check(exporter, opens, "team save/load")
    # 5. two concurrent runs of the same team object? (AutoGen refuses) -> error must be the user's
    t = RoundRobinGroupChat([AssistantAgent("x", model_client=ScriptedClient(lambda m: text("x TERMINATE"), delay=0.05))], termination_condition=TextMentionTermination("TERMINATE"))
    res = await asyncio.gather(t.run(task="a"), t.run(task="b"), return_exceptions=True)
    print([type(x).__name__ for x in res])
    await asyncio.sleep(0.1)
    check(exporter, opens, "same team run twice concurrently")
asyncio.run(main())
