"""What a person sees at a desktop's and a phone's size, in English and Chinese: the pages'
parts side by side or stacked, never on top of one another, and nothing wider than the
screen. Screenshots go to artifacts/ to be looked at."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}
# The parts of a page that must not overlap: widgets, the editor, pictures, tables, text.
PARTS = ("[data-testid='stMain'] [data-testid='stElementContainer']:not(:has("
         "[data-testid='stElementContainer']))")
OVERLAPS = """(selector) => {
    const boxes = [...document.querySelectorAll(selector)]
        .map(e => [e, e.getBoundingClientRect()])
        .filter(([e, r]) => r.width > 0 && r.height > 0);
    const found = [];
    for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
            const [a, p] = boxes[i], [b, q] = boxes[j];
            const x = Math.min(p.right, q.right) - Math.max(p.left, q.left);
            const y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
            if (x > 2 && y > 2) found.push([a.dataset.testid || a.className,
                                            b.dataset.testid || b.className,
                                            (a.innerText || "").slice(0, 40),
                                            (b.innerText || "").slice(0, 40)]);
        }
    return found;
}"""


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["Graph", "Backward"])
def test_nothing_overlaps_or_overflows(browser: Any, app_url: str, name: str, lang: str,
                                       size: str) -> None:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{app_url}/{name}?lang={lang}")
        page.get_by_role("button", name="Run" if lang == "en" else "运行").click()
        shown = page.locator("[data-testid='stPlotlyChart'] .textpoint" if name == "Backward"
                             else "[data-testid='stMain'] iframe").last  # the graph's
        expect(shown).to_be_visible()
        page.wait_for_timeout(500)  # the last parts settle
        assert page.evaluate(OVERLAPS, PARTS) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=ARTIFACTS / f"layout-{name.lower()}-{lang}-{size}.png",
                        full_page=True)
    finally:
        context.close()
