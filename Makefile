# Two commands from a fresh clone: `make test` and `make repro`.
# The virtualenv is built once and rebuilt only when requirements.txt or pyproject.toml change.
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
# .venv/bin first on PATH, so that dvc and every stage run with the pinned packages.
RUN := PATH="$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)"

.PHONY: setup repro test bench clean-venv

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

repro: $(STAMP)
	$(RUN) dvc repro

test: $(STAMP)
	$(RUN) python -m pytest

bench: $(STAMP)
	$(RUN) sh -c 'for b in benchmarks/*.py; do python "$$b" || exit 1; done'

clean-venv:
	rm -rf $(VENV)
