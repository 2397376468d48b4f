"""Checking a program's own autograd.Function classes with gradcheck. Pure.

`gradient_checks(code)` keeps the program's imports and class definitions (not the rest, such
as a training loop) and adds, for each Function class, a double-precision
`torch.autograd.gradcheck` on one random input of 8 elements per tensor argument of `forward`,
and the two Jacobians gradcheck compares: the analytical one (the class's backward, one output
element at a time) and the numerical one (central differences). A class with one input is also
compared with autograd's own ReLU gradient. `verdicts` and `jacobians` read the results back
from the run's variables.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from explorer.trace import Variables, value_of
from explorer.trace.schema import Variable

EPS, ATOL, RTOL = 1e-6, 1e-4, 1e-3  # gradcheck's step and tolerances
SIZE = 8  # elements of each random input: the Jacobian's columns
ROWS = 64  # output elements kept: the Jacobian's rows at most

HEAD = f"""import torch

EPS, ATOL, RTOL = {EPS}, {ATOL}, {RTOL}


def random_inputs(count):
    \"\"\"`count` random double-precision inputs of {SIZE} elements that require grad.\"\"\"
    return tuple(torch.randn({SIZE}, dtype=torch.double, requires_grad=True)
                 for _ in range(count))


def verdict(apply, inputs):
    \"\"\"gradcheck's verdict and, if it failed, the first line of what it said.\"\"\"
    try:
        return torch.autograd.gradcheck(apply, inputs, eps=EPS, atol=ATOL, rtol=RTOL), ""
    except RuntimeError as error:
        return False, str(error).partition("\\n")[0]


def jacobians(apply, inputs, rows={ROWS}):
    \"\"\"How many elements apply's outputs have, and per input the analytical Jacobian (your
    backward, one output element at a time) and the numerical one (central differences, as
    gradcheck computes them) of the first `rows` output elements.\"\"\"
    def flat(*args):
        out = apply(*args)
        outs = out if isinstance(out, tuple) else (out,)
        return torch.cat([o.reshape(-1) for o in outs if isinstance(o, torch.Tensor)])

    out = flat(*inputs)
    rows = min(rows, out.numel())
    analytical = [torch.zeros(rows, x.numel(), dtype=torch.double) for x in inputs]
    for i in range(rows):
        grads = torch.autograd.grad(out[i], inputs, retain_graph=True, allow_unused=True)
        for jacobian, grad in zip(analytical, grads):
            if grad is not None:
                jacobian[i] = grad.reshape(-1)
    numerical = []
    with torch.no_grad():
        for k, x in enumerate(inputs):
            jacobian = torch.zeros(rows, x.numel(), dtype=torch.double)
            for j in range(x.numel()):
                step = torch.zeros(x.numel(), dtype=torch.double)
                step[j] = EPS
                step = step.view_as(x)
                plus = flat(*[y + step if m == k else y for m, y in enumerate(inputs)])
                minus = flat(*[y - step if m == k else y for m, y in enumerate(inputs)])
                jacobian[:, j] = ((plus - minus) / (2 * EPS))[:rows]
            numerical.append(jacobian)
    return out.numel(), list(zip(analytical, numerical))
"""

CHECK = """
{name}_inputs = random_inputs({count})
{name}_gradcheck, {name}_says = verdict({name}.apply, {name}_inputs)
{name}_outputs, {name}_jacobians = jacobians({name}.apply, {name}_inputs)
"""

UNPACK = "{name}_analytical_{k}, {name}_numerical_{k} = {name}_jacobians[{k}]\n"

RELU = """{name}_grad, = torch.autograd.grad({name}.apply(*{name}_inputs).sum(), {name}_inputs)
relu_grad, = torch.autograd.grad(torch.relu({name}_inputs[0]).sum(), {name}_inputs)
{name}_matches_relu = bool(torch.allclose({name}_grad, relu_grad))
"""


def inputs(node: ast.ClassDef) -> int:
    """How many tensors `forward` takes: its positional parameters without a default, but for
    `ctx` (which a class with `setup_context` does not take); at least one."""
    methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return 1
    args = forward.args
    count = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    return max(1, count - ("setup_context" not in methods))


def gradient_checks(code: str) -> tuple[list[str], str]:
    """The names of the classes in `code` that subclass an autograd Function, and a program
    of its imports and classes followed by a gradient check of each ([] and "" if there are
    none or `code` does not parse). Parses `code` once."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [], ""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)
               and any(ast.unparse(base).endswith("Function") for base in node.bases)]
    if not classes:
        return [], ""
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom
                                                     | ast.ClassDef)]
    checks = []
    for node in classes:
        count = inputs(node)
        checks.append(CHECK.format(name=node.name, count=count)
                      + "".join(UNPACK.format(name=node.name, k=k) for k in range(count))
                      + (RELU.format(name=node.name) if count == 1 else ""))
    return [node.name for node in classes], "\n".join(
        [HEAD, ast.unparse(ast.Module(kept, [])), *checks])


def verdicts(variables: Variables, names: list[str]) -> list[dict[str, Any]]:
    """Per class: did gradcheck pass, and does the gradient match torch.relu's?"""
    out = []
    for name in names:
        passed = value_of(variables, f"{name}_gradcheck")
        matches = value_of(variables, f"{name}_matches_relu")
        out.append({"name": name, "gradcheck": passed, "matches_relu": matches})
    return out


@dataclass(frozen=True)
class Jacobian:
    """One input's two Jacobians (row i, column j: d output[i] / d input[j]) and where they
    differ by gradcheck's rule."""

    analytical: list[list[float]]
    numerical: list[list[float]]
    differs: list[list[bool]]

    @property
    def count(self) -> int:
        """How many entries differ."""
        return sum(map(sum, self.differs))

    @property
    def size(self) -> int:
        """How many entries there are."""
        return sum(map(len, self.differs))

    def worst(self) -> tuple[int, int] | None:
        """Row and column of the differing entry farthest apart (None if none differs)."""
        marked = [(i, j) for i, row in enumerate(self.differs) for j, mark in enumerate(row)
                  if mark]
        return max(marked, key=lambda at: _gap(self.analytical[at[0]][at[1]],
                                               self.numerical[at[0]][at[1]]), default=None)


def differs(analytical: float, numerical: float, atol: float = ATOL,
            rtol: float = RTOL) -> bool:
    """gradcheck's rule (torch.allclose): |a - n| > atol + rtol * |n|; NaN always differs."""
    return not abs(analytical - numerical) <= atol + rtol * abs(numerical)


def _gap(analytical: float, numerical: float) -> float:
    """|a - n|, infinite where either is not a number."""
    gap = abs(analytical - numerical)
    return math.inf if math.isnan(gap) else gap


def jacobians(variables: Variables, name: str) -> tuple[int, list[Jacobian]]:
    """How many output elements class `name` has, and its Jacobians per input as the check
    left them ((0, []) if it did not get that far)."""
    outputs = value_of(variables, f"{name}_outputs")
    found = []
    for k in range(len(variables)):
        analytical = _matrix(variables.get(f"{name}_analytical_{k}"))
        numerical = _matrix(variables.get(f"{name}_numerical_{k}"))
        if analytical is None or numerical is None or list(map(len, analytical)) != list(
                map(len, numerical)):
            break
        found.append(Jacobian(analytical, numerical, [
            [differs(a, n) for a, n in zip(row_a, row_n, strict=True)]
            for row_a, row_n in zip(analytical, numerical, strict=True)]))
    if not isinstance(outputs, int) or isinstance(outputs, bool) or not found:
        return 0, []
    return outputs, found


def said(variables: Variables, name: str) -> str:
    """The first line of gradcheck's own message when class `name` failed ("" if none)."""
    says = value_of(variables, f"{name}_says")
    return says.strip().rstrip(",") if isinstance(says, str) else ""


def _matrix(info: Variable | None) -> list[list[float]] | None:
    """A Jacobian's values as floats (NaN for what is not a number), at most ROWS by SIZE;
    None if `info` is not a matrix."""
    values = None if info is None else info.values
    if not isinstance(values, list) or not all(isinstance(row, list) for row in values):
        return None
    return [[_float(v) for v in row[:SIZE]] for row in values[:ROWS]]


def _float(value: Any) -> float:
    """A recorded number as a float ("inf", "nan" are recorded as text); NaN if it is none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def number(value: float, digits: int = 4) -> str:
    """`value` in `digits` significant digits, without the sign of a negative zero."""
    return f"{value + 0.0:.{digits}g}"


def table(values: list[list[float]], marked: list[list[bool]]) -> str:
    """A markdown table of a Jacobian: a row per output element, a column per input element,
    the marked entries bold on red."""
    columns = max(map(len, values), default=0)
    lines = ["| | " + " | ".join(str(j) for j in range(columns)) + " |",
             "|---:|" + "---:|" * columns]
    for i, (row, marks) in enumerate(zip(values, marked, strict=True)):
        cells = [f":red-background[**{number(v)}**]" if mark else number(v)
                 for v, mark in zip(row, marks, strict=True)]
        lines.append(f"| **{i}** | " + " | ".join(cells) + " |")
    return "\n".join(lines)
