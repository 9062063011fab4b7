# `make test` and `make demo` do all the set-up they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := tests/servers/node_modules/.installed
# The catalog tests install these built-in entries with npm, offline: a cache of their own holds each package
# and its dependencies (a test checks the versions match the built-in catalog).
CATALOG_NPM := @modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31
NPM_CACHE := build/npm-cache
NPM_CACHE_STAMP := $(NPM_CACHE)/.catalog-installed
# The web GUI: ui/ (Vue + TypeScript) built by Vite into the package's static folder, which kairox.web serves
UI_STAMP := ui/node_modules/.installed
UI_STATIC := src/kairox/web/static/index.html
UI_SOURCES := $(shell find ui/src -type f 2>/dev/null) ui/index.html ui/vite.config.ts ui/tsconfig.json

.PHONY: test test-fast demo lint check install clean system-packages demo-packages preflight demo-preflight demo-install ui ui-check

# bubblewrap, ripgrep, git, Node.js, and for the tests tmux and chromium: installed when missing (as root, or with
# `sudo -n`), else make stops at once, naming the packages and the command that installs them
system-packages:
	@sh scripts/system-packages.sh install

# what Kairox itself and the demo use: the same without tmux and chromium (only the tests drive those)
demo-packages:
	@sh scripts/system-packages.sh install demo

$(PY): | demo-packages
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): tests/servers/package.json tests/servers/package-lock.json
	cd tests/servers && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

$(NPM_CACHE_STAMP): Makefile
	rm -rf build/npm-prefetch
	npm install --no-save --no-audit --no-fund --loglevel=error --prefix build/npm-prefetch --cache $(NPM_CACHE) $(CATALOG_NPM)
	npm cache add --loglevel=error --cache $(NPM_CACHE) $(CATALOG_NPM)
	rm -rf build/npm-prefetch
	touch $(NPM_CACHE_STAMP)

$(UI_STAMP): ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund --loglevel=error
	touch $(UI_STAMP)

$(UI_STATIC): $(UI_STAMP) $(UI_SOURCES)
	cd ui && npm run --silent build

ui: $(UI_STATIC)

# the type check of the GUI's TypeScript and Vue files
ui-check: $(UI_STAMP)
	cd ui && npm run --silent typecheck

install: system-packages $(STAMP) $(NODE_STAMP) $(NPM_CACHE_STAMP) $(UI_STATIC)

# says which system programs are missing before any test runs
preflight:
	@sh scripts/system-packages.sh check

demo-preflight:
	@sh scripts/system-packages.sh check demo

# the demo needs Kairox installed in .venv, nothing of the test set-up (test servers, npm cache, GUI build)
demo-install: demo-packages $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The suite on every core (most tests wait on child processes), then the tests that need the machine to
# themselves (marked `serial`: a SIGKILLed host, a busy loop, a race), alone; each run names its 25 slowest tests.
PYTEST := $(VENV)/bin/pytest -q --durations=25
# the files of the serial tests (tests/conftest.py names them): the second run collects only those, not the whole suite
SERIAL_TESTS = $(shell $(PY) -c 'from tests.conftest import SERIAL; print(*sorted("tests/" + f for f in SERIAL))')
test: install preflight ui-check
	$(PY) -m compileall -q -x /node_modules/ src tests  # every Kairox process of the tests reads bytecode, even where none is written
	$(PYTEST) -n auto --dist loadfile -m "not serial"
	$(PYTEST) -m serial $(SERIAL_TESTS)
	$(MAKE) lint

# The inner loop: no browser, no corpora, nothing that needs the machine to itself
test-fast: $(STAMP) $(NODE_STAMP)
	$(PYTEST) -n auto --dist loadfile -m "not serial and not browser and not corpus"

# The demo keeps its Kairox home in build/ so it never touches the user's own ~/.kairox.
DEMO_HOME := $(CURDIR)/build/demo-home
# The temp folder is a writable root of every sandbox: the demo's own (in build/) keeps the rest of build/ outside
# the writable roots even for a clone under /tmp, so the refused writes below are refused wherever the clone is.
DEMO_TMP := $(CURDIR)/build/demo-tmp
DEMO_ENV := KAIROX_HOME=$(DEMO_HOME) TMPDIR=$(DEMO_TMP) PATH=$(CURDIR)/$(VENV)/bin:$$PATH
KX := $(DEMO_ENV) $(VENV)/bin/kairox --workspace examples/workspace

demo: demo-install demo-preflight
	@mkdir -p $(DEMO_TMP)
	@echo "== kairox trust (the example's servers, plugin and hooks may run)"
	@$(KX) trust
	@echo; echo "== kairox config show --provenance (project layer only)"
	@$(KX) config show --provenance | grep -v '^default'
	@echo; echo "== kairox doctor"
	@$(KX) doctor
	@echo; echo "== kairox context"
	@$(KX) context
	@echo; echo "== MCP tool through the gate: mcp__notes__search_notes {\"query\": \"release\"}"
	@$(KX) tools call mcp__notes__search_notes '{"query": "release"}'
	@echo; echo "== LSP definition through the gate: where is Cart.total?"
	@$(KX) tools call lsp.definition '{"path": "src/shop/cart.py", "symbol": "Cart.total"}'
	@echo; echo "== Skill match: which skill fits the prompt?"
	@$(KX) skills match "review this pull request for test coverage"
	@echo; echo "== A refused write: the deny rule fs.write(./dist/**) of kairox.toml (exit code 4 = denied)"
	@$(KX) tools call fs.write '{"path": "dist/app.txt", "content": "x"}' 2>&1 || test $$? -eq 4
	@echo; echo "== A refused write: project configuration is always asked about; with nobody to ask, refused"
	@$(KX) tools call fs.write '{"path": "kairox.toml", "content": "x"}' 2>&1 || test $$? -eq 4
	@echo; echo "== The plugin's hook blocks overwriting CHANGELOG.md (exit code 4 = denied)"
	@$(KX) tools call fs.write '{"path": "CHANGELOG.md", "content": "x"}' 2>&1 || test $$? -eq 4
	@echo; echo "== The sandbox stops a command: outside the workspace the file system is read-only (exit code 5 = tool error)"
	@$(KX) tools call shell.exec '{"command": "echo changed > ../../build/demo-outside.txt"}' 2>&1 || test $$? -eq 5
	@test ! -e build/demo-outside.txt && echo "(build/demo-outside.txt was not written)"
	@echo; echo "== kairox run with a RECORDED model: a scripted server on 127.0.0.1 replays canned answers"
	@echo "   (examples/recorded_session.json); no real model is called. The tool calls are real; the write"
	@echo "   outside the workspace asks, and the demo answers the question as you would ('o': once)."
	@mkdir -p build && rm -f build/demo-model.port build/demo-report.md build/demo-report-copy.md
	@$(PY) tests/servers/model_server.py --wire openai --script examples/recorded_session.json --port-file build/demo-model.port & \
	server=$$!; for i in $$(seq 100); do test -s build/demo-model.port && break; sleep 0.1; done; \
	$(DEMO_ENV) $(PY) scripts/demo_session.py o -- $(VENV)/bin/kairox --workspace examples/workspace \
	  -c model=recorded-model -c model_provider=recorded \
	  -c model_providers.recorded.base_url=http://127.0.0.1:$$(cat build/demo-model.port)/v1 \
	  run "Where is Cart.total defined, what do the notes say about the release, and how should a change to it be reviewed?"; \
	code=$$?; test $$code -eq 0 || kill $$server 2>/dev/null; wait $$server; served=$$?; \
	test $$code -eq 0 || exit $$code; test $$served -eq 0 || exit $$served
	@echo; echo "== What the session left: build/demo-report.md (approved once), no copy (the sandbox stopped cp)"
	@cat build/demo-report.md && test ! -e build/demo-report-copy.md
	@echo; echo "== Try it yourself on the demo's home (the demo never touches ~/.kairox):"
	@echo "   export KAIROX_HOME=$(DEMO_HOME) PATH=$(CURDIR)/$(VENV)/bin:\$$PATH"
	@echo "   kairox --workspace examples/workspace doctor"

clean:
	rm -rf $(VENV) tests/servers/node_modules ui/node_modules src/kairox/web/static
