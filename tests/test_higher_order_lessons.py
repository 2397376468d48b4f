"""The lessons about gradients of gradients: their programs run in the explorer as in plain
PyTorch, the graph after each create_graph=True call holds the nodes of each derivative order
their text counts, the Hessian-vector product is PyTorch's own, a gradient penalty reaches the
critic's weight through the derivative graph, and every value and line their text cites is the
run's own, the same in English and in Chinese."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES, text
from explorer.pool.worker import WorkerPool
from explorer.trace import Step, Trace
from explorer.trace.graph_view import order_fill, orders
from explorer.trace.schema import Graph, Node
from explorer.ui.lessons import EDITORS
from tests.test_loop_lessons import (
    _cites,
    _cites_lines,
    _flat,
    _line,
    _number,
    _numbers,
    _plain,
    _said,
    lesson_code,
    run_lessons,
)

HIGHER = ("gradients-of-gradients", "hessian-vector-product", "gradient-penalty")
NO_GRAPH = "element 0 of tensors does not require grad and does not have a grad_fn"


@pytest.fixture(scope="module")
def runs(pool: WorkerPool) -> dict[tuple[str, str], Trace]:
    return run_lessons(pool, HIGHER)


def _at(trace: Trace, line: int) -> Step:
    """The one step of the program's own `line`."""
    (step,) = [s for s in trace.steps if s.line == line and not s.calls]
    return step


def _graph(trace: Trace, step: Step) -> Graph:
    assert step.graph is not None
    return trace.graphs[step.graph]


def _of_order(graph: Graph, order: int) -> list[Node]:
    """The backward nodes of derivative `order` (1: the forward's)."""
    return [n for n in graph.nodes if n.kind == "backward" and (n.order or 1) == order]


def _names(nodes: list[Node]) -> Counter[str]:
    return Counter(n.name or "" for n in nodes)


def _saved_as(graph: Graph, label: str) -> list[Node]:
    """The backward nodes that keep the saved tensor drawn as `label`."""
    nodes = {n.id: n for n in graph.nodes}
    return [nodes[e.src] for e in graph.edges if e.kind == "saved"
            and nodes[e.dst].kind == "saved"
            and nodes[e.dst].label.split("\n")[0].strip() == label]


def _value(values: Any) -> Any:
    """Values as the lessons cite them (`_number`), in lists as the tensor's rows."""
    return [_value(v) for v in values] if isinstance(values, list) else _number(values)


def _steps(trace: Trace, call: int) -> list[tuple[str, Any, list[Any]]]:
    """Each engine step of backward call `call`: the node, what it received, what it sent."""
    (found,) = [c for c in trace.backward if c.call == call]
    return [(s.name, [_value(g.values) for g in s.grad_outputs if g],
             [_value(g.values) for g in s.grad_inputs if g]) for s in found.steps]


@pytest.mark.parametrize("key", HIGHER)
def test_a_higher_order_lessons_program_runs_alike_in_every_language(
        runs: dict[tuple[str, str], Trace], key: str) -> None:
    for lang in LANGUAGES:
        assert runs[key, lang].ok, (lang, runs[key, lang].error)
    en, zh = (runs[key, lang] for lang in LANGUAGES)
    assert [s.line for s in en.steps] == [s.line for s in zh.steps]
    assert en.stdout == zh.stdout
    assert [_steps(en, c.call) for c in en.backward] == [_steps(zh, c.call) for c in zh.backward]
    sizes = [[orders(_graph(run, s)) for s in run.steps if s.graph is not None] for run in (en, zh)]
    assert sizes[0] == sizes[1] and 2 in sizes[0][-1]  # nodes of order 2 once create_graph ran


@pytest.mark.parametrize("key", HIGHER)
def test_a_higher_order_lessons_program_gives_what_plain_pytorch_gives(
        runs: dict[tuple[str, str], Trace], key: str) -> None:
    trace = runs[key, "en"]
    printed, namespace = _plain(lesson_code(key), trace.threads)
    assert trace.stdout == printed
    tensors = [name for name, info in trace.variables.items() if info.kind == "tensor"]
    assert len(tensors) >= 4
    for name in tensors:
        plain = namespace[name].detach().flatten().tolist()
        assert _flat(trace.variables[name].values) == pytest.approx(plain, rel=1e-6), name


@pytest.mark.parametrize("key", HIGHER)
def test_a_higher_order_lesson_cites_the_same_numbers_in_english_and_chinese(key: str) -> None:
    lesson = lessons.by_key(key)
    en, zh = (_numbers(_said(lesson, lang)) for lang in LANGUAGES)
    assert en == zh, (en - zh, zh - en)


def test_the_gradients_of_gradients_lesson_cites_what_its_run_shows(
        runs: dict[tuple[str, str], Trace]) -> None:
    key = "gradients-of-gradients"
    lesson, code, trace = lessons.by_key(key), lesson_code(key), runs[key, "en"]
    assert lesson.page == lessons.GRAPH
    made, first, second, third = (_line(code, s) for s in (
        "y = x ** 3", "g, = torch.autograd.grad(y, x, create_graph=True)",
        "h, = torch.autograd.grad(g, x, create_graph=True)", "k, = torch.autograd.grad(h, x)"))
    _cites_lines(lesson, made, first, second, third)
    assert "x = torch.tensor(2.0, requires_grad=True)" in code
    _cites(lesson, "2")
    assert all(s.variables["x"].grad is None for s in trace.steps if "x" in s.variables)

    # Line 4: the forward alone, order 1: no caption of orders.
    forward = _graph(trace, _at(trace, made))
    assert _names(_of_order(forward, 1)) == Counter(PowBackward0=1, AccumulateGrad=1)
    assert orders(forward) == {}

    # Line 6: PowBackward0's formula, grad · 3 · x², as 3 nodes of order 2, made in call 1.
    step = _at(trace, first)
    graph = _graph(trace, step)
    assert orders(graph) == {1: 2, 2: 3}
    two = _of_order(graph, 2)
    assert _names(two) == Counter(MulBackward0=1, MulBackward1=1, PowBackward0=1)
    (power,) = [n for n in _of_order(forward, 1) if n.name == "PowBackward0"]
    assert power.name == "PowBackward0" and power.saved["exponent"] == "3"
    assert {(n.made_by, n.made_in) for n in two} == {(power.id, 1)}
    saved = {n.name: n.saved for n in two}
    assert saved["PowBackward0"]["exponent"] == "2.0" and saved["MulBackward1"]["other"] == "3.0"
    assert [n.name for n in _saved_as(graph, "∂y/∂y")] == ["MulBackward0"]
    assert not _saved_as(graph, "self")
    assert step.variables["g"].values == 12
    for lang in LANGUAGES:  # the caption over the picture, as the look quotes it
        sizes = [text("order_nodes", lang, order=text("order_forward", lang), nodes=2),
                 text("order_nodes", lang, order=text("order_label", lang, order=2), nodes=3)]
        assert " · ".join(sizes) in lesson.look[lang], lang
    assert order_fill(2)[1] == "violet" and order_fill(3)[0] == "#fcc2d7"  # pink
    for lang, words in (("en", ("violet", "pink")), ("zh", ("紫色", "粉色"))):
        assert all(word in _said(lesson, lang) for word in words), lang

    # Line 7: only the order-2 PowBackward0's formula, grad · 2 · x¹, records: 3 of order 3.
    step = _at(trace, second)
    graph = _graph(trace, step)
    assert orders(graph) == {1: 2, 2: 3, 3: 3}
    three = _of_order(graph, 3)
    assert _names(three) == Counter(MulBackward0=1, MulBackward1=1, PowBackward0=1)
    (maker,) = [n for n in _of_order(graph, 2) if n.name == "PowBackward0"]
    assert {(n.made_by, n.made_in) for n in three} == {(maker.id, 2)}
    assert {n.name: n.saved for n in three}["MulBackward1"]["other"] == "2.0"
    assert [(n.name, n.order) for n in _saved_as(graph, "∂g/∂(PowBackward0)")] == [
        ("MulBackward0", 3)]
    assert step.variables["h"].values == 12
    _cites(lesson, "12", "3")

    # Line 8: no create_graph: k is a number, no node is added, order 3's values are freed.
    step = _at(trace, third)
    last = _graph(trace, step)
    assert {n.id for n in last.nodes if n.kind == "backward"} == {
        n.id for n in graph.nodes if n.kind == "backward"}
    assert orders(last) == {1: 2, 2: 3, 3: 3}
    k = step.variables["k"]
    assert k.values == 6 and k.grad_fn is None and not k.requires_grad

    def freed(node: Node) -> bool:
        return any("freed by backward()" in value for value in (node.saved or {}).values())

    assert all(freed(n) for n in _of_order(last, 3) if n.name != "MulBackward1")
    assert not any(freed(n) for n in _of_order(last, 2))
    _cites(lesson, "6")

    # The graph's size, order by order: 2, then 5, then 8 backward nodes.
    sizes = [sum(orders(_graph(trace, _at(trace, line))).values()) for line in (first, second)]
    assert [len(_of_order(forward, 1)), *sizes] == [2, 5, 8]
    _cites(lesson, "2", "5", "8")

    # The Backward pass page: three calls, the second and third through the derivative graph.
    assert [(c.call, c.kind) for c in trace.backward] == [(1, "grad"), (2, "grad"), (3, "grad")]
    assert _steps(trace, 1) == [("PowBackward0", ["1"], ["12"])]
    assert _steps(trace, 2) == [("MulBackward0", ["1"], ["1"]), ("MulBackward1", ["1"], ["3"]),
                                ("PowBackward0", ["3"], ["12"])]
    assert _steps(trace, 3) == [("MulBackward0", ["1"], ["3"]), ("MulBackward1", ["3"], ["6"]),
                                ("PowBackward0", ["6"], ["6"])]
    for call in trace.backward[1:]:
        ran = {n.id: n for n in trace.graphs[call.graph].nodes}  # type: ignore[index]
        assert {ran[s.node].order for s in call.steps} == {call.call}
    _cites(lesson, "1", "0")
    for lang in LANGUAGES:
        assert all(f"#{c.call}" in _said(lesson, lang) for c in trace.backward), lang
    assert _printed(trace) == "12.0 12.0 6.0"


def _printed(trace: Trace) -> str:
    (line,) = trace.stdout.splitlines()
    return line


def test_the_hessian_vector_product_lesson_cites_what_its_run_shows(
        runs: dict[tuple[str, str], Trace]) -> None:
    key = "hessian-vector-product"
    lesson, code, trace = lessons.by_key(key), lesson_code(key), runs[key, "en"]
    assert lesson.page == lessons.BACKWARD
    first, second, functional, check = (_line(code, s) for s in (
        "g, = torch.autograd.grad(y, x, create_graph=True)", "hv, = torch.autograd.grad(g @ v, x)",
        "torch.autograd.functional.hvp(f, x, v)", "print(torch.allclose(hv, hvp))"))
    _cites_lines(lesson, first, second, functional, check)
    end = trace.variables
    x, v, g, hv, hvp = (end[name].values for name in ("x", "v", "g", "hv", "hvp"))
    assert (_value(x), _value(v)) == (["1", "2", "3"], ["1", "0.5", "-1"])
    assert _value(end["y"].values) == "36" and _value(g) == ["3", "12", "27"]
    assert _value(hv) == _value(hvp) == ["6", "6", "-18"]
    assert trace.stdout.splitlines()[-1] == "True"
    _cites(lesson, "1", "2", "3", "0.5", "-1", "36", "12", "27", "6", "-18")
    for lang in LANGUAGES:
        assert "True" in _said(lesson, lang), lang

    # hv is PyTorch's own H @ v: the Hessian, built here, is diag(6 · x) = diag(6, 12, 18).
    def f(t: torch.Tensor) -> torch.Tensor:
        return (t ** 3).sum()

    at, along = torch.tensor(x), torch.tensor(v)
    hessian = torch.autograd.functional.hessian(f, at)
    assert torch.equal(hessian, torch.diag(6 * at))
    assert [_number(d) for d in torch.diagonal(hessian).tolist()] == ["6", "12", "18"]
    assert torch.allclose(torch.tensor(hv), hessian @ along)
    assert torch.allclose(torch.tensor(hv), torch.autograd.functional.hvp(f, at, along)[1])
    _cites(lesson, "18")

    # Line 13: g has a graph: 3 nodes of order 2 beside the forward's 3.
    graph = _graph(trace, _at(trace, first))
    assert orders(graph) == {1: 3, 2: 3}
    assert _names(_of_order(graph, 2)) == Counter(MulBackward0=1, MulBackward1=1,
                                                  PowBackward0=1)
    assert [(n.name, n.order) for n in _saved_as(graph, "∂y/∂(PowBackward0)")] == [
        ("MulBackward0", 2)]

    # Call #2 goes through g's graph: v, then v · 3, then v · 3 · 2 · x.
    assert [c.call for c in trace.backward][:2] == [1, 2]
    assert _steps(trace, 1)[1] == ("PowBackward0", [["1", "1", "1"]], [["3", "12", "27"]])
    assert _steps(trace, 2) == [
        ("DotBackward0", ["1"], [["1", "0.5", "-1"]]),
        ("MulBackward0", [["1", "0.5", "-1"]], [["1", "0.5", "-1"]]),
        ("MulBackward1", [["1", "0.5", "-1"]], [["3", "1.5", "-3"]]),
        ("PowBackward0", [["3", "1.5", "-3"]], [["6", "6", "-18"]])]
    call = trace.backward[1]
    ran = {n.id: n for n in trace.graphs[call.graph].nodes}  # type: ignore[index]
    assert [ran[s.node].order for s in call.steps] == [None, 2, 2, 2]
    assert call.steps[0].grad_inputs[0].to == call.steps[1].node  # g's own node
    _cites(lesson, "1.5", "-3")
    for lang in LANGUAGES:
        assert all(f"#{c}" in _said(lesson, lang) for c in (1, 2)), lang


def test_without_create_graph_the_second_backward_has_no_graph_to_go_through(
        pool: WorkerPool) -> None:
    """What the lesson asks the learner to try: create_graph=True taken out of the first."""
    code = lesson_code("hessian-vector-product")
    cut = code.replace("g, = torch.autograd.grad(y, x, create_graph=True)",
                       "g, = torch.autograd.grad(y, x)")
    assert cut != code
    trace = pool.run(cut)
    assert trace.error is not None and NO_GRAPH in trace.error.message
    assert trace.error.line == _line(code, "hv, = torch.autograd.grad(g @ v, x)")
    lesson = lessons.by_key("hessian-vector-product")
    for lang in LANGUAGES:
        assert NO_GRAPH in lesson.text[lang], lang
    _cites(lesson, "0")  # "element 0", in the error as it reads


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_graph_page_captions_the_orders_the_lesson_counts(lang: str) -> None:
    lesson = lessons.by_key("gradients-of-gradients")
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params["lang"] = lang
    at.run()
    at.button(key=f"lesson.{lesson.key}.{lesson.examples[0]}").click().run()
    assert not at.exception
    assert at.session_state[f"{EDITORS[lesson.page]}.trace"].ok
    sizes = " · ".join(text("order_nodes", lang, order=order, nodes=nodes) for order, nodes in (
        (f":gray-background[{text('order_forward', lang)}]", 2),
        (f":violet-background[{text('order_label', lang, order=2)}]", 3),
        (f":red-background[{text('order_label', lang, order=3)}]", 3)))
    assert text("orders_sizes", lang, sizes=sizes) in [c.value for c in at.caption]


def _ran(trace: Trace, call: int) -> list[tuple[Node, Any, list[tuple[Any, Node]]]]:
    """Each engine step of backward call `call`: its node, what it received, and what it
    sent, each to its node."""
    (found,) = [c for c in trace.backward if c.call == call]
    nodes = {n.id: n for n in trace.graphs[found.graph].nodes}  # type: ignore[index]
    return [(nodes[s.node], [_value(g.values) for g in s.grad_outputs if g],
             [(_value(g.values), nodes[g.to]) for g in s.grad_inputs if g and g.to])
            for s in found.steps]


def _leaf_grads(trace: Trace, call: int) -> dict[str, Any]:
    """The .grad backward call `call` wrote, by leaf (`critic.weight`), as the lessons cite
    them."""
    (found,) = [c for c in trace.backward if c.call == call]
    graph = trace.graphs[found.graph]  # type: ignore[index]
    leaves = {n.id: n.label.split("\n")[0] for n in graph.nodes}
    return {leaves[g.leaf]: _value(g.grad.values) for g in found.leaf_grads if g.grad}


def _critic(code: str) -> tuple[torch.Tensor, torch.Tensor]:
    """critic.weight.grad in plain PyTorch from the scores alone and from the penalty alone:
    the program with its loss cut to one part or the other."""
    parts = []
    for loss in ("loss = critic(fake).mean() - critic(real).mean()\n",
                 "loss = 10 * penalty\n"):
        cut = code.replace("loss = critic(fake).mean() - critic(real).mean() + 10 * penalty\n",
                           loss)
        assert cut != code
        parts.append(_plain(cut, torch.get_num_threads())[1]["critic"].weight.grad[0])
    return parts[0], parts[1]


def test_the_gradient_penalty_lesson_cites_what_its_run_shows(
        runs: dict[tuple[str, str], Trace]) -> None:
    key = "gradient-penalty"
    lesson, code, trace = lessons.by_key(key), lesson_code(key), runs[key, "en"]
    assert lesson.page == lessons.BACKWARD
    first, penalty, loss, backward = (_line(code, s) for s in (
        "g, = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)",
        "penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()",
        "loss = critic(fake).mean() - critic(real).mean() + 10 * penalty", "loss.backward()"))
    _cites_lines(lesson, first, penalty, loss, backward)
    assert "critic.weight.copy_(torch.tensor([[0.9, 1.2]]))" in code
    end = trace.variables
    assert _value(end["g"].values) == [["0.9", "1.2"], ["0.9", "1.2"]]
    assert [_number(n) for n in torch.tensor(end["g"].values).norm(2, dim=1).tolist()] == [
        "1.5", "1.5"]
    assert _value(end["penalty"].values) == "0.25" and _value(end["loss"].values) == "-1.85"
    _cites(lesson, "10", "0.9", "1.2", "1.5", "1", "0.25", "-1.85")

    # Line 14: AddmmBackward0's formula, grad · (Wᵀ)ᵀ, as 2 nodes of order 2, made in call 1.
    graph = _graph(trace, _at(trace, first))
    assert orders(graph) == {1: 2, 2: 2}
    two = _of_order(graph, 2)
    assert _names(two) == Counter(MmBackward0=1, TBackward0=1)
    makers = {s.node: s.name for c in trace.backward[:1] for s in c.steps}
    assert {(makers[n.made_by], n.made_in) for n in two} == {  # type: ignore[index]
        ("AddmmBackward0", 1)}
    assert order_fill(2)[1] == "violet"
    for lang, word in (("en", "violet"), ("zh", "紫色")):
        assert word in _said(lesson, lang), lang
    _cites(lesson, "2")

    # Line 17, call #2: the scores' branches and the penalty's, through order 2, meet at
    # critic.weight's AccumulateGrad.
    (call,) = [c for c in trace.backward if c.call == 2]
    assert call.kind == "backward" and len(trace.backward) == 2
    steps = _ran(trace, 2)

    def sent(name: str, order: int | None = None) -> list[tuple[Any, str, int | None]]:
        return [(value, to.name or to.label.split("\n")[0], to.order)
                for node, _, out in steps if node.name == name and node.order == order
                for value, to in out]

    def received(name: str, order: int | None = None) -> list[Any]:
        return [got for node, got, _ in steps if node.name == name and node.order == order]

    assert ["10"] in received("MeanBackward0")
    assert sent("LinalgVectorNormBackward0") == [([["3", "4"], ["3", "4"]], "MmBackward0", 2)]
    assert sent("MmBackward0", 2) == [([["6", "8"]], "TBackward0", 2)]
    assert sent("TBackward0", 2) == [([["6"], ["8"]], "TBackward0", None)]
    weight = sorted(value for value, to, _ in sent("TBackward0") if to == "AccumulateGrad")
    assert weight == [[["-2", "-3"]], [["0.5", "0.5"]], [["6", "8"]]]
    bias = sorted(value for value, to, _ in sent("AddmmBackward0") if to == "AccumulateGrad")
    assert bias == [["-1"], ["1"]]
    sums = {node.id: got for node, got, _ in steps if node.name == "AccumulateGrad"}
    assert _leaf_grads(trace, 2) == {"critic.weight": [["4.5", "5.5"]], "critic.bias": ["0"]}
    assert len(sums) == 2 and [["0"]] in sums.values() and [[["4.5", "5.5"]]] in sums.values()
    scores, penalized = _critic(code)
    assert [_number(v) for v in scores.tolist()] == ["-1.5", "-2.5"]
    assert [_number(v) for v in penalized.tolist()] == ["6", "8"]
    _cites(lesson, "3", "4", "6", "8", "0.5", "-2", "-3", "-1", "4.5", "5.5", "-1.5", "-2.5",
           "0")
    for lang in LANGUAGES:
        assert "#2" in _said(lesson, lang), lang


def test_without_create_graph_the_penalty_silently_stops_training_the_critic(
        pool: WorkerPool) -> None:
    """What the lesson asks the learner to try: create_graph=True taken out of line 14."""
    code = lesson_code("gradient-penalty")
    cut = code.replace(", create_graph=True)", ")")
    assert cut != code
    trace = pool.run(cut)
    assert trace.ok, trace.error
    (call,) = trace.backward[1:]
    assert _leaf_grads(trace, call.call)["critic.weight"] == [["-1.5", "-2.5"]]
    assert trace.variables["g"].grad_fn is None and trace.variables["penalty"].grad_fn is None
