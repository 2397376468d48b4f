"""The backward animation in headless Chromium: play moves the highlight to the last step and
writes the engine's numbers on the picture, each where it belongs."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.ui.backward import HEIGHT
from explorer.views.animation import NUMBERS, figure
from explorer.views.export import animation_view
from explorer.views.render import positions, svg
from tests.conftest import ARTIFACTS
from tests.test_figure import MLP, WIDTHS, numbers_drawn

pytestmark = pytest.mark.browser


def test_one_player_walks_the_engine_steps_to_the_last(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Backward")
    page.get_by_role("button", name="Run").click()
    chart = page.locator("[data-testid='stPlotlyChart']")
    title = chart.locator(".textpoint").last
    expect(title).to_have_text("step 1 of 5: MeanBackward0")
    expect(chart.locator(".slider-grip-rect")).to_have_count(0)  # one control: the page's
    step = page.get_by_role("slider", name="Step")
    # The keyboard steps, and the editor marks the statement whose operation the engine step
    # shown runs backward.
    page.keyboard.press("ArrowRight")
    expect(title).to_have_text("step 2 of 5: MulBackward0")
    expect(page.locator(".cm-step-line")).to_have_text("z = y * y * 3")
    # It counts as the picture does (position 6, after the four statements that built the
    # graph, is the engine's step 2).
    expect(step).to_have_attribute("aria-valuetext", "step 2 of 5")
    page.keyboard.press("ArrowLeft")
    expect(page.locator(".cm-step-line")).to_have_text("out = z.mean()")
    expect(title).to_have_text("step 1 of 5: MeanBackward0")
    numbers = chart.locator(".scatterlayer .trace").nth(13).locator(".textpoint")
    assert [t for t in numbers.all_text_contents() if t] == ["1.", "0.2500"]
    outline = chart.locator(".scatterlayer .trace").nth(2).locator("path").first
    before = outline.get_attribute("d")
    page.get_by_text("Fast", exact=True).click()
    page.evaluate("document.activeElement.blur()")  # Space on a focused button presses it
    page.keyboard.press("Space")  # plays
    expect(page.get_by_role("button", name="❚❚ Pause")).to_be_visible()
    expect(title).to_have_text("step 5 of 5: AccumulateGrad", timeout=15_000)
    expect(page.get_by_role("button", name="▶ Play")).to_be_visible()  # stopped at the end
    expect(step).to_have_attribute("aria-valuetext", "step 5 of 5")
    assert outline.get_attribute("d") != before  # the highlighted node moved
    said = [t for t in numbers.all_text_contents() if t]
    # A number is written once: the 4.5 sent to AccumulateGrad and on to x is the .grad
    # beside x; the sum is written short: in full it has no room off the edges.
    assert said == ["1.", "0.2500", "0.7500", "2.2500", "2.2500", "Σ = 4.5000",
                    ".grad = 4.5000"], said
    # Written beside what they belong to, not in a corner: the sum beside AddBackward0,
    # below x's .grad, which stands beside the top node, below the title.
    sum_box = numbers.filter(has_text="Σ = 4.5000").bounding_box()
    grad_box = numbers.filter(has_text=".grad").bounding_box()
    title_box = title.bounding_box()
    assert title_box["y"] + title_box["height"] <= grad_box["y"] < sum_box["y"] - 40
    page.screenshot(path=ARTIFACTS / "backward-page.png")


def test_the_timeline_starts_with_the_statements_that_built_the_graph(page: Any,
                                                                     app_url: str) -> None:
    page.goto(f"{app_url}/Backward")
    page.get_by_role("button", name="Run").click()
    chart = page.locator("[data-testid='stPlotlyChart']")
    title = chart.locator(".textpoint").last
    expect(title).to_have_text("step 1 of 5: MeanBackward0")
    page.get_by_role("button", name="« First").click()
    expect(title).to_have_text("statement 1 of 4: line 2")
    expect(page.locator(".cm-step-line")).to_have_text(
        "x = torch.ones(2, 2, requires_grad=True)")
    expect(page.get_by_text("Added to the graph: x")).to_be_visible()

    def veiled() -> int:  # nodes not made yet: the veil's boxes, one gap after each
        return page.evaluate("""() => document.querySelector('.js-plotly-plot').data
                                .at(-1).x.filter(v => v === null).length""")

    first = veiled()
    page.keyboard.press("ArrowRight")
    expect(title).to_have_text("statement 2 of 4: line 3")
    expect(page.locator(".cm-step-line")).to_have_text("y = x + 2")
    # All but x veiled first; y = x + 2 made AccumulateGrad and AddBackward0 (the picture
    # draws only its roots' tensors): two nodes fewer.
    assert (first, veiled()) == (6, 4)
    page.keyboard.press("ArrowRight")
    expect(title).to_have_text("statement 3 of 4: line 4")
    page.keyboard.press("ArrowRight")
    expect(title).to_have_text("statement 4 of 4: line 5")
    expect(page.locator(".cm-step-line")).to_have_text("out = z.mean()")
    page.screenshot(path=ARTIFACTS / "backward-forward.png")
    page.get_by_role("button", name="Forward ›").click()
    expect(title).to_have_text("step 1 of 5: MeanBackward0")


def test_clicking_a_node_marks_the_statement_that_made_it(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Backward")
    page.get_by_role("button", name="Run").click()
    expect(page.locator(".cm-step-line")).to_have_text("out = z.mean()")  # MeanBackward0
    expect(page.locator(".js-plotly-plot .nsewdrag")).to_have_count(1)  # drawn
    # Where plotly drew the node that `z = y * y * 3` made last (its `* 3`): the invisible
    # point on it carries its id, and its hover text names its op.
    spot = page.evaluate("""() => {
        const plot = document.querySelector('.js-plotly-plot');
        const points = plot.data.find(t => t.customdata);
        const i = points.hovertext.findIndex(t => t.includes('MulBackward0'));
        const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
        const box = plot.querySelector('.nsewdrag').getBoundingClientRect();
        return {x: box.left + xa.l2p(points.x[i]), y: box.top + ya.l2p(points.y[i])};
    }""")
    page.mouse.click(spot["x"], spot["y"])
    expect(page.locator(".cm-step-line")).to_have_text("z = y * y * 3")
    page.screenshot(path=ARTIFACTS / "backward-clicked.png")
    page.get_by_role("button", name="Forward ›").click()  # the step moves: its node again
    expect(page.locator(".cm-step-line")).to_have_text("z = y * y * 3")
    page.get_by_role("button", name="Last »").click()
    # AccumulateGrad, which autograd made where x was first used.
    expect(page.locator(".cm-step-line")).to_have_text("y = x + 2")


@pytest.mark.parametrize("width", WIDTHS)
def test_chromium_writes_each_number_where_the_figure_tests_judge_it(
        width: int, browser: Any, pool: Any) -> None:
    """The boxes tests/test_figure.py judges are those Chromium draws the numbers in: each
    pinned by the side facing what it is about, a module's program at a phone's width and a
    desktop's."""
    trace = pool.run(MLP)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    chart = figure(call, positions(shown.dot), svg(shown.dot), shown.groups,
                   at=len(call.steps) - 1, numbers=True, animated=False, height=HEIGHT)
    margin = chart.layout.margin
    context = browser.new_context(viewport={"width": width + 100, "height": HEIGHT + 100})
    tab = context.new_page()
    tab.set_content(chart.to_html(include_plotlyjs=True, full_html=True, default_height=HEIGHT,
                                  default_width=width + margin.l + margin.r))
    drawn = tab.evaluate("""(numbers) => {
        const plot = document.querySelector('.js-plotly-plot');
        const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
        const area = plot.querySelector('.nsewdrag').getBoundingClientRect();
        const texts = plot.querySelectorAll('.scatterlayer .trace')[numbers]
            .querySelectorAll('.textpoint text');
        return {width: area.width, pixel: xa.p2l(1) - xa.p2l(0),
                boxes: [...texts].filter(t => t.textContent).map(t => {
                    const b = t.getBoundingClientRect();
                    return [t.textContent, xa.p2l(b.left - area.left),
                            ya.p2l(b.bottom - area.top), xa.p2l(b.right - area.left),
                            ya.p2l(b.top - area.top)];
                })};
    }""", NUMBERS)
    context.close()
    judged = numbers_drawn(chart, width)
    assert drawn["width"] == pytest.approx(width, abs=1)
    assert len(drawn["boxes"]) == len(judged) > 3
    slack = 2 * drawn["pixel"]  # two pixels, in the plot's units
    for (text, *box), (_, model) in zip(drawn["boxes"], judged, strict=True):
        assert box[0] >= model[0] - slack and box[2] <= model[2] + slack, (text, box, model)
        assert box[1] >= model[1] - slack and box[3] <= model[3] + slack, (text, box, model)
