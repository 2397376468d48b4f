"""Run a checked program statement by statement and record a Trace. Runs inside a worker.

Each top-level statement is compiled and executed on its own in the sandbox namespace;
after it, and after each line inside it that explorer.record.lines keeps, every variable is
described (`explorer.record.snapshot`) and the graph drawn; an error inside a statement adds
the state where it stopped. A clock interrupts Python code at the time limit; the worker's
parent kills what a clock cannot interrupt.
"""

from __future__ import annotations

import ast
import inspect
import random
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

import numpy as np
import torch

from explorer.record.backward import FIRST, Calling, Recorder, finish
from explorer.record.graph import Ids
from explorer.record.graph import record as record_graph
from explorer.record.lines import (
    RETURNED,
    Between,
    Lines,
    Place,
    Where,
    plan,
    raised,
    running,
)
from explorer.record.modules import Modules
from explorer.record.orders import Orders
from explorer.record.snapshot import snapshot
from explorer.safety import sandbox
from explorer.safety.guards import Guards, Output, names_a_date, unrepeatable_reached
from explorer.safety.limits import LimitExceeded, Limits, TimeLimit, memory_message, time_message
from explorer.safety.sandbox import FILENAME
from explorer.trace import Step, Trace, error_info, failure
from explorer.trace.graph_view import in_scope
from explorer.trace.schema import MAX_LIBRARY, Error, Note, Summary

RING_AGAIN = 0.05  # seconds after the time is up that the clock rings again, until heard
FRAME_AND_OURS = 3  # references to a frame's f_locals copy: the frame's, ours, getrefcount's
LINE_SHARE = 0.4  # of a run's time, what the steps of lines inside statements may take
NODE_WORK = 1_000  # a graph node drawn at a step costs as much as describing this many values
# Errors of the place and the moment, not of the program: a run that ends so may not repeat.
UNREPEATABLE = frozenset({"TimeLimit", "MemoryLimit", "MemoryError"})
OOM_WORDS = ("can't allocate memory", "not enough memory", "out of memory", "CUDA out of memory")


def execute(code: str, *, device: str = "cpu", limits: Limits = Limits(),
            seed: int | None = 0, keep: tuple[int, ...] = (),
            rounds: tuple[tuple[int, int], ...] = (),
            progress: Callable[[Summary], None] | None = None) -> Trace:
    """Check and run `code`, returning its Trace; never raises for anything the code does.

    `keep`: backward calls to record in full besides the first ten and calls 20, 40, 80…;
    `rounds`: loops' rounds to step through besides, each (loop, round over the run), as a
    Trace's `unstepped` names them;
    `progress`: told each backward call's summary (loss, gradient norms) as it runs."""
    started = time.perf_counter()
    try:
        program = sandbox.prepare(code)
    except SyntaxError as error:
        return failure("SyntaxError", error.msg, error.lineno, device=device)
    except sandbox.Refused as error:
        return failure("Refused", error.reason, error.line, device=device)
    except RecursionError:
        return failure("Refused", "the program is nested too deeply to check", None,
                       device=device)
    if device.startswith("cuda") and not torch.cuda.is_available():
        return failure("DeviceUnavailable", "This machine has no CUDA GPU "
                       "(torch.cuda.is_available() is False): run the program on the CPU.",
                       device=device)

    if device != "cpu":  # a default device is a function mode: every op would pay for it
        torch.set_default_device(device)
        torch.cuda.set_device(torch.device(device))  # `cuda` alone means the chosen GPU
    if seed is not None:
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)
    out = Output(limits.output_chars)
    reached = unrepeatable_reached()
    guards = Guards(limits, out)
    namespace = guards.namespace()
    trace = Trace(ok=True, notes=[Note(key=key) for key in program.notes], device=device,
                  threads=torch.get_num_threads())
    ids = Ids()
    steps = _Steps(trace, namespace, out, limits, ids, Modules(), Orders(ids))
    found = plan(program.tree)
    lines = Lines(found, steps.inner, limits.line_steps, limits.line_work,
                  LINE_SHARE * limits.time_s, frozenset(rounds), now=ids.now)
    namespace.update(lines.hooks())
    stopped: Where | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        warnings.showwarning = _recorder(caught)
        try:
            recorder = Recorder(lambda: _user_variables(namespace), steps.ids, steps.modules,
                                trace.graphs, limits.graph_nodes, keep, progress,
                                lambda: _calling(namespace, lines), steps.orders,
                                lines.in_last_or_asked, lambda: len(trace.steps))
            with _clock(limits), recorder.install(), steps.modules.install(), lines.install():
                for stmt in program.tree.body:
                    steps.line = stmt.lineno
                    _run_step(stmt, namespace, guards, steps, lines)
        except BaseException as error:  # noqa: BLE001 - every failure becomes data
            trace.ok = False
            trace.error = _describe_error(error, steps.line, limits)
            frames = raised(error)
            if len(frames) > 1 or (frames and frames[0][1] in found.around):
                stopped = lines.where(frames)
    trace.backward, trace.losses = finish(recorder.calls), recorder.summaries
    trace.library = recorder.passes.made
    trace.unstepped = lines.unstepped()
    packed = any(graph.packed for graph in trace.graphs)
    trace.keep_shown_graphs()  # a training loop draws one per call, most calls not kept
    if recorder.count > len(recorder.calls):
        trace.notes.append(Note(key="backward_calls", values={
            "count": recorder.count, "kept": len(recorder.calls), "first": FIRST,
            "doubled": 2 * FIRST, "quadrupled": 4 * FIRST, "octupled": 8 * FIRST}))
    if recorder.library:
        trace.notes.append(Note(key="library_calls", values={"count": recorder.library}))
    if recorder.passes.undrawn:
        trace.notes.append(Note(key="library_undrawn", values={
            "count": recorder.passes.undrawn, "places": MAX_LIBRARY}))
    if recorder.batched:
        trace.notes.append(Note(key="batched_calls", values={"count": recorder.batched}))
    if packed:
        trace.notes.append(Note(key="packed"))
    if steps.top >= limits.steps:
        trace.notes.append(Note(key="statements", values={"steps": limits.steps}))
    if said := lines.note():
        trace.notes.append(said)
    trace.stdout = out.getvalue()
    if out.dropped:
        trace.notes.append(Note(key="output_dropped", values={
            "count": out.dropped, "cap": limits.output_chars}))
    trace.warnings = _warnings(caught)
    complete = trace.ok and steps.top == len(program.tree.body)
    try:  # a big module's repr takes time (never the program's own): on the clock, limits and all
        with _clock(limits):
            if stopped is not None and trace.error is not None and trace.error.line:
                steps.take(trace.error.line, trace.error.line, stopped, steps.line, True)
            trace.variables = trace.steps[-1].variables if trace.steps and (
                complete or stopped) else snapshot(namespace, limits.value_elements)
    except BaseException:  # noqa: BLE001 - state after a memory error may not be describable
        trace.notes.append(Note(key="undescribed"))
    trace.elapsed_ms = (time.perf_counter() - started) * 1000
    trace.repeatable = (seed is not None and unrepeatable_reached() == reached
                        and not (trace.error and trace.error.type in UNREPEATABLE)
                        and not names_a_date(program.tree))
    return trace


@dataclass
class _Steps:
    """Makes the run's steps: the state after a line, described, and its graph drawn."""

    trace: Trace
    namespace: dict[str, Any]
    out: Output
    limits: Limits
    ids: Ids
    modules: Modules
    orders: Orders
    line: int = 0  # the top-level statement running
    top: int = 0  # top-level statements stepped
    printed: int = 0  # output told by the steps so far

    def inner(self, place: Place, where: Where) -> int:
        """The step after the line at `place` inside the statement running; what it cost:
        the tensor and array elements it described, and a thousand for each graph node."""
        self.take(place.line, place.end_line, where, self.line, hands=place.hands)
        step = self.trace.steps[-1]
        graph = self.trace.graphs[step.graph] if step.graph is not None else None
        return sum(v.numel or 0 for v in (*step.variables.values(),
                                          *(step.locals or {}).values())) + NODE_WORK * len(
            graph.nodes if graph else ())

    def take(self, line: int, end_line: int, where: Where | None = None,
             within: int | None = None, stopped: bool = False, hands: str | None = None,
             between: Between | None = None) -> None:
        """Step after lines `line`–`end_line`, `where` a line inside the top-level statement
        at line `within` ran; or, `stopped`, where the run's error stopped them; or before a
        `return` or `yield` (`hands`) hands over the value it holds, shown as such; `between`:
        what ran since the step before (`Lines.between`), where no `where` says. The graph's
        tensors are named by the variables of the function the line is in too (one whose
        name a global has as `forward.y`)."""
        cap = self.limits.value_elements
        local = _locals(where.frame if where else None, hands)
        names = in_scope(_user_variables(self.namespace), local, where.calls if where else None)
        graph = record_graph(names, self.ids, self.limits.graph_nodes, self.modules,
                             self.orders)
        variables = snapshot(self.namespace, cap)
        described = None if local is None else snapshot(local, cap)
        graphs = self.trace.graphs
        ran = where.between if where else between
        if graph is not None and (not graphs or graphs[-1] != graph):
            graphs.append(graph)
        self.trace.steps.append(Step(
            line, end_line, self.out.since(self.printed), variables,
            graph=None if graph is None else len(graphs) - 1, within=within,
            rounds=where.rounds or None if where else None,
            calls=where.calls or None if where else None, locals=described,
            entered=where.entered if where else None, called=where.called if where else None,
            calling=where.calling or None if where else None,
            reached=ran.reached or None if ran else None,
            since=ran.since or None if ran else None,
            skipped=ran.lines or None if ran else None, stopped=stopped or None))
        self.printed = self.out.tell()


def _run_step(stmt: ast.stmt, namespace: dict[str, Any], guards: Guards, steps: _Steps,
              lines: Lines) -> None:
    """Run one top-level statement; record the state after it while steps are recorded (a
    step that cannot be made is counted with the lines' that could not)."""
    code = compile(ast.Module([stmt], []), FILENAME, "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - checked by explorer.safety.sandbox, guarded by explorer.safety.guards
    guards.check()
    if steps.top < steps.limits.steps:
        steps.top += 1
        try:
            steps.take(stmt.lineno, stmt.end_lineno or stmt.lineno, between=lines.between([]))
            lines.stepped(None)
        except Exception:  # noqa: BLE001 - the recorder's failure is not the program's
            lines.failed += 1


def _locals(frame: FrameType | None, hands: str | None = None) -> dict[str, Any] | None:
    """The variables of a function's `frame` (None for none), and the value it `hands` over
    (by `return` or `yield`), under that word."""
    if frame is None:
        return None
    found = frame.f_locals
    local = {name: value for name, value in found.items() if not name.startswith("__")} | (
        {hands: found[RETURNED][0]} if hands and found.get(RETURNED) else {})
    if (type(found) is dict and frame.f_code.co_flags & inspect.CO_OPTIMIZED
            and sys.getrefcount(found) <= FRAME_AND_OURS):
        # A function's frame on Python 3.11 and 3.12 keeps the copy it made, holding what the
        # function has since let go (its finally blocks, its __del__s would run late): it is
        # emptied (made again on the next read). 3.13 gives a view of the frame instead.
        found.clear()
    return local


def _calling(namespace: dict[str, Any], lines: Lines) -> Calling:
    """The program's line running now: the variables by the names it has for them (a
    function's own too, as a step there names them), and where it is."""
    where = lines.where(running(sys._getframe()))
    return Calling(in_scope(_user_variables(namespace), _locals(where.frame), where.calls),
                   where.rounds, where.calls, where.called)


def _user_variables(namespace: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in namespace.items() if not name.startswith("__")}


@contextmanager
def _clock(limits: Limits) -> Iterator[None]:
    """Raise TimeLimit in Python code once the run's time is up."""
    def ring(signum: int, frame: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, RING_AGAIN)  # where Python drops it (a __del__,
        raise TimeLimit(time_message(limits))  # a gc callback), the clock rings on

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, limits.time_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _describe_error(error: BaseException, line: int, limits: Limits) -> Error:
    line = _program_line(error) or line
    message = str(error)
    if isinstance(error, LimitExceeded):
        return error_info(error.kind, message, line)
    if isinstance(error, sandbox.Refused):
        return error_info("Refused", error.reason, line)
    if isinstance(error, MemoryError) or (
            isinstance(error, RuntimeError) and any(w in message for w in OOM_WORDS)):
        return error_info("MemoryLimit", memory_message(limits, message or "MemoryError"), line)
    if isinstance(error, RecursionError):
        message = "maximum recursion depth exceeded: a function keeps calling itself"
    return error_info(type(error).__name__, message, line)


def _program_line(error: BaseException) -> int | None:
    """The line of the user's program where `error` was raised (deepest frame of it)."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__)
             if f.filename == FILENAME]
    return lines[-1] if lines else None


def _recorder(caught: list[warnings.WarningMessage]) -> Callable[..., None]:
    """Record a warning at the program line that was running when it was raised, also when
    the innermost Python frame is a guard (reading `.grad` of a non-leaf) or library code."""
    def record(message: Warning | str, category: type[Warning], filename: str, lineno: int,
               file: Any = None, line: str | None = None) -> None:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != FILENAME:
            frame = frame.f_back
        if frame is not None:
            filename, lineno = FILENAME, frame.f_lineno
        caught.append(warnings.WarningMessage(message, category, filename, lineno))
    return record


def _warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    seen: dict[str, None] = {}
    for w in caught:
        where = f"line {w.lineno}: " if w.filename == FILENAME else ""
        seen[f"{where}{w.category.__name__}: {w.message}"] = None
    return list(seen)
