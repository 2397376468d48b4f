"""A run's answer, checked before the server uses it: every field of a Trace with its type,
count and size. Pure: no torch, no Streamlit.

A run is untrusted (SECURITY.md): past the sandbox it can answer anything. `trace_fields`
takes the decoded answer (explorer.trace.wire.decode: valid UTF-8, bounded depth) and returns the
fields of the Trace it describes, or raises BadResult saying in plain words what is wrong.
Text is cut to its cap and the lists a page shows in full (warnings, notes, variables) are
cut; a graph larger than a run may draw becomes the note a run writes for one, values larger
than a run keeps become a short text, and the picture is torchviz's DOT or made anew
(explorer.trace.graph_view.checked_dot). A wrong type, a missing field, a reference to nothing or
more steps, graphs or backward calls than a run makes is refused. Unknown fields are
dropped: a field the worker starts sending is added here. Caps come from the run's Limits
where it has one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from explorer.safety.limits import Limits
from explorer.trace.graph_view import COLOURS, EDGE_ATTRS, checked_dot
from explorer.trace.schema import VERSION

MAX_LINES = 200  # warnings or notes a page lists
MAX_LINE = 2_000  # characters of one of them, of a name, label, type or id
MAX_MESSAGE = 20_000  # characters of an error message, or of a value shown as text
MAX_VARIABLES = 1_000  # variables of one step, names of a tensor, leaves of a backward call
MAX_CALLS = 64  # backward calls kept in full: a run keeps 20, and those asked for
MAX_DIMS = 1_000  # sizes of a shape (PyTorch allows hundreds)
EDGES_PER_NODE = 4  # edges a graph may have for each node it may have
GRADIENT_VALUES = 100  # values a run keeps of one gradient (explorer.record.backward.VALUES)
NODE_KINDS = frozenset({"backward", *COLOURS})
EDGE_KINDS = frozenset({"grad", "saved", "view"})
LEAVES = (str, int, float, bool, type(None))  # what values are made of, in nested lists
PLAIN = frozenset({int, float, bool, type(None)})
VALUE_DEPTH = 70  # lists inside one value: NumPy's 64 dimensions and a few

Check = Callable[[Any], Any]


class BadResult(ValueError):
    """A run's answer that is not a Trace a run makes; the message says why, in plain words."""


class _Wrong(Exception):
    """One value is not what its field holds; the message says what it should be."""


@dataclass(frozen=True)
class Caps:
    """How much of each thing one Trace may hold."""

    output: int  # characters printed
    steps: int
    graphs: int
    nodes: int  # of one graph
    edges: int
    values: int  # items (numbers and lists) of one value
    losses: int  # backward calls summarised

    @classmethod
    def of(cls, limits: Limits) -> Caps:
        """The caps a run under `limits` stays within."""
        nodes = limits.graph_nodes + 1  # explorer.record.graph stops one node past the limit
        return cls(output=limits.output_chars, steps=limits.steps,
                   graphs=limits.steps + MAX_CALLS, nodes=nodes, edges=EDGES_PER_NODE * nodes,
                   values=4 * max(limits.value_elements, GRADIENT_VALUES),
                   losses=limits.loop_iterations)


def trace_fields(data: Any, limits: Limits) -> dict[str, Any]:
    """The Trace fields `data` (a run's answer) describes, checked; BadResult if it is none.
    Steps stay dicts here (explorer.trace makes them Steps)."""
    return _Reader(Caps.of(limits)).trace(data)


def progress(data: Any) -> dict[str, Any]:
    """A progress message's backward-call summary, checked; BadResult if it is none."""
    return _Reader(Caps.of(Limits())).summary(data)


def _text(cap: int) -> Check:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise _Wrong("text")
        return value[:cap]
    return check


def _whole(least: int | None = 0) -> Check:
    def check(value: Any) -> int:
        if type(value) is not int or (least is not None and value < least):
            raise _Wrong("a whole number" if least is None else f"a whole number ≥ {least}")
        return value
    return check


def _number(value: Any) -> int | float:
    if type(value) not in (int, float):
        raise _Wrong("a number")
    return value


def _version(value: Any) -> int:
    """A saved Trace's format version: this one's (a run's answer carries none)."""
    if value != VERSION or type(value) is not int:
        raise _Wrong(f"format version {VERSION}, which this explorer reads")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Wrong("true or false")
    return value


def _optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _list(item: Check, cap: int, cut: bool = False) -> Check:
    """A list of at most `cap` items (`cut`: longer ones lose the rest; else refused)."""
    def check(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _Wrong("a list")
        if len(value) > cap and not cut:
            raise _Wrong(f"a list of at most {cap:,} ({len(value):,} came)")
        return [item(v) for v in value[:cap]]
    return check


def _mapping(item: Check, cap: int) -> Check:
    """An object of at most `cap` text keys (more are cut)."""
    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Wrong("an object")
        return {k[:MAX_LINE]: item(v) for k, v in islice(value.items(), cap)}
    return check


def _cut(value: Any) -> Any:
    """`value` with its text cut to MAX_MESSAGE (its depth is checked: VALUE_DEPTH)."""
    if isinstance(value, str):
        return value[:MAX_MESSAGE]
    if isinstance(value, list) and not PLAIN.issuperset(map(type, value)):
        return [_cut(v) for v in value]
    return value


SHORT = _text(MAX_LINE)
LONG = _text(MAX_MESSAGE)
DOT = _text(sys.maxsize)  # as long as the answer: only torchviz's statements are kept of it
COUNT = _whole()
WHOLE = _whole(None)
SHAPE = _list(COUNT, MAX_DIMS)
STRIDES = _list(WHOLE, MAX_DIMS)
NAMES = _list(SHORT, MAX_VARIABLES, cut=True)
# A node id as explorer.record.graph writes one: `n12`, `n3.self[0]`.
NODE_ID = re.compile(r"[\w.\[\]]{1,200}")


def _node_id(value: Any) -> str:
    if not isinstance(value, str) or not NODE_ID.fullmatch(value):
        raise _Wrong("a node id (letters, digits, `_`, `.`, `[`, `]`)")
    return value


NODE = _node_id


def _record(what: str, value: Any, fields: dict[str, Check],
            required: frozenset[str] | set[str]) -> dict[str, Any]:
    """The known `fields` of `value`, each checked; unknown ones dropped."""
    if not isinstance(value, dict):
        raise BadResult(f"{what} is not an object")
    missing = required - value.keys()
    if missing:
        raise BadResult(f"{what} has no {', '.join(sorted(missing))}")
    clean = {}
    for key, check in fields.items():
        if key in value:
            try:
                clean[key] = check(value[key])
            except _Wrong as wrong:
                raise BadResult(f"{what}'s {key} is not {wrong}") from None
    return clean


class _Reader:
    """Checks one answer against `caps`."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.graph_count = 0  # graphs checked: steps and calls refer to them by number
        self.before: dict[str, dict[str, Any]] = {}  # the last graph's nodes, by id
        self.variables_before: dict[str, dict[str, Any]] = {}  # the last step's, by name

    def trace(self, data: Any) -> dict[str, Any]:
        return _record("the answer", data, {  # graphs first: steps and calls refer to them
            "graphs": self.graphs, "ok": _flag, "error": _optional(self.error),
            "stdout": _text(self.caps.output), "steps": self.steps,
            "variables": self.variables, "backward": _list(self.call, MAX_CALLS),
            "losses": _list(self.summary, self.caps.losses, cut=True),
            "warnings": _list(SHORT, MAX_LINES, cut=True),
            "notes": _list(SHORT, MAX_LINES, cut=True), "device": SHORT,
            "threads": COUNT, "elapsed_ms": _number, "repeatable": _flag,
            "version": _version}, {"ok"})

    def error(self, value: Any) -> dict[str, Any]:
        error = _record("the error", value, {"type": SHORT, "message": LONG,
                                             "line": _optional(COUNT)}, {"type", "message"})
        return {"line": None} | error

    def steps(self, value: Any) -> list[dict[str, Any]]:
        steps = _list(self.step, self.caps.steps)(value)
        left = self.caps.output  # what all steps printed is what the run printed: one cap
        for step in steps:
            step["output"] = step["output"][:left]
            left -= len(step["output"])
        return steps

    def step(self, value: Any) -> dict[str, Any]:
        """One step; a variable given as null (explorer.trace.wire) is the checked variable
        of that name in the step before (the end's: in the last step)."""
        step = _record("a step", value, {
            "line": COUNT, "end_line": COUNT, "output": _text(self.caps.output),
            "variables": self.variables, "graph": _optional(self.graph_index)},
            {"line", "end_line", "output", "variables"})
        self.variables_before = step["variables"]
        return step

    def graphs(self, value: Any) -> list[dict[str, Any]]:
        graphs = _list(self.graph, self.caps.graphs)(value)
        self.graph_count = len(graphs)
        return graphs

    def graph(self, value: Any) -> dict[str, Any]:
        """One graph; a node given by its id alone (explorer.trace.wire) is the checked node
        of that id in the graph before."""
        graph = self._graph(value)
        self.before = {node["id"]: node for node in graph["nodes"]}
        return graph

    def graph_index(self, value: Any) -> int:
        if type(value) is not int or not 0 <= value < self.graph_count:
            raise _Wrong(f"the number of one of the {self.graph_count} graphs")
        return value

    def variables(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _Wrong("an object")
        return {name[:MAX_LINE]: self.variable(info) if info is not None else self.same(name)
                for name, info in islice(value.items(), MAX_VARIABLES)}

    def same(self, name: str) -> dict[str, Any]:
        if name[:MAX_LINE] not in self.variables_before:
            raise _Wrong("a variable, or null for one of the step before")
        return self.variables_before[name[:MAX_LINE]]

    def variable(self, value: Any) -> dict[str, Any]:
        """A variable as explorer.record.snapshot describes one: its kind is open (a namedtuple's is
        its class's name); tensors and arrays have their metadata."""
        kind = value.get("kind") if isinstance(value, dict) else None
        if not isinstance(kind, str):
            raise _Wrong("a variable with a kind")
        required = {"kind", "values"}
        if kind in ("tensor", "ndarray"):
            required |= {"shape", "dtype", "device", "numel", "truncated"}
        if kind == "tensor":
            required |= {"requires_grad", "is_leaf"}
        if "memory" in value:
            required.add("data_ptr")
        return _record(f"a variable of kind {kind[:40]}", value, {
            "kind": SHORT, "type": SHORT, "shape": SHAPE, "dtype": SHORT, "device": SHORT,
            "requires_grad": _flag, "is_leaf": _flag, "grad_fn": _optional(SHORT),
            "version": _optional(COUNT), "numel": COUNT, "is_view": _flag,
            "retains_grad": _flag, "strides": STRIDES, "data_ptr": COUNT,
            "memory": self.memory, "writeable": _flag, "values": self.values,
            "truncated": _flag, "grad": self.values, "norm": _number, "grad_norm": _number},
            required)

    @staticmethod
    def memory(value: Any) -> list[int]:
        if not (isinstance(value, list) and len(value) == 2 and all(
                type(v) is int and v >= 0 for v in value) and value[0] <= value[1]):
            raise _Wrong("a span of addresses")
        return value

    def values(self, value: Any) -> Any:
        """Numbers, text, true/false or null, in nested lists; a value larger or deeper than a
        run keeps, or holding anything else (an object array's dicts), becomes a short text
        saying so, and text is cut."""
        count, stack = 0, [(value, 0)]
        while stack:
            item, depth = stack.pop()
            row = isinstance(item, list) and item and PLAIN.issuperset(map(type, item))
            if row:  # numbers only (most values): counted at once, one level deeper
                count, depth = count + len(item), depth + 1
            count += 1
            if count > self.caps.values or depth > VALUE_DEPTH:
                return "<values too many to show>"
            if isinstance(item, list):
                if not row:
                    stack.extend((v, depth + 1) for v in item)
            elif not isinstance(item, LEAVES):
                return "<values not shown: not numbers or text>"
        return _cut(value)

    def _graph(self, value: Any) -> dict[str, Any]:
        nodes, edges = (value.get(k) if isinstance(value, dict) else None
                        for k in ("nodes", "edges"))
        if (isinstance(nodes, list) and len(nodes) > self.caps.nodes) or (
                isinstance(edges, list) and len(edges) > self.caps.edges):
            return {"dot": None, "nodes": [], "edges": [], "note": f"The graph has more than "
                    f"{self.caps.nodes - 1:,} nodes; it is not drawn."}  # as a run says it
        graph = _record("a graph", value, {
            "dot": _optional(DOT), "nodes": _list(self.node, self.caps.nodes),
            "edges": _list(self.edge, self.caps.edges), "packed": _flag, "note": SHORT},
            {"nodes", "edges"})
        if graph.get("note") or graph.get("dot") is None:
            return graph | {"dot": None, "nodes": [], "edges": [],
                            "note": graph.get("note") or "The graph is not drawn."}
        ids = {node["id"] for node in graph["nodes"]}
        graph["edges"] = [e for e in graph["edges"] if e["src"] in ids and e["dst"] in ids]
        graph["dot"] = checked_dot(graph["dot"], graph)
        return graph

    def node(self, value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            if value not in self.before:
                raise _Wrong("a node, or the id of one of the graph before")
            return self.before[value]
        kind = value.get("kind") if isinstance(value, dict) else None
        if kind not in NODE_KINDS:
            raise _Wrong("a node of a kind a graph has")
        if kind == "backward":
            return _record("a backward node", value, {
                "id": NODE, "kind": SHORT, "label": SHORT, "name": SHORT,
                "saved": _mapping(SHORT, MAX_LINES), "custom": _flag, "module": SHORT},
                {"id", "kind", "label", "name"})
        node = _record("a tensor node", value, {
            "id": NODE, "kind": SHORT, "label": SHORT, "names": NAMES, "shape": SHAPE,
            "dtype": SHORT, "device": SHORT, "requires_grad": _flag, "is_leaf": _flag,
            "grad_fn": _optional(SHORT), "version": _optional(COUNT), "custom": _flag,
            "module": SHORT},
            {"id", "kind", "label", "shape", "dtype", "device", "requires_grad", "is_leaf",
             "grad_fn", "version"})
        return node | {"colour": COLOURS[kind]}

    @staticmethod
    def edge(value: Any) -> dict[str, Any]:
        edge = _record("an edge", value, {
            "src": NODE, "dst": NODE, "kind": SHORT, "attrs": _mapping(SHORT, 2)},
            {"src", "dst", "kind"})
        if edge["kind"] not in EDGE_KINDS:
            raise BadResult("an edge's kind is not one a graph has")
        attrs = edge.get("attrs", {})
        return edge | {"attrs": {k: v for k, v in attrs.items() if v in EDGE_ATTRS.get(k, ())}}

    def call(self, value: Any) -> dict[str, Any]:
        nodes = self.caps.nodes
        call = _record("a backward call", value, {
            "call": _whole(1), "kind": SHORT, "steps": _list(self.engine_step, nodes),
            "leaf_grads": _list(self.leaf_grad, nodes), "value": _optional(_number),
            "graph": self.graph_index, "roots": _list(SHORT, nodes), "root": _optional(SHORT),
            "vector": _optional(self.values), "jacobian": _optional(self.values),
            "jacobian_reason": SHORT},
            {"call", "kind", "steps", "leaf_grads", "value", "roots", "root", "vector"})
        return call

    def engine_step(self, value: Any) -> dict[str, Any]:
        grads = _list(_optional(self.gradient), self.caps.nodes)
        return _record("a backward step", value, {
            "node": SHORT, "name": SHORT, "grad_outputs": grads, "grad_inputs": grads},
            {"node", "name", "grad_outputs", "grad_inputs"})

    def leaf_grad(self, value: Any) -> dict[str, Any]:
        return _record("a .grad written", value, {
            "node": SHORT, "leaf": SHORT, "names": NAMES, "after": COUNT,
            "grad": _optional(self.gradient)}, {"node", "leaf", "names", "after", "grad"})

    def gradient(self, value: Any) -> dict[str, Any]:
        return _record("a gradient", value, {
            "shape": SHAPE, "dtype": SHORT, "device": SHORT, "values": self.values,
            "truncated": _flag, "norm": _number, "max_abs": _number, "to": _optional(SHORT)},
            {"shape", "dtype", "device", "values", "truncated", "norm", "max_abs"})

    def summary(self, value: Any) -> dict[str, Any]:
        return _record("a backward call's summary", value, {
            "call": _whole(1), "kind": SHORT, "value": _optional(_number),
            "grad_norms": _mapping(_number, MAX_VARIABLES)},
            {"call", "kind", "value", "grad_norms"})
