# Two commands from a fresh clone: `make test` and `make repro`.
# `setup` installs the Debian packages the tests need when their binaries are missing
# (scripts/system-packages.sh), then builds the virtualenv: once, and again only when
# requirements.txt or pyproject.toml change.
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
# .venv/bin first on PATH, so that dvc and every stage run with the pinned packages.
RUN := PATH="$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)"

.PHONY: setup system-packages repro test lint bench mutation clean-venv

setup: system-packages $(STAMP)

system-packages:
	@sh scripts/system-packages.sh

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

repro: setup
	$(RUN) dvc repro

# ruff first: a lint error stops the run before the (slower) test suite.
test: setup lint
	$(RUN) python -m pytest

lint: $(STAMP)
	$(RUN) ruff check .

bench: $(STAMP)
	$(RUN) sh -c 'for b in benchmarks/*.py; do python "$$b" || exit 1; done'

# Mutation testing of the judgement, not part of `test` (18 min on 2 busy cores, measured): mutmut mutates
# grader/tolerance.py, mistakes.py, checks.py and src/mha/reference.py ([tool.mutmut] in pyproject.toml)
# and runs only their fast unit tests against each mutant; scripts/mutation.py scores the run, leaving
# out the equivalent mutants scripts/mutation_equivalent.toml lists, and ends with `mutation score: NN.N%`.
mutation: $(STAMP)
	rm -rf mutants
	$(RUN) nice -n 10 mutmut run --max-children 2
	$(RUN) python scripts/mutation.py

clean-venv:
	rm -rf $(VENV)
