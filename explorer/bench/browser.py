"""`--browser`: in Debian's Chromium, Run → graph visible on the Graph page, and Run → replay
picture on the Backward page (a tab's first run and its later ones), timed in the tab."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from typing import Any

from explorer.bench.pipeline import chain
from explorer.bench.served import CHROMIUM, CHROMIUM_ARGS, app, checkout
from explorer.bench.table import ms, table
from explorer.content.examples import by_key

REPLAY_TARGET_MS = 500.0  # a tab's first replay of the seed program, in the browser


def browser(quick: bool, progress: Callable[[str], None], against: str | None = None) -> str:
    """Click Run on the Graph page in Chromium and time until the step caption ("State after
    line N": the run is back and the page is drawn down to the graph) and until a node's label
    is in the graph's SVG (`_click_to_graph`), for the seed program and a ~2,000-node chain,
    each in a fresh tab; the app started as tests/conftest.py starts it. With `against` (a
    git revision), that revision's app is timed too, in the same run, each of its runs right
    after one of this checkout's (app `now`)."""
    from playwright.sync_api import sync_playwright

    cases = [("autograd-basics (7 nodes)", by_key("autograd-basics").code, "MeanBackward0"),
             ("chain of 1000 (2005 nodes)", chain(1_000, then_backward=False),
              "MulBackward0 × 1000")]
    repeats = 2 if quick else 9
    rows = []
    with ExitStack() as stack:
        apps = {"now": stack.enter_context(app(stack.enter_context(
            tempfile.TemporaryFile())))}
        if against:
            apps[against] = stack.enter_context(app(
                stack.enter_context(tempfile.TemporaryFile()),
                root=stack.enter_context(checkout(against))))
        playwright = stack.enter_context(sync_playwright())
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(chromium.close)
        for label, code, node in cases:
            progress(f"browser: {label}")
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in apps}
            for _ in range(repeats + 1):  # the first one also warms the app up
                for name, url in apps.items():
                    times[name].append(_click_to_graph(chromium, url, code, node))
            for name, taken in times.items():
                warm = taken[1:]
                rows.append([label, name, ms(taken[0][1]),
                             ms(statistics.median(t[0] for t in warm)),
                             ms(statistics.median(t[1] for t in warm)),
                             ms(max(t[1] for t in warm))])
        replays = _replay_section(chromium, apps, quick, progress)
    return "\n".join([
        f"== Browser: Run -> graph visible on the Graph page ({repeats} runs after a first) ==",
        "Debian Chromium headless, the app on 127.0.0.1, a fresh tab per run; load average "
        f"{os.getloadavg()[0]:.2f}. Times in ms from the mouse going down on Run, taken in "
        "the tab: caption = the step caption is in the page (run done, page drawn down to the "
        "graph), svg = the node's label is in the graph's SVG.",
        table(["program", "app", "first_svg", "caption", "svg", "max_svg"], rows),
        "", *replays])


# In every frame of the tab, before its own scripts: the main frame notes when the mouse
# went down, each frame when the step caption or the node's label is first in its document
# (polled every 2 ms), on one clock (ms since the epoch, as frames share it).
MARKS = """
const now = () => performance.timeOrigin + performance.now(), marks = window.__marks = {};
addEventListener("mousedown", () => { marks.click = now(); }, true);
const look = () => {
  if (!marks.caption && document.body && document.body.innerText.includes(CAPTION)) {
    marks.caption = now();
  }
  if (!marks.svg) for (const t of document.querySelectorAll("svg text")) {
    if (t.textContent === NODE) { marks.svg = now(); break; }
  }
  setTimeout(look, 2);
};
look();
"""


def _click_to_graph(chromium: Any, url: str, code: str, node: str) -> tuple[float, float]:
    """One run of `code` on the Graph page in a fresh tab: seconds from the mouse going down
    on Run to the step caption in the page, and to `node`'s label in the graph's SVG, both
    timed in the tab itself (a click of the mouse where Run is, not Playwright's own checks
    before it, nor its round trips after)."""
    from playwright.sync_api import expect

    last_line = len(code.splitlines())  # the programs end with a statement
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(MARKS.replace("CAPTION", json.dumps(f"State after line {last_line}"))
                            .replace("NODE", json.dumps(node)))
    try:
        page = context.new_page()
        page.goto(f"{url}/Graph")
        run = page.get_by_role("button", name="Run")
        expect(run).to_be_visible(timeout=60_000)
        page.get_by_label("Code").fill(code)
        box = run.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        deadline, marks = time.monotonic() + 60, {}
        while not {"caption", "svg"} <= marks.keys():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the graph did not show {node} within 60 s")
            page.wait_for_timeout(20)
            for frame in page.frames:
                with suppress(Exception):  # a frame that went away meanwhile
                    marks |= frame.evaluate("window.__marks || {}")
        clicked = page.evaluate("window.__marks.click")
        return (marks["caption"] - clicked) / 1000, (marks["svg"] - clicked) / 1000
    finally:
        context.close()


# In the tab, before its scripts: when the mouse went down on Run, and when a replay picture's
# caption ("step 1 of N: ...") is first in a text node the page did not have at that moment
# (polled every 2 ms): a replay drawn anew, not the one the run before left.
REPLAY_MARKS = """
const now = () => performance.timeOrigin + performance.now(), marks = window.__replays = [];
addEventListener("mousedown", () => {
  document.querySelectorAll("svg text").forEach(t => { t.__old = true; });
  marks.push({click: now()});
}, true);
const look = () => {
  const last = marks.at(-1);
  if (last && !last.picture) for (const t of document.querySelectorAll("svg text")) {
    if (!t.__old && t.textContent.startsWith("step 1 of ")) { last.picture = now(); break; }
  }
  setTimeout(look, 2);
};
look();
"""


def _replay_section(chromium: Any, apps: dict[str, str], quick: bool,
                    progress: Callable[[str], None]) -> list[str]:
    """The Backward page: Run -> the replay's picture, a tab's first run and its later ones
    (`_replays`), for the seed program and a 205-node chain, in fresh tabs of every app in
    turn (the first tab of each only warms its app up)."""
    cases = [("autograd-basics (7 nodes)", by_key("autograd-basics").code, "x + 2", "x + {}"),
             ("chain of 100 (205 nodes)", chain(100), "1.001", "1.{:03d}")]
    tabs, runs = (2, 3) if quick else (5, 4)
    rows, number = [], 0
    for label, code, constant, changed in cases:
        progress(f"browser: the Backward page, {label}")
        firsts: dict[str, list[float]] = {name: [] for name in apps}
        laters: dict[str, list[float]] = {name: [] for name in apps}
        for tab in range(tabs + 1):
            for name, url in apps.items():
                programs = []
                for _ in range(runs):  # each run a constant apart: nothing is reused
                    number += 1
                    programs.append(code.replace(constant, changed.format(number + 2)))
                first, *later = _replays(chromium, url, programs)
                if tab:
                    firsts[name].append(first)
                    laters[name] += later
        rows += [[label, name, ms(statistics.median(firsts[name])), ms(max(firsts[name])),
                  ms(statistics.median(laters[name])), ms(max(laters[name]))]
                 for name in apps]
    return [
        f"== Browser: Run -> replay picture on the Backward page ({tabs} tabs of {runs} runs "
        "after a first tab) ==",
        "Times in ms from the mouse going down on Run to the replay's caption in a new text of "
        "the picture, taken in the tab; first = a tab's first run, later = its other runs, each "
        f"with one constant changed. Target: first <= {REPLAY_TARGET_MS:.0f} ms for the seed.",
        table(["program", "app", "first", "max_first", "later", "max_later"], rows)]


def _replays(chromium: Any, url: str, programs: list[str]) -> list[float]:
    """Run each of `programs` on the Backward page of one fresh tab, in turn: seconds from the
    mouse going down on Run to the replay's picture, for each."""
    from playwright.sync_api import TimeoutError as Late
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(REPLAY_MARKS)
    try:
        page = context.new_page()
        page.goto(f"{url}/Backward")
        run = page.get_by_role("button", name="Run")
        expect(run).to_be_visible(timeout=60_000)
        with suppress(Late):  # what the page loads before a run, loaded
            page.wait_for_load_state("networkidle", timeout=15_000)
        for number, code in enumerate(programs, 1):
            page.get_by_label("Code").fill(code)
            box = run.bounding_box()
            assert box is not None
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            deadline = time.monotonic() + 60
            while page.evaluate(f"window.__replays[{number - 1}]?.picture") is None:
                if time.monotonic() > deadline:
                    raise TimeoutError("the Backward page drew no replay within 60 s")
                page.wait_for_timeout(20)
        return [(m["picture"] - m["click"]) / 1000 for m in page.evaluate("window.__replays")]
    finally:
        context.close()
