"""Sharing in headless Chromium: the Share button copies the page's URL, and that URL opened
in a new browser (a new session) shows the same page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser
GRAPH = "iframe.autograd-graph"


def _tab(browser: Any) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  permissions=["clipboard-read", "clipboard-write"])
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    return tab


def _picture(tab: Any) -> str:
    svg = tab.frame_locator(GRAPH).locator("svg")
    expect(svg).to_be_visible()
    return svg.inner_html()


def test_share_copies_a_link_that_opens_the_same_graph_page(browser: Any, app_url: str) -> None:
    tab = _tab(browser)
    tab.goto(f"{app_url}/Graph?lang=zh")
    tab.get_by_role("button", name="运行").click()
    _picture(tab)
    tab.get_by_role("button", name="‹ 上一步").click()
    expect(tab.get_by_text("第 6 行执行之后的状态")).to_be_visible()
    _picture(tab)
    toggle = tab.get_by_text("保存的张量", exact=True)  # the saved-tensors toggle, below
    tab.mouse.wheel(0, 600)  # the picture: scrolled to first, as a person would
    expect(toggle).to_be_in_viewport()
    toggle.click()  # off
    expect(tab).to_have_url(re.compile(r"[?&]saved=0"))
    expect(tab.get_by_label("保存的张量", exact=True)).not_to_be_checked()
    shown = _picture(tab)

    share = tab.frame_locator("[data-testid='stSidebar'] iframe").first
    share.get_by_role("button", name="复制本页链接").click()
    expect(share.get_by_text("链接已复制")).to_be_visible()
    link = tab.evaluate("navigator.clipboard.readText()")
    assert link == tab.url and "/Graph?" in link and "code=z" in link
    tab.screenshot(path=ARTIFACTS / "share-before.png")

    fresh = _tab(browser)  # another browser profile: a new session, nothing shared but the link
    fresh.goto(link)
    expect(fresh.get_by_text("第 6 行执行之后的状态")).to_be_visible()
    expect(fresh.get_by_text("来自分享的链接")).to_be_visible()
    assert _picture(fresh) == shown
    assert fresh.get_by_label("代码").inner_text() == tab.get_by_label("代码").inner_text()
    assert fresh.url == link
    fresh.screenshot(path=ARTIFACTS / "share-after.png")
    tab.context.close()
    fresh.context.close()


def test_a_damaged_link_says_so_and_opens_the_page(browser: Any, app_url: str) -> None:
    tab = _tab(browser)
    tab.goto(f"{app_url}/Backward?code=zeNoDAMAGED&replay=3")
    expect(tab.get_by_text("This link could not be opened")).to_be_visible()
    expect(tab.get_by_text("Press Run to execute the program.")).to_be_visible()
    tab.get_by_role("button", name="Run").click()
    expect(tab.get_by_text("1. MeanBackward0")).to_be_visible()
    tab.context.close()


def test_the_open_tab_of_the_custom_function_page_is_in_its_link(browser: Any,
                                                                 app_url: str) -> None:
    tab = _tab(browser)
    tab.goto(f"{app_url}/Custom_Function")
    tab.get_by_role("button", name="Run").click()
    expect(tab.get_by_text("gradcheck passed").first).to_be_visible()
    tab.get_by_role("tab", name="Backward pass").click()
    expect(tab).to_have_url(re.compile(r"[?&]tab=backward"))
    fresh = _tab(browser)
    fresh.goto(tab.url)
    expect(fresh.get_by_role("tab", name="Backward pass")).to_have_attribute(
        "aria-selected", "true")
    expect(fresh.get_by_role("heading", name="Step by step")).to_be_visible()
    tab.context.close()
    fresh.context.close()
