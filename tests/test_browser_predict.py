"""Predict, then see, in headless Chromium: a shared link that asks, a right and a wrong
answer (a vector), the step shown only once answered, in English and Chinese, and a lesson
that names what it asks."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content import lessons
from explorer.content.i18n import text
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def _ask(page: Any, url: str, run: str) -> Any:
    """The Backward page opened from a link that asks; the seed program run."""
    page.goto(url)
    page.get_by_role("button", name=run).click()
    return page.locator("[data-testid='stPlotlyChart']").locator(".textpoint").last


def _waiting(lang: str, step: int, name: str) -> str:
    """The picture's caption while step `step` of 5 waits for a prediction."""
    return text("replay_waiting", lang, step=step, steps=5, name=name)


def test_a_shared_link_asks_before_it_shows_and_judges_right_and_wrong(page: Any,
                                                                        app_url: str) -> None:
    title = _ask(page, f"{app_url}/Backward?predict=1", "Run")
    # Step 1 named as the slider names it, what it sends hidden until predicted.
    expect(title).to_have_text(_waiting("en", 1, "MeanBackward0"))
    toggle = page.get_by_text("Predict, then see").bounding_box()
    slider = page.locator("[data-testid='stSlider']").first.bounding_box()
    heading = page.get_by_role("heading", name=text("engine_steps", "en")).bounding_box()
    assert slider["y"] < toggle["y"] < heading["y"]  # by the controls, above the panel
    sent = page.get_by_label("The gradient sent to")
    expect(sent).to_have_count(1)
    sent.fill("0.25")  # mean over 4 entries: one number stands for each
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_text("Right: The gradient sent to")).to_be_visible()
    expect(title).to_have_text("step 1 of 5: MeanBackward0")
    expect(page.get_by_text("Backward call #1: 1 of 1 predictions right.")).to_be_visible()
    page.get_by_role("button", name="Forward ›").click()
    expect(title).to_have_text(_waiting("en", 2, "MulBackward0"))  # as the slider says
    page.get_by_label("The gradient sent to").fill("[[0.75, 0.75], [0.75, 0.5]]")
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_text("The entries that differ: [1, 1].")).to_be_visible()
    expect(page.get_by_text("Backward call #1: 1 of 2 predictions right.")).to_be_visible()
    expect(title).to_have_text("step 2 of 5: MulBackward0")
    assert "predict=1" in page.url  # the link still asks; no answer is in it
    assert "0.75" not in page.url
    page.screenshot(path=ARTIFACTS / "backward-predict.png")


def test_predicting_in_chinese_says_what_is_wrong_with_an_answer(page: Any,
                                                                 app_url: str) -> None:
    title = _ask(page, f"{app_url}/Backward?lang=zh&predict=1", "运行")
    expect(title).to_have_text(_waiting("zh", 1, "MeanBackward0"))
    page.get_by_label("发往").fill("x.grad")
    page.get_by_role("button", name="检查").click()
    expect(page.get_by_text("请写一个数，例如 0.5")).to_be_visible()
    expect(title).to_have_text(_waiting("zh", 1, "MeanBackward0"))  # still hidden
    page.get_by_label("发往").fill("0.25")
    page.get_by_role("button", name="检查").click()
    expect(page.get_by_text("1 个预测中答对 1 个")).to_be_visible()
    expect(title).to_have_text("第 1 步（共 5 步）：MeanBackward0")
    page.screenshot(path=ARTIFACTS / "backward-predict-zh.png")


def test_a_lesson_asks_what_it_names_with_its_hint(page: Any, app_url: str) -> None:
    lesson = lessons.by_key("backward")
    page.goto(f"{app_url}/?lang=zh")
    expect(page.locator("[data-testid='stApp']")).to_have_attribute(
        "data-test-script-state", "notRunning")
    card = page.locator("[data-testid='stExpander']").filter(has_text=lesson.title["zh"])
    card.locator("summary").click()
    card.get_by_role("button", name=text("lesson_open", "zh", title=lesson.programs[0].title[
        "zh"], page=text("backward_page", "zh"))).click()
    title = page.locator("[data-testid='stPlotlyChart']").locator(".textpoint").last
    expect(title).to_have_text("第 1 步（共 5 步）：MeanBackward0")  # not asked: shown
    page.get_by_role("button", name="最后 »").click()
    grad = page.get_by_label("这一步之后的 x.grad")
    expect(grad).to_be_visible()
    expect(page.get_by_text(lesson.hint["zh"])).to_be_visible()
    expect(title).to_have_text(_waiting("zh", 5, "AccumulateGrad"))  # as the slider says
    grad.fill("[[4.5, 4.5], [4.5, 4.5]]")
    page.get_by_role("button", name="检查").click()
    expect(page.get_by_text("正确：这一步之后的 x.grad 是")).to_be_visible()
    expect(title).to_have_text("第 5 步（共 5 步）：AccumulateGrad")
    assert "ask=y%2Cx.grad" in page.url or "ask=y,x.grad" in page.url  # a shared link asks too
    page.screenshot(path=ARTIFACTS / "backward-predict-lesson-zh.png")
