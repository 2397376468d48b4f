"""What a run sends back is untrusted: the server bounds it, cleans it, draws the picture
itself and shows the run's words as words. Each case is a forged answer, as a run that got
past the sandbox could send."""

from __future__ import annotations

import json
import re
import time

import pytest
from streamlit.testing.v1 import AppTest

from explorer.graph_view import view
from explorer.render import LayoutError, svg
from explorer.trace import MAX_LINES, MAX_MESSAGE, Trace
from explorer.wire import decode
from explorer.worker import WorkerPool
from tests.programs import SEED

EVIL = "![x](http://evil.example/x.png) [click](javascript:alert(1)) <img src=x onerror=alert(1)>"


def forged(**fields: object) -> dict[str, object]:
    """A Trace as a run would send it, with `fields` replaced."""
    return json.loads(Trace(ok=True).to_json()) | fields


def test_a_lone_surrogate_in_the_output_keeps_the_trace(pool: WorkerPool) -> None:
    trace = pool.run("print(chr(0xd800))\nprint('after')\n")
    assert trace.ok, trace.error
    assert trace.stdout == "?\nafter\n"


def test_a_malformed_answer_is_a_clear_error_never_a_crash() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        decode(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with pytest.raises(ValueError, match="not a JSON object"):
        decode(b"[1, 2]")
    assert decode(b'{"stdout": "caf\xe9"}') == {"stdout": "caf\ufffd"}  # not UTF-8
    cleaned = decode(b'{"stdout": "a\\ud800b", "warnings": ["\\udfff"]}')
    assert cleaned == {"stdout": "a?b", "warnings": ["?"]}
    json.dumps(cleaned).encode()  # it can be sent on


def test_a_flood_of_warnings_and_a_huge_message_are_cut() -> None:
    trace = Trace.from_dict(forged(
        ok=False, warnings=["w"] * 26_728, notes=["n" * 10**6],
        error={"type": "RuntimeError", "message": "m" * (15 << 20), "line": "one",
               "explanation": {"en": EVIL, "zh": EVIL}}))
    assert len(trace.warnings) == MAX_LINES and len(trace.notes[0]) < 10**4
    assert trace.error is not None and len(trace.error["message"]) == MAX_MESSAGE
    assert trace.error["line"] is None
    assert trace.error["explanation"] is None  # made anew here: the run's own is dropped


def test_the_picture_takes_no_link_or_markup_from_the_run() -> None:
    evil = 'lightblue" URL="javascript:alert(1)'
    graph = {"nodes": [
        {"id": "a", "kind": "leaf", "label": "<<table href='javascript:alert(2)'><tr><td>x"
         "</td></tr></table>>", "colour": evil, "names": ["x"], "shape": [1],
         "dtype": "float32", "device": "cpu", "requires_grad": True, "is_leaf": True,
         "grad_fn": None, "version": 0},
        {"id": 'b" URL="javascript:alert(3)', "kind": "backward", "name": "AddBackward0",
         "label": "AddBackward0", "saved": {}}],
        "edges": [{"src": "a", "dst": 'b" URL="javascript:alert(3)', "kind": "grad",
                   "attrs": {"URL": "javascript:alert(4)", "style": "dotted",
                             "href": "javascript:alert(5)", "dir": "both"}}]}
    dot = view(graph).dot
    assert "style=dotted" in dot and "dir=" not in dot and "fillcolor=lightblue" in dot
    picture = svg(dot)
    assert not re.search(r"<a [^>]*href", picture)  # graphviz's <a> carries only tooltips
    assert "<table" not in picture and "&lt;&lt;table" in picture  # the label, as text


def test_a_graph_too_big_to_lay_out_fails_fast_and_once() -> None:
    nodes = [{"id": f"n{i}", "kind": "backward", "name": f"Op{i}Backward0",
              "label": f"Op{i}Backward0", "saved": {}} for i in range(18_000)]
    edges = [{"src": f"n{i}", "dst": f"n{i + 1}", "kind": "grad"} for i in range(17_999)]
    dot = view({"nodes": nodes, "edges": edges}).dot  # no chain of one op: nothing collapses
    for _ in range(2):
        started = time.monotonic()
        with pytest.raises(LayoutError, match="more than the"):
            svg(dot)
        assert time.monotonic() - started < 1.0


def test_a_pages_shows_the_runs_words_as_words() -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.run()
    at.switch_page("pages/1_Playground.py").run()
    trace = Trace.from_dict(forged(
        ok=False, warnings=[EVIL], notes=[EVIL],
        error={"type": EVIL, "message": f"name '{EVIL}' is not defined", "line": 1,
               "explanation": None}))
    at.session_state["playground.trace"] = trace
    at.session_state["playground.ran"] = at.session_state["playground.code"] = SEED
    at.run()
    assert not at.exception
    shown = [e.value for kind in ("warning", "caption", "error", "info", "markdown")
             for e in getattr(at, kind)]
    words = [re.sub(r"`[^`]*`", "", text) for text in shown]  # code spans show text as text
    bad = [text for text in words if re.search(r"(?<!\\)(\]\(|<img)", text)]  # unescaped
    assert shown and not bad, bad
    assert any("\\!\\[x\\]" in text for text in shown)
