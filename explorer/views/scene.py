"""The scene of an autograd error: where on the graph and on which line a run's backward went
wrong, read from what the run recorded and PyTorch's own message. Pure, and made on the
server: the recorder computes nothing more for it, so the program ran exactly as it would.

- a saved tensor modified in place: the node that saved it, its version when saved and now,
  and the line that changed it;
- backward through a freed graph: the nodes whose saved values the first backward freed, and
  that backward's line;
- a non-scalar root given no gradient: the root, and the backward call;
- a leaf that requires grad changed in place, or `requires_grad` on integers: the variable;
- NaN or infinity: the first node, in the engine's order, that received finite gradients and
  sent one that is not (with or without an error).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from explorer.trace import Trace
from explorer.trace.graph_view import FREED, MODIFIED, named_outputs, node_lines
from explorer.trace.schema import Gradient, Graph, Node, Variable
from explorer.views.carried import ancestry, reached
from explorer.views.present import counted

# PyTorch's words for a saved tensor changed in place: its type and shape, the node that made
# it, and its versions. Each part can be read one way only (a repeat inside a repeat of digits
# once made a message of 37 digits take minutes: explorer.bench.patterns attacks every pattern).
INPLACE = re.compile(r"modified by an inplace operation: \[\S+ \[([\d, ]{0,1300})\]\]"
                     r"(?:, which is output \d+ of (\w+),)? is at version (\d{1,18}); "
                     r"expected version (\d{1,18})")
FORWARD_LINE = re.compile(r'"<program>", line (\d{1,9})')  # in anomaly mode's traceback
FREED_AGAIN = "backward through the graph a second time"
NOT_SCALAR = "grad can be implicitly created only for"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation"
NOT_FLOAT = "floating point and complex dtype can require gradients"
UNRECORDED = {"no_grad", "inference_mode"}  # blocks where autograd records nothing
ADDING = {"append", "extend", "insert"}  # what keeps a round's tensor in a list
NOTHING = Variable(kind="none", values=None)  # a variable before it was first assigned


@dataclass(frozen=True)
class Scene:
    """What to mark: `kind` (a text key's suffix), the graph's node ids, the line to read, and
    the values its words need."""

    kind: str
    nodes: tuple[str, ...]
    line: int | None
    said: dict[str, Any] = field(default_factory=dict)


def scene(trace: Trace, code: str) -> Scene | None:
    """The scene of the run's autograd error, or of the first non-finite gradient; None if
    the run had neither."""
    error = trace.error
    message = error.message if error else ""
    if error and (found := INPLACE.search(message)):
        return _inplace(trace, code, *found.groups())
    if FREED_AGAIN in message:
        return _freed(trace, code)
    if NOT_SCALAR in message and trace.backward:
        roots = tuple(trace.backward[-1].roots)
        return Scene("not_scalar", roots, error.line if error else None,
                     {"root": _names(trace, roots)})
    if error and (LEAF_INPLACE in message or NOT_FLOAT in message):
        names = _assigned(code, error.line)
        nodes = tuple(n.id for n in _graph(trace).nodes if set(n.names or ())
                      & set(names))
        return Scene("leaf_inplace" if LEAF_INPLACE in message else "not_float", nodes,
                     error.line, {"name": ", ".join(names) or "?"})
    return _not_finite(trace)


def _graph(trace: Trace) -> Graph:
    """The graph after the last statement that ran, as the Graph page draws it: the failing
    call's graph as it was before the call freed what it saved."""
    return trace.graph or Graph(dot=None, nodes=[], edges=[])


def _inplace(trace: Trace, code: str, shape: str, op: str | None, now: str,
             saved: str) -> Scene:
    """The tensor the message names by its shape and the op that made it (none: a leaf): the
    variable of that shape and maker whose version passed `saved` (and the line that did
    it), and the nodes that saved it: what they saved reads as changed in place."""
    size = [int(n) for n in shape.replace(",", " ").split()]
    name, line, before = None, None, {}
    for step in trace.steps:
        for var, info in step.variables.items():
            was = before.get(var, NOTHING)
            if info is was or info.shape != size:  # unchanged since the step before: passed
                continue
            maker = _made_by(op, was.grad_fn) or _made_by(
                op, info.grad_fn)  # as it was saved, or (a saved input) as it is
            if maker and (info.version or 0) > int(saved) >= (was.version or 0):
                name, line = var, step.line
        if name:
            break
        before = step.variables
    if name is None and op:  # changed inside a function: where the code changes op's output
        name, line = _changed_in_place(code, op) or (None, None)
    graph = _graph(trace)
    tensors = {n.id for n in graph.nodes if name in (n.names or ())}
    nodes = tuple(n.id for n in graph.nodes if MODIFIED in (n.saved or {}).values())
    return Scene("inplace", nodes + tuple(sorted(tensors)), line,
                 {"tensor": name or "?", "op": _names(trace, nodes) or "?", "saved": saved,
                  "now": now})


def _made_by(op: str | None, grad_fn: str | None) -> bool:
    """Whether a tensor with `grad_fn` is the output of node `op` as PyTorch's message names
    it (`Mul` or `MulBackward0`: MulBackward0), or a leaf where `op` is None."""
    if op is None:
        return grad_fn is None or grad_fn == "None"
    rest = str(grad_fn).removeprefix(op)
    number = rest.removeprefix("Backward")
    return rest == "" or (number != rest and (number == "" or number.isdecimal()))


def _freed(trace: Trace, code: str) -> Scene:
    """The nodes whose saved values are freed (of those the failing backward walked into) and
    where the fix goes. In a loop: what carries
    them from round to round (`_carried`); else the line before the loop that made them.
    Elsewhere, the first backward (the step after which they were first freed:
    retain_graph=True there). Each node is read once, and each graph once, however many
    steps show it (graphs share their nodes)."""
    known: dict[int, bool] = {}  # a node's id() → whether a value it saved was freed
    holding: dict[int, bool] = {}  # a graph's index → whether it holds such a node

    def was_freed(node: Node) -> bool:
        if id(node) not in known:
            known[id(node)] = FREED in (node.saved or {}).values()
        return known[id(node)]

    def freed(graph: Graph) -> list[Node]:
        return [n for n in graph.nodes if was_freed(n)]

    def holds(index: int) -> bool:
        if index not in holding:
            holding[index] = any(map(was_freed, trace.graphs[index].nodes))
        return holding[index]

    graph = _graph(trace)
    call = trace.backward[-1] if trace.backward else None
    called = call.graph if call is not None else None
    found = freed(graph) or (freed(trace.graphs[called]) if called is not None else [])
    if call is not None and call.raised and called is not None:  # those the call walked into
        walked = reached(trace.graphs[called], *call.roots)
        found = [n for n in found if n.id in walked] or found
    last = trace.steps[-1] if trace.steps else None
    began = last.rounds[-1].began if last is not None and last.stopped and last.rounds else None
    if began is not None:  # the round's own graph: the nodes freed before it began
        found = [n for n in found if n.seq is not None and n.seq < began] or found
    nodes = tuple(n.id for n in found)
    said = {"nodes": _names(trace, nodes)}
    error_line = trace.error.line if trace.error else None
    loop = _loop(code, error_line)
    if loop is not None:
        reach = ancestry(graph, list(nodes))
        joined = {name for name, start in named_outputs(graph).items() if reach.get(start)}
        carried = _carried(loop, joined)
        if carried is not None:
            kind, line, names = carried
            return Scene(kind, nodes, line, said | names)
        lines = node_lines(trace)
        made = [lines.get(n, (None,))[0] for n in nodes]
        before = min((m for m in made if m is not None and m < loop.lineno), default=None)
        if before is not None:
            return Scene("freed_outside", nodes, before, said)
    line = next((s.line for s in trace.steps if s.graph is not None and holds(s.graph)),
                error_line)
    return Scene("freed", nodes, line, said)


def _loop(code: str, line: int | None) -> ast.For | ast.While | None:
    """The innermost loop of `code` whose body holds `line`."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For | ast.While)
             and line is not None and node.lineno < line <= (node.end_lineno or 0)]
    return max(loops, key=lambda node: node.lineno, default=None)


def _carried(loop: ast.For | ast.While, joined: set[str]
             ) -> tuple[str, int, dict[str, str]] | None:
    """What carries the freed graph from one round of `loop` to the next: the scene's kind,
    the line where the fix goes, and the names its words need. A name among `joined` (those
    holding a tensor joined to the freed nodes) that a round reads before it assigns it, at
    the line that first reads it: `freed_total` where that line adds a round's value to it
    (`total += loss`: keep a number, call backward on the round's own), else `freed_loop`
    (`h_prev = h` before `h = f(h_prev)`; `h = f(h)`; `h, c = cell(x, (h, c))`: detach them
    there). Else `freed_list`: a list from before the loop that a round adds to and reads
    (`sum(losses)`). None under `torch.no_grad()`, where nothing is recorded."""
    assigned: set[str] = set()
    first_read: dict[str, ast.stmt] = {}  # a name read before the round assigned it: where
    added: dict[str, int] = {}  # a list from before the loop a round adds to: that line
    read: set[str] = set()  # names a round reads, but by adding to them alone
    for statement in _recorded(loop.body):
        kept, lists = _stores(statement)
        for name in _reads(statement):
            if name not in assigned:
                first_read.setdefault(name, statement)
            if lists != [name]:
                read.add(name)
        for name in lists:
            if name not in assigned:
                added.setdefault(name, statement.lineno)
        assigned.update(kept)
    carrying = [(statement, name) for name, statement in first_read.items()
                if name in assigned and name in joined]
    if carrying:
        first = min((statement for statement, _ in carrying), key=lambda s: s.lineno)
        names = [name for statement, name in carrying if statement is first]
        term = _added_to(first, names[0])
        if term is not None:
            return "freed_total", first.lineno, {"name": names[0], "added": term}
        return "freed_loop", first.lineno, {"name": ", ".join(names), "detached": ", ".join(
            f"{name}.detach()" for name in names)}
    for name, line in added.items():
        if name in read:
            return "freed_list", line, {"name": name}
    return None


def _added_to(statement: ast.stmt, name: str) -> str | None:
    """What `statement` adds to `name`, as written (`total += loss`, `total = total + loss`:
    `loss`; bracketed unless a name); None where it does not add to it."""
    term = None
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add) and (
            isinstance(statement.target, ast.Name) and statement.target.id == name):
        term = statement.value
    if isinstance(statement, ast.Assign) and [ast.unparse(t) for t in statement.targets] == [
            name] and isinstance(statement.value, ast.BinOp) and isinstance(
            statement.value.op, ast.Add):
        left, right = statement.value.left, statement.value.right
        term = right if isinstance(left, ast.Name) and left.id == name else (
            left if isinstance(right, ast.Name) and right.id == name else None)
    if term is None:
        return None
    return ast.unparse(term) if isinstance(term, ast.Name) else f"({ast.unparse(term)})"


def _recorded(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The simple statements of `body`, at any depth, in their order, but those under
    `torch.no_grad()` or `torch.inference_mode()`."""
    for statement in body:
        if isinstance(statement, ast.With) and any(
                _callee(item.context_expr) in UNRECORDED
                for item in statement.items if isinstance(item.context_expr, ast.Call)):
            continue
        inner = [getattr(statement, part, []) for part in ("body", "orelse", "finalbody")]
        if any(inner):
            yield from _recorded([s for block in inner for s in block])
        else:
            yield statement


def _reads(statement: ast.stmt) -> list[str]:
    """The names `statement` reads (an augmented assignment reads its target too)."""
    names = [n.id for n in ast.walk(statement)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        names.append(statement.target.id)
    return names


def _stores(statement: ast.stmt) -> tuple[list[str], list[str]]:
    """The names `statement` assigns, and the lists it adds to (`xs.append(...)`)."""
    targets = (statement.targets if isinstance(statement, ast.Assign) else
               [statement.target] if isinstance(statement, ast.AugAssign | ast.AnnAssign)
               else [])
    kept = [n.id for target in targets for n in ast.walk(target)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    call = statement.value if isinstance(statement, ast.Expr) else None
    added = [call.func.value.id] if (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        and call.func.attr in ADDING and isinstance(call.func.value, ast.Name)) else []
    return kept, added


def _not_finite(trace: Trace) -> Scene | None:
    """The first engine step that received finite gradients and sent one that is not, with
    the line that made its node: as anomaly mode's traceback of the forward call names it,
    else the statement that first drew it."""
    forward = [int(n) for w in trace.warnings if "Traceback of forward call" in w
               for n in FORWARD_LINE.findall(w)]
    for call in trace.backward:
        for step in call.steps:
            if all(_finite(g) for g in step.grad_outputs) and not all(
                    _finite(g) for g in step.grad_inputs):
                node = step.node
                sent = next(g for g in step.grad_inputs if not _finite(g))
                value = "nan" if math.isnan(sent.max_abs) else "inf"
                line = forward[-1] if forward else node_lines(trace).get(node, (None,))[0]
                return Scene("not_finite", (node,), line,
                             {"node": step.name, "value": value, "call": call.call})
    return None


def _finite(gradient: Gradient | None) -> bool:
    return gradient is None or (math.isfinite(gradient.norm) and math.isfinite(gradient.max_abs))


def _names(trace: Trace, ids: tuple[str, ...]) -> str:
    """The nodes `ids` by their variables' names, else their ops' (ids are stable through a
    run: any graph that holds one says), each name once (`MulBackward0 ×57`)."""
    nodes = {n.id: n for g in trace.graphs for n in g.nodes}
    return counted(", ".join(nodes[i].names or ()) or nodes[i].name or i
                   for i in ids if i in nodes)


def _on(code: str, line: int | None) -> list[ast.AST]:
    """The syntax nodes that start on `line` of `code`."""
    if line is None:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    return [node for node in ast.walk(tree) if getattr(node, "lineno", None) == line]


def _changed_in_place(code: str, op: str) -> tuple[str, int] | None:
    """A name assigned from a call of `op` (`out = torch.sigmoid(...)`: Sigmoid) that a later
    statement changes in place (`out[:, 0] = 0`, `out += 1`, `out.mul_(2)`), and its line."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    made: dict[str, int] = {}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.stmt)),
                       key=lambda n: n.lineno):
        if isinstance(node, ast.Assign) and any(
                isinstance(call, ast.Call) and _callee(call).lower() == op.lower()
                for call in ast.walk(node.value)):
            made.update({t.id: node.lineno for t in node.targets if isinstance(t, ast.Name)})
        for name in _assigned_in(node):
            if name in made and not (isinstance(node, ast.Assign)
                                     and all(isinstance(t, ast.Name) for t in node.targets)):
                return name, node.lineno
    return None


def _callee(call: ast.Call) -> str:
    """The called function's own name (`torch.sigmoid(x)`, `x.sigmoid()`: sigmoid)."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _assigned(code: str, line: int | None) -> list[str]:
    """The names the statement on `line` stores to or changes in place (`w += 1`,
    `w.add_(1)`, `w[0] = 1`, `self.w = ...`)."""
    names: list[str] = []
    for node in _on(code, line):
        names += [name for name in _assigned_in(node) if name not in names]
    return names


def _assigned_in(node: ast.AST) -> list[str]:
    """What one syntax node stores to or changes in place, as the code names it."""
    targets = (node.targets if isinstance(node, ast.Assign) else
               [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else
               [node.value.func.value] if isinstance(node, ast.Expr)
               and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
               and node.value.func.attr.endswith("_") else [])
    names = []
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name | ast.Attribute):
            names.append(ast.unparse(target))
    return names
