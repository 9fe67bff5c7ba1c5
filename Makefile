# Two entry points: `make run` (the main job) and `make test` (everything CI checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean reference

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# PyPTO (the reference), from the wheel in ../shared/reference when it is there; the tests that need it skip
# without it. Never `pip install pypto`: that name on PyPI is another project.
REFERENCE_WHEEL := $(wildcard ../shared/reference/pypto-*.whl)
reference: $(STAMP)
ifneq ($(REFERENCE_WHEEL),)
	$(BIN)/python -m pip install -q $(REFERENCE_WHEEL)
else
	@echo "no PyPTO wheel in ../shared/reference; build PyPTO from hw-native-sys/pypto and pip install it into $(VENV)"
endif

run: $(STAMP)
	$(BIN)/pypto-egg flatten examples/seed_example.py --program Before --report
	$(BIN)/pypto-egg viz examples/seed_example.py --program Before -o egraph.html

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_workloads.py
	$(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_optimal.py
	$(BIN)/python benchmarks/bench_egglog_costs.py
	@if $(BIN)/python -c "import pypto.language, pypto.pypto_core" 2>/dev/null; then \
		$(BIN)/python benchmarks/bench_vs_reference.py 2>/dev/null; \
		$(BIN)/python benchmarks/bench_pipeline.py 2>/dev/null; \
		$(BIN)/python benchmarks/bench_floor.py 2>/dev/null; \
		$(BIN)/python benchmarks/bench_check.py 2>/dev/null; \
	else echo "bench_vs_reference, bench_pipeline, bench_floor, bench_check: PyPTO is not in $(VENV) (make reference), skipped"; fi

clean:
	rm -rf $(VENV) build *.egg-info egraph.html
