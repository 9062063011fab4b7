# `make test` and `make demo` do all the set-up they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := tests/servers/node_modules/.installed

.PHONY: test demo lint check install clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): tests/servers/package.json tests/servers/package-lock.json
	cd tests/servers && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: install
	$(VENV)/bin/pytest -q
	$(MAKE) lint

demo: install
	$(VENV)/bin/kairox --workspace examples/workspace config show --provenance

clean:
	rm -rf $(VENV) tests/servers/node_modules
