# Set-up is part of every target: a fresh clone needs only Python 3.11 and make.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test bench lock clean screenshot

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall when the lock or the package metadata changes.
$(STAMP): requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock
	# editable_mode=compat: a plain path entry, not an import hook (15-20 ms off every start)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
		--config-settings editable_mode=compat -e .
	touch $(STAMP)

# Byte-compile every time (only changed files are redone): starts are ~40 ms faster,
# also where PYTHONDONTWRITEBYTECODE keeps Python from writing the cache itself.
install: $(STAMP)
	@$(BIN)/python -m compileall -q ikigai_tui

run: install
	$(BIN)/ikigai $(ARGS)

# The suite on every core (pytest-xdist, -n $(JOBS); auto is two workers a core, as the
# tests mostly wait: tests/scheduling.py), then the tests marked `serial`
# (wall-clock bounds; pyproject.toml says why) alone, one at a time. PYTEST_ARGS go to both
# runs; a run that selects nothing (exit 5) is not an error. One file, in one process:
#   make test PYTEST_ARGS="tests/unit/test_x.py -n 0"      (or JOBS=0, or -p no:xdist)
# With --snapshot-update it is one run in one process: syrupy under xdist sees only each
# worker's share, and a run of part of a file could take the rest for unused snapshots.
JOBS ?= auto
# Bytecode written (PYTHONDONTWRITEBYTECODE unset): pytest keeps each test module's rewritten
# asserts, so a worker's collection after the first run takes ~8 s of CPU, not ~16.
PYTEST := env -u NO_COLOR -u TEXTUAL_THEME -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest
NO_XDIST := $(findstring no:xdist,$(PYTEST_ARGS))
test: install
ifneq ($(findstring --snapshot-update,$(PYTEST_ARGS)),)
	$(PYTEST) $(PYTEST_ARGS) $(if $(NO_XDIST),,-n 0)
else
	$(PYTEST) -m "not serial" $(if $(NO_XDIST),,-n $(JOBS)) $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(PYTEST) -m serial $(PYTEST_ARGS) $(if $(NO_XDIST),,-n 0) || [ $$? -eq 5 ]
endif

bench: install
	env -u NO_COLOR -u TEXTUAL_THEME $(BIN)/python benchmarks/run.py $(BENCH_ARGS)

# Regenerate the hash-locked requirements from requirements.in (needs uv or pip-tools).
lock:
	uv pip compile --generate-hashes --python-version 3.11 --no-header requirements.in -o requirements.lock

# The README's screenshot, from the split-view snapshot (regenerate the snapshots first
# with `make test PYTEST_ARGS="tests/tui/test_snapshots.py --snapshot-update"`).
SCREENSHOT_SVG := snapshots/test_snapshots/test_split_view.svg
screenshot: docs/screenshot.png
docs/screenshot.png: $(SCREENSHOT_SVG)
	@command -v rsvg-convert >/dev/null || { echo "rsvg-convert is needed (librsvg2-bin)"; exit 1; }
	mkdir -p docs
	rsvg-convert --width 1200 $(SCREENSHOT_SVG) -o $@

clean:
	rm -rf $(VENV) build *.egg-info
