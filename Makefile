# The two README commands. Both create .venv on first use, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test bench clean-cache lint

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# pip byte-compiles every installed module on one core, tests included; compileall does it
# on every core and skips the packages' own test folders (a fresh .venv with the test extras:
# 11.5 s + 7.9 s against 30.4 s). A module left out compiles when imported, as usual.
BYTE_COMPILE = $(PY) -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib > /dev/null || true

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --no-compile -e .
	$(BYTE_COMPILE)
	touch $@

# The test extras alone, dtjit being installed already: pip reinstalls an editable project
# each time, and `make test` imports dtjit meanwhile. The list is read from the installed
# dtjit's metadata (each requirement of the extra "test", its marker dropped).
TEST_REQUIREMENTS = $(VENV)/test-requirements.txt
LIST_TEST_REQUIREMENTS = $(PY) -c 'import re; from importlib.metadata import requires; \
	print("\n".join(r.split(";")[0] for r in requires("dtjit") if re.search(r"extra *== *.test.", r)))'

$(STAMP_TEST): $(STAMP_RUN)
	$(LIST_TEST_REQUIREMENTS) > $(TEST_REQUIREMENTS)
	$(PY) -m pip install --quiet --no-compile -r $(TEST_REQUIREMENTS)
	$(BYTE_COMPILE)
	touch $@

demo: $(STAMP_RUN)
	$(VENV)/bin/dtjit bench

# Two workers, one test file each at a time: most of a cold run is numba compiling kernels,
# which is single-threaded, so a second worker uses the other core. Files stay whole
# (--dist loadfile) so module-scoped fixtures and tests that look at in-process state see what
# they would in a serial run. Two workers compiling the same kernel both write it: numba
# writes cache files by atomic rename, so the worst a race does is drop an index entry, which
# costs a later process one more compile.
#
# `dtjit compile --jobs 2` first: on a cold cache both workers would compile the common
# kernels at the same moment (the first fits run while collecting). Compiled once in two
# processes, then tested warm. On a warm cache the command only loads: a few seconds. It
# runs while pip installs the test extras: pip waits on the network and unpacks, and the
# compile's second process ends well before its first, so the two fill each other's gaps.
#
# tests/conftest.py hands out the longest files first (xdist would order them by number of
# tests): the bounds-checked lane of tests/test_kernels.py (a cache of its own, so it
# compiles every run) and tests/test_readme.py start at once, one per worker.
test: $(STAMP_RUN)
	$(VENV)/bin/dtjit compile --jobs 2 & compiling=$$!; \
	$(MAKE) --no-print-directory $(STAMP_TEST); installed=$$?; \
	wait $$compiling && exit $$installed
	$(PY) -m pytest -q -n 2 --dist loadfile

# Start-up first: its cold compile and warm start-up timings want the quietest machine.
bench: $(STAMP_TEST)
	$(PY) -m pip install --quiet -e ".[test,bench]"
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_fit.py
	$(PY) benchmarks/bench_predict.py

lint: $(STAMP_TEST)
	$(PY) -m pip install --quiet ruff
	$(PY) -m ruff check dtjit tests benchmarks

# numba's on-disk cache is keyed on the defining file only: clear it after editing engine/jit.py
# or a kernel that another module's kernel calls.
clean-cache:
	find dtjit -name '__pycache__' -type d -prune -exec rm -rf {} +
