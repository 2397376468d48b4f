"""What autograd keeps across a loop's rounds: at a step, how many graph nodes are alive
(reachable from the program's variables), and which variable keeps nodes that an earlier
round made (`total_loss += loss` keeps every round's graph: the chain grows). Pure: read
from the Trace; a list, tuple or dict variable reaches what its tensors do. A node is dated
by its sequence number (`Node.seq`, the order the program made nodes in) against the run's
clock as rounds began (`Round.began`): exactly where the round or the one after it was
stepped, else to the rounds between two that were.
"""

from __future__ import annotations

import functools
import operator
from bisect import bisect_right
from dataclasses import dataclass

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace import Step, Trace
from explorer.trace.schema import Graph, Round

KEPT_BY_LEAF = "AccumulateGrad"  # a leaf's node: it lives as long as the leaf, round after round
# Bits of old nodes found for the sets of tensors variables hold, at most: a set costs one
# bit for each node earlier rounds made (a forged graph's million names held gigabytes, an
# int of 18,000 bits each); past them, no keeper is told rather than some (a program's own
# variables stay far below: 1,000 of them over 20,000 old nodes are 20 million).
HELD_BITS = 1 << 28


@dataclass(frozen=True)
class Keeper:
    """Variables that reach the same nodes made in earlier rounds (one alone, mostly): how
    many, and in which rounds."""

    names: tuple[str, ...]
    nodes: int
    first: int  # the rounds they were made in lie between these
    last: int

    def said(self, lang: str) -> str:
        """The keeper in words, in `lang`."""
        key = "alive_keeper" + ("s" if len(self.names) > 1 else "") + (
            "_one" if self.first == self.last else "")
        names = text("names_separator", lang).join(map(code_span, self.names))
        return text(key, lang, name=names, nodes=self.nodes, round=self.first, first=self.first,
                    last=self.last)


@dataclass(frozen=True)
class Alive:
    """The graph at a step: its operation nodes, and the variables that keep earlier rounds',
    most first, those that reach the same together (a variable all of whose nodes one before
    it keeps is left out)."""

    nodes: int
    keepers: tuple[Keeper, ...]


def alive(trace: Trace, index: int) -> Alive | None:
    """What the graph after step `index` holds; None where the step drew none."""
    step = trace.steps[index]
    if step.graph is None:
        return None
    graph = trace.graphs[step.graph]
    ops = {n.id for n in graph.nodes if n.kind == "backward" and n.name != KEPT_BY_LEAF}
    born = _earlier_rounds(trace, index, graph) if step.rounds else {}
    old = sorted(born, key=born.__getitem__)  # by the rounds they were made in: bit i, old[i]
    reach = ancestry(graph, old) if old else {}
    starts: dict[str, str | set[str]] = {}  # by variable: a list's tensors (`losses[3]`)
    for name, start in _named(graph).items():  # are its own
        variable = name.split("[", 1)[0]
        held = starts.setdefault(variable, start)
        if isinstance(held, set):
            held.add(start)
        elif held != start:
            starts[variable] = {held, start}
    holders: dict[str | frozenset[str], list[str]] = {}  # variables of the same tensors,
    for variable, held in starts.items():  # together: their old nodes are found once
        holders.setdefault(held if isinstance(held, str) else frozenset(held), []).append(
            variable)
    if len(holders) * len(old) > HELD_BITS:
        return Alive(len(ops), ())
    alike: dict[int, list[str]] = {}  # variables that reach the same old nodes
    for held, names in holders.items():
        bits = reach.get(held, 0) if isinstance(held, str) else functools.reduce(
            operator.or_, (reach.get(start, 0) for start in held), 0)
        if bits:
            alike.setdefault(bits, []).extend(names)
    keepers, told = [], 0
    for bits, names in sorted(((bits, sorted(names)) for bits, names in alike.items()),
                              key=lambda item: (-item[0].bit_count(), item[1])):
        if bits & ~told:  # one a keeper before it reaches wholly is not told again
            told |= bits
            first, last = old[(bits & -bits).bit_length() - 1], old[bits.bit_length() - 1]
            keepers.append(Keeper(tuple(names), bits.bit_count(), born[first][0],
                                  born[last][1]))
    return Alive(len(ops), tuple(keepers))


def _earlier_rounds(trace: Trace, index: int, graph: Graph) -> dict[str, tuple[int, int]]:
    """The nodes of `graph` made in an earlier round of the innermost loop around step `index`
    (in this run of the loop), each with the first and last round it may have been made in."""
    here = trace.steps[index].rounds[-1]  # type: ignore[index]
    if here.loop_began is None or here.began is None:
        return {}
    known = sorted({(began, round_) for r in _rounds_of(trace, index) for began, round_ in (
        (r.loop_began, 1), (r.previous_began, r.round - 1), (r.began, r.round))
        if began is not None})
    starts = [began for began, _ in known]  # rounds begin in their order
    born = {}
    for node in graph.nodes:
        if node.seq is not None and here.loop_began <= node.seq < here.began:
            after = bisect_right(starts, node.seq)  # the first round begun after it was made
            born[node.id] = (known[after - 1][1], known[after][1] - 1)
    return born


def _rounds_of(trace: Trace, index: int) -> list[Round]:
    """The innermost loop's round at step `index` and at the steps before it in the same run
    of that loop (its rounds stepped so far)."""
    at = trace.steps[index]
    found = []
    for step in reversed(trace.steps[:index + 1]):
        if not _in(step, at):
            break
        found.append(step.rounds[len(at.rounds or ()) - 1])  # type: ignore[index]
    return found


def _in(step: Step, at: Step) -> bool:
    """Whether `step` lies in the same run of the innermost loop around `at`."""
    depth = len(at.rounds or ())
    if not step.rounds or len(step.rounds) < depth:
        return False
    outer, mine = step.rounds[:depth], at.rounds or []
    return outer[:-1] == mine[:-1] and (outer[-1].line, outer[-1].loop_began) == (
        mine[-1].line, mine[-1].loop_began)


def _named(graph: Graph) -> dict[str, str]:
    """Each of the program's names of a tensor in the graph, with its node."""
    return {name: n.id for n in graph.nodes if n.kind != "backward" for name in n.names or ()}


def reached(graph: Graph, *starts: str) -> set[str]:
    """The nodes `starts` are computed from, themselves included (edges run from an input to
    what it feeds)."""
    inputs = _inputs(graph)
    found, stack = set(starts), list(starts)
    while stack:
        for source in inputs.get(stack.pop(), ()):
            if source not in found:
                found.add(source)
                stack.append(source)
    return found


def ancestry(graph: Graph, chosen: list[str]) -> dict[str, int]:
    """For each node of `graph`, which of the nodes `chosen` it is computed from (itself
    included), as an int whose bit i stands for `chosen[i]`: one walk in topological order,
    however many nodes are asked about (a cycle, which no graph autograd made has, is cut
    where the walk meets it)."""
    number = {node: i for i, node in enumerate(chosen)}
    inputs = _inputs(graph)
    found: dict[str, int] = {}
    for root in (n.id for n in graph.nodes):
        if root in found:
            continue
        found[root] = 1 << number[root] if root in number else 0
        stack = [(root, iter(inputs.get(root, ())))]
        while stack:
            node, sources = stack[-1]
            source = next((s for s in sources if s not in found), None)
            if source is not None:
                found[source] = 1 << number[source] if source in number else 0
                stack.append((source, iter(inputs.get(source, ()))))
                continue
            stack.pop()
            for s in inputs.get(node, ()):
                found[node] |= found[s]
    return found


def _inputs(graph: Graph) -> dict[str, list[str]]:
    """Each node's inputs: the sources of the `grad` edges into it."""
    inputs: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.kind == "grad":
            inputs.setdefault(edge.dst, []).append(edge.src)
    return inputs
