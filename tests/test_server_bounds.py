"""Two visitors of one hosted server: while one runs a program whose own error message once
held the server's interpreter for minutes, the other's page, the health check and SIGTERM
are answered within their bounds."""

from __future__ import annotations

import os
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.bench.served import server
from explorer.views.permalink import encode_code
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser
# Raised by the program itself, anywhere: the scene of an error reads every message.
ATTACK = ('raise RuntimeError("one of the variables needed for gradient computation has been '
          'modified by an inplace operation: [x [" + "1" * 37 + "X")\n')
HEALTH_S = 2.0  # a health check answers in milliseconds; a held interpreter, never
PAGE_S = 30.0  # the other visitor's run, shown: a few seconds on a busy machine
STOP_S = 10.0  # SIGTERM to exit


@pytest.fixture(scope="module")
def hosted() -> Iterator[tuple[str, Any]]:
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "streamlit-bounds.log", "w+b") as log, server(log, hosted=True) as (
            url, process):
        yield url, process


class Health(threading.Thread):
    """The health check asked every 0.2 s until stopped: the slowest answer."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.slowest, self.done = url, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            start = time.monotonic()
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health",
                                            timeout=60) as answer:
                    answer.read()
            except OSError:
                pass
            self.slowest = max(self.slowest, time.monotonic() - start)


def _tab(browser: Any) -> Any:
    tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    tab.set_default_timeout(int(PAGE_S * 1000))
    return tab


def test_one_visitors_error_message_holds_no_other_visitor(browser: Any,
                                                           hosted: tuple[str, Any]) -> None:
    url, process = hosted
    health = Health(url)
    health.start()
    attacker = _tab(browser)
    attacker.goto(f"{url}/Playground?code={encode_code(ATTACK)}")
    expect(attacker.get_by_text("RuntimeError").first).to_be_visible()

    other = _tab(browser)
    start = time.monotonic()
    other.goto(f"{url}/Playground")
    other.get_by_role("button", name="Run").click()
    expect(other.get_by_text("Output").first).to_be_visible()
    shown = time.monotonic() - start
    attacker.reload()  # the error panel drawn again, as every rerun draws it
    expect(attacker.get_by_text("RuntimeError").first).to_be_visible()
    health.done.set()
    health.join()
    other.screenshot(path=ARTIFACTS / "bounds-other-visitor.png")
    attacker.context.close()
    other.context.close()
    assert shown < PAGE_S and health.slowest < HEALTH_S, (shown, health.slowest)

    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=STOP_S)
