"""How a Trace reads on a page: table rows, short previews, the statement of a step. Pure."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.trace import Variables
from explorer.trace.schema import Graph, Node, Variable
from explorer.views.numbers import exact, flat, number, parsed, written

# Python's names for the types of functions and classes, as a learner says them.
PYTHON_TYPES = {"type": "class", "builtin_function_or_method": "function"}
FEW = 8  # values a tensor may have to be written as its values everywhere, never summed up
CHARS = 28  # characters a picture gives one tensor's values past FEW


def few(values: Any, truncated: bool = False) -> bool:
    """Whether `values` (all a tensor's, unless `truncated`) are few enough (FEW) that the
    pages write them as they are, not as a shape and norm."""
    return not truncated and isinstance(parsed(values), list | int | float | complex) and (
        len(flat(values, FEW + 1)) <= FEW)


def preview(values: Any, limit: int = 40) -> str:
    """A one-line summary of a value, its numbers as PyTorch prints them: a few (`few`) in
    full; past `limit` characters, values left off whole (`…`), a text cut."""
    if isinstance(parsed(values), str):  # a text, not a number sent as text
        return cut(repr(values), limit)
    return written(values, None if few(values) else limit)


def value_preview(info: Variable, limit: int = 40) -> str:
    """preview() of a variable's value: a text quoted, as Python writes it; what a run sent as
    a repr (an object's, a list's, `<values unavailable…>`) as it reads, on one line (each
    line break and the indents around it a space), cut past `limit` characters."""
    if info.kind == "str" or not isinstance(parsed(info.values), str):
        return preview(info.values, limit)
    return cut(" ".join(line.strip() for line in info.values.split("\n")), limit)


def counted(names: Iterable[str]) -> str:
    """`names` in their order, each once, with how many bear it past one (`MulBackward0 ×57`)."""
    said = Counter(names)
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in said.items())


def cut(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters (`…` the last) when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stacked(values: Any) -> str:
    """Values written narrow, for a picture: a grid's a row a line, a vector's a value a
    line, each as print(tensor) writes it among the others; others on one line."""
    whole = written(values)
    if not isinstance(values, list) or len(values) < 2:
        return whole
    if not any(isinstance(v, list) for v in values):
        return ",\n ".join(whole.split(", "))
    if all(isinstance(row, list) and not any(isinstance(v, list) for v in row)
           for row in values):
        return "],\n [".join(whole.split("], ["))
    return whole


def compact(values: Any, shape: list[int] | None = None, norm: float | None = None,
            truncated: bool = False, chars: int = CHARS, rows: bool = False) -> str:
    """A tensor's values, to write on a picture: one number when all are the same (a
    gradient of ones, of 0.25s), a few (`few`) in full (with `rows`, narrow: `stacked`),
    more (given its `shape`) as its shape and 2-norm (`summed`), else as many as fit in
    `chars` characters. Never a number cut."""
    items = flat(values)
    if not truncated and items and all(v == items[0] for v in items):
        return preview(items[0], chars)
    if few(values, truncated):
        return stacked(values) if rows else written(values)
    return summed(values, shape, norm, truncated) or preview(values, chars)


def summed(values: Any, shape: list[int] | None, norm: float | None,
           truncated: bool) -> str | None:
    """A tensor (given its `shape`) as its shape and 2-norm: the `norm` of all its values
    when those sent were `truncated`, else that of the values; None where it has none."""
    items = flat(values)
    if norm is None and shape is not None and not truncated and all(
            type(v) in (int, float) for v in items):
        try:
            norm = math.sqrt(sum(v * v for v in items))
        except OverflowError:  # integers beyond a float's range
            norm = math.inf
    if norm is None or shape is None:
        return None
    return f"{'×'.join(map(str, shape))} ‖{number(norm)}‖"


def described(info: Variable, chars: int = CHARS, rows: bool = False) -> str:
    """compact() of a gradient or a variable as a run describes it (values, shape, the norm
    of all of it when the values are cut)."""
    return compact(info.values, info.shape, info.norm, bool(info.truncated), chars, rows)


def kept(values: Any, numel: int, norm: float | None, lang: str) -> str | None:
    """What of a tensor's `numel` values a page has, when it has only a leading block: how
    many, and the 2-norm of all of them if it was sent; None when it has them all."""
    count = len(flat(values)) if isinstance(values, list) else 0
    if not isinstance(values, list) or count >= numel:
        return None
    said = text("truncated", lang, shown=f"{count:,}", total=f"{numel:,}")
    if norm is not None:
        said += " " + text("norm_of_all", lang, total=f"{numel:,}", norm=exact(norm))
    return said


def variable(node: Node, variables: Variables) -> Variable | None:
    """The tensor variable a graph node names, as a step describes it (None: none)."""
    info = next((variables[n] for n in node.names or () if n in variables), None)
    return info if info is not None and info.kind == "tensor" else None


def node_values(graph: Graph, variables: Variables) -> dict[str, str]:
    """Graph node id -> the values and, once written, the `.grad` of the variable it names,
    as a few characters to write under its label."""
    notes = {}
    for node in graph.nodes:
        info = variable(node, variables)
        if info is None:
            continue
        lines = [f"= {described(info)}"] if info.values is not None else []
        if info.grad is not None:
            grad = compact(info.grad, info.shape, info.grad_norm,
                           info.grad_norm is not None)
            lines.append(f"grad {grad}")
        if info.tangent is not None:
            lines.append(f"tangent {compact(info.tangent, info.shape)}")
        if lines:
            notes[node.id] = "\n".join(lines)
    return notes


def variable_rows(now: Variables, before: Variables | None = None, lang: str = "en"
                  ) -> list[dict[str, Any]]:
    """One row per variable for the variables table (markdown: the run's words are shown as
    words); ● marks what this step changed. Inside forward-mode AD's dual level, a column
    gives each dual tensor's tangent."""
    dual = any(info.tangent is not None for info in now.values())
    rows = []
    for name, info in now.items():
        changed = before is not None and before.get(name) != info
        rows.append({
            "name": f"● {plain(name)}" if changed else plain(name),
            "type": plain(_type(info, lang)),  # a class's name is the program's to choose
            "dtype": plain(str(info.dtype or "").removeprefix("torch.")),
            "device": plain(info.device or ""),
            "requires_grad": _flag(info.requires_grad),
            "is_leaf": _flag(info.is_leaf),
            "grad_fn": plain(info.grad_fn or ""),
            "_version": "" if info.version is None else str(info.version),  # text: no NaN, no .0
            "value": code_span(value_preview(info)),
            ".grad": "" if info.grad is None else code_span(preview(info.grad)),
        } | ({"tangent": "" if info.tangent is None else code_span(preview(info.tangent))}
             if dual else {}))
    return rows


def _flag(value: bool | None) -> str:
    return "" if value is None else "✓" if value else "✗"


def _type(info: Variable, lang: str) -> str:
    """`tensor 2×3`, `tensor scalar`, `ndarray 5`, `list 3`, `int`, `class`..."""
    shape = info.shape
    if info.length is not None:
        return f"{info.type} {info.length}"
    if shape is None:
        return PYTHON_TYPES.get(info.type or "", info.type or info.kind)
    return f"{info.kind} {'×'.join(map(str, shape)) or text('type_scalar', lang)}"


def statement(code: str, first: int, last: int) -> str:
    """The source lines first..last of `code` (what one step ran), dedented."""
    lines = code.splitlines()[first - 1:last]
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:] for x in lines)
