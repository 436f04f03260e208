# The two commands a newcomer needs:
#   make demo   the whole pipeline on embedded defaults (sets itself up on a fresh machine)
#   make test   the test suite (sets itself up on a fresh machine)
# Both create .venv, install the extras, check for Java, and reuse a per-machine wheel cache so that
# llama-cpp-python's source build (~10 min on 2 cores) happens once per machine.

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= edge,label,train,env,dev
# llama.cpp collapses with more threads than free cores; 1 is the safe default on a shared 2-core box.
export EDGEJUDGE_THREADS ?= 1
DEMO_OUT ?= demo-out
PYTEST_ARGS ?=

.PHONY: setup test demo lint clean

setup:
	@tools/bootstrap.sh $(EXTRAS)

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

demo: setup
	@DEMO_OUT=$(DEMO_OUT) PY=$(PY) tools/demo.sh

lint: setup
	$(PY) -m ruff check edge labeler policy models tools tests

clean:
	rm -rf $(DEMO_OUT) .pytest_cache .ruff_cache
