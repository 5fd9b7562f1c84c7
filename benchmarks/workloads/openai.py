"""openai client: the customer-support loop on the real ``openai`` client over a mock Chat Completions API.

``examples/customer_support/openai_agent.py``'s ``run``: a hand-written tool loop calling
``client.chat.completions.create`` over an ``httpx.MockTransport`` (three requests, two tool calls); see
:func:`._support.provider_client`.
"""

from __future__ import annotations

from ._support import provider_client

NAME = "openai"
FRAMEWORK_DISTS = ("openai",)
PEERS, CLASSES, workload, install = provider_client("openai", "openai_agent", "OpenAIInstrumentor")
