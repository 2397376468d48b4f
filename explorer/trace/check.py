"""A run's answer, checked before the server uses it. Pure: no torch, no Streamlit.

A run is untrusted (SECURITY.md): past the sandbox it can answer anything. msgspec decodes its
answer straight into the Trace's types (explorer.trace.schema), checking every type, bound and
required key as it reads, and drops keys the types do not name. This module adds what a type
cannot say and returns the answer checked, or raises BadResult saying in plain words what is
wrong:
- caps from the run's Limits: more steps, graphs or engine steps than a run makes is refused;
  text is cut to its cap, and so are the lists a page shows in full (warnings, notes,
  variables); a graph larger than a run may draw becomes the note a run writes for one, and
  values larger or deeper than a run keeps become a short text;
- notes: each a note a run makes, its key's words filled by exactly its numbers and parts;
- references: a step's or call's graph, a node or variable sent as unchanged (explorer.trace.
  wire), an edge's ends; what a variable or node of each kind must have;
- the picture: torchviz's DOT, or made anew (explorer.trace.graph_view.checked_dot).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any

import msgspec

from explorer.safety.limits import Limits
from explorer.trace import schema
from explorer.trace.graph_view import COLOURS, EDGE_ATTRS, checked_dot
from explorer.trace.notes import PARTS, placeholders
from explorer.trace.wording import plain

MAX_LINES = 200  # warnings or notes a page lists
MAX_LINE = 2_000  # characters of one of them, of a label or id
# Characters of a name: a variable's, a type's, an op's, a loop's or function's. Pages write
# names many times over (a gradient's target, a hover, a table row): a name is short.
MAX_NAME = 200
MAX_MESSAGE = 20_000  # characters of an error message, or of a value shown as text
MAX_MODULE = 200  # characters of a module's path (`model.fc1`), of MAX_NESTING modules at most
MAX_VARIABLES = 1_000  # variables of one step, names of a tensor, leaves of a backward call
EDGES_PER_NODE = 4  # edges a graph may have for each node it may have
# Characters of DOT an answer's graphs hold, all together: a run sends each graph's DOT whole,
# within what it may send; one written anew from nodes that graphs before named by id alone
# (a forged answer's 2 MiB made 95 MB of DOT, and 3.6 GB within 16 MiB) is held to it too.
MAX_DOT = 32 << 20  # twice what a run may send (explorer.trace.wire.MAX_RESULT_BYTES)
GRADIENT_VALUES = 100  # values a run keeps of one gradient (explorer.record.backward.VALUES)
NODE_KINDS = frozenset({"backward", *COLOURS})
LEAVES = (str, int, float, bool, type(None))  # what values are made of, in nested lists
PLAIN = frozenset({int, float, bool, type(None)})
VALUE_DEPTH = 70  # lists inside one value: NumPy's 64 dimensions and a few
# Lists and objects in one answer: each costs the server about 1 µs and 150 bytes to decode.
# A 500-iteration training run sends under 10,000; 16 MiB of `{},` would be 5.6 million.
MAX_CONTAINERS = 1_000_000

# What a node of each kind must have, and what only the other kind has.
BACKWARD_NEEDS = ("name",)
TENSOR_NEEDS = ("shape", "dtype", "device", "requires_grad", "is_leaf")
BACKWARD_ONLY = ("name", "saved", "order", "made_by", "made_in")
TENSOR_ONLY = ("names", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn",
               "version")
# What a variable of each kind must have.
ARRAY_VARIABLE = ("shape", "dtype", "device", "numel", "truncated")
TENSOR_VARIABLE = (*ARRAY_VARIABLE, "requires_grad", "is_leaf")

_ANSWER = msgspec.json.Decoder(schema.Answer)


class BadResult(ValueError):
    """A run's answer that is not a Trace a run makes; the message says why, in plain words."""


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
        lines = limits.steps + limits.line_steps + 1  # and the line an error stopped
        return cls(output=limits.output_chars, steps=lines,
                   graphs=lines + schema.MAX_CALLS, nodes=nodes,
                   edges=EDGES_PER_NODE * nodes,
                   values=4 * max(limits.value_elements, GRADIENT_VALUES),
                   losses=limits.loop_iterations)


def read_json(payload: bytes, limits: Limits) -> schema.Answer:
    """The answer a run sent (its JSON, untrusted), decoded and checked in one pass, then
    against `limits`; BadResult if it is none a run makes."""
    if payload.count(b"{") + payload.count(b"[") > MAX_CONTAINERS:
        raise BadResult(f"the message holds more than {MAX_CONTAINERS:,} lists and objects")
    try:
        answer = _ANSWER.decode(payload)
    except msgspec.ValidationError as error:
        raise BadResult(plain(error)) from None
    except RecursionError:
        raise BadResult("the message is nested too deep") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        raise BadResult(f"the message is not JSON ({str(error)[:200]})") from None
    return _Reader(Caps.of(limits)).trace(answer)


def read_data(data: Any, limits: Limits) -> schema.Answer:
    """The answer `data` (decoded already, or a saved Trace) describes, checked as
    `read_json` checks one."""
    return _Reader(Caps.of(limits)).trace(_typed(data, schema.Answer, "the answer"))


def progress(data: Any) -> schema.Summary:
    """A progress message's backward-call summary, checked; BadResult if it is none."""
    return _Reader.summary(_typed(data, schema.Summary, "a backward call's summary"))


def _typed(data: Any, kind: Any, what: str) -> Any:
    """`data` read as `kind`; BadResult naming where it is not one, `what` being the whole."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as error:
        raise BadResult(plain(error, what)) from None
    except RecursionError:
        raise BadResult(f"{what} is nested too deep") from None


def _short(record: Any, fields: tuple[str, ...], cap: int = MAX_LINE) -> None:
    """Cut `record`'s texts in `fields` to `cap`, in place."""
    for field in fields:
        text = getattr(record, field)
        if type(text) is str and len(text) > cap:
            setattr(record, field, text[:cap])


def _texts(texts: list[str], cap: int, length: int = MAX_LINE) -> list[str]:
    return [text[:length] for text in texts[:cap]]


def _mapping(value: dict[str, Any], cap: int) -> dict[str, Any]:
    return {key[:MAX_LINE]: item for key, item in islice(value.items(), cap)}


def _real(value: Any) -> Any:
    """A number, sent as text when not finite (`nan`, `inf`, `-inf`), as a float."""
    return float(value) if type(value) is str else value


def _at_most(what: str, items: list[Any], cap: int) -> list[Any]:
    if len(items) > cap:
        raise BadResult(f"{what} is not a list of at most {cap:,} ({len(items):,} came)")
    return items


def _sized(shape: list[int] | None, what: str) -> None:
    """BadResult unless `shape` holds at most MAX_COUNT elements, as a real tensor's does."""
    if shape and 0 not in shape:
        numel = 1
        for size in shape:
            numel *= size
            if numel > schema.MAX_COUNT:
                raise BadResult(f"{what}'s shape holds more than {schema.MAX_COUNT:,} elements")


def _note(note: schema.Note) -> None:
    """BadResult unless `note` and its parts are ones a run makes: words of their key that
    fill in exactly their numbers, and the parts, if any, of a note whose words hold them."""
    _fills(f"note_{note.key}", set(note.values), bool(note.parts))
    for part in note.parts:
        _fills(f"part_{part.key}", set(part.values), False)


def _fills(name: str, numbers: set[str], parts: bool) -> None:
    wanted = placeholders(name)
    if wanted is None or wanted - {PARTS} != numbers or (parts and PARTS not in wanted):
        raise BadResult("a note is not one a run makes")


def _cut(value: Any) -> Any:
    """`value` with its text cut to MAX_MESSAGE (its depth is checked: VALUE_DEPTH)."""
    if isinstance(value, str):
        return value[:MAX_MESSAGE]
    if isinstance(value, list) and not PLAIN.issuperset(map(type, value)):
        return [_cut(v) for v in value]
    return value


class _Reader:
    """Checks one typed answer against `caps`, in place: its records are its own."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.graph_count = 0  # graphs checked: steps and calls refer to them by number
        self.before: dict[str, schema.Node] = {}  # the last graph's nodes, by id
        self.dot = 0  # characters of DOT the graphs checked so far hold
        self.variables_before: dict[str, schema.Variable] = {}  # the last step's, by name

    def trace(self, answer: schema.Answer) -> schema.Answer:
        if answer.version != schema.VERSION:
            raise BadResult(f"the answer's version is not format version {schema.VERSION}, "
                            "which this explorer reads")
        # graphs first: steps and calls refer to them
        self.graph_count = len(_at_most("the answer's graphs", answer.graphs, self.caps.graphs))
        answer.graphs = [self.graph(graph) for graph in answer.graphs]
        if answer.error is not None:
            _short(answer.error, ("type",))
            _short(answer.error, ("message",), MAX_MESSAGE)
        answer.steps = self.steps(answer.steps)
        answer.variables = self.variables("the answer", answer.variables)
        for call in answer.backward:
            self.call(call)
        for made in answer.library:
            self.graph_index("a library function's pass", made.graph)
            _short(made, ("called",))
        if len({last.loop for last in answer.unstepped}) < len(answer.unstepped):
            raise BadResult("unstepped names a loop twice")
        for last in answer.unstepped:
            _short(last, ("name",), MAX_NAME)
        answer.losses = [self.summary(s) for s in answer.losses[:self.caps.losses]]
        answer.warnings = _texts(answer.warnings, MAX_LINES)
        answer.notes = answer.notes[:MAX_LINES]
        for note in answer.notes:
            _note(note)
        answer.stdout = answer.stdout[:self.caps.output]
        answer.elapsed_ms = _real(answer.elapsed_ms)
        _short(answer, ("device",))
        return answer

    def steps(self, steps: list[schema.SentStep]) -> list[schema.SentStep]:
        left = self.caps.output  # what all steps printed is what the run printed: one cap
        for step in _at_most("the answer's steps", steps, self.caps.steps):
            self.graph_index("a step", step.graph)
            step.output = step.output[:left]
            left -= len(step.output)
            step.variables = self.variables("a step", step.variables)
            self.variables_before = step.variables
            if step.locals is not None:
                step.locals = {name[:MAX_NAME]: self.variable(info)
                               for name, info in islice(step.locals.items(), MAX_VARIABLES)}
            if step.calls is not None:
                step.calls = _texts(step.calls, MAX_VARIABLES, MAX_NAME)
            for loop in step.rounds or []:
                _short(loop, ("name",), MAX_NAME)
        return steps

    def graph_index(self, what: str, index: int | None) -> None:
        if index is not None and index >= self.graph_count:
            raise BadResult(f"{what}'s graph is not the number of one of the "
                            f"{self.graph_count} graphs")

    def variables(self, what: str, value: dict[str, schema.Variable | None]) -> dict[
            str, schema.Variable]:
        """The variables; one given as null (explorer.trace.wire) is the checked variable
        of that name in the step before (the end's: in the last step)."""
        variables = {}
        for name, info in islice(value.items(), MAX_VARIABLES):
            name = name[:MAX_NAME]
            if info is not None:
                variables[name] = self.variable(info)
            elif name in self.variables_before:
                variables[name] = self.variables_before[name]
            else:
                raise BadResult(f"{what}'s variables is not a variable, or null for one of "
                                "the step before")
        return variables

    def variable(self, value: schema.Variable) -> schema.Variable:
        """A variable as explorer.record.snapshot describes one: its kind is open (a
        namedtuple's is its class's name); tensors and arrays have their metadata."""
        kind = value.kind
        required = TENSOR_VARIABLE if kind == "tensor" else (
            ARRAY_VARIABLE if kind == "ndarray" else ())
        if value.memory is not None:
            required += ("data_ptr",)
            first, last = value.memory
            if first > last:
                raise BadResult(f"a variable of kind {kind[:40]}'s memory is not a span of "
                                "addresses")
        missing = [field for field in required if getattr(value, field) is None]
        if missing:
            raise BadResult(f"a variable of kind {kind[:40]} has no "
                            f"{', '.join(sorted(missing))}")
        _sized(value.shape, "a variable")
        _short(value, ("kind", "type", "dtype", "device", "grad_fn"), MAX_NAME)
        value.values = self.values(value.values)
        if value.grad is not None:
            value.grad = self.values(value.grad)
        if value.tangent is not None:
            value.tangent = self.values(value.tangent)
        value.norm, value.grad_norm = _real(value.norm), _real(value.grad_norm)
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

    def graph(self, sent: schema.SentGraph) -> schema.Graph:
        """One graph; a node given by its id alone (explorer.trace.wire) is the checked node
        of that id in the graph before."""
        if len(sent.nodes) > self.caps.nodes or len(sent.edges) > self.caps.edges:
            self.before = {}
            return schema.Graph(dot=None, nodes=[], edges=[], note=schema.Note(
                key="graph_too_big", values={"nodes": self.caps.nodes - 1}))
        graph = schema.Graph(dot=sent.dot, nodes=[self.node(node) for node in sent.nodes],
                             edges=sent.edges, packed=sent.packed, note=sent.note)
        ids = {node.id for node in graph.nodes}
        if len(ids) < len(graph.nodes):
            raise BadResult("a graph's nodes hold one id twice")
        if graph.note is not None:
            _note(graph.note)
        if graph.note or graph.dot is None:
            graph.dot, graph.nodes, graph.edges = None, [], []
            graph.note = graph.note or schema.Note(key="graph_undrawn")
        else:
            graph.edges = [self.edge(e) for e in graph.edges if e.src in ids and e.dst in ids]
            graph.dot = checked_dot(graph.dot, graph)
            self.dot += len(graph.dot)
            if self.dot > MAX_DOT:
                raise BadResult(f"the answer's graphs hold more than {MAX_DOT:,} characters "
                                "of DOT, more than a run sends")
        self.before = {node.id: node for node in graph.nodes}
        return graph

    def node(self, node: schema.Node | str) -> schema.Node:
        if isinstance(node, str):
            if node not in self.before:
                raise BadResult("a graph's nodes is not a node, or the id of one of the graph "
                                "before")
            return self.before[node]
        kind = node.kind
        if kind not in NODE_KINDS:
            raise BadResult("a graph's nodes is not a node of a kind a graph has")
        backward = kind == "backward"
        missing = [field for field in (BACKWARD_NEEDS if backward else TENSOR_NEEDS)
                   if getattr(node, field) is None]
        if missing:
            raise BadResult(f"a {'backward' if backward else 'tensor'} node has no "
                            f"{', '.join(sorted(missing))}")
        for field in TENSOR_ONLY if backward else BACKWARD_ONLY:
            setattr(node, field, None)
        _sized(node.shape, "a tensor node")
        _short(node, ("label",))
        _short(node, ("name", "dtype", "device", "grad_fn"), MAX_NAME)
        if node.module is not None:  # deeper modules are drawn in the box of the one that deep
            node.module = ".".join(node.module[:MAX_MODULE].split(".", schema.MAX_NESTING)[
                :schema.MAX_NESTING])
        if node.saved is not None:
            node.saved = {k: v[:MAX_LINE] for k, v in _mapping(node.saved, MAX_LINES).items()}
        if node.names is not None:
            node.names = _texts(node.names, MAX_VARIABLES, MAX_NAME)
        node.colour = None if backward else COLOURS[kind]
        return node

    @staticmethod
    def edge(edge: schema.Edge) -> schema.Edge:
        attrs = islice((edge.attrs or {}).items(), 2)
        edge.attrs = {k: v for k, v in attrs if v in EDGE_ATTRS.get(k, ())}
        return edge

    def call(self, call: schema.Call) -> None:
        nodes = self.caps.nodes
        for field in ("steps", "leaf_grads", "roots"):
            _at_most(f"a backward call's {field}", getattr(call, field), nodes)
        self.graph_index("a backward call", call.graph)
        _short(call, ("kind", "root", "jacobian_reason"))
        call.roots = _texts(call.roots, nodes)
        for loop in call.rounds or []:
            _short(loop, ("name",), MAX_NAME)
        if call.calls is not None:
            call.calls = _texts(call.calls, MAX_VARIABLES, MAX_NAME)
        call.value = _real(call.value)
        if call.vector is not None:
            call.vector = self.values(call.vector)
        if call.jacobian is not None:
            call.jacobian = self.values(call.jacobian)
        for step in call.steps:
            _short(step, ("node",))
            _short(step, ("name",), MAX_NAME)
            for grads in (step.grad_outputs, step.grad_inputs):
                for grad in _at_most("a backward step's gradients", grads, nodes):
                    if grad is not None:
                        self.gradient(grad)
        for leaf in (*call.leaf_grads,
                     *_at_most("a backward call's retained .grads", call.retained or [], nodes)):
            _short(leaf, ("node", "leaf"))
            leaf.names = _texts(leaf.names, MAX_VARIABLES, MAX_NAME)
            if leaf.grad is not None:
                self.gradient(leaf.grad)
        for given in _at_most("a grad call's inputs", call.returned or [], nodes):
            _short(given, ("input",))
            given.names = _texts(given.names, MAX_VARIABLES, MAX_NAME)
            if given.grad is not None:
                self.gradient(given.grad)

    def gradient(self, grad: schema.Gradient) -> None:
        _sized(grad.shape, "a gradient")
        _short(grad, ("dtype", "device", "to"))
        grad.values = self.values(grad.values)
        grad.norm, grad.max_abs = _real(grad.norm), _real(grad.max_abs)

    @staticmethod
    def summary(summary: schema.Summary) -> schema.Summary:
        _short(summary, ("kind",))
        summary.value = _real(summary.value)
        summary.grad_norms = {name: _real(norm) for name, norm in
                              _mapping(summary.grad_norms, MAX_VARIABLES).items()}
        return summary
