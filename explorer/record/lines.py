"""Steps at the lines inside loops, blocks and the program's own functions. Runs in a worker.

`plan` rewrites a checked program so that each line inside a top-level statement tells
`Lines` when it has run (`__ae_line__(place)`), each function of the program's when it begins
(`__ae_enter__()`), a `return` or a `yield` statement before it hands its value over (the
value is held in a list, `__ae_returned__`, for the step to show, and taken out of it as it
is handed over: a generator paused there keeps it no longer), each loop when it starts
(`__ae_loop__(loop, iterable)`, which hands the iterable back untouched) and each round
(`__ae_round__(loop)`). The program sees nothing of it: no value, order or line number
changes, and the calls run none of its code. Top-level statements are stepped by
explorer.record.execute as before; a line inside one becomes a step of its own when the
innermost loop around it (in its function, else in those that called it) is in a round kept.
A loop's rounds are counted over the whole run, in every frame and every run of the loop, so
that nested loops sample together, as backward calls do: the first ten, then rounds 20, 40,
80…, and the very last round where every loop around it knows its length before it runs (a
range, a sequence, a tensor, an nn.ModuleList, a DataLoader of torch's own datasets). Where
one does not (a `while`, a generator), the last round is only known once it has run:
`unstepped` names it, and a run asked for it (`asked`, the same program again) steps through
it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import operator
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any, NamedTuple

import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
)
from torch.utils.data.dataloader import _BaseDataLoaderIter

from explorer.record.backward import kept
from explorer.record.observer import ProgramCode, refusing
from explorer.safety.sandbox import FILENAME
from explorer.trace.schema import MAX_NESTING, MAX_UNSTEPPED, LastRound, Note, Part, Round

LOOPS = (ast.For, ast.While)
BLOCKS = (*LOOPS, ast.If, ast.With, ast.Try, ast.TryStar, ast.Match)  # run statements of theirs
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (*FUNCTIONS, ast.ClassDef)
# Lines after which nothing runs in their block (they jump), or that change no state; a
# `return` or `yield` of a value steps before it hands the value over (`_Planner.handing`),
# and `break` and `continue` before they end the round (one may be all a round runs).
STILL = (ast.Return, ast.Raise, ast.Pass, ast.Global, ast.Nonlocal)
RETURNED = "__ae_returned__"  # a one-item list: the value a function returns or yields
FORGET = 4_096  # loops' rounds kept before those of finished frames are dropped
# Types whose len() runs none of the program's code (exactly these: a subclass's may be the
# program's), each walked in as many rounds: torch's module containers too.
SIZED = (range, list, tuple, str, dict, set, frozenset, torch.Tensor, torch.Size,
         torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ParameterList)


@dataclass(frozen=True)
class Place:
    """A line inside a top-level statement or a function: its lines, and the loops around it
    in its own function (numbers into `Plan.loops`), outermost first."""

    line: int
    end_line: int
    loops: tuple[int, ...]
    hands: str | None = None  # `return` or `yield` of a value: its step shows the value


@dataclass(frozen=True)
class Loop:
    """A loop of the program: its first line and what it walks (`epoch`, or `while`)."""

    line: int
    name: str


@dataclass
class Plan:
    """What `plan` found: the places that step and the loops that count rounds, and for each
    line of the program the loops around it (for a frame that is calling from it)."""

    places: list[Place] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    around: dict[int, tuple[int, ...]] = field(default_factory=dict)


def plan(tree: ast.Module) -> Plan:
    """Rewrite `tree` (checked by explorer.safety.sandbox) in place so that its inner lines
    step; the places and loops it numbered."""
    found = Plan()
    for statement in tree.body:
        _Planner(found).top(statement)
    ast.fix_missing_locations(tree)
    return found


class _Planner:
    """Rewrites the blocks of one top-level statement."""

    def __init__(self, found: Plan) -> None:
        self.found = found

    def top(self, statement: ast.stmt) -> None:
        if isinstance(statement, DEFINITIONS):
            self.definition(statement)
        elif isinstance(statement, BLOCKS):
            self.compound(statement, ())

    def definition(self, node: ast.stmt) -> None:
        """A function's body steps when it is called (with no loops of its caller's: those are
        the caller frame's); a class's methods do, not the class body itself."""
        if isinstance(node, FUNCTIONS):
            body = self.block(node.body, ())
            first = 1 if body and _docstring(body[0]) else 0  # a docstring stays the first
            node.body = [*body[:first], _passable(ast.copy_location(ast.Expr(_call("enter")),
                                                                    node.body[0])), *body[first:]]
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                self.definition(inner)

    def block(self, body: list[ast.stmt], loops: tuple[int, ...]) -> list[ast.stmt]:
        """`body` with a step after each line that changes state."""
        out: list[ast.stmt] = []
        for statement in body:
            for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1):
                self.found.around[line] = loops  # a block inside says its own after
            if isinstance(statement, DEFINITIONS):
                self.definition(statement)
                out.append(statement)
            elif isinstance(statement, BLOCKS):
                out.extend(self.compound(statement, loops))
            elif isinstance(statement, ast.Return) and statement.value is not None:
                out.extend(self.handing(statement, statement.value, "return", loops))
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Yield) \
                    and statement.value.value is not None:  # a step at resuming would be late
                out.extend(self.handing(statement, statement.value.value, "yield", loops))
            elif isinstance(statement, ast.Break | ast.Continue):
                out += [self.step(statement, loops), statement]
            else:
                out.append(statement)
                if not isinstance(statement, STILL) and not _guard(statement) and not (
                        _docstring(statement)):
                    out.append(self.step(statement, loops))
        return out

    def compound(self, node: ast.stmt, loops: tuple[int, ...]) -> list[ast.stmt]:
        """A block statement, its blocks rewritten; a loop counts its rounds."""
        self.found.around[node.lineno] = loops
        before: list[ast.stmt] = []
        inside = loops
        if isinstance(node, LOOPS):
            number = len(self.found.loops)
            self.found.loops.append(Loop(node.lineno, _walks(node)))
            inside = (*loops, number)
            if isinstance(node, ast.For):
                node.iter = ast.copy_location(_call("loop", number, node.iter), node.iter)
            else:
                before.append(ast.copy_location(ast.Expr(_call("loop", number)), node))
            node.body = [ast.copy_location(ast.Expr(_call("round", number)), node.body[0]),
                         *self.block(node.body, inside)]
            node.orelse = self.block(node.orelse, loops)  # runs once the rounds are over
            return [*before, node]
        for name in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, name, None), list):
                setattr(node, name, self.block(getattr(node, name), loops))
        for handler in getattr(node, "handlers", []):
            handler.body = self.block(handler.body, loops)
        for case in getattr(node, "cases", []):
            case.body = self.block(case.body, loops)
        return [node]

    def handing(self, statement: ast.stmt, value: ast.expr, keyword: str,
                loops: tuple[int, ...]) -> list[ast.stmt]:
        """`return value` or `yield value` as `__ae_returned__ = [value]`, the step, then
        `return` or `yield` of `__ae_returned__.pop()`: the frame keeps nothing it would not
        have kept (a generator paused at its `yield` holds an empty list)."""
        held = ast.Name(RETURNED, ast.Store())
        taken = ast.Call(ast.Attribute(ast.Name(RETURNED, ast.Load()), "pop", ast.Load()), [],
                         [])
        hand = ast.Return(taken) if keyword == "return" else ast.Expr(ast.Yield(taken))
        return [ast.copy_location(node, statement) for node in (
            ast.Assign([held], ast.List([value], ast.Load())),
            self.step(statement, loops, hands=keyword), hand)]

    def step(self, statement: ast.stmt, loops: tuple[int, ...], *, hands: str | None = None
             ) -> ast.stmt:
        """The call that steps after `statement`; at the recursion limit, where even that
        call cannot start, it is passed over as if it were not there."""
        number = len(self.found.places)
        self.found.places.append(Place(statement.lineno, statement.end_lineno or
                                       statement.lineno, loops, hands))
        return _passable(ast.copy_location(ast.Expr(_call("line", number)), statement))


def _passable(call: ast.Expr) -> ast.stmt:
    """`call` passed over at the recursion limit, where even it cannot start: as if it were
    not there."""
    passed = ast.ExceptHandler(ast.Name("__ae_recursion__", ast.Load()), None, [ast.Pass()])
    return ast.copy_location(ast.Try([call], [passed], [], []), call)


def _guard(statement: ast.stmt) -> bool:
    """Whether `statement` is a call explorer.safety.sandbox put in (`__ae_tick__()`)."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name)
            and statement.value.func.id.startswith("__ae_"))


def _docstring(statement: ast.stmt) -> bool:
    """Whether `statement` is a string alone (a docstring): it changes nothing."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _walks(loop: ast.For | ast.While) -> str:
    """A loop's name: its target as written (`epoch`, `i, (x, y)`), or `while`."""
    if not isinstance(loop, ast.For):
        return "while"
    written = ast.unparse(loop.target)
    if isinstance(loop.target, ast.Tuple) and len(loop.target.elts) > 1:
        written = written[1:-1]  # unparse brackets a tuple the program may not have
    return written[:80]


def _call(hook: str, *numbers: int | ast.expr) -> ast.Call:
    args = [n if isinstance(n, ast.expr) else ast.Constant(n) for n in numbers]
    return ast.Call(ast.Name(f"__ae_{hook}__", ast.Load()), args, [])


class _Round(NamedTuple):
    """A loop's round in one frame: its count there and over the run, whether it may be kept
    (`Lines._maybe_kept`, decided as it starts: a line of a round not kept, the common case,
    then costs one lookup), and the run's clock (`Round.began`) as it, the round before it and
    the loop's run began; which run of a loop it is in (the run's number over the run); and
    the count its run had as the step made last was made, where a round began since (`base`,
    as of step number `stamp`)."""

    count: int
    total: int
    kept: bool
    began: int | None = None
    previous: int | None = None
    loop_began: int | None = None
    run: int = 0
    base: int = 0
    stamp: int = -1


FRESH = _Round(1, 1, True)  # a loop's round where its frame has not said (round 1, kept)


@dataclass(frozen=True)
class Where:
    """Where a line ran: the loops around it, outermost first, each in its round; the
    program's functions it is in, outermost first, and the lines its frames around it are at
    (the calls that led to it); the innermost function's frame (None at top level), the run's
    clock as that function began and which of its calls it is."""

    rounds: list[Round]
    calls: list[str]
    frame: FrameType | None
    entered: int | None = None
    called: int | None = None
    calling: list[int] = field(default_factory=list)
    runs: list[tuple[tuple[int, int], int]] = field(default_factory=list)  # each round's key, run
    between: Between | None = None  # what ran since the step made last


@dataclass(frozen=True)
class Between:
    """What ran between the step made last and a step being made: for each loop around the
    one made last, the round its run reached (None where that run goes on around the step
    being made, or is not known); for each loop around the step being made, the round its run
    was in as the one made last was made (0: the run began since; None: not known); and the
    lines that ran, none of them stepped."""

    reached: list[int | None]
    since: list[int | None]
    lines: int


class Lines:
    """The hooks a planned program calls. `record(place, where)` makes the step and says what
    it cost (explorer.record.execute: the tensor elements it described, and a thousand for
    each graph node); it is not called while the engine runs a backward pass (a custom
    Function's backward, a hook), in a torch.func transform or a saved tensor's hook, once
    `most` steps were made or they cost `work` (a state of big tensors costs its values'
    time at every line) or took `seconds` (on a machine so slow that `work` is not enough:
    the run's own time comes first), or once the run is over. What fails in making a step (a deep
    recursion leaves it no room) is never the program's error: the step is left out.
    `asked`: rounds to keep besides, each (loop, its round over the run): a loop in one counts
    as in its last round. `now`: the run's clock, which dates the nodes made in each round."""

    def __init__(self, found: Plan, record: Callable[[Place, Where], int], most: int,
                 work: int, seconds: float, asked: frozenset[tuple[int, int]] = frozenset(),
                 *, now: Callable[[], int]) -> None:
        self.plan = found
        self.record = record
        self.now = now
        self.asked = asked
        self.most = most
        self.work = work
        self.seconds = seconds
        self.done = 0  # work done
        self.took = 0.0  # seconds it took
        self.made = 0
        self.passed = 0  # lines run in rounds not kept
        self.over = 0  # lines run after `most` steps or `work`
        self.failed = 0  # steps that could not be made
        self.paused = 0  # inside a saved tensor's hooks, or once the run is over
        self._rounds: dict[tuple[int, int], _Round] = {}  # (frame, loop) → its round
        # a function's frame → the run's clock as it began, and which of its calls it is
        self._entered: dict[int, tuple[int, int]] = {}
        self._calls: dict[CodeType, int] = {}  # a function's code → its calls over the run
        self._total: dict[int, int] = {}  # loop → rounds it started over the run
        self._latest: dict[int, int] = {}  # loop → its latest round, counted in its own run
        self._planned: dict[int, int | None] = {}  # loop → its latest run's length, if known
        self._lengths: dict[tuple[int, int], int] = {}  # (frame, loop) → rounds it will run
        self._in_last: set[tuple[int, int]] = set()  # (frame, loop) that began its last round
        # loop → the last of its rounds over the run in which a line it holds innermost was
        # stepped, or could not be
        self._settled: dict[int, int] = {}
        self._runs = itertools.count(1)
        # The loops' runs around the step made last, each (its key, its run), and the rounds
        # those that have ended since reached (`between`); the steps made, and the lines run
        # since the last of them that made none.
        self._seen: list[tuple[tuple[int, int], int]] = []
        self._ended: dict[int, int] = {}
        self._steps = 0
        self._skipped = 0

    def hooks(self) -> dict[str, Callable[..., Any]]:
        """The names a planned program calls, for its namespace."""
        return {"__ae_line__": self.line, "__ae_loop__": self.loop, "__ae_round__": self.round,
                "__ae_enter__": self.enter,
                "__ae_recursion__": RecursionError}

    @contextmanager
    def install(self) -> Iterator[None]:
        """Step while the program runs: not inside `SavedTensor.register_hooks` (its pack
        hook runs while the saved tensor is half made: reading it then crashes PyTorch),
        nor after."""
        saved = torch._C._autograd.SavedTensor
        original = saved.register_hooks

        @functools.wraps(original)  # it stands in for torch's method, name and module alike
        def register_hooks(*args: Any, **kwargs: Any) -> Any:
            self.paused += 1
            try:
                return original(*args, **kwargs)
            finally:
                self.paused -= 1

        saved.register_hooks = register_hooks
        try:
            yield
        finally:
            saved.register_hooks = original
            self.paused += 1  # a generator closed later runs its lines, unrecorded

    def loop(self, number: int, iterable: Any = None) -> Any:
        frame = sys._getframe(1)
        if len(self._rounds) > FORGET:
            self._forget(frame)
        key = (id(frame), number)
        self._end(key)
        self._in_last.discard(key)
        length = self._planned[number] = _length(iterable)
        if length is None:
            self._lengths.pop(key, None)
        else:
            self._lengths[key] = length
        total = self._total.get(number, 0)
        self._rounds[key] = _Round(0, total, self._maybe_kept(key, 0, total),
                                   loop_began=self.now(), run=next(self._runs),
                                   stamp=self._steps)
        return iterable

    def _end(self, key: tuple[int, int]) -> None:
        """The run of a loop (`key`) is over: where a step made last was in it, the round it
        reached is kept for `between`."""
        ended = self._rounds.get(key)
        if ended is not None and any(run == ended.run for _, run in self._seen):
            self._ended[ended.run] = ended.count

    def between(self, runs: list[tuple[tuple[int, int], int]]) -> Between:
        """What ran since the step made last, for a step made now inside the loops' `runs`
        (each its key and run, outermost first)."""
        going = {run for _, run in runs}
        reached: list[int | None] = []
        for key, run in self._seen:
            now = self._rounds.get(key)
            reached.append(None if run in going else now.count if now is not None and (
                now.run == run) else self._ended.get(run))
        since: list[int | None] = []
        for key, run in runs:
            now = self._rounds.get(key)
            since.append(None if now is None or now.run != run else
                         now.base if now.stamp == self._steps else now.count)
        return Between(reached, since, self._skipped)

    def stepped(self, where: Where | None) -> None:
        """A step was made `where` (None: after a top-level statement)."""
        self._seen, self._ended = (where.runs if where else []), {}
        self._steps += 1
        self._skipped = 0

    def enter(self) -> None:
        """A function of the program's begins: the run's clock then dates what the line that
        called it made before the call (`Where.entered`); and it counts its calls."""
        frame = sys._getframe(1)
        if len(self._entered) > FORGET:
            self._forget(frame)
        called = self._calls[frame.f_code] = self._calls.get(frame.f_code, 0) + 1
        self._entered[id(frame)] = (self.now(), called)

    def _forget(self, frame: FrameType) -> None:
        """Drop the rounds and clocks of frames no longer running (a generator paused in a
        loop starts its rounds again)."""
        alive = {id(f) for f, _ in running(frame)}
        for key in [k for k in self._rounds if k[0] not in alive]:
            self._end(key)
        self._rounds = {k: v for k, v in self._rounds.items() if k[0] in alive}
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in alive}
        self._in_last = {k for k in self._in_last if k[0] in alive}
        self._entered = {k: v for k, v in self._entered.items() if k in alive}

    def round(self, number: int) -> None:
        key = (id(sys._getframe(1)), number)
        total = self._total[number] = self._total.get(number, 0) + 1
        before = self._rounds.get(key) or _Round(0, 0, False)
        count, now = before.count + 1, self.now()
        self._latest[number] = count
        # A top-level `while` has no `loop` call before it (a statement of its own would be a
        # step): its run began as its first round did.
        began, run = (before.loop_began, before.run) if key in self._rounds else (
            now, next(self._runs))
        base = before.base if before.stamp == self._steps else before.count
        self._rounds[key] = _Round(count, total, self._maybe_kept(key, count, total), now,
                                   before.began, began, run, base, self._steps)
        if count == self._lengths.get(key):
            self._in_last.add(key)

    def line(self, number: int) -> None:
        place = self.plan.places[number]
        frame = sys._getframe(1)
        if place.loops and not self._rounds.get((id(frame), place.loops[-1]), FRESH).kept:
            self.passed += 1  # decided without walking the frames: the common case
            self._skipped += 1
            return
        frames = running(frame)
        keys = self._keys(frames, place.loops)
        if not self._kept(keys):
            self.passed += 1
            self._skipped += 1
            return
        if keys:  # the innermost loop's round: its own lines step in it
            self._settled[keys[0][1]] = self._rounds.get(keys[0], FRESH).total
        if self.paused or torch._C._current_graph_task_id() != -1 or _transformed():
            self._skipped += 1
            return
        if self.made >= self.most or self.done >= self.work or self.took >= self.seconds:
            self.over += 1
            self._skipped += 1
        else:
            started = time.perf_counter()
            try:
                where = self.where(frames, place.loops)
                self.done += self.record(place, where)
                self.made += 1
                self.stepped(where)
            except Exception:  # noqa: BLE001 - the recorder's failure is not the program's
                self.failed += 1
                self._skipped += 1
            self.took += time.perf_counter() - started

    def _maybe_kept(self, key: tuple[int, int], count: int, total: int) -> bool:
        """Whether a loop (`key`: its frame and number) in its round `count` there, `total`
        over the run, is in a round kept, asked for or in its last."""
        return kept(total) or (key[1], total) in self.asked or count == self._lengths.get(key)

    def _keys(self, frames: list[tuple[FrameType, int]], loops: tuple[int, ...]
              ) -> list[tuple[int, int]]:
        """The loops around the innermost of `frames` (at `loops`), innermost first, each as
        (its frame, its number)."""
        return [(id(frame), number) for index, (frame, line) in enumerate(frames)
                for number in reversed(loops if index == 0 else self.plan.around.get(line, ()))]

    def _kept(self, keys: list[tuple[int, int]]) -> bool:
        """Whether a line inside the loops `keys` is in a round kept: its innermost loop's
        round over the run is kept or asked for, or every loop around it is in its last (or
        asked) round."""
        if not keys:
            return True
        return (kept(self._rounds.get(keys[0], FRESH).total) or self._asked(keys[0])
                or all(map(self._last, keys)))

    def _last(self, key: tuple[int, int]) -> bool:
        """Whether a loop (`key`) is in its last round there, or in a round asked for."""
        return self._rounds.get(key, FRESH).count == self._lengths.get(key) or self._asked(key)

    def _asked(self, key: tuple[int, int]) -> bool:
        """Whether a loop (`key`) is in a round asked for (its round over the run)."""
        return (key[1], self._rounds.get(key, FRESH).total) in self.asked

    def in_last_or_asked(self) -> bool:
        """Whether the program's line running now is in a round stepped though not kept by its
        count: inside a round asked for, or in the last round of every loop around it. Its
        backward calls are recorded in full, as those of the rounds kept are. Asked of every
        backward call: the frames are walked only once some loop has begun its last round."""
        if not self.asked and not self._in_last:
            return False
        frames = running(sys._getframe(1))
        keys = self._keys(frames, self.plan.around.get(frames[0][1], ()) if frames else ())
        return bool(keys) and (any(map(self._asked, keys)) or all(map(self._last, keys)))

    def unstepped(self) -> list[LastRound]:
        """The loops whose last round over the run ran lines of their own (not an inner
        loop's) that no step went through, which a run asked for it would step: none in a
        round kept already (its error stopped its first line, say: a run asked for it would
        step no more), and none once steps ran out (they would run out there too)."""
        if self.over or not self.most:
            return []
        inside = {place.loops[-1] for place in self.plan.places if place.loops}
        return [LastRound(loop=number, line=self.plan.loops[number].line,
                          name=self.plan.loops[number].name, round=total,
                          count=count if (count := self._latest[number]) != total else None,
                          of=self._planned.get(number))
                for number, total in sorted(self._total.items())
                if number in inside and self._settled.get(number) != total
                and not kept(total) and (number, total) not in self.asked][:MAX_UNSTEPPED]

    def where(self, frames: list[tuple[FrameType, int]],
              loops: tuple[int, ...] | None = None) -> Where:
        """Where the innermost of `frames` (the program's, each with the line it is at,
        innermost first) is: its loops are `loops` if given (the place it stepped at), else
        those around its line; then its callers'."""
        rounds: list[Round] = []
        runs: list[tuple[tuple[int, int], int]] = []
        calls: list[str] = []
        innermost = None
        functions = [bool(frame.f_code.co_flags & inspect.CO_OPTIMIZED) for frame, _ in frames]
        depth = min(sum(functions), MAX_NESTING)  # of the calls told, those around the frame
        for (frame, line), function in zip(frames, functions, strict=True):
            numbers = self.plan.around.get(line, ()) if loops is None else loops
            loops = None
            rounds[:0] = [self._round(frame, n, depth) for n in numbers]
            runs[:0] = [((id(frame), n), self._rounds.get((id(frame), n), FRESH).run)
                        for n in numbers]
            if function:  # a function's, not a class body's
                calls.append(frame.f_code.co_qualname.replace(".<locals>", ""))
                innermost = innermost or frame
                depth = max(0, depth - 1)
        calls.reverse()
        calling = [line for _, line in reversed(frames[1:])]
        entered, called = self._entered.get(id(innermost), (None, None))
        runs = runs[-MAX_NESTING:]
        return Where(rounds[-MAX_NESTING:], calls[-MAX_NESTING:], innermost, entered, called,
                     calling[-MAX_NESTING:], runs, self.between(runs))

    def _round(self, frame: FrameType, number: int, depth: int) -> Round:
        key = (id(frame), number)
        loop = self.plan.loops[number]
        here = self._rounds.get(key, FRESH)
        count, length = max(1, here.count), self._lengths.get(key)
        return Round(line=loop.line, name=loop.name, round=count,
                     of=length if length is not None and count <= length else None,
                     loop_began=here.loop_began, previous_began=here.previous,
                     began=here.began, depth=depth or None)

    def note(self) -> Note | None:
        """What was left out, as a note; None if nothing was."""
        parts = []
        if self.passed:
            parts.append(Part(key="lines_passed_one" if self.passed == 1 else "lines_passed",
                              values={"count": self.passed}))
        if self.over:
            parts.append(Part(key="lines_over", values={
                "count": self.over, "made": self.made, "most": self.most,
                "seconds": self.seconds}))
        if self.failed:
            parts.append(Part(key="lines_failed", values={"count": self.failed}))
        return Note(key="lines", parts=parts) if parts else None


def running(frame: FrameType | None) -> list[tuple[FrameType, int]]:
    """The program's frames from `frame` outwards, each with the line it is at."""
    found = []
    while frame is not None:
        if _program(frame):
            found.append((frame, frame.f_lineno))
            if frame.f_code.co_name == "<module>":
                break  # the program's statements: none of its frames lie further out
        frame = frame.f_back
    return found


def raised(error: BaseException) -> list[tuple[FrameType, int]]:
    """The program's frames `error` passed through, innermost first, each with its line."""
    found = []
    tb = error.__traceback__
    while tb is not None:
        if _program(tb.tb_frame):
            found.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return found[::-1]


def _program(frame: FrameType) -> bool:
    """A frame of the program's: its statements or a function of its (not a comprehension
    or a lambda, which run within a line)."""
    name = frame.f_code.co_name
    return frame.f_code.co_filename == FILENAME and (name == "<module>" or name[0] != "<")


def _transformed() -> bool:
    """Whether a torch.func transform (vmap, grad...) is running: its tensors are not read."""
    return torch._C._functorch.peek_interpreter_stack() is not None


def _length(iterable: Any) -> int | None:
    """How many rounds a `for` over `iterable` runs, where that is known without running the
    program's code: a sized builtin, tensor or module container (`nn.ModuleList`), a builtin
    iterator over one (`enumerate`, `zip` of them), or a DataLoader (or its iterator) of
    torch's own parts. A generator (`model.parameters()`) has none, nor an iterator whose
    length hint would call the program's `__len__`."""
    length = None
    with suppress(OverflowError, ProgramCode), refusing() as refusal:  # OverflowError: more
        length = _known_length(iterable, type(iterable))  # rounds than a length holds
    return None if refusal.refused else length


def _known_length(iterable: Any, kind: type) -> int | None:
    if kind in (enumerate, zip):  # their reduce names what they walk, running nothing
        lengths = [_length(part) for part in iterable.__reduce__()[1]
                   if not isinstance(part, int)]
        return min(lengths) if lengths and None not in lengths else None  # type: ignore
    if kind in SIZED:
        return len(iterable) if kind is not torch.Tensor or iterable.dim() else None
    if kind.__module__ == "builtins" and "__length_hint__" in vars(kind):
        return operator.length_hint(iterable)  # a list's, a range's...: what is left
    if kind is DataLoader and _torch_sized(iterable.dataset, iterable.batch_sampler):
        return len(iterable)
    if isinstance(iterable, _BaseDataLoaderIter) and kind.__module__ == DataLoader.__module__ \
            and _torch_sized(iterable._dataset, iterable._index_sampler):
        return len(iterable)
    return None


def _torch_sized(dataset: Any, batches: Any) -> bool:
    """Whether a DataLoader of `dataset` in `batches` has a length that only torch's own
    code reads: tensors in a TensorDataset, walked in order or shuffled, batched or not."""
    sampler = getattr(batches, "sampler", batches)
    return (type(dataset) is TensorDataset
            and type(batches) in (BatchSampler, SequentialSampler, RandomSampler)
            and type(sampler) in (SequentialSampler, RandomSampler)
            and sampler.data_source is dataset
            and getattr(sampler, "_num_samples", None) is None)
