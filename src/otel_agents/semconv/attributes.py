"""Every attribute name ``otel_agents`` emits, grouped by the convention that defines it.

Sources:

* OTel GenAI semantic conventions (``gen_ai.*``): v1.41, the last text released
  (open-telemetry/semantic-conventions v1.41.0/v1.41.1; v1.42.0 moved the GenAI conventions to
  open-telemetry/semantic-conventions-genai, which has published no release yet), whose Python constants
  (``opentelemetry.semconv._incubating.attributes.gen_ai_attributes``) are frozen there:
  ``tests/test_semconv.py`` checks each string we write against them. A name changed only on that
  repository's main branch is kept for reading what others wrote, never written, until a release carries it.
* OpenInference semantic conventions (``openinference-semantic-conventions``),
  which Arize Phoenix renders natively.
* Langfuse's OTel ingestion (``langfuse.observation.type``).
* Our own namespace ``otel_agents.*`` for what no standard has yet.

Names only, no logic: instrumentors never use these to set kind attributes by
hand (that is :func:`otel_agents.semconv.mapping.kind_attributes`' job).
"""

from __future__ import annotations

# --- OTel GenAI (v1.41) -----------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_AGENT_DESCRIPTION = "gen_ai.agent.description"
GEN_AI_WORKFLOW_NAME = "gen_ai.workflow.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_DATA_SOURCE_ID = "gen_ai.data_source.id"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_OUTPUT_TYPE = "gen_ai.output.type"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P = "gen_ai.request.top_p"
GEN_AI_REQUEST_TOP_K = "gen_ai.request.top_k"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
GEN_AI_REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
GEN_AI_REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
GEN_AI_REQUEST_SEED = "gen_ai.request.seed"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_REQUEST_CHOICE_COUNT = "gen_ai.request.choice.count"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
# Read, never written: the name semantic-conventions-genai PR #440 gives the count above on its main branch (no release
# yet). Spans carry it when written by emitters that follow that branch (opentelemetry-util-genai 1.3b0) or by the
# builds of this library that took the rename for released (commit 5403208); the ECP fold prices both.
GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS = "gen_ai.usage.cache_write.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"
GEN_AI_RETRIEVAL_QUERY_TEXT = "gen_ai.retrieval.query.text"
GEN_AI_RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
GEN_AI_EMBEDDINGS_DIMENSION_COUNT = "gen_ai.embeddings.dimension.count"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
# Attributes of the gen_ai.evaluation.result event (semconv v1.38+): a grader's verdict on a span.
GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
ERROR_TYPE = "error.type"

# --- OTel GenAI, OpenAI page (attributes of OpenAI model spans) --------------------------------
OPENAI_REQUEST_SERVICE_TIER = "openai.request.service_tier"
OPENAI_RESPONSE_SERVICE_TIER = "openai.response.service_tier"
OPENAI_RESPONSE_SYSTEM_FINGERPRINT = "openai.response.system_fingerprint"
OPENAI_API_TYPE = "openai.api.type"  # chat_completions | responses

# --- OTel MCP and JSON-RPC (GenAI conventions, "mcp.client"/"mcp.server" spans) -------------
MCP_METHOD_NAME = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
MCP_SESSION_ID = "mcp.session.id"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
NETWORK_TRANSPORT = "network.transport"
# ``error.type`` of a tool call whose result says it failed, with no exception reaching us (in-band): an MCP
# ``CallToolResult`` with ``isError``, a LangChain ``ToolMessage`` with ``status="error"``.
TOOL_ERROR = "tool_error"
# ``error.type`` when the instrumentation knows of no more specific value (OTel's semantic conventions, ``error.type``:
# "A fallback error value to be used when the instrumentation doesn't define a custom value").
ERROR_TYPE_OTHER = "_OTHER"
MCP_TOOL_ERROR = TOOL_ERROR  # error.type of a CallToolResult with isError set

# --- A2A (semantic-conventions-genai PR #195, pending: "a2a.client"/"a2a.server" spans) ---------
A2A_METHOD_NAME = "a2a.method.name"  # SendMessage, SendStreamingMessage, GetTask, CancelTask, ...
A2A_PROTOCOL_VERSION = "a2a.protocol.version"
A2A_TENANT = "a2a.tenant"
A2A_MESSAGE_ID = "a2a.message.id"
A2A_TASK_ID = "a2a.task.id"
A2A_TASK_STATE = "a2a.task.state"  # the wire name: TASK_STATE_COMPLETED, ...
GEN_AI_AGENT_VERSION = "gen_ai.agent.version"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
A2A_TASK_FAILED = "task_failed"  # error.type of a task that ended TASK_STATE_FAILED
A2A_TASK_REJECTED = "task_rejected"
A2A_TASK_CANCELED = "task_canceled"

# Metric instrument names (OTel GenAI semconv v1.41).
GEN_AI_CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration"
GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage"
GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK = "gen_ai.client.operation.time_per_output_chunk"

# --- OpenInference -----------------------------------------------------------
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME_TYPE = "input.mime_type"
OUTPUT_VALUE = "output.value"
OUTPUT_MIME_TYPE = "output.mime_type"
LLM_MODEL_NAME = "llm.model_name"
LLM_PROVIDER = "llm.provider"
LLM_SYSTEM = "llm.system"
LLM_INVOCATION_PARAMETERS = "llm.invocation_parameters"
LLM_FINISH_REASON = "llm.finish_reason"
LLM_INPUT_MESSAGES = "llm.input_messages"
LLM_OUTPUT_MESSAGES = "llm.output_messages"
LLM_TOKEN_COUNT_PROMPT = "llm.token_count.prompt"
LLM_TOKEN_COUNT_COMPLETION = "llm.token_count.completion"
LLM_TOKEN_COUNT_TOTAL = "llm.token_count.total"
LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ = "llm.token_count.prompt_details.cache_read"
LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_WRITE = "llm.token_count.prompt_details.cache_write"
LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING = "llm.token_count.completion_details.reasoning"
LLM_TOOLS = "llm.tools"
TOOL_NAME = "tool.name"
TOOL_DESCRIPTION = "tool.description"
TOOL_PARAMETERS = "tool.parameters"
TOOL_ID = "tool.id"
TOOL_JSON_SCHEMA = "tool.json_schema"
RETRIEVAL_DOCUMENTS = "retrieval.documents"
EMBEDDING_MODEL_NAME = "embedding.model_name"
EMBEDDING_EMBEDDINGS = "embedding.embeddings"
SESSION_ID = "session.id"
USER_ID = "user.id"
METADATA = "metadata"
TAG_TAGS = "tag.tags"
AGENT_NAME = "agent.name"
GRAPH_NODE_ID = "graph.node.id"
GRAPH_NODE_PARENT_ID = "graph.node.parent_id"
# Keys inside flattened message lists (``llm.input_messages.{i}.message.role`` …).
MESSAGE_ROLE = "message.role"
MESSAGE_CONTENT = "message.content"
MESSAGE_TOOL_CALLS = "message.tool_calls"
MESSAGE_TOOL_CALL_ID = "message.tool_call_id"
MESSAGE_CONTENTS = "message.contents"
MESSAGE_CONTENT_TYPE = "message_content.type"
MESSAGE_CONTENT_TEXT = "message_content.text"
MESSAGE_CONTENT_IMAGE = "message_content.image"
MESSAGE_CONTENT_AUDIO = "message_content.audio"
IMAGE_URL = "image.url"
AUDIO_URL = "audio.url"
TOOL_CALL_ID = "tool_call.id"
TOOL_CALL_FUNCTION_NAME = "tool_call.function.name"
TOOL_CALL_FUNCTION_ARGUMENTS = "tool_call.function.arguments"
DOCUMENT_ID = "document.id"
DOCUMENT_CONTENT = "document.content"
DOCUMENT_SCORE = "document.score"
DOCUMENT_METADATA = "document.metadata"
EMBEDDING_TEXT = "embedding.text"

MIME_JSON = "application/json"
MIME_TEXT = "text/plain"

# OpenInference: a call's or run's total cost in USD as its framework reported it (the Claude Agent SDK's
# ``total_cost_usd``, on the run's agent span).
LLM_COST_TOTAL = "llm.cost.total"

# --- Langfuse ----------------------------------------------------------------
LANGFUSE_OBSERVATION_TYPE = "langfuse.observation.type"
# When the first chunk of a streamed generation arrived (ISO 8601): Langfuse's "completion start time", from
# which it shows the time to first token (langfuse/langfuse packages/shared/src/server/otel/attributes.ts).
LANGFUSE_OBSERVATION_COMPLETION_START_TIME = "langfuse.observation.completion_start_time"

# --- otel_agents (no standard yet) -----------------------------------------------
OTEL_AGENTS_SPAN_KIND = "otel_agents.span.kind"
OTEL_AGENTS_FRAMEWORK = "otel_agents.framework"
OTEL_AGENTS_TRUNCATED = "otel_agents.truncated"
# Fields of a ``blob`` message part whose media was above the media budget (GenAI parts allow extra fields).
OTEL_AGENTS_SIZE_BYTES = "otel_agents.size_bytes"
OTEL_AGENTS_SHA256 = "otel_agents.sha256"
OTEL_AGENTS_STREAM_ABANDONED = "otel_agents.stream.abandoned"
# error.type of a model span whose stream ended (cleanly, at the transport level) without the event that closes a
# response (Responses ``response.completed``/``incomplete``/``failed``, Anthropic ``message_stop``, a Chat
# Completions choice's ``finish_reason``): the response is cut. OTel GenAI has no value for it; error.type allows
# an instrumentation's own documented, low-cardinality values (OTel registry, error attributes).
STREAM_INCOMPLETE = "stream_incomplete"
OTEL_AGENTS_SPAN_EVICTED = "otel_agents.span.evicted"
OTEL_AGENTS_PAUSED = "otel_agents.run.paused"
# Why a run ended other than by its agent answering (on the run's agent span; absent when it answered): one
# of STOP_REASONS. No convention has a run-level stop reason yet (GenAI's finish reasons are per response);
# the values follow the frameworks' own causes (AutoGen ``TaskResult.stop_reason``, OpenAI Agents
# ``MaxTurnsExceeded``, the Claude Agent SDK's ``error_max_turns``/``error_max_budget_usd`` result subtypes).
OTEL_AGENTS_STOP_REASON = "otel_agents.run.stop_reason"
STOP_REASONS = frozenset({
    "max_turns",     # a cap on turns, steps, iterations, messages or model requests was reached
    "budget",        # a token or cost budget was exhausted (PydanticAI ``UsageLimits`` on tokens, max_budget_usd)
    "termination",   # a termination condition other than a cap was met (AutoGen ``TextMentionTermination``...)
    "guardrail",     # a guardrail's tripwire stopped the run (its answer, if any, is not the run's output)
    "cancelled",     # the caller cancelled the run (a streamed result's ``cancel()``, a cancellation token, a task)
})
OTEL_AGENTS_CONTROL_FLOW = "otel_agents.control_flow"
OTEL_AGENTS_TOOL_CACHED = "otel_agents.tool.cached"
# ``true`` on a tool span written without ``output.mime_type`` (``OTEL_AGENTS_VOCABULARIES=gen_ai``) whose
# ``gen_ai.tool.call.result`` is the JSON text of a structured value the tool returned (a dict, a list, a
# number): OTel GenAI asks for the result "in structured form", which an OTel span attribute cannot hold, and
# without this flag a tool that returned the string ``'{"a": 1}'`` and one that returned ``{"a": 1}`` look alike.
# Like ``output.mime_type``, it describes the result written last: a text written over a structured value takes it
# away (``false`` when it had reached the SDK already, past the span layer's pending attributes).
OTEL_AGENTS_TOOL_RESULT_JSON = "otel_agents.tool.result.json"
# A tool call that was refused and never ran (on its tool span, with status ERROR and an ``error.type`` saying
# why): a permission denial (the Claude Agent SDK's ``can_use_tool``/hooks, ``permission_denied``) or the
# framework's own refusal (CrewAI's repeated call, spent usage limit, unknown tool, unparsable input; a call past
# LangChain's ``ToolCallLimitMiddleware``).
OTEL_AGENTS_TOOL_DENIED = "otel_agents.tool.denied"
# ``error.type`` of a refused tool call (:data:`OTEL_AGENTS_TOOL_DENIED`) naming a tool the agent does not have: the
# framework answered the model with an error and ran nothing (CrewAI's ``ToolFailureReason`` word, ``unknown_tool``;
# PydanticAI's retry cause ``unknown_tool``).
UNKNOWN_TOOL = "unknown_tool"
# ``error.type`` of a refused tool call (:data:`OTEL_AGENTS_TOOL_DENIED`) whose arguments the framework rejected before
# the tool ran (not JSON, or not what the tool's schema asks): PydanticAI's retry cause for it, ``validation_error``
# (CrewAI's ReAct path has its own word, ``invalid_input``).
INVALID_TOOL_ARGUMENTS = "validation_error"
OTEL_AGENTS_SKILL_NAME = "otel_agents.skill.name"
OTEL_AGENTS_TASK_NAME = "otel_agents.task.name"
OTEL_AGENTS_TASK_ID = "otel_agents.task.id"
OTEL_AGENTS_PARENT_AGENT = "otel_agents.agent.parent"
OTEL_AGENTS_FINAL_ANSWER = "otel_agents.tool.final_answer"  # the tool call that is the run's answer (smolagents' final_answer)
# A guardrail span (semantic map: "Guardrails"): whether its tripwire fired.
OTEL_AGENTS_GUARDRAIL_TRIGGERED = "otel_agents.guardrail.triggered"
# The agent a handoff transferred the conversation to (on the handoff's tool span).
OTEL_AGENTS_HANDOFF_TARGET = "otel_agents.handoff.target"
# The MCP server's name from its initialize result (``serverInfo.name``): no standard key exists.
OTEL_AGENTS_MCP_SERVER_NAME = "otel_agents.mcp.server.name"

# Recorded by ``otel-agents ecp serve`` on each step's root span, so a stored run can be matched to a manifest
# step again (``ecp serve --replay``): one random id per scenario as the server sees it (``agent/initialize``
# to the next), the step's 1-based position in it, and the SHA-256 of its normalised input (never the text).
OTEL_AGENTS_ECP_SCENARIO_ID = "otel_agents.ecp.scenario.id"
OTEL_AGENTS_ECP_STEP_INDEX = "otel_agents.ecp.step.index"
OTEL_AGENTS_ECP_STEP_INPUT_SHA256 = "otel_agents.ecp.step.input_sha256"
