"""How a Trace reads on a page: table rows, short previews and the code listing. Pure."""

from __future__ import annotations

import html
from typing import Any

from explorer.trace import Variables

COLUMNS = ("name", "kind", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn",
           "version", "value", "grad", "changed")


def preview(values: Any, limit: int = 60) -> str:
    """A one-line summary of a value: numbers rounded, long lists cut with an ellipsis."""
    text = _short(values)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_short(v) for v in values[:8]) + (", …" if len(values) > 8
                                                                else "") + "]"
    if isinstance(values, float):
        return f"{values:.4g}"
    return str(values)


def variable_rows(now: Variables, before: Variables | None = None) -> list[dict[str, Any]]:
    """One row per variable for the variables table, marking what this step changed."""
    rows = []
    for name, info in now.items():
        shape = info.get("shape")
        rows.append({
            "name": name,
            "kind": info["kind"],
            "shape": "" if shape is None else "×".join(map(str, shape)) or "scalar",
            "dtype": info.get("dtype", info.get("type", "")),
            "device": info.get("device", ""),
            "requires_grad": info.get("requires_grad"),
            "is_leaf": info.get("is_leaf"),
            "grad_fn": info.get("grad_fn") or "",
            "version": info.get("version"),
            "value": preview(info.get("values")),
            "grad": "" if info.get("grad") is None else preview(info["grad"]),
            "changed": "●" if before is not None and before.get(name) != info else "",
        })
    return rows


def code_html(code: str, first: int, last: int, error_line: int | None = None) -> str:
    """The program as numbered lines, lines first..last marked as the step just run."""
    rows = []
    for number, line in enumerate(code.splitlines(), start=1):
        css = "err" if number == error_line else "cur" if first <= number <= last else ""
        marker = "▶" if css else ""
        rows.append(f'<div class="ln {css}"><span class="no">{marker}{number}</span>'
                    f"<code>{html.escape(line) or ' '}</code></div>")
    return f'<div class="listing">{"".join(rows)}</div>'


LISTING_CSS = """<style>
.listing{font-family:monospace;font-size:.85rem;border:1px solid #ddd;border-radius:6px;
  padding:.4rem 0;max-height:26rem;overflow:auto;background:#fbfbfb}
.listing .ln{display:flex;white-space:pre;padding:0 .5rem}
.listing .ln code{background:none;color:#222;padding:0}
.listing .no{color:#999;width:3.2rem;flex:none;text-align:right;padding-right:.8rem}
.listing .cur{background:#fff1d6}.listing .cur .no{color:#d9480f;font-weight:bold}
.listing .err{background:#ffe3e3}.listing .err .no{color:#c92a2a;font-weight:bold}
</style>"""
