"""The library face: `explorer.run` and `explorer.show`, the example notebook executed by a real
Jupyter kernel, and what `show` gives opened offline in Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

import explorer
from explorer.content.i18n import text
from tests.conftest import ARTIFACTS, ROOT

CODE = "x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\ny.backward()\n"
NOTEBOOK = ROOT / "notebooks" / "autograd.ipynb"


def test_run_returns_the_trace_of_the_sandboxed_run() -> None:
    trace = explorer.run(CODE)
    assert trace.ok and trace.variables["x"].grad == [3.0, 3.0]
    refused = explorer.run("import os\n")
    assert refused.error is not None and refused.error.type == "Refused"
    assert isinstance(trace, explorer.Trace)  # the type is part of the API
    assert explorer.Trace.from_json(trace.to_json()).variables == trace.variables


def test_show_is_self_contained_html() -> None:
    shown = explorer.show(CODE + "print(x.grad)\n")
    page = shown._repr_html_()
    assert shown.trace.stdout == "tensor([3., 3.])\n"
    assert "<pre>tensor([3., 3.])\n</pre>" in page and "<svg" in page
    assert 'sandbox="allow-scripts"' in page and "allow-same-origin" not in page
    assert not re.search(r"""<script[^>]+src=|<link[^>]+href=["']?https?:""", page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_show_says_what_is_missing_in_its_language(lang: str) -> None:
    page = explorer.show("x = 1\nprint(undefined)\n", lang=lang)._repr_html_()
    assert text("error_on_line", lang, type="NameError", line=2) in page
    assert html.escape(text("no_graph", lang)) in page
    assert "<svg" not in page and "<iframe" not in page


def test_the_example_notebook_runs_in_a_real_kernel() -> None:
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [cell.outputs for cell in notebook.cells if cell.cell_type == "code"]
    assert outputs[0][-1]["data"]["text/plain"] == "[[4.5, 4.5], [4.5, 4.5]]"
    steps = outputs[1][-1]["data"]["text/plain"]
    assert "('MeanBackward0', 1.0)" in steps and "('AccumulateGrad', [[4.5, 4.5], [4.5, 4.5]])" \
        in steps
    shown = outputs[2][-1]["data"]["text/html"]
    assert "tensor([[4.5000, 4.5000]," in shown and "<svg" in shown and "<iframe" in shown


@pytest.mark.browser
def test_show_opened_offline_draws_the_graph_and_plays(browser: Any, tmp_path: Path) -> None:
    page_file = tmp_path / "shown.html"
    page_file.write_text("<!DOCTYPE html><meta charset='utf-8'><body>"
                         + explorer.show(CODE)._repr_html_(), encoding="utf-8")
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 1400})
    fetched: list[str] = []

    def only_files(route: Any) -> None:
        if route.request.url.startswith(("file://", "about:")):
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        tab.goto(page_file.as_uri())
        assert tab.locator("svg .node").count() >= 4 and tab.locator("svg").first.is_visible()
        frame = tab.frame_locator("iframe")
        play = frame.locator(".updatemenu-button", has_text=re.compile(r"^▶ Play$"))
        play.wait_for()
        play.click()
        animation = next(f for f in tab.frames if f != tab.main_frame)
        animation.wait_for_function("() => document.getElementById('animation')"
                                    "._fullLayout.sliders[0].active === 2", timeout=20_000)
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=ARTIFACTS / "notebook-show.png", full_page=True)
    finally:
        context.close()
    assert fetched == [] and errors == []
