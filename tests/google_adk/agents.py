"""Small ADK agents for the tests, over :class:`~.fakes.ScriptedLlm`."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent


def lookup_order(order_id: str) -> dict:
    """Look up an order by its id."""
    return {"order_id": order_id, "status": "shipped"}


def refund(order_id: str) -> dict:
    """Refund an order."""
    raise ValueError(f"refunds for {order_id} are closed")


def support_agent(model: Any, name: str = "support", **kwargs: Any) -> LlmAgent:
    return LlmAgent(name=name, model=model, instruction="You help customers with their orders.",
                    description="Customer support", tools=kwargs.pop("tools", [lookup_order]), **kwargs)
