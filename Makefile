# kernelbench: `make demo` (install + one paper's panel on shipped data, offline), `make test` (install + tests).
# Everything installs into .venv from the package registries; PYTHON picks the interpreter.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The LIBSVM/UCI copies staged beside the checkout (CI and developer machines); override freely.
export KERNELBENCH_MIRROR ?= $(abspath ../shared/datasets)

STAMP   := $(VENV)/.installed-test
RUN_STAMP := $(VENV)/.installed
SOURCES := pyproject.toml setup.py $(wildcard kernelbench/solvers/*.pyx kernelbench/solvers/*.pxd kernelbench/solvers/*.h kernelbench/data/*.pyx)

.PHONY: install demo test test-slow test-floor docs bench bench-against figures report reproduce publish clean

# install: what `run` needs (no test, tune, Dask or oneDAL packages); the test targets add the extras
install: $(RUN_STAMP)

COMPILING := echo "kernelbench: compiling the solvers, about two minutes"

$(RUN_STAMP): $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip setuptools wheel
	@$(COMPILING)
	$(BIN)/python -m pip install -e .
	touch $@

# An extra goes on top of the install by name: pip keeps the installed checkout and adds the
# extra's packages, so the solvers are compiled once (by the install above), never again here.
$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install 'kernelbench[test]'
	touch $@

# Dai et al. 2014, Fig. 1 (1) on the a9a copy shipped in the package: no download, about a minute
demo: install
	$(BIN)/kernelbench demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

# the long versions of tests (bigger files, more processes, every fuzz case); CI runs both tiers
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# the fast tier on the oldest scikit-learn pyproject.toml admits (>= 1.6: validate_data and
# __sklearn_tags__, which the estimators use), in a venv of its own; CI runs it after the two tiers
SKLEARN_FLOOR ?= 1.6.0
FLOOR_VENV    ?= .venv-sklearn-floor
test-floor:
	test -x $(FLOOR_VENV)/bin/python || $(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install --upgrade pip setuptools wheel
	@$(COMPILING)
	$(FLOOR_VENV)/bin/python -m pip install -e ".[test]" "scikit-learn==$(SKLEARN_FLOOR)"
	$(FLOOR_VENV)/bin/python -c "import sklearn; assert sklearn.__version__ == '$(SKLEARN_FLOOR)', sklearn.__version__"
	$(FLOOR_VENV)/bin/python -m pytest -q -m "not slow"

# the documentation site into build/docs/ (ignored), warnings as errors; its references and tables
# are generated while it builds (docs/site-config/hooks.py), so it needs the install and the docs extra
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install 'kernelbench[docs]'
	touch $@

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --config-file docs/site-config/mkdocs.yml

bench: install
	set -e; for script in scripts/bench_*.py; do echo "== $$script"; $(BIN)/python $$script; done

# the headline configs' time and error, this tree against a revision built beside it: make bench-against REV=v0.3
REV ?= HEAD
bench-against: $(STAMP)
	$(BIN)/python scripts/bench_against.py --against $(REV)

# your runs' figures, then those of the committed runs (results/published, which the first leaves out)
figures: install
	$(BIN)/kernelbench figures results --out results/figures
	$(BIN)/kernelbench figures results/published --out results/figures/published

clean:
	rm -rf build $(VENV) $(FLOOR_VENV) kernelbench/solvers/*.c kernelbench/solvers/*.so kernelbench/data/*.c kernelbench/data/*.so

report: install
	$(BIN)/kernelbench report results --out results

# make reproduce PAPER=geng2019: its configs (those whose data is here, not done yet), figures, report
reproduce: install
	$(BIN)/kernelbench reproduce $(PAPER) --out results

# make publish PAPER=geng2019 (every paper with runs: no PAPER): its runs, compacted, into
# results/published/ and REPRODUCTION.md regenerated; commit both
publish: install
	$(BIN)/kernelbench publish $(PAPER) --results results --out results/published
