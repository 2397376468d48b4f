"""Lay out DOT with graphviz's `dot`: SVG to show, PNG to download, or positions to animate.
Time-capped.

`positions` runs `dot` once for both: it keeps the SVG drawn with the positions for the
`svg` call that follows (the backward page asks for both of one graph), so a graph is laid
out once, not twice. SVGs and positions come from `dot` processes kept running, each laying
out graph after graph (`_Dot`): a new `dot` spends ~10 ms loading its plugins first. Where a
kept one fails, a new `dot` draws the graph once more, and says why if it fails too.

A kept `dot` is shared by every visitor, so it is a wall of its own. It is given only DOT
the server wrote (`_request`: torchviz's form, every text through
explorer.trace.graph_view._quote, no control character inside a line), named by a fresh
random name; an answer counts only if it is exactly one drawing per format, each naming
that graph (`_answer`). Anything else ends that `dot`, and a new one draws the graph.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import resource
import secrets
import select
import shutil
import subprocess
import threading
import time
from collections import defaultdict
from typing import Any

from explorer.trace.check import EDGES_PER_NODE
from explorer.trace.graph_view import CONTROLS

LAYOUT_TIMEOUT_S = 30.0
MAX_STATEMENTS = 12_000  # nodes + edges graphviz is asked to lay out (~2 s at 1,500 nodes)
# Edges tangled among few nodes cost `dot` far more than many nodes do: 500 edges among 65
# nodes took 10 s, 860 among 85 more than 40 s. torchviz's graphs have one or two per node:
# `dot` gets at most EDGES_PER_NODE (what a run's graph may have) per node, and these spare.
SPARE_EDGES = 200
# Network simplex (ranking, then placing) stops after this many passes per node: graphs that
# need more are the tangled ones, and a good-enough layout soon beats the best one late.
NETWORK_SIMPLEX = ("-Gnslimit=2", "-Gnslimit1=2")
# Long edges cost as much: `dot` makes a node for each rank an edge crosses (a loop that
# adds `x` at each of its 100 turns: 15,000 crossings, 9 s; 60,000: past 30 s and 3 GB).
MAX_CROSSINGS = 8_000
NODE_LINE = re.compile(r'(?m)^\t"?[\w.\[\]]+"? \[label=')
EDGE_LINE = re.compile(r'(?m)^\t("?[\w.\[\]]+"?) -> ("?[\w.\[\]]+"?)')
SVG_END = "</svg>\n"
# Where an SVG names its graph (the heading's comment, the graph's title: a tooltip) and
# gives its id, as a kept `dot` writes them from its second graph on (see `_answer`).
TITLE_START = b"<!-- Title: "
TITLE = TITLE_START + b"%s Pages: 1 -->"
SVG_GRAPH = re.compile(rb'<g id="[\w,]*graph0" class="graph"([^>]*)>\n<title>explorer_[0-9a-f]{32}'
                       rb'</title>')
HEAD, TAIL = "digraph {\n", "}\n"  # of every DOT the server writes (graph_view._source)
# A control character inside a line: no DOT the server writes has one (graph_view._quote).
INSIDE_A_LINE = re.compile(f"(?![\\n\\t])[{CONTROLS}]")
KEPT_SVGS = 4  # SVGs drawn by `positions` and not yet asked for
KEPT_FAILURES = 64  # graphs that could not be laid out: not tried again

_drawn: dict[str, str] = {}  # DOT -> its SVG, drawn by `positions` for a later `svg`
_failed: dict[int, str] = {}  # hash of a DOT -> why it could not be laid out
_drawn_lock = threading.Lock()
DOT_MEMORY = 2 << 30  # bytes of address space one `dot` may use
DOTS = 2  # `dot`s at once drawing pages
DOWNLOADS = 1  # and drawing a file to download (a PNG), never in a page's place
GRAPHS_PER_DOT = 256  # a kept `dot` is replaced after this many graphs (graphviz may leak)
_running = threading.BoundedSemaphore(DOTS)
_downloading = threading.BoundedSemaphore(DOWNLOADS)


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
    """The PNG graphviz draws for `dot`, a download: it waits for a download's `dot`, never
    for a page's."""
    return _draw(dot, ["png"], timeout_s, _downloading)


def _draw(dot: str, formats: list[str], timeout_s: float,
          slots: threading.BoundedSemaphore = _running) -> bytes:
    """graphviz's drawing of `dot` by one of the `dot`s `slots` lets run at once; a graph too
    big fails before `dot` runs, and one that failed once (too slow, refused) fails again at
    once, without `dot`."""
    statements = dot.count("\n\t")
    if statements > MAX_STATEMENTS:
        raise TooLarge(statements)
    # A statement starts a line with one tab (none in a label: explorer.trace.graph_view._quote),
    # a node's with an id (plain, as explorer.trace.check checks) and its label.
    nodes, edges = len(NODE_LINE.findall(dot)), EDGE_LINE.findall(dot)
    if len(edges) > EDGES_PER_NODE * nodes + SPARE_EDGES:
        raise TooTangled(nodes, len(edges))
    if (crossings := _crossings(edges)) > MAX_CROSSINGS:
        raise TooTangled(nodes, len(edges), crossings)
    request, name = _request(dot)
    with _drawn_lock:
        failed = _failed.get(hash(dot))
    if failed is not None:
        raise LayoutError(failed)
    if not slots.acquire(timeout=timeout_s):  # a few at a time, whatever the sessions ask
        raise LayoutError(f"the server was busy drawing other graphs for {timeout_s:g} s: "
                          "try again in a moment")
    try:
        return _run_dot(request, name, formats, timeout_s)
    except LayoutError as error:
        with _drawn_lock:
            if len(_failed) >= KEPT_FAILURES:
                del _failed[next(iter(_failed))]
            _failed[hash(dot)] = str(error)
        raise
    finally:
        slots.release()


def _request(dot: str) -> tuple[bytes, bytes]:
    """`dot` named by a fresh random name, and that name: what a `dot` is given. LayoutError
    for a text the server did not write (another header, a control character in a line)."""
    if not (dot.startswith(HEAD) and dot.endswith(TAIL)) or INSIDE_A_LINE.search(dot):
        raise LayoutError("this is not a graph the explorer wrote")
    name = f"explorer_{secrets.token_hex(16)}"
    return f"digraph {name} {{\n{dot[len(HEAD):]}".encode(), name.encode()


def _crossings(edges: list[tuple[str, str]]) -> int:
    """The ranks the edges cross past their first, with nodes ranked by their longest path
    from a source, then each node with one edge in or none (a layer's weight, its
    AccumulateGrad) as far down as the first node it leads to allows, as `dot` puts it (its
    edges out shorten by as much as its one edge in grows, or more). A ranking `dot` may
    better, never by much on an autograd graph."""
    after: dict[str, list[str]] = defaultdict(list)
    into: dict[str, int] = defaultdict(int)
    for tail, head in edges:
        after[tail].append(head)
        into[head] += 1
    rank = {node: 0 for edge in edges for node in edge}
    waiting = dict(into)  # edges into a node not yet ranked through
    ready = [node for node in rank if not into[node]]
    ranked = []
    while ready:
        node = ready.pop()
        ranked.append(node)
        for head in after[node]:
            rank[head] = max(rank[head], rank[node] + 1)
            waiting[head] -= 1
            if not waiting[head]:
                ready.append(head)
    for node in reversed(ranked):  # the nodes after it are placed already
        if into[node] <= 1 and after[node]:
            rank[node] = min(rank[head] for head in after[node]) - 1
    return sum(max(0, abs(rank[head] - rank[tail]) - 1) for tail, head in edges)


def _run_dot(request: bytes, name: bytes, formats: list[str], timeout_s: float) -> bytes:
    """`dot`'s answer to `request`, by a kept `dot` where there is one for `formats`, else by
    one of its own; each with a memory cap."""
    if tuple(formats) in _Dot.ENDS:
        kept = _Dot.take(formats)
        try:
            out = kept.draw(request, name, timeout_s)
        except TimeoutError:
            raise LayoutError(_too_slow(timeout_s)) from None
        finally:
            kept.give_back()
        if out is not None:
            return out
    proc = _start(formats, stderr=subprocess.PIPE)  # says why, should it fail again
    try:
        out, err = proc.communicate(request, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise LayoutError(_too_slow(timeout_s)) from None
    if proc.returncode:
        raise LayoutError(err.decode(errors="replace").strip()[:300] or "`dot` failed")
    if "svg" not in formats:
        return out
    answer = _answer(out, name, formats)
    if answer is None:
        raise LayoutError("graphviz answered with another graph than the one it was given")
    return answer


def _too_slow(timeout_s: float) -> str:
    return f"laying out the graph took more than {timeout_s:g} s"


def _start(formats: list[str] | tuple[str, ...], stderr: int) -> subprocess.Popen[bytes]:
    """A `dot` drawing what it reads in `formats`, with its memory capped."""
    binary = shutil.which("dot")
    if binary is None:
        raise LayoutError("graphviz's `dot` is not installed (Debian: apt-get install graphviz)")
    proc = subprocess.Popen([binary, *NETWORK_SIMPLEX, *(f"-T{fmt}" for fmt in formats)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    with contextlib.suppress(OSError):  # gone already
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (DOT_MEMORY, DOT_MEMORY))
    return proc


class _Dot:
    """A `dot` kept running to lay out graph after graph in `formats`: it draws each graph
    once its closing brace is read, and each drawing ends as `ENDS` says (labels are
    escaped in both formats, so these ends occur nowhere else)."""

    ENDS = {("svg",): (SVG_END.encode(),), ("svg", "json0"): (SVG_END.encode(), b"\n}\n")}
    _idle: dict[tuple[str, ...], list[_Dot]] = defaultdict(list)
    _lock = threading.Lock()

    def __init__(self, formats: tuple[str, ...]) -> None:
        self.formats = formats
        self.proc = _start(formats, stderr=subprocess.DEVNULL)
        self.drawn = 0

    @classmethod
    def take(cls, formats: list[str]) -> _Dot:
        """An idle `dot` for `formats`, or a new one."""
        with cls._lock:
            idle = cls._idle[tuple(formats)]
            return idle.pop() if idle else cls(tuple(formats))

    def give_back(self) -> None:
        """Keep this `dot` for the next graph, unless it has ended or drawn enough."""
        if self.proc.poll() is None and self.drawn < GRAPHS_PER_DOT:
            with self._lock:
                self._idle[self.formats].append(self)
        else:
            self.close()

    def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.communicate()

    @classmethod
    def close_idle(cls) -> None:
        """End the idle `dot`s (at exit)."""
        with cls._lock:
            idle = [kept for each in cls._idle.values() for kept in each]
            cls._idle.clear()
        for kept in idle:
            kept.close()

    def draw(self, request: bytes, name: bytes, timeout_s: float) -> bytes | None:
        """The drawings of the graph `request` names `name`, as a new `dot` draws them; None
        if this `dot` failed or answered with anything else (it is ended); TimeoutError (it
        is ended) after `timeout_s`."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        self.drawn += 1
        try:
            self.proc.stdin.write(request)
            self.proc.stdin.flush()
        except OSError:
            self.close()
            return None
        out, source, ends = bytearray(), self.proc.stdout.fileno(), self.ENDS[self.formats]
        title = TITLE % name
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([source], [], [], left)[0]:
                self.close()
                raise TimeoutError
            chunk = os.read(source, 1 << 20)
            if not chunk:  # it failed and ended
                self.close()
                return None
            out += chunk
            named = out.find(TITLE_START)
            if named >= 0 and len(out) >= named + len(title) and not out.startswith(
                    title, named):  # another graph's drawing: out of step
                self.close()
                return None
            if out.endswith(ends[-1]) and _ended(out, ends):
                answer = _answer(bytes(out), name, self.formats)
                if answer is None or select.select([source], [], [], 0)[0]:  # more: out of step
                    self.close()
                    return None
                return answer


atexit.register(_Dot.close_idle)


def _answer(out: bytes, name: bytes, formats: tuple[str, ...] | list[str]) -> bytes | None:
    """The drawings `out` of the graph named `name` as a new `dot` writes them, if `out` holds
    one drawing of that graph in each format and nothing else; None otherwise. graphviz names
    each graph without a name of its own by a count that goes on from graph to graph (`%3`,
    `%7`…), and from the second graph on, it puts a page's name before the graph's id
    (`page0,1_graph0`)."""
    # The name (random, in no label: graph_view._quote leaves no `\\G`) is written twice in an
    # SVG, in its heading's comment and as the graph's title, and once in JSON.
    title, json = TITLE % name, "json0" in formats
    drawing = out[:out.find(SVG_END.encode()) + len(SVG_END)]  # its texts escaped; JSON's not
    if out.count(name) != 2 + json or drawing.count(TITLE_START) != 1 or title not in drawing:
        return None
    first = _first_name()
    out = out.replace(title, TITLE % first)
    out, graphed = SVG_GRAPH.subn(lambda m: b'<g id="graph0" class="graph"' + m[1] + b">\n"
                                  b"<title>" + first + b"</title>", out, count=1)
    return out if graphed == 1 and out.count(name) == json else None


@functools.cache
def _first_name() -> bytes:
    """The name a new `dot` gives a graph without one."""
    out = _start(["json0"], stderr=subprocess.DEVNULL).communicate(b"digraph {}")[0]
    return json.loads(out)["name"].encode()


def _ended(out: bytearray, ends: tuple[bytes, ...]) -> bool:
    """Whether `out` holds each drawing up to its end, in order."""
    place = 0
    for end in ends:
        found = out.find(end, place)
        if found < 0:
            return False
        place = found + len(end)
    return place == len(out)


def positions(dot: str, timeout_s: float = LAYOUT_TIMEOUT_S) -> dict[str, Any]:
    """graphviz's layout of `dot` as numbers (points): node centre and size, edge points,
    each arrowhead's line (its base to its tip), and each module's box and its name's box
    (left, bottom, right, top)."""
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
    edges, arrows = [], []
    for e in layout.get("edges", []):
        parts = e["pos"].split()
        points = [_point(p) for p in parts if not p.startswith(("e,", "s,"))]
        edges.append((objects[e["tail"]]["name"], objects[e["head"]]["name"], points))
        arrows += [(*points[-1], *_point(p)) for p in parts if p.startswith("e,")]
        arrows += [(*_point(p), *points[0]) for p in parts if p.startswith("s,")]
    bb = [float(v) for v in layout["bb"].split(",")]
    clusters = [tuple(float(v) for v in o["bb"].split(",")) for o in objects if "bb" in o]
    names = [_name_box(o) for o in objects if "bb" in o and "lp" in o]
    return {"nodes": nodes, "edges": edges, "bb": bb, "arrows": arrows, "clusters": clusters,
            "cluster_names": names}


def _name_box(cluster: dict[str, Any]) -> tuple[float, float, float, float]:
    """The box a cluster's name is written in (left, bottom, right, top)."""
    x, y = _point(cluster["lp"])
    w, h = float(cluster["lwidth"]) * 72 / 2, float(cluster["lheight"]) * 72 / 2
    return x - w, y - h, x + w, y + h


def _point(text: str) -> tuple[float, float]:
    x, y = text.split(",")[-2:]
    return float(x), float(y)
