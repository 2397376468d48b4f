"""The lesson on one inner step of MAML: its program runs in the explorer as in plain PyTorch,
the inner grad with create_graph=True makes the nodes of order 2 its text names, the replay of
outer_loss.backward() goes through them to w, the gap between MAML's and first-order MAML's
w.grad is the second-order term computed another way, and every value and line the text cites
is the run's own, the same in English and in Chinese."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
import torch

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES, text
from explorer.pool.worker import WorkerPool
from explorer.trace import Trace
from explorer.trace.graph_view import order_fill, orders
from tests.test_higher_order_lessons import (
    _at,
    _graph,
    _leaf_grads,
    _names,
    _of_order,
    _saved_as,
    _steps,
    _value,
)
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

KEY = "maml-inner-step"
INNER = "g, = torch.autograd.grad(inner_loss, w, create_graph=True)"


@pytest.fixture(scope="module")
def runs(pool: WorkerPool) -> dict[str, Trace]:
    """The lesson's program run as the app runs it, by language."""
    return {lang: trace for (_, lang), trace in run_lessons(pool, (KEY,)).items()}


def _path(trace: Trace, call: int) -> list[tuple[str, int | None, str | None, int | None]]:
    """Each engine step of backward call `call`: its node's name, derivative order, and the
    name of the node whose backward made it, in which call."""
    (found,) = [c for c in trace.backward if c.call == call]
    nodes = {n.id: n for n in trace.graphs[found.graph].nodes}  # type: ignore[index]
    steps = []
    for s in found.steps:
        node = nodes[s.node]  # type: ignore[index]
        maker = nodes[node.made_by].name if node.made_by else None
        steps.append((s.name or "", node.order, maker, node.made_in))
    return steps


def _sent_to(trace: Trace, call: int, index: int) -> list[tuple[Any, str]]:
    """What step `index` of backward call `call` sent, each with the name of its node."""
    (found,) = [c for c in trace.backward if c.call == call]
    nodes = {n.id: n for n in trace.graphs[found.graph].nodes}  # type: ignore[index]
    return [(_value(g.values), nodes[g.to].name or "")  # type: ignore[index]
            for g in found.steps[index].grad_inputs if g and g.to]


def test_the_maml_lessons_program_runs_alike_in_every_language(
        runs: dict[str, Trace]) -> None:
    for lang in LANGUAGES:
        assert runs[lang].ok, (lang, runs[lang].error)
    en, zh = (runs[lang] for lang in LANGUAGES)
    assert [s.line for s in en.steps] == [s.line for s in zh.steps]
    assert en.stdout == zh.stdout
    assert [_steps(en, c.call) for c in en.backward] == [_steps(zh, c.call) for c in zh.backward]
    assert [_path(en, c.call) for c in en.backward] == [_path(zh, c.call) for c in zh.backward]


def test_the_maml_lessons_program_gives_what_plain_pytorch_gives(runs: dict[str, Trace]) -> None:
    trace = runs["en"]
    printed, namespace = _plain(lesson_code(KEY), trace.threads)
    assert trace.stdout == printed
    assert printed.splitlines() == ["tensor(-6.4000)", "tensor(-8.)", "tensor(1.6000)"]
    tensors = [name for name, info in trace.variables.items() if info.kind == "tensor"]
    assert {"w", "g", "w_fast", "maml_grad", "first_order_grad"} <= set(tensors)
    for name in tensors:
        plain = namespace[name].detach().flatten().tolist()
        assert _flat(trace.variables[name].values) == pytest.approx(plain, rel=1e-6), name
        grad = namespace[name].grad if namespace[name].is_leaf else None
        assert (trace.variables[name].grad is None) == (grad is None), name
        if grad is not None:
            assert _flat(trace.variables[name].grad) == pytest.approx(grad.flatten().tolist())


def test_the_maml_lesson_cites_the_same_numbers_in_english_and_chinese() -> None:
    lesson = lessons.by_key(KEY)
    en, zh = (_numbers(_said(lesson, lang)) for lang in LANGUAGES)
    assert en == zh, (en - zh, zh - en)


def _second_order_term(end: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """From the run's own data, without its program: the term that MAML's gradient has and
    first-order MAML's has not, -alpha · d²inner/dw² · d outer/dw_fast, computed with
    torch.autograd.functional; and MAML's whole gradient by torch.func."""
    xs, ys, xq, yq = (torch.tensor(end[name].values) for name in (
        "x_support", "y_support", "x_query", "y_query"))
    alpha, w = end["alpha"].values, torch.tensor(end["w"].values)

    def inner(weight: torch.Tensor) -> torch.Tensor:
        return ((weight * xs - ys) ** 2).mean()

    def outer(weight: torch.Tensor) -> torch.Tensor:
        return ((weight * xq - yq) ** 2).mean()

    def meta(weight: torch.Tensor) -> torch.Tensor:
        return outer(weight - alpha * torch.func.grad(inner)(weight))

    hessian = torch.autograd.functional.hessian(inner, w)
    fast = w - alpha * torch.autograd.functional.jacobian(inner, w)
    query = torch.autograd.functional.jacobian(outer, fast)
    assert _number(hessian.item()) == _number(2 * (xs ** 2).mean().item()) == "2"
    assert _number(query.item()) == "-8"
    return -alpha * hessian * query, torch.func.grad(meta)(w)


def test_the_gap_between_maml_and_first_order_maml_is_the_second_order_term(
        runs: dict[str, Trace]) -> None:
    end = runs["en"].variables
    maml, first = (end[name].values for name in ("maml_grad", "first_order_grad"))
    assert first == end["w"].grad  # w.grad at the end: first-order MAML's
    term, whole = _second_order_term(end)
    assert maml - first == pytest.approx(term.item(), rel=1e-6)
    assert maml == pytest.approx(whole.item(), rel=1e-6)
    assert [_number(v) for v in (maml, first, term.item())] == ["-6.4", "-8", "1.6"]
    # The term is what reached w through the nodes of order 2 in call #2.
    (call,) = [c for c in runs["en"].backward if c.call == 2]
    *_, last = call.steps
    assert last.name == "AccumulateGrad"
    assert [_number(v) for v in _flat(last.grad_outputs[0].values)] == ["-6.4"]  # type: ignore[union-attr]


def test_the_maml_lesson_cites_what_its_run_shows(runs: dict[str, Trace]) -> None:
    lesson, code, trace = lessons.by_key(KEY), lesson_code(KEY), runs["en"]
    assert lesson.page == lessons.BACKWARD
    inner, first, fast, outer, backward, cleared, detached, again = (_line(code, s) for s in (
        "inner_loss = ((w * x_support - y_support) ** 2).mean()", INNER,
        "w_fast = w - alpha * g", "outer_loss = ((w_fast * x_query - y_query) ** 2).mean()",
        "outer_loss.backward()", "w.grad = None", "w_first = w - alpha * g.detach()",
        "first_loss.backward()"))
    printed = [_line(code, f"print({name})") for name in (
        "maml_grad", "first_order_grad", "maml_grad - first_order_grad")]
    _cites_lines(lesson, inner, first, fast, outer, backward, cleared, again, *printed)
    assert cleared < detached < again
    for lang, span in (("en", f"Lines {cleared}–{again}"), ("zh", f"第 {cleared}–{again} 行")):
        assert span in _said(lesson, lang), lang

    # The task, the model and the step size, as the program sets them.
    end = trace.variables
    assert _value(end["x_support"].values) == ["-1", "1"]
    assert _value(end["y_support"].values) == ["-2", "2"]
    assert _value(end["x_query"].values) == ["1", "3"]
    assert _value(end["y_query"].values) == ["2", "6"]
    assert end["alpha"].values == 0.1
    assert "w = torch.tensor(1.0, requires_grad=True)" in code
    _cites(lesson, "-1", "1", "3", "2", "0.1")

    # Lines 13-16: the inner loss, g, w_fast and the outer loss.
    step = _at(trace, inner)
    assert _value(step.variables["inner_loss"].values) == "1"
    step = _at(trace, first)
    assert _value(step.variables["g"].values) == "-2"
    assert _value(end["w_fast"].values) == _value(end["w_first"].values) == "1.2"
    assert _value(end["outer_loss"].values) == _value(end["first_loss"].values) == "3.2"
    xs, ys, xq, yq = (torch.tensor(end[n].values) for n in (
        "x_support", "y_support", "x_query", "y_query"))
    assert [_number(v) for v in (1.0 * xs - ys).tolist()] == ["1", "-1"]
    assert [_number(v) for v in (torch.tensor(end["w_fast"].values) * xq - yq).tolist()] == [
        "-0.8", "-2.4"]
    _cites(lesson, "-2", "1.2", "-0.8", "-2.4", "3.2")

    # Line 14: 5 nodes of order 2 beside the inner loss's 5, made in call 1 by its
    # PowBackward0 (MulBackward0, MulBackward1, PowBackward0) and MulBackward0 (MulBackward0,
    # SumBackward0); the Autograd graph page's caption, as the text quotes it.
    graph = _graph(trace, _at(trace, first))
    assert orders(graph) == {1: 5, 2: 5}
    two = _of_order(graph, 2)
    assert _names(two) == Counter(MulBackward0=2, MulBackward1=1, PowBackward0=1, SumBackward0=1)
    makers = {s.node: s.name for s in trace.backward[0].steps}
    made = Counter((n.name, makers[n.made_by], n.made_in) for n in two)  # type: ignore[index]
    assert made == Counter({("MulBackward0", "PowBackward0", 1): 1,
                            ("MulBackward1", "PowBackward0", 1): 1,
                            ("PowBackward0", "PowBackward0", 1): 1,
                            ("MulBackward0", "MulBackward0", 1): 1,
                            ("SumBackward0", "MulBackward0", 1): 1})
    saved = {n.name: n.saved for n in two}
    assert saved["MulBackward1"]["other"] == "2.0" and saved["PowBackward0"]["exponent"] == "1.0"
    assert [(n.name, n.order) for n in _saved_as(graph, "∂inner_loss/∂(PowBackward0)")] == [
        ("MulBackward0", 2)]
    assert end["g"].grad_fn == "SumBackward0"  # g's graph's top node
    for lang in LANGUAGES:
        sizes = [text("order_nodes", lang, order=text("order_forward", lang), nodes=5),
                 text("order_nodes", lang, order=text("order_label", lang, order=2), nodes=5)]
        assert f"（{' · '.join(sizes)}）" in lesson.text[lang] or (
            f"({' · '.join(sizes)})" in lesson.text[lang]), lang
        for key in ("graph_page", "backward_page", "node_details", "derivative_order",
                    "backward_call", "roots"):
            assert text(key, lang) in _said(lesson, lang), (lang, key)
        assert text("order_label", lang, order=2) in lesson.text[lang], lang
        quoted = "Derivative order 2" if lang == "en" else "求导阶数 2"
        assert text("made_by_step", lang, order=2, call=1, maker="PowBackward0").startswith(
            quoted) and quoted in lesson.look[lang], lang
    assert order_fill(2)[1] == "violet"
    for lang, word in (("en", "violet"), ("zh", "紫色")):
        assert word in _said(lesson, lang), lang
    _cites(lesson, "5", "2", "1")

    # Call #1, the inner grad: PowBackward0 receives the [0.5, 0.5] that the order-2
    # MulBackward0 saves.
    assert [(c.call, c.kind) for c in trace.backward] == [
        (1, "grad"), (2, "backward"), (3, "backward")]
    assert _steps(trace, 1) == [
        ("MeanBackward0", ["1"], [["0.5", "0.5"]]),
        ("PowBackward0", [["0.5", "0.5"]], [["1", "-1"]]),
        ("SubBackward0", [["1", "-1"]], [["1", "-1"]]),
        ("MulBackward0", [["1", "-1"]], ["-2"])]

    # Call #2, outer_loss.backward() on line 17: w_fast's SubBackward0 splits -8; the 8 goes
    # into g's graph, through its 5 nodes of order 2, and back out to w as 1.6.
    plain = (None, None, None)
    assert _path(trace, 2) == [
        ("MeanBackward0", *plain), ("PowBackward0", *plain), ("SubBackward0", *plain),
        ("MulBackward0", *plain), ("SubBackward0", *plain), ("MulBackward0", *plain),
        ("SumBackward0", 2, "MulBackward0", 1), ("MulBackward0", 2, "MulBackward0", 1),
        ("MulBackward0", 2, "PowBackward0", 1), ("MulBackward1", 2, "PowBackward0", 1),
        ("PowBackward0", 2, "PowBackward0", 1), ("SubBackward0", *plain),
        ("MulBackward0", *plain), ("AccumulateGrad", *plain)]
    assert _steps(trace, 2) == [
        ("MeanBackward0", ["1"], [["0.5", "0.5"]]),
        ("PowBackward0", [["0.5", "0.5"]], [["-0.8", "-2.4"]]),
        ("SubBackward0", [["-0.8", "-2.4"]], [["-0.8", "-2.4"]]),
        ("MulBackward0", [["-0.8", "-2.4"]], ["-8"]),
        ("SubBackward0", ["-8"], ["-8", "8"]),
        ("MulBackward0", ["8"], ["0.8"]),
        ("SumBackward0", ["0.8"], [["0.8", "0.8"]]),
        ("MulBackward0", [["0.8", "0.8"]], [["-0.8", "0.8"]]),
        ("MulBackward0", [["-0.8", "0.8"]], [["-0.4", "0.4"]]),
        ("MulBackward1", [["-0.4", "0.4"]], [["-0.8", "0.8"]]),
        ("PowBackward0", [["-0.8", "0.8"]], [["-0.8", "0.8"]]),
        ("SubBackward0", [["-0.8", "0.8"]], [["-0.8", "0.8"]]),
        ("MulBackward0", [["-0.8", "0.8"]], ["1.6"]),
        ("AccumulateGrad", ["-6.4"], [])]
    assert _sent_to(trace, 2, 4) == [("-8", "AccumulateGrad"), ("8", "MulBackward0")]
    assert _sent_to(trace, 2, 12) == [("1.6", "AccumulateGrad")]
    # The last SubBackward0 and MulBackward0 are the inner loss's own, which call #1 ran.
    (call,) = [c for c in trace.backward if c.call == 2]
    assert [s.node for s in call.steps[11:13]] == [s.node for s in trace.backward[0].steps[2:]]
    # The order-2 MulBackward0 of PowBackward0 is the one that saves [0.5, 0.5].
    nodes = {n.id: n for n in trace.graphs[call.graph].nodes}  # type: ignore[index]
    keeper = nodes[call.steps[8].node]  # type: ignore[index]
    assert keeper.id in {n.id for n in _saved_as(graph, "∂inner_loss/∂(PowBackward0)")}
    assert _leaf_grads(trace, 2) == {"w": "-6.4"}
    _cites(lesson, "0.5", "-8", "8", "0.8", "-0.4", "0.4", "1.6", "-6.4")
    for lang in LANGUAGES:
        assert all(f"#{c.call}" in _said(lesson, lang) for c in trace.backward), lang
        assert "#2 (backward)" in lesson.look[lang], lang

    # Call #3, first-order MAML: g.detach() leaves g's graph out; only SubBackward0 reaches w.
    assert all(order is None for _, order, _, _ in _path(trace, 3))
    assert [name for name, *_ in _path(trace, 3)] == [
        "MeanBackward0", "PowBackward0", "SubBackward0", "MulBackward0", "SubBackward0",
        "AccumulateGrad"]
    assert _leaf_grads(trace, 3) == {"w": "-8"}
    graph = _graph(trace, _at(trace, detached))
    assert orders(graph)[2] == 5  # g's graph is still there, but w_first is not made of it

    # The closing sum: -8 · (1 − 0.1 · 2) = -8 · 0.8 = -6.4, the term -8 · (−0.1 · 2) = 1.6.
    assert _number(-8 * (1 - 0.1 * 2)) == "-6.4" and _number(-8 * (-0.1 * 2)) == "1.6"
    for lang in LANGUAGES:
        words = _said(lesson, lang)
        assert "-8 · (1 − 0.1 · 2) = -8 · 0.8 = -6.4" in words, lang
        assert "-8 · (−0.1 · 2) = 1.6" in words, lang
        assert "2 · mean(x²) = 2" in words, lang
        assert re.search(r"1 − 0\.1 · \(-2\) = 1\.2", words), lang


def test_without_create_graph_maml_is_first_order_maml(pool: WorkerPool) -> None:
    """What the lesson says g.detach() stands for: line 14 without create_graph=True."""
    code = lesson_code(KEY)
    cut = code.replace(INNER, INNER.replace(", create_graph=True", ""))
    assert cut != code
    trace = pool.run(cut)
    assert trace.ok, trace.error
    assert trace.variables["g"].grad_fn is None
    assert all(not orders(_graph(trace, s)) for s in trace.steps if s.graph is not None)
    assert _leaf_grads(trace, 2) == _leaf_grads(trace, 3) == {"w": "-8"}
    assert trace.stdout.splitlines() == ["tensor(-8.)", "tensor(-8.)", "tensor(0.)"]
