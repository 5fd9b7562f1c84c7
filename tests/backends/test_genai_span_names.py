"""Every framework's agent and workflow spans name their target by the attribute OTel GenAI v1.41 gives it.

Source: open-telemetry/semantic-conventions v1.41.1, ``model/gen-ai/spans.yaml`` (the last released text of the
GenAI conventions; their own repository, open-telemetry/semantic-conventions-genai, has published no release):
``span.gen_ai.invoke_agent.internal`` is ``invoke_agent {gen_ai.agent.name}``, ``span.gen_ai.invoke_workflow.internal``
is ``invoke_workflow {gen_ai.workflow.name}`` and defines no ``gen_ai.agent.*`` attribute (a team or a crew is not
an agent). Each framework's example run (tests/backends/runs.py) is checked, so an instrumentor that drifts from
this (a team named by ``gen_ai.agent.name``, say) fails here.
"""

from __future__ import annotations

import pytest

from tests.backends import runs
from tests.frameworks import rows_here

TARGET = {"invoke_agent": "gen_ai.agent.name", "invoke_workflow": "gen_ai.workflow.name"}


@pytest.mark.parametrize("framework", rows_here(list(runs.RUNS)))
def test_agents_and_workflows_are_named_by_their_attribute(run_configured, framework: str) -> None:
    spans = run_configured(framework, [])
    checked = 0
    for span in spans:
        op = span.attributes.get("gen_ai.operation.name")
        if op not in TARGET:
            continue
        checked += 1
        prefix = f"{op} "
        assert span.name.startswith(prefix), span.name
        assert span.attributes.get(TARGET[op]) == span.name[len(prefix):], (span.name, dict(span.attributes))
        if op == "invoke_workflow":
            assert not any(k.startswith("gen_ai.agent.") for k in span.attributes), (span.name, dict(span.attributes))
    if not checked:
        pytest.skip(f"{framework}'s example has no agent or workflow span")
