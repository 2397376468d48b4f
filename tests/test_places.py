"""Where a step is, in words, and the steps a learner moves between (explorer.views.places):
pure, on steps made by hand as the recorder makes them."""

from __future__ import annotations

from dataclasses import replace

from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Step
from explorer.trace.schema import LastRound, Round
from explorer.views import places


def step(line: int, *rounds: tuple[str, int, int | None], within: int | None = 10,
         calls: list[str] | None = None, stopped: bool | None = None) -> Step:
    """A step of line `line` inside the loops `rounds` ((name, round, of), the first on line
    10, the next on line 11...)."""
    return Step(line=line, end_line=line, output="", variables={},
                within=within if rounds or calls or stopped else None,
                rounds=[Round(line=10 + n, name=name, round=r, of=of)
                        for n, (name, r, of) in enumerate(rounds)] or None,
                calls=calls, stopped=stopped)


# for epoch in range(2): for i, (x, y) in enumerate(data): loss = step(x, y) (line 12, its
# function's line 6), then line 13; then the loop's own statement (line 10), then line 17.
RUN = [step(line, ("epoch", e, 2), ("i, (x, y)", i, None),
            calls=["step"] if line == 6 else None)
       for e in (1, 2) for i in (1, 2) for line in (6, 12)] + [step(10), step(17)]


def test_a_loops_round_and_its_function_are_said_in_both_languages() -> None:
    inner = RUN[5]  # epoch round 2, i round 1, line 12
    assert places.headline(inner, "en") == "State after line 12"
    assert places.details(inner, "en") == "`epoch` loop: round 2 of 2 · `i, (x, y)` loop: round 1"
    assert places.details(RUN[4], "en").endswith(" · in `step()`")
    assert places.details(RUN[4], "zh") == (
        "`epoch` 循环：第 2 轮（共 2 轮） · `i, (x, y)` 循环：第 1 轮 · 在 `step()` 中")
    assert places.details(RUN[-1], "en") == ""  # a top-level statement: its line says it
    assert places.headline(RUN[-1], "en") == "State after line 17"


def test_the_slider_and_the_call_list_say_a_place_in_few_words() -> None:
    assert places.place(RUN[4], "en") == "line 6 · epoch round 2/2 · i, (x, y) round 1 · step()"
    assert places.place(RUN[-1], "zh") == "第 17 行"
    assert places.rounds_short(RUN[4].rounds, "zh") == "epoch 第 2/2 轮 · i, (x, y) 第 1 轮"
    assert places.rounds_short(None, "en") == ""
    long = step(3, ("a_very_long_name_for_a_loop_variable", 1, None))
    assert places.place(long, "en") == "line 3 · a_very_long_name_for_a_… round 1"


def test_nested_functions_are_named_outermost_first() -> None:
    inner = step(4, calls=["train", "Net.forward"])
    assert places.details(inner, "en") == "in `train()` › `Net.forward()`"
    assert places.place(inner, "en") == "line 4 · Net.forward()"


def test_a_loop_inside_a_function_is_said_inside_it() -> None:
    code = """def train(data):
    total = 0
    for x in data:
        total = total + step(x)
    return total


def step(x):
    for part in range(2):
        y = x * part
    return y


for epoch in range(2):
    train([1, 2])
"""
    trace = execute(code)
    assert trace.error is None
    inner = next(s for s in trace.steps if s.line == 10)  # epoch 1, x 1, part 1
    assert places.details(inner, "en") == (
        "`epoch` loop: round 1 of 2 · in `train()` · `x` loop: round 1 of 2"
        " · in `step()`, call 1, from line 4 · `part` loop: round 1 of 2")
    assert places.details(inner, "zh") == (
        "`epoch` 循环：第 1 轮（共 2 轮） · 在 `train()` 中 · `x` 循环：第 1 轮（共 2 轮）"
        " · 在 `step()` 的第 1 次调用中（由第 4 行调用） · `part` 循环：第 1 轮（共 2 轮）")
    returned = next(s for s in trace.steps if s.line == 11)  # no loop of its own around it
    assert places.details(returned, "en") == (
        "`epoch` loop: round 1 of 2 · in `train()` · `x` loop: round 1 of 2"
        " · in `step()`, call 1, from line 4")
    assert places.place(inner, "en") == (
        "line 10 · epoch round 1/2 · x round 1/2 · step() #1 · part round 1/2")
    assert places.place(returned, "zh") == "第 11 行 · epoch 第 1/2 轮 · x 第 1/2 轮 · step() #1"
    chained = replace(inner, rounds=[r for r in inner.rounds if r.name != "x"])
    assert places.details(chained, "en") == (  # no loop between them: one chain
        "`epoch` loop: round 1 of 2 · in `train()` › `step()`, call 1, from line 4"
        " · `part` loop: round 1 of 2")


def test_which_call_of_a_function_a_step_is_in_is_said() -> None:
    again = replace(step(5, calls=["f"]), called=2)
    assert places.details(again, "en") == "in `f()`, call 2"
    assert places.details(again, "zh") == "在 `f()` 的第 2 次调用中"
    assert places.place(replace(again, called=1234), "en") == "line 5 · f() #1,234"


def test_the_line_that_called_a_function_is_said() -> None:
    nested = replace(step(5, calls=["g", "f"]), called=3, calling=[12, 8])
    assert places.details(nested, "en") == "in `g()` › `f()`, call 3, from line 8"
    assert places.details(nested, "zh") == "在 `g()` › `f()` 的第 3 次调用中（由第 8 行调用）"
    assert places.details(replace(nested, called=None), "en") == "in `g()` › `f()`, from line 8"


def test_a_calls_step_before_is_found_past_the_calls_it_made() -> None:
    outer, inner = (replace(step(4, calls=["f"] * depth), called=called)
                    for depth, called in ((1, 1), (2, 2)))
    steps = [step(7), outer, inner, replace(inner, line=5), replace(outer, line=5)]
    assert places.in_frame_before(steps, 4) is outer  # not the inner call's line 5
    assert places.in_frame_before(steps, 2) is None  # the inner call's first step
    assert places.in_frame_before(steps, 0) is None  # top level: none before


def test_where_the_error_stopped_a_line_is_said_so() -> None:
    stopped = step(21, ("j", 1, 2), stopped=True)
    assert places.headline(stopped, "en") == "State where the error stopped line 21"
    assert places.headline(stopped, "zh") == "第 21 行出错停下时的状态"


def test_a_loops_unstepped_last_round_is_said_raised_only_where_the_error_stopped_it() -> None:
    last = LastRound(loop=1, line=11, name="j", round=58)
    cut = [*RUN[:2], step(21, ("epoch", 1, 2), ("j", 58, 100), stopped=True)]
    assert places.raised_in(cut, 11) and places.raised_in(cut, 10)
    assert places.unstepped(last, cut, "en") == (
        "The `j` loop at line 11 ran 58 rounds: the error stopped its last round, whose lines "
        "were not stepped. Step through that round to see them.")
    assert "共运行了 58 轮：错误在最后一轮中抛出" in places.unstepped(last, cut, "zh")
    assert places.last_round_number(last) == 58
    # An inner loop's rounds over the run, and the round its steps are labelled with
    inner = LastRound(loop=1, line=11, name="j", round=158, count=58)
    assert places.unstepped(inner, cut, "en").startswith(
        "The `j` loop at line 11 ran 158 rounds in all (58 in its last run): the error stopped "
        "its last round")
    said = places.unstepped(inner, cut, "zh")
    assert "共运行了 158 轮（最后一次运行了 58 轮）" in said
    assert places.last_round_number(inner) == 58
    for steps in (RUN, [*RUN, step(30, stopped=True)], []):  # ended, or stopped outside it
        assert not places.raised_in(steps, 11)
        assert "does not know its length" in places.unstepped(last, steps, "en")


def test_folded_the_learner_steps_over_top_level_statements_and_the_error() -> None:
    assert places.inner(RUN) and not places.inner(RUN[-2:])
    assert places.stops(RUN, inside=True) == list(range(len(RUN)))
    assert places.stops(RUN, inside=False) == [8, 9]
    stopped = [step(1, within=None), step(3, ("j", 1, 2)), step(3, ("j", 2, 2), stopped=True)]
    assert places.stops(stopped, inside=False) == [0, 2]  # the state at the error stays
    # A line inside a statement folds into that statement, which comes after it.
    assert places.folded([8, 9], 3) == 8 and places.folded([8, 9], 9) == 9
    assert places.folded([8, 9], 20) == 9 and places.folded(range(1, 5), 0) == 1


def test_a_round_on_or_back_is_the_same_line_in_the_loops_next_kept_round() -> None:
    assert places.other_round(RUN, 1, later=True) == 3  # line 12: i round 1 → 2
    assert places.other_round(RUN, 3, later=True) == 5  # i's last round → epoch 2's first
    assert places.other_round(RUN, 5, later=False) == 3
    assert places.other_round(RUN, 7, later=True) is None  # the last round
    assert places.other_round(RUN, 0, later=False) is None  # the first
    assert places.other_round(RUN, 8, later=True) is None  # no loop around it
    # A function called twice in one round: on is the next round, not the second call.
    twice = [step(6, ("k", 1, 2), calls=["f"]), step(6, ("k", 1, 2), calls=["f"]),
             step(6, ("k", 2, 2), calls=["f"])]
    assert places.other_round(twice, 0, later=True) == 2
    assert places.other_round(twice, 2, later=False) == 1
    # Called from lines 9 and 10 in each round: on and back keep to the same caller's line
    callers = [replace(step(6, ("k", k, 2), calls=["f"]), calling=[line])
               for k in (1, 2) for line in (9, 10)]
    assert places.other_round(callers, 1, later=True) == 3
    assert places.other_round(callers, 2, later=False) == 0


def test_a_loop_is_named_by_what_it_walks_as_written() -> None:
    code = ("pairs = [(1, (2, 3))]\nfor i, (x, y) in pairs:\n    a = x\nfor (p) in [1]:\n"
            "    b = p\nwhile a:\n    a = 0\n")
    names = {r.name for s in execute(code).steps for r in s.rounds or ()}
    assert names == {"i, (x, y)", "p", "while"}


def ran(later: Step, reached: list[int | None] | None = None,
        since: list[int | None] | None = None, skipped: int | None = None) -> Step:
    """`later`, made when the loops around the step before it had `reached` those rounds,
    its own loops' runs had been in rounds `since` at the step before, and `skipped` lines
    had run unstepped between them."""
    return replace(later, reached=reached, since=since, skipped=skipped)


def test_rounds_run_between_two_steps_and_not_stepped_are_said() -> None:
    def at(line: int, *rounds: int) -> Step:
        return replace(step(line, *(("while" if k == 0 else "i", r, None)
                                   for k, r in enumerate(rounds))), within=10)
    later = ran(at(8, 17), [None], [10])  # the same run, seven rounds on
    assert places.not_stepped(at(12, 10), later, "en") == "rounds 11–16 of `while`"
    assert places.not_stepped(at(12, 10), later, "zh") == " `while` 的第 11–16 轮"
    assert places.not_stepped(at(12, 10), ran(at(8, 12), [None], [10]), "en") == (
        "round 11 of `while`")
    assert places.not_stepped(at(12, 10), ran(at(8, 11), [None], [10]), "en") is None
    assert places.not_stepped(at(12, 3, 1), ran(at(8, 3, 40), [None, None], [3, 1]),
                              "en") == "rounds 2–39 of `i`"
    assert places.not_stepped(at(12, 3, 9), ran(at(8, 4, 1), [None, 9], [3, 0]), "en") is None
    assert places.not_stepped(at(12, 1, 10), ran(at(8, 2, 10), [None, 10], [1, 0]), "en") == (
        "rounds 1–9 of `i` (in round 2 of `while`)")
    # Three deep: each loop's rounds in the round of the loop around it
    deep = [("a", 1, 5), ("b", 4, 5), ("c", 1, 3)], [("a", 2, 5), ("b", 2, 5), ("c", 2, 3)]
    assert places.not_stepped(step(5, *deep[0]), ran(step(5, *deep[1]), [None, 5, 3],
                                                     [1, 0, 0]), "en") == (
        "rounds 2–3 of `c` (in round 4 of `b`); round 5 of `b` (in round 1 of `a`); "
        "round 1 of `b` (in round 2 of `a`); round 1 of `c` (in round 2 of `b`)")
    assert places.not_stepped(None, at(8, 17), "en") is None
    # Out of the loop: the rounds it ran after the step before's, as far as it went
    assert places.not_stepped(at(12, 10), ran(step(3), [14]), "en") == "rounds 11–14 of `while`"
    assert places.not_stepped(at(12, 10), ran(step(3), [10]), "en") is None  # it broke
    assert places.not_stepped(at(12, 10), step(3), "en") is None  # not known: nothing said
    # The lines that ran unstepped, in all
    assert places.not_stepped(at(12, 10), ran(later, [None], [10], 30), "en") == (
        "rounds 11–16 of `while`; 30 lines in all")
    assert places.not_stepped(at(12, 10), ran(later, [None], [10], 30), "zh") == (
        " `while` 的第 11–16 轮；共 30 行代码")
    assert places.not_stepped(step(2), ran(step(3), skipped=1), "en") == "1 line"


def test_rounds_of_an_inner_loop_of_known_length_left_or_begun_are_said() -> None:
    def at(line: int, *rounds: int) -> Step:  # for epoch in range(4): for b in range(4)
        return step(line, *((name, r, 4) for name, r in zip(("epoch", "b"), rounds,
                                                             strict=False)))
    # Into the inner loop at its round 4, from the line before it: its rounds 1–3 ran
    assert places.not_stepped(at(5, 4), ran(at(6, 4, 4), [None], [4, 0]), "en") == (
        "rounds 1–3 of `b`")
    # Out of it after round 2: rounds 3–4 ran, then the line after it
    assert places.not_stepped(at(6, 2, 2), ran(at(7, 2), [None, 4], [2]), "en") == (
        "rounds 3–4 of `b`")
    # A `break` in round 2: no round ran after it, though four would have
    assert places.not_stepped(at(6, 2, 2), ran(at(7, 2), [None, 2], [2]), "en") is None
    # Across the outer loop's next round: the rest of b's run, then its new run's first two
    across = ran(at(6, 4, 3), [None, 4], [3, 0])
    assert places.not_stepped(at(6, 3, 2), across, "en") == (
        "rounds 3–4 of `b` (in round 3 of `epoch`); rounds 1–2 of `b` (in round 4 of `epoch`)")
    assert places.not_stepped(at(6, 3, 2), across, "zh") == (
        " `b` 的第 3–4 轮（`epoch` 的第 3 轮中）； `b` 的第 1–2 轮（`epoch` 的第 4 轮中）")
    assert places.not_stepped(at(6, 1, 4), ran(at(6, 3, 1), [None, 4], [1, 0]), "en") == (
        "round 2 of `epoch`")
    assert places.not_stepped(at(6, 3, 3), ran(at(6, 3, 4), [None, None], [3, 3]),
                              "en") is None


def test_rounds_a_loop_did_not_run_are_not_said_to_be_unstepped() -> None:
    """A `break`, a `return` or a caught error ends a loop's run before its length: the
    rounds it never ran are not "not stepped"; those it ran unstepped are, and so are the
    lines that ran unstepped in all. A generator's loop, paused between its rounds, and the
    loop that takes its values step in turn: neither's rounds ran unstepped."""
    programs = {
        "for i in range(6):\n    x = i\n    if i == 2:\n        break\n": [],
        "def find(xs):\n    for x in xs:\n        if x > 2:\n            return x\n\n"
        "for e in range(3):\n    y = find([1, 2, 3, 4, 5])\n": [
            f"rounds 1–2 of `x` (in round {e} of `e`)" for e in (1, 2, 3)],
        "for e in range(2):\n    try:\n        for i in range(5):\n            x = i\n"
        "            if i == 1:\n                raise ValueError\n"
        "    except ValueError:\n        pass\n": [],
        "for i in range(6):\n    if i < 3:\n        x = i\n": ["rounds 4–6 of `i`"],
        "def batches(n):\n    for start in range(n):\n        yield start\n\n"
        "for batch in batches(3):\n    x = batch * 2\n": [],
        "t = 0\nfor e in range(12):\n    for b in range(4):\n        t += b\n    t -= 1\n": [
            "rounds 3–4 of `b`; 2 lines in all", "4 lines",
            "rounds 1–3 of `b` (in round 5 of `e`); 3 lines in all", *["4 lines"] * 4,
            "rounds 1–3 of `b` (in round 10 of `e`); 3 lines in all",
            "round 11 of `e`; rounds 1–3 of `b` (in round 12 of `e`); 8 lines in all"],
    }
    for code, said in programs.items():
        trace = execute(code)
        assert trace.error is None
        got = [places.not_stepped(before, now, "en")
               for before, now in zip(trace.steps, trace.steps[1:], strict=False)]
        assert [s for s in got if s] == said, code


def test_a_backward_call_is_placed_in_the_function_whose_line_made_it() -> None:
    code = ("w = torch.ones(2, requires_grad=True)\ndef train_step(x):\n"
            "    loss = (w * x).sum()\n    loss.backward()\n    return loss\n"
            "for epoch in range(3):\n    train_step(torch.ones(2))\n(w * 2).sum().backward()\n")
    trace = execute(code)
    assert [places.around(c.rounds, c.calls, c.called, "en") for c in trace.backward] == [
        f"epoch round {k}/3 · train_step() #{k}" for k in (1, 2, 3)] + [""]
    # Where the line was not stepped too: steps ran out before round 10
    many = execute(code.replace("range(3)", "range(12)"), limits=Limits(line_steps=20))
    assert not any(s.line == 4 and s.rounds[0].round == 10 for s in many.steps if s.rounds)
    assert [places.around(c.rounds, c.calls, c.called, "en") for c in many.backward] == [
        f"epoch round {k}/12 · train_step() #{k}" for k in (*range(1, 11), 12)]
