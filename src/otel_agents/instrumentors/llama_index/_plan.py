"""What each dispatcher span becomes: one semantic span, or nothing.

LlamaIndex opens a dispatcher span for every decorated method, including
internal helpers (``_query``, ``_retrieve``, ``split_text``,
``_prepare_chat_with_tools``) and a subclass method that calls its base
method. :func:`plan_for` keeps the logical calls only:

* ``run`` of a workflow agent (FunctionAgent, ReActAgent …) → ``agent``,
  ``invoke_agent {agent name}``;
* ``run`` of an ``AgentWorkflow`` → ``chain``, ``invoke_workflow AgentWorkflow``
  (its agents are added by :mod:`._agents`);
* ``run`` of any other ``Workflow`` → ``chain`` named after the class;
* a workflow step (a child of a run, tagged by the runtime) → ``chain`` named
  after the step;
* ``chat``/``complete`` and their async and streaming forms on a ``BaseLLM`` →
  ``model``, ``chat {model}`` / ``text_completion {model}``;
* ``get_*_embedding*`` on a ``BaseEmbedding`` → ``embedding``, ``embeddings {model}``;
* ``retrieve``/``aretrieve`` on a ``BaseRetriever`` → ``retriever``,
  ``retrieval {retriever class}``;
* ``call``/``acall``/``__call__`` on a ``BaseTool`` → ``tool``, ``execute_tool {tool name}``;
* ``query``/``aquery`` of query engines, ``synthesize``/``asynthesize`` of
  synthesizers, ``chat`` and its forms of chat engines → ``chain`` named after the class;

and drops a span of the same kind on the same object as its nearest semantic
ancestor (``acall`` → ``call``, ``achat`` → ``chat``, an override calling
``super()``), and any model call nested in a model call, so each logical call
gives exactly one span. One fallback is not nested: ``CustomLLM``'s own
``astream_chat``/``astream_complete`` (used by ``MockLLM`` and most custom
models) return a generator that calls the sync stream only when it is read,
after the async span has exited; for classes that keep that fallback the sync
stream is the model call and the async one passes through. Everything else
passes through: its children nest under its nearest semantic ancestor.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Mapping

from ...semconv import Kind
from ...semconv.mapping import OP_CHAT, OP_TEXT_COMPLETION
from . import _extract as extract

MODEL_METHODS = {
    "chat": OP_CHAT, "achat": OP_CHAT, "stream_chat": OP_CHAT, "astream_chat": OP_CHAT,
    "complete": OP_TEXT_COMPLETION, "acomplete": OP_TEXT_COMPLETION,
    "stream_complete": OP_TEXT_COMPLETION, "astream_complete": OP_TEXT_COMPLETION,
}
EMBEDDING_METHODS = frozenset({
    "get_query_embedding", "aget_query_embedding", "get_text_embedding", "aget_text_embedding",
    "get_text_embedding_batch", "aget_text_embedding_batch",
    "get_agg_embedding_from_queries", "aget_agg_embedding_from_queries",
})
RETRIEVER_METHODS = frozenset({"retrieve", "aretrieve"})
TOOL_METHODS = frozenset({"call", "acall", "__call__"})
QUERY_METHODS = frozenset({"query", "aquery"})
SYNTHESIZER_METHODS = frozenset({"synthesize", "asynthesize"})
CHAT_ENGINE_METHODS = frozenset({"chat", "achat", "stream_chat", "astream_chat"})

STEP_TAG = "llamaindex.step.input_event"  # set by the workflow runtime on every step's tags
_UUID_SUFFIX = 37  # "-" + str(uuid4()), the end of every dispatcher span id

# Roles: how the handlers fill and end the span.
RUN_AGENT, RUN_MULTI_AGENT, RUN_WORKFLOW, STEP = "run_agent", "run_multi_agent", "run_workflow", "step"
MODEL, EMBEDDING, RETRIEVER, TOOL, COMPONENT = "model", "embedding", "retriever", "tool", "component"


@dataclass(frozen=True)
class Plan:
    """The semantic span a dispatcher span becomes.

    Attributes:
        role: one of the role constants above.
        kind: the semantic kind.
        name: what the span name is built from (agent, model, tool, component name).
        operation: the model operation (``chat``/``text_completion``) for model spans.
        workflow: a multi-agent orchestration chain (``invoke_workflow``).
        stream: a model call that returns a stream (the span outlives the dispatcher span).
    """

    role: str
    kind: Kind
    name: str | None
    operation: str | None = None
    workflow: bool = False
    stream: bool = False


class Bases:
    """The LlamaIndex base classes spans are classified by, imported when instrumenting.

    The agent classes are looked up in ``sys.modules`` instead of imported:
    until the application imports them no instance can exist, and importing
    the agent package would slow down every process that only queries an index.
    """

    def __init__(self) -> None:
        from llama_index.core.base.base_query_engine import BaseQueryEngine
        from llama_index.core.base.base_retriever import BaseRetriever
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.base.llms.base import BaseLLM
        from llama_index.core.chat_engine.types import BaseChatEngine
        from llama_index.core.response_synthesizers.base import BaseSynthesizer
        from llama_index.core.tools.types import BaseTool
        from workflows import Workflow

        self.llm, self.embedding, self.retriever, self.tool = BaseLLM, BaseEmbedding, BaseRetriever, BaseTool
        self.query_engine, self.synthesizer, self.chat_engine = BaseQueryEngine, BaseSynthesizer, BaseChatEngine
        self.workflow = Workflow
        from llama_index.core.llms.custom import CustomLLM

        self.custom_llm = CustomLLM

    def keeps_lazy_async_stream(self, instance: Any, method: str) -> bool:
        """Whether ``method`` of ``instance`` is ``CustomLLM``'s lazy async-stream fallback."""
        if method not in ("astream_chat", "astream_complete"):
            return False
        owner = next((c for c in type(instance).__mro__ if method in c.__dict__), None)
        return owner is self.custom_llm

    @staticmethod
    def _loaded(module: str, name: str) -> Any:
        mod = sys.modules.get(module)
        return getattr(mod, name, None) if mod is not None else None

    def is_agent(self, instance: Any) -> bool:
        cls = self._loaded("llama_index.core.agent.workflow.base_agent", "BaseWorkflowAgent")
        return cls is not None and isinstance(instance, cls)

    def is_multi_agent(self, instance: Any) -> bool:
        cls = self._loaded("llama_index.core.agent.workflow.multi_agent_workflow", "AgentWorkflow")
        return cls is not None and isinstance(instance, cls)


def method_of(span_id: str) -> str:
    """The method (or function) name in a dispatcher span id (``Class.method-<uuid>``)."""
    head = span_id[:-_UUID_SUFFIX] if len(span_id) > _UUID_SUFFIX else span_id
    return head.rpartition(".")[2]


def plan_for(span_id: str, instance: Any, tags: Mapping[str, Any] | None, bases: Bases, *,
             parent_role: str | None, enclosing_kind: Kind | None, enclosing_instance: int | None) -> Plan | None:
    """Classify one dispatcher span (see the module docstring); ``None`` = pass through.

    Args:
        span_id: the dispatcher span id.
        instance: the object whose method is called (``None`` for functions and steps).
        tags: the dispatcher's instrument tags at entry.
        bases: the resolved base classes.
        parent_role: the role of the direct dispatcher parent, when we planned it.
        enclosing_kind, enclosing_instance: kind and ``id()`` of the object of the
            nearest semantic ancestor, to drop repeated spans of one logical call.
    """
    method = method_of(span_id)
    if instance is None:
        if tags and STEP_TAG in tags and parent_role in (RUN_AGENT, RUN_MULTI_AGENT, RUN_WORKFLOW):
            return Plan(STEP, Kind.CHAIN, method)
        return None
    plan = _plan_method(instance, method, bases)
    if plan is None:
        return None
    if plan.kind is Kind.MODEL and enclosing_kind is Kind.MODEL:
        return None  # a model call inside a model call (achat → chat fallbacks): one span
    if enclosing_kind is plan.kind and enclosing_instance == id(instance):
        return None  # the same call seen twice (acall → call, an override calling super())
    return plan


def _plan_method(instance: Any, method: str, bases: Bases) -> Plan | None:
    if method == "run" and isinstance(instance, bases.workflow):
        if bases.is_agent(instance):
            return Plan(RUN_AGENT, Kind.AGENT, getattr(instance, "name", None) or type(instance).__name__)
        if bases.is_multi_agent(instance):
            return Plan(RUN_MULTI_AGENT, Kind.CHAIN, type(instance).__name__, workflow=True)
        return Plan(RUN_WORKFLOW, Kind.CHAIN, type(instance).__name__)
    if method in MODEL_METHODS and isinstance(instance, bases.llm):
        if bases.keeps_lazy_async_stream(instance, method):
            return None  # CustomLLM's fallback: the sync stream it reads later is the model call
        return Plan(MODEL, Kind.MODEL, extract.model_name(instance), operation=MODEL_METHODS[method],
                    stream="stream" in method)
    if method in EMBEDDING_METHODS and isinstance(instance, bases.embedding):
        return Plan(EMBEDDING, Kind.EMBEDDING, extract.model_name(instance))
    if method in RETRIEVER_METHODS and isinstance(instance, bases.retriever):
        return Plan(RETRIEVER, Kind.RETRIEVER, type(instance).__name__)
    if method in TOOL_METHODS and isinstance(instance, bases.tool):
        return Plan(TOOL, Kind.TOOL, extract.tool_identity(instance)[0] or type(instance).__name__)
    if (method in QUERY_METHODS and isinstance(instance, bases.query_engine)) or \
            (method in SYNTHESIZER_METHODS and isinstance(instance, bases.synthesizer)) or \
            (method in CHAT_ENGINE_METHODS and isinstance(instance, bases.chat_engine)):
        return Plan(COMPONENT, Kind.CHAIN, type(instance).__name__)
    return None
