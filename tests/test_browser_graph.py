"""The graph page in headless Chromium: the SVG a person sees, with the expected labels."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser
GRAPH = "iframe.autograd-graph"


def test_the_graph_page_shows_the_seed_graph_as_svg(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Graph")
    page.get_by_role("button", name="Run").click()
    # The picture's own frame may run the viewer's script but has no origin of its own.
    expect(page.locator(GRAPH)).to_have_attribute("sandbox", "allow-scripts")
    svg = page.frame_locator(GRAPH).locator("svg")
    expect(svg).to_be_visible()
    for label in ("MeanBackward0", "MulBackward0", "AddBackward0", "AccumulateGrad", "out"):
        expect(svg.get_by_text(label, exact=True).first).to_be_visible()
    expect(svg.locator("g.node")).to_have_count(7)  # x, 5 backward nodes, out
    # The numbers after the last step: x's values and the .grad backward wrote.
    x_node = svg.locator("g.node", has_text="grad 4.5000")
    expect(x_node).to_have_count(1)
    assert x_node.locator("text").all_text_contents() == ["x", " (2, 2)", "= 1.", "grad 4.5000"]
    expect(svg.locator("g.node", has_text="out")).to_contain_text("= 27")
    page.screenshot(path=ARTIFACTS / "graph-page.png")

    # A node chosen in its details marks the statement that made it in the editor.
    expect(page.locator(".cm-step-line")).to_have_text("print(x.grad)")  # the last step
    page.get_by_label("Node details").scroll_into_view_if_needed()  # see test_export.py
    page.get_by_label("Node details").click()
    page.get_by_role("option", name="MulBackward0").first.click()
    expect(page.locator(".cm-step-line")).to_have_text("z = y * y * 3")
    expect(page.get_by_role("table")).to_contain_text("made on line")
    # ...and the picture, drawn anew, outlines it: only then is there a picture to click.
    expect(svg.locator("g.node.chosen", has_text="MulBackward0")).to_have_count(1)

    # A node clicked on the picture too: its details open, its line is marked, and the
    # picture outlines it.
    add = svg.locator("g.node", has_text="AddBackward0")
    for _ in range(3):  # a click the page took while still running may go unheard: again
        add.click()  # (a click sends the node's id: twice is once)
        with suppress(AssertionError):
            expect(page.locator(".cm-step-line")).to_have_text("y = x + 2", timeout=5_000)
            break
    expect(page.locator(".cm-step-line")).to_have_text("y = x + 2")
    expect(page.get_by_role("table")).to_contain_text("AddBackward0")
    expect(add).to_have_class("node chosen")
    page.screenshot(path=ARTIFACTS / "graph-clicked.png")
    # A drag that starts on a node pans: it chooses nothing.
    box = svg.locator("g.node", has_text="MeanBackward0").bounding_box()
    page.mouse.move(box["x"] + 5, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(box["x"] + 80, box["y"] + 60, steps=5)
    page.mouse.up()
    page.wait_for_timeout(500)
    expect(page.locator(".cm-step-line")).to_have_text("y = x + 2")

    page.get_by_role("button", name="« First").scroll_into_view_if_needed()
    page.get_by_role("button", name="« First").click()
    expect(page.get_by_text("No tensor requires grad yet")).to_be_visible()


def test_a_sequential_models_graph_has_a_box_per_module(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Graph")
    page.get_by_label("Code").fill(
        "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),\n"
        "                            torch.nn.Linear(4, 1))\n"
        "loss = model(torch.randn(2, 3)).sum()\n")
    page.get_by_role("button", name="Run").click()
    svg = page.frame_locator(GRAPH).locator("svg")
    clusters = svg.locator("g.cluster")
    expect(clusters).to_have_count(4)  # model and its three layers
    assert sorted(clusters.locator("text").all_text_contents()) == [
        "model", "model.0", "model.1", "model.2"]
    expect(svg.get_by_text("model.0.weight", exact=True)).to_be_visible()
    page.screenshot(path=ARTIFACTS / "graph-modules.png")
    # Folded, a layer is one node and its box is gone.
    page.get_by_label("Fold modules into one node").scroll_into_view_if_needed()
    page.get_by_label("Fold modules into one node").click()
    page.get_by_role("option", name="model.0", exact=True).click()
    expect(clusters).to_have_count(3)
    expect(svg.get_by_text("(6 nodes, folded)")).to_be_visible()


def test_the_graphs_frame_is_loaded_once_and_given_each_picture(page: Any,
                                                                 app_url: str) -> None:
    page.goto(f"{app_url}/Graph")
    frame = page.locator(GRAPH)
    expect(frame).to_have_count(1)  # there before the first run, with no height
    assert frame.bounding_box()["height"] == 0
    viewer = frame.element_handle().content_frame()
    viewer.wait_for_function("document.readyState === 'complete'")
    viewer.evaluate("window.loadedOnce = true")  # gone if the frame loads a page again
    page.get_by_role("button", name="Run").click()
    svg = page.frame_locator(GRAPH).locator("svg")
    expect(svg.get_by_text("MeanBackward0", exact=True)).to_be_visible()
    assert frame.bounding_box()["height"] > 400
    # Zoomed in, then a node clicked: the node is marked, the view stays where it was.
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    zoomed = svg.get_attribute("viewBox")
    add = svg.locator("g.node", has_text="AddBackward0")
    add.click()
    expect(page.get_by_role("table")).to_contain_text("AddBackward0")
    expect(add).to_have_class("node chosen")
    assert svg.get_attribute("viewBox") == zoomed
    # Stepping back shows the earlier pictures in the same frame.
    back = page.get_by_role("button", name="‹ Back")
    for line in (6, 5, 4):  # the graph before `out = z.mean()` has no MeanBackward0
        back.click()
        expect(page.get_by_text(f"State after line {line}", exact=True)).to_be_visible()
    expect(svg.get_by_text("MeanBackward0", exact=True)).to_have_count(0)
    expect(svg.get_by_text("AddBackward0", exact=True)).to_be_visible()
    assert viewer.evaluate("window.loadedOnce") is True
    assert frame.element_handle().content_frame() == viewer


def test_a_chosen_node_gives_its_values_in_full_and_gives_way_to_the_step(
        page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/Graph")
    page.get_by_role("button", name="Run").click()
    svg = page.frame_locator(GRAPH).locator("svg")
    svg.locator("g.node", has_text="grad 4.5000").click()  # x
    expect(page.locator(".cm-step-line")).to_have_text("x = torch.ones(2, 2, requires_grad=True)")
    expect(page.get_by_text("Line 2 made x · state after line 7", exact=True)).to_be_visible()
    expect(page.get_by_text("x values (full precision)")).to_be_visible()
    expect(page.get_by_text("[[1., 1.], [1., 1.]]", exact=True)).to_be_visible()
    expect(page.get_by_text("[[4.5000, 4.5000], [4.5000, 4.5000]]", exact=True)).to_be_visible()
    page.screenshot(path=ARTIFACTS / "graph-node-in-full.png", full_page=True)
    # A step moved to: its line marked, the node still chosen while the picture has it.
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_text("State after line 6", exact=True)).to_be_visible()
    expect(page.locator(".cm-step-line")).to_have_text("out.backward()")
    expect(svg.locator("g.node.chosen")).to_have_count(1)
    # Back before x was made, where the page has no picture: the node is given up.
    page.get_by_role("button", name="« First").click()
    expect(page.get_by_text("State after line 1", exact=True)).to_be_visible()
    expect(page.locator(".cm-step-line")).to_have_text("import torch")
    page.get_by_role("button", name="Forward ›").click()
    expect(page.get_by_text("State after line 2", exact=True)).to_be_visible()
    expect(svg.locator("g.node")).to_have_count(1)
    expect(svg.locator("g.node.chosen")).to_have_count(0)
    expect(page.get_by_text("x values (full precision)")).to_have_count(0)
