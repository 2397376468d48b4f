"""The graphs torch.func's transforms ran backward through, on the Graph page in headless
Chromium: under the program's own, each pass's graph in a frame of its own, the transforms
around it said, another drawn when chosen (en on a desktop, zh on a phone). Screenshots go to
artifacts/ to be looked at."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content.i18n import text
from explorer.views.permalink import encode_code
from tests.conftest import ARTIFACTS
from tests.test_library_passes import TRANSFORMS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("lang", "viewport"), [("en", (1400, 1000)), ("zh", (390, 844))])
def test_each_pass_is_drawn_in_its_own_frame(browser: Any, app_url: str, lang: str,
                                             viewport: tuple[int, int]) -> None:
    context = browser.new_context(viewport=dict(zip(("width", "height"), viewport,
                                                    strict=True)))
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{app_url}/Graph?lang={lang}&code={encode_code(TRANSFORMS)}&library=1")
    frame = page.locator(f"iframe[title='{text('library_title', lang)}']")
    frame.scroll_into_view_if_needed()
    svg = page.frame_locator(f"iframe[title='{text('library_title', lang)}']").locator("svg")
    expect(svg.get_by_text("SinBackward0", exact=True)).to_be_visible()
    said = text("library_transform", lang, transform="vmap", level=1)
    expect(page.get_by_text(said, exact=False)).to_be_visible()
    page.screenshot(path=ARTIFACTS / f"library-{lang}.png", full_page=True)
    choice = page.get_by_label(text("library_choice", lang))
    choice.scroll_into_view_if_needed()
    choice.click()  # the innermost level of d³
    page.get_by_role("option", name=" · ".join((text("line_short", lang, line=15), "grad",
                                               text("level_short", lang, level=3)))).click()
    expect(svg.get_by_text("PowBackward0", exact=True)).to_be_visible()
    expect(svg.get_by_text("SinBackward0", exact=True)).to_have_count(0)
    frame.screenshot(path=ARTIFACTS / f"library-{lang}-cube.png")
    context.close()
