"""The graph page in headless Chromium: the SVG a person sees, with the expected labels."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_the_graph_page_shows_the_seed_graph_as_svg(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Graph")
    page.get_by_role("button", name="Run").click()
    outer = page.frame_locator("[data-testid='stMain'] iframe").first
    # The picture's own frame may run the viewer's script but has no origin of its own.
    expect(outer.locator("iframe")).to_have_attribute("sandbox", "allow-scripts")
    svg = outer.frame_locator("iframe").locator("svg")
    expect(svg).to_be_visible()
    for label in ("MeanBackward0", "MulBackward0", "AddBackward0", "AccumulateGrad", "out"):
        expect(svg.get_by_text(label, exact=True).first).to_be_visible()
    expect(svg.locator("g.node")).to_have_count(7)  # x, 5 backward nodes, out
    page.screenshot(path=ARTIFACTS / "graph-page.png")

    # A node chosen in its details marks the statement that made it in the editor.
    expect(page.locator(".cm-step-line")).to_have_text("print(x.grad)")  # the last step
    page.get_by_label("Node details").scroll_into_view_if_needed()  # see test_export.py
    page.get_by_label("Node details").click()
    page.get_by_role("option", name="MulBackward0").first.click()
    expect(page.locator(".cm-step-line")).to_have_text("z = y * y * 3")
    expect(page.get_by_role("table")).to_contain_text("made on line")

    page.get_by_role("button", name="« First").scroll_into_view_if_needed()
    page.get_by_role("button", name="« First").click()
    expect(page.get_by_text("No tensor requires grad yet")).to_be_visible()
