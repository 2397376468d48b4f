"""What autograd keeps across a loop's rounds: at a step, how many graph nodes are alive
(reachable from the program's variables), and which variable keeps nodes that an earlier
round made (`total_loss += loss` keeps every round's graph: the chain grows). Pure: read from
the Trace (node ids are stable through a run, so a node is as old as the first step whose
graph holds it).
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace import Step, Trace
from explorer.trace.schema import Graph

KEPT_BY_LEAF = "AccumulateGrad"  # a leaf's node: it lives as long as the leaf, round after round


@dataclass(frozen=True)
class Keeper:
    """A variable that reaches nodes made in earlier rounds: how many, and in which rounds."""

    name: str
    nodes: int
    rounds: tuple[int, ...]  # in order

    def said(self, lang: str) -> str:
        """The keeper in words, in `lang`."""
        if len(self.rounds) == 1:
            return text("alive_keeper_one", lang, name=code_span(self.name), nodes=self.nodes,
                        round=self.rounds[0])
        return text("alive_keeper", lang, name=code_span(self.name), nodes=self.nodes,
                    first=self.rounds[0], last=self.rounds[-1], rounds=len(self.rounds))


@dataclass(frozen=True)
class Alive:
    """The graph at a step: its operation nodes, and the variables that keep earlier rounds'."""

    nodes: int
    keepers: tuple[Keeper, ...]


def alive(trace: Trace, index: int) -> Alive | None:
    """What the graph after step `index` holds; None where the step drew none."""
    step = trace.steps[index]
    if step.graph is None:
        return None
    graph = trace.graphs[step.graph]
    ops = {n.id for n in graph.nodes if n.kind == "backward" and n.name != KEPT_BY_LEAF}
    born = _earlier_rounds(trace, index) if step.rounds else {}
    keepers = []
    for name, start in _named(graph).items():
        old = {node: born[node] for node in _reached(graph, start) & ops if node in born}
        if old:
            keepers.append(Keeper(name, len(old), tuple(sorted(set(old.values())))))
    return Alive(len(ops), tuple(sorted(keepers, key=lambda k: (-k.nodes, k.name))))


def made_before_round(trace: Trace, index: int) -> set[str]:
    """The nodes drawn before the round of the innermost loop around step `index` began
    (by the steps before it: the loop's earlier rounds, and what ran before the loop)."""
    return set().union(*(_ids(trace, step) for step in trace.steps[:_starts(trace, index)[1]]))


def _starts(trace: Trace, index: int) -> tuple[int, int]:
    """Where the run of the innermost loop around step `index` starts, and where its round
    does: the indices of their first steps."""
    start = index
    while start > 0 and _in(trace.steps[start - 1], trace.steps[index], same_round=True):
        start -= 1
    first = start
    while first > 0 and _in(trace.steps[first - 1], trace.steps[index], same_round=False):
        first -= 1
    return first, start


def _earlier_rounds(trace: Trace, index: int) -> dict[str, int]:
    """The nodes first drawn in an earlier round of the innermost loop around step
    `index` (in this run of the loop), each with that round."""
    loop = trace.steps[index].rounds[-1]  # type: ignore[index]
    first, start = _starts(trace, index)
    seen: set[str] = set()
    for step in trace.steps[:first]:  # made before the loop: not an earlier round's
        seen |= _ids(trace, step)
    born: dict[str, int] = {}
    for step in trace.steps[first:start]:
        round_ = next(r.round for r in step.rounds or () if r.line == loop.line)
        for node in _ids(trace, step) - seen:
            born.setdefault(node, round_)
    return born


def _in(step: Step, at: Step, same_round: bool) -> bool:
    """Whether `step` lies in the loop run (or round) of the innermost loop around `at`."""
    if not step.rounds or len(step.rounds) < len(at.rounds or ()):
        return False
    depth = len(at.rounds or ())
    outer, mine = step.rounds[:depth], at.rounds or []
    return outer[:-1] == mine[:-1] and outer[-1].line == mine[-1].line and (
        not same_round or outer[-1].round == mine[-1].round)


def _ids(trace: Trace, step: Step) -> set[str]:
    return set() if step.graph is None else {n.id for n in trace.graphs[step.graph].nodes}


def _named(graph: Graph) -> dict[str, str]:
    """Each of the program's names of a tensor in the graph, with its node."""
    return {name: n.id for n in graph.nodes if n.kind != "backward" for name in n.names or ()}


def _reached(graph: Graph, start: str) -> set[str]:
    """The nodes `start` is computed from (edges run from an input to what it feeds)."""
    inputs: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.kind == "grad":
            inputs.setdefault(edge.dst, []).append(edge.src)
    reached, stack = {start}, [start]
    while stack:
        for source in inputs.get(stack.pop(), ()):
            if source not in reached:
                reached.add(source)
                stack.append(source)
    return reached
