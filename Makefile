# Two commands from a fresh clone: `make test` and `make repro`; each sets up only what it needs.
# `setup` (what `make repro` needs): the virtualenv, built once and again only when requirements.txt or
# pyproject.toml change, and the Vega libraries `dvc plots show` inlines (scripts/dvc_plots_template.py).
# `test-setup` adds the Debian packages only the tests use (scripts/system-packages.sh: Chromium, bubblewrap).
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
# .dvc/config's plots.html_template names this file (relative to .dvc).
PLOTS_TEMPLATE := $(VENV)/share/dvc-plots.html
# .venv/bin first on PATH, so that dvc and every stage run with the pinned packages.
RUN := PATH="$(BIN):$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)"

.PHONY: setup test-setup system-packages repro test test-fast lint bench exp-show plots pages mutation clean-venv

setup: $(STAMP) $(PLOTS_TEMPLATE)

test-setup: setup system-packages

system-packages:
	@sh scripts/system-packages.sh

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { echo "setup: '$(PYTHON) -m venv' failed: install Python 3.11+ with venv (Debian: sudo apt-get install -y python3-venv)" >&2; exit 1; }
	@echo "setup: installing the pinned Python packages into $(VENV) (about 2 minutes the first time: torch, dvc, ...)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

$(PLOTS_TEMPLATE): scripts/dvc_plots_template.py
	$(BIN)/python scripts/dvc_plots_template.py $@

# `dvc repro` with one line per stage: "stage 3 of 14", and the time left (mha.repro).
repro: setup
	$(RUN) python -m mha.repro

# The tests' slow families (pyproject's markers; tests/conftest.py marks each test): the real sandbox, the
# pipeline's subprocesses, the submission corpora, Chromium. The fast lane is every other test.
SLOW_LANES := sandbox or pipeline or corpus or browser

# ruff first, then one pytest session that runs the fast lane first and the slow lanes after it (--fast-first,
# tests/conftest.py): a lint error stops the run, a failure in the fast lane stops it before the slow lanes.
# One session: each test runs once and the suite is collected once, as before the lanes.
test: test-setup lint
	$(RUN) python -m pytest --fast-first

# The fast lane alone (under 2 minutes on 2 cores): no Chromium, bubblewrap or R needed.
test-fast: lint
	$(RUN) python -m pytest -m "not ($(SLOW_LANES))"

lint: $(STAMP)
	$(RUN) ruff check .

bench: $(STAMP)
	$(RUN) sh -c 'for b in benchmarks/*.py; do python "$$b" || exit 1; done'

# The experiments: the params a sweep changes and the main runs' best loss, in 120 columns (docs/pipeline.md: Experiments).
EXP_SHOW := python scripts/exp_show.py
exp-show: $(STAMP)
	$(RUN) $(EXP_SHOW)

# Every curve, offline: DVC's page with Vega inlined (.dvc/config plots.html_template).
plots: setup
	$(RUN) dvc plots show

# After a full reproduction: copy both pages to docs/pages (committed, for readers who do not train) and write
# the screenshots under docs/screenshots.
pages: test-setup
	$(RUN) python scripts/pages.py

# Mutation testing of the judgement, not part of `test` (18 min on 2 busy cores, measured): mutmut mutates
# grader/tolerance.py, functions/mistakes.py, functions/checks.py, outcome_messages.py and src/mha/reference.py
# ([tool.mutmut] in pyproject.toml) and runs only their fast unit tests against each mutant; scripts/mutation.py
# scores the run, leaving out the equivalent mutants scripts/mutation_equivalent.toml lists, and ends with
# `mutation score: NN.N%`.
mutation: $(STAMP)
	rm -rf mutants
	$(RUN) nice -n 10 mutmut run --max-children 2
	$(RUN) python scripts/mutation.py

clean-venv:
	rm -rf $(VENV)
