"""Which backward call made each node, and its derivative order. Runs in a worker.

A backward call with `create_graph=True` records a graph as it runs: each node's backward
formula is made of ops, and those ops are nodes of the derivative's graph. A node the program's
forward made has order 1; a node made while the engine ran a node of order k has order k + 1
(`x ** 3`'s PowBackward0 is order 1; its formula makes PowBackward0 and MulBackward nodes of
order 2; a grad of those makes order 3).

While such a call runs, the engine's hooks on its nodes (explorer.record.backward) tell
`Orders` what each node sent on (`grad_inputs`) and, as the next node starts, what reached it
(`grad_outputs`, summed where edges meet): walking back from those gradients, every node the
call had not seen before was made by the node whose formula produced it (a sum of gradients,
by the engine for the node they reach). This needs no thread or counter, so it holds on a GPU,
whose engine runs on threads of its own. The gradients that reach each node and take no part
in a graph (`∂y/∂y`, the ones a call starts from at a scalar root `y`) are noted too: a node
the call made may save one, and is then drawn with that name rather than as `self`.
Nodes are known by explorer.record.graph's stable ids; nothing is kept alive.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch.autograd.graph import get_gradient_edge

from explorer.record.graph import Ids

MAX_TOLD = 200_000  # nodes whose maker is remembered; past them, new nodes are not told
MAX_GRADS = 4_096  # gradients remembered by name (the latest)


@dataclass(frozen=True)
class Made:
    """Who made a node: the node whose backward ran (`by`, an id), in which call, its order."""

    by: str
    call: int
    order: int


class Orders:
    """The derivative order of the nodes of one run."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self._made: dict[str, Made] = {}
        self._known: set[str] = set()  # the nodes the running call had, or has tagged
        self._roots: dict[str, str] = {}  # the running call's roots' nodes (ids) -> names
        # A gradient, whichever Python object stands for it -> its name, the call it reached
        self._grads: dict[tuple[int, int], tuple[str, int]] = {}

    def start(self, nodes: Iterable[Any], roots: dict[Any, str]) -> None:
        """A call begins over `nodes` (all behind its roots); `roots`: the roots' nodes, each
        with its name (`y`)."""
        self._known = {self.ids.of_fn(node) for node in nodes}
        self._roots = {self.ids.of_fn(node): name for node, name in roots.items()}

    def reached(self, node: Any, grads: tuple[Any, ...], call: int) -> None:
        """The engine starts `node` with `grads`: each is named (`∂y/∂y` at root `y`,
        `∂y/∂(PowBackward0)` further on); the nodes behind them are sums it made for `node`."""
        root = next(iter(self._roots.values()), "output")
        name = self._roots.get(self.ids.of_fn(node))
        said = f"∂{name}/∂{name}" if name else f"∂{root}/∂({type(node).__name__})"
        for g in grads:
            if isinstance(g, torch.Tensor):
                if len(self._grads) >= MAX_GRADS:
                    del self._grads[next(iter(self._grads))]
                self._grads[_key(g)] = (said, call)
        self.sent(node, grads, call)

    def ran(self, node: Any, grads: tuple[Any, ...], call: int) -> None:
        """`node`'s backward ran and sent `grads` on (an AccumulateGrad: wrote its leaf's
        `.grad`)."""
        leaf = getattr(node, "variable", None)
        self.sent(node, (leaf.grad,) if isinstance(leaf, torch.Tensor) else grads, call)

    def sent(self, node: Any, grads: tuple[Any, ...], call: int) -> None:
        """Gradients made for `node`: what behind them is new, its backward made."""
        maker = self.ids.of_fn(node)
        made = Made(maker, call, self.order(node) + 1)
        stack = [g.grad_fn for g in grads if isinstance(g, torch.Tensor) and g.grad_fn is not None]
        while stack and len(self._made) < MAX_TOLD:
            fn = stack.pop()
            sid = self.ids.of_fn(fn)
            if sid in self._known or isinstance(getattr(fn, "variable", None), torch.Tensor):
                continue  # there before, or a leaf's: the forward's
            self._known.add(sid)
            self._made[sid] = made
            stack.extend(u for u, _ in fn.next_functions if u is not None)

    def returned(self, grads: Any, inputs: tuple[Any, ...], call: int) -> None:
        """`torch.autograd.grad` returned `grads` for `inputs`: the sums the engine made for
        an input were made for the node it feeds (a leaf's AccumulateGrad)."""
        for g, given in zip(grads if isinstance(grads, tuple) else (), inputs, strict=False):
            if isinstance(given, torch.Tensor) and isinstance(g, torch.Tensor):
                self.sent(get_gradient_edge(given).node, (g,), call)

    def order(self, fn: Any) -> int:
        made = self.of(fn)
        return made.order if made is not None else 1

    def of(self, fn: Any) -> Made | None:
        """Who made backward node `fn` (None: the program's forward)."""
        return self._made.get(self.ids.of_fn(fn)) if self._made else None

    def gradient(self, t: torch.Tensor, owner: str) -> str | None:
        """The name of gradient `t` (`∂y/∂y`) if backward node `owner` (an id), which saved
        it, was made by the call `t` reached (else None: another tensor, once at its place)."""
        found = self._grads.get(_key(t)) if self._grads else None
        made = self._made.get(owner) if found else None
        return found[0] if found and made and made.call == found[1] else None


def _key(t: torch.Tensor) -> tuple[int, int]:
    """A tensor as itself, whichever Python object stands for it: its C++ object, its data."""
    try:
        return t._cdata, t.data_ptr()
    except RuntimeError:  # no data (meta)
        return t._cdata, 0
