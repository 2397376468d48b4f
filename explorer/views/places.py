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
from explorer.trace.schema import Call, LastRound, Round, Summary

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
    return " · ".join(part for part in (text("line_short", lang, line=step.line),
                                        around(step.rounds, step, lang)) if part)


def around(rounds: Sequence[Round] | None, step: Step | None, lang: str) -> str:
    """The loops' `rounds` and the innermost function of `step` (if given) in few words, as
    plain text, outermost first: the loops outside the function, the function with which
    call it is, the loops inside it ("epoch round 2/3 · step() #2 · i round 1")."""
    inside = len(step.calls or []) if step else 0
    own = [bool(inside) and min(r.depth or 0, inside) == inside for r in rounds or []]
    parts = [rounds_short([r for r, mine in zip(rounds or [], own, strict=True) if not mine],
                          lang), function_short(step) if step else "",
             rounds_short([r for r, mine in zip(rounds or [], own, strict=True) if mine], lang)]
    return " · ".join(part for part in parts if part)


def function_short(step: Step) -> str:
    """The innermost function of the program's a step is in, with which call: "step() #2";
    "" at top level."""
    if not step.calls:
        return ""
    return f"{_short(step.calls[-1])}()" + ("" if step.called is None else f" #{step.called:,}")


def making(steps: Sequence[Step], losses: Sequence[Summary], call: Call) -> Step | None:
    """The step of the line that made backward `call` (the first after the steps made before
    it, where that is its line's); None where that line was not stepped."""
    summary = losses[call.call - 1] if call.call <= len(losses) else None
    step = steps[call.after] if call.after is not None and call.after < len(steps) else None
    if step is None or summary is None or summary.call != call.call:
        return None
    return step if step.line == summary.line else None


def unstepped(last: LastRound, steps: Sequence[Step], lang: str) -> str:
    """Why the last round of a loop (`last`) was not stepped, in words: the run's error stopped
    it there, or it did not know its length, so that round was known to be its last only once
    it had run."""
    key = "last_round_raised" if raised_in(steps, last.line) else "last_round"
    ran = text("ran_rounds", lang, rounds=last.round) if last.count is None else text(
        "ran_rounds_runs", lang, rounds=last.round, count=last.count)
    return text(key, lang, loop=code_span(last.name), line=last.line, ran=ran)


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
    """The rounds of loops that ran between step `before` and `step` with no step of theirs
    shown (a long loop keeps only some), in words: "rounds 11–16 of `while`"; None where
    none were left out. Leaving `before`'s loops, the rest of the rounds each ran (as far as
    `step.reached` says its run went: a `break`, a `return` or an error ends it early); then
    the rounds of a loop both are in between their two rounds; then, entering `step`'s loops,
    each one's rounds before `step`'s. Those inside a round of a loop the two steps are not
    both in say which round (`rounds 3–4 of b (in round 3 of epoch)`)."""
    if before is None:
        return None
    was, now = before.rounds or [], step.rounds or []
    reached = [*(step.reached or [])[:len(was)], *[None] * (len(was) - len(step.reached or []))]
    depth = 0
    while depth < min(len(was), len(now)) and rounds_of(was[depth:depth + 1]) == rounds_of(
            now[depth:depth + 1]):
        depth += 1
    if depth == len(was) == len(now):
        return None
    parts: list[str] = []
    if depth < min(len(was), len(now)) and was[depth].line == now[depth].line and (
            reached[depth] == now[depth].round):  # a later round of the same loop's run
        old, new = was[depth], now[depth]
        parts += _rest(was[depth + 1:], reached[depth + 1:], old, lang)
        parts += filter(None, [_span(old.round + 1, new.round - 1, new, lang)])
        parts += _begun(now[depth + 1:], new, lang)
    else:  # out of loops, into others
        parts += _rest(was[depth:], reached[depth:], None, lang) + _begun(now[depth:], None,
                                                                          lang)
    return text("list_separator", lang).join(parts) or None


def _rest(loops: Sequence[Round], reached: Sequence[int | None], outer: Round | None,
          lang: str) -> list[str]:
    """The rounds of `loops` (outermost first) after those they are in, innermost first, as
    they ran: up to the round each one's run `reached` (where that is known); each in the
    round of the loop around it (`outer` around the first: None, not said)."""
    return [_in(said, parent, lang) for loop, last, parent in reversed(list(zip(
        loops, reached, [outer, *loops], strict=False))) if last is not None and (
            said := _span(loop.round + 1, last, loop, lang))]


def _begun(loops: Sequence[Round], outer: Round | None, lang: str) -> list[str]:
    """The rounds of `loops` (outermost first) before those they are in, each in the round of
    the loop around it (`outer` around the first: None, not said)."""
    return [_in(said, parent, lang) for loop, parent in zip(loops, [outer, *loops],
                                                            strict=False)
            if (said := _span(1, loop.round - 1, loop, lang))]


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
