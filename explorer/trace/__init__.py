"""The Trace: everything a run produced, as plain data that crosses process boundaries.

One Trace feeds every page. It holds no live tensors or grad_fn objects: its records are the
Structs of explorer.trace.schema, read by attribute (variables made by
`explorer.record.snapshot`...), so a Trace pickles, and `to_json` is its public form
(`python -m explorer run FILE --json`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import msgspec

from explorer.content.explain import explain
from explorer.safety.limits import Limits
from explorer.trace import schema
from explorer.trace.check import BadResult, read_data, read_json
from explorer.trace.wire import encode, finite, uncollected

Variables = dict[str, schema.Variable]


@dataclass
class Step:
    """The program's state after one executed line: a top-level statement, or a line inside
    one (`within` it), in the `rounds` of the loops around it and the program's functions it
    was `calls`d in; or, `stopped`, the state where the run's error stopped a line."""

    line: int
    end_line: int
    output: str  # what this line printed
    variables: Variables
    graph: int | None = None  # index into Trace.graphs: the autograd graph after this step
    within: int | None = None  # the line of the top-level statement it is inside
    rounds: list[schema.Round] | None = None  # the loops around it, outermost first
    calls: list[str] | None = None  # the program's functions it is in, outermost first
    locals: Variables | None = None  # the innermost function's variables
    entered: int | None = None  # the run's clock as the innermost of `calls` began
    called: int | None = None  # which call of the innermost of `calls`, over the run (1: first)
    calling: list[int] | None = None  # the lines its frames around it are at, outermost first
    # what ran since the step before, none of it stepped (explorer.trace.schema.Step)
    reached: list[int | None] | None = None  # by the loops around the step before
    since: list[int | None] | None = None  # by the loops around this step
    skipped: int | None = None  # lines
    stopped: bool | None = None

    @property
    def inner(self) -> bool:
        """Whether it is a line inside a top-level statement, not the statement itself."""
        return self.within is not None


# The errors of a run stopped before the program's first statement (explorer.record.execute,
# explorer.pool.worker): nothing of it ran.
NOT_STARTED = frozenset({"SyntaxError", "Refused", "DeviceUnavailable", "WallMissing", "Busy",
                         "WorkerUnavailable"})


@dataclass
class Trace:
    """The result of one run: output, variables after every step, and the error if any."""

    ok: bool
    error: schema.Error | None = None
    stdout: str = ""
    variables: Variables = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    graphs: list[schema.Graph] = field(default_factory=list)  # distinct
    backward: list[schema.Call] = field(default_factory=list)  # recorded in full
    library: list[schema.LibraryPass] = field(default_factory=list)  # passes not replayed
    unstepped: list[schema.LastRound] = field(default_factory=list)  # loops' last rounds
    losses: list[schema.Summary] = field(default_factory=list)  # every call: value, grad norms
    warnings: list[str] = field(default_factory=list)
    notes: list[schema.Note] = field(default_factory=list)  # what the explorer changed or capped
    device: str = "cpu"
    threads: int = 1  # torch's intra-op threads: float sums differ in the last digits by count
    elapsed_ms: float = 0.0
    # The same program, device, seed, limits and versions give this Trace again: it was
    # seeded, reached nothing not known to behave the same every time (no clock, entropy or
    # date: explorer.safety.guards), and ran out of no time or memory (explorer.pool.results).
    repeatable: bool = False
    reused: bool = False  # kept from an earlier run, not run again (never sent by a worker)

    @property
    def started(self) -> bool:
        """Did any of the program run? Not when it was refused before its first statement."""
        return self.error is None or self.error.type not in NOT_STARTED or bool(self.steps)

    @property
    def graph(self) -> schema.Graph | None:
        """The autograd graph after the last recorded step."""
        last = self.steps[-1].graph if self.steps else None
        return None if last is None else self.graphs[last]

    def to_dict(self) -> dict[str, Any]:
        """The Trace's public form, typed in explorer.trace.schema, with the format's version:
        its fields by name, its records as they are (shared: nothing is copied)."""
        return {"version": schema.VERSION} | _fields(self) | {
            "steps": [_fields(step) for step in self.steps], "graph": self.graph}

    def to_json(self, indent: int | None = None) -> str:
        """The public form as JSON text (a non-finite number as its text: JSON has none)."""
        text = encode(finite(self.to_dict()))
        return (text if indent is None else msgspec.json.format(text, indent=indent)).decode()

    @classmethod
    def from_json(cls, text: str | bytes, limits: Limits | None = None) -> Trace:
        """The Trace a run's answer or a saved Trace holds, decoded and checked in one pass
        (explorer.trace.check); a BadResult error Trace if it is none."""
        payload = text.encode(errors="replace") if isinstance(text, str) else text
        return cls._made(read_json, payload, limits)

    @classmethod
    def from_dict(cls, data: dict[str, Any], limits: Limits | None = None) -> Trace:
        """The Trace `data` (decoded JSON) describes, checked as `from_json` checks one."""
        return cls._made(read_data, data, limits)

    @classmethod
    def _made(cls, read: Callable[[Any, Limits], schema.Answer], data: Any,
              limits: Limits | None) -> Trace:
        """The Trace `read` finds in `data`, checked against what a run under `limits` sends;
        an answer no run makes is a BadResult error Trace. The error's explanation is made
        anew here from its type and message."""
        with uncollected():
            try:
                answer = read(data, limits or Limits())
            except BadResult as error:
                return refused(str(error))
        error = answer.error
        return cls(
            ok=answer.ok, stdout=answer.stdout, variables=answer.variables,
            error=None if error is None else error_info(error.type, error.message, error.line),
            steps=[Step(line=s.line, end_line=s.end_line, output=s.output,
                        variables=s.variables, graph=s.graph, within=s.within,
                        rounds=s.rounds, calls=s.calls, locals=s.locals, entered=s.entered,
                        called=s.called, calling=s.calling, reached=s.reached,
                        since=s.since, skipped=s.skipped, stopped=s.stopped)
                   for s in answer.steps],
            graphs=answer.graphs,  # made Graphs by the check
            backward=answer.backward, library=answer.library, unstepped=answer.unstepped,
            losses=answer.losses, warnings=answer.warnings, notes=answer.notes,
            device=answer.device, threads=answer.threads, elapsed_ms=answer.elapsed_ms,
            repeatable=answer.repeatable)

    def keep_shown_graphs(self) -> None:
        """Keep only the graphs a step, a kept backward call or a library function's pass
        shows, in their order."""
        shown = sorted({s.graph for s in self.steps if s.graph is not None}
                       | {c.graph for c in self.backward if c.graph is not None}
                       | {p.graph for p in self.library})
        number = {old: new for new, old in enumerate(shown)}
        self.graphs[:] = [self.graphs[i] for i in shown]
        for step in self.steps:
            if step.graph is not None:
                step.graph = number[step.graph]
        for call in self.backward:
            if call.graph is not None:
                call.graph = number[call.graph]
        for made in self.library:
            made.graph = number[made.graph]

    def step_at(self, index: int) -> Step | None:
        """The step at `index`, clamped into range; None when nothing ran."""
        if not self.steps:
            return None
        return self.steps[max(0, min(index, len(self.steps) - 1))]


def _fields(record: Trace | Step) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in fields(record)}


def value_of(variables: Variables, name: str, default: Any = None) -> Any:
    """The values of the variable `name` (a number's, a list's...), or `default` if there is
    none of that name."""
    info = variables.get(name)
    return default if info is None else info.values


def failure(kind: str, message: str, line: int | None = None, **extra: Any) -> Trace:
    """A Trace for a run that could not start or did not come back."""
    return Trace(ok=False, error=error_info(kind, message, line), **extra)


def error_info(kind: str, message: str, line: int | None) -> schema.Error:
    """The `error` field: PyTorch's or Python's own words plus a plain-language explanation."""
    explanation = explain(kind, message)
    return schema.Error(type=kind, message=message, line=line,
                        explanation=None if explanation is None else
                        schema.Explanation(**explanation))


def refused(why: str, **extra: Any) -> Trace:
    """A Trace for an answer no run makes (explorer.trace.wire.BadAnswer,
    explorer.trace.check.BadResult): none of it is shown, only `why`."""
    return failure("BadResult", f"The run sent back an answer the explorer does not accept: "
                   f"{why}. Nothing of it is shown.", **extra)
