"""The grad_fn graph of a program's tensors, drawn as torchviz draws it. Runs in a worker.

`record(variables, ids)` returns {dot, nodes, edges} for the graph behind every tensor
variable. The DOT is torchviz's picture — its node attributes, colours, labels (those of
`torchviz.dot.get_fn_name`, made from the saved values read once) and sizing (`resize_graph`),
in the order `make_dot` writes it — except that node names are stable ids instead of `id()`s,
and the walk is iterative, so it survives graphs thousands of ops deep and saved tensors
already freed by `backward()` (both make `make_dot` raise). A saved tensor packed by
the program's saved-tensor hooks is never read, as that would call its unpack hook: the label
still says `[saved tensor]`, the orange node is left out. And a tensor is drawn as what it is,
whatever the walk meets first: `make_dot` keys nodes by `id()`, so a saved tensor that is also
a variable (a leaf that requires grad, or a named tensor: the same object, or for a saved
output the tensor unpacked afresh with its `grad_fn` and `output_nr`) redraws that variable's
node as an orange `self` or `result` (and it draws a leaf it is given as an output green). Here
a leaf that requires grad is always blue and a named tensor green, both under their names;
that a node saved one is its saved edge (`dir=none`) and its `saved` details.
tests/test_graph.py checks it against `make_dot`. A run records its graph after every
statement, so this is written for speed: DOT lines are formatted directly
(`explorer.trace.graph_view.node_line`), and the cyclic garbage collector is paused while a
graph is walked.

Colours (torchviz's): grey backward nodes; blue leaves that require grad (their `.grad` is
filled by backward); orange saved tensors; green outputs; dark green the base of a view.

Stable ids come from the objects without touching them (a program may read a node's
`metadata`): a backward node is known by its kind and the sequence number autograd gave it
(an AccumulateGrad by its leaf), a tensor by a registry of weak references; an id is never
reused for another object.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from graphviz import Digraph
from torch.nn.parameter import UninitializedTensorMixin
from torchviz.dot import SAVED_PREFIX, resize_graph

from explorer.record.modules import Modules, Names
from explorer.record.observer import read
from explorer.record.snapshot import as_text, version
from explorer.trace.graph_view import COLOURS, FREED, MODIFIED, NODE_ATTR, edge_line, node_line
from explorer.trace.schema import Edge, Graph, Node, Note
from explorer.trace.wire import uncollected

if TYPE_CHECKING:
    from explorer.record.orders import Orders

PACKED = "packed by the program's saved-tensor hooks: not read, as that would run its unpack hook"
MAX_ATTR_CHARS = 50  # torchviz's default
NAMES_CHARS = 1_000  # of a tensor's names, as its label writes them
HELD = 256  # tensors of one list, tuple or dict variable the graph names, the first
_next_number = torch._C._autograd._get_sequence_nr  # the next node's, on this thread


class Ids:
    """Stable ids for the backward nodes and tensors of one run, and the run's clock: the
    sequence numbers autograd gives the nodes the program's thread makes, counted from the
    run's start (the order the nodes were made in)."""

    def __init__(self) -> None:
        self.started = _next_number()
        self._count = itertools.count(1)
        self._tensors: dict[int, tuple[weakref.ref[torch.Tensor], str]] = {}
        self._leaves: dict[int, tuple[weakref.ref[torch.Tensor], str]] = {}  # AccumulateGrads
        self._fns: dict[tuple[str, int], str] = {}

    def of_fn(self, fn: Any) -> str:
        leaf = getattr(fn, "variable", None)  # AccumulateGrad's numbers are all the same
        if isinstance(leaf, torch.Tensor):
            return self._weak(self._leaves, leaf, "n")
        key = (type(fn).__name__, fn._sequence_nr())
        if key not in self._fns:
            self._fns[key] = f"n{next(self._count)}"
        return self._fns[key]

    def of_tensor(self, t: torch.Tensor) -> str:
        return self._weak(self._tensors, t, "t")

    def now(self) -> int:
        """The number the next node the program's thread makes will have."""
        return _next_number() - self.started

    def seq(self, fn: Any) -> int | None:
        """A backward node's sequence number (None for one made before the run, or by another
        thread before this one's count reached it)."""
        seq = fn._sequence_nr() - self.started
        return seq if seq >= 0 else None

    def _weak(self, registry: dict[int, tuple[weakref.ref[torch.Tensor], str]],
              t: torch.Tensor, prefix: str) -> str:
        ref, sid = registry.get(id(t), (None, ""))
        if ref is None or ref() is not t:
            sid = f"{prefix}{next(self._count)}"
            registry[id(t)] = (weakref.ref(t), sid)
        return sid


def _joined(names: list[str]) -> str:
    """A tensor's names as its label says them, `a = b`, up to NAMES_CHARS characters, then
    how many more (graphviz draws no label past 16,384: a thousand aliases of one tensor left
    the whole graph undrawn)."""
    shown, length = [], 0
    for name in names:
        length += len(name) + 3
        if length > NAMES_CHARS + 3:
            break
        shown.append(name)
    said = " = ".join(shown) if shown else names[0][:NAMES_CHARS] + "…"
    more = len(names) - max(len(shown), 1)
    return said + (f" = … (+{more:,})" if more else "")


def _graphed(variables: dict[str, Any]) -> Iterator[tuple[str, torch.Tensor]]:
    """The variables' tensors that take part in a graph, each with its name; then those a
    list, tuple or dict variable holds that no variable names (`losses[3]`: they keep their
    graphs alive too), at most HELD of each."""
    named = set()
    for name, value in variables.items():
        if _in_graph(value):
            named.add(id(value))
            yield name, value
    for name, value in variables.items():
        for key, item in _held(value):
            if id(item) not in named and _in_graph(item):
                yield f"{name}[{key}]", item


def _held(value: Any) -> Iterator[tuple[str, Any]]:
    """What a list, tuple or dict (exactly: a subclass's items are its own code) holds, by
    its index or key as written (`0`, `'w'`), at most HELD; nothing of anything else."""
    if type(value) in (list, tuple):
        yield from ((str(i), item) for i, item in enumerate(value[:HELD]))
    elif type(value) is dict:
        yield from ((repr(key), item) for key, item in itertools.islice(value.items(), HELD)
                    if type(key) in (str, int))


def _in_graph(value: Any) -> bool:
    """A tensor that requires grad or has a grad_fn, and has data (a lazy module's parameter
    has none until its first call)."""
    return isinstance(value, torch.Tensor) and (
        value.requires_grad or value.grad_fn is not None) and not isinstance(
        value, UninitializedTensorMixin)


class TooBig(Exception):
    """The graph has more nodes than a run may draw."""


def record(variables: dict[str, Any], ids: Ids, max_nodes: int,
           modules: Modules | None = None, orders: Orders | None = None) -> Graph | None:
    """The graph behind the tensor variables, or None when no variable takes part in one;
    with `modules`, each node made by a module call or holding a parameter names its module
    (`module`), and a parameter is labelled by its path (`model.fc1.weight`); with `orders`,
    a node a backward call made says which node's backward made it and its derivative order,
    and a gradient a call started from, saved by such a node, is labelled `∂y/∂y`."""
    roots: dict[int, torch.Tensor] = {}
    names: dict[int, list[str]] = {}
    for name, value in _graphed(variables):
        roots.setdefault(id(value), value)
        names.setdefault(id(value), []).append(name)
    if not roots:
        return None
    made = {(id(t.grad_fn), t.output_nr): (t.grad_fn, t) for t in roots.values()
            if t.grad_fn is not None}
    drawing = _Drawing(ids, {key: _joined(n) for key, n in names.items()}, made, max_nodes,
                       (modules or Modules()).names(variables), orders)
    try:
        with uncollected():
            return drawing.draw(roots.values())
    except TooBig:
        return Graph(dot=None, nodes=[], edges=[],
                     note=Note(key="graph_too_big", values={"nodes": max_nodes}))


class _Drawing:
    """One graph: torchviz's `make_dot` with stable names, iterative, tolerant of freed buffers."""

    def __init__(self, ids: Ids, names: dict[int, str],
                 made: dict[tuple[int, int], tuple[Any, torch.Tensor]], max_nodes: int,
                 paths: Names, orders: Orders | None) -> None:
        self.ids = ids
        self.orders = orders
        self.names = names
        self.made = made  # (id of grad_fn, output_nr) -> (grad_fn, named tensor it made)
        self.paths = paths
        self.max_nodes = max_nodes
        self.body: list[str] = []  # the DOT statements, as make_dot's Digraph holds them
        self.seen: set[int] = set()
        self.keep: list[Any] = []  # objects whose id() is in `seen` stay alive until the end
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.packed = False  # a saved tensor was left unread: saved-tensor hooks packed it
        self.saved_variables: dict[str, torch.Tensor] = {}  # id -> a variable a node saved

    def draw(self, roots: Any) -> Graph:
        for t in roots:
            self._base_tensor(t)
        for sid, var in self.saved_variables.items():  # a saved leaf no walk drew
            if sid not in self.nodes:
                self._tensor_node(sid, var, _kind(var, "output"))
        return Graph(dot=_source(self.body), nodes=list(self.nodes.values()), edges=self.edges,
                     packed=True if self.packed else None)

    def _mark(self, obj: Any) -> bool:
        """True the first time `obj` is met."""
        if id(obj) in self.seen:
            return False
        if len(self.seen) > self.max_nodes:
            raise TooBig
        self.seen.add(id(obj))
        self.keep.append(obj)
        return True

    def _base_tensor(self, var: torch.Tensor) -> None:
        """torchviz's add_base_tensor, its recursion into a view's bases unrolled."""
        views: list[tuple[str, str]] = []
        kind = "output"
        while self._mark(var):
            sid = self.ids.of_tensor(var)
            self._tensor_node(sid, var, _kind(var, kind))
            if var.grad_fn is not None:
                self._walk(var.grad_fn)
                self._edge(self.ids.of_fn(var.grad_fn), sid, "grad")
            if not var._is_view():
                break
            views.append((self.ids.of_tensor(var._base), sid))
            var, kind = var._base, "base"
        for base, view in reversed(views):
            self._edge(base, view, "view", style="dotted")

    def _walk(self, root: Any) -> None:
        """torchviz's recursive add_nodes, run with an explicit stack of generators."""
        stack = [self._fn(root)] if self._mark(root) else []
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
            elif self._mark(child):
                stack.append(self._fn(child))

    def _fn(self, fn: Any) -> Iterator[Any]:
        sid = self.ids.of_fn(fn)
        kind = _KINDS.get(type(fn)) or _kind_of(fn)
        if kind.attrs is not None:
            saved, label = self._saved(fn, sid, kind.attrs, builtin=True)
        else:
            saved, label = self._saved(fn, sid, [(attr, attr.removeprefix(SAVED_PREFIX), True)
                                                 for attr in _saved_attrs(fn)], builtin=False)
        variable = getattr(fn, "variable", None) if kind.leaf else None
        if isinstance(variable, torch.Tensor):
            self._mark(variable)
            var_sid = self.ids.of_tensor(variable)
            self._tensor_node(var_sid, variable, "leaf")
            self._edge(var_sid, sid, "grad")
        self.body.append(_node_line(sid, label, None))
        made = self.orders.of(fn) if self.orders is not None else None
        self.nodes[sid] = Node(
            id=sid, kind="backward", label=label, name=kind.name, saved=saved,
            custom=kind.custom, seq=None if kind.leaf else self.ids.seq(fn),
            module=self.paths.of_node(fn), order=made.order if made else None,
            made_by=made.by if made else None, made_in=made.call if made else None)
        for u, _ in fn.next_functions if kind.edges else getattr(fn, "next_functions", ()):
            if u is not None:
                self._edge(self.ids.of_fn(u), sid, "grad")
                yield u
        if not kind.saves:
            return
        if _packed(fn, "_saved_tensors") is not None:
            saved["saved_tensors"], self.packed = PACKED, True
            return
        try:
            custom, again = fn.saved_tensors, fn.saved_tensors
        except RuntimeError as error:
            saved["saved_tensors"] = _unreadable(error)
            return
        for i, (t, t_again) in enumerate(zip(custom, again, strict=True)):
            saved[f"saved_tensors[{i}]"] = self._describe(t)
            self._saved_tensor(sid, f"saved_tensors[{i}]", t, t_again, custom=True)

    def _saved(self, fn: Any, sid: str, attrs: list[tuple[str, str, bool]], builtin: bool
               ) -> tuple[dict[str, str], str]:
        """Draw what a built-in node saved (show_saved), describe all of it for details, and
        label the node as torchviz's get_fn_name does (its type alone once values are freed).
        `attrs`: each `_saved_*` attribute, its name, and whether a raw form may stand behind
        it; `builtin`: `fn` is of a built-in type. A value that holds no tensor (a size, a
        scalar) is read once, not twice: only a tensor read again tells a live object."""
        saved: dict[str, str] = {}
        shown: dict[str, str] | None = {}  # get_fn_name's attributes; None once one is freed
        for attr, name, raw in attrs:
            packed = _packed(fn, attr) if raw else None
            if packed is not None:  # torchviz's label needs no value; its orange node does
                saved[name], self.packed = PACKED, True
                if shown is not None:
                    shown[name] = ("[saved tensors]" if isinstance(packed, tuple)
                                   else "[saved tensor]")
                continue
            try:
                value = getattr(fn, attr)
                tensors = isinstance(value, torch.Tensor) or (isinstance(value, tuple) and any(
                    isinstance(v, torch.Tensor) for v in value))
                again = getattr(fn, attr) if tensors else value
            except RuntimeError as error:
                saved[name], shown = _unreadable(error), None
                continue
            if isinstance(value, torch.Tensor):
                variable = self._variable(value)
                if shown is not None:
                    shown[name] = "[saved tensor]"
                saved[name] = self._described(value, variable)
                self._saved_tensor(sid, name, value, again, custom=False, variable=variable)
                continue
            if builtin and not tensors:
                text = str(value)  # a size, a scalar: its text, made once (it runs no code of
                if shown is not None:  # the program's, as a custom Function's value may)
                    shown[name] = text
                self._mark(value)
                saved[name] = text[:80]
                continue
            if shown is not None:
                shown[name] = _shown(value)
            self._mark(value)
            saved[name] = self._describe(value)
            if isinstance(value, tuple):
                for i, (t, t_again) in enumerate(zip(value, again, strict=True)):
                    if isinstance(t, torch.Tensor):
                        self._saved_tensor(sid, f"{name}[{i}]", t, t_again, custom=False)
        return saved, _fn_label(type(fn).__name__, tuple(  # a value is cut at 50 characters
            (k, v[:MAX_ATTR_CHARS + 1]) for k, v in (shown or {}).items()))

    def _saved_tensor(self, owner: str, label: str, t: torch.Tensor, again: torch.Tensor,
                      custom: bool, variable: torch.Tensor | None | bool = False) -> None:
        """The saved edge between node `owner` and tensor `t`, which it saved as `label`
        (torchviz draws a custom Function's edge towards the node). A variable keeps its own
        node, drawn by its walk (or at the end); any other tensor is an orange node: its own
        if it is a live object, else (made afresh on every access) one named after its owner.
        `variable`: `self._variable(t)` where the caller has it already."""
        var = self._variable(t) if variable is False else variable
        if var is not None:
            t_sid = self.ids.of_tensor(var)
            self.saved_variables.setdefault(t_sid, var)
        else:
            self._mark(t)
            t_sid = self.ids.of_tensor(t) if t is again else f"{owner}.{label}"
        self._edge(*((t_sid, owner) if custom else (owner, t_sid)), "saved", dir="none")
        if var is None:
            grad = self.orders.gradient(t, owner) if self.orders is not None else None
            self._tensor_node(t_sid, t, "saved", grad or (None if custom else label))
            if custom:
                self.nodes[t_sid].custom = True  # torchviz always shows these

    def _variable(self, t: torch.Tensor) -> torch.Tensor | None:
        """The variable `t` is: itself if it is a leaf that requires grad or a named tensor;
        for an output unpacked afresh, the named tensor its node made; else None."""
        if id(t) in self.names or (t.is_leaf and t.requires_grad):
            return t
        made = self.made.get((id(t.grad_fn), t.output_nr)) if t.grad_fn is not None else None
        return made[1] if made is not None and made[0] is t.grad_fn else None

    def _describe(self, value: Any) -> str:
        """A saved value for the node's details; a variable's name goes first."""
        if isinstance(value, tuple) and any(torch.is_tensor(v) for v in value):
            return ", ".join(self._describe(v) for v in value)
        if torch.is_tensor(value):
            return self._described(value, self._variable(value))
        return _describe(value)

    def _described(self, t: torch.Tensor, variable: torch.Tensor | None) -> str:
        """A saved tensor for the node's details, `variable` being `self._variable(t)`."""
        name = self._name(variable) if variable is not None else ""
        return f"{name}: {_describe(t)}" if name else _describe(t)

    def _name(self, t: torch.Tensor) -> str:
        """A tensor's variable names, else its parameter path, else nothing."""
        return self.names.get(id(t)) or self.paths.of_param(t)[0] or ""

    def _tensor_node(self, sid: str, t: torch.Tensor, kind: str, name: str | None = None) -> None:
        """A tensor's node, labelled as torchviz's get_var_name does: `name` (else its
        variable's), then its sizes."""
        shape = _shape(t)
        size = ", ".join(map(str, shape)) if not t.is_nested else "nested"
        label = f"{name or self._name(t)}\n ({size})"
        colour = COLOURS[kind]
        self.body.append(_node_line(sid, label, colour))
        names = self.names.get(id(t))
        self.nodes[sid] = Node(
            id=sid, kind=kind, label=label, colour=colour,
            names=names.split(" = ") if names is not None else [],
            shape=shape, dtype=as_text(t.dtype), device=as_text(t.device),
            requires_grad=t.requires_grad, is_leaf=t.is_leaf,
            grad_fn=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
            version=version(t), module=self.paths.of_param(t)[1] if kind == "leaf" else None)

    def _edge(self, src: str, dst: str, kind: str, **attrs: str) -> None:
        self.body.append(_edge_line(src, dst, tuple(attrs.items())))
        self.edges.append(Edge(src=src, dst=dst, kind=kind, attrs=attrs))


@dataclass(frozen=True)
class _Kind:
    """What `_Drawing` needs of a type of backward node. A built-in type holds what its
    instances hold; a custom Function's node (with a `__dict__`, which may gain attributes)
    is asked each time (`attrs` None, `leaf` and `edges` by getattr)."""

    name: str
    attrs: list[tuple[str, str, bool]] | None  # `_saved_*` attribute, name, raw form may exist
    leaf: bool  # may have a `variable` (AccumulateGrad)
    edges: bool  # has `next_functions` on its type
    saves: bool  # has `saved_tensors` on its type (a custom Function's node)
    custom: bool


_KINDS: dict[type, _Kind] = {}  # built-in node types, as they are met


def _kind_of(fn: Any) -> _Kind:
    """`fn`'s type as `_Drawing` needs it, remembered where it is built in."""
    kind = type(fn)
    custom = isinstance(fn, torch.autograd.function.BackwardCFunction)
    if hasattr(fn, "__dict__"):  # a custom Function's node may gain attributes
        return _Kind(kind.__name__, None, True, False, hasattr(kind, "saved_tensors"), custom)
    attrs = [(attr, attr.removeprefix(SAVED_PREFIX), hasattr(kind, "_raw" + attr))
             for attr in _saved_attrs(fn)]
    found = _KINDS[kind] = _Kind(kind.__name__, attrs, hasattr(kind, "variable"),
                                 hasattr(kind, "next_functions"),
                                 hasattr(kind, "saved_tensors"), custom)
    return found


@functools.lru_cache(maxsize=1 << 14)
def _node_line(sid: str, label: str, colour: str | None) -> str:
    """`node_line`, remembered: a step draws mostly the nodes the step before drew."""
    return node_line(sid, label, {"fillcolor": colour} if colour is not None else {})


@functools.lru_cache(maxsize=1 << 14)
def _edge_line(src: str, dst: str, attrs: tuple[tuple[str, str], ...]) -> str:
    """`edge_line`, remembered."""
    return edge_line(src, dst, dict(attrs))


@functools.lru_cache(maxsize=1 << 10)
def _frame(rows: int) -> tuple[str, str]:
    """The DOT text around a body of `rows` statements, as make_dot's Digraph writes it once
    torchviz's resize_graph has sized it."""
    dot = Digraph(node_attr=NODE_ATTR, graph_attr=dict(size="12,12"))
    dot.body = [""] * rows
    resize_graph(dot)
    head, tail = dot.source, "}\n"
    assert head.endswith(tail)
    return head[:-len(tail)], tail


def _source(body: list[str]) -> str:
    """The DOT text of a graph of statements `body`: Digraph.source, without building a
    Digraph (50 statements: 28 µs to 0.5)."""
    head, tail = _frame(len(body))
    return head + "".join(body) + tail


def _saved_attrs(fn: Any) -> list[str]:
    """The `_saved_*` attributes of a backward node."""
    return [a for a in dir(fn) if a.startswith(SAVED_PREFIX)]


def _packed(fn: Any, attr: str) -> Any:
    """The raw SavedTensor(s) behind `fn.<attr>` if reading it would call an unpack hook of
    the program's (`saved_tensors_hooks`, `SavedTensor.register_hooks`), else None. The raw
    object says without unpacking; where this PyTorch cannot say, it counts as packed."""
    try:
        raw = getattr(fn, "_raw" + attr, None)
    except RuntimeError:  # freed by backward(): reading it fails without calling anything
        return None
    raws = raw if isinstance(raw, tuple) else (raw,)
    hooked = any(r is not None and getattr(r, "unpack_hook", r) is not None for r in raws)
    return raw if hooked else None


def _kind(t: torch.Tensor, kind: str) -> str:
    """A leaf that requires grad is a leaf (blue); any other tensor of `kind`."""
    return "leaf" if t.is_leaf and t.requires_grad else kind


def _shape(t: torch.Tensor) -> list[int]:
    """A tensor's sizes; none for a nested tensor, whose rows differ."""
    return [] if t.is_nested else [int(v) for v in t.shape]


def _shown(value: Any) -> str:
    """How torchviz's get_fn_name shows one saved value."""
    if torch.is_tensor(value):
        return "[saved tensor]"
    if isinstance(value, tuple) and any(torch.is_tensor(t) for t in value):
        return "[saved tensors]"
    return read(value)


@functools.lru_cache(maxsize=1 << 12)
def _fn_label(name: str, attrs: tuple[tuple[str, str], ...]) -> str:
    """torchviz's get_fn_name(fn, show_attrs=True, max_attr_chars=50) from the values shown
    (attribute, value), remembered: a node's label is the same at every step."""
    if not attrs:
        return name
    width1 = max(len(k) for k, _ in attrs)
    width2 = min(max(len(v) for _, v in attrs), MAX_ATTR_CHARS)
    rows = (f"{k:<{width1}}: {v[:width2 - 3] + '...' if len(v) > width2 else v:>{width2}}"
            for k, v in attrs)
    return f"{name}\n{'-' * max(width1 + width2 + 2, len(name))}\n" + "\n".join(rows)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(_shape(value))} {str(value.dtype).removeprefix('torch.')}"
    return read(value)[:80]


def _unreadable(error: RuntimeError) -> str:
    """Why a saved value cannot be read: backward freed it, or the program changed it in
    place since (PyTorch's version check refuses it, as backward would)."""
    return MODIFIED if "modified by an inplace operation" in str(error) else FREED
