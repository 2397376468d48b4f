"""Describe a program's variables as plain data: a Variable (explorer.trace.schema) each.

A tensor becomes its metadata (shape, dtype, device, autograd state, version counter, where
its data lives) plus its values and `.grad`, capped: tensors and arrays larger than the cap
keep a leading block of at least `cap` elements, nested like the original.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import reprlib
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.autograd import forward_ad

from explorer.record.modules import parameters
from explorer.record.observer import read
from explorer.safety.sandbox import USER_MODULE
from explorer.trace.schema import Variable


class _Repr(reprlib.Repr):
    """reprlib's short repr, which never runs the program's code (a `__repr__`, `extra_repr`
    or `__len__` it wrote: describing a value must not run it, it may print): an object whose
    repr would is `<Net object>`. Dicts and sets in the order `print` shows them (reprlib
    sorts them, comparing the program's objects by their own `__lt__`); functions and classes
    as the program wrote them."""

    def repr_instance(self, x: Any, level: int) -> str:
        if isinstance(x, types.FunctionType | types.BuiltinFunctionType | type):
            return _written(x, level, self.repr1)
        return read(x, lambda value: super(_Repr, self).repr_instance(value, level))

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x or level <= 0:
            return "{...}" if x else "{}"
        pieces = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
                  for k, v in itertools.islice(dict.items(x), self.maxdict)]
        return "{" + ", ".join(pieces + ["..."] * (len(x) > self.maxdict)) + "}"

    def repr_set(self, x: set[Any], level: int) -> str:
        return self._repr_iterable(x, level, "{", "}", self.maxset) if x else "set()"

    def repr_frozenset(self, x: frozenset[Any], level: int) -> str:
        return self._repr_iterable(x, level, "frozenset({", "})", self.maxfrozenset) if x \
            else "frozenset()"

    repr_function = repr_builtin_function_or_method = repr_type = repr_instance


def _written(x: Any, level: int, shown: Callable[[Any, int], str]) -> str:
    """A function of the program's by its parameters (`f(w, x=2, *rest)`, `lambda t`), one
    of a library by where it lives (`torch.nn.functional.relu`), a class of the program's by
    its bases (`class Net(Module)`); `shown` writes a default value."""
    name = x.__name__ if isinstance(x, types.BuiltinFunctionType) else x.__qualname__.replace(
        "<locals>.", "")
    if isinstance(x, type):
        bases = ", ".join(b.__name__ for b in x.__bases__ if b is not object)
        return f"class {name}({bases})" if bases else f"class {name}"
    if not isinstance(x, types.FunctionType) or x.__module__ != USER_MODULE:
        module = getattr(x, "__module__", None)
        return f"{module}.{name}" if isinstance(module, str) else name
    parameters, kinds = [], []
    for p in inspect.signature(x, follow_wrapped=False).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not {p.VAR_POSITIONAL, p.KEYWORD_ONLY} & set(kinds):
            parameters.append("*")
        elif kinds and kinds[-1] is p.POSITIONAL_ONLY and p.kind is not p.POSITIONAL_ONLY:
            parameters.append("/")
        star = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        default = "" if p.default is p.empty else f"={shown(p.default, level - 1)}"
        parameters.append(f"{star}{p.name}{default}")
        kinds.append(p.kind)
    if kinds and kinds[-1] is inspect.Parameter.POSITIONAL_ONLY:
        parameters.append("/")
    if x.__name__ == "<lambda>":
        return f"lambda {', '.join(parameters)}".rstrip()
    return f"{name}({', '.join(parameters)})"


PLAIN = (str, int, float, bool, type(None))  # what a description's values are made of
# Tensor classes whose `.grad` torch's own getter reads (no __torch_function__ runs): on a
# leaf it never warns, so it is read without catching warnings (3 µs a tensor).
PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)
SIZED = (list, tuple, dict, set, frozenset)  # exactly: a subclass's len is its own code
NUMBERS = "biufc"  # numpy kinds whose bytes are their values (not an object array's pointers)
MADE_BLOCKS = 512  # blocks whose lists are kept for reuse: at most 16 KB of key each
_MADE: dict[tuple[str, tuple[int, ...], bytes], Any] = {}
_repr = _Repr()
_repr.maxstring = _repr.maxother = 200
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 20


def snapshot(namespace: dict[str, Any], cap: int) -> dict[str, Variable]:
    """Every user variable in `namespace`, described; modules and library classes left out."""
    described = {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        info = describe(value, cap)
        if info is not None:
            described[name] = info
    return described


def describe(value: Any, cap: int) -> Variable | None:
    """Plain data for one value, or None for what is not the program's own (modules...)."""
    if isinstance(value, torch.Tensor):
        try:
            return _tensor(value, cap)
        # A nested tensor has no sizes, a lazy module's parameter no data yet (ValueError):
        # what can be told.
        except (RuntimeError, ValueError) as error:
            return Variable(kind="tensor", shape=[], dtype=str(value.dtype),
                            device=str(value.device), requires_grad=value.requires_grad,
                            is_leaf=value.is_leaf, numel=0, is_view=False,
                            retains_grad=False, truncated=True,
                            values=f"<values unavailable: {type(error).__name__}>")
    if isinstance(value, np.ndarray):
        return _array(value, cap)
    if isinstance(value, bool | int | float | complex | np.number | np.bool_):
        return Variable(kind="bool" if isinstance(value, bool | np.bool_) else "number",
                        type=type(value).__name__, values=_number(value))
    if isinstance(value, str):
        return Variable(kind="str", values=value[:cap], truncated=len(value) > cap)
    if isinstance(value, torch.device | torch.dtype):
        return Variable(kind=type(value).__name__, values=str(value))
    if isinstance(value, types.ModuleType) or (
            isinstance(value, type) and value.__module__ != USER_MODULE):
        return None
    kind = ("class" if isinstance(value, type) else "module" if isinstance(value, torch.nn.Module)
            else "function" if callable(value) else "object")
    if isinstance(value, list | tuple | dict | set | frozenset | torch.Size):
        kind = "size" if isinstance(value, torch.Size) else type(value).__name__
    return Variable(kind=kind, type=type(value).__name__, values=_short_repr(value),
                    length=len(value) if type(value) in SIZED else None,
                    parameters=_parameters(value) if kind == "module" else None)


def _parameters(module: torch.nn.Module) -> int:
    """What a module's parameters hold, hashed: each one's version counter, and its `.grad`'s
    (-1: none); -2 for a parameter of another class (a lazy module's, not yet made: reading
    it raises). Only numbers are hashed: their hash is the same in every process."""
    held = []
    for _, p in parameters(module):
        if type(p) in PLAIN_TENSORS:
            held += [version(p), -1 if p.grad is None else version(p.grad)]
        else:
            held += [-2, -2]
    return hash(tuple(-1 if v is None else v for v in held)) & (2**62 - 1)


def version(t: torch.Tensor) -> int | None:
    """A tensor's `_version`; None for one made under inference_mode, which keeps none."""
    return None if t.is_inference() else t._version


def _short_repr(value: Any) -> str:
    try:
        return read(value, _repr.repr)  # reprlib picks its method by the type's name alone
    except Exception as error:  # a repr that raises still deserves a row
        return f"<{type(value).__name__}: repr failed: {error}>"


def _tensor(t: torch.Tensor, cap: int) -> Variable:
    values, truncated = tensor_values(t, cap)
    info = Variable(
        kind="tensor", shape=list(t.shape), dtype=as_text(t.dtype), device=as_text(t.device),
        requires_grad=t.requires_grad, is_leaf=t.is_leaf,
        grad_fn=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        version=version(t), numel=t.numel(), is_view=t._base is not None,
        retains_grad=t.retains_grad, values=values, truncated=truncated,
        norm=_norm(t) if truncated else None)
    if t.layout == torch.strided and t.device.type != "meta":
        try:
            strides, ptr = list(t.stride()), t.data_ptr()
        except RuntimeError:  # no storage: a tensor that escaped from vmap...
            pass
        else:
            info.strides, info.data_ptr = strides, ptr
            info.memory = _extent(ptr, list(t.shape), strides, t.element_size())
    if type(t) in PLAIN_TENSORS and t.is_leaf:  # its .grad warns of nothing, runs nothing
        grad = t.grad
    else:
        with warnings.catch_warnings():  # reading .grad of a non-leaf warns; the lesson
            warnings.simplefilter("ignore")  # shows it
            grad = t.grad
    if grad is not None:
        info.grad, cut = tensor_values(grad, cap)
        info.grad_norm = _norm(grad) if cut else None
    if (tangent := _tangent(t)) is not None:
        info.tangent = tensor_values(tangent, cap)[0]
    return info


@functools.lru_cache(maxsize=1 << 10)
def as_text(value: torch.dtype | torch.device) -> str:
    """str() of a dtype or device, remembered (a step describes every tensor again)."""
    return str(value)


def _tangent(t: torch.Tensor) -> torch.Tensor | None:
    """A dual tensor's tangent at forward-mode AD's level now (None: no level, or not a
    dual tensor); read as `fwAD.unpack_dual` reads it, making no node."""
    level = forward_ad._current_level
    if level < 0:
        return None
    try:
        with torch.no_grad():
            return torch._VF._unpack_dual(t, level=level)[1]
    except RuntimeError:  # a tensor forward AD cannot hold (nested...): none
        return None


def _norm(t: torch.Tensor) -> float | None:
    """The 2-norm of all of a tensor's values, for one too big to send whole (None if it
    has no readable values, or the norm is not finite)."""
    try:
        dense = t.detach()
        dense = dense.to_dense() if dense.layout != torch.strided else dense
        if not (dense.is_floating_point() or dense.is_complex()):
            dense = dense.double()  # integers and booleans
        norm = float(torch.linalg.vector_norm(
            dense, dtype=torch.complex128 if dense.is_complex() else torch.float64))
    except Exception:  # noqa: BLE001 - meta, nested or exotic tensors: no norm
        return None
    return norm if math.isfinite(norm) else None


def _array(a: np.ndarray, cap: int) -> Variable:
    ptr = a.__array_interface__["data"][0]
    strides = [s // a.itemsize for s in a.strides] if a.itemsize else list(a.strides)
    values, truncated = tensor_values(a, cap)
    return Variable(kind="ndarray", shape=list(a.shape), dtype=str(a.dtype), device="cpu",
                    numel=int(a.size), strides=strides, data_ptr=ptr,
                    memory=_extent(ptr, list(a.shape), strides, a.itemsize),
                    writeable=bool(a.flags.writeable), values=values, truncated=truncated)


def _extent(ptr: int, shape: list[int], strides: list[int], itemsize: int) -> list[int]:
    """[first byte, one past the last byte] that the elements occupy; empty if no elements."""
    if math.prod(shape) == 0:
        return [ptr, ptr]
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    return [ptr + low * itemsize, ptr + (high + 1) * itemsize]


def tensor_values(x: torch.Tensor | np.ndarray, cap: int) -> tuple[Any, bool]:
    """Nested values of `x`: all of it, or a leading block of at least `cap` elements."""
    try:
        block = leading_block(x, cap)
        if isinstance(block, torch.Tensor):
            block = block.detach().cpu()
            if block.is_quantized:
                block = block.dequantize()
            if block.layout != torch.strided:
                block = block.to_dense()
            if block.dtype in (torch.float16, torch.bfloat16) or block.dtype.is_floating_point:
                block = block.double()
            block = block.numpy()
        return _json_ready(block), block.size < _numel(x)
    except Exception as error:  # meta, nested or exotic tensors: metadata only
        return f"<values unavailable: {type(error).__name__}>", True


def _numel(x: torch.Tensor | np.ndarray) -> int:
    return x.numel() if isinstance(x, torch.Tensor) else int(x.size)


def leading_block(x: Any, cap: int) -> Any:
    """A prefix slice along the first dimensions holding between cap and 2*cap elements."""
    if x.ndim == 0 or _numel(x) <= cap:
        return x
    row = _numel(x[0]) if len(x) else 0
    if row > cap:
        return leading_block(x[0], cap)[None]
    return x[: -(-cap // max(row, 1))]


def _json_ready(block: np.ndarray) -> Any:
    """block.tolist(), checked element by element only where JSON needs strings. A block of
    numbers made before (the same dtype, shape and bytes: a tensor a line left as it was) gets
    the lists made then, which nothing changes in place: most of a step's tensors are."""
    key = (block.dtype.str, block.shape, block.tobytes()) if block.dtype.kind in NUMBERS else None
    if key is not None and (made := _MADE.get(key)) is not None:
        return made
    plain = block.dtype.kind in "biu" and (block.size == 0 or np.abs(block).max() < 2**53)
    if plain or (block.dtype.kind == "f" and np.isfinite(block).all()):
        made = block.tolist()
    else:
        made = _plain(block.tolist())
    if key is not None:
        if len(_MADE) >= MADE_BLOCKS:
            del _MADE[next(iter(_MADE))]  # the oldest
        _MADE[key] = made
    return made


def _plain(value: Any) -> Any:
    """Lists of JSON-ready values: non-finite floats and complex numbers become strings, and
    what is neither number nor text (an object array's items) its type's name, `<A>`. A
    description is plain data: it is compared and sent without running the program's code
    (an item's `__eq__` or `__repr__`)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    value = _number(value)
    return value if type(value) in PLAIN else f"<{type(value).__name__}>"


def _number(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
        return str(value)
    return value
