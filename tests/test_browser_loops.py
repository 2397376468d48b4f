"""Stepping inside loops and functions, in headless Chromium: the caption and the editor say
the line's round and function, a round on jumps to the same line a round later, the fold
toggle steps over whole top-level statements, and a function's local variables have a table
of their own (en on a desktop, zh on a phone, where the loop row stays one row), and a loop's
last round is stepped and replayed. Screenshots go to artifacts/ to be looked at."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.content.i18n import text
from explorer.trace.schema import Round
from explorer.views import places
from explorer.views.permalink import encode_code
from tests.conftest import ARTIFACTS
from tests.programs import WHILE

pytestmark = pytest.mark.browser

LOOP = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
data = [(torch.tensor([1.0, 1.0]), 1.0), (torch.tensor([2.0, 0.0]), 2.0)]

def step(x, y):
    pred = (w * x).sum()
    loss = (pred - y) ** 2
    return loss

for epoch in range(3):
    for i, (x, y) in enumerate(data):
        loss = step(x, y)
        loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
print(w)
"""
PLAIN = re.compile(r"[`]")  # the code spans' marks, which the page draws as code


def _said(key: str, lang: str, **values: Any) -> str:
    return PLAIN.sub("", text(key, lang, **values))


def where(lang: str, epoch: int, i: int, line: int = 7) -> str:
    """The caption of `line` in step() at round `epoch` of 3 and round `i` of 2 of the inner
    loop (over `enumerate(data)`: its length is known too), which calls step() once a round,
    from line 12."""
    return " · ".join([_said("after_line", lang, line=line),
                       _said("round_of", lang, name="epoch", round=epoch, of=3),
                       _said("round_of", lang, name="i, (x, y)", round=i, of=2),
                       _said("in_call_nth", lang, call="step()", nth=2 * (epoch - 1) + i)
                       + _said("from_line", lang, line=12)])


def _open(page: Any, app_url: str, lang: str, step: int) -> Any:
    """The Playground running LOOP from a link, at step `step` (1-based): its caption."""
    page.goto(f"{app_url}/Playground?lang={lang}&code={encode_code(LOOP)}&step={step}")
    caption = page.locator("[data-testid='stMarkdownContainer'] p").filter(
        has_text=re.compile("^" + re.escape(_said("after_line", lang, line=7))))
    expect(caption).to_have_count(1)
    return caption


def test_a_learner_steps_inside_a_loop_and_a_function(page: Any, app_url: str) -> None:
    caption = _open(page, app_url, "en", 6)  # line 7, in step(), the first rounds
    expect(caption).to_have_text(where("en", 1, 1))
    expect(page.locator(".cm-step-line")).to_have_text("    loss = (pred - y) ** 2")
    expect(page.locator(".cm-call-line")).to_have_text("        loss = step(x, y)")  # its call
    # Beside the editor too: the marked line's rounds.
    beside = page.locator("[data-testid='stCaptionContainer']").filter(
        has_text="line 7 · " + where("en", 1, 1).split(" · ", 1)[1])
    expect(beside).to_be_visible()
    # The function's own variables, in a table of their own under the program's.
    expect(page.get_by_text("Local variables of step()", exact=True)).to_be_visible()
    tables = page.locator("[data-testid='stTable']")
    expect(tables).to_have_count(2)
    expect(tables.nth(1)).to_contain_text("pred")
    expect(tables.nth(1)).to_contain_text("● loss")
    expect(tables.nth(0)).not_to_contain_text("pred")
    # A round on: the same line, the inner loop's next round, then the outer loop's next.
    on, back = (page.get_by_role("button", name=text(k, "en"))
                for k in ("round_forward", "round_back"))
    on.click()
    expect(caption).to_have_text(where("en", 1, 2))
    on.click()
    expect(caption).to_have_text(where("en", 2, 1))
    expect(page.locator(".cm-step-line")).to_have_text("    loss = (pred - y) ** 2")
    page.screenshot(path=ARTIFACTS / "loops-en.png", full_page=True)
    back.click()
    expect(caption).to_have_text(where("en", 1, 2))
    # Folded, a step is a whole top-level statement: the loop's, which holds the line shown.
    toggle = page.get_by_role("switch", name=text("inside_steps", "en"))
    expect(toggle).to_be_checked()
    toggle.click(force=True)
    expect(page.get_by_text("State after line 10", exact=True)).to_be_visible()
    expect(page.locator(".cm-step-line").first).to_have_text("for epoch in range(3):")
    expect(page.locator(".cm-call-line")).to_have_count(0)  # a top-level statement: no call
    expect(on).to_be_disabled()
    expect(tables).to_have_count(1)  # no function's frame
    page.get_by_role("button", name=text("back", "en")).click()
    expect(page.get_by_text("State after line 5", exact=True)).to_be_visible()  # `def step`
    page.get_by_role("button", name=text("forward", "en")).click()
    page.get_by_role("button", name=text("forward", "en")).click()
    expect(page.get_by_text("State after line 17", exact=True)).to_be_visible()
    page.screenshot(path=ARTIFACTS / "loops-en-folded.png", full_page=True)


def test_the_chinese_interface_says_the_rounds_and_keeps_one_row_on_a_phone(
        browser: Any, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        caption = _open(page, app_url, "zh", 6)
        expect(caption).to_have_text(where("zh", 1, 1))
        on = page.get_by_role("button", name=text("round_forward", "zh"))
        on.click()
        on.click()
        expect(caption).to_have_text(where("zh", 2, 1))
        frame = _said("locals_of", "zh", call="step()")
        expect(page.get_by_text(frame, exact=True)).to_be_visible()
        row = page.locator("[class*='st-key-loops-']")
        parts = [row.locator("[data-testid='stCheckbox']"), on,
                 page.get_by_role("button", name=text("round_back", "zh"))]
        tops = {round(p.bounding_box()["y"] + p.bounding_box()["height"] / 2) for p in parts}
        assert max(tops) - min(tops) < 12, tops  # one row
        assert all(p.bounding_box()["x"] + p.bounding_box()["width"] <= 391 for p in parts)
        row.scroll_into_view_if_needed()
        page.screenshot(path=ARTIFACTS / "loops-zh-phone.png")
    finally:
        context.close()


@pytest.mark.parametrize(("lang", "size"), [("en", (1400, 1000)), ("zh", (390, 844))])
def test_a_while_loops_last_round_is_stepped_through_when_asked(
        browser: Any, app_url: str, lang: str, size: tuple[int, int]) -> None:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{app_url}/Playground?lang={lang}&code={encode_code(WHILE)}")
        said = page.locator("[data-testid='stCaptionContainer']").filter(
            has_text=_said("last_round", lang, loop="while", line=4,
                           ran=text("ran_rounds", lang, rounds=29)))
        expect(said).to_be_visible()  # 29 rounds: 1-10 and 20 stepped, not the last
        again = page.get_by_role("button", name=text("last_round_again", lang, round=29))
        said.scroll_into_view_if_needed()
        page.screenshot(path=ARTIFACTS / f"last-round-{lang}.png")
        again.click()
        caption = page.locator("[data-testid='stMarkdownContainer'] p").filter(
            has_text=re.compile("^" + re.escape(_said("after_line", lang, line=5))))
        expect(caption).to_have_text(" · ".join([_said("after_line", lang, line=5),
                                                 _said("round", lang, name="while", round=29)]))
        expect(page.locator(".cm-step-line")).to_have_text("    x = x * w")
        expect(said).to_have_count(0)  # the run shown now stepped through it
        expect(again).to_have_count(0)
        expect(page).to_have_url(re.compile(r"[?&]last=0\.29(&|$)"))  # the link says so
        shared = page.url
        page.get_by_role("button", name=text("round_back", lang)).click()
        expect(caption).to_have_text(" · ".join([_said("after_line", lang, line=5),
                                                 _said("round", lang, name="while", round=20)]))
        page.screenshot(path=ARTIFACTS / f"last-round-{lang}-stepped.png", full_page=True)
        opened = context.new_page()  # the link shared at round 29 opens there
        opened.goto(shared)
        expect(opened.locator("[data-testid='stMarkdownContainer'] p").filter(
            has_text=re.compile("^" + re.escape(_said("after_line", lang, line=5))))).to_have_text(
            " · ".join([_said("after_line", lang, line=5),
                        _said("round", lang, name="while", round=29)]))
    finally:
        context.close()


def test_a_loops_last_round_is_replayed_on_the_backward_page(page: Any, app_url: str) -> None:
    code = ("import torch\nw = torch.ones(3, requires_grad=True)\nfor step in range(30):\n"
            "    loss = (w * step).sum()\n    loss.backward()\n")
    page.goto(f"{app_url}/Backward?lang=en&code={encode_code(code)}")
    last = places.rounds_short([Round(line=3, name="step", round=30, of=30)], "en")
    chosen = page.get_by_role("combobox", name=text("backward_call", "en"))
    expect(chosen).to_have_value(f"#30 (backward) · {last}")  # a new run opens its last call
    chart = page.locator("[data-testid='stPlotlyChart']")
    expect(chart.locator(".textpoint").last).to_have_text("step 1 of 3: SumBackward0")
    page.screenshot(path=ARTIFACTS / "last-round-backward.png", full_page=True)
