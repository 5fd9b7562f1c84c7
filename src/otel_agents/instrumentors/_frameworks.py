"""What we instrument: each framework's distribution, supported versions and instrumentor.

This is the one list ``otel_agents.instrument()``, the entry points in
``pyproject.toml`` and ``otel-agents doctor`` agree on (the role a contrib
instrumentor's ``package.py`` plays).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Framework:
    """One supported framework.

    Attributes:
        name: our name for it (also its entry-point name).
        distribution: the PyPI distribution whose version decides support.
        supported: a PEP 440 specifier of the versions we test.
        module, cls: where the ``BaseInstrumentor`` subclass lives (imported lazily).
        import_name: the framework's module whose import triggers instrumentation
            when ``instrument()`` ran before the application imported it.
        venv: the name of the venv of its own (``.venv-<venv>``, Makefile ``ISOLATED``) in which
            ``make test`` tests it, when its dependencies cannot be installed beside the other
            frameworks' (the ``all`` extra then leaves it out); ``None`` when it shares ``.venv``.
    """

    name: str
    distribution: str
    supported: str
    module: str
    cls: str
    import_name: str
    venv: str | None = None

    @property
    def requirement(self) -> str:
        """``"distribution specifier"``, as ``instrumentation_dependencies`` returns it."""
        return f"{self.distribution} {self.supported}"


FRAMEWORKS: dict[str, Framework] = {
    f.name: f
    for f in (
        Framework("langchain", "langchain-core", ">=1.8.3,<2", "otel_agents.instrumentors.langchain", "LangChainInstrumentor", "langchain_core"),
        Framework("llama_index", "llama-index-core", ">=0.14.25,<0.15", "otel_agents.instrumentors.llama_index", "LlamaIndexInstrumentor", "llama_index.core"),
        Framework("crewai", "crewai", ">=1.15.30,<2", "otel_agents.instrumentors.crewai", "CrewAIInstrumentor", "crewai"),
        Framework("pydantic_ai", "pydantic-ai-slim", ">=2.68.0,<3", "otel_agents.instrumentors.pydantic_ai", "PydanticAIInstrumentor", "pydantic_ai"),
        Framework("smolagents", "smolagents", ">=1.26.0,<2", "otel_agents.instrumentors.smolagents", "SmolagentsInstrumentor", "smolagents"),
        Framework("openai_agents", "openai-agents", ">=0.20.0,<0.26", "otel_agents.instrumentors.openai_agents", "OpenAIAgentsInstrumentor", "agents"),
        Framework("anthropic", "anthropic", ">=2.14.0,<3", "otel_agents.instrumentors.anthropic", "AnthropicInstrumentor", "anthropic"),
        Framework("openai", "openai", ">=2.30.0,<4", "otel_agents.instrumentors.openai", "OpenAIInstrumentor", "openai"),
        Framework("mcp", "mcp", ">=1.30.0,<3", "otel_agents.instrumentors.mcp", "MCPInstrumentor", "mcp"),
        Framework("a2a", "a2a-sdk", ">=1.1.5,<2", "otel_agents.instrumentors.a2a", "A2AInstrumentor", "a2a"),
        Framework("agno", "agno", ">=3.1.10,<4", "otel_agents.instrumentors.agno", "AgnoInstrumentor", "agno"),
        Framework("google_adk", "google-adk", ">=2.13.0,<3", "otel_agents.instrumentors.google_adk", "GoogleADKInstrumentor", "google.adk",
                  venv="google_adk"),
        Framework("claude_agent_sdk", "claude-agent-sdk", ">=0.2.140,<0.3", "otel_agents.instrumentors.claude_agent_sdk",
                  "ClaudeAgentSDKInstrumentor", "claude_agent_sdk"),
        Framework("autogen_agentchat", "autogen-agentchat", ">=0.7.5,<0.8", "otel_agents.instrumentors.autogen_agentchat",
                  "AutoGenAgentChatInstrumentor", "autogen_agentchat"),
    )
}
