"""The backward animation in headless Chromium: play moves the highlight to the last step."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_play_walks_the_engine_steps_to_the_last(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Backward")
    page.get_by_role("button", name="Run").click()
    chart = page.locator("[data-testid='stPlotlyChart']")
    title = chart.locator(".textpoint").last
    expect(title).to_have_text("step 1 of 5: MeanBackward0")
    outline = chart.locator(".scatterlayer .trace").nth(2).locator("path").first
    before = outline.get_attribute("d")
    chart.locator(".updatemenu-button", has_text="Fast").click()
    expect(title).to_have_text("step 5 of 5: AccumulateGrad", timeout=10_000)
    assert outline.get_attribute("d") != before  # the highlighted node moved
    grip = chart.locator(".slider-grip-rect")
    rail = chart.locator(".slider-rail-rect")
    grip_box, rail_box = grip.bounding_box(), rail.bounding_box()
    assert grip_box["x"] + grip_box["width"] >= rail_box["x"] + rail_box["width"] - 2
    page.screenshot(path=ARTIFACTS / "backward-page.png")
