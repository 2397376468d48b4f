"""Shared fixtures: the real app served over HTTP, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from playwright.sync_api import expect

from explorer.worker import WorkerPool

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # server log and screenshots of the browser tests
expect.set_options(timeout=20_000)  # two cores shared with a worker pool: be patient
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium's own background traffic would be refused by a closed network: switch it off.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """A real worker pool with the app's limits."""
    workers = WorkerPool(size=2)
    yield workers
    workers.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """`streamlit run streamlit_app.py` on a free port, until the session ends."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "streamlit.log", "w+b") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, server, log)
            yield url
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"streamlit exited: {log.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit did not become healthy within 60 s")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium. Outside CI, browser tests skip where it is not installed."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing in CI: `make test` should install it")
        pytest.skip("Debian's chromium is not installed (`make test` installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, app_url: str) -> Iterator[Any]:
    """A fresh browser tab (own session) with a desktop-sized window."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield tab
    context.close()
