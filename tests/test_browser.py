"""What a person sees: the real app over HTTP in headless Chromium, driven by Playwright."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def _open_playground(page: Any, app_url: str, lang: str = "en") -> None:
    page.goto(f"{app_url}/Playground?lang={lang}")
    expect(page.get_by_role("button", name="Run" if lang == "en" else "运行")).to_be_visible()


def _run(page: Any, code: str | None = None) -> None:
    if code is not None:
        page.get_by_label("Code").fill(code)
    page.get_by_role("button", name="Run").click()


def test_the_editor_runs_on_ctrl_enter_and_marks_the_error_and_the_step(page: Any,
                                                                        app_url: str) -> None:
    _open_playground(page, app_url)
    editor = page.get_by_label("Code")
    editor.fill("x = torch.ones(2)\ny = x * 2\nprint(z)\n")
    editor.press("Control+Enter")  # no click on Run
    error = page.locator(".cm-error-line")
    expect(error).to_have_text("print(z)")
    expect(page.locator(".cm-line").nth(2)).to_have_class(re.compile("cm-error-line"))
    expect(page.locator(".cm-error-message")).to_have_text(
        "NameError: name 'z' is not defined")
    expect(page.locator(".cm-step-line")).to_have_text("y = x * 2")  # the last step that ran
    page.get_by_role("button", name="« First").click()
    expect(page.locator(".cm-step-line")).to_have_text("x = torch.ones(2)")
    editor.press("End")
    editor.type("  # edited")
    expect(page.locator(".cm-step-line")).to_have_count(0)  # marks of an older program go
    page.screenshot(path=ARTIFACTS / "editor-error.png")


def test_the_playground_runs_the_seed_program(page: Any, app_url: str) -> None:
    _open_playground(page, app_url)
    _run(page)  # the default program is the seed's autograd example
    expect(page.get_by_text("State after line 7")).to_be_visible()
    table = page.locator("[data-testid='stTable']")
    expect(table).to_contain_text("MeanBackward0")
    expect(table).to_contain_text("AddBackward0")
    expect(page.locator("[data-testid='stCode']").last).to_contain_text("4.5000")
    page.screenshot(path=ARTIFACTS / "playground-seed.png")

    page.get_by_role("button", name="« First").click()
    expect(page.get_by_text("State after line 1")).to_be_visible()  # `import torch`
    expect(page.get_by_text("No variables yet.")).to_be_visible()
    page.get_by_role("button", name="Forward ›").click()
    page.get_by_role("button", name="Forward ›").click()
    expect(page.get_by_text("State after line 3")).to_be_visible()
    expect(table).to_contain_text("AddBackward0")
    expect(table).not_to_contain_text("MeanBackward0")


def test_a_refused_program_shows_a_clear_message(page: Any, app_url: str) -> None:
    _open_playground(page, app_url)
    _run(page, "x = torch.ones(2)\nprint(().__class__.__bases__)\n")
    expect(page.get_by_text("Refused on line 2")).to_be_visible()
    expect(page.get_by_text("outside the sandbox")).to_be_visible()
    _run(page, "x = torch.ones(2)\nprint(x + 1)\n")  # and the next run works
    expect(page.get_by_text("tensor([2., 2.])")).to_be_visible()


def test_an_endless_loop_is_stopped_and_the_page_stays_usable(page: Any, app_url: str) -> None:
    _open_playground(page, app_url)
    _run(page, "n = 0\nwhile True:\n    n += 1\n")
    expect(page.get_by_text("LoopLimit on line")).to_be_visible()
    _run(page, "y = torch.arange(3) * 2\nprint(y)\n")
    expect(page.get_by_text("tensor([0, 2, 4])")).to_be_visible()


def test_the_language_switch_changes_the_interface(page: Any, app_url: str) -> None:
    _open_playground(page, app_url)
    page.get_by_text("中文").click()
    expect(page.get_by_role("button", name="运行")).to_be_visible()
    page.get_by_role("link", name="首页").click()
    expect(page.get_by_role("heading", name="Autograd 探索器")).to_be_visible()


def test_the_devices_page_shows_this_machine_and_a_timing_chart(page: Any, app_url: str) -> None:
    import torch  # what the page must report: asked of PyTorch here, as the worker asks it

    page.goto(f"{app_url}/Devices?lang=en")
    row = page.locator("[data-testid='stTable'] tr", has_text="torch.cuda.is_available()")
    # the first page of a session may wait for the worker pool to start
    expect(row).to_contain_text(str(torch.cuda.is_available()), timeout=30_000)
    chart = page.locator("[data-testid='stPlotlyChart']")
    expect(chart.locator(".main-svg").first).to_be_visible()
    expect(chart).to_contain_text("a @ b on the CPU")
    expect(chart.locator(".scatterlayer .trace").first).to_be_visible()
    # Streamlit scrolls inside its main block, so a full-page shot would show only the top:
    # grow the window to the page's height (still 1400 wide) to capture all of it.
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": height})
    expect(chart.locator(".scatterlayer .trace").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "devices-page.png")


def test_the_numpy_page_shows_an_array_change_with_its_tensor(page: Any, app_url: str) -> None:
    page.goto(f"{app_url}/NumPy?lang=en")
    page.get_by_label("Lesson: tensors and NumPy").click()
    page.get_by_role("option", name="Tensor → NumPy: .numpy() shares memory").click()
    expect(page.get_by_label("Code")).to_have_text(re.compile(r"b = a\.numpy\(\)"))
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("State after line 8")).to_be_visible()  # opens at `a.add_(1)`
    expect(page.get_by_text("shares memory", exact=True)).to_be_visible()
    tensor, array = (page.locator("[data-testid='stColumn']", has_text=kind).last
                     .locator("[data-testid='stPlotlyChart']")  # innermost column: one side
                     for kind in ("torch.Tensor", "numpy.ndarray"))
    for side in (tensor, array):  # all five cells read 2. and are outlined as changed
        expect(side.locator(".heatmap-label text")).to_have_text(["2."] * 5)
        expect(side.locator(".layer-above .shapelayer path")).to_have_count(1)
    page.screenshot(path=ARTIFACTS / "numpy-page.png")

    page.get_by_role("button", name="‹ Back").click()  # before a.add_(1): print(b)
    expect(page.get_by_text("State after line 6")).to_be_visible()
    expect(array.locator(".heatmap-label text")).to_have_text(["1."] * 5)
    expect(array.locator(".layer-above .shapelayer path")).to_have_count(0)
    page.get_by_role("button", name="Forward ›").click()
    expect(array.locator(".heatmap-label text")).to_have_text(["2."] * 5)
