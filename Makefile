# Two entry points on a fresh Debian machine:
#   make run    installs everything the app needs and starts it on http://localhost:8501
#   make test   installs the app and the test tools (incl. Chromium) and runs every test
VENV    ?= .venv
PYTHON  ?= python3
PORT    ?= 8501
TORCH   ?= torch==2.13.0
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT     := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends

.PHONY: run test install install-test system system-test lint bench clean

run: install
	$(VENV)/bin/streamlit run streamlit_app.py --server.port $(PORT)

test: install-test
	$(VENV)/bin/python -m pytest

lint: install-test
	$(VENV)/bin/ruff check .

install: system $(VENV)/.installed

install-test: install system-test $(VENV)/.installed-test

# graphviz's `dot`, bubblewrap and libseccomp (the walls around a run: SECURITY.md) and the
# venv module, from Debian, only when missing.
system:
	@command -v dot >/dev/null && command -v bwrap >/dev/null && \
	  $(PYTHON) -c "import ctypes.util as u, ensurepip; assert u.find_library('seccomp')" \
	  2>/dev/null || \
	  ($(SUDO) apt-get update && $(APT) graphviz bubblewrap libseccomp2 python3-venv)

# Debian's Chromium for the browser tests (Playwright drives the system binary), with fonts
# for Chinese and emoji so that screenshots show what a person sees; HAProxy for the test of
# deploy/ (two replicas behind it).
system-test:
	@command -v chromium >/dev/null && fc-list :lang=zh | grep -q . && \
	  command -v haproxy >/dev/null || \
	  ($(SUDO) apt-get update && $(APT) chromium fonts-noto-cjk fonts-noto-color-emoji haproxy)

$(VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet "$(TORCH)"
	$(VENV)/bin/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(VENV)/bin/pip install --quiet -e ".[test]"
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
