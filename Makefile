# Thin wrappers: each target sets up what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
RUN_STAMP := $(VENV)/.stamp-run
DEV_STAMP := $(VENV)/.stamp-dev
ARGS ?=

.PHONY: run test test-fast check bench selftest demo stress fmt golden figures decisions judgment-data e2e-local clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# compileall: with PYTHONDONTWRITEBYTECODE set, nothing else would cache mca's bytecode and
# every start would recompile it (it is on the path to the first prompt).
$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e .
	$(BIN)/python -m compileall -q mca
	touch $@

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m compileall -q mca
	touch $(RUN_STAMP) $@

# Node.js >= 18 runs the lab's script and the sample workspace's tests (self-test checks 5 and
# 14); without it those two checks are skipped, saying so, and no grade depends on them.
NODE_NOTE = command -v node >/dev/null || echo "note: Node.js >= 18 is needed for self-test checks 5 and 14 (https://nodejs.org)" >&2

run: $(RUN_STAMP)
	@$(NODE_NOTE)
	$(BIN)/mca $(ARGS)

# The suite keeps its rewritten test modules' bytecode even where PYTHONDONTWRITEBYTECODE is
# set: rewriting every assert of every test file again took more than collecting them. It runs
# on every core (up to four; a module that builds a costly fixture once marks its tests with
# one xdist_group, kept together):
# PARALLEL= runs it in one process.
PARALLEL ?= -n auto --maxprocesses 4 --dist loadgroup
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest $(PARALLEL)

test: $(DEV_STAMP)
	$(PYTEST) $(ARGS)

# The inner loop (under a minute on two cores): everything but the tests marked slow (the
# sandbox's attempts and limits, grading a class, the installed mca in a terminal, the wheel,
# the stress suite). make test runs them all.
test-fast: $(DEV_STAMP)
	$(PYTEST) -m "not slow" $(ARGS)

check: $(DEV_STAMP)
	$(BIN)/ruff format --check mca tests bench
	$(BIN)/ruff check mca tests bench
	$(BIN)/mypy --strict mca tests bench

fmt: $(DEV_STAMP)
	$(BIN)/ruff format mca tests bench
	$(BIN)/ruff check --fix mca tests bench

selftest: $(RUN_STAMP)
	@$(NODE_NOTE)
	MOCK=1 SELFTEST=1 $(BIN)/mca

demo: $(RUN_STAMP)
	$(BIN)/python -m mca.cli.demo

bench: $(DEV_STAMP)
	$(BIN)/python -m compileall -q mca bench
	$(BIN)/python -m bench.run $(ARGS)

# The reliability suite at full size (CI runs the same tests smaller, as part of make test).
stress: $(DEV_STAMP)
	MCA_STRESS=1 MCA_FUZZ_EXAMPLES=100000 $(BIN)/python -m pytest -s -m stress \
		tests/stress tests/skills/test_fuzz.py tests/skills/test_corpus.py $(ARGS)
	MCA_STREAM_FUZZ_EXAMPLES=20000 MCA_YAML_EXAMPLES=50000 $(BIN)/python -m pytest \
		tests/faults/test_stream_fuzz.py tests/skills/test_yaml_agreement.py $(ARGS)

# The golden token counts pinned in tests/test_ledger.py (re-pin them if the sample changes).
golden: $(RUN_STAMP)
	$(BIN)/python -c "from mca.tokens import Estimator; t = open('fixtures/tokens/sample.txt').read(); \
	print({e: Estimator(e).count(t) for e in ('o200k_base', 'cl100k_base')})"

# The judgment's decisions on the trigger-eval dev split (tests/skills/test_decisions.py checks
# them on every interpreter): regenerate with the oldest supported Python, when a change to the
# judgment is meant to move them. Reads the repository only (fixtures/judgment).
decisions: $(RUN_STAMP)
	$(BIN)/python -m bench.decisions

# Every data file the judgment reads that is made from public skills, from the repository alone:
# the background and the competitor table from fixtures/judgment/public-descriptions.jsonl, then
# the decisions (tests/skills/test_judgment_inputs.py checks a clone writes the shipped bytes).
# The vendored inputs come from ../shared/corpus once: python -m bench.vendor_descriptions and
# python -m bench.vendor_training (fixtures/judgment/README.md).
judgment-data: $(RUN_STAMP)
	$(BIN)/python -m bench.make_background
	$(BIN)/python -m bench.make_rivals
	$(BIN)/python -m bench.decisions

# Real model servers on this machine (not part of make test or CI: the first run builds
# llama-cpp-python, ~10-25 minutes on 2 cores).
e2e-local: $(DEV_STAMP)
	tests/e2e_local/run.sh $(ARGS)

# The exact figures in README.md and docs/*.md (tests/test_readme.py checks them).
figures: $(RUN_STAMP)
	$(BIN)/python -m bench.figures

clean:
	rm -rf $(VENV) .venv-local *.egg-info .pytest_cache .mypy_cache .ruff_cache
