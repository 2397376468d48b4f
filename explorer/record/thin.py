"""A run's record made to fit what a run may send back, thinned a level at a time, with a
note saying what went. Runs inside a worker, after the program.

What is kept longest is what a visitor came for: the output, the error, the program's state
after its last statement (or where its error stopped a line) and that statement's graph. The
loss curve goes to 2,000 points first, then older steps: their values cut to a leading block
(with the norm of all of them), their graphs, the backward calls before the last, their
variables; last the values of the last state and of the last replay. A step's `locals` (the
variables of the function it ran in) go with its variables, level by level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from msgspec.structs import replace

from explorer.trace import Step, Trace
from explorer.trace.schema import Note, Part, Variable
from explorer.trace.wire import MAX_RESULT_BYTES, message, parts

Variables = dict[str, Variable]
NOTE_BYTES = 1 << 12  # room kept for the note that says what was thinned
POINTS = 2_000  # backward calls whose loss and gradient norms a thinned record keeps


def fitted(trace: Trace, budget: int = MAX_RESULT_BYTES) -> bytes:
    """The answer for `trace`, at most `budget` bytes if thinning can make it so; `trace` is
    thinned in place, and a note says how. Levels are taken in order, first only those whose
    part of the record holds at least a quarter of what must go (what is small is kept), then
    any left. Only the fields a level changed are written anew, and the answer is put
    together once, at the end."""
    texts = parts(trace)
    sent = message(texts)
    if len(sent) <= budget:
        return sent
    sizes = {name: _size(text) for name, text in texts.items()}
    said: list[Part] = []
    left = list(LEVELS)
    for choosy in (True, False):
        for entry in list(left):
            level, target, fields = entry
            excess = sum(sizes.values()) + NOTE_BYTES - budget
            if excess <= 0:
                break
            if choosy and sizes[target] < excess / 4:
                continue
            left.remove(entry)
            if (what := level(trace)) is not None:
                said.append(what)
                texts |= parts(trace, fields)
                sizes |= {name: _size(texts[name]) for name in fields}
    trace.notes.append(Note(key="thinned", parts=said, values={
        "sent": _mib(len(sent)), "budget": _mib(budget), "thinned": _mib(sum(sizes.values()))}))
    return message(texts | parts(trace, frozenset({"notes"})))


def _size(text: bytes) -> int:
    """The bytes a field takes in the answer, at most (its name and separator too)."""
    return len(text) + 32


# Each level thins a Trace in place and says what it took, or None if it had nothing to take.
Level = Callable[[Trace], Part | None]


def _fewer_summaries(trace: Trace) -> Part | None:
    calls, apart = len(trace.losses), len(trace.losses) / POINTS
    if calls <= POINTS:
        return None
    trace.losses[:] = [trace.losses[round(k * apart)] for k in range(POINTS - 1)] + [
        trace.losses[-1]]
    return Part(key="fewer_summaries", values={"points": POINTS, "calls": calls})


def _older(trace: Trace) -> list[Step]:
    """The steps before the last, but one where the run's error stopped a line."""
    return [step for step in trace.steps[:-1] if not step.stopped]


def _kept(trace: Trace) -> list[Step]:
    """The steps thinned last: the last, and one where the run's error stopped a line."""
    return [step for step in trace.steps if step.stopped or step is trace.steps[-1]]


def _older_values(cap: int) -> Level:
    def thin(trace: Trace) -> Part | None:
        cut = [(step, _cut(step.variables, cap), _cut_locals(step.locals, cap))
               for step in _older(trace)]
        if all(v is s.variables and x is s.locals for s, v, x in cut):
            return None
        for step, variables, local in cut:
            step.variables, step.locals = variables, local
        return Part(key="older_values", values={"cap": cap})
    return thin


def _older_graphs(trace: Trace) -> Part | None:
    shown = {step.graph for step in _kept(trace)}
    older = [step for step in _older(trace) if step.graph not in (None, *shown)]
    if not older:
        return None
    for step in older:
        step.graph = None
    trace.keep_shown_graphs()
    return Part(key="older_graphs")


def _older_calls(trace: Trace) -> Part | None:
    """All calls but the last recorded in full (and any that raised after it, kept with no
    steps)."""
    replayed = [i for i, call in enumerate(trace.backward) if call.steps]
    if not replayed or replayed[-1] == 0:
        return None
    trace.backward[:replayed[-1]] = []
    trace.keep_shown_graphs()
    return Part(key="older_calls")


def _older_variables(trace: Trace) -> Part | None:
    older = _older(trace)
    if not any(step.variables or step.locals for step in older):
        return None
    for step in older:  # a step in a function stays one: its locals `{}`, not None
        step.variables, step.locals = {}, None if step.locals is None else {}
    return Part(key="older_variables")


def _last_values(trace: Trace) -> Part | None:
    kept = _kept(trace)
    cut = _cut(trace.variables, 10)
    if cut is trace.variables and all(_cut(s.variables, 10) is s.variables and _cut_locals(
            s.locals, 10) is s.locals for s in kept):
        return None
    for step in kept:
        step.variables = cut if step.variables is trace.variables else _cut(step.variables, 10)
        step.locals = _cut_locals(step.locals, 10)
    trace.variables = cut
    return Part(key="last_values")


def _last_call_values(trace: Trace) -> Part | None:
    cut = False
    for call in trace.backward:
        for grad in call.gradients():
            if isinstance(grad.values, list) and _count(grad.values) > 10:
                grad.values, grad.truncated, cut = _leading(grad.values, 10), True, True
    return Part(key="last_call_values") if cut else None


# A level that drops graphs renumbers them: what refers to them is written anew.
STEPS, GRAPHS, CALLS = (frozenset({"steps"}), frozenset({"graphs", "library"}),
                        frozenset({"backward"}))
# In order, each with the field of the answer it makes smaller and those it may change.
LEVELS: tuple[tuple[Level, str, frozenset[str]], ...] = (
    (_fewer_summaries, "losses", frozenset({"losses"})),
    (_older_values(100), "steps", STEPS),
    (_older_values(10), "steps", STEPS),
    (_older_graphs, "graphs", STEPS | GRAPHS | CALLS),
    (_older_calls, "backward", GRAPHS | CALLS | STEPS),
    (_older_variables, "steps", STEPS),
    (_last_values, "variables", STEPS | {"variables"}),
    (_last_call_values, "backward", CALLS))


def _cut(variables: Variables, cap: int) -> Variables:
    """`variables` with each tensor's and array's values (and `.grad`) cut to a leading block
    of at least `cap` (explorer.record.snapshot.leading_block), the norm of all of them kept;
    `variables` itself if none is cut."""
    cut = {name: _cut_one(info, cap) for name, info in variables.items()}
    return variables if all(cut[name] is info for name, info in variables.items()) else cut


def _cut_locals(local: Variables | None, cap: int) -> Variables | None:
    """A step's locals cut as `_cut` cuts variables (None, not in a function, stays so)."""
    return None if local is None else _cut(local, cap)


def _cut_one(info: Variable, cap: int) -> Variable:
    """One variable cut so (`info` itself if nothing is). A `.grad` is cut only if its norm
    can be said: that it has one is what tells a page it was cut (explorer.views.present)."""
    values, grad = info.values, info.grad
    cut: dict[str, Any] = {}
    if info.kind in ("tensor", "ndarray") and isinstance(values, list) and (
            _count(values) > cap):
        cut["values"], cut["truncated"] = _leading(values, cap), True
        if isinstance(info.tangent, list):  # of the values' shape: the same block
            cut["tangent"] = _leading(info.tangent, cap)
        if not info.truncated and (norm := _norm(values)) is not None:
            cut["norm"] = norm
    if info.kind == "tensor" and isinstance(grad, list) and _count(grad) > cap and (
            norm := info.grad_norm if info.grad_norm is not None else _norm(grad)) is not None:
        cut["grad"], cut["grad_norm"] = _leading(grad, cap), norm
    return replace(info, **cut) if cut else info


def _leading(values: list[Any], cap: int) -> list[Any]:
    """A prefix along the first dimensions holding between `cap` and 2·`cap` numbers."""
    if _count(values) <= cap:
        return values
    row = _count(values[0]) if values else 0
    if row > cap:
        return [_leading(values[0], cap)]
    return values[: -(-cap // max(row, 1))]


def _count(values: Any) -> int:
    """The numbers in nested lists (a list of plain numbers counted at once)."""
    if not isinstance(values, list):
        return 1
    if not values or not isinstance(values[0], list):
        return len(values)
    return sum(_count(v) for v in values)


def _norm(values: list[Any]) -> float | None:
    """The 2-norm of nested numbers; None if any is text (complex, not finite) or it is not
    finite."""
    flat = list(_flat(values))
    if not all(isinstance(v, int | float) for v in flat):
        return None
    norm = math.sqrt(math.fsum(float(v) * float(v) for v in flat))
    return norm if math.isfinite(norm) else None


def _flat(values: Any) -> Iterator[Any]:
    if isinstance(values, list):
        for value in values:
            yield from _flat(value)
    else:
        yield values


def _mib(size: int) -> float:
    return size / 2**20
