"""Record what the autograd engine really does in a backward pass. Runs in a worker.

While a program runs, `Recorder` wraps `torch.autograd.backward` and `torch.autograd.grad`
(`Tensor.backward` goes through the first). For each call the program makes, it draws the
graph before the engine frees anything, hooks every node of it, lets the engine run, and
keeps, in the engine's own order, each node's incoming gradient (`grad_outputs`, already
summed where edges meet), what it sent along each edge (`grad_inputs`), and every `.grad`
it wrote: a leaf's, and a variable's that retains its grad (`y.retain_grad()`), read as its
node begins (the engine writes it after the tensor's hooks, before the node's pre-hooks).
Nothing is recomputed and no extra backward pass runs: the program's hooks fire as often as
in plain PyTorch, so a full Jacobian, which would take one pass per output element, is not
built (`jacobian` is None and `jacobian_reason` says why); `vector` keeps the `v` of
`y.backward(v)`, whose vᵀJ is what the engine delivers to each AccumulateGrad. Gradients
batched by vmap (`is_grads_batched=True`) are left untouched: such calls run unrecorded.
Calls a library function makes (torch.func's transforms, autograd.functional) are not
replayed either: explorer.record.library draws the graph they run through.
A training loop's calls are all summarised (loss, gradient norms), but only some are recorded
in full: the first ten, those asked for, those of a loop's round asked for or last, and then
calls 20, 40, 80… (twice as far apart each time, so at least one is in the second half of the
run), as a loop's rounds are stepped (explorer.record.lines); the others are not hooked at all:
their leaves' gradient norms are read once the engine is done. The wrapping lives only in
the run's own process.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from typing import Any, NamedTuple

import torch
from torch.utils.hooks import RemovableHandle

from explorer.record.graph import Ids, record
from explorer.record.library import Passes
from explorer.record.modules import Modules
from explorer.record.orders import Orders
from explorer.record.snapshot import leading_block, tensor_values
from explorer.safety.sandbox import FILENAME
from explorer.trace.schema import (
    Call,
    EngineStep,
    Gradient,
    Graph,
    LeafGrad,
    Returned,
    Round,
    Summary,
)

FIRST = 10  # a program's first backward calls recorded in full; later, 2 * FIRST, 4 * FIRST…
ASKED_CALLS = 10  # calls recorded in full for a loop's round asked for or last, at most
VALUES = 100  # values kept per gradient tensor
VECTOR_MAX = 64  # elements of a non-scalar root whose `v` is kept for the vᵀJ panel
# A norm summed in single precision is kept when it lies between these: then no square
# overflowed, and none that counts fell among the subnormals (below ~1e-38); it holds 7 digits.
SINGLE_SAFE = (1e-15, 1e18)
NO_JACOBIAN = ("not built: it takes one more backward pass per element of the output, and the "
               "program's hooks would see every one")
ACCUMULATE = torch._C._functions.AccumulateGrad  # a leaf's node: its `variable` is the leaf
# torch's files between a program's `y.backward()` and torch.autograd.backward.
TRAMPOLINES = frozenset(os.path.join(os.path.dirname(torch.__file__), *path) for path in (
    ("_tensor.py",), ("overrides.py",), ("utils", "_device.py")))


class Recorder:
    """Wraps the autograd entry points for one run; `calls` holds what each call did."""

    def __init__(self, variables: Callable[[], dict[str, Any]], ids: Ids, modules: Modules,
                 graphs: list[Graph], max_nodes: int, keep: tuple[int, ...] = (),
                 progress: Callable[[Summary], None] | None = None,
                 calling: Callable[[], Calling] | None = None,
                 orders: Orders | None = None,
                 last_or_asked: Callable[[], bool] = lambda: False,
                 made: Callable[[], int] | None = None) -> None:
        self.variables = variables  # the program's variables (the gradient norms' names)
        # Those by the names the line calling has for them (its function's variables too),
        # and where that line is.
        self.calling = calling or (lambda: Calling(variables(), [], [], None))
        self.made = made  # how many steps the run has made so far
        self.last_or_asked = last_or_asked  # whether that line is in a loop's round asked for,
        # or in the last round of every loop around it
        self.ids = ids
        self.modules = modules
        self.orders = orders or Orders(ids)  # who made the nodes a create_graph call makes
        self.graphs = graphs
        self.max_nodes = max_nodes
        self.keep = set(keep)  # call numbers recorded in full whatever their place
        self.progress = progress
        self.calls: list[Call] = []
        self.extra = 0  # calls recorded in full for a round asked for or a loop's last
        self.raised_kept = 0  # calls run bare that raised, kept with their graph
        self.summaries: list[Summary] = []  # every call: its value and gradient norms
        self.count = 0
        self._busy = False
        self._names: dict[int, list[str]] = {}
        self._retaining: dict[Any, list[torch.Tensor]] = {}  # a node -> variables it made that
        # retain their grad
        self._line: int | None = None  # the program's line making the call
        self._running: EngineStep | None = None  # the node the engine has started, not ended
        self._norms: dict[str, float] = {}  # the call's leaves' gradient norms, by name
        self._told = 0.0
        self.batched = 0  # calls on gradients batched by vmap: run, not replayed
        self.library = 0  # calls library functions made (torch.func...): run, not replayed
        self.passes = Passes(ids, graphs, max_nodes)  # the graphs those calls ran through

    def install(self) -> ExitStack:
        """Wrap torch.autograd.backward / grad until the returned stack closes."""
        stack = ExitStack()
        for name in ("backward", "grad"):
            original = getattr(torch.autograd, name)
            setattr(torch.autograd, name, self._wrap(name, original))
            stack.callback(setattr, torch.autograd, name, original)
        return stack

    def _wrap(self, kind: str, original: Callable[..., Any]) -> Callable[..., Any]:
        signature = _Binder(original)

        @functools.wraps(original)  # it stands in for torch's function, name and module alike
        def call(*args: Any, **kwargs: Any) -> Any:
            if self._busy:
                return original(*args, **kwargs)
            line = _program_line()
            if line is None:  # torch.func's transforms, autograd.functional...
                self.library += 1
                with suppress(TypeError):  # else PyTorch says what is wrong with the call
                    given = signature.bind(*args, **kwargs).arguments
                    self.passes.seen(_as_tuple(given.get("tensors", given.get("outputs"))),
                                     _as_tuple(given.get("inputs")))
                return original(*args, **kwargs)
            try:  # PyTorch's own names for what the program passed, however it passed them
                given = signature.bind(*args, **kwargs).arguments
            except TypeError:  # PyTorch says what is wrong with the call
                return original(*args, **kwargs)
            roots = _as_tuple(given.get("tensors", given.get("outputs")))
            vector = _as_tuple(given.get("grad_tensors", given.get("grad_outputs")))
            if not roots or not all(isinstance(r, torch.Tensor) for r in roots):
                return original(*args, **kwargs)  # PyTorch's error, or graph edges: not drawn
            if given.get("is_grads_batched") or any(map(_batched, (*roots, *vector))):
                self.batched += 1  # hooks would see vmap's tensors, which must stay untouched
                return original(*args, **kwargs)
            inputs = given.get("inputs")
            if isinstance(inputs, Iterator):  # `model.parameters()`: read once, for both
                inputs = tuple(inputs)
                args, kwargs = (), {**given, "inputs": inputs}
            self._busy, self._line = True, line
            try:
                return self._record(kind, original, args, kwargs, roots, vector, inputs,
                                    bool(given.get("create_graph")))
            finally:
                self._busy = False
        return call

    def _record(self, kind: str, original: Callable[..., Any], args: tuple[Any, ...],
                kwargs: dict[str, Any], roots: tuple[torch.Tensor, ...],
                vector: tuple[Any, ...], inputs: Any, create_graph: bool) -> Any:
        self.count += 1
        value = roots[0] if len(roots) == 1 and roots[0].numel() == 1 else None
        call = Call(call=self.count, kind=kind, steps=[], leaf_grads=[], roots=[], root=None,
                    vector=None, value=_scalar(value) if value is not None else None)
        self._names, self._norms, self._retaining = {}, {}, {}
        full = self._in_full(self.count)
        if not full and not create_graph:  # most calls of a training loop: run bare
            kept_raised = False
            try:
                return original(*args, **kwargs)
            except BaseException:
                call.raised = True
                kept_raised = self._raised_bare(call, roots, vector)
                raise
            finally:
                if kind == "backward":  # grad() writes no .grad
                    self._read_norms(roots, inputs)
                self._keep(call, kept_raised)
        if full:
            self._draw(call, roots, vector)
        self._running = None
        hooks = self._hook(roots, call, full, create_graph) if full or create_graph else []
        try:
            result = original(*args, **kwargs)
            if full and kind == "grad":
                call.returned = self._returned(_as_tuple(inputs), result)
            if create_graph and kind == "grad":
                with suppress(Exception):  # what the program called returned: it stands
                    self.orders.returned(result, _as_tuple(inputs), call.call)
            return result
        except BaseException:
            call.raised = True
            if self._running is not None:  # the node it stopped at: it never ended
                self._running.raised = True
            raise
        finally:
            for hook in hooks:
                hook.remove()
            if not full and kind == "backward":  # grad() writes no .grad
                self._read_norms(roots, inputs)
            self._keep(call, full)

    def _draw(self, call: Call, roots: tuple[torch.Tensor, ...],
              vector: tuple[Any, ...]) -> None:
        """What a call recorded in full says before the engine runs: its graph, roots, `v`
        and where its line is."""
        variables, rounds, calls, called = self.calling()
        self._name(variables)
        named = {id(v) for v in variables.values()}
        extra = {f"root {i}": r for i, r in enumerate(roots) if id(r) not in named}
        graph = record(variables | extra, self.ids, self.max_nodes, self.modules, self.orders)
        for t in {id(t): t for t in (*variables.values(), *extra.values())}.values():
            if _retaining(t):
                self._retaining.setdefault(t.grad_fn, []).append(t)
        call.retained = [] if self._retaining else None
        if graph is not None and graph.dot:
            if not self.graphs or self.graphs[-1] != graph:
                self.graphs.append(graph)
            call.graph = len(self.graphs) - 1
        call.rounds, call.calls, call.called = rounds or None, calls or None, called
        call.after = self.made() if self.made else None
        call.roots = [self.ids.of_tensor(r) for r in roots]  # output nodes of the graph
        call.root = call.roots[0] if call.roots else None
        call.vector = _vector(roots, vector)
        if call.vector is not None:
            call.jacobian_reason = NO_JACOBIAN

    def _returned(self, inputs: tuple[Any, ...], result: Any) -> list[Returned]:
        """What grad() returned for each of its `inputs`, by the program's names for them."""
        return [Returned(input=self.ids.of_tensor(given), names=self._names.get(id(given), []),
                         grad=_grad(got))
                for given, got in zip(inputs, _as_tuple(result), strict=False)
                if isinstance(given, torch.Tensor)]

    def _raised_bare(self, call: Call, roots: tuple[torch.Tensor, ...],
                     vector: tuple[Any, ...]) -> bool:
        """Whether a call run bare that raised is kept all the same (the first ASKED_CALLS):
        its graph as the error left it, with no engine steps."""
        if self.raised_kept >= ASKED_CALLS:
            return False
        self.raised_kept += 1
        with suppress(Exception):  # what the program did stands: its error, not ours
            self._draw(call, roots, vector)
        return True

    def _name(self, variables: dict[str, Any]) -> None:
        """Each object's names among `variables`."""
        for name, value in variables.items():
            self._names.setdefault(id(value), []).append(name)

    def _in_full(self, number: int) -> bool:
        """Is call `number` recorded in full: one of the first, 20, 40, 80…, asked for, or
        one of the first ASKED_CALLS made in a loop's round asked for or last?"""
        if kept(number) or number in self.keep:
            return True
        if self.extra < ASKED_CALLS and self.last_or_asked():
            self.extra += 1
            return True
        return False

    def _hook(self, roots: tuple[torch.Tensor, ...], call: Call, full: bool,
              create_graph: bool) -> list[RemovableHandle]:
        """Pre- and post-hooks on every node behind the roots, to record the call in full
        (with hooks on every leaf's .grad) or to tell who made the nodes it makes: their
        handles, to remove once it ends."""
        nodes = list(_nodes(roots))
        if create_graph:
            if not self._names:
                self._name(self.calling().variables)
            self.orders.start(nodes, {r.grad_fn: self._names.get(id(r), ["output"])[0]
                                      for r in roots if r.grad_fn is not None})
        hooks = []
        for node in nodes:
            before, after = self._node_hooks(node, call, full, create_graph)
            hooks += (node.register_prehook(before), node.register_hook(after))
            variable = getattr(node, "variable", None)
            if full and isinstance(variable, torch.Tensor):
                hooks.append(variable.register_post_accumulate_grad_hook(
                    self._leaf_hook(call, node)))
        return hooks

    def _read_norms(self, roots: tuple[torch.Tensor, ...], inputs: Any) -> None:
        """The gradient norms of the leaves a call not recorded in full wrote (those among
        `inputs` where it names some), read from their `.grad` once the engine is done. Every
        call of a training loop pays for this, so it names only those leaves."""
        chosen = {id(t) for t in _as_tuple(inputs)}
        leaves = [leaf for leaf in _leaves(roots) if not chosen or id(leaf) in chosen]
        norms = [_norm(leaf.grad) for leaf in leaves]
        wanted = {id(leaf) for leaf in leaves}
        names: dict[int, list[str]] = {}
        for name, value in self.variables().items():
            if id(value) in wanted:
                names.setdefault(id(value), []).append(name)
        for leaf, norm in zip(leaves, norms, strict=True):
            if norm is not None:  # a hook may clear .grad
                named = names.get(id(leaf))
                self._norms[" = ".join(named) if named else self.ids.of_tensor(leaf)] = norm

    def _node_hooks(self, node: Any, call: Call, full: bool,
                    create_graph: bool) -> tuple[Callable[..., None], Callable[..., None]]:
        """The engine calls `before` as it starts `node` and `after` once it has run."""
        sid = self.ids.of_fn(node)
        targets = [self.ids.of_fn(u) if u is not None else None for u, _ in node.next_functions]
        retaining = self._retaining.get(node, []) if full else []
        retained = call.retained if call.retained is not None else []  # `_draw` made it

        def before(grad_outputs: tuple[Any, ...]) -> None:
            if create_graph:
                with suppress(Exception):  # a hook must never raise
                    self.orders.reached(node, grad_outputs, call.call)
            if full:
                self._running = EngineStep(node=sid, name=type(node).__name__,
                                           grad_outputs=[_grad(g) for g in grad_outputs],
                                           grad_inputs=[])
                call.steps.append(self._running)
            for t in retaining:  # its .grad is written: the engine ran its tensor's hooks
                retained.append(LeafGrad(
                    node=sid, leaf=self.ids.of_tensor(t), names=self._names.get(id(t), []),
                    after=len(call.steps), grad=_grad(t.grad)))

        def after(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            if create_graph:
                with suppress(Exception):  # a hook must never raise
                    self.orders.ran(node, grad_inputs, call.call)
            if full:
                call.steps[-1].grad_inputs = [_grad(g, to) for g, to in
                                              zip(grad_inputs, targets, strict=False)]
                self._running = None

        return before, after

    def _leaf_hook(self, call: Call, node: Any) -> Callable[[torch.Tensor], None]:
        def written(leaf: torch.Tensor) -> None:  # `.grad` may be None: a hook of the program's
            names = self._names.get(id(leaf), [])
            grad = _grad(leaf.grad)
            call.leaf_grads.append(LeafGrad(
                node=self.ids.of_fn(node), leaf=self.ids.of_tensor(leaf), names=names,
                after=len(call.steps), grad=grad))
            if grad is not None:  # a hook may clear .grad
                self._norms[" = ".join(names) or self.ids.of_tensor(leaf)] = grad.norm
        return written

    def _keep(self, call: Call, full: bool) -> None:
        """Summarise every call and keep those recorded in full; tell the progress listener
        now and then (at most 20 times a second)."""
        summary = Summary(call=call.call, kind=call.kind, value=call.value,
                          grad_norms=self._norms, line=self._line)
        self.summaries.append(summary)
        if full:
            self.calls.append(call)
        if self.progress is not None and time.monotonic() - self._told > 0.05:
            self._told = time.monotonic()
            self.progress(summary)


class Calling(NamedTuple):
    """The line that makes a backward call: the program's variables by the names it has for
    them, the loops around it (outermost first), the functions of the program's it is in
    (outermost first) and which call of the innermost."""

    variables: dict[str, Any]
    rounds: list[Round]
    calls: list[str]
    called: int | None


def kept(number: int) -> bool:
    """Is the `number`th of many (1-based) kept: one of the first FIRST, or 2 × FIRST,
    4 × FIRST… (twice as far apart each time, so one is always in the second half)?"""
    times, rest = divmod(number, FIRST)
    return number <= FIRST or (rest == 0 and times & (times - 1) == 0)


def _nodes(roots: tuple[torch.Tensor, ...]) -> Iterator[Any]:
    """Every backward node behind the roots, each once."""
    stack, seen = [r.grad_fn for r in roots if r.grad_fn is not None], set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            yield node
            stack.extend(u for u, _ in node.next_functions if u is not None)


def _retaining(value: Any) -> bool:
    """A tensor a node made that retains its grad (torch's own class: a subclass's attributes
    may run its code)."""
    return type(value) is torch.Tensor and value.grad_fn is not None and value.retains_grad


def _leaves(roots: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """The leaves behind the roots (their AccumulateGrad nodes' tensors), in `_nodes`' order."""
    return [node.variable for node in _nodes(roots) if type(node) is ACCUMULATE]


def _program_line() -> int | None:
    """The program's line that made this call (directly, or through Tensor.backward and
    torch's dispatch); None for a library function's, such as autograd.functional.jacobian."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename in TRAMPOLINES:
        frame = frame.f_back
    return frame.f_lineno if frame is not None and frame.f_code.co_filename == FILENAME \
        else None


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def _batched(value: Any) -> bool:
    """A tensor of torch.func's transforms (vmap's batched tensors and the like)."""
    return isinstance(value, torch.Tensor) and torch._C._functorch.is_functorch_wrapped_tensor(
        value)


def _scalar(t: torch.Tensor) -> float | None:
    """A one-element root's value as a float (its real part if complex; None if unreadable)."""
    try:
        value = t.item()
    except RuntimeError:  # meta and other data-less tensors
        return None
    return float(value.real) if isinstance(value, complex) else float(value)


def _grad(g: Any, to: str | None = None) -> Gradient | None:
    """A gradient as plain data (`to`: the node it goes to): shape, device, statistics, and a
    copy of its leading values (turned into lists by `finish`, only for the calls kept in
    full). Sparse gradients are described by a dense copy; what cannot be copied keeps its
    metadata only."""
    if not isinstance(g, torch.Tensor):
        return None
    info = Gradient(shape=[] if g.is_nested else list(g.shape), dtype=str(g.dtype),
                    device=str(g.device), values=None, truncated=True, norm=0.0, max_abs=0.0,
                    to=to)
    try:
        dense = _dense(g)
        block = leading_block(dense, VALUES).clone()
        norm = _summed_norm(dense)
        biggest = float(dense.abs().max()) if dense.numel() else 0.0
    except Exception:  # noqa: BLE001 - no data (meta), no dense form: a hook must never raise
        return info
    info.values, info.truncated, info.norm, info.max_abs = (
        block, block.numel() < g.numel(), norm, biggest)
    return info


def _norm(g: Any) -> float | None:
    """A gradient's 2-norm alone (None for no tensor; 0 for no data): a call not recorded in
    full pays for this and nothing else."""
    if not isinstance(g, torch.Tensor):
        return None
    try:
        return _summed_norm(_dense(g))
    except Exception:  # noqa: BLE001 - no data (meta), no dense form: a hook must never raise
        return 0.0


def _dense(g: torch.Tensor) -> torch.Tensor:
    """`g` detached, and as a dense copy if it is sparse."""
    dense = g.detach() if g.requires_grad else g  # a gradient of create_graph's
    return dense.to_dense() if dense.layout != torch.strided else dense


def _summed_norm(dense: torch.Tensor) -> float:
    """The 2-norm, summed in single precision where that is exact enough (a pass over the
    data, not a copy), else in double."""
    if not dense.numel():
        return 0.0
    if dense.dtype in (torch.float32, torch.complex64):
        norm = float(torch.linalg.vector_norm(dense))
        if SINGLE_SAFE[0] < norm < SINGLE_SAFE[1]:
            return norm
    wide = torch.complex128 if dense.is_complex() else torch.float64
    return float(torch.linalg.vector_norm(dense, dtype=wide))


def finish(calls: list[Call]) -> list[Call]:
    """The kept calls with their gradients' values as nested lists (plain data)."""
    for g in (g for call in calls for g in call.gradients()):
        if isinstance(g.values, torch.Tensor):
            g.values = tensor_values(g.values, VALUES)[0]
    return calls


def _vector(roots: tuple[torch.Tensor, ...], vector: tuple[Any, ...]) -> list[Any] | None:
    """The `v` of `y.backward(v)` for one small non-scalar root, as plain values (the vᵀJ it
    makes is what the engine delivers to each leaf's AccumulateGrad); None otherwise."""
    if len(roots) != 1 or roots[0].is_nested or not 1 < roots[0].numel() <= VECTOR_MAX or (
            not vector):
        return None
    v = vector[0]
    if not isinstance(v, torch.Tensor) or v.is_nested or v.shape != roots[0].shape:
        return None  # PyTorch will say what is wrong with it
    return tensor_values(v.detach().flatten(), VECTOR_MAX)[0]


class _Bound:
    """What `_Binder.bind` gives: the arguments passed, by their parameters' names."""

    __slots__ = ("arguments",)

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments


class _Binder:
    """`inspect.signature(function)`'s `bind(...).arguments`, made directly for the calls a
    program makes (a tenth of its 3.4 µs); any other call is bound by `inspect` itself, which
    raises PyTorch's TypeError."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.signature = inspect.signature(function)
        parameters = list(self.signature.parameters.values())
        self.names = tuple(p.name for p in parameters)
        self.simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)
        self.required = frozenset(p.name for p in parameters if p.default is p.empty)

    def bind(self, *args: Any, **kwargs: Any) -> _Bound | inspect.BoundArguments:
        if not self.simple or len(args) > len(self.names):
            return self.signature.bind(*args, **kwargs)
        arguments = dict(zip(self.names, args, strict=False))  # the first len(args)
        for name in kwargs:
            if name in arguments or name not in self.names:
                return self.signature.bind(*args, **kwargs)
        if kwargs:
            arguments.update(kwargs)
            if len(kwargs) > 1:  # in the parameters' order, as `inspect` gives them
                arguments = {name: arguments[name] for name in self.names if name in arguments}
        if not self.required <= arguments.keys():
            return self.signature.bind(*args, **kwargs)
        return _Bound(arguments)
