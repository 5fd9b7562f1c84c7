"""The customer-support agent of ``examples/customer_support`` as a benchmark workload.

Each framework's module there builds the same agent (three tools, a scripted "brain" as the
fake model: see ``examples/customer_support/common.py``); one run answers :data:`QUESTION`,
a refund question: ``lookup_order``, then ``check_refund_policy``, then the answer — three
model calls and two tool calls in every framework. The same run is the overhead study's unit
(``benchmarks/README.md``).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from typing import Any, Callable

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "customer_support")
QUESTION = "Can I get a refund for my order B200?"
MODEL_CALLS, TOOL_CALLS = 3, 2  # per run of QUESTION, the same in every framework (the brain decides)


def example(name: str) -> Any:
    """``examples/customer_support/NAME.py`` as a module (its directory put on ``sys.path``, as the
    examples expect). Raises ``ImportError`` when its framework is not installed."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    return importlib.import_module(name)


def runner(call: Callable[[], Any]) -> Callable[[], None]:
    """One run: ``call()``, awaited in a fresh event loop when it returns a coroutine (as
    ``ecp serve`` runs an async agent per request)."""

    def run() -> None:
        result = call()
        if inspect.isawaitable(result):
            asyncio.run(result)

    return run
