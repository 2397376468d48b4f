"""Predict, then see: the numbers of a backward step a learner is asked for before the step is
shown, what they typed read as numbers, and the engine's own value judging it. Pure.

At engine step k a node sends a gradient along each of its edges (`grad_inputs`); where two
or more edges met at it, what it received is their sum (the fan-in); an AccumulateGrad step
writes a leaf's `.grad`. Each is asked when the run kept it whole and it is small enough to
type: real numbers, at most MAX_ASKED of them.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.trace.schema import Call, Gradient, Graph, LeafGrad
from explorer.views.numbers import flat, parsed

MAX_ASKED = 16  # values of one asked gradient: more is not a thing to type
MAX_TYPED = 2_000  # characters of one answer
# Questions one engine step asks, the first: a step of thousands of edges (torch.stack of
# 3,000 tensors) would ask for thousands of answers, each a box to type in.
MAX_QUESTIONS = 12
RTOL, ATOL = 1e-2, 1e-4  # right when within 1% of the engine's value, or 0.0001 of it
REAL = ("float", "bfloat", "half", "double")  # the dtypes asked: no integers or complex


@dataclass(frozen=True)
class Question:
    """One number (or tensor) of a step to predict: `kind` is "sent" (along the edge to
    `to`), "received" (a fan-in sum), "of" (the gradient of tensor `to`, which the step's
    node receives) or "grad" (the `.grad` of leaf `to` after the step)."""

    key: str  # unique within the step
    kind: str
    to: str  # the node the gradient goes to, or the leaf
    gradient: Gradient  # the engine's: shape, dtype, values...


@dataclass(frozen=True)
class Verdict:
    right: bool
    typed: list[float]
    expected: list[float]
    wrong: tuple[int, ...]  # the positions (flat) of the values not within the tolerance


class Unreadable(ValueError):
    """An answer that is no number or list of numbers; the message is a text key."""


def questions(call: Call, index: int, graph: Graph | None = None,
              ask: tuple[str, ...] = ()) -> list[Question]:
    """What engine step `index` of `call` asks, the first MAX_QUESTIONS (nothing when none of
    it can be typed). With `ask` (a lesson's), only what it names: `x.grad`, the `.grad` of
    leaf x; `y`, the gradient of tensor y, which the node that made it receives (`graph`: the
    call's, which says so)."""
    if ask:
        return _asked(call, index, graph or {"nodes": [], "edges": []}, ask)[:MAX_QUESTIONS]
    step = call.steps[index]
    asked = []
    senders = sum(1 for s in call.steps[:index] for g in s.grad_inputs
                  if g and g.to == step.node)
    received = step.grad_outputs
    if senders >= 2 and len(received) == 1 and askable(received[0]) and \
            step.name != "AccumulateGrad":  # there, the .grad asked says the sum
        asked.append(Question("received", "received", step.node, received[0]))
    asked += [Question(f"sent{k}", "sent", g.to or "", g)
              for k, g in enumerate(step.grad_inputs) if askable(g)]
    return (asked + _grads(call, index, lambda grad: True))[:MAX_QUESTIONS]


def _grads(call: Call, index: int, wanted: Callable[[LeafGrad], bool]) -> list[Question]:
    """The `.grad`s step `index` writes that `wanted` takes (a leaf_grads entry)."""
    return [Question(f"grad{k}", "grad", g.leaf, g.grad)
            for k, g in enumerate(call.leaf_grads) if g.after == index + 1
            and askable(g.grad) and wanted(g)]


def _asked(call: Call, index: int, graph: Graph,
           ask: tuple[str, ...]) -> list[Question]:
    step = call.steps[index]
    leaves = {item.removesuffix(".grad") for item in ask if item.endswith(".grad")}
    tensors = {node.id: node for node in graph.nodes if node.kind != "backward"
               and set(node.names or ()) & set(ask)}
    made = [edge.dst for edge in graph.edges if edge.kind == "grad"
            and edge.src == step.node and edge.dst in tensors]
    received = step.grad_outputs
    asked = [Question(f"of{k}", "of", tensor, received[0])
             for k, tensor in enumerate(made) if len(received) == 1 and askable(received[0])]
    return asked + _grads(call, index, lambda grad: bool(leaves & set(grad.names)))


def askable(gradient: Gradient | None) -> bool:
    """A gradient kept whole, of one to MAX_ASKED real values."""
    return bool(gradient) and not gradient.truncated and isinstance(
        gradient.values, list | int | float) and 0 < math.prod(gradient.shape) <= MAX_ASKED \
        and str(gradient.dtype).removeprefix("torch.").startswith(REAL)


def read(typed: str) -> list[float]:
    """What a learner typed as numbers, flat: `0.5`, `-2`, `[1, 2.5]`, `[[1, 0], [0, 1]]`,
    `1, 2, 3`, `nan`, `inf`. Unreadable (with a text key) for anything else."""
    if not typed.strip():
        raise Unreadable("predict_empty")
    if len(typed) > MAX_TYPED:
        raise Unreadable("predict_unreadable")
    try:
        tree = ast.parse(typed.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise Unreadable("predict_unreadable") from None
    out: list[float] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.List | ast.Tuple):
            stack.extend(reversed(node.elts))
        else:
            out.append(_number(node))
    return out


def _number(node: ast.expr) -> float:
    sign = 1.0
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign, node = (-sign if isinstance(node.op, ast.USub) else sign), node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * (math.inf if abs(node.value) > 1e308 else float(node.value))
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return sign * float(node.id)
    raise Unreadable("predict_unreadable")


def _float(value: Any) -> float:
    """A value the engine sent as a float; an integer beyond a float's range as infinite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def judge(typed: list[float], gradient: Gradient) -> Verdict:
    """`typed` against the engine's `gradient`: one number stands for every value; else as
    many numbers as it has, in order. A value is right within RTOL of the engine's, or
    ATOL (nan only as nan, infinities exactly)."""
    expected = [_float(parsed(v)) for v in flat(gradient.values)]
    if len(typed) == 1:
        typed = typed * len(expected)
    if len(typed) != len(expected):
        return Verdict(False, typed, expected, tuple(range(len(expected))))
    wrong = tuple(k for k, (a, e) in enumerate(zip(typed, expected, strict=True))
                  if not _close(a, e))
    return Verdict(not wrong, typed, expected, wrong)


def shaped(values: list[float], shape: list[int]) -> Any:
    """Flat `values` nested as a tensor of `shape` holds them (as they are, if they do not
    fill it)."""
    if len(values) != math.prod(shape):
        return values
    if not shape:
        return values[0]
    for size in reversed(shape[1:]):
        values = [values[k:k + size] for k in range(0, len(values), size)]
    return values


def entry(flat: int, shape: list[int]) -> str:
    """Where the value at position `flat` (in order) stands in a tensor of `shape`, as it is
    indexed: `[1]`, `[0, 1]`."""
    index = []
    for size in reversed(shape):
        flat, at = divmod(flat, size) if size else (flat, 0)
        index.append(at)
    return f"[{', '.join(map(str, reversed(index)))}]"


def _close(typed: float, expected: float) -> bool:
    if math.isnan(expected) or math.isinf(expected):
        return typed == expected or (math.isnan(typed) and math.isnan(expected))
    return abs(typed - expected) <= ATOL + RTOL * abs(expected)


def score(answers: dict[int, dict[str, Verdict]]) -> tuple[int, int]:
    """(right, asked) over the answered steps of one backward call."""
    verdicts = [v for step in answers.values() for v in step.values()]
    return sum(v.right for v in verdicts), len(verdicts)
