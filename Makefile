# fedrepro — build the book, run the tests, recompute the results.
#   make book        set up .venv if needed, regenerate every chapter, build the HTML book
#   make test        set up .venv if needed, run the whole test suite
#   make reproduce   recompute every result from scratch (ignores the results store)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fedrepro-installed
PROFILE ?= paper

# Offline data mirror: the shared dataset folder next to the checkout, when it exists.
ifneq ($(wildcard ../shared/datasets),)
export FEDREPRO_DATA_MIRROR ?= $(abspath ../shared/datasets)
endif
PIP_QUIET := grep -v -e 'is ignored: it is neither a file nor a directory' || true

.PHONY: help setup chapters html book reproduce scorecard test test-fast clean

help:
	@echo "make book       regenerate every chapter and build the HTML book (_build/html)"
	@echo "make test       run the whole test suite (what CI runs)"
	@echo "make reproduce  recompute every result from scratch, then rebuild the book"
	@echo "make setup      create .venv and install the pinned environment"

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing the pinned environment into $(VENV) (a few minutes the first time)"
	{ $(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt -c constraints.txt 2>&1; } | { $(PIP_QUIET); }
	{ $(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e . 2>&1; } | { $(PIP_QUIET); }
	$(BIN)/python -m pip check
	@touch $(STAMP)

chapters: setup
	$(BIN)/python -m fedrepro.report.chapters run --profile $(PROFILE)

scorecard: setup
	$(BIN)/python -c "from fedrepro.report import scorecard; print(scorecard.write())"

html: setup
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The book is in $(CURDIR)/_build/html/index.html"

book: setup chapters html

reproduce: setup
	FEDREPRO_FORCE=1 $(BIN)/python -m fedrepro.report.chapters run --profile $(PROFILE)
	$(MAKE) html

test: setup
	$(BIN)/python -m pytest

# Library tests only (no notebooks, no book build).
test-fast: setup
	$(BIN)/python -m pytest -m "not notebooks and not book"

clean:
	rm -rf _build
