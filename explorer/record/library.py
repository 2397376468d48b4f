"""The graphs library functions run backward through for a program. Runs in a worker.

torch.func's `grad`, `vjp`, `jacrev`, `hessian`…, torch.autograd.functional and gradcheck call
the program's function and then run a backward pass through the graph it made: the program
sees only what they return. explorer.record.backward tells `Passes` of each such pass before
the engine runs it. The graph is drawn as the program's own are; inside a transform its tensors
are functorch's wrappers, and their sizes are a single sample's inside `vmap`. Beside it are
kept the program's line that called the library, and functorch's interpreter stack at that
moment: the transforms the pass ran inside, each with its level (`grad(grad(f))` runs f's
backward at level 2, then the backward of f's gradient at level 1). Passes at the same line,
inside the same transforms, are counted and drawn once; at most MAX_LIBRARY places are drawn.
Nothing is read but the graph: no value, no hook of the program's runs.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import torch

from explorer.record.graph import Ids, record
from explorer.safety.sandbox import FILENAME
from explorer.trace.schema import MAX_LIBRARY, MAX_NESTING, Graph, Level, LibraryPass

TRANSFORMS = frozenset({"vmap", "grad", "jvp", "functionalize"})  # functorch's, by key

Place = tuple[int, str, tuple[tuple[str, int], ...], int | None]


class Passes:
    """The passes library functions ran for one run: `made`, in the order first seen."""

    def __init__(self, ids: Ids, graphs: list[Graph], max_nodes: int) -> None:
        self.ids = ids
        self.graphs = graphs
        self.max_nodes = max_nodes
        self.made: list[LibraryPass] = []
        self._at: dict[Place, LibraryPass] = {}
        self._undrawable: set[Place] = set()  # not tried again
        self.undrawn = 0  # passes past the first MAX_LIBRARY places, or with no graph drawn

    def seen(self, roots: tuple[Any, ...], inputs: tuple[Any, ...]) -> None:
        """A library function is about to run backward from `roots` to `inputs`."""
        called = _caller()
        if called is None:  # not on behalf of the program's code (a hook of torch's...)
            self.undrawn += 1
            return
        line, name = called
        tensors = [r for r in roots if isinstance(r, torch.Tensor)]
        within, level = _within(), _level(tensors)
        place = (line, name, within, level)
        if (known := self._at.get(place)) is not None:
            known.passes += 1
            return
        if len(self.made) >= MAX_LIBRARY or place in self._undrawable:
            self.undrawn += 1
            return
        try:
            graph = record(_named(tensors, inputs), self.ids, self.max_nodes)
        except Exception:  # noqa: BLE001 - a tensor the drawing cannot read: the pass runs
            graph = None
        if graph is None:  # or nothing of it requires grad: no graph to draw
            self._undrawable.add(place)
            self.undrawn += 1
            return
        self.graphs.append(graph)
        self._at[place] = made = LibraryPass(
            line=line, called=name, within=[Level(transform=t, level=k) for t, k in within],
            level=level, graph=len(self.graphs) - 1, passes=1)
        self.made.append(made)


def _caller() -> tuple[int, str] | None:
    """The program's line that called into the library, and the function it called there."""
    frame: FrameType | None = sys._getframe(2)
    callee = None
    while frame is not None and frame.f_code.co_filename != FILENAME:
        frame, callee = frame.f_back, frame
    if frame is None or callee is None:
        return None
    # `grad.<locals>.wrapper` is what `grad(f)` returned; `_vjp_with_argnums` makes the
    # function `vjp` returns.
    name = callee.f_code.co_qualname.split(".<locals>")[0].split(".")[-1]
    return frame.f_lineno, name.lstrip("_").removesuffix("_with_argnums")


def _within() -> tuple[tuple[str, int], ...]:
    """functorch's transforms now running, outermost first, each with its level."""
    stack = torch._C._functorch.get_interpreter_stack() or []
    found = ((i.key().name.lower(), i.level()) for i in stack)
    return tuple((t, k) for t, k in found if t in TRANSFORMS and k >= 1)[-MAX_NESTING:]


def _level(roots: list[torch.Tensor]) -> int | None:
    """The level of the `grad` transform the roots were made at, while it runs."""
    for root in roots:
        if torch._C._functorch.is_gradtrackingtensor(root):
            level = torch._C._functorch.maybe_get_level(root)
            return level if level >= 1 else None
    return None


def _named(roots: list[torch.Tensor], inputs: tuple[Any, ...]) -> dict[str, Any]:
    """The pass's tensors under the names autograd.grad gives them."""
    named: dict[str, Any] = {}
    for word, tensors in (("inputs", inputs), ("outputs", roots)):
        for i, t in enumerate(tensors):
            named[word if len(tensors) == 1 else f"{word}[{i}]"] = t
    return named
