"""Shared fixtures: the real app served over HTTP, Debian's Chromium driven by Playwright, and a
teacher's copy of the lessons."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from streamlit.testing.v1 import AppTest

from explorer.bench.served import CHROMIUM, CHROMIUM_ARGS, ROOT, app
from explorer.content import lessons
from explorer.pool.worker import WorkerPool
from explorer.serve.hosting import settings

ARTIFACTS = ROOT / "artifacts"  # server log and screenshots of the browser tests
expect.set_options(timeout=20_000)  # two cores shared with a worker pool: be patient


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """A real worker pool with the app's limits and size (`EXPLORER_WORKERS` sets it) that
    runs every run: no result is kept (tests/test_results.py tests those)."""
    workers = WorkerPool(size=settings().workers, kept_bytes=0)
    yield workers
    workers.close()


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """`streamlit run streamlit_app.py` on a free port, until the session ends."""
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "streamlit.log", "w+b") as log, app(log) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium. Outside CI, browser tests skip where it is not installed."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing in CI: `make test` should install it")
        pytest.skip("Debian's chromium is not installed (`make test` installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the app's lessons, named by EXPLORER_LESSONS."""
    folder = tmp_path / "lessons"
    shutil.copytree(lessons.FOLDER, folder)
    monkeypatch.setenv(lessons.VARIABLE, str(folder))
    return folder


@pytest.fixture
def page(browser: Any, app_url: str) -> Iterator[Any]:
    """A fresh browser tab (own session) with a desktop-sized window."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    yield tab
    context.close()


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="write tests/golden/*.json anew from this run (tests/test_golden.py)")


def editor_code(at: Any) -> str | None:
    """The program an AppTest page's editor shows (None: the page has none); the editor's
    library, an element of its own (explorer/ui/code_editor.py), holds no program."""
    editors = [e.proto for e in at.get("bidi_component")
               if e.proto.component_name.endswith("autograd_explorer.editor")]
    return json.loads(editors[0].json)["code"] if editors else None


def page_ran(path: str, name: str, code: str, lang: str = "en", timeout: int = 60) -> AppTest:
    """The page at `path` (its editor `name`) in `lang`, as an AppTest, once `code` ran there."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=timeout)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(path).run()
    at.session_state[f"{name}.code"] = code
    at.button(key=f"{name}.run").click().run()
    return at


def graph_page_ran(code: str, lang: str = "en") -> AppTest:
    """The Graph page in `lang`, as an AppTest, once `code` ran there."""
    return page_ran("pages/2_Graph.py", "graph", code, lang)


def graph_viewer(at: Any, key: str | None = None) -> tuple[str, str]:
    """The graph picture an AppTest page drew (the one of the viewer `key`; none given: of
    the program's own graph, not a library function's): the SVG its component posts to the
    viewer's frame, and the component's script (explorer/ui/assets/graph.js)."""
    (viewer,) = (e.proto for e in at.get("bidi_component")
                 if e.proto.component_name.endswith("autograd_explorer.graph")
                 and json.loads(e.proto.json)["svg"]
                 and (e.proto.id.endswith(f"-{key}.viewer") if key is not None
                      else not e.proto.id.endswith(".library.viewer")))
    return json.loads(viewer.json)["svg"], viewer.js_content
