"""Lay out DOT with graphviz's `dot`: SVG to show, PNG to download, or positions to animate.
Time-capped.

`positions` runs `dot` once for both: it keeps the SVG drawn with the positions for the
`svg` call that follows (the backward page asks for both of one graph), so a graph is laid
out once, not twice.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import shutil
import subprocess
import threading
from collections import defaultdict
from typing import Any

LAYOUT_TIMEOUT_S = 30.0
MAX_STATEMENTS = 12_000  # nodes + edges graphviz is asked to lay out (~2 s at 1,500 nodes)
# Edges tangled among few nodes cost `dot` far more than many nodes do: 500 edges among 65
# nodes took 10 s, 860 among 85 more than 40 s. torchviz's graphs have one or two per node.
EDGES_PER_NODE, SPARE_EDGES = 4, 200
# Network simplex (ranking, then placing) stops after this many passes per node: graphs that
# need more are the tangled ones, and a good-enough layout soon beats the best one late.
NETWORK_SIMPLEX = ("-Gnslimit=2", "-Gnslimit1=2")
# Long edges cost as much: `dot` makes a node for each rank an edge crosses (a loop that
# adds `x` at each of its 100 turns: 15,000 crossings, 9 s; 60,000: past 30 s and 3 GB).
MAX_CROSSINGS = 8_000
NODE_LINE = re.compile(r'(?m)^\t"?[\w.\[\]]+"? \[label=')
EDGE_LINE = re.compile(r'(?m)^\t("?[\w.\[\]]+"?) -> ("?[\w.\[\]]+"?)')
SVG_END = "</svg>\n"
KEPT_SVGS = 4  # SVGs drawn by `positions` and not yet asked for
KEPT_FAILURES = 64  # graphs that could not be laid out: not tried again

_drawn: dict[str, str] = {}  # DOT -> its SVG, drawn by `positions` for a later `svg`
_failed: dict[int, str] = {}  # hash of a DOT -> why it could not be laid out
_drawn_lock = threading.Lock()
DOT_MEMORY = 2 << 30  # bytes of address space one `dot` may use
_running = threading.BoundedSemaphore(2)  # `dot`s at once


class LayoutError(Exception):
    """graphviz could not lay out the graph (missing, failed, or too slow)."""


class TooLarge(LayoutError):
    """A graph with more nodes and edges than `dot` is given: refused before it runs."""

    def __init__(self, statements: int) -> None:
        super().__init__(f"the graph has {statements:,} nodes and edges, more than the "
                         f"{MAX_STATEMENTS:,} that can be laid out here; draw it for fewer "
                         "variables")
        self.statements = statements


class TooTangled(LayoutError):
    """A graph whose edges are too many for its nodes, or too long: refused before `dot`."""

    def __init__(self, nodes: int, edges: int, crossings: int = 0) -> None:
        super().__init__(f"the graph has {edges:,} edges between {nodes:,} nodes, crossing "
                         f"{crossings:,} ranks, more than can be laid out here; draw it for "
                         "fewer variables")
        self.nodes, self.edges, self.crossings = nodes, edges, crossings


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
    # A statement starts a line with one tab (none in a label: explorer.runner.graph_view._quote),
    # a node's with an id (plain, as explorer.runner.validate checks) and its label.
    nodes, edges = len(NODE_LINE.findall(dot)), EDGE_LINE.findall(dot)
    if len(edges) > EDGES_PER_NODE * nodes + SPARE_EDGES:
        raise TooTangled(nodes, len(edges))
    if (crossings := _crossings(edges)) > MAX_CROSSINGS:
        raise TooTangled(nodes, len(edges), crossings)
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


def _crossings(edges: list[tuple[str, str]]) -> int:
    """The ranks the edges cross past their first, with nodes ranked by their longest path
    from a source: a ranking `dot` may better, never by much on an autograd graph."""
    after: dict[str, list[str]] = defaultdict(list)
    waiting: dict[str, int] = defaultdict(int)  # edges into a node not yet ranked through
    for tail, head in edges:
        after[tail].append(head)
        waiting[head] += 1
    rank = {node: 0 for edge in edges for node in edge}
    ready = [node for node in rank if not waiting[node]]
    while ready:
        node = ready.pop()
        for head in after[node]:
            rank[head] = max(rank[head], rank[node] + 1)
            waiting[head] -= 1
            if not waiting[head]:
                ready.append(head)
    return sum(max(0, abs(rank[head] - rank[tail]) - 1) for tail, head in edges)


def _run_dot(dot: str, formats: list[str], timeout_s: float) -> bytes:
    binary = shutil.which("dot")
    if binary is None:
        raise LayoutError("graphviz's `dot` is not installed (Debian: apt-get install graphviz)")
    with _running:  # a few at a time, each with a memory cap, whatever the sessions ask
        proc = subprocess.Popen([binary, *NETWORK_SIMPLEX, *(f"-T{fmt}" for fmt in formats)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        with contextlib.suppress(OSError):  # gone already
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (DOT_MEMORY, DOT_MEMORY))
        try:
            out, err = proc.communicate(dot.encode(), timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise LayoutError(f"laying out the graph took more than {timeout_s:g} s") from None
    if proc.returncode:
        raise LayoutError(err.decode(errors="replace").strip()[:300] or "`dot` failed")
    return out


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
