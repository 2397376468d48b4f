"""The picture oracle: what the Graph page draws tells the truth, for every learner program
(tests/learner_programs/) and every preset.

Each program runs in a real worker pool. For the Graph page's default picture after each
step checked (the graph of the variable assigned last, saved tensors and attributes shown,
numbers on a small graph, the nodes the statement added outlined:
explorer.views.graph_page), the SVG graphviz draws is read back, node by node
(`<g class="node">`, its `<title>` the node id):

- every tensor variable the program names that is a leaf requiring grad, and that leads to
  the drawn root, is a node drawn in the leaf colour under its own name;
- no node is filled otherwise than its kind's legend colour (a mark outlines, never fills).

Every step of a short program is checked; of a long one, the step after each statement that
can run backward or change a `.grad`, the last step, and an even sample of the rest. The
Backward page lays out the same graph (explorer.views.export.animation_view): each named leaf
behind a backward call's roots is on it, as a leaf.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from explorer.content.examples import EXAMPLES
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.safety.sandbox import FILENAME
from explorer.trace import Trace
from explorer.trace.graph_view import (
    COLOURS,
    GREY,
    default_root,
    named_outputs,
    order_fill,
)
from explorer.views import graph_page
from explorer.views.export import animation_view
from explorer.views.render import svg
from tests.plain import run_plain
from tests.test_corpus import REFUSED

CORPUS = Path(__file__).parent / "learner_programs"
PROGRAMS = {f"{path.parent.name}/{path.stem}": path.read_text(encoding="utf-8")
            for path in sorted(CORPUS.glob("**/*.py"))} | {
    f"preset/{example.key}": example.code for example in EXAMPLES}
LEGEND = COLOURS | {"backward": GREY, "group": GREY}  # explorer.content.text: graph_intro
ALL_STEPS_UP_TO, SAMPLED = 12, 6  # a longer program: the steps that matter and a sample
UNHURRIED = Limits(time_s=60)  # gradcheck makes hundreds of backward calls
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def traces() -> Iterator[dict[str, Trace]]:
    """Every program's Trace, from one pool (a repeated program's Trace is kept)."""
    pool = WorkerPool(size=2)
    try:
        with ThreadPoolExecutor(pool.size) as runner:
            yield dict(zip(PROGRAMS, runner.map(lambda code: pool.run(code, limits=UNHURRIED),
                                                PROGRAMS.values()), strict=True))
    finally:
        pool.close()


def test_a_program_fails_here_only_where_plain_pytorch_fails_it(
        traces: dict[str, Trace]) -> None:
    failed = [key for key, trace in traces.items() if not trace.ok and key not in REFUSED]
    plain = run_plain([PROGRAMS[key] for key in failed], 1, filename=FILENAME)
    assert [(key, traces[key].error) for key, run in zip(failed, plain, strict=True)
            if run.result is not None and run.result["ok"]] == []


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_graph_page_draws_each_leaf_as_a_leaf_and_each_node_in_its_colour(
        key: str, traces: dict[str, Trace]) -> None:
    trace = traces[key]
    for index in _checked_steps(trace, PROGRAMS[key]):
        step = trace.steps[index]
        graph = trace.graphs[step.graph] if step.graph is not None else None
        if graph is None or graph.note:
            continue
        shown = graph_page.drawn(trace, index, graph_page.defaults(trace, index))
        drawn = _drawn(svg(shown.dot))
        where = f"{key}, after line {step.line}"
        for node_id, (fill, _) in drawn.items():
            node = shown.nodes[node_id]
            legend = LEGEND[node.kind] if not node.order else order_fill(node.order)[0]
            assert fill == _fill(legend), (where, node)
        named = named_outputs(graph)
        root = named.get(default_root(trace, index, named) or "")
        for name in _leaves(step.variables):
            assert name in named, (where, name)  # the recorded graph has it, named
            if root is None or _leads_to(graph, named[name], root) or named[name] in drawn:
                fill, text = drawn.get(named[name], ("not drawn", []))
                assert fill == _fill(COLOURS["leaf"]), (where, name, fill)
                assert name in text[0].split(" = "), (where, name, text)


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_backward_page_draws_each_leaf_behind_a_call_as_a_leaf(
        key: str, traces: dict[str, Trace]) -> None:
    trace = traces[key]
    for call in trace.backward:
        if call.graph is None or not call.steps:
            continue
        graph = trace.graphs[call.graph]
        shown = animation_view(trace, call)
        leaves = [n.id for n in graph.nodes if n.names and n.is_leaf
                  and n.requires_grad and any(_leads_to(graph, n.id, root)
                                                 for root in call.roots)]
        assert all(i in shown.nodes and shown.nodes[i].kind == "leaf" for i in leaves), (
            key, call)
        drawn = _drawn(svg(shown.dot))
        assert all(drawn[i][0] == _fill(COLOURS["leaf"]) for i in leaves), key


def _checked_steps(trace: Trace, code: str) -> list[int]:
    """All steps of a short run; of a long one, each that may run backward or change a
    `.grad`, the last, and SAMPLED more spread evenly."""
    count = len(trace.steps)
    if count <= ALL_STEPS_UP_TO:
        return list(range(count))
    lines = code.splitlines()

    def matters(i: int) -> bool:
        step = trace.steps[i]
        text = "\n".join(lines[step.line - 1:step.end_line])
        before = trace.steps[i - 1].variables if i else {}
        return "backward" in text or "grad(" in text or any(
            info.grad != (before[name].grad if name in before else None)
            for name, info in step.variables.items())

    chosen = {i for i in range(count) if matters(i)} | {count - 1}
    return sorted(chosen | set(range(0, count, max(1, count // SAMPLED))))


def _leaves(variables: dict[str, dict[str, Any]]) -> list[str]:
    """The names of the tensor variables that are leaves requiring grad."""
    return [name for name, info in variables.items() if info.kind == "tensor"
            and info.is_leaf and info.requires_grad]


def _leads_to(graph: dict[str, Any], node: str, root: str) -> bool:
    """True if gradient or view edges lead from `node` to `root` (or they are one node)."""
    into: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        if e.kind != "saved":
            into[e.dst].append(e.src)
    seen, stack = set(), [root]
    while stack:
        here = stack.pop()
        if here == node:
            return True
        if here not in seen:
            seen.add(here)
            stack.extend(into[here])
    return False


@functools.cache
def _fill(colour: str) -> str:
    """How graphviz writes the fill `colour` in an SVG (some names become hex codes)."""
    box = f"\tn [label=n fillcolor=\"{colour}\" shape=box style=filled]\n"
    (fill, _), = _drawn(svg(f"digraph {{\n{box}}}\n")).values()
    return fill


def _drawn(picture: str) -> dict[str, tuple[str, list[str]]]:
    """Node id -> the fill of its box and its lines of text, as graphviz drew them."""
    nodes = {}
    for g in ET.fromstring(picture).iter(f"{SVG}g"):
        if g.get("class") == "node":
            title = g.find(f"{SVG}title")
            box = next(g.iter(f"{SVG}polygon"), None)
            assert title is not None and box is not None
            nodes[title.text or ""] = (box.get("fill", ""),
                                       [t.text or "" for t in g.iter(f"{SVG}text")])
    return nodes
