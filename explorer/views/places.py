"""Where a step is, in words: the line, the rounds of the loops around it and the program's
functions it ran in; why a loop's last round was not stepped; and the steps a learner moves
between (every line, or top-level statements only; the same line a round before or after).
Pure: no Streamlit, no torch."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace import Step
from explorer.trace.schema import Call, LastRound, Round

SHORT = 24  # characters of a loop's or function's name in a short label (the slider's)


def headline(step: Step, lang: str) -> str:
    """"State after line N"; of a `stopped` step, where the run's error stopped line N."""
    return text("stopped_line" if step.stopped else "after_line", lang, line=step.line)


def details(step: Step, lang: str) -> str:
    """The loops' rounds and the functions around the step, outermost first, as markdown
    (names in code spans): "`epoch` loop: round 2 of 3 · in `train()` · `batch` loop: round 1
    · in `step()`, call 2, from line 9"; "" for a top-level statement. Functions with no loop
    between them are one chain: "in `train()` › `step()`"."""
    functions = step.calls or []
    frames = [(min(r.depth or 0, len(functions)), _round(r, lang)) for r in step.rounds or []]
    parts = [said for depth, said in frames if not depth]
    chain: list[str] = []
    for depth, name in enumerate(functions, 1):
        chain.append(code_span(f"{name}()"))
        inside = [said for at, said in frames if at == depth]
        if inside or depth == len(functions):
            parts += [_called(" › ".join(chain), step, lang, depth == len(functions)), *inside]
            chain = []
    return " · ".join(parts)


def _round(loop: Round, lang: str) -> str:
    return text("round_of" if loop.of else "round", lang, name=code_span(loop.name),
                round=loop.round, of=loop.of)


def _called(chain: str, step: Step, lang: str, innermost: bool) -> str:
    """"in `f()` › `g()`", with which call of the innermost function and from which line."""
    if not innermost:
        return text("in_call", lang, call=chain)
    return (text("in_call", lang, call=chain) if step.called is None else
            text("in_call_nth", lang, call=chain, nth=step.called)) + (
        text("from_line", lang, line=step.calling[-1]) if step.calling else "")


def rounds_short(rounds: Sequence[Round] | None, lang: str) -> str:
    """Loops' rounds in few words, as plain text: "epoch round 2/3 · i, (x, y) round 1"."""
    return " · ".join(text("round_short_of" if r.of else "round_short", lang,
                           name=_short(r.name), round=r.round, of=r.of)
                      for r in rounds or [])


def place(step: Step, lang: str) -> str:
    """A step in few words, as plain text (the slider's label): its line, then `around`:
    "line 12 · epoch round 2/3 · step() #2 · i round 1"."""
    return " · ".join(part for part in (text("line_short", lang, line=step.line), around(
        step.rounds, step.calls, step.called, lang)) if part)


def around(rounds: Sequence[Round] | None, calls: Sequence[str] | None, called: int | None,
           lang: str) -> str:
    """The loops' `rounds` and the innermost of the functions `calls` (with which call of it
    it is, `called`) in few words, as plain text, outermost first: the loops outside the
    function, the function, the loops inside it ("epoch round 2/3 · step() #2 · i round 1")."""
    inside = len(calls or [])
    own = [bool(inside) and min(r.depth or 0, inside) == inside for r in rounds or []]
    function = f"{_short(calls[-1])}()" + ("" if called is None else f" #{called:,}") \
        if calls else ""
    parts = [rounds_short([r for r, mine in zip(rounds or [], own, strict=True) if not mine],
                          lang), function,
             rounds_short([r for r, mine in zip(rounds or [], own, strict=True) if mine], lang)]
    return " · ".join(part for part in parts if part)


def unstepped(last: LastRound, steps: Sequence[Step], lang: str) -> str:
    """Why the last round of a loop (`last`) was not stepped, in words: the run's error stopped
    it there; or it did not know its length, or ended before it, or a loop around it did, so
    that round was known to be the last only once it had run."""
    key = "last_round_raised" if raised_in(steps, last.line) else "last_round" if (
        last.of is None) else "last_round_early" if last_round_number(last) < last.of else (
        "last_round_outer")
    ran = text("ran_rounds", lang, rounds=last.round) if last.count is None else text(
        "ran_rounds_runs", lang, rounds=last.round, count=last.count)
    return text(key, lang, loop=code_span(last.name), line=last.line, ran=ran, of=last.of)


def last_round_number(last: LastRound) -> int:
    """The number a step of a loop's last round (`last`) gives it: its round in the loop's
    own run (an inner loop's counts start again in each)."""
    return last.round if last.count is None else last.count


def in_frame_before(steps: Sequence[Step], index: int) -> Step | None:
    """The last step before step `index` in the same call of the same function (its locals
    are the ones step `index`'s changed); None where it is the call's first."""
    now = steps[index]
    return next((step for step in reversed(steps[:index])
                 if step.calls == now.calls and step.called == now.called), None)


def not_stepped(before: Step | None, step: Step, lang: str) -> str | None:
    """What ran between step `before` and `step` with no step of it shown (a long loop keeps
    only some rounds), in words: "rounds 11–16 of `while`"; None where nothing did. As
    `step` says (`reached`, `since`, `skipped`): leaving each loop of `before`'s whose run
    does not go on around `step`, innermost first, the rounds it ran after `before`'s (a
    `break`, a `return` or an error may end it early); then, outermost first, each loop of
    `step`'s rounds since the one it was in at `before` (all before `step`'s, where its run
    began since); then how many lines ran in all. Those inside a round of a loop the two
    steps are not both in say which round (`rounds 3–4 of b (in round 3 of epoch)`)."""
    if before is None:
        return None
    was, now = before.rounds or [], step.rounds or []
    reached, since = _padded(step.reached, len(was)), _padded(step.since, len(now))
    depth = 0  # loops in the same round of the same run at both steps
    while depth < min(len(was), len(now)) and reached[depth] is None and (
            rounds_of(was[depth:depth + 1]) == rounds_of(now[depth:depth + 1])):
        depth += 1
    parts = [_in(said, was[i - 1] if i > depth else None, lang)
             for i in reversed(range(depth, len(was))) if (last := reached[i]) is not None
             and (said := _span(was[i].round + 1, last, was[i], lang))]
    parts += [_in(said, now[j - 1] if j > depth else None, lang)
              for j in range(depth, len(now)) if (first := since[j]) is not None
              and (said := _span(first + 1, now[j].round - 1, now[j], lang))]
    if step.skipped:
        lines = text("lines_between_one" if step.skipped == 1 else "lines_between", lang,
                     count=step.skipped)
        parts.append(text("lines_in_all", lang, lines=lines) if parts else lines)
    return text("list_separator", lang).join(parts) or None


def _padded(values: list[int | None] | None, length: int) -> list[int | None]:
    """`values` (a forged answer's may be short or long) as `length` values, None added."""
    return [*(values or [])[:length], *[None] * (length - len(values or []))]


def _span(first: int, last: int, loop: Round, lang: str) -> str | None:
    """"rounds 3–4 of `b`", "round 3 of `b`"; None where there are none."""
    if last < first:
        return None
    return text("rounds_between" if last > first else "round_between", lang, first=first,
                last=last, loop=code_span(loop.name))


def _in(rounds: str, loop: Round | None, lang: str) -> str:
    """`rounds` said to have run in `loop`'s round (None: `rounds` alone)."""
    if loop is None:
        return rounds
    return text("between_in", lang, rounds=rounds, round=loop.round, loop=code_span(loop.name))


def raised_in(steps: Sequence[Step], line: int) -> bool:
    """Whether the run's error stopped a line inside the loop at `line` (in any of its
    frames)."""
    stopped = steps[-1] if steps and steps[-1].stopped else None
    return stopped is not None and any(r.line == line for r in stopped.rounds or [])


def _short(name: str) -> str:
    return name if len(name) <= SHORT else name[:SHORT - 1] + "…"


def inner(steps: Sequence[Step]) -> bool:
    """Whether any step is a line inside a top-level statement (a loop's, a function's...)."""
    return any(step.inner for step in steps)


def stops(steps: Sequence[Step], inside: bool) -> list[int]:
    """The indices of the steps a learner moves between: every step `inside` loops and
    functions, else the top-level statements (which fold the lines run inside them) and the
    state where the run's error stopped a line."""
    return [i for i, step in enumerate(steps) if inside or not step.inner or step.stopped]


def folded(stopping: Sequence[int], index: int) -> int:
    """The stop that shows step `index`: itself, or the first after it (the top-level
    statement that folds a line run inside it comes after that line), else the last."""
    at = bisect_left(stopping, index)
    return stopping[min(at, len(stopping) - 1)]


def other_round(steps: Sequence[Step], index: int, later: bool) -> int | None:
    """The same line as step `index`, reached through the same calls (a function called from
    two lines is two places), in the next (`later`) or previous kept round of the loops around
    it, crossing into the outer loop's next round; None when there is none."""
    step = steps[index]
    if not step.rounds:
        return None
    here = rounds_of(step.rounds)
    others = range(index + 1, len(steps)) if later else range(index - 1, -1, -1)
    return next((i for i in others if steps[i].line == step.line and steps[i].rounds
                 and steps[i].calling == step.calling and rounds_of(steps[i].rounds) != here),
                None)


def rounds_of(rounds: Sequence[Round] | None) -> tuple[tuple[int, int], ...]:
    """The loops around a step or a call and their rounds, as (line, round) pairs."""
    return tuple((r.line, r.round) for r in rounds or [])


def last_round(steps: Sequence[Step], line: int) -> int | None:
    """The index of the first step of the last round stepped of the loop at `line` (in the
    same rounds of the loops around it); None where no step is inside that loop."""
    found, rounds = None, None
    for index in range(len(steps) - 1, -1, -1):
        here = _down_to(steps[index].rounds, line)
        if here is not None and rounds in (None, here):
            found, rounds = index, here
        elif found is not None:
            break
    return found


def call_in_round(calls: Sequence[Call], step: Step, line: int) -> int | None:
    """The first of the recorded backward `calls` made in the round of the loop at `line`
    that `step` is in (in the same rounds of the loops around it): its number; None where
    none was."""
    here = _down_to(step.rounds, line)
    if here is None:
        return None
    return next((c.call for c in calls if _down_to(c.rounds, line) == here), None)


def _down_to(rounds: Sequence[Round] | None, line: int) -> tuple[tuple[int, int], ...] | None:
    """`rounds` (a step's or a call's) down to the loop at `line`, as (line, round) pairs;
    None where that loop is not among them."""
    pairs = rounds_of(rounds)
    lines = [at for at, _ in pairs]
    return pairs[:lines.index(line) + 1] if line in lines else None
