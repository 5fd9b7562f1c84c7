# `make demo` and `make test` are the only set-up a fresh machine needs (Python >= 3.10 and make).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
EXTRAS := all,dev

.PHONY: demo test bench clean lock uv support-matrix

# Installs go through uv (https://docs.astral.sh/uv/), pinned and bootstrapped from PyPI into a small tool venv,
# .uv: it builds a venv in seconds where pip takes minutes. A machine where that bootstrap fails (no PyPI wheel
# for the platform, say) falls back to `python3 -m venv` + pip with the same constraints files.
# uv compiles bytecode at install (--compile-bytecode; pip does by default): without it, in a
# PYTHONDONTWRITEBYTECODE environment each of the ~80 `ecp serve` processes the demo starts compiles its
# framework's sources again (langchain+crewai+llama-index import: 11 s of CPU without bytecode, 5 s with), and
# writing it lazily at first import let three cold CrewAI servers, compiling at once on a loaded machine, miss
# ECP's 120 s initialize timeout. Our own sources (an editable install) get theirs at first import.
unexport PYTHONDONTWRITEBYTECODE
UV_VERSION := 0.13.9
UV         := .uv/bin/uv
UV_STAMP   := .uv/.installed-stamp

$(UV_STAMP):
	rm -rf .uv; ($(PYTHON) -m venv .uv && .uv/bin/python -m pip install -q uv==$(UV_VERSION) && $(UV) --version) \
	  || (rm -rf .uv; mkdir -p .uv; echo "uv could not be installed: installing with pip instead")
	touch $@

uv: $(UV_STAMP)

# $(call install,VENV,CONSTRAINTS,PIP-ARGS[,NO-COMPILE]): (re)build VENV and install PIP-ARGS in it, pinned by
# CONSTRAINTS; NO-COMPILE non-empty: modules are compiled when first imported, not all at install time.
define install
	if [ -x $(UV) ]; then \
	  $(UV) venv -q --allow-existing --python $(PYTHON) $(1) && \
	  VIRTUAL_ENV=$(1) $(UV) pip install -q $(if $(4),,--compile-bytecode) -c $(2) $(3); \
	else \
	  { test -x $(1)/bin/python || $(PYTHON) -m venv $(1); } && $(1)/bin/python -m pip install -q --upgrade pip && \
	  $(1)/bin/python -m pip install -q $(if $(4),--no-compile) -c $(2) $(3); \
	fi
endef

# `pip freeze` of VENV (uv's venvs have no pip)
freeze = if [ -x $(UV) ]; then VIRTUAL_ENV=$(1) $(UV) pip freeze --exclude-editable; else $(1)/bin/python -m pip freeze --exclude-editable; fi

# Frameworks (or newer releases of one) whose dependencies cannot be installed beside `.[all,dev]` get a venv
# of their own, .venv-NAME, built from constraints/NAME.txt with the extras NAME_EXTRAS. `make test` runs
# NAME_TESTS there beside the main suite, and `make demo` grades the demo rows NAME_DEMO there, folded into
# the one table (`otel-agents demo --venv .venv-NAME=ROWS`; never a silent skip).
# Each one adds four lines:  ISOLATED += NAME  NAME_EXTRAS := fw-extra,ecp,test  NAME_TESTS := tests/...
# NAME_DEMO := framework-name (or nothing)
ISOLATED :=
# Google ADK: every 2.x caps opentelemetry-api/-sdk at <=1.44 (2.13 also websockets <16), while crewai >=1.15.30
# (the floor of our crewai extra) requires opentelemetry-sdk >=1.45.1: no resolution holds both (measured with
# `uv pip compile`, .venv pinned at OpenTelemetry 1.44 / instrumentations 0.65b0: crewai and langfuse 5 refuse it).
ISOLATED += google_adk
google_adk_EXTRAS := google-adk,a2a,ecp,demo,otlp,test
google_adk_TESTS := tests/google_adk tests/matrix tests/test_cli_text.py tests/backends/test_phoenix.py tests/backends/test_gen_ai_agent_input.py -k google_adk
google_adk_DEMO := google_adk

# `newest`: every framework but CrewAI (which pins openai<3, mcp<2) at its newest release, the upper ends of the ranges
# we claim (resolved 2026-12-05, openai-agents and claude-agent-sdk 2026-12-07): openai 3.63, mcp 2.3, openai-agents
# 0.25, a2a-sdk 1.3, anthropic 2.17, pydantic-ai 2.78, langchain-core 1.8.3 (1.8.4 requires langchain-protocol
# >=0.0.22, not on the index) / langgraph 1.2.24, llama-index-core 0.14.25, smolagents 1.26, agno 3.1.10,
# claude-agent-sdk 0.2.190, OpenTelemetry 1.45.2 / 0.66b2 (.venv tests the lower ends). Not here, at their newest in
# .venv already: CrewAI 1.15.44, AutoGen 0.7.5; Google ADK 2.13.0 in .venv-google_adk. Deselected, each for a package
# that cannot be installed with them: llama-index-llms-openai (openai<3), crewai, langchain-mcp-adapters (0.3.2 pins
# mcp<2; 0.3.1 imports mcp.server.fastmcp, gone in mcp 2). Deselected too, for proving only our own logic (OpenTelemetry
# here is .venv's), each run by the main suite (this suite's CPU 219 -> 193 s, measured on a loaded machine 2026-12-07):
# the A2A and MCP servers started for our propagation switch and redaction (the same a2a-sdk 1.3 and mcp 2.3 code paths
# run with them on; content off stays: what it must leave out is what these versions send), and of collect with an A2A
# agent the fold of concurrent and killed runs (a2a-sdk 1.3's concurrent runs: tests/a2a/test_contract.py X-14; its
# transport failing under our span: test_a_card_with_a_bad_port_keeps_the_clients_span_and_the_callers_error; its calls'
# HTTP requests told from effects: the collect test that stays).
ISOLATED += newest
newest_EXTRAS := langchain,llama-index,pydantic-ai,smolagents,openai-agents,anthropic,openai,mcp,a2a,agno,claude-agent-sdk,otlp,ecp,zero-code,test,test-newest
newest_TESTS := tests/clients tests/mcp tests/a2a tests/openai_agents tests/claude_agent_sdk \
	--deselect tests/clients/test_frameworks.py::test_llama_index_openai \
	--deselect tests/clients/test_frameworks.py::test_crewai_native_openai \
	--deselect "tests/clients/test_frameworks.py::test_crewai_unknown_content_block_keeps_its_fields[crewai]" \
	--deselect "tests/clients/test_frameworks.py::test_framework_and_client_write_one_finish_reason[False-crewai-crewai]" \
	--deselect "tests/clients/test_frameworks.py::test_framework_and_client_write_one_finish_reason[True-crewai-crewai]" \
	--deselect tests/mcp/test_frameworks.py::test_mcp1_b_langchain_mcp_adapters \
	--deselect tests/mcp/test_frameworks.py::test_mcp2_langchain_mcp_adapters_is_error_fails_the_tool_span \
	--deselect "tests/clients/test_frameworks.py::test_llama_index_stream_chat_left_early[llama_index]" \
	--deselect "tests/clients/test_frameworks.py::test_stream_cut_under_a_framework_model_span[llama_index-llama_index]" \
	--deselect "tests/clients/test_frameworks.py::test_stream_cut_under_a_framework_model_span[crewai-crewai]" \
	--deselect "tests/clients/test_frameworks.py::test_stream_cut_under_a_framework_model_span_keeps_the_finish_reasons_sent[llama_index-second_choice]" \
	--deselect "tests/clients/test_frameworks.py::test_stream_cut_under_a_framework_model_span_keeps_the_finish_reasons_sent[crewai-second_choice]" \
	--deselect "tests/clients/test_frameworks.py::test_stream_cut_under_a_framework_model_span_keeps_the_finish_reasons_sent[crewai-usage_chunk]" \
	--deselect tests/a2a/test_a2a.py::test_propagation_off_on_the_server \
	--deselect tests/a2a/test_collect_a2a.py::test_concurrent_runs_each_fold_into_one_envelope \
	--deselect tests/a2a/test_collect_a2a.py::test_a_server_killed_mid_call_leaves_the_run_marked_incomplete \
	--deselect tests/mcp/test_mcp.py::test_redaction_of_arguments_on_both_sides \
	--deselect tests/mcp/test_mcp.py::test_propagation_off_on_the_server_takes_no_context
# A test of version ranges, not a row of the demo (no newest_DEMO): `make demo` never builds it.
# Its modules are compiled when first imported (see NO_COMPILE below).
newest_NO_COMPILE := yes

# `floor`: the lower ends of the ranges we claim, where .venv holds a newer release (its resolution pulls them up:
# crewai needs OpenTelemetry >=1.45.1, openai-agents openai >=2.45, ...): claude-agent-sdk 0.2.140, openai 2.30,
# OpenTelemetry 1.44 / 0.65b0 and its OTLP exporters, orjson 3.11.7, msgspec 0.14, grpcio 1.64, protobuf 6,
# googleapis-common-protos 1.70, uvicorn 0.34, pytest-timeout 2.3.1. constraints/floor.txt is uv's lowest-direct
# resolution of floor_EXTRAS (floor_LOCK: every requirement of ours at its lower end, what they pull in at its newest;
# `make lock-floor`, uv only). langchain is here for the A2A tests' remote agent (at its floor, as in .venv). Every
# other floor is .venv's (or .venv-google_adk's, .venv-newest's) pin: tests/test_floors.py checks that each lower end in
# pyproject.toml is pinned in one constraints file. Its tests: the suites of the packages above (the clients', the
# Claude Agent SDK's, A2A's, ecp collect's, the HTTP transport of ecp serve, the exporters' and the span layer's),
# without the files that need a framework or package not installed here (the clients' framework wrappers, FastA2A, the
# MCP example agent's PydanticAI and fastmcp in the two --collect tests that serve it, the examples' agent names, which
# need every example's framework). Nor the tests that prove only our own logic with a package at the version .venv has
# too (a2a-sdk 1.1.5 and anthropic 2.14: floor's are .venv's), each run by the main suite (with those below, this
# suite's CPU went from 223 to 140 s, measured on a loaded machine 2026-12-07): the cross-cutting cases of A2A (in one
# process) and of a loop on the Anthropic client, A2A's own request handlers; the A2A remote agents started for our
# content and propagation switches, a chain of three agents and a card naming a bad port (the remote agent here stays
# for each binding: JSON-RPC, HTTP+JSON and gRPC on uvicorn 0.34 and grpcio 1.64, and under the ASGI instrumentation
# 0.65b0); of collect with an A2A agent, the test whose caller runs the httpx instrumentation (0.65b0) stays, the fold
# of concurrent and killed runs goes; collect's trace-id router and `ecp fold` of span files (emit.py's file exporter is
# ours); collect's command-line refusals, name look-ups and unwritable output (ours: the receiver on uvicorn 0.34,
# protobuf 6 and grpcio 1.64, the SDK exporters' 1.44 retries all stay); ecp serve's handling of targets and of stdio
# input (one stdio session and its conformance stay, for the envelopes folded on OpenTelemetry 1.44; every HTTP test
# stays); `otel-agents export`'s refusals of its arguments and inputs (what the OTLP exporter 1.44 sends, retries and is
# answered stays); the bounded reader of span files (tests/exporters/test_line_bounds.py: ours and the standard
# library's; orjson 3.11.7 and msgspec 0.14 are tests/test_json_fast_paths.py's).
ISOLATED += floor
floor_EXTRAS := langchain,openai,anthropic,mcp,a2a,claude-agent-sdk,otlp,otlp-grpc,ecp,collect-grpc,demo,test
floor_LOCK := --resolution lowest-direct --no-binary claude-agent-sdk
floor_NO_COMPILE := yes
floor_TESTS := tests/claude_agent_sdk tests/clients tests/a2a tests/collect \
	tests/serve/test_server.py tests/serve/test_hostile.py tests/exporters/test_file.py tests/exporters/test_ecp_fold.py \
	tests/exporters/test_ecp_processor.py tests/exporters/test_ecp_file_exporter.py tests/exporters/test_cli_fold.py \
	tests/exporters/test_cli_export.py tests/test_json_fast_paths.py \
	tests/test_spans.py tests/test_span_start.py tests/test_span_sdk_write.py tests/test_span_activation.py \
	tests/test_span_caches.py tests/test_semconv.py tests/test_secret_redaction.py tests/test_probes.py \
	tests/test_status_ok.py tests/test_messages.py tests/test_token_counts.py \
	--ignore tests/clients/test_frameworks.py --ignore tests/a2a/test_fasta2a.py \
	--ignore tests/a2a/test_contract.py --ignore tests/a2a/test_own_handler.py \
	--deselect tests/clients/test_contract.py::TestAnthropicLoopContract \
	--deselect tests/a2a/test_a2a.py::test_content_off_on_both_sides \
	--deselect tests/a2a/test_a2a.py::test_propagation_off_on_the_server \
	--deselect tests/a2a/test_a2a.py::test_a_chain_of_three_agent_services_is_one_trace_and_one_run \
	--deselect tests/a2a/test_a2a.py::test_a_bad_port_in_the_servers_card_or_a_push_url_keeps_their_spans \
	--deselect tests/a2a/test_collect_a2a.py::test_concurrent_runs_each_fold_into_one_envelope \
	--deselect tests/a2a/test_collect_a2a.py::test_a_server_killed_mid_call_leaves_the_run_marked_incomplete \
	--ignore tests/collect/test_sharding.py --ignore tests/collect/test_fold_files.py \
	--deselect tests/collect/test_collect.py::test_any_origin_without_a_token_is_refused_at_start \
	--deselect tests/collect/test_collect.py::test_an_output_that_cannot_be_written_loses_envelopes_said_not_the_receiver \
	--deselect tests/collect/test_collect.py::test_a_forward_target_whose_name_is_never_looked_up_is_said_once_and_loses_nothing \
	--deselect "tests/collect/test_collect.py::test_a_port_beyond_65535_is_refused_not_wrapped[--port]" \
	--deselect "tests/collect/test_collect.py::test_a_port_beyond_65535_is_refused_not_wrapped[--grpc-port]" \
	--deselect tests/collect/test_collect.py::test_a_forward_url_that_is_no_url_is_refused_at_start \
	--deselect tests/serve/test_server.py::test_stdio_bad_input_keeps_serving \
	--deselect tests/serve/test_server.py::test_stateful_target_is_multi_turn_and_resets \
	--deselect tests/serve/test_server.py::test_async_target \
	--deselect tests/serve/test_server.py::test_bad_target_is_a_clear_error \
	--deselect tests/serve/test_server.py::test_a_target_that_fails_to_import_is_named_with_its_line \
	--deselect tests/serve/test_server.py::test_public_output_is_the_whole_answer \
	--deselect tests/serve/test_server.py::test_agent_error_follows_the_content_switch \
	--deselect tests/serve/test_server.py::test_writes_to_the_stdout_descriptor_and_lone_surrogates_do_not_break_the_protocol \
	--deselect tests/serve/test_server.py::test_sys_exit_in_the_agent_is_a_step_error_and_the_server_keeps_serving \
	--deselect tests/serve/test_server.py::test_generator_target_is_consumed \
	--deselect tests/serve/test_hostile.py::test_stdio_survives_every_hostile_line \
	--deselect tests/serve/test_hostile.py::test_stdio_ignores_a_byte_order_mark_at_the_start_of_its_input_only \
	--deselect tests/exporters/test_cli_export.py::test_bad_arguments \
	--deselect tests/exporters/test_cli_export.py::test_an_input_without_a_span_is_said_not_a_success \
	--deselect tests/exporters/test_cli_export.py::test_a_malformed_line_is_named_and_the_rest_is_sent \
	--deselect tests/collect/test_serve_collect.py::test_the_mcp_servers_side_effect_is_in_the_step_envelope \
	--deselect tests/collect/test_serve_collect.py::test_with_mcp_propagation_off_a_step_waits_for_no_server_span \
	--deselect tests/serve/test_server.py::test_every_example_agent_and_twin_is_served_under_its_agents_own_name

# `litellm`: the frameworks' LiteLLM-backed models (CrewAI's LLM with is_litellm, smolagents' LiteLLMModel, the Agents
# SDK's LitellmModel, Agno's LiteLLM: extra test-litellm), .venv's pins plus litellm 1.105.3 (crewai 1.15.44's litellm
# extra pins it exactly: litellm 1.110.2, which smolagents', the Agents SDK's and Agno's allow, cannot be installed beside
# it) and fastuuid 0.14.0, with importlib-metadata 8.9.0 (litellm requires <9; .venv has 10.2), huggingface-hub 1.33.0
# and filelock 3.32.7 (litellm 1.105 requires <2 and <4; .venv has 2.4 and 4.3), boto3 1.44 (a requirement of litellm).
# Not in .venv: ecp-runtime's graders.py imports litellm at module level whenever it is installed, so every
# `ecp run` process (about 45 in make test, 45 in make demo) would pay about 3.5 s more CPU: +120-150 s of CPU
# for make test, measured, which is at its 15-minute limit. A test of a few files, not a row of the demo.
ISOLATED += litellm
litellm_EXTRAS := crewai,smolagents,openai-agents,agno,ecp,test,test-litellm
litellm_TESTS := tests/litellm tests/crewai/test_litellm_stream.py
litellm_NO_COMPILE := yes

# `peers`: our instrumentors next to the other instrumentations of the same frameworks (OpenInference, OpenLLMetry,
# the OTel GenAI instrumentations: extra test-peers), both orders, each uninstrumented with the other on, and the
# fold of their mixed trace, Agno's own tracing (OpenInference's) beside ours (tests/peers). Not in .venv: their
# opentelemetry_instrumentor entry points would be loaded by the zero-code tests' `opentelemetry-instrument`
# (OpenInference's Agno one imports Agno's models and the Anthropic SDK: ~6 s of CPU a process, when it was in
# .venv: 8 s a start against 1.5). A fresh resolution (`make lock-peers`); CrewAI stays at 1.15.30 there, the lower end
# of our range (.venv and .venv-litellm hold 1.15.44).
ISOLATED += peers
peers_EXTRAS := langchain,llama-index,crewai,pydantic-ai,smolagents,openai-agents,anthropic,openai,mcp,agno,autogen-agentchat,otlp,ecp,test,test-peers
peers_TESTS := tests/peers
# Its suite imports a fraction of what it installs: compiling every module at install time cost ~40 s of ~75.
# The same holds of every venv only a suite of tests uses (newest, floor, litellm; not google_adk, whose demo row
# starts cold servers at once, nor .venv): `make test` writes each module's bytecode at its first import instead
# (PYTHONDONTWRITEBYTECODE is unexported). Measured 2026-12-07 from the uv cache, CPU seconds install + suite:
# litellm 53 + 25 -> 6 + 43 (its suite compiles what it imports); install alone newest 53 -> 5, floor 23 -> 4,
# whose suites then compile ~62% and ~73% of the modules (counted in a CI's venvs): ~55 s of CPU saved in all.
peers_NO_COMPILE := yes

# AutoGen AgentChat shares .venv: autogen-core 0.7 pins protobuf~=5.29, so constraints.txt holds protobuf 5.29.6
# and googleapis-common-protos 1.75.0 (the newest that allows it), a resolution of everything in `all`.

DEMO_ISOLATED = $(foreach n,$(ISOLATED),$(if $($(n)_DEMO),$(n)))

# constraints.txt pins the whole resolution (pip would otherwise backtrack for a long time through the
# frameworks' overlapping pins); `make lock` rewrites it from a fresh resolution after pyproject.toml changes.
$(STAMP): pyproject.toml constraints.txt $(UV_STAMP)
	$(call install,$(VENV),constraints.txt,-e '.[$(EXTRAS)]')
	touch $(STAMP)

.venv-%/.installed-stamp: pyproject.toml constraints/%.txt $(UV_STAMP)
	$(call install,.venv-$*,constraints/$*.txt,-e '.[$($*_EXTRAS)]',$($*_NO_COMPILE))
	touch $@

# One table: .venv's rows and, graded at the same time in their own venvs, the rows of DEMO_ISOLATED.
demo: $(STAMP) $(foreach n,$(DEMO_ISOLATED),.venv-$(n)/.installed-stamp)
	$(VENV)/bin/otel-agents demo $(foreach n,$(DEMO_ISOLATED),--venv .venv-$(n)=$($(n)_DEMO))

# The main suite on every core (pytest-xdist; a test file stays on one worker, see tests/conftest.py) and,
# beside it, each isolated venv's suite, its output kept in out/test-NAME.log and printed after the main
# suite's. Every suite runs even when another fails; the exit status says whether all passed.
# Alone, the main suite mostly waits (on the processes and servers it starts): on a quiet 2-core machine it took
# about 12 minutes in 2 workers, 9 in 4. Beside the isolated suites the cores are busy all the same: 4 workers
# gave 13:28 against 13:20 in 2 (their collection is CPU too) and slowed the isolated suites (2026-12-06).
# What shortens `make test` is less CPU, not more workers (scripts/cpu_per_test.py ranks the test files by
# it, child processes included). CPU of each suite (user+sys of pytest and what it waited for,
# measured 2026-12-07 on the shared machine, /usr/bin/time): .venv ~1,045 s (~25 s of it each worker's
# collection; ~1,085 measured, less what was measured of the cuts since: the demo's `ecp run`s forks of one
# process that imported ecp-runtime, ~0.25 s each of ~55 (the whole demo's 42: 110 -> 98 s),
# tests/test_cache_attacks.py's 3,968 pair tests one test a group, ~10 s, and the `ecp run`s and replay servers of
# the demo's regrade and tests/replay's `ecp run`s forks of fork servers, ~17 s: 27.9 -> 8.2 s and 36.0 -> 31.7 s on
# a loaded machine), floor ~95 (~150 before the tests of our own logic left floor_TESTS: 223 -> 140 s on the
# loaded machine), newest ~125 (~140; 219 -> 193), peers ~65, ADK ~40, litellm ~15; the two cores give ~1,480 s
# in the main suite's 12 minutes. The floor suite, 7 minutes long, mostly waits. tests/conftest.py hands the files
# of most CPU out first (pytest_xdist_make_scheduler): one handed out last kept a worker busy alone at the end.
# Measured again 2026-12-07 evening (/usr/bin/time, -n 2, Phoenix and MLflow not provisioned, so their tests
# skipped): .venv 1,268 s (user 1,121 + sys 147); its two workers ended within ~40 s of each other.
# 2026-12-08 (shared machine, load 3-8 from other sessions; -n 2, Phoenix and MLflow not provisioned): .venv
# 1,091 s (user 958 + sys 133), 17:13 wall. Of the drop, measured file by file (before -> after, one run each):
# tests/replay's `ecp serve`s and `ecp run`s made forks of its module's fork servers (their clients had exec'd
# afresh: the servers started under another PYTEST_CURRENT_TEST), 32.5 -> 12.5 s; `ecp collect` imports
# genai-prices with the first model span it receives, not at start (~0.25 s a process, ~50 in the suite),
# tests/collect/test_collect.py 46.8 -> 42.2 s. The rest of the 177 s is the machine's noise and other
# commits, not measured cuts.
# The isolated venvs are installed while the main suite runs, one after another (each build of the editable
# package rewrites src/otel_agents.egg-info), each suite started as soon as its venv is: the main suite, the
# longest, started after the five installs, ~90 s on the CI machine (2026-12-07: .venv 47 s, then 11+34+13+28+4).
# A failed install is that suite's failure, its output in out/test-NAME.log. (The recipe calls $(MAKE), so
# `make -n test` runs it: the installs dry, the suites for real.)
PYTEST_WORKERS ?= auto
test: $(STAMP)
	mkdir -p out; status=0; \
	{ $(foreach n,$(ISOLATED),if $(MAKE) -s --no-print-directory .venv-$(n)/.installed-stamp > out/test-$(n).log 2>&1; \
	    then { .venv-$(n)/bin/python -m pytest $($(n)_TESTS) --durations=10 >> out/test-$(n).log 2>&1; echo $$? > out/test-$(n).status; } & \
	    else echo "== .venv-$(n): its install failed" >> out/test-$(n).log; echo 1 > out/test-$(n).status; fi; ) wait; } & \
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=10 || status=1; \
	wait; \
	$(foreach n,$(ISOLATED),echo "== .venv-$(n): pytest $($(n)_TESTS)"; cat out/test-$(n).log; test "$$(cat out/test-$(n).status)" = 0 || { status=1; echo "== .venv-$(n): FAILED"; };) \
	exit $$status

# docs/support-matrix.md is written from the matrix's table (tests/matrix/table.py); a test fails when it is stale.
support-matrix: $(STAMP)
	$(PY) -m tests.matrix.table docs/support-matrix.md

# Benchmarks run in their own venv: our package and every framework at the versions .venv has (pinned by a
# freeze of .venv; the workloads reuse the test suite's and the examples' fakes), plus the peer instrumentors
# of benchmarks/requirements.txt, which must never reach .venv. Google ADK's workload runs in
# .bench-venv-google_adk (ADK's own pins, constraints/google_adk.txt, plus its peers); run.py starts it there.
BENCH_VENV  := .bench-venv
BENCH_PY    := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp
BENCH_ADK_STAMP := .bench-venv-google_adk/.installed-stamp

$(BENCH_STAMP): $(STAMP) benchmarks/requirements.txt
	mkdir -p $(BENCH_VENV) && $(call freeze,$(VENV)) > $(BENCH_VENV)/constraints.txt
	$(call install,$(BENCH_VENV),$(BENCH_VENV)/constraints.txt,-e '.[$(EXTRAS)]' -r benchmarks/requirements.txt)
	touch $(BENCH_STAMP)

$(BENCH_ADK_STAMP): pyproject.toml constraints/google_adk.txt benchmarks/requirements-google_adk.txt $(UV_STAMP)
	$(call install,.bench-venv-google_adk,constraints/google_adk.txt,-e '.[$(google_adk_EXTRAS)]' -r benchmarks/requirements-google_adk.txt)
	touch $@

bench: $(BENCH_STAMP) $(BENCH_ADK_STAMP)
	$(BENCH_PY) benchmarks/run.py

# A fresh resolution (no constraints: /dev/null), frozen. lock-NAME adds NAME_LOCK to the installer's arguments
# (floor: uv's --resolution lowest-direct).
lock: $(UV_STAMP)
	rm -rf .lock-venv && $(call install,.lock-venv,/dev/null,-e '.[$(EXTRAS)]')
	(sed -n '1,3p' constraints.txt; grep '^--' constraints.txt; $(call freeze,.lock-venv) | grep -v '^otel-agents') > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .lock-venv
	$(foreach n,$(ISOLATED),$(MAKE) lock-$(n) &&) true

lock-%: $(UV_STAMP)
	rm -rf .lock-venv-$* && $(call install,.lock-venv-$*,/dev/null,$($*_LOCK) -e '.[$($*_EXTRAS)]')
	mkdir -p constraints && (echo "# .venv-$* (Makefile ISOLATED): a known-good resolution of .[$($*_EXTRAS)]; make lock-$* rewrites it."; \
	  grep -s '^--' constraints/$*.txt; $(call freeze,.lock-venv-$*) | grep -v '^otel-agents') > constraints/$*.txt.new
	mv constraints/$*.txt.new constraints/$*.txt
	rm -rf .lock-venv-$*

clean:
	rm -rf $(VENV) .venv-* .bench-venv .bench-venv-* .uv out .pytest_cache
