"""Predict, then see: what a step asks, how a typed answer is read and judged against the
engine's own values (explorer.views.predict), and the Backward page asking before it shows."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.record.execute import execute
from explorer.trace.schema import Gradient
from explorer.views.animation import HOVER, figure
from explorer.views.export import animation_view
from explorer.views.predict import (
    MAX_ASKED,
    MAX_QUESTIONS,
    Unreadable,
    entry,
    judge,
    questions,
    read,
    score,
    shaped,
)
from explorer.views.render import positions, svg

# x is used twice: its AccumulateGrad sums three gradients (one from the add, two from x * x).
FAN_IN = ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x\nz = (y + x).sum()\n"
          "z.backward()\n")


def _call(code: str) -> dict:
    trace = execute(code)
    assert trace.ok, trace.error
    return trace.backward[-1]


def test_each_step_asks_what_it_sends_and_the_leaf_asks_its_grad() -> None:
    call = _call(FAN_IN)
    names = [s.name for s in call.steps]
    assert names == ["SumBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]
    asked = [[(q.kind, q.gradient.values) for q in questions(call, k)]
             for k in range(len(names))]
    assert asked == [
        [("sent", [1.0, 1.0])],  # sum: ones to the add
        [("sent", [1.0, 1.0]), ("sent", [1.0, 1.0])],  # add: the same to both sides
        [("sent", [1.0, 2.0]), ("sent", [1.0, 2.0])],  # mul: g·x to each x
        [("grad", [3.0, 5.0])],  # 1 + 2x: the fan-in sum, written into x.grad
    ]
    mul = call.steps[2]
    assert [q.to for q in questions(call, 2)] == [g.to for g in mul.grad_inputs]


def test_a_step_of_many_edges_asks_the_first_few() -> None:
    call = _call("x = torch.ones(2, requires_grad=True)\n"
                 "torch.stack([x * k for k in range(40)]).sum().backward()\n")
    stack = next(k for k, s in enumerate(call.steps) if s.name == "StackBackward0")
    assert len(call.steps[stack].grad_inputs) == 40
    asked = questions(call, stack)
    assert [q.gradient.to for q in asked] == [
        g.to for g in call.steps[stack].grad_inputs[:MAX_QUESTIONS]]


def test_a_fan_in_sum_is_asked_where_it_is_not_a_leaf() -> None:
    call = _call("a = torch.tensor(3.0, requires_grad=True)\nb = a * 2\nc = b * b\n"
                 "c.backward()\n")
    mul_b = next(k for k, s in enumerate(call.steps) if s.name == "MulBackward0"
                 and sum(1 for t in call.steps[:k] for g in t.grad_inputs
                         if g and g.to == s.node) == 2)
    kinds = [(q.kind, q.gradient.values) for q in questions(call, mul_b)]
    assert kinds[0] == ("received", 12.0)  # 2b = 12, sent along both edges of b * b: 6 + 6


def test_a_lesson_asks_only_what_it_names() -> None:
    trace = execute(by_key("autograd-basics").code)  # y = x + 2, z = y * y * 3, out = z.mean()
    call = trace.backward[-1]
    graph = trace.graphs[call.graph]
    asked = {call.steps[k].name: [(q.kind, q.gradient.values) for q in
                                       questions(call, k, graph, ("y", "x.grad"))]
             for k in range(len(call.steps))}
    quarter = [[4.5, 4.5], [4.5, 4.5]]  # 2.25 + 2.25: the two paths through y * y meet
    assert asked == {"MeanBackward0": [], "MulBackward0": [],
                     "AddBackward0": [("of", quarter)], "AccumulateGrad": [("grad", quarter)]}
    of = questions(call, 3, graph, ("y",))
    assert [q.kind for q in of] == ["of"] and "y" in next(
        n.names for n in graph.nodes if n.id == of[0].to)
    assert not any(questions(call, k, graph, ("w", "w.grad")) for k in range(5))  # no such


def test_large_truncated_or_integer_gradients_are_not_asked() -> None:
    big = _call(f"x = torch.ones({MAX_ASKED + 1}, requires_grad=True)\n(x * 2).sum()"
                ".backward()\n")
    assert not any(questions(big, k) for k in range(len(big.steps)))
    small = _call(f"x = torch.ones({MAX_ASKED}, requires_grad=True)\n(x * 2).sum().backward()\n")
    assert any(questions(small, k) for k in range(len(small.steps)))
    # An empty gradient holds nothing to predict (shaping an answer as [2, 0] raised).
    empty = _call("x = torch.ones(2, 0, requires_grad=True)\n(x * 2).sum().backward()\n")
    assert [s.grad_outputs[0].shape for s in empty.steps][-1] == [2, 0]
    assert not any(questions(empty, k) for k in range(len(empty.steps)))


@pytest.mark.parametrize(("typed", "numbers"), [
    ("0.5", [0.5]), ("-2", [-2.0]), ("[1, 2.5]", [1.0, 2.5]), ("1, 2, 3", [1.0, 2.0, 3.0]),
    ("[[1, 0], [0, -1e-3]]", [1.0, 0.0, 0.0, -0.001]), ("(4,)", [4.0]), ("-inf", [-math.inf]),
    (" +3 ", [3.0]), ("9" * 400, [math.inf]), ("-" + "9" * 400, [-math.inf])])
def test_an_answer_is_read_as_numbers(typed: str, numbers: list[float]) -> None:
    assert read(typed) == numbers
    assert all(math.isnan(v) for v in read("[nan, nan]"))


@pytest.mark.parametrize(("typed", "key"), [
    ("", "predict_empty"), ("   ", "predict_empty"), ("x.grad", "predict_unreadable"),
    ("__import__('os')", "predict_unreadable"), ("[1, 'a']", "predict_unreadable"),
    ("1 +", "predict_unreadable"), ("2 * 3", "predict_unreadable"), ("True", "predict_unreadable"),
    ("[" * 5000 + "]" * 5000, "predict_unreadable"), ("1" * 3000, "predict_unreadable"),
    ("1j", "predict_unreadable")])
def test_anything_else_is_a_clear_error_never_run(typed: str, key: str) -> None:
    with pytest.raises(Unreadable) as raised:
        read(typed)
    assert str(raised.value) == key


def test_the_engines_value_judges_within_a_tolerance_relative_to_its_size() -> None:
    def gradient_of(values: Any, shape: list[int]) -> Gradient:
        return Gradient(values=values, shape=shape, dtype="torch.float32", device="cpu",
                        truncated=False, norm=0.0, max_abs=0.0)

    gradient = gradient_of([3.0, 500.0, "nan"], [3])
    assert judge([3.02, 504.0, math.nan], gradient).right  # within 1%
    wrong = judge([3.02, 510.0, 0.0], gradient)
    assert not wrong.right and wrong.wrong == (1, 2) and wrong.expected[:2] == [3.0, 500.0]
    assert judge([0.00005], gradient_of(0.0, [])).right  # near zero: 0.0001
    assert not judge([0.001], gradient_of(0.0, [])).right
    ones = gradient_of([[1.0, 1.0], [1.0, 1.0]], [2, 2])
    assert judge([1.0], ones).right  # one number stands for every entry
    assert judge([1.0, 1.0, 1.0, 1.0], ones).right  # flat, in order
    short = judge([1.0, 1.0], ones)
    assert not short.right and short.wrong == (0, 1, 2, 3)
    assert shaped([1.0, 2.0, 3.0, 4.0], [2, 2]) == [[1.0, 2.0], [3.0, 4.0]]
    assert shaped([5.0], []) == 5.0 and shaped([1.0, 2.0], [3]) == [1.0, 2.0]
    assert score({0: {"a": judge([1.0], ones)}, 2: {"b": short, "c": judge([1], ones)}}) == (2, 3)


def _backward_page(lang: str = "en", predict: bool = True, code: str = FAN_IN) -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    if predict:
        at.query_params["predict"] = "1"  # a shared link asks as well
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = code
    at.button(key="backward.run").click().run()
    assert not at.exception
    return at


def _said(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "error", "success", "info")
                     for e in getattr(at, kind))


def test_the_backward_page_hides_a_step_until_it_is_predicted() -> None:
    at = _backward_page()
    assert at.toggle(key="backward.predict").value
    figure = at.get("plotly_chart")[0].proto.spec  # step 1 named, what it sends not yet
    assert text("replay_waiting", "en", step=1, steps=4, name="SumBackward0") in figure
    assert "SumBackward0</b>" not in figure
    assert at.text_input(key="backward.predict.1.0.sent0").label.startswith("The gradient sent")
    at.text_input(key="backward.predict.1.0.sent0").input("[1, 1]")
    at.button(key="backward.predict.1.0.check").click().run()
    assert "Right: The gradient sent to" in _said(at)
    assert "step 1 of 4: SumBackward0" in at.get("plotly_chart")[0].proto.spec
    assert "Backward call #1: 1 of 1 predictions right." in _said(at)
    at.button(key="backward.replay.1.forward").click().run()  # the add: asked again
    assert not at.success
    at.text_input(key="backward.predict.1.1.sent0").input("1")
    at.text_input(key="backward.predict.1.1.sent1").input("[1, 3]")
    at.button(key="backward.predict.1.1.check").click().run()
    said = _said(at)
    assert "Not quite:" in said and "you wrote `[1., 3.]`" in said
    assert "The entries that differ: [1]." in said
    assert "Backward call #1: 2 of 3 predictions right." in said


def test_an_answer_that_is_no_number_says_so_and_keeps_the_step_hidden() -> None:
    at = _backward_page()
    at.text_input(key="backward.predict.1.0.sent0").input("x.grad")
    at.button(key="backward.predict.1.0.check").click().run()
    assert "Write a number such as 0.5" in _said(at) and not at.success
    assert "waiting for your prediction" in at.get("plotly_chart")[0].proto.spec
    at.text_input(key="backward.predict.1.0.sent0").input("1")  # then a number: taken
    at.button(key="backward.predict.1.0.check").click().run()
    assert "Write a number" not in _said(at) and "Right:" in _said(at)


def test_predicting_in_chinese_and_a_new_run_starts_afresh() -> None:
    at = _backward_page("zh")
    at.button(key="backward.replay.1.last").click().run()
    at.text_input(key="backward.predict.1.3.grad0").input("[3, 5]")
    at.button(key="backward.predict.1.3.check").click().run()
    assert "正确" in _said(at) and "答对 1 个" in _said(at)
    at.button(key="backward.run").click().run()  # the same program, run again
    assert "答对" not in _said(at)


def test_without_predicting_every_step_shows_at_once() -> None:
    at = _backward_page(predict=False)
    assert not at.toggle(key="backward.predict").value
    assert "step 1 of 4: SumBackward0" in at.get("plotly_chart")[0].proto.spec
    assert not [e for e in at.text_input if ".predict." in str(e.key)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_opens_the_backward_page_asking_what_it_names_with_its_hint(lang: str) -> None:
    lesson = lessons.by_key("backward")
    assert lesson.predict == ("y", "x.grad")
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    at.button(key="lesson.backward.autograd-basics").click().run()
    assert not at.exception and at.toggle(key="backward.predict").value
    figure = at.get("plotly_chart")[0].proto.spec
    assert "MeanBackward0" in figure  # steps not asked about show at once
    at.button(key="backward.replay.1.last").click().run()  # AccumulateGrad: x.grad asked
    grad = at.text_input(key="backward.predict.1.4.grad0")
    assert grad.label == text("predict_grad", lang, to="x")
    assert lesson.hint[lang] in _said(at)
    grad.input("4.5")
    at.button(key="backward.predict.1.4.check").click().run()
    assert text("predict_right", lang, what=text("predict_grad", lang, to="x"),
                value="`[[4.5000, 4.5000], [4.5000, 4.5000]]`") in _said(at)
    at.button(key="backward.replay.1.back").click().run()  # AddBackward0: y's gradient
    assert at.text_input(key="backward.predict.1.3.of0").label == text("predict_of", lang,
                                                                       to="y")


def test_hovering_the_picture_tells_nothing_of_the_steps_ahead() -> None:
    trace = execute(FAN_IN)
    call = trace.backward[-1]
    shown = animation_view(trace, call)
    layout, picture = positions(shown.dot), svg(shown.dot)

    def hover(at: int | None, ahead: bool) -> str:
        chart = figure(call, layout, picture, shown.groups, at=at, animated=False, ahead=ahead)
        return " ".join(chart.data[HOVER].hovertext)

    grad = "[3., 5.]"  # x.grad, which AccumulateGrad (the last step) receives and writes
    assert grad in hover(None, ahead=True)  # the page without predicting tells every step
    for at in (None, 0, 1, 2):
        said = hover(at, ahead=False)
        assert grad not in said and ".grad = ?" in said and "AccumulateGrad</b> ?" in said
    assert grad in hover(3, ahead=False) and "?" not in hover(3, ahead=False)
    assert len(figure(call, layout, picture, shown.groups, at=0, animated=False,
                      ahead=False).data[HOVER].customdata) == len(
        figure(call, layout, picture, shown.groups, at=0, animated=False).data[HOVER].customdata)


def _caption(at: AppTest) -> str:
    """The picture's caption: which step it shows, as drawn above it."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    (caption,) = [t["text"][0] for t in spec["data"] if t.get("textposition") == "top right"]
    return caption.removeprefix("<b>").removesuffix("</b>")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_slider_and_the_picture_name_one_step_asked_or_shown(lang: str) -> None:
    at = _backward_page(lang)
    slider = at.select_slider(key="backward.replay.1")
    for k in range(4):
        place = slider.options[slider.value - 1]
        assert place == text("place_engine", lang, step=k + 1, steps=4)
        assert _caption(at).startswith(f"{place}{'：' if lang == 'zh' else ':'}")  # asked
        for question in at.text_input:
            question.input("0")
        at.button(key=f"backward.predict.1.{k}.check").click().run()
        assert _caption(at).startswith(place) and not at.text_input  # shown: still that step
        if k < 3:
            at.button(key="backward.replay.1.forward").click().run()
            slider = at.select_slider(key="backward.replay.1")


def test_the_predict_switch_stands_under_the_replay_controls() -> None:
    at = _backward_page()
    drawn = list(at.main)
    where = {id(e): k for k, e in enumerate(drawn)}
    toggle = where[id(at.toggle(key="backward.predict"))]
    assert where[id(at.select_slider(key="backward.replay.1"))] < toggle
    helps = [where[id(c)] for c in at.caption if c.value in (
        text("animation_help", "en"), text("timeline_help", "en"))]
    assert helps and toggle < min(helps)


SCALAR = "x = torch.tensor(1.5, requires_grad=True)\ny = x * 2\ny.backward()\n"
GRID = "x = torch.ones(2, 2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\n"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_verdict_on_a_whole_number_has_one_full_stop(lang: str) -> None:
    at = _backward_page(lang, code=SCALAR)  # MulBackward0 sends 2. to x
    at.text_input(key="backward.predict.1.0.sent0").input("2")
    at.button(key="backward.predict.1.0.check").click().run()
    (right,) = [s.value for s in at.success]
    assert "`2.`" in right and not re.search(r"\.`?[.。]", right), right
    at.button(key="backward.replay.1.forward").click().run()  # AccumulateGrad: x.grad
    at.text_input(key="backward.predict.1.1.grad0").input("3")
    at.button(key="backward.predict.1.1.check").click().run()
    (wrong,) = [e.value for e in at.error]
    assert "`2.`" in wrong and "`3.`" in wrong and not re.search(r"\.`?[.。]", wrong), wrong


def test_a_grids_differing_entries_are_named_by_row_and_column() -> None:
    at = _backward_page(code=GRID)  # SumBackward0 sends ones to the product
    at.text_input(key="backward.predict.1.0.sent0").input("[[1, 0], [0, 1]]")
    at.button(key="backward.predict.1.0.check").click().run()
    (wrong,) = [e.value for e in at.error]
    assert text("predict_differ", "en", at="[0, 1], [1, 0]") in wrong, wrong
    assert entry(5, [2, 3]) == "[1, 2]" and entry(2, [3]) == "[2]"
