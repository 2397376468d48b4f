"""Which `nn.Module` made each backward node, and the names of parameters. Runs in a worker.

While a run goes on, every module call passes through a wrapper of `nn.Module._call_impl`
that notes the span of autograd sequence numbers the call used (`torch.autograd` numbers
every node it makes, in order, per thread), its own hooks' nodes and a call an exception
ended included; a node belongs to the innermost module call whose span holds its number (the
newest MAX_NUMBERED numbers are remembered, so a long loop's last rounds keep their
modules). The wrapper only reads the counter: it changes no input, output or order, and a
module without hooks of its own still takes PyTorch's fast path (global module hooks would
take every call off it, and run hooks a forward adds to its own module at once).

A module is named by the path it has under a variable of the program (`model`,
`model.0`, `model.fc1`), a parameter likewise (`model.fc1.weight`); a module no variable
reaches has no name, and its nodes belong to the nearest named module around it.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

MAX_NUMBERED = 200_000  # sequence numbers remembered; past them, the older half is forgotten
_sequence_nr = torch._C._autograd._get_sequence_nr  # the number autograd gives its next node


class Modules:
    """The module calls of one run."""

    def __init__(self, most: int = MAX_NUMBERED) -> None:
        self.most = most  # sequence numbers remembered, the newest
        self._owner: dict[int, list[int]] = {}  # sequence number -> modules, innermost first
        # A module called is known by a token of its own (an id may be reused once it is gone;
        # a token never is).
        self._tokens: dict[int, tuple[weakref.ref[torch.nn.Module], int]] = {}
        self._count = itertools.count(1)

    @contextmanager
    def install(self) -> Iterator[None]:
        """Note module calls until the block ends."""
        original = torch.nn.Module._call_impl

        @functools.wraps(original)  # it stands in for torch's method, name and module alike
        def call(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            first = _sequence_nr()
            try:
                return original(module, *args, **kwargs)
            finally:
                self._note(module, first)

        torch.nn.Module._call_impl = call  # type: ignore[method-assign]
        try:
            yield
        finally:
            torch.nn.Module._call_impl = original  # type: ignore[method-assign]

    def token(self, module: torch.nn.Module, new: bool = False) -> int | None:
        """The token of `module` (made if `new`), or None if it was never called."""
        ref, token = self._tokens.get(id(module), (None, -1))
        if ref is not None and ref() is module:
            return token
        if not new:
            return None
        self._tokens[id(module)] = (weakref.ref(module), token := next(self._count))
        return token

    def _note(self, module: torch.nn.Module, first: int) -> None:
        """A call of `module` that made the nodes numbered from `first` to the counter now.
        Every module call of a run passes here: it does as little as it can."""
        end = min(_sequence_nr(), first + self.most)
        if end <= first:  # it made no node: its module needs no token
            return
        token = self.token(module, new=True)
        owner = self._owner
        for number in range(first, end):
            owner.setdefault(number, []).append(token)
        if len(owner) > self.most:  # the older half goes: a long loop's last rounds keep theirs
            self._owner = dict(itertools.islice(owner.items(), len(owner) // 2, None))

    def names(self, variables: dict[str, Any]) -> Names:
        """Module and parameter paths under the program's variables."""
        modules: dict[int, str] = {}  # token -> path
        params: dict[int, tuple[str, str]] = {}  # parameter -> (its path, its module's)
        for name, value in variables.items():
            if not isinstance(value, torch.nn.Module):
                continue
            for path, module in submodules(value, name):
                token = self.token(module)
                if token is not None:
                    modules.setdefault(token, path)
                for pname, p in _own_parameters(module):
                    params.setdefault(id(p), (f"{path}.{pname}", path))
        return Names(self._owner, modules, params)


def submodules(module: torch.nn.Module, path: str = "") -> list[tuple[str, torch.nn.Module]]:
    """`module` and the modules inside it, each once, by path (`model.fc1`), in the order
    named_modules gives them; read from their own dicts, so that none of the program's code
    runs (a subclass may override named_modules, and its set of modules seen would call the
    program's `__hash__`)."""
    found, seen, todo = [], set(), [(path, module)]
    while todo:
        path, module = todo.pop()
        if id(module) not in seen:
            seen.add(id(module))
            found.append((path, module))
            children = vars(module).get("_modules") or {}
            todo += [(f"{path}.{name}" if path else name, child)
                     for name, child in reversed(children.items()) if child is not None]
    return found


def parameters(module: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    """The parameters of `module` and of the modules inside it, each once, by path
    (`fc1.weight`), as named_parameters gives them, and as `submodules` reads them."""
    found, seen = [], set()
    for path, inner in submodules(module):
        for name, p in _own_parameters(inner):
            if id(p) not in seen:
                seen.add(id(p))
                found.append((f"{path}.{name}" if path else name, p))
    return found


def _own_parameters(module: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    return [(name, p) for name, p in (vars(module).get("_parameters") or {}).items()
            if p is not None]


class Names:
    """The paths of one moment's modules and parameters."""

    def __init__(self, owners: dict[int, list[int]], modules: dict[int, str],
                 params: dict[int, tuple[str, str]]) -> None:
        self._owners = owners  # sequence number -> module tokens, innermost first
        self._modules = modules
        self._params = params

    def of_node(self, fn: Any) -> str | None:
        """The path of the innermost named module whose call made backward node `fn`."""
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):  # AccumulateGrad: its parameter's module
            return self.of_param(variable)[1]
        for key in self._owners.get(fn._sequence_nr(), ()):
            if key in self._modules:
                return self._modules[key]
        return None

    def of_param(self, t: torch.Tensor) -> tuple[str | None, str | None]:
        """A parameter's path and its module's, or (None, None)."""
        return self._params.get(id(t), (None, None))
