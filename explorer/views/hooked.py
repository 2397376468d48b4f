"""Where a hook of the program's changed a gradient between two nodes: a node received other
than the sum of what the edges into it carried. The engine runs a tensor's hooks
(`y.register_hook`) and a node's pre-hooks (`grad_fn.register_prehook`) after the gradient
arrives and before the node runs, so each edge says what was sent and the node what it got.
Read from the recorded steps, judged on the values a call kept (their leading block), or on
the norm where one edge sent the whole; pure."""

from __future__ import annotations

import math
from typing import Any

from explorer.trace.schema import Call, Gradient
from explorer.views.numbers import flat

# How close a sum of gradients added in another order is, relatively, by dtype (a machine
# epsilon or more: half precision keeps 11 bits, bfloat16 8); in absolute terms, this much.
RTOL = {"torch.float16": 2e-3, "torch.bfloat16": 1.6e-2}
RTOL_ELSE, ATOL = 1e-5, 1e-6


def changed(call: Call) -> dict[int, list[Gradient]]:
    """The engine steps (by index) whose node received other than what the edges into it
    carried, each with those gradients; where the pass starts, other than the `v` of
    `y.backward(v)` (where the call kept it). A node with several outputs (which edge carried
    which is not recorded), or with nothing known to be carried to it (a scalar root's
    gradient, 1 unless given), is not judged."""
    carried: dict[str, list[Gradient]] = {}
    found: dict[int, list[Gradient]] = {}
    for index, step in enumerate(call.steps):
        parts = carried.pop(step.node, [])
        got = step.grad_outputs[0] if len(step.grad_outputs) == 1 else None
        if index == 0 and call.vector is not None and got is not None:  # into y's node
            parts.append(_given(call.vector, got.shape))
        if got is not None and parts and _differs(parts, got):
            found[index] = parts
        for sent in step.grad_inputs:
            if sent is not None and sent.to:
                carried.setdefault(sent.to, []).append(sent)
    return found


def _differs(parts: list[Gradient], got: Gradient) -> bool:
    """Whether the sum of `parts` is not `got`, as far as their values tell (False where
    they cannot: other shapes, values left out or not real numbers)."""
    if any(part.shape != got.shape for part in parts):
        return False
    values = [flat(part.values) for part in parts]
    received = flat(got.values)
    rtol = max(RTOL.get(g.dtype, RTOL_ELSE) for g in (*parts, got))
    if all(len(v) == len(received) for v in values) and all(
            type(x) in (int, float) for v in (*values, received) for x in v):
        return any(not _same(sum(column), value, sum(map(abs, column)), rtol)
                   for *column, value in zip(*values, received, strict=True))
    if len(parts) == 1:  # one edge: its norm is the node's
        return not _same(parts[0].norm, got.norm, parts[0].norm, rtol)
    return False


def _same(total: float, value: float, size: float, rtol: float) -> bool:
    """Whether `value` is `total` (of numbers as large as `size` together), to rounding
    (`rtol`); a NaN or an infinity is itself."""
    if not (math.isfinite(total) and math.isfinite(value)):
        return total == value or (math.isnan(total) and math.isnan(value))
    return math.isclose(total, value, rel_tol=rtol, abs_tol=ATOL + rtol * size)


def _given(vector: list[Any], shape: list[int]) -> Gradient:
    """The gradient `y.backward(v)` started from, as the call kept `v` (its values, flat; of
    y's `shape`)."""
    values = flat(vector)
    numbers = [abs(v) for v in values if type(v) in (int, float)]
    return Gradient(shape=shape, dtype="", device="", values=values, truncated=False,
                    norm=math.sqrt(sum(v * v for v in numbers)), max_abs=max(numbers, default=0))
