# `make demo` and `make test` are the only set-up a fresh machine needs (Python >= 3.10 and make).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench clean lock

# constraints.txt pins the whole resolution (pip would otherwise backtrack for a long time through the
# frameworks' overlapping pins); `make lock` rewrites it from a fresh resolution after pyproject.toml changes.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[all,dev]'
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

lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv && .lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q -e '.[all,dev]'
	(sed -n '1,3p' constraints.txt; .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^otel-agents') > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .lock-venv

clean:
	rm -rf $(VENV) .bench-venv out .pytest_cache
