# `make demo` and `make test` are the only set-up a fresh machine needs (Python >= 3.10 and make).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/otel-agents demo

test: $(STAMP)
	$(PY) -m pytest

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

clean:
	rm -rf $(VENV) .bench-venv out .pytest_cache
