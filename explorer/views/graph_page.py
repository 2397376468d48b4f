"""What the Graph page draws of the graph after a step, with which options, and what it
draws by default: one definition for the page, its downloads and the tests. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.trace import Trace
from explorer.trace.graph_view import Made, View, default_root, made_at, named_outputs, view
from explorer.views.animation import NUMBERS_UP_TO
from explorer.views.places import rounds_of
from explorer.views.present import node_values


@dataclass(frozen=True)
class Options:
    """The Graph page's choices: whose graph (variable names; none: every output), saved
    tensors and node attributes shown, long chains expanded, values under the labels, the
    modules drawn as one node each, and the one derivative order drawn (None: all)."""

    roots: tuple[str, ...] = ()
    saved: bool = True
    attrs: bool = True
    expand: bool = False
    numbers: bool = True
    fold: tuple[str, ...] = ()
    order: int | None = None


def defaults(trace: Trace, index: int) -> Options:
    """The page's first picture after step `index` (which has a graph): the graph of the
    variable assigned most recently, with values under the labels of a small graph."""
    graph = trace.graphs[trace.steps[index].graph]  # type: ignore[index]
    root = default_root(trace, index, named_outputs(graph))
    return Options(roots=(root,) if root else (), numbers=len(graph.nodes) <= NUMBERS_UP_TO)


def drawn(trace: Trace, index: int, options: Options,
          marked: frozenset[str] | None = None) -> View:
    """The picture of the graph after step `index` with `options`, the nodes its statement
    added marked (or `marked`: the scene of an error, explorer.views.scene)."""
    step = trace.steps[index]
    graph = trace.graphs[step.graph]  # type: ignore[index]
    named = named_outputs(graph)
    return view(graph, [named[r] for r in options.roots if r in named] or None, options.saved,
                options.attrs, collapse=not options.expand, fold=options.fold,
                order=options.order,
                notes=node_values(graph, step.variables) if options.numbers else None,
                marked=marked if marked is not None else statement_added(trace, index))


def statement_added(trace: Trace, index: int) -> frozenset[str]:
    """The nodes the statement of step `index` made (`made_at`); none where the run's error
    stopped a round not stepped (what its line made is not known apart)."""
    step = trace.steps[index]
    previous = trace.steps[index - 1] if index else None
    if step.stopped and rounds_of(step.rounds) != rounds_of(previous and previous.rounds):
        return frozenset()
    return frozenset(node for node, at in made_at(trace, index + 1).items()
                     if at == Made(index, True))


def no_graph(trace: Trace, index: int) -> str:
    """What to say where step `index` has no graph (a text's key): that no tensor requires
    grad yet, as at a program's start; that the library functions it called drew their own;
    or, once a module holds parameters or a graph was drawn before, that no variable reaches
    one now."""
    if trace.library:
        return "no_graph_library"
    if any(v.kind == "module" for v in trace.steps[index].variables.values()) or any(
            s.graph is not None for s in trace.steps[:index]):
        return "no_graph_held"
    return "no_graph"
