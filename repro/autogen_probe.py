import asyncio, gc, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
AutoGenAgentChatInstrumentor().instrument(tracer_provider=provider)
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import RoundRobinGroupChat, Swarm, SelectorGroupChat
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination, HandoffTermination
from autogen_core import CancellationToken
from tests.autogen_agentchat.fakes import replay, call, text, calls

def lookup(order: str) -> str:
    """Look up an order."""
    return f"order {order} shipped"

def boom(order: str) -> str:
    """Fails."""
    raise ValueError("tool broke")

async def main():
    # 1. two agents concurrently
    a = AssistantAgent("a", model_client=replay(call("lookup", {"order": "1"}), text("A done")), tools=[lookup])
    b = AssistantAgent("b", model_client=replay(call("lookup", {"order": "2"}, "call-2"), text("B done")), tools=[lookup])
    r = await asyncio.gather(a.run(task="x"), b.run(task="y"))
    check(exporter, opens, "gather two agents")
    # 2. reflect_on_tool_use + tool error
    c = AssistantAgent("c", model_client=replay(call("boom", {"order": "1"}), text("sorry")), tools=[boom], reflect_on_tool_use=True)
    r = await c.run(task="x")
    check(exporter, opens, "reflect + tool error")
    # 3. save/load state then run again
    st = await c.save_state()
    d = AssistantAgent("c", model_client=replay(text("again")), tools=[boom])
    await d.load_state(st)
    r = await d.run(task="more")
    check(exporter, opens, "load_state then run")
    # 4. team run twice (continue)
    t1 = AssistantAgent("t1", model_client=replay(text("one"), text("three")))
    t2 = AssistantAgent("t2", model_client=replay(text("two TERMINATE"), text("four TERMINATE")))
    team = RoundRobinGroupChat([t1, t2], termination_condition=TextMentionTermination("TERMINATE"))
    await team.run(task="go")
    await team.run()
    check(exporter, opens, "team run twice")
    # 5. team run_stream partly consumed, abandoned (closed)
    t1 = AssistantAgent("t1", model_client=replay(text("one"), text("three")))
    t2 = AssistantAgent("t2", model_client=replay(text("two"), text("four TERMINATE")))
    team = RoundRobinGroupChat([t1, t2], termination_condition=TextMentionTermination("TERMINATE"))
    s = team.run_stream(task="go")
    async for m in s:
        break
    await s.aclose()
    check(exporter, opens, "team run_stream closed after first")
    # 6. two teams concurrently
    def mk(n):
        t1 = AssistantAgent(f"t1", model_client=replay(text(f"{n} one")))
        t2 = AssistantAgent(f"t2", model_client=replay(text(f"{n} TERMINATE")))
        return RoundRobinGroupChat([t1, t2], termination_condition=TextMentionTermination("TERMINATE"))
    await asyncio.gather(mk("a").run(task="go"), mk("b").run(task="go"))
    check(exporter, opens, "two teams gather")
    # 7. Swarm with handoff and HandoffTermination
    s1 = AssistantAgent("s1", model_client=replay(call("transfer_to_s2", {})), handoffs=["s2"])
    s2 = AssistantAgent("s2", model_client=replay(call("transfer_to_user", {})), handoffs=["user"])
    sw = Swarm([s1, s2], termination_condition=HandoffTermination(target="user"))
    await sw.run(task="go")
    check(exporter, opens, "swarm handoff to user")
    # 8. team cancellation token before run; cancel mid-run (model delay)
    from tests.autogen_agentchat.fakes import ScriptedClient
    tok = CancellationToken()
    t1 = AssistantAgent("t1", model_client=ScriptedClient(lambda m: text("x"), delay=0.2))
    team = RoundRobinGroupChat([t1], max_turns=3)
    task = asyncio.ensure_future(team.run(task="go", cancellation_token=tok))
    await asyncio.sleep(0.05); tok.cancel()
    try:
        await task
    except BaseException as e:
        print("team cancel raised", type(e).__name__)
    check(exporter, opens, "team token cancel during model")
    # 9. agent run_stream abandoned dropped
    a = AssistantAgent("a", model_client=replay(call("lookup", {"order": "1"}), text("A done")), tools=[lookup])
    s = a.run_stream(task="x")
    async for m in s:
        break
    del s; gc.collect(); await asyncio.sleep(0.1)
    check(exporter, opens, "agent run_stream dropped")

asyncio.run(main())
