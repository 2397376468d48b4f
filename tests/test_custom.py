"""The Custom Function page's gradient check: the two Jacobians, where they differ, and why."""

from __future__ import annotations

import ast
import math
import re
from typing import Any

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.trace.schema import Variable
from explorer.ui.custom import CHECKED
from explorer.views.custom import (
    ATOL,
    EPS,
    RTOL,
    differs,
    gradient_checks,
    inputs,
    jacobians,
    said,
    table,
    verdicts,
)
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
                 "F_analytical_0": matrix([[1.0, 0.0], [0.0, 1.0]]),
                 "F_numerical_0": matrix([[1.0, 0.0], [0.0, "nan"]])}
    outputs, (jacobian,) = jacobians(variables, "F")
    assert outputs == 2 and jacobian.count == 1
    assert jacobian.differs == [[False, False], [False, True]]
    assert said(variables, "F") == "Jacobian mismatch for output 0 with respect to input 0"
    assert jacobian.worst() == (1, 1) and jacobian.size == 4
    shown = table(jacobian.analytical, jacobian.differs)
    assert shown.splitlines()[-1] == "| **1** | 0 | :red-background[**1**] |"
    assert jacobians({}, "F") == (0, []) and said({}, "F") == ""
    broken = variables | {"F_numerical_0": {"values": "<values unavailable: RuntimeError>"}}
    assert jacobians(broken, "F") == (0, [])


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
    assert f"eps={EPS}" not in program and "EPS, ATOL, RTOL = " in program


def _page(code: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/6_Custom_Function.py").run()
    at.session_state["custom.code"] = code
    at.button(key="custom.run").click().run()
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
