"""Lay out DOT with graphviz's `dot`: SVG to show, or positions to animate. Time-capped."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

LAYOUT_TIMEOUT_S = 30.0


class LayoutError(Exception):
    """graphviz could not lay out the graph (missing, failed, or too slow)."""


def svg(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> str:
    """The SVG graphviz draws for `dot`."""
    return _dot(dot, "svg", timeout_s)


def _dot(dot: str, fmt: str, timeout_s: float) -> str:
    binary = shutil.which("dot")
    if binary is None:
        raise LayoutError("graphviz's `dot` is not installed (Debian: apt-get install graphviz)")
    try:
        done = subprocess.run([binary, f"-T{fmt}"], input=dot.encode(), capture_output=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"laying out the graph took more than {timeout_s:g} s") from None
    if done.returncode:
        raise LayoutError(done.stderr.decode(errors="replace").strip()[:300])
    return done.stdout.decode()


def positions(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> dict[str, Any]:
    """graphviz's layout of `dot` as numbers (points): node centre and size, edge points."""
    layout = json.loads(_dot(dot, "json", timeout_s))
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
