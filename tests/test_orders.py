"""Derivative orders: the nodes a backward call with create_graph=True makes say which node's
backward made them, in which call and at which order; the Graph page colours them, counts
them and draws one order at a time; the program sees nothing of it."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content.rules import rule
from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.check import BadResult, read_data
from explorer.trace.graph_view import ORDER_FILLS, orders, tooltip, view
from explorer.trace.schema import Graph, Node
from explorer.views.present import variable_rows
from explorer.views.render import svg
from tests.conftest import graph_page_ran, graph_viewer
from tests.forged import forged

CUBE = ("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 3\n"
        "g, = torch.autograd.grad(y, x, create_graph=True)\n"
        "h, = torch.autograd.grad(g, x, create_graph=True)\n"
        "k, = torch.autograd.grad(h, x)\n")


def _backward(graph: Graph) -> dict[str, Node]:
    return {n.id: n for n in graph.nodes if n.kind == "backward"}


def _after(trace: Trace, line: int) -> Graph:
    (step,) = [s for s in trace.steps if s.line == line and s.within is None]
    assert step.graph is not None
    return trace.graphs[step.graph]


def test_each_grad_with_create_graph_makes_the_next_order_and_says_who_made_it() -> None:
    trace = execute(CUBE)
    assert trace.ok, trace.error
    assert [trace.variables[v].values for v in "ghk"] == [12.0, 12.0, 6.0]
    forward = _backward(_after(trace, 2))
    assert all(n.order is None for n in forward.values())
    (pow3,) = [i for i, n in forward.items() if n.name == "PowBackward0"]
    first = _backward(_after(trace, 3))
    made = {(n.name, n.order, n.made_by, n.made_in) for i, n in first.items() if i not in forward}
    assert made == {(name, 2, pow3, 1) for name in ("MulBackward0", "MulBackward1",
                                                     "PowBackward0")}
    (pow2,) = [i for i, n in first.items() if n.name == "PowBackward0" and n.order == 2]
    assert "2.0" in first[pow2].saved["exponent"]
    second = _backward(_after(trace, 4))
    assert {(n.order, n.made_by, n.made_in) for i, n in second.items() if i not in first} == {
        (3, pow2, 2)}
    assert orders(_after(trace, 4)) == {1: 2, 2: 3, 3: 3}  # AccumulateGrad is the forward's
    assert orders(_after(trace, 2)) == {}  # the forward's alone: nothing to tell
    # the ones the first grad started from, saved by its MulBackward0, drawn under its name
    saved = [n.label.split("\n")[0] for n in _after(trace, 3).nodes if n.kind == "saved"]
    assert saved == ["∂y/∂y"]
    later = [n.label.split("\n")[0] for n in _after(trace, 4).nodes if n.kind == "saved"]
    assert sorted(later) == ["∂g/∂(PowBackward0)", "∂y/∂y"]
    # the calls through the derivative graph are replayed, engine step by engine step
    assert [[s.name for s in c.steps] for c in trace.backward] == [
        ["PowBackward0"], ["MulBackward0", "MulBackward1", "PowBackward0"],
        ["MulBackward0", "MulBackward1", "PowBackward0"]]


@pytest.mark.parametrize(("code", "made"), [
    # the engine sums x's two gradients for grad()'s answer: made for x's AccumulateGrad
    ("g, = torch.autograd.grad(y, x, create_graph=True)\n", {"MulBackward0", "AddBackward0"}),
    # backward(create_graph=True) writes x.grad with a graph of its own
    ("y.backward(create_graph=True)\ng = x.grad\n",
     {"MulBackward0", "AddBackward0", "CopyBackwards"}),
])
def test_sums_and_a_written_grad_are_made_by_the_backward_too(code: str,
                                                              made: set[str]) -> None:
    trace = execute("x = torch.tensor(3.0, requires_grad=True)\ny = x * x\n" + code)
    assert trace.ok, trace.error
    nodes = _backward(trace.graphs[trace.steps[-1].graph])
    assert {n.name for n in nodes.values() if n.order == 2} == made
    assert {n.name for n in nodes.values() if n.order is None} == {"MulBackward0",
                                                                    "AccumulateGrad"}
    (accumulate,) = [i for i, n in nodes.items() if n.name == "AccumulateGrad"]
    assert {n.made_by for n in nodes.values() if n.name in ("AddBackward0", "CopyBackwards")} \
        == {accumulate}
    assert trace.variables["g"].values == 6.0


def test_a_gradient_penalty_in_a_loop_tags_the_calls_not_recorded_in_full() -> None:
    code = ("torch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\n"
            "for step in range(15):\n    x = torch.randn(4, 3, requires_grad=True)\n"
            "    score = (x @ w).tanh().sum()\n"
            "    g, = torch.autograd.grad(score, x, create_graph=True)\n"
            "    penalty = ((g.norm(dim=1) - 1) ** 2).mean()\n"
            "    penalty.backward()\n")
    trace = execute(code, limits=Limits(line_steps=0))
    assert trace.ok, trace.error
    assert len(trace.losses) == 30 and len(trace.backward) < 30
    nodes = _backward(trace.graphs[trace.steps[-1].graph])
    tags = {(n.order, n.made_in) for n in nodes.values() if n.order}
    assert tags and all(tag == (2, 29) for tag in tags)  # the last grad(): call 29, light
    # the penalty's own ops run forward on g: order 1, as the program wrote them
    assert {n.name for n in nodes.values() if n.order is None} >= {
        "TanhBackward0", "LinalgVectorNormBackward0", "PowBackward0"}
    assert "TanhBackwardBackward0" in {n.name for n in nodes.values() if n.order == 2}


def test_a_gradient_with_a_graph_of_its_own_is_named_where_it_is_saved() -> None:
    trace = execute("x = torch.tensor(0.5, requires_grad=True)\n"
                    "w = torch.tensor(2.0, requires_grad=True)\ny = (x * w).exp()\n"
                    "g, = torch.autograd.grad(y, x, create_graph=True)\n")
    labels = {n.label.split("\n")[0] for n in trace.graphs[-1].nodes if n.kind == "saved"}
    assert labels == {"∂y/∂y", "∂y/∂(MulBackward0)"}


HOOKED = """calls = []
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
y.grad_fn.register_prehook(lambda g: calls.append(("pre", g[0].item())))
y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi[0].tolist())))
x.register_hook(lambda g: calls.append(("x", g.tolist())))
g, = torch.autograd.grad(y, x, create_graph=True)
g.grad_fn.register_prehook(lambda gs: calls.append(("pre2", gs[0].tolist())))
h, = torch.autograd.grad(g.sum(), x, create_graph=True)
h.sum().backward()
print(calls)
print(g.tolist(), h.tolist(), x.grad.tolist())
print([type(n).__name__ for n, _ in h.grad_fn.next_functions if n is not None])
"""


def test_the_program_sees_the_same_hooks_and_values_as_in_plain_pytorch() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        torch.manual_seed(0)
        exec(compile(HOOKED, "<plain>", "exec"), {"torch": torch})  # noqa: S102
    trace = execute(HOOKED)
    assert trace.ok, trace.error
    assert trace.stdout == out.getvalue()
    assert any(n.order == 3 for n in trace.graphs[-1].nodes)


def test_one_order_at_a_time_with_the_tensors_beside_it() -> None:
    graph = _after(execute(CUBE), 4)
    nodes = _backward(graph)
    for order, count in orders(graph).items():
        shown = view(graph, order=order, collapse=False)
        ops = {i for i, n in shown.nodes.items() if n.kind == "backward"}
        assert ops == {i for i, n in nodes.items() if (n.order or 1) == order}
        assert len(ops) == count
        kept = set(shown.nodes)
        assert all(n.kind != "backward" for i, n in shown.nodes.items() if i not in ops)
        assert kept - ops  # the tensors that meet them: x, the outputs, what they saved
    second = view(graph, order=2, collapse=False)
    assert {n.label.split("\n")[0] for n in second.nodes.values() if n.kind != "backward"} == {
        "x", "g", "∂y/∂y"}


def test_the_picture_fills_each_order_in_its_colour_and_says_who_made_it() -> None:
    graph = _after(execute(CUBE), 4)
    shown = view(graph, collapse=False)
    picture = svg(shown.dot)
    nodes = _backward(graph)
    fills = re.findall(r'<polygon fill="(#[0-9a-f]{6}|lightgrey)"', picture)
    assert fills.count(ORDER_FILLS[0][0]) == 3 and fills.count(ORDER_FILLS[1][0]) == 3
    made = next(n for n in nodes.values() if n.order == 3 and n.name == "PowBackward0")
    said = tooltip(made, nodes[made.made_by].name)
    assert "derivative order 3: made by the backward of PowBackward0" in said
    assert f"in backward call {made.made_in}" in said


def test_a_forged_order_is_read_only_where_a_node_can_have_one() -> None:
    trace = execute(CUBE)
    data = json.loads(trace.to_json())
    graph = data["graphs"][-1]
    tensor = next(n for n in graph["nodes"] if n["kind"] == "leaf")
    tensor |= {"order": 7, "made_by": "n1", "made_in": 3}
    answer = read_data(forged(**{k: data[k] for k in ("steps", "graphs", "variables")}),
                       Limits())
    leaf = next(n for n in answer.graphs[-1].nodes if n.kind == "leaf")
    assert (leaf.order, leaf.made_by, leaf.made_in) == (None, None, None)
    op = next(n for n in graph["nodes"] if n.get("order"))
    for bad in ({"order": 1}, {"made_by": "<script>"}, {"made_in": 0}):
        original = dict(op)
        op |= bad
        with pytest.raises(BadResult):
            read_data(forged(**{k: data[k] for k in ("steps", "graphs", "variables")}),
                      Limits())
        op.clear()
        op |= original


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graph_page_counts_the_orders_and_draws_one_at_a_time(lang: str) -> None:
    at = graph_page_ran(CUBE, lang)
    at.button(key="graph.step.first").click().run()
    for _ in range(3):  # to line 4, after h
        at.button(key="graph.step.forward").click().run()
    assert not at.exception
    said = " ".join(c.value for c in at.caption)
    counts = {"en": ["order 1 · the forward]: 2 nodes", "order 2]: 3 nodes",
                     "order 3]: 3 nodes"],
              "zh": ["1 阶 · 前向]：2 个节点", "2 阶]：3 个节点", "3 阶]：3 个节点"]}[lang]
    assert all(c in said for c in counts), said
    picture, _ = graph_viewer(at)  # the graph of h: its own nodes, third-order all
    assert _drawn(picture).count("PowBackward0") == 1
    (roots,) = [m for m in at.multiselect if m.key.startswith("graph.roots.")]
    roots.set_value([]).run()  # the graph of every output: each order's PowBackward0
    assert _drawn(graph_viewer(at)[0]).count("PowBackward0") == 3
    at.session_state["graph.order"] = 3
    at.run()
    drawn = _drawn(graph_viewer(at)[0])
    assert drawn.count("PowBackward0") == 1 and "MulBackward1" in drawn
    assert "∂g/∂(PowBackward0)" in drawn and "∂y/∂y" not in drawn


def _drawn(picture: str) -> list[str]:
    """The texts an SVG draws."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", picture)


def test_the_backward_page_replays_the_third_derivative_and_says_who_made_each_node() -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.run()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = CUBE
    at.button(key="backward.run").click().run()
    assert not at.exception and at.session_state["backward.call"] == 3
    at.button(key="backward.replay.3.last").click().run()
    said = "\n".join(str(e.value) for kind in ("markdown", "caption", "info")
                     for e in getattr(at, kind))
    assert "3. `PowBackward0`" in said
    assert ("Derivative order 3: this node was made by the backward of `PowBackward0`, in "
            "backward call 2.") in said


def test_a_derivative_of_a_backward_formula_has_a_rule_of_its_own() -> None:
    for lang in ("en", "zh"):
        assert "create_graph=True" in rule("TanhBackwardBackward0", lang)
        assert rule("TanhBackward0", lang) == rule("Tanh", lang) != rule(
            "TanhBackwardBackward0", lang)
    assert "create_graph" not in rule("MyReLUBackward")  # a custom Function's name


DUAL = """import torch.autograd.forward_ad as fwAD
x = torch.tensor([1.0, 2.0])
v = torch.tensor([1.0, 0.0])
with fwAD.dual_level():
    d = fwAD.make_dual(x, v)
    y = d.sin() * d
    p, t = fwAD.unpack_dual(y)
    print(t)
z = y * 2
"""


def test_forward_mode_ad_shows_each_dual_tensor_with_its_tangent() -> None:
    trace = execute(DUAL)
    assert trace.ok, trace.error
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(DUAL, "<plain>", "exec"), {"torch": torch})  # noqa: S102
    assert trace.stdout == out.getvalue()
    inside = {s.line: s for s in trace.steps if s.within == 4}
    d, y = inside[6].variables["d"], inside[6].variables["y"]
    assert (d.values, d.tangent) == ([1.0, 2.0], [1.0, 0.0])
    x = torch.tensor([1.0, 2.0])
    assert y.tangent == pytest.approx((x.cos() * x + x.sin()).mul(torch.tensor([1.0, 0.0]))
                                      .tolist())
    assert inside[7].variables["p"].tangent is None  # the primal alone: no tangent
    after = trace.steps[-1].variables
    assert all(info.tangent is None for info in after.values())  # the level is gone
    tangents = {row["name"]: row["tangent"] for row in variable_rows(inside[6].variables)}
    assert (tangents["x"], tangents["d"]) == ("", "`[1., 0.]`")
    assert "tangent" not in variable_rows(after)[0]


ODD = """x = torch.tensor([1.0, 2.0], requires_grad=True)
u = torch.tensor(3.0, requires_grad=True)
y = (x ** 2).sum()
a, b = torch.autograd.grad(y, [x, u], create_graph=True, allow_unused=True,
                           materialize_grads=True)
print(a, b)
z = x.exp()
g, = torch.autograd.grad((z, z * 2), x, grad_outputs=(torch.ones(2), torch.ones(2)),
                         create_graph=True)
h = x.register_hook(lambda t: t * 10)
y.backward(create_graph=True, inputs=[x])
h.remove()
print(x.grad)
s = torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2,), requires_grad=True)
q, = torch.autograd.grad((s * 3).to_dense().sum(), s, create_graph=True)
print(g, q.to_dense())
try:
    torch.autograd.grad(y, x, create_graph=True)
except RuntimeError as error:
    print("again:", str(error)[:40])
"""


@pytest.mark.parametrize("code", [ODD, HOOKED])
def test_odd_create_graph_calls_run_as_in_plain_pytorch(code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        torch.manual_seed(0)
        exec(compile(code, "<plain>", "exec"), {"torch": torch})  # noqa: S102
    trace = execute(code)
    assert trace.ok, trace.error
    assert trace.stdout == out.getvalue()


def test_a_graph_of_many_orders_offers_the_first_twelve() -> None:
    code = ("x = torch.tensor(0.5, requires_grad=True)\ngs = [x ** 20]\nfor i in range(15):\n"
            "    gs += torch.autograd.grad(gs[-1], x, create_graph=True)\n"
            "every = torch.stack(gs)\n")
    trace = execute(code, limits=Limits(line_steps=0))
    assert list(orders(trace.graphs[trace.steps[-1].graph])) == list(range(1, 17))
    at = graph_page_ran(code)
    assert not at.exception
    said = next(c.value for c in at.caption if "Nodes by order" in c.value)
    assert said.count("order ") == 12 + 1 and said.endswith(" · ….")  # `order 1 · the forward`
    (control,) = at.get("button_group")
    assert len(control.proto.options) == 1 + 12
