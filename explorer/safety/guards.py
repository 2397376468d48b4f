"""The runtime half of the sandbox: the namespace a program runs in and the guards it calls.

`explorer.safety.sandbox` rewrites a program so that attribute loads and stores, loop turns,
integer powers and shifts, imports and class statements call the `__ae_*__` functions
made here. Together with the static checks they keep a program inside torch, numpy and
math: no module, function or frame outside them is ever handed to user code.

Importing this module also sets how a process that runs programs shows two things that
would name the server's files: a module's repr (`<module 'torch'>`) and the stack anomaly
mode keeps with each autograd node (the program's frames, as plain Python shows a script's).
"""

from __future__ import annotations

import _string
import ast
import builtins
import dis
import functools
import importlib
import io
import math
import os
import re
import string
import sys
import time as _time
import traceback
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch
import torch.fx.traceback
from numpy._pytesttester import PytestTester
from torch.nn.modules.lazy import LazyModuleMixin

from explorer.safety import sandbox
from explorer.safety.limits import LimitExceeded, Limits, LoopLimit, NumberLimit
from explorer.safety.sandbox import BLOCKED_ATTRS, USER_MODULE, Refused

MAX_INT_BITS = 1_000_000  # about 300,000 decimal digits

SAFE_ROOTS = ("torch", "numpy", "math", "random")
MODULES: dict[str, Any] = {
    name: importlib.import_module(name)
    for name in sandbox.MODULES - {"time", "functools", "__future__"}
}


class _Clock:
    """The `time` a program imports: the clocks and `sleep`, nothing else. A class of its own
    that takes no arguments: `type(time)(**fields)` makes nothing (a namespace type would make
    an object with any attribute, `__array_interface__` included)."""

    __slots__ = ()
    time, perf_counter = staticmethod(_time.time), staticmethod(_time.perf_counter)
    monotonic, sleep = staticmethod(_time.monotonic), staticmethod(_time.sleep)

    def __repr__(self) -> str:
        return "<module 'time' (its clocks and sleep)>"


MODULES["time"] = _Clock()


class _Functools:
    """The `functools` a program imports: `reduce` and `partial`, as lessons use them, and
    nothing else (`update_wrapper` and `wraps` set attributes by name). A class of its own,
    as `_Clock` is."""

    __slots__ = ()
    reduce, partial = staticmethod(functools.reduce), staticmethod(functools.partial)

    def __repr__(self) -> str:
        return "<module 'functools' (reduce and partial)>"


MODULES["functools"] = _Functools()
# What a stand-in module hands out, though it comes from a module a program may not reach.
STAND_INS = frozenset({id(functools.reduce), id(functools.partial)})
# A run is repeatable (explorer.pool.results) only if everything it reached is known to
# behave the same every time. Known: what these modules define (a value's class, a class
# itself), less the names below and NumPy's dates. Anything else (the `time` stand-in, the
# objects of Python's `datetime` that a datetime64's `.item()` gives, whatever a library may
# hand out one day) is not, until it is added here.
KNOWN_ORIGINS = frozenset({"torch", "numpy", "math", "random", "builtins", "collections",
                           USER_MODULE})
# The names of what draws on the machine's entropy, or seeds from it when given no seed
# (`torch.seed`, a Generator's `.seed()`, `np.random.default_rng()`, NumPy's bit generators,
# `random.SystemRandom`...).
ENTROPY = frozenset({"seed", "seed_all", "default_rng", "SeedSequence", "RandomState",
                     "Random", "SystemRandom", "Generator", "BitGenerator", "PCG64",
                     "PCG64DXSM", "MT19937", "Philox", "SFC64"})
# NumPy's dates and times, every one of them: numpy reads the strings 'now' and 'today' (in
# any case) as the clock wherever it makes a datetime64 from text, which is a date type,
# value, dtype or function away. In a program's text: a date type's name as numpy reads it
# ('M8[s]', '<m8', 'datetime64[D]', 'i4,M8', '(2,)M'), and the clock's two words.
DATE_TYPES = (np.datetime64, np.timedelta64, np.dtypes.DateTime64DType,
              np.dtypes.TimeDelta64DType)
DATE_FUNCTIONS = frozenset(id(value) for name, value in vars(np).items()
                           if re.search("busday|datetime|timedelta", name))
DATE_TYPE_TEXT = re.compile(  # one of the comma-separated parts, a shape's `(2, 3)` cut too
    r"([^)]*\))?\d*[<>=|]?([Mm]8?|datetime64|timedelta64)(\[[^\]]*\])?")
CLOCK_WORDS = frozenset({"now", "today"})
_unrepeatable = [0]  # times programs reached something not known to repeat


def unrepeatable_reached() -> int:
    """How many times programs reached something not known to behave the same every time
    (`time`, entropy, a date, anything from outside KNOWN_ORIGINS) so far in this process: a
    run during which this grew may come out differently next time."""
    return _unrepeatable[0]


def names_a_date(tree: ast.AST) -> bool:
    """Whether a string in a program (its rewritten `tree`) is one numpy reads as a date type
    or as the clock. An attribute named like one (`self.m`) counts too: a run is then run
    again, never given someone else's clock."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if text.lower() in CLOCK_WORDS or any(DATE_TYPE_TEXT.fullmatch(part.strip())
                                                  for part in text.split(",")):
                return True
    return False


def _known(value: Any) -> bool:
    """Whether `value` is known to behave the same every run (see KNOWN_ORIGINS)."""
    kind = type(value)
    known = _known_class(value if issubclass(kind, type) else kind)
    if known is None:  # an array: by its dtype
        return not isinstance(value, np.ndarray) or value.dtype.kind not in "Mm"
    return known and id(value) not in DATE_FUNCTIONS


@functools.cache
def _known_class(kind: type) -> bool | None:
    """Whether `kind`'s values are known to behave the same every run; None for NumPy's
    arrays, whose dtype tells."""
    if issubclass(kind, np.ndarray):
        return None
    origin = getattr(kind, "__module__", None)
    return (isinstance(origin, str) and origin.partition(".")[0] in KNOWN_ORIGINS
            and not issubclass(kind, DATE_TYPES))


SAFE_BUILTINS = (
    "abs", "all", "any", "bin", "bool", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "frozenset", "hash", "hex", "id", "int", "isinstance",
    "issubclass", "len", "list", "map", "max", "min", "oct", "ord", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "staticmethod", "classmethod", "property", "str", "sum",
    "super", "tuple", "zip", "dir", "hasattr", "iter", "next", "object", "ArithmeticError",
    "AssertionError", "AttributeError", "Exception",
    "IndexError", "KeyError", "LookupError", "NotImplementedError", "OverflowError",
    "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
    "MemoryError", "NameError", "UserWarning", "Warning", "NotImplemented", "Ellipsis",
)
# Reached through a module attribute (`torch.builtins.eval`...), these would leave the sandbox.
ESCAPES = frozenset(id(getattr(builtins, name)) for name in (
    "eval", "exec", "compile", "open", "getattr", "setattr", "delattr", "__import__", "globals",
    "locals", "vars", "input", "breakpoint", "help", "type", "memoryview",
    "__build_class__", "print", "exit", "quit",
) if hasattr(builtins, name))
CLASS_BASES = (torch.autograd.Function, torch.nn.Module, torch.utils.data.Dataset)
# Where a function, class or object reached by attribute may come from. torch and numpy import
# helpers for their own use (`operator.attrgetter`, `functools.wraps`, `importlib`, `ctypes`)
# that would reach past every other check.
SAFE_ORIGINS = frozenset({*SAFE_ROOTS, "builtins", "time", USER_MODULE})
# Parts of a module path below torch or numpy that reach files, processes, native code,
# compilers or the network. A module, function or class from such a module is refused however
# it is reached: `torch.utils.collect_env.run` runs a shell command, `torch.cuda.gds.GdsFile`
# opens (and creates) any file. Modules are also refused for any private or blocked part.
DANGEROUS_PARTS = frozenset({
    "serialization", "hub", "jit", "fx", "onnx", "export", "_export", "package", "library",
    "_library", "multiprocessing", "distributed", "cpp_extension", "collect_env", "benchmark",
    "throughput_benchmark", "_dynamo", "_inductor", "compiler", "_higher_order_ops", "_ops",
    "ao", "quantization", "gds", "profiler", "tensorboard", "model_zoo", "bottleneck",
    "mobile_optimizer", "bundled_inputs", "file_baton", "hipify", "show_pickle", "ctypeslib",
    "f2py", "npyio", "format", "distutils", "xeon", "run_cpu", "_pytesttester", "datapipes",
    "cpp_backtrace",
})
# Calls that import a module or run code by a name or text. Library code that makes one with
# anything but a constant (`__import__(module)` in `np.info` and `np.lib.add_newdoc`,
# `loader.exec_module` in numpy.distutils) imports or runs whatever a program names.
RUNS_BY_NAME = frozenset({"__import__", "import_module", "exec_module", "load_module",
                          "run_path", "run_module", "exec", "eval", "spec_from_file_location",
                          "resolve_name"})
NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD"})
# Whole modules refused although their part names are harmless elsewhere: numpy's test
# helpers run code from strings (`runstring`); torch.testing (`assert_close`) stays.
BLOCKED_MODULES = ("numpy.testing", "numpy._pytesttester")
# Modules whose flags a program may set (`torch.backends.cudnn.deterministic = True`): each
# run is a fresh process, so the change ends with it.
SETTABLE_MODULES = frozenset({"torch.backends.cudnn", "torch.backends.cuda.matmul",
                              "torch.backends.mkldnn", "torch.backends.opt_einsum"})
# Raw memory: a storage (`x.untyped_storage()`, `x.storage()`) may be read, as lectures read it
# to explain views; never written, resized, shared or converted (`.type("pkg.name")` imports
# by name), and no storage class is reached (it would make one from raw memory or a file).
STORAGES = (torch._C.StorageBase, torch.TypedStorage)
STORAGE_READS = frozenset({"data_ptr", "size", "nbytes", "element_size", "tolist", "device",
                           "dtype", "is_shared", "is_pinned", "untyped", "clone", "cpu"})
# The tensor types `torch.set_default_tensor_type` may name; any other string is imported.
TENSOR_TYPE_NAME = re.compile(r"torch(\.cuda)?\.[A-Za-z]+Tensor")


class Output(io.StringIO):
    """Printed text, capped: past the cap the rest is dropped and a note says so."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.dropped = 0

    def write(self, text: str) -> int:
        room = self.cap - self.tell()
        if len(text) > room:
            self.dropped += len(text) - max(room, 0)
            text = text[:max(room, 0)]
        return super().write(text)

    def since(self, place: int) -> str:
        """What was printed after position `place`."""
        end = self.tell()
        self.seek(place)
        text = self.read()
        self.seek(end)
        return text


class _SafeFormatter(string.Formatter):
    """str.format whose `{0.name}` fields are walked like attributes in the program itself."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            if isinstance(key, str) and (key.startswith("_") or key in BLOCKED_ATTRS):
                raise Refused(None, f"format field `{field_name}` reaches a private attribute")
            obj = _attr(obj, key) if is_attr else obj[key]
        return obj, first


class Guards:
    """Per-run counters and the functions the rewritten program calls."""

    def __init__(self, limits: Limits, out: Output) -> None:
        install()
        self.limits = limits
        self.out = out
        self.loops = 0
        self.tripped: LimitExceeded | None = None

    def namespace(self) -> dict[str, Any]:
        """Fresh globals for one run: safe builtins, torch, np, math and the guards."""
        safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS}
        safe.update(print=self.print, pow=self.pow, type=_type, format=format, getattr=_getattr,
                    setattr=_setattr, delattr=_delattr, __build_class__=_build_class,
                    __import__=_library_import)
        return {
            "__builtins__": safe, "__name__": USER_MODULE,
            "torch": torch, "np": np, "math": math,
            "__ae_tick__": self.tick, "__ae_iter__": self.iter, "__ae_attr__": _attr,
            "__ae_settable__": _settable, "__ae_binop__": _binop, "__ae_operand__": _operand,
            "__ae_import__": _import, "__ae_format__": _format, "__ae_keywords__": _keywords,
        }

    def check(self) -> None:
        """Raise again a limit the program caught and swallowed."""
        if self.tripped is not None:
            raise self.tripped

    def tick(self) -> None:
        self.loops += 1
        if self.loops > self.limits.loop_iterations:
            self.tripped = LoopLimit(
                f"The program ran more than {self.limits.loop_iterations:,} loop iterations, "
                "the limit for one run. Is there a loop that never ends?")
            raise self.tripped

    def iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.tick()
            yield item

    def print(self, *values: Any, sep: str | None = " ", end: str | None = "\n",
              flush: bool = False) -> None:
        if not all(map(_known, values)):
            _unrepeatable[0] += 1
        builtins.print(*values, sep=sep, end=end, file=self.out)

    def pow(self, base: Any, exp: Any, mod: Any = None) -> Any:
        if mod is None:
            return _binop("Pow", base, exp)
        return builtins.pow(base, exp, mod)


def _type(obj: Any, *rest: Any) -> type:
    """`type(x)` to see what x is; the three-argument form that makes classes is refused."""
    result = builtins.type(obj)
    if rest or issubclass(result, type):  # a metaclass makes classes like type(name, bases, d)
        raise Refused(None, "`type` may only show what a value is, e.g. `type(x)`; making "
                            "classes with it is outside the sandbox")
    return result


def _getattr(obj: Any, name: str, *default: Any) -> Any:
    """`getattr(obj, name[, default])`, checked like `obj.name` written in the program."""
    _checked(name)
    try:
        return _format(obj, name) if name in sandbox.FORMAT_METHODS else _attr(obj, name)
    except AttributeError:
        if default:
            return default[0]
        raise


def _setattr(obj: Any, name: str, value: Any) -> None:
    """`setattr(obj, name, value)`, checked like `obj.name = value` written in the program."""
    name = _checked(name, store=True)  # the name first, as the static check would
    setattr(_settable(obj, name), name, value)


def _super_setattr(parent: super, name: Any, value: Any) -> None:
    """`super().__setattr__(name, value)`, checked like `setattr(self, name, value)`."""
    name = _checked(name, store=True)
    _settable(parent.__self__, name)
    getattr(parent, "__setattr__")(name, value)  # noqa: B009 - the parent's, by design


def _delattr(obj: Any, name: str) -> None:
    """`delattr(obj, name)`, checked like `del obj.name` written in the program."""
    name = _checked(name, store=True)
    delattr(_settable(obj, name), name)


def _checked(name: Any, store: bool = False) -> str:
    """An attribute name given as a string, checked like one written in the program."""
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
    sandbox.check_attr(name, None, store=store)
    return name


def _attr(obj: Any, name: str) -> Any:
    """Load `obj.name`, refusing any module, builtin or frame outside the sandbox."""
    if isinstance(obj, STORAGES) and name not in STORAGE_READS:
        raise Refused(None, f"`.{name}` of a storage is outside the sandbox: a storage may be "
                            "read (`data_ptr`, `size`, `nbytes`, `element_size`, `tolist`…), "
                            "not changed")
    if type(obj) is super and name == "__setattr__":
        return functools.partial(_super_setattr, obj)
    if not _own(obj):
        sandbox.check_private(name, None)
    value = getattr(obj, name)
    if isinstance(value, types.ModuleType):
        if _outside(value.__name__, module=True):
            raise Refused(None, f"`.{name}` leads to the module `{value.__name__}`, which is "
                                "outside the sandbox")
    elif id(value) in SUBSTITUTES:
        return SUBSTITUTES[id(value)]
    elif (id(value) in ESCAPES
          or isinstance(value, types.FrameType | types.CodeType | types.TracebackType)
          or isinstance(value, type) and issubclass(value, type)):  # a metaclass makes classes
        raise Refused(None, f"`.{name}` leads outside the sandbox")
    elif isinstance(value, PytestTester):  # `np.test('os')` imports and runs any module
        raise Refused(None, f"`.{name}` runs test suites, which this sandbox does not allow")
    elif isinstance(value, type) and issubclass(value, STORAGES):
        raise Refused(None, f"`.{name}` leads to raw storage, which is outside the sandbox")
    else:
        origin = getattr(value, "__module__", None)
        if (origin == "time" or getattr(value, "__name__", None) in ENTROPY
                or not (_known(obj) and _known(value))):
            _unrepeatable[0] += 1
        if isinstance(origin, str) and _outside(origin, module=False) and (
                id(value) not in STAND_INS):
            raise Refused(None, f"`.{name}` leads to `{origin}`, which is outside the sandbox")
        if _runs_by_name(value):
            raise Refused(None, f"`.{name}` imports modules or runs code by a name it is given, "
                                "which this sandbox does not allow")
    return value


def _own(obj: Any) -> bool:
    """Whether `obj` is a plain class of the program's, or an object of one: every class it
    comes from (but `object`) the program wrote. A library's class, or a program's class
    that extends one (an `nn.Module`), keeps its private names to itself."""
    kind = obj if isinstance(obj, type) else type(obj)
    return all(k is object or k.__module__ == USER_MODULE for k in kind.__mro__)


def _runs_by_name(value: Any) -> bool:
    """Whether library code behind `value` (a function, a method, what a class runs when it is
    called) imports a module or runs code by a name it is given."""
    if isinstance(value, type):
        return any(_runs_by_name(getattr(value, method, None))
                   for method in ("__new__", "__init__", "__call__"))
    if isinstance(value, types.MethodType):
        value = value.__func__
    return isinstance(value, types.FunctionType) and _function_runs_by_name(value)


@functools.lru_cache(maxsize=4096)
def _function_runs_by_name(func: types.FunctionType) -> bool:
    """`_runs_by_name` for a Python function: its own code, the functions it wraps or closes
    over, and the private helpers of its module it names (`np.info` calls `_makenamedict`)."""
    seen: set[types.FunctionType] = set()
    todo = [func]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        codes = list(_codes(f.__code__))
        if any(_calls_by_name(code) for code in codes):
            return True
        helpers = [getattr(f, "__wrapped__", None), *map(_contents, f.__closure__ or ()),
                   *(f.__globals__.get(n) for code in codes for n in code.co_names
                     if n.startswith("_"))]
        todo += [h for h in helpers if isinstance(h, types.FunctionType)]
    return False


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """`code` and the code of the functions, lambdas and comprehensions inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a variable not yet bound
        return None


def _calls_by_name(code: types.CodeType) -> bool:
    """Whether `code` loads one of RUNS_BY_NAME and then anything but a constant (its first
    argument, when it calls it)."""
    if RUNS_BY_NAME.isdisjoint(code.co_names):
        return False
    steps = [i for i in dis.get_instructions(code) if i.opname not in ("PUSH_NULL", "NOP")]
    return any(step.opname in NAME_LOADS and step.argval in RUNS_BY_NAME
               and (after is None or after.opname != "LOAD_CONST")
               for step, after in zip(steps, [*steps[1:], None], strict=True))


@functools.cache
def _outside(name: str, module: bool) -> bool:
    """Whether a module named `name`, or a function or class defined in it, is off limits."""
    root, *parts = name.split(".")
    if root not in (SAFE_ROOTS if module else SAFE_ORIGINS):
        return True
    if name == "numpy.lib.scimath":  # `np.emath`, the one public module under numpy.lib
        return False
    if any(name == m or name.startswith(m + ".") for m in BLOCKED_MODULES):
        return True
    blocked = DANGEROUS_PARTS | BLOCKED_ATTRS if module else DANGEROUS_PARTS
    return any(part in blocked or module and part.startswith("_") for part in parts)


def _set_default_tensor_type(t: Any) -> None:
    """`torch.set_default_tensor_type`, which imports any module a string names: here a string
    may only name a tensor type such as `'torch.DoubleTensor'`."""
    if isinstance(t, str) and not TENSOR_TYPE_NAME.fullmatch(t):
        raise Refused(None, f"`{t}` is not a tensor type such as 'torch.DoubleTensor'")
    torch.set_default_tensor_type(t)


def _cond(*args: Any, **kwargs: Any) -> None:
    """`torch.cond`, which compiles its branches with TorchDynamo: refused."""
    raise Refused(None, "`torch.cond` compiles the program's functions, which this sandbox "
                        "does not allow; use a plain `if`")


# Library functions handed to a program in place of the real ones (looked up by identity, so
# every path to them is covered): the real ones import by name or compile with TorchDynamo.
SUBSTITUTES: dict[int, Any] = {
    id(torch.set_default_tensor_type): _set_default_tensor_type, id(torch.cond): _cond,
}


def _keywords(mapping: Any) -> Any:
    """`f(**mapping)`, its keys checked as written keyword names are: read once into a dict,
    so that the keys checked are the keys passed (anything else gets Python's own error)."""
    if not hasattr(mapping, "keys"):
        return mapping
    passed = dict(mapping)
    for key in passed:
        if isinstance(key, str):
            sandbox.check_name(key, None)
    return passed


def _settable(obj: Any, name: str) -> Any:
    """Let `obj.name = v` through only for the program's own objects, never a module or class
    (a private name only for the program's own plain objects)."""
    if not _own(obj):
        sandbox.check_private(name, None)
    if isinstance(obj, types.ModuleType) and obj.__name__ in SETTABLE_MODULES:
        return obj
    if isinstance(obj, types.ModuleType) or (
            isinstance(obj, type) and obj.__module__ != USER_MODULE):
        raise Refused(None, f"cannot change attributes of `{getattr(obj, '__name__', obj)}`: "
                            "library modules and classes are read-only here")
    return obj


def _too_big(op: str, base: Any, exp: Any) -> bool:
    if not (isinstance(base, int) and isinstance(exp, int)) or exp <= 0:
        return False
    if op == "LShift":
        return exp > MAX_INT_BITS
    return abs(base) > 1 and exp * math.log2(abs(base)) > MAX_INT_BITS


def _binop(op: str, left: Any, right: Any) -> Any:
    """`left ** right` or `left << right`, refusing integers of more than a million bits."""
    if _too_big(op, left, right):
        raise NumberLimit(f"`{left} {'**' if op == 'Pow' else '<<'} {right}` would be an "
                          "integer of more than a million bits, too large for one run.")
    return left**right if op == "Pow" else left << right


def _operand(op: str, value: Any) -> Any:
    """The right side of `x **= n` or `x <<= n`, with the same cap as `_binop`."""
    if _too_big(op, 2, value):
        raise NumberLimit(f"an exponent or shift of {value} is too large for one run.")
    return value


def _import(name: str) -> Any:
    if name == "time":
        _unrepeatable[0] += 1
    return MODULES[name]


def _library_import(name: str, *args: Any, **kwargs: Any) -> Any:
    """`__import__` for C code in numpy and torch, which imports its helpers through the
    caller's builtins (numpy's `a.sum()` does). Programs cannot name it: dunders are refused."""
    if name.split(".")[0] not in SAFE_ROOTS and name not in sys.modules:
        raise ImportError(f"import of `{name}` is outside the sandbox")
    return builtins.__import__(name, *args, **kwargs)


def _format(obj: Any, method: str) -> Any:
    """`s.format` / `s.format_map` for strings, through a formatter that refuses `{0._x}`."""
    if isinstance(obj, type) and issubclass(obj, str):  # `str.format`, `np.str_.format`
        raise Refused(None, "write `'text {}'.format(value)` rather than `str.format(...)`")
    if not isinstance(obj, str):
        bound = _attr(obj, method)  # `super(np.str_, s).format` is str's own: guard it too
        owner = getattr(bound, "__self__", None)
        return _format(owner, method) if isinstance(owner, str) else bound
    formatter = _SafeFormatter()
    if method == "format":
        return lambda *args, **kwargs: formatter.vformat(obj, args, kwargs)
    return lambda mapping: formatter.vformat(obj, (), mapping)


def _build_class(func: Any, name: str, *bases: Any, **kwargs: Any) -> type:
    """Classes may extend torch.autograd.Function, torch.nn.Module, a Dataset, the program's
    own classes, `object` or nothing: never a metaclass or a library's internals."""
    if not all(b is object or isinstance(b, type) and (
            issubclass(b, CLASS_BASES) or b.__module__ == USER_MODULE) for b in bases):
        raise Refused(None, f"class `{name}` must subclass torch.autograd.Function, "
                            "torch.nn.Module, a Dataset or a class of the program")
    return builtins.__build_class__(func, name, *bases, **kwargs)


# Where installed libraries live, longest first: a frame in one of their files is named from
# there (`torch/nn/modules/module.py`). The explorer's own frames are left out.
LIBRARY_DIRS = sorted({os.path.join(os.path.dirname(path), "") for path in (
    os.path.dirname(torch.__file__), os.path.dirname(np.__file__), os.__file__)},
    key=len, reverse=True)
EXPLORER_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")


def _module_repr(module: types.ModuleType) -> str:
    """A module's repr, `<module 'torch'>`: where it is installed is the server's business."""
    return f"<module {getattr(module, '__name__', '?')!r}>"


def _program_stack() -> list[str]:
    """The stack anomaly mode keeps with each new node (`metadata["traceback_"]`), as plain
    Python shows a script's: from the program's first frame on, without the explorer's."""
    frames = traceback.extract_stack()
    first = next((i for i, f in enumerate(frames) if f.filename == sandbox.FILENAME), len(frames))
    kept = [f for f in frames[first:] if not f.filename.startswith(EXPLORER_DIR)]
    for frame in kept:
        frame.filename = next((frame.filename[len(d):] for d in LIBRARY_DIRS
                               if frame.filename.startswith(d)), frame.filename)
    return traceback.format_list(kept)


def _dunder(name: object) -> bool:
    return isinstance(name, str) and name.startswith("__") and name.endswith("__")


def _no_dunder_names(store: Callable[..., None]) -> Callable[..., None]:
    """A `torch.nn.Module` method that stores a value under a name of the caller's choosing
    (`__setattr__`, which `ParameterDict` and friends use for their keys, `add_module`,
    `register_buffer`, `register_parameter`), refusing dunder names: one there would be a
    protocol a library reads (NumPy reads raw memory through `__array_interface__`). Only
    `__class__` may change: to a subclass (as `torch.nn.utils.parametrize` does), or a lazy
    module's to the class it becomes once its shapes are known (`LazyLinear` to `Linear`)."""
    @functools.wraps(store)
    def guarded(module: torch.nn.Module, name: Any, value: Any, *rest: Any,
                **options: Any) -> None:
        becomes = isinstance(value, type) and (
            issubclass(value, type(module)) or isinstance(module, LazyModuleMixin)
            and value is getattr(type(module), "cls_to_become", None))
        if _dunder(name) and not (name == "__class__" and becomes):
            raise Refused(None, f"a module's attribute or key may not be a dunder name such "
                                f"as `{name}`")
        store(module, name, value, *rest, **options)
    return guarded


@functools.cache
def install() -> None:
    """Put the guards into what is looked up at each use, once per process, when the first run
    asks (importing this module changes nothing): Python's module repr, the stack torch's
    anomaly mode (C++) asks `torch.fx.traceback` for, and a module's attribute store."""
    importlib._bootstrap._module_repr = _module_repr  # type: ignore[attr-defined]
    torch.fx.traceback.format_stack = _program_stack
    for store in ("__setattr__", "add_module", "register_buffer", "register_parameter"):
        setattr(torch.nn.Module, store, _no_dunder_names(getattr(torch.nn.Module, store)))
