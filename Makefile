# fedrepro — build the book, run the tests, recompute the results.
#   make book        set up .venv if needed, regenerate every chapter, build the HTML book
#   make test        set up .venv if needed, run the whole test suite
#   make reproduce   recompute every result from scratch (ignores the results store)
#   make verify      recompute the committed results in a scratch store and compare (CI)
#   make mutation    mutation testing of the numerical core (slow; not in CI; tests/MUTATION.md)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fedrepro-installed
PROFILE ?= paper
# Experiment units run on this many local worker processes in book/reproduce/verify
# (tests stay serial); FEDREPRO_DASK_SCHEDULER=tcp://host:port sends them to a Dask cluster.
WORKERS ?= $(shell nproc 2>/dev/null || echo 1)

# Offline data mirror: the shared dataset folder next to the checkout, when it exists.
ifneq ($(wildcard ../shared/datasets),)
export FEDREPRO_DATA_MIRROR ?= $(abspath ../shared/datasets)
endif
PIP_QUIET := grep -v -e 'is ignored: it is neither a file nor a directory' || true

.PHONY: help setup chapters html book reproduce scorecard test test-fast verify check-results mutation clean

help:
	@echo "make book       regenerate every chapter and build the HTML book (_build/html)"
	@echo "make test       run the whole test suite (what CI runs)"
	@echo "make reproduce  recompute every result from scratch, then rebuild the book"
	@echo "make verify     recompute the committed results from the code and compare them (CI)"
	@echo "make setup      create .venv and install the pinned environment"
	@echo "make mutation   mutation testing of the numerical core with mutmut (slow, not in CI)"

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing the pinned environment into $(VENV) (a few minutes the first time)"
	{ $(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt -c constraints.txt 2>&1; } | { $(PIP_QUIET); }
	{ $(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e . 2>&1; } | { $(PIP_QUIET); }
	$(BIN)/python -m pip check
	@touch $(STAMP)

chapters: setup
	FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} $(BIN)/python -m fedrepro.report.chapters run --profile $(PROFILE)

scorecard: setup
	$(BIN)/python -c "from fedrepro.report import scorecard; print(scorecard.write())"

# The HTML build only shows committed outputs: refuse to build over stale or corrupt results.
check-results: setup
	$(BIN)/python -m fedrepro.core.verify --fresh-only

html: setup check-results
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The book is in $(CURDIR)/_build/html/index.html"

book: setup chapters html

reproduce: setup
	FEDREPRO_FORCE=1 FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} $(BIN)/python -m fedrepro.report.chapters run --profile $(PROFILE)
	$(MAKE) html

test: setup
	$(BIN)/python -m pytest

# Recompute every committed result from the library in a scratch store; compare value by value.
verify: setup
	FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} $(BIN)/python -m fedrepro.core.verify

# Library tests only (no notebooks, no book build).
test-fast: setup
	$(BIN)/python -m pytest -m "not notebooks and not book"

# Mutation testing (mutmut) of the numerical core, one module at a time, each against its own
# test files without the stored/notebook/book tests; prints the score per module.
# MUTATION_MODULES=privacy/rdp restricts it; MUTATION_JOBS mutants run in parallel.
MUTATION_MODULES ?=
MUTATION_JOBS ?= 1
mutation: setup
	nice -n 19 $(BIN)/python tests/mutation_run.py --jobs $(MUTATION_JOBS) $(MUTATION_MODULES)

clean:
	rm -rf _build
