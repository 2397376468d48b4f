"""Exports: the graph (DOT, SVG, PNG), the Trace (JSON) and the backward animation as a page
that plays offline; `python -m explorer export` writing them; the page playing in Chromium."""

from __future__ import annotations

import html
import json
import os
import re
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.cli import write_whole
from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.trace import Trace
from explorer.trace.graph_view import named_outputs, view
from explorer.trace.wire import trace_message
from explorer.views.animation import figure, left_off
from explorer.views.export import (
    ExportError,
    animation_html,
    animation_view,
    graph_dot,
    graph_png,
    graph_svg,
    trace_json,
)
from explorer.views.graph_page import statement_added
from explorer.views.present import node_values
from explorer.views.render import positions, svg
from tests.conftest import ARTIFACTS, ROOT
from tests.programs import SEED

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TWO_CALLS = ("x = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
             "(x * 3).sum().backward()\n")
NO_BACKWARD = "x = torch.ones(3, requires_grad=True)\ny = x * 2\n"
FAILS_IN_BACKWARD = "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.backward()\n"
CROWDED = ("torch.manual_seed(0)\nw = torch.randn(3, 3, requires_grad=True)\n"
           "h = torch.randn(3, requires_grad=True)\nfor i in range(4):\n"
           "    h = torch.tanh(w @ h + h)\nloss = h.sum()\nloss.backward()\n")


@pytest.fixture(scope="module")
def seed(pool: WorkerPool) -> Trace:
    trace = pool.run(SEED)
    assert trace.ok
    return trace


def test_the_dot_is_the_graph_pages_default_view_of_the_last_step(
        seed: Trace, pool: WorkerPool) -> None:
    # The Graph page draws the graph of the variable assigned last (`out`; backward()
    # assigns nothing), with saved tensors and attributes, chains collapsed, values and
    # .grad under the labels of a small graph, and the last statement's nodes marked.
    out = named_outputs(seed.graph)["out"]
    notes = node_values(seed.graph, seed.steps[-1].variables)
    assert graph_dot(seed) == view(seed.graph, [out], True, True, collapse=True,
                                   notes=notes).dot  # backward() added no node
    assert "MeanBackward0" in graph_dot(seed) and "grad 4.5000" in graph_dot(seed)
    # Here the last assigned is `z`: its graph holds AddBackward0, not y's MulBackward0.
    trace = pool.run("x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = x + 1\n")
    z = named_outputs(trace.graph)["z"]
    new = statement_added(trace, len(trace.steps) - 1)
    assert graph_dot(trace) == view(trace.graph, [z], notes=node_values(
        trace.graph, trace.steps[-1].variables), marked=new).dot
    assert "AddBackward0" in graph_dot(trace) and "MulBackward0" not in graph_dot(trace)
    assert any(n.id in new and n.name == "AddBackward0" for n in trace.graph.nodes)


def test_svg_and_png_are_graphviz_drawings_of_that_graph(seed: Trace) -> None:
    picture = graph_svg(seed)
    assert picture.rstrip().endswith("</svg>")
    for label in ("MeanBackward0", "AddBackward0", "AccumulateGrad"):
        assert f">{label}</text>" in picture
    image = graph_png(seed)
    assert image.startswith(PNG_MAGIC)
    width, height = struct.unpack(">II", image[16:24])  # the IHDR chunk
    assert 100 < width < 1000 and 300 < height < 2000  # seven boxes stacked in a column


def test_the_trace_json_round_trips(seed: Trace) -> None:
    assert Trace.from_json(trace_json(seed)) == seed


def test_nothing_to_export_is_a_clear_error(pool: WorkerPool) -> None:
    plain = pool.run("a = torch.ones(2) * 3\n")
    with pytest.raises(ExportError, match="No tensor requires grad"):
        graph_dot(plain)
    with pytest.raises(ExportError, match="No tensor requires grad"):
        graph_dot(pool.run("1 +"))  # a syntax error: no step at all
    with pytest.raises(ExportError, match=r"never calls backward\(\)"):
        animation_html(pool.run(NO_BACKWARD))
    with pytest.raises(ExportError, match="ran no node"):
        animation_html(pool.run(FAILS_IN_BACKWARD))
    with pytest.raises(ExportError, match=r"no backward call #7 \(recorded: #1, #2\)"):
        animation_html(pool.run(TWO_CALLS), call=7)


class _Fetches(HTMLParser):
    """Every tag, and every attribute value a browser would load from."""

    LOADS = {"src", "href", "data", "srcset", "poster", "action", "formaction", "background",
             "xlink:href", "manifest", "ping", "codebase", "cite", "longdesc"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_style = tag == "style"
        self.urls += [value or "" for name, value in attrs if name in self.LOADS]
        self.styles += [value or "" for name, value in attrs if name == "style"]

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def test_the_animation_page_is_self_contained(seed: Trace) -> None:
    page = animation_html(seed, name="seed.py")
    call = seed.backward[-1]
    shown = animation_view(seed, call)
    expected = figure(call, positions(shown.dot), svg(shown.dot), shown.groups, at=0)
    assert len(expected.frames) == 5
    for frame in expected.frames:  # the same frames as the Backward page's figure
        assert f'"name":"{frame.name}"' in page
    assert all(f"step {k} of 5: " in page for k in range(1, 6))
    assert "step 5 of 5: AccumulateGrad" in page
    assert "<h1>Backward pass of out (call #1) · seed.py</h1>" in page
    assert "5 engine steps, recorded on cpu" in page
    found = _Fetches()
    found.feed(page)
    assert "link" not in found.tags and "iframe" not in found.tags
    assert found.urls == []  # no <script src>, <link href>, <img src>…: plotly.js is inlined
    assert not any(re.search(r"url\(|@import", style) for style in found.styles)
    assert "Plotly.newPlot" in page and "plotly.js v" in page


def test_the_animation_page_says_how_many_numbers_had_no_room(pool: WorkerPool) -> None:
    trace = pool.run(CROWDED)  # 18 nodes: numbers on
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    count = left_off(figure(call, positions(shown.dot), svg(shown.dot), shown.groups, at=0))
    assert count > 0
    assert html.escape(text("numbers_left_off", "zh", count=count)) in animation_html(
        trace, lang="zh")


def test_the_animation_picks_a_call_and_speaks_chinese(pool: WorkerPool) -> None:
    trace = pool.run(TWO_CALLS)
    # The last call by default; a root without a variable is named as the engine's roots are.
    assert "<h1>Backward pass of root 0 (call #2)</h1>" in animation_html(trace)
    first = animation_html(trace, call=1, lang="zh")
    assert '<html lang="zh">' in first and "<h1>root 0 的反向传播（第 #1 次调用）</h1>" in first
    menus = first[first.rfind('"updatemenus"'):]  # plotly's own buttons, in Chinese too
    menus = menus[:menus.find('"sliders"')]
    assert [json.loads(f'"{label}"') for label in re.findall(r'"label":"((?:[^"\\]|\\.)*)"',
                                                            menus)] == [
        "▶ 播放", "▶▶ 快", "▶ 慢", "❚❚ 暂停"]


def test_write_whole_replaces_a_file_whole_or_leaves_everything_as_it_was(
        tmp_path: Path) -> None:
    target = tmp_path / "graph.dot"
    target.write_text("old")
    write_whole(target, b"new")
    assert target.read_bytes() == b"new"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # as `open` would have made it
    folder = tmp_path / "taken"
    (folder / "inside").mkdir(parents=True)
    with pytest.raises(OSError):
        write_whole(folder, "text")  # os.replace cannot put a file over a full directory
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.dot", "taken"]  # no temp file
    assert target.read_bytes() == b"new"


def _export(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "explorer", "export", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_the_cli_writes_every_export(tmp_path: Path, seed: Trace) -> None:
    program = tmp_path / "seed.py"
    program.write_text(SEED)
    names = {"html": "pass.html", "svg": "graph.svg", "png": "graph.png", "dot": "graph.dot",
             "json": "trace.json"}
    done = _export(str(program), *(f"--{k}={tmp_path / v}" for k, v in names.items()))
    assert done.returncode == 0, done.stderr
    for name in names.values():
        assert f"wrote {tmp_path / name}" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names.values(), "seed.py"])
    assert (tmp_path / "graph.dot").read_text() == graph_dot(seed)
    assert (tmp_path / "graph.svg").read_text().rstrip().endswith("</svg>")
    assert (tmp_path / "graph.png").read_bytes().startswith(PNG_MAGIC)
    written = Trace.from_json((tmp_path / "trace.json").read_text())
    assert written.ok and [s.name for s in written.backward[0].steps] == [
        s.name for s in seed.backward[0].steps]
    page = (tmp_path / "pass.html").read_text()
    assert "Backward pass of out (call #1) · seed.py" in page and "step 5 of 5" in page


def test_a_failing_program_exits_1_with_its_trace_but_no_animation(tmp_path: Path) -> None:
    done = _export("-", "--json", str(tmp_path / "t.json"), "--html", str(tmp_path / "p.html"),
                   "--svg", str(tmp_path / "g.svg"), stdin=FAILS_IN_BACKWARD)
    assert done.returncode == 1
    assert "error on line 3: RuntimeError: grad can be implicitly created only for scalar" \
        in done.stdout
    assert f"{tmp_path / 'p.html'} not written: This call ran no node" in done.stderr
    trace = Trace.from_json((tmp_path / "t.json").read_text())
    assert not trace.ok and trace.error.line == 3
    # The graph after the last step is there, so its SVG is written; the animation is not.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.svg", "t.json"]


@pytest.mark.parametrize("case", ["missing input", "no folder", "folder is a file",
                                  "output is the program", "no output"])
def test_bad_arguments_say_why_and_leave_nothing(tmp_path: Path, case: str) -> None:
    program = tmp_path / "seed.py"
    program.write_text(SEED)
    json = str(tmp_path / "t.json")
    args, message = {
        "missing input": ([str(tmp_path / "nope.py"), "--json", json],
                          f"cannot read {tmp_path / 'nope.py'}: No such file or directory"),
        "no folder": ([str(program), "--json", json, "--html", str(tmp_path / "no/p.html")],
                      f"cannot write {tmp_path / 'no/p.html'}: {tmp_path / 'no'} is not a "
                      "directory"),
        "folder is a file": ([str(program), "--json", json, "--svg",
                              str(program / "g.svg")], f"{program} is not a directory"),
        "output is the program": ([str(program), "--dot", str(program)], "named twice"),
        "no output": ([str(program)], "give at least one output"),
    }[case]
    done = _export(*args)
    assert done.returncode == 2
    assert "python -m explorer export: error: " in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["seed.py"]
    assert program.read_text() == SEED


@pytest.mark.browser
def test_the_animation_plays_from_a_file_with_no_network(browser: Any, tmp_path: Path,
                                                         seed: Trace) -> None:
    page_file = tmp_path / "pass.html"
    page_file.write_text(animation_html(seed, name="seed.py"), encoding="utf-8")
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
    fetched: list[str] = []

    def only_files(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        tab.goto(page_file.as_uri())
        play = tab.locator(".updatemenu-button", has_text=re.compile(r"^▶ Play$"))
        play.wait_for()
        slider = "document.getElementById('animation')._fullLayout.sliders[0].active"
        state = f"() => [{slider}, [...document.querySelectorAll('.textpoint')]" \
                ".map(t => t.textContent).pop()]"
        assert tab.evaluate(state) == [0, "step 1 of 5: MeanBackward0"]
        play.click()
        tab.wait_for_function(f"() => {slider} === 4", timeout=20_000)
        assert tab.evaluate(state) == [4, "step 5 of 5: AccumulateGrad"]
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=ARTIFACTS / "exported-animation.png")
    finally:
        context.close()
    assert fetched == [] and errors == []


@pytest.mark.browser
def test_the_pages_download_png_json_and_the_animation(page: Any, app_url: str,
                                                       seed: Trace) -> None:
    page.goto(f"{app_url}/Graph")
    page.get_by_role("button", name="Run").click()
    # Scrolled to first, as a person does: Chromium routes a click by where the picture's
    # frame (a process of its own: it has no origin) was a frame ago, so a click that scrolls
    # the page itself and lands at once is taken by that frame.
    page.get_by_role("button", name="Download PNG").scroll_into_view_if_needed()
    with page.expect_download() as png:
        page.get_by_role("button", name="Download PNG").click()
    assert png.value.suggested_filename == "autograd-graph.png"
    image = Path(png.value.path()).read_bytes()
    assert image.startswith(PNG_MAGIC) and image[16:24] == graph_png(seed)[16:24]  # same size
    with page.expect_download() as json:
        page.get_by_role("button", name="Download Trace (JSON)").click()
    trace = Trace.from_json(Path(json.value.path()).read_text())
    assert trace.ok and trace.graph == seed.graph

    page.goto(f"{app_url}/Backward")
    page.get_by_role("button", name="Run").click()
    # The chart is drawn above the button when the run is done: click once it stopped moving.
    expect(page.locator("[data-testid='stPlotlyChart'] .textpoint").last).to_have_text(
        "step 1 of 5: MeanBackward0")
    with page.expect_download() as html:
        page.get_by_role("button", name="Download animation (HTML)").click()
    assert html.value.suggested_filename == "backward-pass-1.html"
    saved = Path(html.value.path()).read_text(encoding="utf-8")
    assert "<h1>Backward pass of out (call #1)</h1>" in saved and "step 5 of 5" in saved


def test_the_trace_file_carries_what_each_step_changed(pool: WorkerPool) -> None:
    """A Trace as a file is its size on the wire: each of n statements names the variable it
    made, not all n² that every step holds."""
    code = "".join(f"a{i} = torch.full((4,), {i}.0)\n" for i in range(120))
    trace = pool.run(code)
    kept = trace_json(trace)
    assert trace.ok and Trace.from_json(kept) == trace
    assert len(kept) < 1.01 * len(trace_message(trace)) < len(trace.to_json()) / 10
