"""A backward call's timeline: the statements that built its graph, then the engine's steps,
and the picture of the graph as it grows."""

from __future__ import annotations

import html
import re

from explorer.content.examples import by_key
from explorer.pool.worker import WorkerPool
from explorer.trace.graph_view import MARK, node_lines
from explorer.views import graph_page
from explorer.views.animation import growing
from explorer.views.export import animation_view
from explorer.views.render import positions, svg
from explorer.views.timeline import timeline
from tests.test_backward import assert_plotly_checks

TWO_GRAPHS = ("a = torch.ones(2, requires_grad=True)\nb = (a * a).sum()\nb.backward()\n"
              "c = torch.ones(2, requires_grad=True)\nd = c.exp()\ne = d.sum()\ne.backward()\n")


def test_the_seed_timeline_is_its_four_statements_then_five_engine_steps(
        pool: WorkerPool) -> None:
    trace = pool.run(by_key("autograd-basics").code)
    call = trace.backward[-1]
    line = timeline(trace, call)
    assert [trace.steps[b.step].line for b in line.built] == [2, 3, 4, 5]
    assert len(line) == 4 + 5 and line.engine == len(call.steps) == 5
    assert [line.statement(i) is None for i in range(9)] == [False] * 4 + [True] * 5
    assert [line.engine_step(i) for i in range(9)] == [None] * 4 + [0, 1, 2, 3, 4]
    nodes = set(animation_view(trace, call).nodes)
    # Each node is made once, and the statements make the whole graph.
    made = [line.made(i) for i in range(4)]
    assert all(a < b for a, b in zip(made, made[1:], strict=False)) and made[-1] == nodes
    assert sum(len(b.added) for b in line.built) == len(nodes)
    assert not timeline(trace, call, forward=False).built


def test_a_calls_timeline_holds_only_the_statements_of_its_own_graph(pool: WorkerPool) -> None:
    trace = pool.run(TWO_GRAPHS)
    first, second = (timeline(trace, c) for c in trace.backward)
    assert [trace.steps[b.step].line for b in first.built] == [1, 2]
    assert [trace.steps[b.step].line for b in second.built] == [4, 5, 6]


def test_nodes_no_step_held_belong_to_the_statement_that_called_backward(
        pool: WorkerPool) -> None:
    trace = pool.run("x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.sum().backward()\n")
    (call,) = trace.backward
    line = timeline(trace, call)
    nodes = set(animation_view(trace, call).nodes)
    names = {n.id: n.name for n in trace.graphs[call.graph].nodes}
    assert [trace.steps[b.step].line for b in line.built] == [1, 2, 3]
    assert "SumBackward0" in {names.get(n) for n in line.built[-1].added}
    assert "SumBackward0" not in {names.get(n) for n in line.built[1].added}
    assert line.made(len(line.built) - 1) == nodes


def test_a_call_in_a_round_not_stepped_is_built_by_no_step_after_it(pool: WorkerPool) -> None:
    trace = pool.run("w = torch.tensor(0.5, requires_grad=True)\nh = torch.zeros(1)\n"
                     "for i in range(40):\n    h = torch.sigmoid(w * h + 1)\n"
                     "    if i == 25:\n        h.sum().backward()\n"
                     "    if i == 26:\n        h.sum().backward()\n")
    first = trace.backward[0]  # in round 26: not stepped, as rounds 11–19 and 21–25 are not
    assert [r.round for r in first.rounds] == [26] and first.after is not None
    line = timeline(trace, first)
    assert all(b.step is None or b.step < first.after for b in line.built)
    assert line.built[-1].step is None  # rounds 21–26 made these: no step shows them
    seq = {n.id: n.seq for n in trace.graphs[first.graph].nodes}
    stepped = 0
    for before, built in zip(line.built, line.built[1:], strict=False):
        rounds = trace.steps[built.step].rounds if built.step is not None else None
        if rounds and rounds[-1].round > 10:  # round 11 not stepped: its nodes come first
            assert before.step is None and all(
                seq[n] is None or seq[n] >= rounds[-1].began for n in built.added)
            stepped += 1
    assert stepped == 1  # round 20
    made = node_lines(trace)  # nor does the editor mark a line for them: none made them
    assert not any(n in made for b in line.built if b.step is None for n in b.added
                   if seq.get(n) is not None)
    assert line.made(len(line.built) - 1) == set(animation_view(trace, first).nodes)


def test_the_growing_picture_veils_what_is_not_made_and_outlines_what_is_new(
        pool: WorkerPool) -> None:
    trace = pool.run(by_key("autograd-basics").code)
    call = trace.backward[-1]
    line = timeline(trace, call)
    shown = animation_view(trace, call)
    layout = positions(shown.dot)
    chart = growing(call, layout, svg(shown.dot), shown.groups, line.made(1),
                    line.built[1].added, "statement 2 of 4: line 3")
    veil = chart.data[-1]
    hidden = [n for n in layout["nodes"] if n not in line.made(1)]
    assert list(veil.x).count(None) == len(hidden) == 4
    outlined = [n for n in line.built[1].added if n in layout["nodes"]]
    assert list(chart.data[2].x).count(None) == len(outlined) == 2
    assert chart.data[14].text == ("<b>statement 2 of 4: line 3</b>",)
    assert not any(chart.data[13].text)  # no gradient numbers before the pass
    assert_plotly_checks(chart)


def test_the_graph_page_outlines_what_a_line_made_in_its_own_round_only(
        pool: WorkerPool) -> None:
    """Round 20 follows rounds not stepped: the line's own nodes are outlined in orange, as in
    round 2, not the 36 that rounds 11–19 left in `total`'s graph; where the run's error
    stopped a round not stepped, no line's nodes are known apart, and none is outlined."""
    trace = pool.run("w = torch.randn(3, requires_grad=True)\ntotal = 0\n"
                     "for t in range(30):\n    y = (w * t).sum()\n    total = total + y\n"
                     "    if t == 25:\n        total.backward()\n        total.backward()\n")
    outlined = {}
    for index, step in enumerate(trace.steps):
        if step.graph is not None and step.line == 4 and step.rounds[-1].round in (2, 20):
            drawn = graph_page.drawn(trace, index, graph_page.Options())  # every output
            outlined[step.rounds[-1].round] = sorted(
                label for label, stroke in _outlines(drawn.dot) if stroke == MARK)
    assert outlined[2] == outlined[20] == ["MulBackward0", "SumBackward0", "other", "y"]
    stopped = trace.steps[-1]
    assert stopped.stopped and stopped.rounds[-1].round == 26
    assert not graph_page.statement_added(trace, len(trace.steps) - 1)


def _outlines(dot: str) -> list[tuple[str, str]]:
    """Each drawn node's first label line and outline colour, from the SVG."""
    found = []
    for group in re.finditer(r'<g id="node\d+" class="node">(.*?)</g>', svg(dot), re.S):
        body = group.group(1)
        label = re.search(r"<text[^>]*>([^<]*)</text>", body)
        shape = re.search(r'<(?:polygon|ellipse|path) fill="[^"]*" stroke="([^"]*)"', body)
        if label and shape:
            found.append((html.unescape(label.group(1)), shape.group(1)))
    return found


def test_a_step_without_a_graph_says_why_truthfully(pool: WorkerPool) -> None:
    """Nothing requires grad at a program's start; a module's parameters do, though no graph
    holds them until an operation uses them; and once a graph is let go, no variable reaches
    one: neither may be told "no tensor requires grad"."""
    trace = pool.run("x = torch.ones(2)\nnet = torch.nn.Linear(2, 1)\n"
                     "loss = net(x).sum()\nloss.backward()\nloss = loss.item()\n")
    said = {s.line: graph_page.no_graph(trace, i) for i, s in enumerate(trace.steps)
            if s.graph is None}
    assert said == {1: "no_graph", 2: "no_graph_held", 5: "no_graph_held"}
