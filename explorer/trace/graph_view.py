"""What part of a recorded graph a page draws, and the DOT for it. Pure: no torch, no Streamlit.

A recorded graph ({dot, nodes, edges}, see explorer.record.graph) holds everything. A view keeps
the nodes that lead to the chosen output tensors, optionally drops what built-in nodes saved
(orange tensors, and the saved edges to variables) and backward-node attributes (torchviz's
`show_saved` / `show_attrs`), collapses long runs
of the same op into one group node when the graph is big, and writes DOT in torchviz's
style with a hover tooltip per node.

A run's own DOT is kept only as torchviz writes it (`checked_dot`), else written anew from
the nodes and edges (`torchviz_dot`).

`node_line` / `edge_line` write the DOT statements `graphviz.Digraph.node` / `.edge` would,
byte for byte, without their per-call overhead (a 10,000-node graph is written several times
per run); explorer.record.graph uses them too.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from graphviz import Digraph, quoting
from msgspec.structs import replace

from explorer.trace.schema import Edge, Graph, Node, Variable

if TYPE_CHECKING:
    from explorer.trace import Trace

T = TypeVar("T")

NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                 height="0.2", fontname="monospace")  # torchviz's node style
# A recorded graph comes from the run, which is untrusted: graphviz gets only torchviz's
# colours and edge styles from it, and every text as a plain quoted string (never an
# HTML-like `<...>` label, whose HREF graphviz would turn into a link in the SVG).
COLOURS = {"leaf": "lightblue", "saved": "orange", "output": "darkolivegreen1",
           "base": "darkolivegreen3"}
EDGE_ATTRS = {"style": {"dotted"}, "dir": {"none"}}
# What torchviz writes, and all a run's DOT may hold: a header, then nodes with a label and a
# colour, and edges with a style. An id or label is a plain or quoted string (a quoted one as
# graphviz reads it: `\\` and `\"` inside), never a keyword or an HTML-like `<...>`.
# C0 controls, DEL, C1 controls (NEL among them), Unicode's line and paragraph separators,
# and what XML may not hold (surrogates, U+FFFE, U+FFFF): never inside a DOT string (`_quote`).
CONTROLS = "\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff"
_ID = (r'(?!(?i:node|edge|graph|digraph|subgraph|strict)\b)[a-zA-Z_][a-zA-Z0-9_]*'
       rf'|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)|"[^"\\{CONTROLS}]*(?:\\[^{CONTROLS}][^"\\{CONTROLS}]*)*"')
HEADER = re.compile(r'digraph \{\n\tgraph \[size="[0-9.]+,[0-9.]+"\]\n\tnode \[[^\]\n]*\]\n')
STATEMENT = re.compile(
    rf'\t(?:{_ID}) \[label=(?:{_ID})(?: fillcolor=(?:{"|".join(COLOURS.values())}))?\]\n'
    rf'|\t(?:{_ID}) -> (?:{_ID})(?: \[(?:dir=none|style=dotted)\])?\n')
CLUSTER_STYLE = "style=\"dashed,rounded\" color=grey50 fontcolor=grey30 fontname=monospace"
FREED = "saved values freed by backward()"  # a saved value's details once backward() ran
MODIFIED = "changed in place since it was saved"  # ...once the program changed it in place
MARK = "#f76707"  # the outline of nodes marked: the backward animation's orange
# A backward node's fill by its derivative order (2, 3, 4…; order 1 keeps torchviz's grey),
# round again past the last; each with the Streamlit colour of the page's legend.
ORDER_FILLS = (("#d0bfff", "violet"), ("#fcc2d7", "red"), ("#ffe066", "yellow"),
               ("#96f2d7", "green"))
GREY = "lightgrey"  # a backward node's fill: graphviz's for style=filled with no colour given
SHOWN_NAME = 400  # characters of what a page calls a node: a tensor's names, the first of them
COLLAPSE_ABOVE = 300  # nodes; above this, chains of one op are grouped
MIN_CHAIN = 4


class Group(Node, kw_only=True):
    """A node a view draws in place of its `members`: a module folded, or a chain of one op
    collapsed (kind `group`)."""

    members: list[str]
    folded: bool = False


@dataclass
class View:
    """The DOT to draw, and what the view left out or grouped."""

    dot: str
    nodes: dict[str, Node]  # a Group for each group
    groups: dict[str, list[str]] = field(default_factory=dict)  # group id -> member ids
    hidden: int = 0  # nodes not drawn because they do not lead to the chosen outputs


def outputs(graph: Graph) -> list[Node]:
    """Tensor nodes that carry a variable's name: the roots a learner can choose."""
    return [n for n in graph.nodes if n.names]


def shown_name(node: Node) -> str | None:
    """What a page calls `node`: the program's names of a tensor, else the name its picture
    writes (a parameter's module path, `net.0.weight`), else a backward node's op. Past
    SHOWN_NAME characters a tensor's names are cut (`…`): pages write it many times."""
    if node.names:
        shown = ", ".join(node.names)
        return shown if len(shown) <= SHOWN_NAME else shown[:SHOWN_NAME - 1] + "…"
    if node.kind not in ("backward", "group"):
        return node.label.split("\n", 1)[0].strip() or None
    return node.name


def named_outputs(graph: Graph) -> dict[str, str]:
    """Variable name -> the id of the tensor node it names."""
    return {name: node.id for node in outputs(graph) for name in node.names or ()}


def default_root(trace: Trace, index: int, named: dict[str, str]) -> str | None:
    """The variable the graph after step `index` is drawn for by default: the one in the
    graph assigned most recently, or whose graph an in-place operation autograd recorded
    grew (`total += loss`), else the first named one; for a list or tuple, its first tensor
    the graph names (`return[0]`). A new `.grad`, or a change autograd did not record (under
    `no_grad`), does not count: the variable holds the same graph.
    Where several changed since the step before (rounds between not stepped), the one whose
    tensor's node was made last. In a function, its own variables count too."""
    makers: dict[int, dict[str, Node]] = {}  # by graph: each name's tensor's backward node

    def maker(i: int, name: str) -> Node | None:
        graph = trace.steps[i].graph
        if graph is None:
            return None
        if graph not in makers:
            makers[graph] = _makers(trace.graphs[graph])
        return makers[graph].get(name)

    described: dict[int, dict[str, Variable]] = {}  # by step: its variables by name

    def variables(i: int) -> dict[str, Variable]:
        if i not in described:
            step = trace.steps[i]
            described[i] = in_scope(step.variables, step.locals, step.calls)
        return described[i]

    def holds(i: int, name: str) -> Any:
        info = variables(i).get(name) if i >= 0 else None
        made = maker(i, name) if info else None
        return info and (info.memory, info.shape, info.grad_fn, made and made.id)

    drawn = {}  # a variable's name -> the name its graph is drawn for: a list's or a tuple's
    for name in named:  # first tensor's (`return[0]`), where the graph names no tensor so
        drawn.setdefault(name.split("[", 1)[0], name)
    drawn |= {name: name for name in named}
    for i in range(index, -1, -1):
        changed = [drawn[name] for name in variables(i)
                   if name in drawn and holds(i - 1, name) != holds(i, name)]
        if changed:
            return max(changed, key=lambda name: _seq(maker(i, name)))
    return next(iter(named), None)


def in_scope(variables: dict[str, T], local: dict[str, T] | None,
             calls: list[str] | None) -> dict[str, T]:
    """Values by the names a step's graph gives them: the program's `variables`, then the
    `local` ones of the innermost of `calls` (one whose name a global has as `forward.y`;
    the value it returns as `return`)."""
    if local is None or not calls:
        return variables
    function = calls[-1].rsplit(".", 1)[-1]
    return variables | {name if name not in variables else f"{function}.{name}": value
                        for name, value in local.items()}


def _seq(node: Node | None) -> int:
    """A backward node's sequence number; -1 where it has none."""
    return -1 if node is None or node.seq is None else node.seq


def _makers(graph: Graph) -> dict[str, Node]:
    """Each name in `graph` with the backward node that made its tensor."""
    nodes = {node.id: node for node in graph.nodes}
    made = {e.dst: nodes[e.src] for e in graph.edges if e.kind == "grad" and e.src in nodes}
    return {name: made[node.id] for node in graph.nodes if node.id in made
            for name in node.names or ()}


class Made(NamedTuple):
    """Where a node was made: at step `step` (its index in Trace.steps), by its line; or, not
    `stepped`, by lines not stepped before it."""

    step: int
    stepped: bool


def made_at(trace: Trace, steps: int | None = None) -> dict[str, Made]:
    """Node id -> where it was made, read from the first `steps` steps (all: None): at the
    first step whose graph holds it (ids are stable through a run), by the step's line; but
    by lines not stepped where it was made before the step's round began (`Round.began`), and
    by the line that called the step's function where it was made before the function began
    (`Step.entered`: `f(x @ w)`), at that line's step once the call returns. Nodes are dated
    as `Dates` says. Each graph's nodes are sorted by date once, and each step takes from
    either end of what is left: the run's steps cost what their graphs hold, once."""
    made: dict[str, Made] = {}
    waiting: dict[int, deque[tuple[float, str]]] = {}  # graph -> its nodes left, by date
    for index, step in enumerate(trace.steps[:steps]):
        if step.graph is None:
            continue
        if step.graph not in waiting:
            dates = Dates(trace.graphs[step.graph]).date
            waiting[step.graph] = deque(sorted((d, n) for n, d in dates.items() if n not in made))
        left = waiting[step.graph]
        began = step.rounds[-1].began if step.rounds else None
        since = -math.inf if began is None else began
        while left and left[0][0] < since:  # made in rounds not stepped
            made.setdefault(left.popleft()[1], Made(index, False))
        after = max(since, -math.inf if step.entered is None else step.entered)
        while left and left[-1][0] >= after:  # by this line (before it: by the caller's)
            made.setdefault(left.pop()[1], Made(index, True))
    return made


def node_lines(trace: Trace) -> dict[str, tuple[int, int]]:
    """Node id -> the first and last line of the statement that made it (`made_at`); none for
    one made by lines not stepped."""
    return {node: (trace.steps[at.step].line, trace.steps[at.step].end_line)
            for node, at in made_at(trace).items() if at.stepped}


def view(graph: Graph, roots: list[str] | None = None, show_saved: bool = True,
         show_attrs: bool = True, collapse: bool = True, fold: tuple[str, ...] = (),
         notes: dict[str, str] | None = None, marked: frozenset[str] = frozenset(),
         order: int | None = None) -> View:
    """The part of `graph` behind `roots` (node ids; all outputs when None), as DOT, with the
    nodes of each module in `fold` (paths, see `modules`) drawn as one node, `notes` (node
    id -> text, e.g. its values) written under the labels of the nodes they name, the
    nodes `marked` outlined in orange (those a statement added, say), and, given an `order`,
    only the backward nodes of that derivative order with the tensors beside them."""
    nodes: dict[str, Node] = {n.id: n for n in graph.nodes}
    edges = graph.edges if show_saved else [
        e for e in graph.edges if e.kind != "saved" or _custom(nodes, e.src)
        or _custom(nodes, e.dst)]
    keep = _behind(nodes, edges, roots) if roots else set(nodes)
    if not show_saved:
        keep -= {i for i, n in nodes.items() if n.kind == "saved" and not n.custom}
    if order is not None:
        keep = _of_order(nodes, edges, keep, order)
    edges = [e for e in edges if e.src in keep and e.dst in keep]
    kept = {i: n for i, n in nodes.items() if i in keep}
    groups: dict[str, list[str]] = {}
    if fold:
        kept, edges, groups = _fold(kept, edges, fold)
    if collapse and len(kept) > COLLAPSE_ABOVE:
        kept, edges, chains = _collapse(kept, edges)
        groups |= chains
    ops = {n.id: n.name for n in graph.nodes if n.kind == "backward"}
    return View(_dot(kept, edges, show_attrs, notes or {}, marked, ops), kept, groups,
                hidden=len(nodes) - len(keep))


def order_of(node: Node) -> int:
    """A backward node's derivative order: 1 for the forward's, k + 1 for what the backward
    of an order-k node made."""
    return node.order or 1


def order_fill(order: int) -> tuple[str, str]:
    """The fill of a backward node of derivative `order` above 1, and its legend's colour."""
    return ORDER_FILLS[(order - 2) % len(ORDER_FILLS)]


def orders(graph: Graph) -> dict[int, int]:
    """How many backward nodes of each derivative order `graph` has, lowest order first
    (empty when all are the forward's)."""
    counts: dict[int, int] = defaultdict(int)
    for node in graph.nodes:
        if node.kind == "backward":
            counts[order_of(node)] += 1
    return dict(sorted(counts.items())) if len(counts) > 1 or 1 not in counts else {}


def _of_order(nodes: dict[str, Node], edges: list[Edge], keep: set[str],
              order: int) -> set[str]:
    """Of `keep`, the backward nodes of `order` and the tensors joined to them."""
    chosen = {i for i in keep if nodes[i].kind == "backward" and order_of(nodes[i]) == order}
    beside = {end for e in edges if e.src in chosen or e.dst in chosen for end in (e.src, e.dst)
              if end in keep and nodes[end].kind != "backward"}
    return chosen | beside


def _custom(nodes: dict[str, Node], node: str) -> bool:
    return node in nodes and bool(nodes[node].custom)


class Dates:
    """When the nodes of one graph were made (`date`), as the run's clock says: a backward
    node by its sequence number (`Node.seq`); one without (a tensor, a leaf's AccumulateGrad)
    by the latest of the numbered nodes it is joined to, or never before anything (infinite)
    where it is joined to none."""

    def __init__(self, graph: Graph) -> None:
        self.date: dict[str, float] = {n.id: n.seq for n in graph.nodes if n.seq is not None}
        joined: dict[str, float] = {}
        for edge in graph.edges:
            for end, other in ((edge.src, edge.dst), (edge.dst, edge.src)):
                if other in self.date and end not in self.date:
                    joined[end] = max(joined.get(end, -math.inf), self.date[other])
        self.date |= {n.id: joined.get(n.id, math.inf) for n in graph.nodes
                      if n.id not in self.date}

    def before(self, ids: set[str], began: int | None) -> frozenset[str]:
        """Of the nodes `ids`, those made before the sequence number `began`."""
        if began is None:
            return frozenset()
        return frozenset(i for i in ids if self.date.get(i, math.inf) < began)


def modules(graph: Graph) -> list[str]:
    """The paths of the modules whose calls made nodes of `graph`, and of the modules around
    them (`model` around `model.fc1`), in order."""
    return sorted(_around(node.module for node in graph.nodes if node.module is not None))


def _around(paths: Iterable[str]) -> set[str]:
    """The module `paths` and the modules around each (`model` around `model.fc1`), each
    walked up only until one met before."""
    found: set[str] = set()
    for path in set(paths):
        while path and path not in found:
            found.add(path)
            path = path.rpartition(".")[0]
    return found


def _fold(nodes: dict[str, Node], edges: list[Edge], fold: tuple[str, ...]) -> tuple[
        dict[str, Node], list[Edge], dict[str, list[str]]]:
    """Each module of `fold` (the outermost, where one holds another) as one node, in the
    module around it."""
    folding = set(fold)
    outermost = list(dict.fromkeys(p for p in fold if not folding & _outer(p)))
    number_of = {path: number for number, path in enumerate(outermost)}
    held: dict[str, list[str]] = {}  # each node in the one folded module it is in, if any
    for i, n in nodes.items():
        if n.module is not None and (path := next(
                (p for p in (n.module, *_outer(n.module)) if p in number_of), None)):
            held.setdefault(path, []).append(i)
    groups: dict[str, list[str]] = {}
    shown: dict[str, Node] = {}
    for path, number in number_of.items():
        members = held.get(path, [])
        if members:
            gid = f"module{number + 1}"
            groups[gid] = members
            shown[gid] = Group(id=gid, kind="group", name=path, members=members, folded=True,
                               label=f"{path}\n({len(members)} nodes, folded)",
                               module=path.rsplit(".", 1)[0] if "." in path else None)
    member_of = {m: gid for gid, members in groups.items() for m in members}
    return *_grouped(nodes, edges, member_of, shown), groups


@functools.lru_cache(maxsize=1 << 12)
def _outer(path: str) -> frozenset[str]:
    """The modules around module `path` (`model` and `model.layers` around
    `model.layers.0`)."""
    around = set()
    while "." in path:
        path = path.rpartition(".")[0]
        around.add(path)
    return frozenset(around)


def _behind(nodes: dict[str, Node], edges: list[Edge], roots: list[str]) -> set[str]:
    """Every node with a path to a root, and the saved tensors of the backward nodes kept (not
    the nodes that saved a tensor kept: a later operation on a root is not behind it)."""
    into: dict[str, list[str]] = defaultdict(list)
    saved: dict[str, list[str]] = defaultdict(list)  # backward node -> the tensors it saved
    for e in edges:
        if e.kind == "saved":
            owner, tensor = (e.src, e.dst) if e.src in nodes and (
                nodes[e.src].kind == "backward") else (e.dst, e.src)
            saved[owner].append(tensor)
        else:
            into[e.dst].append(e.src)
    keep, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node not in keep:
            keep.add(node)
            stack.extend(into[node])
    return keep | {s for node in keep for s in saved[node]}


def _collapse(nodes: dict[str, Node], edges: list[Edge]) -> tuple[
        dict[str, Node], list[Edge], dict[str, list[str]]]:
    """Group runs of at least MIN_CHAIN backward nodes of one op, each feeding the next, with
    the tensors they alone saved."""
    ins: dict[str, list[str]] = defaultdict(list)
    outs: dict[str, list[str]] = defaultdict(list)
    saved_by: dict[str, set[str]] = defaultdict(set)  # saved tensor -> nodes that saved it
    for e in edges:
        if e.kind == "saved":
            saved, owner = (e.dst, e.src) if nodes[e.dst].kind == "saved" else (e.src, e.dst)
            saved_by[saved].add(owner)
        else:
            outs[e.src].append(e.dst)
            ins[e.dst].append(e.src)

    def link(node: str) -> str | None:
        """The next node of a chain: the one backward node of the same op fed by `node` alone."""
        if len(outs[node]) != 1:
            return None
        nxt = outs[node][0]
        same = nodes[nxt].name == nodes[node].name
        return nxt if same and nodes[nxt].kind == "backward" and len(ins[nxt]) == 1 else None

    member_of: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for start in nodes:
        if nodes[start].kind != "backward" or any(link(src) == start for src in ins[start]):
            continue  # not the first node of a chain
        chain = [start]
        while (nxt := link(chain[-1])) is not None:
            chain.append(nxt)
        if len(chain) >= MIN_CHAIN:
            gid = f"group{len(groups) + 1}"
            groups[gid] = chain
            member_of.update(dict.fromkeys(chain, gid))
    for saved, owners in saved_by.items():
        groups_of = {member_of.get(o) for o in owners}
        if nodes[saved].kind == "saved" and len(groups_of) == 1 and None not in groups_of:
            member_of[saved] = groups_of.pop()
    shown: dict[str, Node] = {
        gid: Group(id=gid, kind="group", name=nodes[chain[0]].name, members=chain,
                   label=f"{nodes[chain[0]].name} × {len(chain)}\n(collapsed chain)",
                   module=_module_of(nodes, chain))
        for gid, chain in groups.items()}
    return *_grouped(nodes, edges, member_of, shown), groups


def _module_of(nodes: dict[str, Node], members: list[str]) -> str | None:
    """The module all `members` belong to, if one."""
    paths = {nodes[m].module for m in members}
    return paths.pop() if len(paths) == 1 else None


def _grouped(nodes: dict[str, Node], edges: list[Edge], member_of: dict[str, str],
             shown: dict[str, Node]) -> tuple[dict[str, Node], list[Edge]]:
    """`nodes` with the members of groups replaced by the groups' nodes (`shown`), edges
    rewired."""
    kept = {i: n for i, n in nodes.items() if i not in member_of} | shown
    rewired, seen = [], set()
    for e in edges:
        src, dst = member_of.get(e.src, e.src), member_of.get(e.dst, e.dst)
        if src != dst and (src, dst) not in seen:
            seen.add((src, dst))
            rewired.append(replace(e, src=src, dst=dst))
    return kept, rewired


def _dot(nodes: dict[str, Node], edges: list[Edge], show_attrs: bool, notes: dict[str, str],
         marked: frozenset[str], ops: dict[str, str | None]) -> str:
    """DOT for `nodes` and `edges`; `ops`: every backward node's op, by id."""
    body = []
    for node in nodes.values():
        label = node.label if show_attrs or node.kind != "backward" else node.name
        if node.id in notes:
            label = f"{label}\n{notes[node.id]}"
        attrs = {"tooltip": tooltip(node, ops.get(node.made_by or ""))}
        if node.kind == "group":
            attrs.update(fillcolor=GREY, style="filled,dashed")
        elif node.kind != "backward":
            attrs["fillcolor"] = COLOURS.get(node.kind, "white")
        elif order_of(node) > 1:
            attrs["fillcolor"] = order_fill(order_of(node))[0]
        if node.id in marked:  # the outline only: graphviz fills with `color` if no fill
            attrs.update(color=MARK, penwidth="2.5", fillcolor=attrs.get("fillcolor", GREY))
        body.append(node_line(node.id, label, attrs))
    body.extend(_clusters(nodes))
    body.extend(edge_line(e.src, e.dst, _edge_attrs(e)) for e in edges)
    return _source(body)


def _clusters(nodes: dict[str, Node]) -> list[str]:
    """A dashed box named after each module around the nodes its calls made, nested as the
    modules are (torchview's clusters)."""
    members: dict[str, list[str]] = defaultdict(list)
    for node in nodes.values():
        if node.module is not None:
            members[node.module].append(node.id)
    inner: dict[str | None, list[str]] = defaultdict(list)  # module -> the modules in it
    for path in _around(members):
        inner[path.rsplit(".", 1)[0] if "." in path else None].append(path)
    lines: list[str] = []
    stack: list[str | None] = sorted(inner[None], reverse=True)
    while stack:
        path = stack.pop()
        if path is None:  # the end of a module's box
            lines.append("\t}\n")
            continue
        lines.append(f"\tsubgraph {_quote('cluster_' + path)} {{\n\t\tlabel={_quote(path)} "
                     f"{CLUSTER_STYLE}\n")
        lines.extend(f"\t\t{_quote(member)}\n" for member in members.get(path, ()))
        stack.append(None)
        stack.extend(sorted(inner[path], reverse=True))
    return lines


def torchviz_dot(graph: Graph) -> str:
    """The DOT torchviz writes for a recorded graph, written here from its nodes and edges."""
    lines = [node_line(n.id, n.label, {} if n.kind == "backward" else
                       {"fillcolor": COLOURS.get(n.kind, "white")}) for n in graph.nodes]
    return _source(lines + [edge_line(e.src, e.dst, _edge_attrs(e)) for e in graph.edges])


def checked_dot(dot: str, graph: Graph) -> str:
    """`dot` (a run's, untrusted) if it is torchviz's DOT and nothing else: each statement a
    node with a label and one of torchviz's colours, or an edge with one of its styles, ids
    and labels plain strings. Anything else (a link, an HTML label, another attribute) and the
    DOT is written anew from the graph's nodes and edges."""
    statements = _statements(dot)
    return torchviz_dot(graph) if statements is None else _source(statements)


def _statements(dot: str) -> list[str] | None:
    """The statements of `dot` after torchviz's header, if all are STATEMENTs."""
    head = HEADER.match(dot)
    if head is None or not dot.endswith("}\n"):
        return None
    statements, at, end = [], head.end(), len(dot) - 2
    while at < end:
        found = STATEMENT.match(dot, at, end)
        if found is None:
            return None
        statements.append(found[0])
        at = found.end()
    return statements


def _edge_attrs(edge: Edge) -> dict[str, str]:
    """The attributes an edge may have: torchviz's styles, nothing else."""
    return {k: v for k, v in (edge.attrs or {}).items() if v in EDGE_ATTRS.get(k, ())}


def _source(body: list[str]) -> str:
    """DOT of `body` with torchviz's node style, sized as its resize_graph does."""
    dot = Digraph(node_attr=NODE_ATTR)
    dot.body = body
    size = max(12, len(body) * 0.15)
    dot.graph_attr.update(size=f"{size},{size}")
    return dot.source


def tooltip(node: Node, maker: str | None = None) -> str:
    """The details shown when hovering over a node (`maker`: the op of the node whose
    backward made it)."""
    if isinstance(node, Group):
        return (f"{node.name}: {len(node.members)} nodes, folded" if node.folded
                else f"{len(node.members)} × {node.name}, collapsed")
    if node.kind == "backward":
        lines = [str(node.name)] + [f"{k}: {v}" for k, v in (node.saved or {}).items()]
        if node.order:
            lines.append(f"derivative order {node.order}: made by the backward of "
                         f"{maker or 'a node'} ({node.made_by}) in backward call {node.made_in}")
        return "\n".join(lines)
    names = ", ".join(node.names or ()) or f"({node.kind} tensor)"
    return "\n".join([names, f"shape {tuple(node.shape or ())}  {node.dtype}  {node.device}",
                      f"requires_grad={node.requires_grad}  is_leaf={node.is_leaf}",
                      f"grad_fn={node.grad_fn}  _version={node.version}"])


REMEMBERED = 200  # characters of a text whose quoting is remembered


def _quote(text: str) -> str:
    """The one way a text reaches DOT: as a quoted string (never an HTML-like `<...>`, whose
    HREF graphviz would turn into a link) that graphviz draws as written. A backslash is
    drawn as itself (no `\\N`, `\\G` or line continuation), an `&` too (no entity such as
    `&#0;`), a line break is graphviz's `\\n`, a tab a space, and every other control
    character or line separator visible (NUL as ␀): DOT text holds no control character but
    the line end and tab around each statement, so no text can end its string or line early
    (`dot` drops the rest of a line after a NUL), and its SVG is well-formed XML. Remembered
    up to REMEMBERED characters: ids, names and short labels repeat, and the memory serves
    every session (65,536 labels of 2,000 Chinese characters held 517 MB)."""
    text = str(text)
    return _remembered(text) if len(text) <= REMEMBERED else _quoted(text)


def _quoted(text: str) -> str:
    """graphviz's `quoting.quote(..., is_html_string=never)` of the text made drawable, in
    linear time: its own regular expressions take quadratic time on a run of backslashes (a
    label of 2,000 took 0.2 s). Every backslash here is doubled, so each `"` is one to
    escape, and an id or number stays bare, as graphviz leaves it."""
    text = text.replace("\\", "\\\\").replace("&", "&amp;")
    text = _CONTROL.sub(_visible, text)
    if quoting.ID.match(text) and text.lower() not in quoting.KEYWORDS:
        return text
    return '"' + text.replace('"', '\\"') + '"'


_remembered = functools.lru_cache(maxsize=1 << 16)(_quoted)
_CONTROL = re.compile(f"[{CONTROLS}]")
_SHOWN = {"\n": "\\n", "\t": " ", "\x7f": "\u2421"}
# graphviz reads `\\G`, `\\N`… in a tooltip as the graph's or node's name even when its
# backslash is escaped: a tooltip's backslash is drawn as its look-alike instead.
LOOKALIKE = "\u29f5"


def _visible(match: re.Match[str]) -> str:
    """A control character as DOT draws it: a line break, a space, or its picture."""
    char = match[0]
    if char in _SHOWN:
        return _SHOWN[char]
    return chr(0x2400 + ord(char)) if char < " " else f"\\\\u{ord(char):04x}"


def _attr_list(label: str | None, attrs: dict[str, str]) -> str:
    """graphviz's ` [label=… key=value …]`: the label first, then the attributes sorted."""
    parts = [f"label={_quote(label)}"] if label is not None else []
    parts += [f"{_quote(k)}={_quote(v.replace(chr(92), LOOKALIKE) if k == 'tooltip' else v)}"
              for k, v in sorted(attrs.items()) if v is not None]
    return f" [{' '.join(parts)}]" if parts else ""


def node_line(name: str, label: str | None, attrs: dict[str, str]) -> str:
    """The statement `Digraph.node(name, label, **attrs)` appends to the body."""
    return f"\t{_quote(name)}{_attr_list(label, attrs)}\n"


def edge_line(src: str, dst: str, attrs: dict[str, str]) -> str:
    """The statement `Digraph.edge(src, dst, **attrs)` appends to the body: its ends quoted
    (no `:port` for a run to choose)."""
    return f"\t{_quote(src)} -> {_quote(dst)}{_attr_list(None, attrs)}\n"
