"""One screen, as a person sees it in Chromium (en and zh, a desktop's 1400×1000 and a phone's
390×844): the picture, its step controls and the editor's marked line in view together; every
line of every preset whole in the editor; the marked line the one the caption names, on every
page and from a shared link. Screenshots go to artifacts/ to be looked at."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content.examples import EXAMPLES
from explorer.content.i18n import text
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}
PICTURE = {"Graph": "iframe.autograd-graph", "Backward": "[data-testid='stPlotlyChart']"}
STEPS = ("first", "back", "forward", "last")  # the step buttons, one row under the picture


@pytest.fixture
def tab(browser: Any, request: Any) -> Iterator[Any]:
    """A fresh tab of the size `request.param` names (a key of SIZES)."""
    width, height = SIZES[request.param]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def caption_line(page: Any, lang: str) -> int:
    """The line "State after line N" names (the page shows one)."""
    before, after = text("after_line", lang, line="@").split("@")
    caption = page.get_by_text(re.compile(f"^{re.escape(before)}\\d+{re.escape(after)}$"))
    expect(caption).to_have_count(1)
    return int(caption.inner_text()[len(before):len(caption.inner_text()) - len(after)])


def marked_line(page: Any) -> int:
    """The first line (1-based) the editor marks as the step's."""
    expect(page.locator(".cm-step-line").first).to_be_visible()
    return 1 + page.locator(".cm-content .cm-line").evaluate_all(
        "lines => lines.findIndex(l => l.classList.contains('cm-step-line'))")


def agree(page: Any, lang: str, wanted: int | None = None) -> int:
    """The caption's line (once it is `wanted`, if given), once the editor marks the same."""
    if wanted is not None:
        expect(page.get_by_text(text("after_line", lang, line=wanted), exact=True)).to_be_visible()
    line = caption_line(page, lang)
    expect(page.locator(".cm-content .cm-line").nth(line - 1)).to_have_class(
        re.compile(r"\bcm-step-line\b"))
    assert marked_line(page) == line
    return line


def in_view(page: Any, *parts: Any) -> None:
    """Every part wholly inside the window as it is scrolled now, none under the page's
    header (Streamlit's bar at the top, which stays where it is as the page scrolls)."""
    size = page.viewport_size
    header = page.locator("[data-testid='stHeader']").bounding_box()
    top = header["y"] + header["height"] if header else 0
    for part in parts:
        box = part.bounding_box()
        assert box is not None, part
        assert box["x"] >= -1 and box["x"] + box["width"] <= size["width"] + 1, (part, box)
        assert box["y"] >= top - 1 and box["y"] + box["height"] <= size["height"] + 1, (
            part, box, top)


@pytest.mark.parametrize("tab", SIZES, indirect=True)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["Graph", "Backward"])
def test_picture_controls_and_marked_line_fit_one_screen(tab: Any, app_url: str, name: str,
                                                         lang: str) -> None:
    page, phone = tab, tab.viewport_size["width"] < 640
    page.goto(f"{app_url}/{name}?lang={lang}")
    page.get_by_role("button", name=text("run", lang)).click()
    picture = page.locator(PICTURE[name]).first
    if name == "Graph":
        expect(page.frame_locator(PICTURE[name]).locator("svg")).to_be_visible()
    else:
        expect(picture.locator(".textpoint").last).to_be_visible()
    buttons = [page.get_by_role("button", name=text(label, lang)) for label in STEPS]
    marked = page.locator(".cm-step-line").first
    expect(marked).to_be_visible()
    page.wait_for_timeout(300)  # the last parts settle
    if phone:  # scrolled so that the controls are at the bottom: the rest is in view too
        buttons[0].evaluate("button => button.scrollIntoView({block: 'end'})")
        page.wait_for_timeout(300)
    in_view(page, picture, marked, *buttons)
    # The controls are one row, right under the picture.
    rows = {round(b.bounding_box()["y"]) for b in buttons}
    assert len(rows) == 1, rows
    gap = rows.pop() - (picture.bounding_box()["y"] + picture.bounding_box()["height"])
    assert 0 <= gap < 40, gap
    if name == "Backward":  # plotly's tools (on a hover or a touch) leave the step's caption be
        picture.hover(position={"x": 5, "y": 5})
        tools, caption = picture.locator(".modebar").first, picture.locator(".textpoint").last
        expect(tools).to_be_visible()
        above, below = tools.bounding_box(), caption.bounding_box()
        assert above["y"] + above["height"] <= below["y"], (above, below)
    size = "phone" if phone else "desktop"
    page.screenshot(path=ARTIFACTS / f"screen-{name.lower()}-{lang}-{size}.png")
    if phone:
        return
    # ← and → step on both pages; the caption and the mark move together.
    page.evaluate("document.activeElement.blur()")
    if name == "Graph":
        last = agree(page, lang)
        page.keyboard.press("ArrowLeft")
        agree(page, lang, last - 1)
        page.keyboard.press("ArrowRight")
        agree(page, lang, last)
        # A node clicked on the picture: its line marked, named by the caption, and still in
        # view; a step moved to marks its own line again.
        page.frame_locator(PICTURE[name]).locator("g.node", has_text="AddBackward0").click()
        expect(marked).to_have_text("y = x + 2")
        expect(page.get_by_text(text("after_node", lang, line=3, node="AddBackward0",
                                     after=last), exact=True)).to_be_visible()
        in_view(page, picture, marked, *buttons)
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("ArrowLeft")
        agree(page, lang, last - 1)
    else:
        page.keyboard.press("ArrowLeft")  # the last statement that built the graph
        agree(page, lang, 5)
        expect(marked).to_have_text("out = z.mean()")


def test_every_presets_longest_line_is_shown_whole(page: Any, app_url: str) -> None:
    """At 1400 px the editor shows 60 characters a line, and wraps what is longer: the longest
    line of every preset is all in view, none cut at the editor's edge."""
    page.goto(f"{app_url}/Playground")
    longest = [max(e.code.splitlines(), key=len) for e in EXAMPLES]
    sixty = "x" * 60
    page.get_by_label("Code").fill("\n".join([sixty, *longest]))
    lines = page.locator(".cm-content .cm-line")
    expect(lines).to_have_count(1 + len(longest))
    assert [t.replace("\u200b", "") for t in lines.all_inner_texts()][1:] == longest
    cut = page.locator(".cm-scroller").evaluate("""scroller => {
        const edge = scroller.getBoundingClientRect().right;
        const lines = [...scroller.querySelectorAll('.cm-line')];
        return {wider: scroller.scrollWidth - scroller.clientWidth,
                cut: lines.filter(l => l.getBoundingClientRect().right > edge + 1
                                       || l.scrollWidth > l.clientWidth + 1)
                          .map(l => l.textContent)};
    }""")
    assert cut == {"wider": 0, "cut": []}
    heights = lines.evaluate_all("ls => ls.map(l => l.getBoundingClientRect().height)")
    row = min(heights)
    assert heights[0] < row * 1.5, heights  # 60 characters fit one row, unwrapped
    page.screenshot(path=ARTIFACTS / "screen-editor-longest-lines.png")


@pytest.mark.parametrize("lang", ["en"])  # zh: test_picture_controls_and_marked_line_…
def test_the_marked_line_is_the_captions_on_every_page_and_from_a_link(
        browser: Any, app_url: str, lang: str) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        for name in ("Playground", "Graph", "NumPy"):
            page.goto(f"{app_url}/{name}?lang={lang}")
            page.get_by_role("button", name=text("run", lang)).click()
            shown = agree(page, lang)
            page.get_by_role("button", name=text("back", lang)).click()
            expect(page.get_by_text(text("after_line", lang, line=shown))).to_have_count(0)
            shown = agree(page, lang)
            page.wait_for_timeout(300)  # the URL says what is shown
            link = page.url
            opened = browser.new_context(viewport={"width": 1400, "height": 1000})
            try:
                other = opened.new_page()
                other.goto(link)
                try:
                    assert agree(other, lang) == shown, name
                finally:
                    other.screenshot(path=ARTIFACTS / f"screen-link-{name.lower()}-{lang}.png")
            finally:
                opened.close()
        page.goto(f"{app_url}/Backward?lang={lang}")
        page.get_by_role("button", name=text("run", lang)).click()
        page.get_by_role("button", name=text("first", lang)).click()
        agree(page, lang, 2)  # the first statement that built the graph
        page.get_by_role("button", name=text("forward", lang)).click()
        agree(page, lang, 3)
    finally:
        context.close()
