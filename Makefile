# fedrepro — build the book, run the tests, recompute the results.
#   make book        set up .venv if needed, regenerate every chapter, build the HTML book
#   make test        set up .venv if needed, run the whole test suite
#   make reproduce   recompute every result from scratch (ignores the results store)
#   make verify      recompute the committed results in a scratch store and compare (CI)
#   make verify-kernels  the same under each CPU kernel family this machine runs (AVX2, AVX-512)
#   make publish     the built book as a self-contained static site folder (_build/site)
#   make mutation    mutation testing of the numerical core (slow; not in CI; tests/MUTATION.md)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fedrepro-installed
# MathJax 3, served from the built site (no CDN): the npm package pinned by web/package-lock.json
MATHJAX := web/node_modules/mathjax/es5/startup.js
PROFILE ?= paper
# Experiment units run on this many local worker processes in book/reproduce/verify
# (make test: TEST_WORKERS); FEDREPRO_DASK_SCHEDULER=tcp://host:port sends them to a Dask cluster.
WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
# pytest-xdist workers of make test; a file's tests stay on one worker (a notebook's cells share one kernel)
TEST_WORKERS ?= $(WORKERS)

# Offline data mirror: the shared dataset folder next to the checkout, when it exists.
ifneq ($(wildcard ../shared/datasets),)
export FEDREPRO_DATA_MIRROR ?= $(abspath ../shared/datasets)
endif
# glibc allocator: keep freed memory in the heap instead of returning it to the kernel (no mmap
# for large blocks, no trimming). This avoids ~1e5 page faults per DP-SGD step of the ALI-DPFL
# CNN (benchmarks/README.md has the measured effect). glibc reads it at process start, so it is
# set here for every entry point (chapters, workers, tests), not from Python.
export GLIBC_TUNABLES ?= glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295
# OpenMP threads (torch's intra-op pool) sleep instead of spinning between parallel regions: on
# a machine shared with other jobs, spinning threads wait for descheduled siblings (measured
# 4-5x slower DP-SGD steps under load, benchmarks/README.md). OpenBLAS (NumPy) is not affected.
export OMP_WAIT_POLICY ?= PASSIVE
PIP_QUIET := grep -v -e 'is ignored: it is neither a file nor a directory' || true

.PHONY: help setup chapters html book publish reproduce scorecard test test-fast verify verify-kernels check-results mutation clean

help:
	@echo "make book       regenerate every chapter and build the HTML book (_build/html)"
	@echo "make test       run the whole test suite (what CI runs)"
	@echo "make reproduce  recompute every result from scratch, then rebuild the book"
	@echo "make verify     recompute the committed results from the code and compare them (CI)"
	@echo "make verify-kernels  make verify under each CPU kernel family this machine runs (AVX2, AVX-512)"
	@echo "make publish    build the book as a self-contained static site folder (_build/site)"
	@echo "make setup      create .venv and install the pinned environment (Python, and MathJax from npm)"
	@echo "make mutation   mutation testing of the numerical core with mutmut (slow, not in CI)"

setup: $(STAMP) $(MATHJAX)

$(MATHJAX): web/package.json web/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to install MathJax for the book (apt-get install npm)"; exit 1; }
	npm ci --prefix web --no-audit --no-fund --loglevel=error
	@touch $(MATHJAX)

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

# A folder that works from file:// and from any sub-path (what the Pages workflow deploys).
publish: html
	$(BIN)/python -m fedrepro.report.publish _build/html _build/site

reproduce: setup
	FEDREPRO_FORCE=1 FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} $(BIN)/python -m fedrepro.report.chapters run --profile $(PROFILE)
	$(MAKE) html

test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=15

# Recompute every committed result from the library in a scratch store; compare value by value.
# VERIFY_BUDGET_S: the wall time it plans for, from the recorded times (benchmarks/verify-times.json):
# the cheap results every run, one group of the long ones by commit (every result within a few
# commits; it prints its coverage). The default keeps CI (.ci/run) within 40 min on 2 cores;
# `make verify VERIFY_BUDGET_S=` recomputes every result.
VERIFY_BUDGET_S ?= 900
verify: setup
	FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} FEDREPRO_VERIFY_BUDGET_S=$(VERIFY_BUDGET_S) \
		$(BIN)/python -m fedrepro.core.verify

# `make verify` once per CPU kernel family this machine can run (AVX2, AVX-512): the spread
# between families, which CI meets, is what each result's tolerance must cover. VERIFY=theory restricts it.
VERIFY ?=
verify-kernels: setup
	FEDREPRO_WORKERS=$${FEDREPRO_WORKERS:-$(WORKERS)} $(BIN)/python -m fedrepro.core.kernels $(VERIFY)

# Library tests only (no notebooks, no book build).
test-fast: setup
	$(BIN)/python -m pytest -m "not notebooks and not book"

# Mutation testing (mutmut) of the numerical core, one module at a time, each against its own
# test files without the stored/notebook/book tests; prints the score per module.
# MUTATION_MODULES=privacy/rdp restricts it; MUTATION_JOBS mutants run in parallel. It first checks
# that the issue's six planted bugs are each caught by the fast test selection (tests/planted_bugs.py).
MUTATION_MODULES ?=
MUTATION_JOBS ?= 1
mutation: setup
	nice -n 19 $(BIN)/python tests/planted_bugs.py
	nice -n 19 $(BIN)/python tests/mutation_run.py --jobs $(MUTATION_JOBS) $(MUTATION_MODULES)

clean:
	rm -rf _build
