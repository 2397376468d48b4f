"""Gradients of gradients on the Graph page, in headless Chromium: each derivative order in its
own fill with its size in the caption, one order at a time on a click, and the gradient the
first grad started from under its name (en on a desktop, zh on a phone). Screenshots go to
artifacts/ to be looked at."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content.i18n import text
from explorer.trace.graph_view import ORDER_FILLS
from explorer.views.permalink import encode_code
from tests.conftest import ARTIFACTS
from tests.test_orders import CUBE

pytestmark = pytest.mark.browser
GRAPH = "iframe.autograd-graph"


def _fills(svg: Any) -> list[str]:
    """The fill of each node's box."""
    return svg.locator("g.node polygon").evaluate_all("(ps) => ps.map(p => p.getAttribute('fill'))")


@pytest.mark.parametrize(("lang", "viewport"), [("en", (1400, 1000)), ("zh", (390, 844))])
def test_each_order_in_its_fill_and_one_order_at_a_time(browser: Any, app_url: str, lang: str,
                                                          viewport: tuple[int, int]) -> None:
    context = browser.new_context(viewport=dict(zip(("width", "height"), viewport,
                                                    strict=True)))
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{app_url}/Graph?lang={lang}&code={encode_code(CUBE)}&step=4&roots=g,h")
    svg = page.frame_locator(GRAPH).locator("svg")
    for said in ("∂y/∂y", "∂g/∂(PowBackward0)"):  # the gradients the derivative graph saved
        expect(svg.get_by_text(said, exact=True)).to_be_visible()
    fills = _fills(svg)
    assert fills.count(ORDER_FILLS[0][0]) == 3 and fills.count(ORDER_FILLS[1][0]) == 3
    page.screenshot(path=ARTIFACTS / f"orders-{lang}.png")
    sizes = page.get_by_text(re.compile(re.escape(text(
        "order_nodes", lang, order=text("order_label", lang, order=3), nodes=3))))
    sizes.scroll_into_view_if_needed()
    expect(sizes).to_be_visible()
    page.locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile(f"^{text('order_label', lang, order=2)}$")).click()
    expect(svg.get_by_text("∂g/∂(PowBackward0)", exact=True)).to_have_count(0)
    expect(svg.get_by_text("∂y/∂y", exact=True)).to_be_visible()
    expect(svg.locator("g.node", has_text="Backward")).to_have_count(3)
    fills = _fills(svg)
    assert fills.count(ORDER_FILLS[0][0]) == 3 and ORDER_FILLS[1][0] not in fills
    page.screenshot(path=ARTIFACTS / f"orders-{lang}-second.png")
    context.close()
