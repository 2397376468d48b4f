"""The state where a run's error stopped a line inside a loop, a block or a function: the last
step, `stopped`, in its round and call, through the real worker pool (explorer.record.execute)."""

from __future__ import annotations

import pytest

from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.trace import Step, Trace
from explorer.trace.schema import Round
from explorer.views import places
from tests.test_pages import _graph, _playground, _run, _text

FREED_IN_LOOP = ("w = torch.ones(2, requires_grad=True)\ny = (w * w).sum()\n"
                 "for i in range(3):\n    y.backward()\nprint(w.grad)\n")
CALLED_FROM_LOOP = ("w = torch.ones(2, requires_grad=True)\n"
                    "def scaled(k):\n    if k == 1:\n        raise ValueError('no 1')\n"
                    "    return (w * k).sum()\n"
                    "for i in range(3):\n    scaled(i).backward()\n")


def _where(trace: Trace) -> tuple[int, int | None, list[tuple[str, int]], list[str] | None]:
    last = trace.steps[-1]
    assert last.stopped and trace.error is not None and last.line == trace.error.line
    return (last.line, last.within, [(r.name, r.round) for r in last.rounds or ()],
            last.calls)


def test_a_loop_that_raises_in_its_second_round_shows_that_round(pool: WorkerPool) -> None:
    trace = pool.run(FREED_IN_LOOP)
    assert _where(trace) == (4, 3, [("i", 2)], None)
    assert trace.steps[-1].variables["w"].grad == [2.0, 2.0]  # round 1's backward wrote it
    assert trace.variables == trace.steps[-1].variables


def test_an_error_in_a_function_a_loop_called_shows_the_call_and_the_round(
        pool: WorkerPool) -> None:
    trace = pool.run(CALLED_FROM_LOOP)
    assert _where(trace) == (4, 6, [("i", 2)], ["scaled"])
    assert trace.steps[-1].locals["k"].values == 1
    assert trace.variables["w"].grad == [0.0, 0.0]  # round 1: scaled(0).backward()


def test_an_error_on_a_plain_top_level_line_adds_no_step(pool: WorkerPool) -> None:
    trace = pool.run("x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n")
    assert trace.error.line == 3 and [s.line for s in trace.steps] == [1, 2]
    assert not any(s.stopped for s in trace.steps)


@pytest.mark.parametrize(("code", "error", "within", "calls"), [
    ("a = 1\nwith torch.no_grad():\n    b = 2\n    c = b / 0\n", 4, 2, None),
    ("a = 1\nif a:\n    b = a / 0\n", 3, 2, None),
    ("a = 1\ntry:\n    b = a / 0\nfinally:\n    c = 2\n", 3, 2, None),
    ("a = 1\nclass Model:\n    size = a / 0\n", 3, 2, None),  # a class body is no call
    ("def f(v):\n    return v / 0\nout = f(1)\n", 2, 3, ["f"]),  # the line that called
])
def test_other_blocks_and_calls_show_the_state_at_the_error(
        pool: WorkerPool, code: str, error: int, within: int, calls: list[str] | None) -> None:
    assert _where(pool.run(code)) == (error, within, [], calls)


def test_a_lambda_made_before_and_called_in_a_loop_stops_in_the_loops_round(
        pool: WorkerPool) -> None:
    trace = pool.run("f = lambda v: v / (1 - v)\nfor i in range(3):\n    f(i)\n")
    assert _where(trace) == (1, 2, [("i", 2)], None)  # a lambda is part of its line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_open_at_the_state_where_the_error_stopped_with_its_round(lang: str) -> None:
    where = places.details(Step(4, 4, "", {}, rounds=[Round(line=6, name="i", round=2, of=3)],
                                calls=["scaled"], called=2, calling=[7]), lang)  # round 2
    for at in (_run(_playground(lang), CALLED_FROM_LOOP), _graph(CALLED_FROM_LOOP, lang)):
        said = _text(at)
        assert text("stopped_where", lang, where=where) in said  # in the error's panel
        assert f"**{text('stopped_line', lang, line=4)}** · {where}" in said  # the step shown
