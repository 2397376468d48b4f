"""The top-level statement a run's error stopped part way: the state at the error is from before
it, and the pages say what ran of it (explorer.views.unfinished)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.trace import Step, Trace, error_info
from explorer.views.unfinished import Unfinished, unfinished
from tests.test_pages import _graph, _playground, _run, _text

MOST = Limits().steps  # the most steps a run records
FREED_IN_LOOP = ("w = torch.ones(2, requires_grad=True)\ny = (w * w).sum()\n"
                 "for i in range(3):\n    y.backward()\nprint(w.grad)\n")
CALLED_FROM_LOOP = ("w = torch.ones(2, requires_grad=True)\n"
                    "def scaled(k):\n    if k == 1:\n        raise ValueError('no 1')\n"
                    "    return (w * k).sum()\n"
                    "for i in range(3):\n    scaled(i).backward()\n")
PLAIN = "x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"


def _trace(lines: list[int], error_line: int | None, kind: str = "RuntimeError") -> Trace:
    """A run that recorded a step at each of `lines`, then stopped with an error."""
    return Trace(ok=False, error=error_info(kind, "stopped", error_line),
                 steps=[Step(line, line, "", {}) for line in lines])


def test_a_loop_that_raises_in_its_second_round_is_named_by_its_first_line(
        pool: WorkerPool) -> None:
    trace = pool.run(FREED_IN_LOOP)
    assert trace.error.line == 4 and [s.line for s in trace.steps] == [1, 2]
    assert unfinished(trace, FREED_IN_LOOP, MOST) == Unfinished(3, loop=True)
    assert "loop that starts on line 3" in unfinished(trace, FREED_IN_LOOP, MOST).said("en")
    assert "第 3 行开始的循环" in unfinished(trace, FREED_IN_LOOP, MOST).said("zh")


def test_an_error_in_a_function_a_loop_called_names_the_loop(pool: WorkerPool) -> None:
    trace = pool.run(CALLED_FROM_LOOP)
    assert trace.error.line == 4  # in the function, not in the loop
    assert unfinished(trace, CALLED_FROM_LOOP, MOST) == Unfinished(6, loop=True)


def test_an_error_on_a_plain_top_level_line_leaves_nothing_out(pool: WorkerPool) -> None:
    trace = pool.run(PLAIN)
    assert trace.error.line == 3 and unfinished(trace, PLAIN, MOST) is None
    assert unfinished(pool.run("x = 1\n"), "x = 1\n", MOST) is None  # no error


@pytest.mark.parametrize(("code", "error"), [
    ("a = 1\nwith torch.no_grad():\n    b = 2\n    c = b / 0\n", 4),
    ("a = 1\nif a:\n    b = a / 0\n", 3),
    ("a = 1\ntry:\n    b = a / 0\nfinally:\n    c = 2\n", 3),
    ("a = 1\nclass Model:\n    size = a / 0\n", 3),
])
def test_other_blocks_are_named_without_rounds(code: str, error: int) -> None:
    assert unfinished(_trace([1], error), code, MOST) == Unfinished(2, loop=False)


def test_a_plain_line_that_called_a_failing_function_is_named() -> None:
    code = "def f(v):\n    return v / 0\nout = f(1)\n"
    assert unfinished(_trace([1], 2), code, MOST) == Unfinished(3, loop=False)


def test_a_lambda_made_before_and_called_in_a_loop_is_the_loops() -> None:
    code = "f = lambda v: v / 0\nfor i in range(2):\n    f(i)\n"
    assert unfinished(_trace([1], 1), code, MOST) == Unfinished(2, loop=True)


LOOP = "a = 1\nfor i in range(2):\n    b = i / 0\n"


@pytest.mark.parametrize(("code", "lines", "error", "kind"), [
    (LOOP, [1], None, "RuntimeError"),  # no line
    (LOOP, [], 3, "Refused"),  # refused before it ran
    (LOOP, [1, 2], 3, "RuntimeError"),  # every statement has its step
    (LOOP, [2], 3, "RuntimeError"),  # the steps are not of this code
    ("a = (\n", [], 1, "RuntimeError"),  # the code does not parse
    ("def f(v=1 / 0):\n    return v\n", [], 1, "ZeroDivisionError"),  # a def's own defaults
])
def test_nothing_is_named_where_the_steps_do_not_say_what_ran(
        code: str, lines: list[int], error: int | None, kind: str) -> None:
    assert unfinished(_trace(lines, error, kind), code, MOST) is None


def test_nothing_is_named_once_the_steps_stopped_at_the_cap() -> None:
    code = "a = 1\nb = 2\nfor i in range(2):\n    c = i / 0\n"
    assert unfinished(_trace([1, 2], 4), code, MOST) == Unfinished(3, loop=True)
    assert unfinished(_trace([1, 2], 4), code, 2) is None


def _said(at: AppTest, kind: str) -> list[str]:
    """The texts of the page's elements of `kind` (warning, info, caption...)."""
    return [str(e.value) for e in getattr(at, kind)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("code", "line"), [(FREED_IN_LOOP, 3), (CALLED_FROM_LOOP, 6)])
def test_the_playground_says_the_state_at_the_error_is_from_before_the_loop(
        code: str, line: int, lang: str) -> None:
    at = _run(_playground(lang), code)
    note = text("unfinished_loop", lang, line=line)
    assert note in _said(at, "warning")  # in the error's panel
    assert note in _said(at, "info")  # over the variables, at the state at the error
    assert at.table[0].value.iloc[0, 0] == "w"  # the state before the loop
    at.button(key="playground.step.first").click().run()
    assert note not in _said(at, "info")  # an earlier state leaves nothing of the loop out
    assert note in _said(at, "warning")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graph_pages_caption_says_the_state_is_from_before_the_loop(lang: str) -> None:
    at = _graph(FREED_IN_LOOP, lang)
    note = text("unfinished_loop", lang, line=3)
    assert note in _said(at, "caption") and note in _said(at, "warning")
    at.button(key="graph.step.first").click().run()
    assert note not in _said(at, "caption")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_error_on_a_plain_line_says_nothing_is_left_out(lang: str) -> None:
    for at in (_run(_playground(lang), PLAIN), _graph(PLAIN, lang)):
        said = _text(at)
        assert text("error_on_line", lang, type="RuntimeError", line=3) in said
        assert not any(text(key, lang, line=n) in said for key in ("unfinished_loop",
                       "unfinished_block") for n in (1, 2, 3))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_numpy_pages_caption_says_the_state_is_from_before_the_loop(lang: str) -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run().switch_page("pages/3_NumPy.py").run()
    at.session_state["numpy.code"] = ("t = torch.ones(3)\na = t.numpy()\n"
                                      "for i in range(3):\n    a[i] = i / 0\n")
    at.button(key="numpy.run").click().run()
    assert not at.exception
    note = text("unfinished_loop", lang, line=3)
    assert note in _said(at, "caption") and note in _said(at, "warning")
