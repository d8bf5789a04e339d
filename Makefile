# Tabrelay: `make run` starts the app, `make test` runs every test. Both set up what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall the package when its dependencies change.
DEPS_HASH := $(shell sha1sum pyproject.toml | cut -c1-12)
RUN_STAMP := $(VENV)/.run-$(DEPS_HASH)
TEST_STAMP := $(VENV)/.test-$(DEPS_HASH)
DIST_STAMP := $(VENV)/.dist-$(DEPS_HASH)

# Debian packages: Qt's runtime libraries for the app; browsers, displays and a keychain for tests.
APT_RUN := libegl1 libgl1 libfontconfig1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 \
	libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 \
	libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxcb-xinerama0
APT_TEST := $(APT_RUN) chromium xvfb xauth dbus-x11 gnome-keyring libsecret-tools \
	desktop-file-utils openbox trayer xdotool x11-utils
APT_SCREENSHOTS := imagemagick x11-apps
APT_BENCH := libtasn1-doc shared-mime-info  # their manuals: PDFs made by pdfTeX (bench_pdf)

# $(call apt_ensure,packages): install what is missing, as root or through sudo.
define apt_ensure
	@if command -v dpkg >/dev/null; then \
	  missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "Installing Debian packages:$$missing"; \
	    if [ "$$(id -u)" = 0 ]; then sudo=""; \
	    elif command -v sudo >/dev/null; then sudo="sudo"; \
	    else echo "Please install as root:$$missing" >&2; exit 1; fi; \
	    $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	  fi; \
	else echo "Not a Debian system: install the equivalents of: $(1)"; fi
endef

.PHONY: help run launcher serve test lint bench system-run system-test node apt-nodejs apt-npm python-venv \
	apt-python3-venv clean

help:
	@echo "make run     set up and start Tabrelay (tray app; headless where there is no display)"
	@echo "make test    set up and run every test: lint, types, extension, unit, integration, GUI, e2e"
	@echo "make lint    ruff (format + lint) and mypy --strict"
	@echo "make bench   benchmarks (not part of make test); results in tests/bench/results/"
	@echo "make dist    the app bundled by PyInstaller for this OS, in dist/ (docs/install.md)"
	@echo "make deb     a Debian package: dist/tabrelay_<version>_<arch>.deb (runs make dist)"
	@echo "make extension  the browser extension zipped for the Chrome Web Store, in dist/"
	@echo "make screenshots  the tray app under Xvfb with real Chromium, pictures into docs/"

run: system-run $(RUN_STAMP)
	@$(MAKE) --no-print-directory launcher
	$(BIN)/tabrelay

# `tabrelay` on PATH for the README's commands: a link in ~/.local/bin (on Debian's PATH once
# the folder exists, from the next login) to this checkout's virtualenv. A file of the same
# name that is not such a link is left alone.
LAUNCHER_DIR ?= $(HOME)/.local/bin
launcher:
	@mkdir -p "$(LAUNCHER_DIR)"
	@if [ -e "$(LAUNCHER_DIR)/tabrelay" ] && [ ! -L "$(LAUNCHER_DIR)/tabrelay" ]; then \
	  echo "$(LAUNCHER_DIR)/tabrelay exists and is not a link: left alone; the command is $(abspath $(BIN)/tabrelay)"; \
	else \
	  ln -sfn "$(abspath $(BIN)/tabrelay)" "$(LAUNCHER_DIR)/tabrelay"; \
	  echo "The tabrelay command: $(LAUNCHER_DIR)/tabrelay (a link to $(abspath $(BIN)/tabrelay))"; \
	  case ":$$PATH:" in *":$(LAUNCHER_DIR):"*) ;; \
	    *) echo "$(LAUNCHER_DIR) is not on your PATH yet: log in again, or run: export PATH=\"$(LAUNCHER_DIR):\$$PATH\"";; esac; \
	fi

serve: $(RUN_STAMP)
	$(BIN)/tabrelay serve

test: system-test node $(TEST_STAMP) lint editors typescript-check corpus
	node --test extension/test/ tests/page_scripts/
	$(BIN)/pytest

lint: $(TEST_STAMP)
	$(BIN)/ruff format --check desktop tests installers
	$(BIN)/ruff check desktop tests installers
	$(BIN)/mypy

# Real code editors for the e2e pages (tests/e2e/pages/editors): CodeMirror 5 and 6, Monaco, Ace and
# ProseMirror from npm at the versions the lock pins, the ones without a browser build bundled
# by esbuild. Fetched once (npm's cache serves a clean reinstall offline), then only rebuilt.
EDITORS := tests/e2e/pages/vendor
.PHONY: editors
editors: $(EDITORS)/build/.stamp

$(EDITORS)/node_modules/.stamp: $(EDITORS)/package.json $(EDITORS)/package-lock.json | node
	@command -v npm >/dev/null || $(MAKE) --no-print-directory apt-npm
	cd $(EDITORS) && npm ci --no-audit --no-fund --ignore-scripts --prefer-offline
	touch $@

$(EDITORS)/build/.stamp: $(EDITORS)/node_modules/.stamp $(EDITORS)/build.mjs $(wildcard $(EDITORS)/src/*.js)
	node $(EDITORS)/build.mjs
	touch $@

# The TypeScript compiler, @playwright/test, Node's and Chrome's types at the versions the lock
# pins, to type-check the scripts recipes export to (tests/unit/test_recipe_export_code.py), the
# page scripts and the extension (tests/unit/test_extension_types.py). No browser: the install
# scripts are not run.
TSCHECK := tests/typescript_check
.PHONY: typescript-check
typescript-check: $(TSCHECK)/node_modules/.stamp

$(TSCHECK)/node_modules/.stamp: $(TSCHECK)/package.json $(TSCHECK)/package-lock.json | node
	@command -v npm >/dev/null || $(MAKE) --no-print-directory apt-npm
	cd $(TSCHECK) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts --prefer-offline
	touch $@

# The outline corpus (tests/support/corpus.py): real apps the snapshot is held against Chrome's
# own accessibility tree on. JupyterLab, datasette and Django from PyPI at the versions the lock
# pins, in a virtualenv of their own; TodoMVC and Swagger UI from npm; the Python documentation
# from Debian.
CORPUS_DIR := tests/corpus
CORPUS_VENV := .venv-corpus
CORPUS_STAMP := $(CORPUS_VENV)/.stamp-$(shell sha1sum $(CORPUS_DIR)/requirements.lock | cut -c1-12)
.PHONY: corpus
corpus: $(CORPUS_STAMP) $(CORPUS_DIR)/node_modules/.stamp
	$(call apt_ensure,python3-doc)

$(CORPUS_STAMP): $(CORPUS_DIR)/requirements.lock | python-venv
	@test -x $(CORPUS_VENV)/bin/python || $(PYTHON) -m venv $(CORPUS_VENV)
	$(CORPUS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORPUS_VENV)/bin/python -m pip install --quiet -r $(CORPUS_DIR)/requirements.lock
	touch $@

$(CORPUS_DIR)/node_modules/.stamp: $(CORPUS_DIR)/package.json $(CORPUS_DIR)/package-lock.json | node
	@command -v npm >/dev/null || $(MAKE) --no-print-directory apt-npm
	cd $(CORPUS_DIR) && npm ci --no-audit --no-fund --ignore-scripts --prefer-offline
	touch $@

# The peers come from npm (npx); trayer (from system-test) gives Xvfb a system tray for the
# tray app's figures.
bench: system-test node $(TEST_STAMP) corpus
	$(call apt_ensure,$(APT_BENCH))
	@command -v npx >/dev/null || $(MAKE) --no-print-directory apt-npm
	$(BIN)/python tests/bench/run.py

system-run:
	$(call apt_ensure,$(APT_RUN))

system-test:
	$(call apt_ensure,$(APT_TEST))

node:
	@command -v node >/dev/null || $(MAKE) --no-print-directory apt-nodejs

apt-nodejs:
	$(call apt_ensure,nodejs)

apt-npm:
	$(call apt_ensure,npm)

python-venv:
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || $(MAKE) --no-print-directory apt-python3-venv
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)

apt-python3-venv:
	$(call apt_ensure,python3-venv)

$(RUN_STAMP): pyproject.toml | python-venv
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | python-venv
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) $(CORPUS_VENV) build dist .pytest_cache .mypy_cache .ruff_cache

# Installers (docs/install.md). `dist` builds for the OS it runs on: dist/tabrelay/ on Linux
# and Windows, dist/Tabrelay.app on macOS (installers/macos/build.sh signs it and makes the
# dmg; installers/windows/tabrelay.iss makes the Windows setup).
.PHONY: dist deb extension
dist: system-run $(DIST_STAMP)
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist \
		--workpath build/pyinstaller installers/pyinstaller/tabrelay.spec

deb: dist
	$(BIN)/python installers/linux/build_deb.py

extension:
	$(PYTHON) installers/pack_extension.py

$(DIST_STAMP): pyproject.toml | python-venv
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dist]'
	touch $@

# PNGs of the tray app for the README (docs/screenshots/): the real app under Xvfb with openbox,
# trayer as the system tray, real Chromium with the extension, and a scripted MCP client.
.PHONY: screenshots
screenshots: system-test $(TEST_STAMP)
	$(call apt_ensure,$(APT_SCREENSHOTS))
	$(BIN)/python tests/gui/screenshots.py
