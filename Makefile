# kernelbench: `make demo` (install + the offline quickstart run), `make test` (install + tests).
# Everything installs into .venv from the package registries; PYTHON picks the interpreter.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The LIBSVM/UCI copies staged beside the checkout (CI and developer machines); override freely.
export KERNELBENCH_MIRROR ?= $(abspath ../shared/datasets)

STAMP   := $(VENV)/.installed-test
RUN_STAMP := $(VENV)/.installed
SOURCES := pyproject.toml setup.py $(wildcard kernelbench/solvers/*.pyx kernelbench/solvers/*.pxd kernelbench/solvers/*.h kernelbench/data/*.pyx)

.PHONY: install demo test test-slow bench bench-against figures report reproduce publish clean

# install: what `run` needs (no test, tune, Dask or oneDAL packages); the test targets add the extras
install: $(RUN_STAMP)

$(RUN_STAMP): $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -e .
	touch $@

$(STAMP): $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip setuptools wheel
	$(BIN)/python -m pip install -e ".[test]"
	touch $@ $(RUN_STAMP)

demo: install
	$(BIN)/kernelbench run configs/quickstart.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

# the long versions of tests (bigger files, more processes, every fuzz case); CI runs both tiers
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

bench: install
	set -e; for script in scripts/bench_*.py; do echo "== $$script"; $(BIN)/python $$script; done

# the headline configs' time and error, this tree against a revision built beside it: make bench-against REV=v0.3
REV ?= HEAD
bench-against: $(STAMP)
	$(BIN)/python scripts/bench_against.py --against $(REV)

figures: install
	$(BIN)/kernelbench figures results --out results/figures

clean:
	rm -rf build $(VENV) kernelbench/solvers/*.c kernelbench/solvers/*.so kernelbench/data/*.c kernelbench/data/*.so

report: install
	$(BIN)/kernelbench report results --out results

# make reproduce PAPER=geng2019: its configs (those whose data is here, not done yet), figures, report
reproduce: install
	$(BIN)/kernelbench reproduce $(PAPER) --out results

# make publish PAPER=geng2019 (every paper with runs: no PAPER): its runs, compacted, into
# results/published/ and REPRODUCTION.md regenerated; commit both
publish: install
	$(BIN)/kernelbench publish $(PAPER) --results results --out results/published
