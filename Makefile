# `make demo` and `make test` are the only set-up a fresh machine needs (Python >= 3.10 and make).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench clean lock support-matrix

# Frameworks (or newer releases of one) whose dependencies cannot be installed beside `.[all,dev]` get a venv
# of their own, .venv-NAME, built from constraints/NAME.txt with the extras NAME_EXTRAS. `make test` runs
# NAME_TESTS there after the main suite, and `make demo` the demo rows NAME_DEMO (never a silent skip).
# Each one adds four lines:  ISOLATED += NAME  NAME_EXTRAS := fw-extra,ecp,test  NAME_TESTS := tests/...
# NAME_DEMO := framework-name (or nothing)
ISOLATED :=
# Google ADK 2.13 caps opentelemetry at <=1.44 and websockets at <16 (see the google-adk extra in pyproject.toml).
ISOLATED += google_adk
google_adk_EXTRAS := google-adk,a2a,ecp,demo,otlp,test
google_adk_TESTS := tests/google_adk tests/matrix tests/test_cli_text.py tests/backends/test_phoenix.py -k google_adk
google_adk_DEMO := google_adk

# `newest`: every framework but CrewAI (which pins openai<3, mcp<2) at its newest release, the upper ends of the
# ranges we claim: openai 3, mcp 2, openai-agents 0.24, a2a-sdk 1.3 (.venv tests the lower ends). Deselected, each for a
# package that cannot be installed with them: llama-index-llms-openai (openai<3), llama-index-tools-mcp (mcp<2),
# crewai, langchain-mcp-adapters (0.3.2 pins mcp<2; 0.3.1 imports mcp.server.fastmcp, gone in mcp 2); and the
# client's propagation-off test, which does not hold on mcp 2 (the SDK injects the context itself: documented),
# and one test written on 1.x's in-memory session helper (mcp.shared.memory), which 2.x removed.
ISOLATED += newest
newest_EXTRAS := langchain,llama-index,pydantic-ai,smolagents,openai-agents,anthropic,openai,mcp,a2a,agno,otlp,ecp,zero-code,test,test-newest
newest_TESTS := tests/clients tests/mcp tests/a2a tests/openai_agents \
	--deselect tests/clients/test_frameworks.py::test_llama_index_openai \
	--deselect tests/clients/test_frameworks.py::test_crewai_native_openai \
	--deselect tests/mcp/test_frameworks.py::test_mcp1_b_langchain_mcp_adapters \
	--deselect tests/mcp/test_frameworks.py::test_mcp2_langchain_mcp_adapters_is_error_fails_the_tool_span \
	--deselect tests/mcp/test_frameworks.py::test_mcp1_b_llama_index_mcp_tool_spec \
	--deselect "tests/clients/test_frameworks.py::test_llama_index_stream_chat_left_early[llama_index]" \
	--deselect tests/mcp/test_mcp.py::test_propagation_off_on_the_client_sends_no_context \
	--deselect tests/mcp/test_mcp.py::test_a_tool_whose_name_only_ends_like_the_mcp_tool_is_not_enriched
newest_DEMO := openai_agents,openai,mcp

# AutoGen AgentChat: autogen-core 0.7 pins protobuf~=5.29; .venv has protobuf 7 (googleapis-common-protos>=1.76).
ISOLATED += autogen_agentchat
autogen_agentchat_EXTRAS := autogen-agentchat,ecp,test,test-autogen,otlp,demo
autogen_agentchat_TESTS := tests/autogen_agentchat tests/matrix tests/customer_support tests/backends/test_phoenix.py -k "not over_http and not server_script" -p no:cacheprovider
autogen_agentchat_DEMO := autogen_agentchat

# constraints.txt pins the whole resolution (pip would otherwise backtrack for a long time through the
# frameworks' overlapping pins); `make lock` rewrites it from a fresh resolution after pyproject.toml changes.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[all,dev]'
	touch $(STAMP)

ISOLATED_STAMPS = $(foreach n,$(ISOLATED),.venv-$(n)/.installed-stamp)

.venv-%/.installed-stamp: pyproject.toml constraints/%.txt
	test -x .venv-$*/bin/python || $(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q --upgrade pip
	.venv-$*/bin/python -m pip install -q -c constraints/$*.txt -e '.[$($*_EXTRAS)]'
	touch $@

demo: $(STAMP) $(ISOLATED_STAMPS)
	$(VENV)/bin/otel-agents demo
	$(foreach n,$(ISOLATED),$(if $($(n)_DEMO),.venv-$(n)/bin/otel-agents demo --frameworks $($(n)_DEMO) --out out/$(n) &&)) true

# Every suite runs even when an earlier one fails; the exit status says whether all passed.
test: $(STAMP) $(ISOLATED_STAMPS)
	status=0; $(PY) -m pytest || status=1; \
	$(foreach n,$(ISOLATED),echo "== .venv-$(n): pytest $($(n)_TESTS)"; .venv-$(n)/bin/python -m pytest $($(n)_TESTS) || status=1;) \
	exit $$status

# docs/support-matrix.md is written from the matrix's table (tests/matrix/table.py); a test fails when it is stale.
support-matrix: $(STAMP)
	$(PY) -m tests.matrix.table docs/support-matrix.md

# Benchmarks run in their own venv: our package and its frameworks at the versions .venv has (pinned by a
# freeze of .venv), plus the peer instrumentors of benchmarks/requirements.txt, which must never reach .venv.
BENCH_VENV  := .bench-venv
BENCH_PY    := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_STAMP): $(STAMP) benchmarks/requirements.txt
	test -x $(BENCH_PY) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install -q --upgrade pip
	$(PY) -m pip freeze --exclude-editable > $(BENCH_VENV)/constraints.txt
	$(BENCH_PY) -m pip install -q -c $(BENCH_VENV)/constraints.txt -e '.[langchain,llama-index,crewai,pydantic-ai,ecp]' -r benchmarks/requirements.txt
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH_PY) benchmarks/run.py

lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv && .lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q -e '.[all,dev]'
	(sed -n '1,3p' constraints.txt; .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^otel-agents') > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .lock-venv
	$(foreach n,$(ISOLATED),$(MAKE) lock-$(n) &&) true

lock-%:
	rm -rf .lock-venv-$* && $(PYTHON) -m venv .lock-venv-$* && .lock-venv-$*/bin/python -m pip install -q --upgrade pip
	.lock-venv-$*/bin/python -m pip install -q -e '.[$($*_EXTRAS)]'
	mkdir -p constraints && (echo "# .venv-$* (Makefile ISOLATED): a known-good resolution of .[$($*_EXTRAS)]; make lock-$* rewrites it."; \
	  .lock-venv-$*/bin/python -m pip freeze --exclude-editable | grep -v '^otel-agents') > constraints/$*.txt
	rm -rf .lock-venv-$*

clean:
	rm -rf $(VENV) .venv-* .bench-venv out .pytest_cache
