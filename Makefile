# kafkapy: `make run` starts a broker on 127.0.0.1:9092; `make test` runs everything CI runs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test lint unit integration interop deps test-deps gen-protocol bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# compileall: an editable install ships no bytecode, and without it every start recompiles the package.
.stamp-install: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	$(BIN)/python -m compileall -q kafkapy
	touch $@

# The test extra's install is a superset of .stamp-install's, so it stands for it too: without that, the first
# `make run` in the suite (tests/interop/test_make_run.py) would reinstall the package inside the timed test run.
.stamp-test-deps: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test,spark]'
	$(BIN)/python -m compileall -q kafkapy
	touch .stamp-install
	@command -v kcat >/dev/null 2>&1 && [ -e /usr/share/zookeeper/bin/zkServer.sh -o -e /usr/share/java/zookeeper.jar ] || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq kcat zookeeper >/dev/null; }
	@command -v java >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }
	@command -v javac >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq openjdk-17-jdk-headless >/dev/null; }
	@command -v iptables >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq iptables >/dev/null; }
	cd tests/interop/js && npm ci --no-audit --no-fund
	touch $@

deps: .stamp-install
test-deps: .stamp-test-deps

# ARGS passes server-start arguments through, e.g. make run ARGS="--override num.partitions=3".
run: .stamp-install
	exec $(BIN)/kafkapy server-start $(ARGS)

gen-protocol: $(BIN)/python
	$(BIN)/python scripts/gen_protocol.py

lint: .stamp-test-deps
	$(BIN)/ruff check kafkapy tests scripts bench
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python scripts/gen_protocol.py --check

test: lint
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=30 tests

unit: .stamp-test-deps
	$(BIN)/python -m pytest -q tests/unit

integration: .stamp-test-deps
	$(BIN)/python -m pytest -q tests/integration

interop: .stamp-test-deps
	$(BIN)/python -m pytest -q tests/interop

# Figures only (not tests): kafkapy next to Tansu with the same client, median of interleaved rounds.
bench: .stamp-test-deps
	$(BIN)/python bench/bench_vs_tansu.py --messages 200000 --rounds 5

clean:
	rm -rf $(VENV) .stamp-* kafkapy-data *.egg-info
