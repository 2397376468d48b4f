"""A hook of the program's that changes a gradient between two nodes is told where it acted:
the edges carried one gradient, the node received another (explorer/views/hooked.py); the
Backward page says so under what the node received and writes `hook → …` at it on the
picture. Gradients that only add up where edges meet, or are NaN, are not taken for it."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.trace import Trace
from explorer.ui.backward import HEIGHT
from explorer.views.animation import figure
from explorer.views.export import animation_view
from explorer.views.hooked import changed
from explorer.views.numbers import flat
from explorer.views.render import positions, svg

DOUBLED = ("x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * 2\n"
           "y.retain_grad()\ny.register_hook(lambda g: g * 2)\nz = (y ** 2).sum()\n"
           "z.backward()\n")


def _changed(trace: Trace) -> list[tuple[str, list[list[float]], list[float]]]:
    """Each step said to be changed by a hook: its node, what its edges carried, what it got."""
    call = trace.backward[-1]
    return [(call.steps[i].name, [flat(g.values) for g in carried],
             flat(call.steps[i].grad_outputs[0].values))
            for i, carried in changed(call).items()]


def test_a_tensor_hook_between_two_nodes_is_told_where_it_acted(pool: WorkerPool) -> None:
    trace = pool.run(DOUBLED)
    assert _changed(trace) == [("MulBackward0", [[4.0, 8.0, 12.0]], [8.0, 16.0, 24.0])]
    assert trace.variables["x"].grad == [16.0, 32.0, 48.0]  # what plain PyTorch has


@pytest.mark.parametrize(("hook", "changed_at"), [
    ("x.register_hook(lambda g: g + 1)", [("AccumulateGrad", [[3.0, 3.0]], [4.0, 4.0])]),
    ("y.grad_fn.register_prehook(lambda go: (go[0] * 3,))",
     [("MulBackward0", [[1.0, 1.0]], [3.0, 3.0])]),
    ("y.register_hook(lambda g: print(g))", []),  # returns nothing: changes nothing
    ("y.retain_grad()", []),
])
def test_hooks_that_change_a_gradient_are_told_and_no_others(
        hook: str, changed_at: list, pool: WorkerPool) -> None:
    trace = pool.run("x = torch.tensor([2.0, 2.0], requires_grad=True)\ny = x * 3\n"
                     f"{hook}\ny.sum().backward()\n")
    assert trace.ok, trace.error
    assert _changed(trace) == changed_at


def test_where_a_pass_starts_the_v_given_is_what_was_carried(pool: WorkerPool) -> None:
    trace = pool.run("x = torch.ones(2, 2, requires_grad=True)\ny = x * 5\n"
                     "y.register_hook(lambda g: -g)\ny.backward(torch.tensor([[1.0, 2.0], "
                     "[3.0, 4.0]]))\n")
    assert _changed(trace) == [("MulBackward0", [[1.0, 2.0, 3.0, 4.0]], [-1.0, -2.0, -3.0, -4.0])]


@pytest.mark.parametrize("code", [
    "x = torch.tensor([0.0, 1.0], requires_grad=True)\ny = x * x + x.sqrt() * x.sqrt()\n"
    "y.sum().backward()\n",  # edges meet, one carrying NaN and infinities
    "x = torch.tensor([1.5, -2.0], requires_grad=True)\ny = x.exp() + x.exp() + x.sin()\n"
    "y.sum().backward()\n",
    *(f"x = torch.linspace(0.1, 9.7, 40, dtype=torch.{dtype}, requires_grad=True)\n"
      "y = x.exp() * 3.1 + x.sin() * x.cos() + x.sqrt() * 1.7\ny.sum().backward()\n"
      for dtype in ("float16", "bfloat16")),  # added in half precision where edges meet
])
def test_gradients_that_only_add_up_where_edges_meet_are_not_taken_for_a_hook(
        code: str, pool: WorkerPool) -> None:
    assert _changed(pool.run(code)) == []


def test_the_picture_writes_what_the_hook_gave_at_its_node(pool: WorkerPool) -> None:
    trace = pool.run(DOUBLED)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)
    (at,) = changed(call)
    for lang in ("en", "zh"):
        chart = figure(call, layout, picture, shown.groups, at=at, numbers=True,
                       animated=False, height=HEIGHT, lang=lang)
        written = " ".join(t for d in chart.to_dict()["data"] for t in d.get("text") or []
                           if isinstance(t, str))
        written = re.sub(r"\s+", " ", written.replace("<br>", " ").replace("\u00a0", " "))
        assert f"{text('hook', lang)} → [8., 16., 24.]" in written, written


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_page_says_what_the_edges_carried_before_the_hook(lang: str) -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run().switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = DOUBLED
    at.button(key="backward.run").click().run()
    key = "backward.replay.1"  # the replay of call 1, opened at the engine's first step
    at.session_state[key] += 2  # MulBackward0, the third
    at.run()
    assert not at.exception
    said = [w.value for w in at.warning]
    assert text("received_hooked", lang, carried="`[4., 8., 12.]`") in said, said
