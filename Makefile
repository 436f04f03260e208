# The two commands a newcomer needs:
#   make demo   the whole pipeline on embedded defaults (sets itself up on a fresh machine)
#   make test   the test suite (sets itself up on a fresh machine)
# Both create .venv, install the extras, check for Java, and reuse a per-machine wheel cache so that
# llama-cpp-python's source build (~10 min on 2 cores) happens once per machine.

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= edge,label,train,env,cluster,dev
# llama.cpp collapses with more threads than free cores; 1 is the safe default on a shared 2-core box.
export EDGEJUDGE_THREADS ?= 1
DEMO_OUT ?= demo-out
# make test runs the suite on two worker processes (pytest-xdist), each test taken by whichever is free: on 2
# cores, half the time of one process. PYTEST_ARGS replaces these (e.g. PYTEST_ARGS='-x tests/edge').
PYTEST_ARGS ?= -n 2 --dist worksteal

.PHONY: setup test demo demo-loop lint clean cpp cpp-deps bench-deps

setup:
	@tools/setup/bootstrap.sh $(EXTRAS)

test: setup cpp-deps lint
	$(PY) -m pytest $(PYTEST_ARGS)

demo: setup
	@DEMO_OUT=$(DEMO_OUT) PY=$(PY) tools/demo/demo.sh

# One round of the loop on the demo's bundles (runs the demo first when its outputs are missing).
demo-loop: setup
	@DEMO_OUT=$(DEMO_OUT) PY=$(PY) tools/demo/demo_loop.sh

# ruff: the lint rules and the formatting (pyproject.toml [tool.ruff]); make test runs it first.
lint: setup
	$(PY) -m ruff check edge labeler policy models tools tests
	$(PY) -m ruff format --check edge labeler policy models tools tests

# The C++ client of edge-serve (edge/cpp): libzmq/cppzmq/msgpack-c installed where missing, build, CTest.
cpp-deps:
	@tools/setup/install_cpp_deps.sh

cpp: cpp-deps
	cmake -S . -B build/cpp -DCMAKE_BUILD_TYPE=Release && cmake --build build/cpp -j2
	ctest --test-dir build/cpp --output-on-failure

# tools/bench/bench_serve.py's HTTP and websocket baselines; openpi-client pins numpy<2, hence --no-deps.
bench-deps: setup
	$(VENV)/bin/pip install --quiet -e '.[bench]' && $(VENV)/bin/pip install --quiet --no-deps 'openpi-client>=0.1'

clean:
	rm -rf $(DEMO_OUT) .pytest_cache .ruff_cache
