"""Checking a program's own autograd.Function classes with gradcheck. Pure.

`gradient_checks(code)` keeps the program's imports and class definitions (not the rest, such
as a training loop) and adds, for each Function class with one input, a double-precision
`torch.autograd.gradcheck` and a comparison with autograd's own ReLU gradient.
"""

from __future__ import annotations

import ast
from typing import Any

CHECK = """
gradcheck_input = torch.randn(8, dtype=torch.double, requires_grad=True)
{name}_gradcheck = torch.autograd.gradcheck({name}.apply, (gradcheck_input,), eps=1e-6,
                                            atol=1e-4, raise_exception=False)
{name}_grad, = torch.autograd.grad({name}.apply(gradcheck_input).sum(), gradcheck_input)
relu_grad, = torch.autograd.grad(torch.relu(gradcheck_input).sum(), gradcheck_input)
{name}_matches_relu = bool(torch.allclose({name}_grad, relu_grad))
"""


def gradient_checks(code: str) -> tuple[list[str], str]:
    """The names of the classes in `code` that subclass an autograd Function, and a program
    of its imports and classes followed by a gradient check of each ([] and "" if there are
    none or `code` does not parse). Parses `code` once."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [], ""
    names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)
             and any(ast.unparse(base).endswith("Function") for base in node.bases)]
    if not names:
        return [], ""
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom
                                                     | ast.ClassDef)]
    head = ast.unparse(ast.Module(kept, []))
    return names, "\n".join(["import torch", head, *(CHECK.format(name=name)
                                                     for name in names)])


def verdicts(variables: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """Per class: did gradcheck pass, and does the gradient match torch.relu's?"""
    out = []
    for name in names:
        passed = variables.get(f"{name}_gradcheck", {}).get("values")
        matches = variables.get(f"{name}_matches_relu", {}).get("values")
        out.append({"name": name, "gradcheck": passed, "matches_relu": matches})
    return out
