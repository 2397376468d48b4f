"""The Custom Function page's gradient check: the two Jacobians, where they differ, and why."""

from __future__ import annotations

import ast
import math
import re
from typing import Any

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.pool.worker import WorkerPool
from explorer.trace.schema import Variable
from explorer.ui.custom import CHECKED
from explorer.views.custom import (
    ATOL,
    COLUMNS,
    EPS,
    ROWS,
    RTOL,
    differs,
    first_calls,
    gradient_checks,
    inputs,
    inputs_used,
    jacobians,
    said,
    table,
    verdicts,
)
from tests.conftest import page_ran
from tests.programs import MY_RELU

WRONG_RELU = "import torch\n" + MY_RELU.replace("grad_input[input < 0] = 0",
                                                "grad_input[input < 0] = 1")
WRONG_MUL = """import torch

class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * b  # the second should be grad * a
"""

THREE = "import torch\n" + MY_RELU + """
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = MyReLU.apply(x)
y.sum().backward()
"""
STRAIGHT_THROUGH = """import torch

class Sign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        return grad  # straight through: the gradient passes unchanged

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = Sign.apply(x) + Square.apply(x)
y.sum().backward()
"""
MATMUL = """import torch

class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.T, a.T @ grad

a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(3, 4, requires_grad=True)
c = MatMul.apply(a, b)
"""


def line_of(code: str, statement: str) -> int:
    """The line of `code` that is `statement`."""
    return code.splitlines().index(statement) + 1


def matrix(values: list[list[Any]]) -> Variable:
    """A recorded tensor's variable, as the snapshot describes one (values only)."""
    return Variable(kind="tensor", values=values)


def test_gradchecks_rule_marks_what_torch_allclose_would_not_accept() -> None:
    a = torch.tensor([1.0, 1.0, 0.0, 100.0, math.nan], dtype=torch.double)
    n = torch.tensor([1.0 + RTOL, 1.0 + 2 * RTOL, 1.0, 100.05, math.nan],
                     dtype=torch.double)
    marks = [differs(x, y) for x, y in zip(a.tolist(), n.tolist(), strict=True)]
    assert marks == [not torch.allclose(x, y, rtol=RTOL, atol=ATOL) for x, y in zip(a, n,
                                                                                   strict=True)]
    assert marks == [False, True, True, False, True]


def test_the_jacobians_are_read_back_with_the_differing_entries_marked() -> None:
    variables = {"F_outputs": Variable(kind="number", values=2),
                 "F_says": Variable(kind="str", values="Jacobian mismatch for output 0 with "
                                                      "respect to input 0,"),
                 "F_input_0": Variable(kind="tensor", shape=[2], dtype="torch.float64",
                                       numel=2, values=[0.5, 1.5]),
                 "F_analytical_0": matrix([[1.0, 0.0], [0.0, 1.0]]),
                 "F_numerical_0": matrix([[1.0, 0.0], [0.0, "nan"]])}
    outputs, (jacobian,) = jacobians(variables, "F")
    assert outputs == 2 and jacobian.count == 1
    assert jacobian.index == 0 and jacobian.elements == 2
    assert jacobian.differs == [[False, False], [False, True]]
    assert said(variables, "F") == "Jacobian mismatch for output 0 with respect to input 0"
    assert jacobian.worst() == (1, 1) and jacobian.size == 4
    shown = table(jacobian.analytical, jacobian.differs)
    assert shown.splitlines()[-1] == "| **1** | 0 | :red-background[**1**] |"
    assert jacobians({}, "F") == (0, []) and said({}, "F") == ""
    broken = variables | {"F_numerical_0": {"values": "<values unavailable: RuntimeError>"}}
    assert jacobians(broken, "F") == (0, [])
    huge = variables | {"F_numerical_0": matrix([[1.0, 0.0], [0.0, 10**400]])}  # past a float
    assert jacobians(huge, "F")[1][0].differs == [[False, False], [False, True]]


def test_forward_tells_how_many_inputs_to_check() -> None:
    def count(source: str) -> int:
        return inputs(ast.parse(source).body[0])

    assert count("class A(Function):\n    def forward(ctx, x): pass") == 1
    assert count("class A(Function):\n    def forward(ctx, a, b, alpha=1.0): pass") == 2
    assert count("class A(Function):\n    def forward(a, b, c): pass\n"
                 "    def setup_context(ctx, inputs, output): pass") == 3


def test_a_wrong_backward_shows_both_jacobians_and_where_they_differ(pool: WorkerPool) -> None:
    names, program = gradient_checks(WRONG_RELU)
    result = pool.run(program)
    assert result.ok, result.error
    assert verdicts(result.variables, names)[0]["gradcheck"] is False
    outputs, (jacobian,) = jacobians(result.variables, "MyReLU")
    assert outputs == 8 and len(jacobian.analytical) == len(jacobian.numerical) == 8
    numerical = torch.tensor(jacobian.numerical)
    negative = numerical.diagonal() == 0  # ReLU's true Jacobian: 1 on the diagonal where x > 0
    assert torch.equal(numerical, torch.diag((~negative).double()))
    assert 0 < negative.sum() < 8, "an input with no negative element checks nothing"
    analytical = torch.tensor(jacobian.analytical)  # the wrong backward: 1 in every row there
    assert torch.equal(analytical[:, negative], torch.ones(8, int(negative.sum())))
    assert torch.equal(torch.tensor(jacobian.differs), analytical != numerical)
    assert jacobian.count == 8 * int(negative.sum())
    i, j = jacobian.worst()
    assert negative[j] and analytical[i, j] == 1 and numerical[i, j] == 0
    assert said(result.variables, "MyReLU").startswith("Jacobian mismatch")


def test_a_function_of_two_inputs_is_checked_by_each(pool: WorkerPool) -> None:
    names, program = gradient_checks(WRONG_MUL)
    result = pool.run(program)
    assert result.ok, result.error
    assert verdicts(result.variables, names) == [
        {"name": "Mul", "gradcheck": False, "matches_relu": None}]
    outputs, (by_a, by_b) = jacobians(result.variables, "Mul")
    assert outputs == 8 and by_a.count == 0 and by_b.count == 8
    assert "with respect to input 1" in said(result.variables, "Mul")
    assert f"eps={EPS}" not in program and "CHECK_EPS, CHECK_ATOL, CHECK_RTOL = " in program


def _page(code: str, lang: str = "en") -> AppTest:
    at = page_ran("pages/6_Custom_Function.py", "custom", code, lang, timeout=90)
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_both_jacobians_and_the_tolerance_of_a_failed_check(lang: str) -> None:
    at = _page(WRONG_RELU, lang)
    assert [e.value for e in at.error] == [text("gradcheck_mismatch", lang, name="MyReLU")]
    (expander,) = [e for e in at.expander if e.label == text("jacobians_title", lang,
                                                              name="MyReLU")]
    assert expander.proto.expanded
    tables = [m.value for m in expander.markdown if m.value.startswith("| |")]
    assert len(tables) == 2  # analytical and numerical, side by side
    assert all(len(t.splitlines()) == 10 for t in tables)  # header, rule, 8 rows
    marked = [len(re.findall(r":red-background\[", t)) for t in tables]
    assert marked[0] == marked[1] > 0
    captions = [c.value for c in expander.caption]
    assert text("jacobian_tolerance", lang, atol="0.0001", rtol="0.001", eps="1e-06") in captions
    assert text("jacobian_analytical", lang) in captions
    assert text("jacobian_numerical", lang) in captions
    heading = text("jacobian_input", lang, k=0, count=marked[0], total=64)
    assert f"**{heading}**" in [m.value for m in expander.markdown]
    _, (jacobian,) = jacobians(at.session_state[CHECKED][3].variables, "MyReLU")
    i, j = jacobian.worst()
    assert text("jacobian_worst", lang, i=i, j=j, a="1", n="0", gap="1",
                allowed="0.0001") in captions


def test_a_passing_check_keeps_its_jacobians_folded() -> None:
    at = _page("import torch\n" + MY_RELU)
    assert at.success[0].value.startswith("gradcheck passed: MyReLU.backward")
    (expander,) = [e for e in at.expander if e.label.startswith("Jacobians of")]
    assert not expander.proto.expanded
    assert not any(":red-background[" in m.value for m in expander.markdown)


def test_the_check_finds_each_functions_first_call_through_aliases_not_in_functions() -> None:
    code = """relu = MyReLU.apply
def model(t):
    return Square.apply(t)
for k in range(3):
    y = relu(x[k]) + Square.apply(x)
z = MyReLU.apply(w)
"""
    calls = first_calls(ast.parse(code).body, {"MyReLU", "Square"})
    assert {name: ast.unparse(call) for name, call in calls.items()} == {
        "MyReLU": "relu(x[k])", "Square": "Square.apply(x)"}
    _, program = gradient_checks("import torch\n" + MY_RELU + "x = torch.ones(3)\n" + code)
    assert "x = torch.ones(3)" in program and "z = MyReLU.apply(w)" not in program
    assert "for k in" not in program and "    k = next(iter(range(3)))" in program
    jumping = code.replace("    y = relu", "    if k == 0:\n        continue\n    y = relu")
    replayed = gradient_checks("import torch\n" + MY_RELU + jumping)[1].split("CHECK_EPS")[0]
    assert "continue" not in replayed and "k = next" not in replayed  # captured before it


def test_a_function_of_two_inputs_is_checked_at_the_programs_own_shapes_and_values(
        pool: WorkerPool) -> None:
    names, program = gradient_checks(MATMUL)
    result = pool.run(program)
    assert result.ok, result.error
    assert verdicts(result.variables, names) == [
        {"name": "MatMul", "gradcheck": True, "matches_relu": None}]
    used = inputs_used(result.variables, "MatMul")
    assert used is not None and used.source == "program"
    assert used.shapes == ["(2, 3)", "(3, 4)"] and used.line == line_of(MATMUL, "c = "
                                                                         "MatMul.apply(a, b)")
    torch.manual_seed(0)  # the seed every run starts from: the program's own a and b
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    for k, value in enumerate((a, b)):
        checked = result.variables[f"MatMul_input_{k}"]
        assert checked.shape == list(value.shape) and checked.dtype == "torch.float64"
        assert torch.allclose(torch.tensor(checked.values, dtype=torch.double), value.double())
    outputs, (by_a, by_b) = jacobians(result.variables, "MatMul")
    assert outputs == 8 and (by_a.index, by_b.index) == (0, 1)
    assert [len(by_a.analytical), len(by_a.analytical[0])] == [8, 6]
    assert [len(by_b.analytical), len(by_b.analytical[0])] == [8, 12]


def test_values_at_a_kink_are_replaced_by_seeded_random_ones_of_their_shape(
        pool: WorkerPool) -> None:
    code = THREE.replace("[1.0, -2.0, 3.0]", "[1.0, 0.0, 3.0]")  # ReLU's kink at 0
    result = pool.run(gradient_checks(code)[1])
    assert result.ok, result.error
    used = inputs_used(result.variables, "MyReLU")
    assert used is not None and (used.source, used.shapes) == ("unsuited", ["(3,)"])
    assert 0.0 not in result.variables["MyReLU_input_0"].values
    assert verdicts(result.variables, ["MyReLU"])[0]["gradcheck"] is True


def test_arguments_made_in_a_loop_are_taken_from_its_first_round(pool: WorkerPool) -> None:
    code = "import torch\n" + MY_RELU + """
xs = torch.randn(4, 3)
for t in range(4):
    h = 2 * xs[t]
    y = MyReLU.apply(h)
"""
    result = pool.run(gradient_checks(code)[1])
    assert result.ok, result.error
    used = inputs_used(result.variables, "MyReLU")
    assert used is not None and (used.source, used.shapes) == ("program", ["(3,)"])
    assert used.line == line_of(code, "    y = MyReLU.apply(h)")
    torch.manual_seed(0)
    first = 2 * torch.randn(4, 3)[0]
    assert torch.allclose(torch.tensor(result.variables["MyReLU_input_0"].values,
                                       dtype=torch.double), first.double())


def test_arguments_the_check_cannot_rebuild_are_said_so(pool: WorkerPool) -> None:
    code = "import torch\n" + MY_RELU + """
h = torch.randn(4, 3) @ torch.randn(2, 2)
y = MyReLU.apply(h)
"""
    result = pool.run(gradient_checks(code)[1])
    assert result.ok, result.error  # the check goes on past the program's own error
    used = inputs_used(result.variables, "MyReLU")
    assert used is not None and (used.source, used.shapes) == ("unbuilt", ["(8,)"])
    assert used.line == line_of(code, "y = MyReLU.apply(h)")


def tables_of(expander: Any) -> list[str]:
    """The markdown tables (Jacobians) drawn in an expander."""
    return [m.value for m in expander.markdown if m.value.startswith("| |")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_three_element_x_is_checked_at_its_values_with_3_by_3_jacobians(lang: str) -> None:
    at = _page(THREE, lang)
    assert [s.value for s in at.success] == [text("gradcheck_pass", lang, name="MyReLU")]
    captions = [c.value for c in at.caption]
    assert text("checked_program", lang, name="MyReLU", line=line_of(THREE, "y = MyReLU."
                                                                           "apply(x)"),
                shapes=plain("(3,)"), size=8) in captions
    assert text("matches_relu", lang) in captions
    (expander,) = [e for e in at.expander if e.label == text("jacobians_title", lang,
                                                              name="MyReLU")]
    tables = tables_of(expander)
    assert len(tables) == 2
    for shown in tables:
        lines = shown.splitlines()
        assert lines[0] == "| | 0 | 1 | 2 |" and len(lines) == 2 + 3  # header, rule, 3 rows
    assert tables[1].splitlines()[2:] == ["| **0** | 1 | 0 | 0 |", "| **1** | 0 | 0 | 0 |",
                                          "| **2** | 0 | 0 | 1 |"]
    assert "MyReLU_inputs" not in at.session_state["custom.trace"].variables  # a run apart


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_functions_that_are_not_a_relu_draw_no_relu_comparison(lang: str) -> None:
    at = _page(STRAIGHT_THROUGH, lang)
    assert [e.value for e in at.error] == [text("gradcheck_mismatch", lang, name="Sign")]
    assert [s.value for s in at.success] == [text("gradcheck_pass", lang, name="Square")]
    captions = [c.value for c in at.caption]
    for key in ("matches_relu", "differs_relu"):
        assert text(key, lang) not in captions
    assert not any("torch.relu" in c for c in captions)
    line = line_of(STRAIGHT_THROUGH, "y = Sign.apply(x) + Square.apply(x)")
    for name in ("Sign", "Square"):
        assert text("checked_program", lang, name=name, line=line, shapes=plain("(3,)"),
                    size=8) in captions
    for expander in at.expander[:2]:
        assert [t.splitlines()[0] for t in tables_of(expander)] == ["| | 0 | 1 | 2 |"] * 2


def test_the_seeds_relu_is_checked_at_its_own_inputs_and_matches_torch_relu() -> None:
    code = by_key("custom-function-relu").code
    at = _page(code)
    assert [s.value for s in at.success] == [text("gradcheck_pass", "en", name="MyReLU")]
    captions = [c.value for c in at.caption]
    line = line_of(code, "    y_pred = relu(x.mm(w1)).mm(w2)")
    assert text("checked_program", "en", name="MyReLU", line=line,
                shapes=plain("(64, 100)"), size=8) in captions
    assert text("gradcheck_fast", "en", size=6400) in captions
    assert text("matches_relu", "en") in captions
    (expander,) = [e for e in at.expander if e.label.startswith("Jacobians of")]
    inside = [c.value for c in expander.caption]
    assert text("jacobian_rows", "en", rows=ROWS, outputs=6400) in inside
    assert text("jacobian_columns", "en", columns=COLUMNS, size=6400) in inside
    assert all(len(t.splitlines()) == 2 + ROWS for t in tables_of(expander))


SQUARE_EXP = """import torch

class SquareExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        e = torch.exp(x)
        ctx.save_for_backward(x, e)
        return x * x * e

    @staticmethod
    def backward(ctx, grad_out):
        x, e = ctx.saved_tensors
        return grad_out * (2 * x * e + x * x * e)

w = torch.tensor([0.5, -1.0], requires_grad=True)
total = torch.zeros(())
for i in range(3):
    out = SquareExp.apply(w * (i + 1))
    total = total + out.sum()
total.backward()
"""


def test_the_editor_marks_what_the_open_tab_names() -> None:
    at = _page(SQUARE_EXP)  # the check's tab, open first, names apply's line
    assert text("checked_program", "en", name="SquareExp", line=18, shapes="\\(2,\\)") in [
        c.value for c in at.caption]
    assert at.session_state["custom.marked"] == (18, 18)
    at.session_state["custom.tab.en"] = text("tab_backward", "en")
    at.run()  # the replay's first step: `total + out.sum()`'s AddBackward0, made on line 19
    assert at.session_state["custom.marked"] == (19, 19)
    at.session_state["custom.tab.en"] = text("tab_check", "en")
    assert at.run().session_state["custom.marked"] == (18, 18)
