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

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) out .pytest_cache
