"""The reports' text: fixed-width tables, milliseconds and kilobytes."""

from __future__ import annotations


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A fixed-width table: first column left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def kb(size: int) -> str:
    return f"{size / 1024:.1f}"
