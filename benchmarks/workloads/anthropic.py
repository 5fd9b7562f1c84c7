"""anthropic client: the customer-support loop on the real ``anthropic`` client over a mock Messages API.

``examples/customer_support/anthropic_agent.py``'s ``run``: a hand-written tool loop calling
``client.messages.create`` over an ``httpx2.MockTransport`` (three requests, two tool calls); see
:func:`._support.provider_client`.
"""

from __future__ import annotations

from ._support import provider_client

NAME = "anthropic"
FRAMEWORK_DISTS = ("anthropic",)
PEERS, CLASSES, workload, install = provider_client("anthropic", "anthropic_agent", "AnthropicInstrumentor")
