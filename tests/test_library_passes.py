"""Backward passes library functions run for a program (torch.func's transforms,
torch.autograd.functional, gradcheck): each place's graph is drawn, with the transforms around
it and their levels, on the Graph page; the program sees nothing of it, and a run that makes
many keeps a bounded few."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
import torch

from explorer.content.i18n import text
from explorer.record.execute import execute
from explorer.record.thin import fitted
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.check import BadResult, read_data
from explorer.trace.notes import english
from explorer.trace.schema import MAX_LIBRARY, Graph
from explorer.trace.wire import message, parts
from explorer.views.library import label, said
from tests.conftest import graph_page_ran, graph_viewer
from tests.forged import forged

TRANSFORMS = """import torch
from torch.func import grad, hessian, jacrev, vjp, vmap

x = torch.tensor([1.0, 2.0, 3.0])


def f(x):
    return (x.sin() * x).sum()


g = grad(f)(x)
per_sample = vmap(grad(f))(torch.arange(6.0).reshape(2, 3))
J = jacrev(torch.sin)(x)
H = hessian(f)(x)
d3 = grad(grad(grad(lambda t: t ** 3)))(torch.tensor(2.0))
out, pull = vjp(torch.sin, x)
(v,) = pull(torch.ones(3))
for i in range(5):
    g = grad(f)(x + i)
print(g, per_sample, J, H, d3, v)
"""
# The program's hooks, inside a transform and beside it, and autograd.functional's passes.
HOOKED = """import torch
from torch.func import grad

def f(x):
    y = x.exp()
    y.register_hook(lambda g: print("hook at level", g.sum().item()))
    return (y * x).sum()

x = torch.tensor([0.5, -1.0])
print(grad(f)(x), grad(grad(lambda t: f(t) * 1.0 if t.dim() == 0 else f(t)))(x[0]))
H = torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
hv = torch.autograd.functional.hvp(lambda t: (t.sin() * t).sum(), x, torch.ones(2))
print(H, hv)
"""


def _line(code: str, text: str) -> int:
    """The line of `code` where `text` is first written."""
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def _ops(trace: Trace, index: int) -> set[str]:
    graph: Graph = trace.graphs[trace.library[index].graph]
    return {n.name for n in graph.nodes if n.kind == "backward"}


def _plain(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        torch.manual_seed(0)
        exec(compile(code, "<plain>", "exec"), {})  # noqa: S102
    return out.getvalue()


def test_each_place_a_transform_ran_backward_is_drawn_with_its_levels() -> None:
    trace = execute(TRANSFORMS)
    assert trace.ok, trace.error
    seen = [(p.line, p.called, [(w.transform, w.level) for w in p.within], p.level, p.passes)
            for p in trace.library]
    at = {text: _line(TRANSFORMS, text) for text in (
        "g = grad(f)(x)", "vmap(grad", "jacrev(", "hessian(", "d3 =", "pull(", "x + i")}
    assert seen == [
        (at["g = grad(f)(x)"], "grad", [("grad", 1)], 1, 1),
        (at["vmap(grad"], "vmap", [("vmap", 1), ("grad", 2)], 2, 1),
        # jacrev's vjp recorded f, then ran backward inside its vmap over the basis: that
        # level had ended; hessian is jacfwd over jacrev
        (at["jacrev("], "jacrev", [("vmap", 1)], None, 1),
        (at["hessian("], "jacfwd", [("vmap", 1), ("jvp", 2), ("vmap", 3)], None, 1),
        (at["d3 ="], "grad", [("grad", 1), ("grad", 2), ("grad", 3)], 3, 1),
        (at["d3 ="], "grad", [("grad", 1), ("grad", 2)], 2, 1),
        (at["d3 ="], "grad", [("grad", 1)], 1, 1),
        (at["pull("], "vjp", [], None, 1),
        (at["x + i"], "grad", [("grad", 1)], 1, 5),  # the loop's five, drawn once
    ]
    assert _ops(trace, 0) == {"SumBackward0", "MulBackward0", "SinBackward0", "AccumulateGrad"}
    # the innermost level records t ** 3; the level around it the ops of its backward
    assert _ops(trace, 4) == {"PowBackward0", "AccumulateGrad"}
    assert {"MulBackward1", "PowBackward0"} <= _ops(trace, 5)
    # inside vmap the function sees one sample: its input is (3), not the batch's (2, 3)
    vmapped = trace.graphs[trace.library[1].graph]
    assert [n.shape for n in vmapped.nodes if n.names == ["inputs"]] == [[3]]
    assert trace.stdout == _plain(TRANSFORMS)
    assert any("The Graph page draws the graph they ran through" in n for n in english(trace.notes))


def test_the_program_sees_the_same_hooks_and_values_as_in_plain_pytorch() -> None:
    trace = execute(HOOKED)
    assert trace.ok, trace.error
    assert trace.stdout == _plain(HOOKED)
    assert "hook at level" in trace.stdout
    called = {p.called for p in trace.library}
    assert {"grad", "hessian", "hvp"} <= called or {"grad", "jacobian", "hvp"} <= called, called
    assert all(not p.within and p.level is None for p in trace.library
               if p.called != "grad")


def test_gradcheck_and_a_long_loop_are_counted_at_one_place() -> None:
    code = ("import torch\nfrom torch.func import grad, vmap\n"
            "x = torch.randn(3, dtype=torch.double, requires_grad=True)\n"
            "ok = torch.autograd.gradcheck(torch.sin, (x,))\n"
            "for i in range(200):\n"
            "    per_sample = vmap(grad(lambda t: (t * t).sum()))(torch.ones(4, 2) * i)\n")
    trace = execute(code, limits=Limits(line_steps=0))
    assert trace.ok, trace.error
    check, loop = trace.library
    assert (check.line, check.called, check.within, check.level) == (4, "gradcheck", [], None)
    assert check.passes >= 3  # one per output element, at least
    assert (loop.line, loop.called, loop.passes) == (6, "vmap", 200)


def test_past_the_first_places_passes_are_counted_not_drawn() -> None:
    more = 3
    code = "import torch\nfrom torch.func import grad\nx = torch.tensor(1.5)\n" + "".join(
        f"d{i} = grad(lambda t: t ** {i + 2})(x)\n" for i in range(MAX_LIBRARY + more))
    trace = execute(code)
    assert trace.ok, trace.error
    assert len(trace.library) == MAX_LIBRARY
    assert [p.line for p in trace.library] == list(range(4, 4 + MAX_LIBRARY))
    assert len({p.graph for p in trace.library}) == MAX_LIBRARY
    assert f"{more} of them are not drawn: they ran past the first {MAX_LIBRARY} places, " \
        "or had no graph to draw." in english(trace.notes), trace.notes
    assert trace.variables[f"d{MAX_LIBRARY + more - 1}"].values == pytest.approx(
        (MAX_LIBRARY + more + 1) * 1.5 ** (MAX_LIBRARY + more))


def test_a_pass_survives_the_trace_crossing_the_wire_and_thinning() -> None:
    trace = execute(TRANSFORMS)
    again = Trace.from_json(trace.to_json())
    assert again.library == trace.library
    assert [again.graphs[p.graph] for p in again.library] == [
        trace.graphs[p.graph] for p in trace.library]
    trace.steps[:-1] = []  # the graphs no step shows go; the library's stay, renumbered
    before = [trace.graphs[p.graph] for p in trace.library]
    trace.keep_shown_graphs()
    assert [trace.graphs[p.graph] for p in trace.library] == before


def test_thinning_the_steps_graphs_keeps_each_pass_with_its_own() -> None:
    code = ("import torch\nfrom torch.func import grad\n"
            "w = torch.ones(2, requires_grad=True)\n"
            + "".join(f"y{i} = (w * {i}){'.cos()' * 40}.sum()\n" for i in range(6))
            + "g = grad(lambda t: t.sin().sum())(w.detach())\n"
            + "".join(f"z{i} = (w + {i}){'.tanh()' * 40}.sum()\n" for i in range(6)))
    trace = execute(code)
    sent = Trace.from_json(fitted(trace, len(message(parts(trace))) // 2))
    assert any("draw no graph" in note for note in english(sent.notes)), sent.notes
    (made,) = sent.library
    assert {n.name for n in sent.graphs[made.graph].nodes if n.kind == "backward"} == {
        "SumBackward0", "SinBackward0", "AccumulateGrad"}


@pytest.mark.parametrize("bad", [
    {"graph": 10_000},  # no such graph
    {"within": [{"transform": "eval", "level": 1}]},  # not one of functorch's transforms
    {"level": 0}, {"passes": 0}, {"line": 0},
])
def test_a_forged_pass_is_refused(bad: dict[str, object]) -> None:
    data = json.loads(execute(TRANSFORMS).to_json())
    fields = {k: data[k] for k in ("steps", "graphs", "variables")}
    made = data["library"][0] | bad
    with pytest.raises(BadResult):
        read_data(forged(**fields, library=[made]), Limits())
    with pytest.raises(BadResult):  # more than a run keeps
        read_data(forged(**fields, library=[data["library"][0]] * (MAX_LIBRARY + 1)), Limits())
    answer = read_data(forged(**fields, library=[data["library"][0] | {"called": "g" * 5000}]),
                       Limits())
    assert len(answer.library[0].called) == 2_000


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_each_pass_was_is_said(lang: str) -> None:
    trace = execute(TRANSFORMS)
    vmapped, inner = trace.library[1], trace.library[4]
    words = {"en": ("line 7", "level 2", "grad", "(level 2)", "one sample's", "second derivative"),
             "zh": ("第 7 行", "第 2 层", "grad", "（第 2 层）", "一个样本", "二阶导数")}[lang]
    assert label(vmapped, lang) == " · ".join((words[0].replace("7", str(vmapped.line)), "vmap",
                                               words[1]))
    assert words[3] in said(vmapped, lang) and words[4] in said(vmapped, lang)
    assert words[5] not in said(vmapped, lang)  # one grad level: nothing nested to explain
    ended = text("library_ended", lang)
    assert ended not in said(vmapped, lang) and ended in said(trace.library[2], lang)
    assert words[5] in said(inner, lang)
    loop = trace.library[-1]
    assert {"en": "5 times", "zh": "5 次"}[lang] in said(loop, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graph_page_draws_each_pass_chosen(lang: str) -> None:
    at = graph_page_ran(TRANSFORMS, lang)
    assert not at.exception
    choice = at.selectbox(key="graph.library")
    assert len(choice.options) == 9
    picture = _drawn(graph_viewer(at, "graph.library")[0])
    assert "SinBackward0" in picture and "PowBackward0" not in picture
    assert choice.value == 0  # the last step, line 20, ran none: the first is shown
    choice.set_value(4).run()  # the innermost level of grad(grad(grad(t ** 3)))
    assert not at.exception
    picture = _drawn(graph_viewer(at, "graph.library")[0])
    assert "PowBackward0" in picture and "SinBackward0" not in picture
    assert at.query_params["library"] == "4"  # a link opens it again
    said_here = " ".join(m.value for m in at.markdown)
    assert {"en": "Its backward pass ran inside", "zh": "它的反向传播在"}[lang] in said_here
    # the program's own tensors require no grad: its graph is empty, and the page says where
    # the graphs are
    assert [i.value for i in at.info] == [text("no_graph_library", lang)]
    # stepping to a line that ran a pass shows that pass: vjp's function, called on line 17
    at.button(key="graph.step.first").click().run()
    after = text("after_line", lang, line=_line(TRANSFORMS, "(v,) = pull"))
    for _ in range(30):
        if any(after in m.value for m in at.markdown):
            break
        at.button(key="graph.step.forward").click().run()
    assert at.selectbox(key="graph.library").value == 7


def _drawn(picture: str) -> str:
    """The texts an SVG draws."""
    return " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", picture))


def test_the_step_that_ran_a_pass_points_to_its_graph() -> None:
    code = ("import torch\nw = torch.ones(2, requires_grad=True)\n"
            "vg = torch.func.vmap(torch.func.grad(lambda w, x: (w @ x) ** 2), in_dims=(None, 0))"
            "(w, torch.ones(3, 2))\ny = w * 2\n")
    at = graph_page_ran(code)
    assert not at.exception
    here = text("library_here", "en", line=3)
    assert here not in [c.value for c in at.caption]  # the last step, line 4, ran none
    at.button(key="graph.step.back").click().run()
    assert here in [c.value for c in at.caption]
    assert at.selectbox(key="graph.library").value == 0  # the pass of that line, chosen
    assert "vg" in _drawn(graph_viewer(at)[0])  # what grad returned keeps a graph to w
