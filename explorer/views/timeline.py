"""A backward call's one timeline: the statements that built its graph (the picture grows),
then the engine's steps. Pure: no torch, no Streamlit."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.trace.graph_view import Group, View
from explorer.trace.schema import Call
from explorer.views.export import animation_view


@dataclass(frozen=True)
class Built:
    """A statement that added nodes to a backward call's graph."""

    step: int  # its index in Trace.steps
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
    A node belongs to the first step whose graph holds it (explorer.trace.graph_view's
    node_lines: ids are stable through a run); one no step's graph held (made and freed
    within a statement), to the last statement that built the graph."""
    if not forward:
        return Timeline((), len(call.steps))
    shown = shown or animation_view(trace, call)
    wanted = {m for i, n in shown.nodes.items()  # its nodes
              for m in (n.members if isinstance(n, Group) else [i])}
    seen: set[str] = set()
    built = []
    for index, step in enumerate(trace.steps):
        if step.graph is None:
            continue
        ids = {n.id for n in trace.graphs[step.graph].nodes} - seen
        seen |= ids
        if ids & wanted:
            built.append(Built(index, frozenset(ids & wanted)))
        if wanted <= seen:
            break
    if built and not wanted <= seen:
        built[-1] = Built(built[-1].step, built[-1].added | (wanted - seen))
    return Timeline(tuple(built), len(call.steps))
