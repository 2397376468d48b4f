"""The training page trains whatever loop is typed in its editor (Streamlit's AppTest, real
worker runs): its loss curve and gradient norms, any iteration's backward pass, and a clear
word for a program that does not loop."""

from __future__ import annotations

import json
from statistics import fmean
from typing import Any

import pytest
from msgspec.structs import replace
from streamlit.testing.v1 import AppTest

from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.trace.schema import Graph, Node, Summary
from explorer.ui import training
from explorer.views.curves import LEAVES, Curves, curves, grad_norm_figure, loss_figure
from explorer.views.decimate import POINTS
from explorer.views.training import calls, leaf_names, starting
from tests.conftest import editor_code
from tests.plain import run_plain
from tests.test_gate import send

ADAM = """import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(32, 8), torch.randn(32, 2)
for t in range(30):
    loss = torch.nn.functional.mse_loss(model(x), y)
    print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
ONCE = "w = torch.ones(3, requires_grad=True)\nloss = (w * w).sum()\nloss.backward()\n"


def _app(lang: str = "en") -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=120)
    at.query_params["lang"] = lang
    at.switch_page("pages/7_Training.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_an_nn_sequential_model_with_adam_typed_in_the_editor_trains_and_replays() -> None:
    at = send(_app(), run=ADAM)  # typed in the editor, run with Ctrl+Enter
    code, trace = at.session_state["training.run"]
    assert code == ADAM and trace.ok and calls(trace.losses) == 30
    # The curve is the loss plain PyTorch prints, iteration by iteration.
    (plain,) = run_plain([ADAM], trace.threads)
    printed = [float(line.split()[1]) for line in plain.stdout.splitlines()]
    loss, norms = _figures(at)
    assert loss["data"][0]["x"] == list(range(1, 31)) and loss["data"][0]["y"] == printed
    assert loss["layout"]["xaxis"]["title"]["text"] == text("backward_call", "en")  # what x is
    assert at.success[0].value == text(  # the first tenth of its calls against the last
        "loss_fell", "en", first=fmean(printed[:3]), last=fmean(printed[-3:]),
        compared=text("compared_tenths", "en", count=3))
    assert {line["name"] for line in norms["data"]} == {
        f"‖model.{layer}.{kind}.grad‖" for layer in (0, 2) for kind in ("weight", "bias")}
    at.number_input(key="training.k").set_value(12).run()
    at.button(key="training.open").click().run()
    assert not at.exception
    (call,) = [c for c in at.session_state["training.pass"][1].backward if c.call == 12]
    assert call.value == printed[11]
    replay = at.get("plotly_chart")[-1].proto.spec
    assert "MseLossBackward0" in replay and "AddmmBackward0" in replay
    assert editor_code(at) == ADAM


@pytest.mark.parametrize(("lang", "code", "count"), [("en", ONCE, 1), ("zh", ONCE, 1),
                                                     ("en", "x = torch.ones(2)\n", 0)])
def test_a_program_that_does_not_loop_is_told_so(lang: str, code: str, count: int) -> None:
    at = send(_app(lang), run=code)
    assert [i.value for i in at.info] == [text("training_no_loop", lang, count=count)]
    assert not at.get("plotly_chart") and not at.number_input  # no curve, no iteration


def test_a_starting_program_fills_the_editor() -> None:
    at = _app()
    assert editor_code(at) == starting("my-relu-train", "en") == by_key("my-relu-train").code_in(
        "en")
    at.selectbox(key="training.start").set_value("module").run()
    assert editor_code(at) == starting("module", "en") and "training.run" not in at.session_state
    assert "nn.Sequential" in editor_code(at) and "# forward" in editor_code(at)
    assert "# 前向传播" in starting("module", "zh")  # each language's comments


def test_the_gradient_norms_name_a_modules_parameters() -> None:
    leaf = Node(id="t6", kind="leaf", label="model.2.bias\n (10)", names=[])
    named = Node(id="t1", kind="leaf", label="w1\n (3)", names=["w1"])
    names = leaf_names([Graph(dot=None, edges=[], nodes=[
        leaf, named, Node(id="n1", kind="backward", label="AddBackward0")])])
    assert names == {"t6": "model.2.bias"}
    losses = [Summary(call=1, kind="backward", value=2.0, grad_norms={"t6": 0.5, "w1": 0.25})]
    figure = grad_norm_figure(curves(losses, names))
    assert [line.name for line in figure.data] == ["‖model.2.bias.grad‖", "‖w1.grad‖"]
    alone = grad_norm_figure(curves([replace(losses[0], grad_norms={"w1": 0.25})]))
    assert alone.layout.showlegend and [line.name for line in alone.data] == ["‖w1.grad‖"]
    assert calls([replace(losses[0], call=1), replace(losses[0], call=40)]) == 40  # thinned:
    assert calls([]) == 0  # the last call made


SPIKE = 77_777  # the call whose loss and hidden leaf's norm jump


def _long_run(count: int = 120_000, leaves: int = 1_000) -> Trace:
    """The record of `(ws[i % 1000] * 2.0).backward()` called `count` times (a loop at the hosted
    limits), with a spike at call SPIKE in the loss and in a leaf that is not drawn alone."""
    losses = [Summary(call=i, kind="backward", value=2.0, grad_norms={f"t{i % leaves}": 2.0})
              for i in range(1, count + 1)]
    losses[SPIKE - 1] = Summary(call=SPIKE, kind="backward", value=1e6,
                                grad_norms={f"t{SPIKE % leaves}": 1e6})
    return Trace(ok=True, losses=losses)


def _points(figure: dict[str, Any]) -> int:
    return sum(len(line["x"]) for line in figure["data"])


def test_a_long_runs_curves_are_bounded_and_keep_its_spikes() -> None:
    drawn = curves(_long_run().losses)
    assert drawn.reduced and drawn.hidden == 1_000 - LEAVES and drawn.drawn <= POINTS
    loss, norms = loss_figure(drawn).data, grad_norm_figure(drawn).data
    assert len(loss[0].x) <= POINTS and (loss[0].x[0], loss[0].x[-1]) == (1, 120_000)
    assert max(loss[0].y) == 1e6 and loss[0].x[loss[0].y.index(1e6)] == SPIKE
    assert len(norms) == LEAVES + 1 and all(len(line.x) <= POINTS for line in norms)
    others = norms[-1]  # the largest norm of the leaves not drawn alone: the spike is there
    assert others.name == "the other leaves" and others.x[others.y.index(1e6)] == SPIKE


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_run_is_drawn_reduced_once_for_all_reruns(
        lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Curves:
        made.append(1)
        return curves(*args, **kwargs)

    monkeypatch.setattr(training, "curves", counted)
    at = _app(lang)
    code = "# a long loop\n"
    at.session_state["training.code"] = code
    at.session_state["training.run"] = (code, _long_run())
    for _ in range(3):
        at.run()
        assert not at.exception, at.exception
    assert len(made) == 1  # built with the run, not on each rerun
    loss, norms = _figures(at)
    assert _points(loss) <= POINTS and _points(norms) <= (LEAVES + 1) * POINTS
    assert norms["data"][-1]["name"] == text("other_leaves", lang, count=1_000 - LEAVES)
    drawn = at.session_state["training.curves"][2].drawn  # a flat stretch needs fewer
    assert drawn <= POINTS and text("curves_reduced", lang, calls=120_000, points=drawn) in [
        c.value for c in at.caption]
