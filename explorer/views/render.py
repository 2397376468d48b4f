"""Lay out DOT with graphviz's `dot`: SVG to show, PNG to download, or positions to animate.
Time-capped.

`positions` runs `dot` once for both: it keeps the SVG drawn with the positions for the
`svg` call that follows (the backward page asks for both of one graph), so a graph is laid
out once, not twice.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from typing import Any

LAYOUT_TIMEOUT_S = 30.0
MAX_STATEMENTS = 12_000  # nodes + edges graphviz is asked to lay out (~2 s at 1,500 nodes)
SVG_END = "</svg>\n"
KEPT_SVGS = 4  # SVGs drawn by `positions` and not yet asked for
KEPT_FAILURES = 64  # graphs that could not be laid out: not tried again

_drawn: dict[str, str] = {}  # DOT -> its SVG, drawn by `positions` for a later `svg`
_failed: dict[int, str] = {}  # hash of a DOT -> why it could not be laid out
_drawn_lock = threading.Lock()


class LayoutError(Exception):
    """graphviz could not lay out the graph (missing, failed, or too slow)."""


class TooLarge(LayoutError):
    """A graph with more nodes and edges than `dot` is given: refused before it runs."""

    def __init__(self, statements: int) -> None:
        super().__init__(f"the graph has {statements:,} nodes and edges, more than the "
                         f"{MAX_STATEMENTS:,} that can be laid out here; draw it for fewer "
                         "variables")
        self.statements = statements


def svg(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> str:
    """The SVG graphviz draws for `dot`."""
    with _drawn_lock:
        picture = _drawn.pop(dot, None)
    return picture if picture is not None else _draw(dot, ["svg"], timeout_s).decode()


def png(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> bytes:
    """The PNG graphviz draws for `dot`."""
    return _draw(dot, ["png"], timeout_s)


def _draw(dot: str, formats: list[str], timeout_s: float) -> bytes:
    """graphviz's drawing of `dot`; a graph too big fails before `dot` runs, and one that
    failed once (too slow, refused) fails again at once, without `dot`."""
    statements = dot.count("\n\t")
    if statements > MAX_STATEMENTS:
        raise TooLarge(statements)
    with _drawn_lock:
        failed = _failed.get(hash(dot))
    if failed is not None:
        raise LayoutError(failed)
    try:
        return _run_dot(dot, formats, timeout_s)
    except LayoutError as error:
        with _drawn_lock:
            if len(_failed) >= KEPT_FAILURES:
                del _failed[next(iter(_failed))]
            _failed[hash(dot)] = str(error)
        raise


def _run_dot(dot: str, formats: list[str], timeout_s: float) -> bytes:
    binary = shutil.which("dot")
    if binary is None:
        raise LayoutError("graphviz's `dot` is not installed (Debian: apt-get install graphviz)")
    try:
        done = subprocess.run([binary, *(f"-T{fmt}" for fmt in formats)], input=dot.encode(),
                              capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"laying out the graph took more than {timeout_s:g} s") from None
    if done.returncode:
        raise LayoutError(done.stderr.decode(errors="replace").strip()[:300])
    return done.stdout


def positions(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> dict[str, Any]:
    """graphviz's layout of `dot` as numbers (points): node centre and size, edge points."""
    # One run writes the SVG (labels escaped, so its first end tag is its end), then the
    # layout as JSON without drawing instructions (json0).
    both = _draw(dot, ["svg", "json0"], timeout_s).decode()
    end = both.index(SVG_END) + len(SVG_END)
    with _drawn_lock:
        if len(_drawn) >= KEPT_SVGS:
            del _drawn[next(iter(_drawn))]
        _drawn[dot] = both[:end]
    layout = json.loads(both[end:])
    objects = layout.get("objects", [])
    nodes = {o["name"]: (*_point(o["pos"]), float(o["width"]) * 72, float(o["height"]) * 72)
             for o in objects if "pos" in o}
    edges = []
    for e in layout.get("edges", []):
        points = [_point(p) for p in e["pos"].split() if not p.startswith(("e,", "s,"))]
        edges.append((objects[e["tail"]]["name"], objects[e["head"]]["name"], points))
    bb = [float(v) for v in layout["bb"].split(",")]
    return {"nodes": nodes, "edges": edges, "bb": bb}


def _point(text: str) -> tuple[float, float]:
    x, y = text.split(",")[-2:]
    return float(x), float(y)
