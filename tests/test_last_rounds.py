"""A loop's last round where its length is known only once it has run (explorer/record/lines.py):
the Trace names it (`unstepped`), and the same program run again with that round asked for
(`rounds=`) steps through it, with the state plain Python has there, and changes nothing else
of the run. Loops whose last round was stepped, or could not be, are not named."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from explorer.pool.worker import WorkerPool
from explorer.record.backward import ASKED_CALLS
from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Step, Trace
from explorer.trace.schema import MAX_UNSTEPPED, LastRound
from explorer.trace.wire import trace_message
from explorer.views.places import call_in_round, last_round, unstepped
from tests.programs import WHILE

LIMITS = Limits(time_s=30)
ROUNDS = 29  # 1.5 ** 29 is the first power past 1e5
GENERATOR = """def batches(n):
    for k in range(n):
        yield k

total = 0
for epoch in range(3):
    for b in batches(epoch * 20):
        total = total + b
print(total)
"""


def run(code: str, **asked: Any) -> Trace:
    trace = execute(code, limits=LIMITS, **asked)
    assert trace.ok, trace.error
    again = Trace.from_json(trace_message(trace))  # the server takes it as it is
    assert again == trace
    return trace


def seen(steps: list[Step]) -> list[tuple[int, list[int], dict[str, Any]]]:
    """What each step shows: its line, its rounds, its variables' values (not addresses)."""
    return [(s.line, [r.round for r in s.rounds or []],
             {n: (v.values, v.grad) for n, v in s.variables.items()}) for s in steps]


def stepped(trace: Trace, line: int) -> list[tuple[tuple[int, ...], Any]]:
    """The rounds of each step at `line`, with its variables' values there."""
    return [(tuple(r.round for r in s.rounds or []), {n: v.values for n, v in
                                                      s.variables.items()})
            for s in trace.steps if s.line == line and s.rounds]


def test_a_while_loops_last_round_is_named_and_a_run_asked_for_it_steps_through_it() -> None:
    first = run(WHILE)
    assert first.unstepped == [LastRound(loop=0, line=4, name="while", round=ROUNDS)]
    assert [r for r, _ in stepped(first, 5)] == [(k,) for k in (*range(1, 11), 20)]
    again = run(WHILE, rounds=((0, ROUNDS),))
    assert again.unstepped == []
    assert [r for r, _ in stepped(again, 5)] == [(k,) for k in (*range(1, 11), 20, ROUNDS)]
    (_, state), = [(r, v) for r, v in stepped(again, 6) if r == (ROUNDS,)]
    assert state["x"] == pytest.approx(1.5 ** ROUNDS) and state["y"] == pytest.approx(
        1.5 ** ROUNDS + 1)
    # Nothing else changed: the same output, and every step of the first run, in order.
    assert again.stdout == first.stdout == f"{_plain_x().item()}\n"
    kept = [s for s in again.steps if not (s.rounds and s.rounds[0].round == ROUNDS)]
    assert seen(kept) == seen(first.steps)


def test_a_while_loops_last_round_is_said_to_be_unknown_until_it_ended() -> None:
    trace = execute(WHILE, limits=LIMITS)
    assert [unstepped(last, trace.steps, "en") for last in trace.unstepped] == [
        f"The `while` loop at line 4 ran {ROUNDS} rounds, and its last was not stepped: a loop "
        "that does not know its length (a `while`, a loop over a generator) is only known to "
        "end once it has."]


@pytest.mark.parametrize("top", [True, False], ids=["top-level", "in-a-function"])
def test_a_loop_the_error_cut_short_is_said_to_have_raised_in_its_last_round(top: bool) -> None:
    loop = "for i in range(100):\n    y = x * i\n    if i == 57:\n        bad = [1][2]\n"
    code = ("x = 2\n" + loop if top else
            "x = 2\ndef f():\n" + "".join(f"    {line}\n" for line in loop.splitlines())
            + "    return y\nz = f()\n")
    trace = execute(code, limits=LIMITS)
    assert trace.error is not None and trace.error.type == "IndexError"
    line = 2 if top else 3
    assert trace.unstepped == [LastRound(loop=0, line=line, name="i", round=58, of=100)]
    assert unstepped(trace.unstepped[0], trace.steps, "en") == (
        f"The `i` loop at line {line} ran 58 rounds: the error stopped its last round, whose "
        "lines were not stepped. Step through that round to see them.")
    said = unstepped(trace.unstepped[0], trace.steps, "zh")
    assert "共运行了 58 轮：错误在最后一轮中抛出" in said


def test_a_loop_ended_early_or_inside_one_ended_early_says_so() -> None:
    """A `for` over a range knows its length: a `break` ending it early, or a `return` ending
    the loop around it, is why its last round went unstepped, not an unknown length."""
    broke = execute("for epoch in range(40):\n    x = epoch\n    if epoch == 15:\n"
                    "        break\n", limits=LIMITS)
    (last,) = broke.unstepped
    assert (last.round, last.of) == (16, 40)
    assert unstepped(last, broke.steps, "en") == (
        "The `epoch` loop at line 1 ran 16 rounds, and its last was not stepped: a `break`, a "
        "`return` or an error ended it before its 40 rounds, so that round was known to be its "
        "last only once it had run.")
    assert "在跑满 40 轮之前就结束了" in unstepped(last, broke.steps, "zh")
    returned = execute("def find(n):\n    for i in range(n):\n        for j in range(5):\n"
                       "            t = i * j\n            if t > 40:\n"
                       "                return i, j\n\nfor k in range(3):\n"
                       "    pair = find(20)\n", limits=LIMITS)
    inner = next(last for last in returned.unstepped if last.name == "j")
    assert (inner.count, inner.of) == (5, 5)  # its own last run ran all five rounds
    assert "a loop around it did not know its length, or a `break`, a `return` or an error " \
        "ended it early" in unstepped(inner, returned.steps, "en")
    assert "它外层的循环不知道自身长度" in unstepped(inner, returned.steps, "zh")


def _plain_x() -> torch.Tensor:
    """`x` after the loop of WHILE, in plain PyTorch (single precision)."""
    x = torch.tensor(1.0)
    for _ in range(ROUNDS):
        x = x * torch.tensor(1.5)
    return x


def test_a_generators_last_round_in_the_last_round_around_it_is_stepped_when_asked() -> None:
    first = run(GENERATOR)
    (named,) = [last for last in first.unstepped if last.name == "b"]
    assert (named.line, named.round) == (7, 0 + 20 + 40)  # its rounds over the run
    again = run(GENERATOR, rounds=((named.loop, named.round),))
    assert all(last.loop != named.loop for last in again.unstepped)
    (_, state), = [(r, v) for r, v in stepped(again, 8) if r == (3, 40)]
    assert state["b"] == 39 and state["total"] == sum(range(20)) + sum(range(40))
    assert again.stdout == first.stdout


def test_a_backward_call_in_the_round_asked_for_is_recorded_in_full() -> None:
    code = ("import torch\nw = torch.tensor(1.0, requires_grad=True)\nloss = torch.tensor(9.0)\n"
            "while loss.item() > 0.01:\n    loss = (w - 3) ** 2\n    loss.backward()\n"
            "    with torch.no_grad():\n        w -= 0.05 * w.grad\n        w.grad.zero_()\n")
    first = run(code)
    (last,) = first.unstepped
    calls = len(first.losses)
    assert last.round == calls and [c.call for c in first.backward] == [*range(1, 11), 20]
    again = run(code, rounds=((last.loop, last.round),))
    assert [c.call for c in again.backward] == [*range(1, 11), 20, calls]
    replayed = again.backward[-1]
    assert [(r.name, r.round) for r in replayed.rounds] == [("while", last.round)]
    assert replayed.value == first.losses[-1].value and replayed.steps  # the engine's steps
    (at_backward,) = [s for s in again.steps if s.line == 6 and s.rounds[0].round == last.round]
    assert at_backward.variables["loss"].values == pytest.approx(replayed.value)
    assert call_in_round(again.backward, at_backward, 4) == calls  # the page opens it
    assert call_in_round(again.backward, again.steps[0], 4) is None  # before the loop


def test_a_dataloader_of_the_programs_own_dataset_steps_its_last_batch_when_asked() -> None:
    """Its length is the program's `__len__`, which the recorder never runs: the last batch
    of the last epoch is known only once it has run."""
    code = ("import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n"
            "class Squares(Dataset):\n    def __len__(self):\n        return 64\n"
            "    def __getitem__(self, i):\n        x = torch.tensor([float(i)])\n"
            "        return x, x ** 2\n\n"
            "model = torch.nn.Linear(1, 1)\nopt = torch.optim.SGD(model.parameters(), lr=1e-5)\n"
            "for epoch in range(3):\n    for xb, yb in DataLoader(Squares(), batch_size=4, "
            "shuffle=True):\n        loss = ((model(xb) - yb) ** 2).mean()\n"
            "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
            "print(loss.item())\n")
    first = run(code)
    assert first.unstepped == [LastRound(loop=1, line=14, name="xb, yb", round=48,
                                          count=16)]
    again = run(code, rounds=((1, 48),))
    assert again.unstepped == [] and again.stdout == first.stdout
    assert [(r.name, r.round, r.of) for r in again.backward[-1].rounds] == [
        ("epoch", 3, 3), ("xb, yb", 16, None)]
    (stepped_loss,) = [s for s in again.steps if s.line == 15 and s.rounds[-1].round == 16
                       and s.rounds[0].round == 3]
    assert stepped_loss.variables["loss"].values == pytest.approx(again.backward[-1].value)


def test_an_inner_loops_last_round_asked_for_alone_is_stepped() -> None:
    """A `for` of known length inside a `while`: its last round is the while's last too,
    which is unknown, so both are named; asked alone, the inner one is stepped."""
    code = "n = 0\nwhile n < 30:\n    n += 1\n    for i in range(3):\n        x = n * 10 + i\n"
    first = run(code)
    assert [(last.name, last.round, last.count) for last in first.unstepped] == [
        ("while", 30, None), ("i", 90, 3)]  # i's last round is labelled round 3
    again = run(code, rounds=((1, 90),))
    assert [last.name for last in again.unstepped] == ["while"]
    (last_x,) = [s for s in again.steps if s.line == 5 and s.rounds[0].round == 30]
    assert last_x.variables["x"].values == 302 and [r.round for r in last_x.rounds] == [30, 3]


def test_a_round_asked_for_records_at_most_ten_calls_in_full() -> None:
    code = ("import torch\nw = torch.tensor(1.0, requires_grad=True)\nn = 0\n"
            "while n < 30:\n    n += 1\n    for k in range(40):\n"
            "        (w * k).backward()\n")
    first = run(code)
    (outer,) = [last for last in first.unstepped if last.name == "while"]
    again = run(code, rounds=((outer.loop, outer.round),))
    assert len(again.backward) == len(first.backward) + ASKED_CALLS


@pytest.mark.parametrize("code", [
    "for i in range(50):\n    x = i\n",  # its length is known: its last round is stepped
    "n = 0\nwhile n < 5:\n    n += 1\n",  # every round is among the first ten
    "it = iter(range(100))\nfor i in it:\n    pass\n",  # no line of it steps
])
def test_a_loop_whose_last_round_was_stepped_or_has_no_step_is_not_named(code: str) -> None:
    assert run(code).unstepped == []


@pytest.mark.parametrize("limits", [Limits(time_s=30, line_steps=0),
                                    Limits(time_s=30, line_steps=5)])
def test_nothing_is_named_where_steps_were_off_or_ran_out(limits: Limits) -> None:
    """Asked again, the run would run out of steps before that round too."""
    trace = execute(WHILE, limits=limits)
    assert trace.ok and trace.unstepped == []


def test_a_round_that_raised_is_named_and_stepped_up_to_the_error_when_asked() -> None:
    code = WHILE.replace("    y = x + 1\n", "    y = x + 1\n    assert x < 1e5, 'past'\n")
    first = execute(code, limits=LIMITS)
    assert first.error is not None and first.error.type == "AssertionError"
    assert first.unstepped == [LastRound(loop=0, line=4, name="while", round=ROUNDS)]
    again = execute(code, limits=LIMITS, rounds=((0, ROUNDS),))
    assert again.error == first.error and again.unstepped == []
    assert [(s.line, s.stopped) for s in again.steps if s.rounds and s.rounds[0].round
            == ROUNDS] == [(5, None), (6, None), (7, True)]


def test_at_most_eight_loops_are_named() -> None:
    code = "n = 0\nwhile n < 30:\n    n += 1\n" * (MAX_UNSTEPPED + 3)
    trace = run(code)
    assert [last.loop for last in trace.unstepped] == list(range(MAX_UNSTEPPED))
    assert {last.round for last in trace.unstepped} == {30}


def test_a_round_asked_of_no_loop_changes_nothing() -> None:
    assert seen(run(WHILE, rounds=((7, 3), (0, 10 ** 9))).steps) == seen(run(WHILE).steps)


def test_the_pool_runs_a_round_asked_for_and_keeps_it_apart() -> None:
    pool = WorkerPool(1)  # one that keeps repeatable runs, as the app's does
    try:
        first = pool.run(WHILE)
        again = pool.run(WHILE, rounds=((0, ROUNDS),))
        assert not again.reused and again.unstepped == [] and first.unstepped
        assert len(again.steps) == len(first.steps) + 2
        assert pool.run(WHILE, rounds=((0, ROUNDS),)).reused  # repeatable: kept as asked
        assert pool.run(WHILE).steps == first.steps
    finally:
        pool.close()


def test_the_first_step_of_a_loops_last_round_stepped_is_found() -> None:
    trace = run(WHILE, rounds=((0, ROUNDS),))
    at = last_round(trace.steps, 4)
    assert at is not None and trace.steps[at].line == 5
    assert trace.steps[at].rounds[0].round == ROUNDS and trace.steps[at - 1].rounds[0].round == 20
    assert last_round(trace.steps, 99) is None
    nested = run(GENERATOR, rounds=((2, 60),))  # `for b`: the function's loop is the first
    at = last_round(nested.steps, 7)
    assert at is not None and [r.round for r in nested.steps[at].rounds] == [3, 40]
    # the step before it: the generator's `yield` handing b its last value, before b's
    # round began (its loop is the generator's k, in its round 40)
    assert [(r.name, r.round) for r in nested.steps[at - 1].rounds] == [("epoch", 3), ("k", 40)]


def test_a_round_kept_that_the_error_stopped_at_its_first_line_is_not_offered_again() -> None:
    # .grad is None before the first backward(): round 1 of both loops is kept, and a run
    # asked for it would step no more than the state where the error stopped
    code = ("model = torch.nn.Linear(2, 1)\nfor it in range(3):\n"
            "    for p in model.parameters():\n        p.grad.zero_()\n"
            "    model(torch.ones(2)).sum().backward()\n")
    trace = execute(code, limits=LIMITS)
    assert trace.error is not None and trace.error.type == "AttributeError"
    assert trace.unstepped == []
    assert trace.steps[-1].stopped and [r.round for r in trace.steps[-1].rounds] == [1, 1]
