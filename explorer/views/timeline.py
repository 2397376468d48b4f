"""A backward call's one timeline: the statements that built its graph (the picture grows),
then the engine's steps. Pure: no torch, no Streamlit."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.trace.graph_view import Dates, Group, Made, View, made_at
from explorer.trace.schema import Call, Graph
from explorer.views.export import animation_view
from explorer.views.places import rounds_of


@dataclass(frozen=True)
class Built:
    """A statement that added nodes to a backward call's graph (`step`: its index in
    Trace.steps; None for lines that were not stepped)."""

    step: int | None
    added: frozenset[str]  # the ids of the call's graph nodes it added


@dataclass(frozen=True)
class Timeline:
    """The statements that built the call's graph, in order, then `engine` engine steps."""

    built: tuple[Built, ...]
    engine: int

    def __len__(self) -> int:
        return len(self.built) + self.engine

    def statement(self, index: int) -> Built | None:
        """The statement at timeline position `index` (0-based), None at an engine step."""
        return self.built[index] if index < len(self.built) else None

    def engine_step(self, index: int) -> int | None:
        """The engine step at timeline position `index` (0-based), None at a statement."""
        return index - len(self.built) if index >= len(self.built) else None

    def place(self, index: int, lang: str) -> str:
        """Position `index` (0-based) in the picture's words: "statement 2 of 4", "step 5 of
        5" (an engine step), so that the controls count as the picture does."""
        engine = self.engine_step(index)
        if engine is None:
            return text("place_statement", lang, step=index + 1, steps=len(self.built))
        return text("place_engine", lang, step=engine + 1, steps=self.engine)

    def made(self, index: int) -> frozenset[str]:
        """The nodes made by the statements up to position `index`."""
        return frozenset().union(*(b.added for b in self.built[:index + 1]))


def timeline(trace: Trace, call: Call, forward: bool = True,
             shown: View | None = None) -> Timeline:
    """The timeline of backward `call` of `trace`; without its statements if not `forward`.
    `shown`: the call's picture (explorer.views.export.animation_view), if already made.
    A node belongs to the step before the call that made it (explorer.trace.graph_view's
    made_at), or to the lines not stepped just before it. One no such step made was made by
    the statement that called backward (or its lines not stepped): it belongs to that
    statement's step, the one right after the call in the same rounds, where it was stepped."""
    if not forward:
        return Timeline((), len(call.steps))
    shown = shown or animation_view(trace, call)
    wanted = {m for i, n in shown.nodes.items()  # its nodes
              for m in (n.members if isinstance(n, Group) else [i])}
    made: dict[Made, set[str]] = {}
    for node, at in made_at(trace, call.after).items():
        if node in wanted:
            made.setdefault(at, set()).add(node)
    built = [Built(at.step if at.stepped else None, frozenset(nodes))
             for at, nodes in sorted(made.items())]  # lines not stepped before the step's
    rest = wanted - set().union(*made.values())
    if rest and call.graph is not None:
        built += _built(trace, _calling(trace, call), rest, trace.graphs[call.graph])
    return Timeline(tuple(built), len(call.steps))


def _built(trace: Trace, index: int | None, added: set[str], graph: Graph) -> list[Built]:
    """The nodes `added` at step `index` (None: by lines not stepped): those the call's
    `graph` dates before the step's round began, by lines not stepped before it."""
    rounds = trace.steps[index].rounds if index is not None else None
    early = Dates(graph).before(added, rounds[-1].began if rounds else None)
    return [b for b in (Built(None, early), Built(index, frozenset(added - early)))
            if b.added]


def _calling(trace: Trace, call: Call) -> int | None:
    """The step of the statement that made `call`: the next after it, in the same rounds;
    None where that statement was not stepped."""
    if call.after is None or call.after >= len(trace.steps):
        return None
    step = trace.steps[call.after]
    return call.after if rounds_of(step.rounds) == rounds_of(call.rounds) else None
