"""The training page in headless Chromium: an nn.Sequential model with Adam, typed in the
editor, trains; its loss curve is drawn, an iteration's backward pass opens, and the page's
link opened in a new browser shows the same."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content.i18n import text
from tests.conftest import ARTIFACTS
from tests.test_training import ADAM

pytestmark = pytest.mark.browser
CHART = "[data-testid='stPlotlyChart']"


def _trained_and_replayed(tab: Any) -> str:
    """Wait for the loss curve and iteration 12's replay; the words of the loss's fall."""
    fell = tab.get_by_text(re.compile(r"The loss fell from \S+ to \S+ \(.+\)\."))
    expect(fell).to_be_visible(timeout=60_000)
    loss = tab.locator(CHART).first
    expect(loss.locator(".gtitle")).to_have_text("Loss")
    line = loss.locator(".scatterlayer .trace path.js-line")
    expect(line).to_have_attribute("d", re.compile(r"^M0,[\d.]+(L[\d.]+,[\d.]+){4,}$"))
    points = [tuple(map(float, p.split(","))) for p in line.get_attribute("d")[1:].split("L")]
    assert points[-1][1] > points[0][1] + 100  # the whole width, falling (SVG y grows down)
    norms = tab.locator(CHART).nth(1)
    expect(norms.locator(".legendtext")).to_have_count(4)
    assert set(norms.locator(".legendtext").all_text_contents()) == {
        f"‖model.{layer}.{kind}.grad‖" for layer in (0, 2) for kind in ("weight", "bias")}
    replay = tab.locator(CHART).last.locator(".textpoint").last
    expect(replay).to_have_text(re.compile(r"step 1 of \d+: MseLossBackward0"), timeout=60_000)
    expect(tab.locator("[data-testid='stException']")).to_have_count(0)
    expect(tab.locator("[data-testid='stAlertContentError']")).to_have_count(0)
    return fell.inner_text()


def test_an_nn_sequential_model_with_adam_trains_and_replays(page: Any, browser: Any,
                                                            app_url: str) -> None:
    page.goto(f"{app_url}/Training")
    page.get_by_label("Code").fill(ADAM)
    page.get_by_role("button", name="Train").click()
    iteration = page.get_by_role("spinbutton", name=text("backward_call", "en"))
    expect(iteration).to_have_value("30", timeout=60_000)  # the last, to begin with
    iteration.fill("12")
    iteration.press("Enter")
    page.get_by_role("button", name=text("open_iteration", "en", k=12)).click()
    said = _trained_and_replayed(page)
    page.screenshot(path=ARTIFACTS / "training-adam.png", full_page=True)
    expect(page).to_have_url(re.compile(r"[?&]opened=1"))
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    fresh = context.new_page()
    fresh.goto(page.url)  # a new browser, a new session: the same program, curve and replay
    assert _trained_and_replayed(fresh) == said
    assert fresh.get_by_label("Code").inner_text() == page.get_by_label("Code").inner_text()
    context.close()
