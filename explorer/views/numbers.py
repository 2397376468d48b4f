"""How the explorer writes numbers, in one place: as `print(tensor)` does with PyTorch's
default print options (torch._tensor_str): the values of one tensor share one style, with
4 decimals (`0.1000`), whole numbers as `2.`, and scientific notation (`1.0000e-04`) when
their magnitudes call for it; integers and booleans as they are. In full (`exact`), with as
many decimals as `torch.set_printoptions(precision=…)` needs for each value to read back as
the tensor's own. Pure: no torch.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import struct
from collections.abc import Callable, Iterator
from typing import Any, Literal

PRECISION = 4
MOST = 24  # decimals that write any double in full: 17 significant digits from 1e-4 up
# How a dtype's values are stored, where not as a double: the struct format that rounds a
# double to it, or bfloat16 (`_stored`).
STORED = {"float16": "e", "complex32": "e", "float32": "f", "complex64": "f",
          "bfloat16": "bfloat16"}
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


def number(value: Any, how: Style | None = None, imag: Style | None = None,
           decimals: int = PRECISION) -> str:
    """One value written in style `how` (None: its own) with `decimals`; a complex one with
    its imaginary part in style `imag`."""
    value = parsed(value)
    if isinstance(value, complex):
        real = number(value.real, how or style([value.real]), decimals=decimals)
        im = number(value.imag, imag or style([value.imag]), decimals=decimals)
        return f"{real}{'' if im.startswith(('-', '+')) else '+'}{im}j"
    if not _float(value):
        return str(value)  # ints, booleans, a text a run sent (<values unavailable…>)
    how = how or style([value])
    if not math.isfinite(value):
        return str(value)
    if how == "sci":
        return f"{value:.{decimals}e}"
    return f"{value:.0f}." if how == "whole" else f"{value:.{decimals}f}"


def written(values: Any, limit: int | None = None) -> str:
    """Nested values as PyTorch writes a tensor's (`[[1., 2.], [3., 4.]]`), all in one
    style; past `limit` characters, the values that do not fit are left off whole (`…`),
    never cut. Only the values that fit are written out."""
    tokens = _tokens(values, _styles(values), PRECISION)
    if limit is None or not isinstance(values, list):
        return "".join(tokens)  # one number is written whole, however long
    kept: list[str] = []
    length = depth = 0  # of `kept`, and its brackets left open
    for token in tokens:
        if token not in ("[", "]", ", ") and length + len(token) + 3 + depth > limit:
            rest = _within(itertools.chain([token], tokens), limit - length)
            if rest is not None:  # the whole fits all the same
                return "".join(kept + rest)
            return "".join(kept) + "…" + "]" * depth  # no room for it, `, …` and the brackets
        kept.append(token)
        length += len(token)
        depth += {"[": 1, "]": -1}.get(token, 0)
    return "".join(kept)


def _within(tokens: Iterator[str], room: int) -> list[str] | None:
    """All of `tokens` if they take `room` characters at most, else None (read no further)."""
    out: list[str] = []
    for token in tokens:
        room -= len(token)
        if room < 0:
            return None
        out.append(token)
    return out


def exact(values: Any, dtype: str = "float64", shape: list[int] | None = None) -> str:
    """Nested values of a tensor of `dtype` written in full: as print(tensor) writes them
    with the fewest decimals (PRECISION at least) at which each reads back as the value it
    is, in that dtype; values that are a leading block of a tensor of `shape`, with `…`
    where the rest would be."""
    return "".join(_tokens(values, _styles(values), full_decimals(values, dtype), shape))


def full_decimals(values: Any, dtype: str = "float64") -> int:
    """The decimals `exact` writes values of a tensor of `dtype` with."""
    how = _styles(values)
    stored = STORED.get(dtype.removeprefix("torch."))
    return max((_decimals(v, how, stored) for v in flat(values)), default=PRECISION)


def _decimals(value: Any, how: tuple[Style, Style], stored: str | None) -> int:
    """The fewest decimals (PRECISION at least) that write `value` so that it reads back."""
    value = parsed(value)
    parts = [value.real, value.imag] if isinstance(value, complex) else [value]
    if not any(_float(v) and math.isfinite(v) for v in parts):
        return PRECISION
    for decimals in range(PRECISION, MOST):
        shown = number(value, *how, decimals=decimals)
        back = parsed(shown) if isinstance(value, complex) else float(shown.rstrip("."))
        if _same(back, value, stored):
            return decimals
    return MOST


def _same(a: Any, b: Any, stored: str | None) -> bool:
    """Whether `a` and `b` are one value once stored as `stored` (None: as doubles)."""
    if isinstance(b, complex):
        return _same(a.real, b.real, stored) and _same(a.imag, b.imag, stored)
    if stored is None or not math.isfinite(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    return _stored(a, stored) == _stored(b, stored)


def _stored(value: float, stored: str) -> Any:
    """The bits of `value` stored as `stored`: a struct format, or bfloat16 (a float32's top
    16 bits, rounded to the nearest, ties to even)."""
    if stored != "bfloat16":
        return struct.pack(stored, value)
    bits = int.from_bytes(struct.pack("<f", value), "little")
    return (bits + 0x7FFF + (bits >> 16 & 1)) >> 16


def grid(values: list[Any]) -> list[list[Any]] | None:
    """`values` as a table's rows: a list of numbers as one row, equally long lists of numbers
    as they are; None for anything else (deeper, or ragged as a Python list may be)."""
    if not any(isinstance(v, list) for v in values):
        return [values]
    rows = values
    if any(not isinstance(row, list) or len(row) != len(rows[0]) for row in rows) or any(
            isinstance(v, list) for row in rows for v in row):
        return None
    return rows


def written_each(values: Any) -> Any:
    """Nested values with each written in the style of them all: a table's cells."""
    write = writer(values)

    def each(item: Any) -> Any:
        return [each(v) for v in item] if isinstance(item, list) else write(item)

    return each(values)


def writer(values: Any, decimals: int = PRECISION) -> Callable[[Any], str]:
    """What writes one of nested `values` in the style of them all, with `decimals`."""
    how = _styles(values)
    return lambda value: number(value, *how, decimals=decimals)


def _styles(values: Any) -> tuple[Style, Style]:
    """The style of the values' real parts and of their imaginary parts."""
    items = [parsed(v) for v in flat(values)]
    reals = [v.real if isinstance(v, complex) else v for v in items]
    return style(reals), style([v.imag for v in items if isinstance(v, complex)])


def _tokens(values: Any, how: tuple[Style, Style], decimals: int,
            shape: list[int] | None = None) -> Any:
    """The brackets, separators and numbers that write `values`, with `decimals`; `, …`
    after those fewer than the `shape` they are the start of."""
    if not isinstance(values, list):
        yield number(values, *how, decimals=decimals)
        return
    yield "["
    for k, item in enumerate(values):
        if k:
            yield ", "
        yield from _tokens(item, how, decimals, shape and shape[1:])
    if shape and len(values) < shape[0]:
        yield ", …"
    yield "]"


def flat(values: Any, most: int | None = None) -> list[Any]:
    """The items of nested lists, in order (the first `most` of them, given that)."""
    out: list[Any] = []
    stack = [values]
    while stack and (most is None or len(out) < most):
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
