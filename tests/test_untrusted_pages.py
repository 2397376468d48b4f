"""Pages showing a forged answer (tests/forged.py) through Streamlit's AppTest: the run's words
are shown as words, the picture carries no link and lives in a frame without an origin, and a
graph too big to draw says so at once."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from streamlit.testing.v1 import AppTest

from explorer.trace import Trace
from tests.conftest import graph_viewer
from tests.forged import ACTIVE, EVIL, forged, hostile

CODE = "x = 1\n"


def showing(page: str, name: str, answer: dict[str, Any], lang: str = "en") -> AppTest:
    """Page `page` showing the Trace the server makes of `answer`, as after a run."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(page).run()
    at.session_state[f"{name}.trace"] = Trace.from_dict(answer)
    at.session_state[f"{name}.ran"] = at.session_state[f"{name}.code"] = CODE
    at.run()
    assert not at.exception, at.exception
    return at


def markdown(at: AppTest) -> list[str]:
    """Every text the page gives to markdown: alerts, captions, markdown, table cells."""
    texts = [str(e.value) for kind in ("markdown", "caption", "error", "warning", "info",
                                       "success") for e in getattr(at, kind)]
    for table in at.table:
        frame = table.value
        texts += [str(cell) for cell in [*frame.columns, *frame.to_numpy().ravel()]]
    return texts


def active(texts: list[str]) -> list[str]:
    """The texts that markdown would turn into an image, a link or HTML (code spans show
    their text as text, and end at a line break here: a blank line ends them in markdown)."""
    return [t for t in texts if ACTIVE.search(re.sub(r"`[^`\n]*`", "", t))]


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict | list):
            stack.extend(item.values() if isinstance(item, dict) else item)


def test_the_playground_shows_the_runs_words_as_words() -> None:
    at = showing("pages/1_Playground.py", "playground", hostile())
    texts = markdown(at)
    assert texts and not active(texts), active(texts)
    assert any("\\!\\[x\\]" in t for t in texts)  # shown, as text
    cells = at.table[0].value
    assert "\\!\\[x\\]\\(http\\:" in " ".join(cells["name"]) + " ".join(cells["type"])
    assert "\\[\\('w\n\n\\!\\[x\\]" in cells["dtype"].iloc[0]  # a structured dtype's field
    (last,) = [t for t in texts if "ran 30 rounds" in t]  # a loop's last round, under the editor
    assert "cannot be run again" in last  # the answer says it would not repeat


def test_the_graph_page_draws_no_link_in_a_frame_without_an_origin() -> None:
    answer = hostile()
    answer["steps"][0]["variables"]["d`" + EVIL] = answer["variables"]["x"] | {
        "requires_grad": False}
    at = showing("pages/2_Graph.py", "graph", answer)
    viewer, script = graph_viewer(at)
    assert 'setAttribute("sandbox", "allow-scripts")' in script
    assert "allow-same-origin" not in script
    for picture in (viewer, graph_viewer(at, "graph.library")[0]):  # a library's pass too
        assert "<svg" in picture and not re.search(
            r"<a [^>]*href|<img|javascript:alert\([2-5]", picture)
    at.selectbox(key="graph.node").set_value("n2").run()
    assert not at.exception
    texts = markdown(at)
    assert not active(texts), active(texts)
    assert any("saved: w\n\n\\!\\[x\\]" in t for t in texts)  # the run's saved key, as text


def test_the_backward_page_animates_without_the_runs_markup() -> None:
    at = showing("pages/5_Backward.py", "backward", hostile())
    texts = markdown(at)
    assert not active(texts), active(texts)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    shown = [s for s in strings(figure) if not s.startswith("data:image/svg+xml;base64,")]
    tags = [s for s in shown if re.search(r"<(?!/?b>|br>)", s)]  # plotly reads tags, not markdown
    assert any("&lt;img" in s for s in shown) and not tags, tags


def test_a_forged_graph_too_big_to_draw_says_so_at_once() -> None:
    nodes = [{"id": f"n{i}", "kind": "backward", "name": f"Op{i}", "label": f"Op{i}"}
             for i in range(18_000)]
    root = {"id": "t", "kind": "output", "label": "out", "names": ["out"], "shape": [],
            "dtype": "torch.float32", "device": "cpu", "requires_grad": True,
            "is_leaf": False, "grad_fn": "Op0", "version": 0}
    edges = [{"src": f"n{i + 1}", "dst": f"n{i}", "kind": "grad"} for i in range(17_999)]
    graph = {"dot": "", "nodes": [root, *nodes], "edges": [*edges, {
        "src": "n0", "dst": "t", "kind": "grad"}]}
    step = {"line": 1, "end_line": 1, "output": "", "variables": {}, "graph": 0}
    for lang, words in (("en", "more than the 12,000"), ("zh", "超过了这里能排版的 12,000 个")):
        started = time.monotonic()
        at = showing("pages/2_Graph.py", "graph", forged(steps=[step], graphs=[graph]), lang)
        assert words in at.error[0].value and time.monotonic() - started < 20


def test_an_answer_no_run_makes_is_shown_as_a_clear_error() -> None:
    step = {"line": EVIL, "end_line": 1, "output": "", "variables": {}}
    at = showing("pages/1_Playground.py", "playground", forged(steps=[step]))
    assert at.error[0].value == "BadResult"
    assert "a step's line is not a whole number" in at.code[-1].value
    assert not active(markdown(at))
