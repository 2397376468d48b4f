"""How the explorer writes numbers, in one place: as `print(tensor)` does with PyTorch's
default print options (torch._tensor_str): the values of one tensor share one style, with
4 decimals (`0.1000`), whole numbers as `2.`, and scientific notation (`1.0000e-04`) when
their magnitudes call for it; integers and booleans as they are. Pure: no torch.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Literal

PRECISION = 4
Style = Literal["whole", "fixed", "sci"]


def style(values: list[Any]) -> Style:
    """The style PyTorch gives floats `values` (other items play no part), as
    torch._tensor_str._Formatter decides it from the finite non-zero ones."""
    sizes = [abs(v) for v in values if _float(v) and math.isfinite(v) and v != 0]
    if not sizes:
        return "whole"
    low, high = min(sizes), max(sizes)
    whole = all(v == math.ceil(v) for v in values if _float(v) and math.isfinite(v))
    if high / low > 1000.0 or high > 1.0e8 or (not whole and low < 1.0e-4):
        return "sci"
    return "whole" if whole else "fixed"


def number(value: Any, how: Style | None = None, imag: Style | None = None) -> str:
    """One value written in style `how` (None: its own); a complex one with its imaginary
    part in style `imag`."""
    value = parsed(value)
    if isinstance(value, complex):
        real = number(value.real, how or style([value.real]))
        im = number(value.imag, imag or style([value.imag]))
        return f"{real}{'' if im.startswith(('-', '+')) else '+'}{im}j"
    if not _float(value):
        return str(value)  # ints, booleans, a text a run sent (<values unavailable…>)
    how = how or style([value])
    if not math.isfinite(value):
        return str(value)
    if how == "sci":
        return f"{value:.{PRECISION}e}"
    return f"{value:.0f}." if how == "whole" else f"{value:.{PRECISION}f}"


def written(values: Any, limit: int | None = None) -> str:
    """Nested values as PyTorch writes a tensor's (`[[1., 2.], [3., 4.]]`), all in one
    style; past `limit` characters, the values that do not fit are left off whole (`…`),
    never cut."""
    tokens = list(_tokens(values, _styles(values)))
    whole = "".join(tokens)
    if limit is None or len(whole) <= limit or not isinstance(values, list):
        return whole  # one number is written whole, however long
    kept: list[str] = []
    depth = 0
    for token in tokens:
        if token not in ("[", "]", ", ") and len("".join(kept)) + len(token) + 3 + depth > limit:
            break  # no room for it, `, …` and the brackets to close
        kept.append(token)
        depth += {"[": 1, "]": -1}.get(token, 0)
    return "".join(kept) + "…" + "]" * depth


def written_each(values: Any) -> Any:
    """Nested values with each written in the style of them all: a table's cells."""
    how = _styles(values)

    def each(item: Any) -> Any:
        return [each(v) for v in item] if isinstance(item, list) else number(item, *how)

    return each(values)


def _styles(values: Any) -> tuple[Style, Style]:
    """The style of the values' real parts and of their imaginary parts."""
    items = [parsed(v) for v in flat(values)]
    reals = [v.real if isinstance(v, complex) else v for v in items]
    return style(reals), style([v.imag for v in items if isinstance(v, complex)])


def _tokens(values: Any, how: tuple[Style, Style]) -> Any:
    """The brackets, separators and numbers that write `values`."""
    if not isinstance(values, list):
        yield number(values, *how)
        return
    yield "["
    for k, item in enumerate(values):
        if k:
            yield ", "
        yield from _tokens(item, how)
    yield "]"


def flat(values: Any) -> list[Any]:
    """The items of nested lists, in order."""
    out: list[Any] = []
    stack = [values]
    while stack:  # a run sends a few hundred values at most (explorer.runner.validate)
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            out.append(item)
    return out


def _float(value: Any) -> bool:
    return isinstance(value, float)


def parsed(value: Any) -> Any:
    """A number a run sent as text (JSON has no nan, infinity or complex) as a number."""
    if not isinstance(value, str):
        return value
    if value in ("nan", "inf", "-inf"):
        return float(value)
    if value.endswith(("j", "j)")) and len(value) < 100:
        with contextlib.suppress(ValueError):
            return complex(value)
    return value
