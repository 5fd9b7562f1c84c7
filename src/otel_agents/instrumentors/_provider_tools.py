"""Tools offered to a model, read from the provider-shaped specs frameworks pass on.

LangChain's ``invocation_params["tools"]`` (what ``bind_tools`` bound) and the
``tools`` a LlamaIndex function-calling LLM receives are usually already in the
provider's request format. :func:`tool_definition` reads the common ones into a
:class:`~otel_agents._spans.ToolDefinition` (OTel GenAI ``gen_ai.tool.definitions``):

* OpenAI Chat Completions: ``{"type": "function", "function": {"name", "description", "parameters"}}``
  (the shape LangChain's ``convert_to_openai_tool`` makes, used by most providers);
* OpenAI Responses: ``{"type": "function", "name", "description", "parameters"}``;
* Anthropic Messages: ``{"name", "description", "input_schema"}`` (OpenAI's legacy ``functions``:
  ``{"name", "description", "parameters"}``); server tools
  (``{"type": "web_search_20250305", "name": "web_search", …}``) keep their ``type``;
* Amazon Bedrock Converse: ``{"toolSpec": {"name", "description", "inputSchema": {"json": …}}}``;
* Gemini: ``{"function_declarations": [{"name", "description", "parameters"}, …]}`` (several tools);
* a provider's built-in tool with only a ``type`` (``{"type": "web_search_preview"}``): named after it.

Framework objects (a LangChain ``BaseTool``, a LlamaIndex ``BaseTool``) are read by
the framework's own module. Pure functions, no spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable

from .._spans import ToolDefinition


def _definition(name: Any, description: Any, parameters: Any, type_: Any = "function") -> ToolDefinition | None:
    if not isinstance(name, str) or not name:
        return None
    return ToolDefinition(name=name, description=description if isinstance(description, str) else None,
                          parameters=parameters if isinstance(parameters, Mapping) else None,
                          type=type_ if isinstance(type_, str) and type_ else "function")


def tool_definition(spec: Mapping[str, Any]) -> list[ToolDefinition]:
    """The tool definitions in one provider-shaped tool spec (see the module docstring);
    an empty list for a shape it does not know."""
    function = spec.get("function")
    if isinstance(function, Mapping):  # OpenAI Chat Completions
        found = _definition(function.get("name"), function.get("description"), function.get("parameters"),
                            spec.get("type") or "function")
        return [found] if found else []
    tool_spec = spec.get("toolSpec")
    if isinstance(tool_spec, Mapping):  # Bedrock Converse
        schema = tool_spec.get("inputSchema")
        found = _definition(tool_spec.get("name"), tool_spec.get("description"),
                            schema.get("json") if isinstance(schema, Mapping) else None)
        return [found] if found else []
    declarations = spec.get("function_declarations", spec.get("functionDeclarations"))
    if isinstance(declarations, (list, tuple)):  # Gemini
        return [d for d in (_definition(f.get("name"), f.get("description"),
                                        f.get("parameters", f.get("parameters_json_schema")))
                            for f in declarations if isinstance(f, Mapping)) if d]
    type_ = spec.get("type")
    if "input_schema" in spec or (spec.get("name") and type_ in (None, "custom")):  # Anthropic
        found = _definition(spec.get("name"), spec.get("description"), spec.get("input_schema", spec.get("parameters")))
        return [found] if found else []
    if spec.get("name"):  # OpenAI Responses function, or a provider's named server tool
        found = _definition(spec.get("name"), spec.get("description"), spec.get("parameters"), type_ or "function")
        return [found] if found else []
    found = _definition(type_, None, None, type_)  # a built-in tool known by its type only
    return [found] if found else []


def tool_definitions(specs: Iterable[Any]) -> list[ToolDefinition]:
    """The tool definitions of provider-shaped specs; anything not a mapping is skipped."""
    out: list[ToolDefinition] = []
    for spec in specs or ():
        if isinstance(spec, Mapping):
            out.extend(tool_definition(spec))
    return out
