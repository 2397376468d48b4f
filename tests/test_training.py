"""The training page trains whatever loop is typed in its editor (Streamlit's AppTest, real
worker runs): its loss curve and gradient norms, any iteration's backward pass, and a clear
word for a program that does not loop."""

from __future__ import annotations

import json

import pytest
from msgspec.structs import replace
from streamlit.testing.v1 import AppTest

from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.trace.schema import Graph, Node, Summary
from explorer.views.training import calls, grad_norm_figure, leaf_names, starting
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
    assert at.success[0].value == text("loss_fell", "en", first=printed[0], last=printed[-1])
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
    figure = grad_norm_figure(losses, names=names)
    assert [line.name for line in figure.data] == ["‖model.2.bias.grad‖", "‖w1.grad‖"]
    assert calls([replace(losses[0], call=1), replace(losses[0], call=40)]) == 40  # thinned:
    assert calls([]) == 0  # the last call made
