"""The sandbox: what a learner's program may do, and how the rest is refused.

`sandbox.prepare` checks a program before anything runs; the runtime guards
(`explorer.safety.guards`) catch what only shows while it runs. Programs run in-process through
`execute`, so every case here is fast and needs no worker. Each refusal names its line and says
why in plain words.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import io
import math
import os
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

from explorer.record.execute import execute
from explorer.safety import confine, guards, places, sandbox
from explorer.safety.guards import Guards, Output
from explorer.safety.limits import Limits, LoopLimit
from explorer.safety.sandbox import Refused
from explorer.trace import Trace, wire
from explorer.trace.notes import english

LIMITS = Limits(time_s=2)


def run(code: str) -> Trace:
    return execute(code, limits=LIMITS)


def ok(code: str) -> Trace:
    trace = run(code)
    assert trace.ok, trace.error
    return trace


def values(trace: Trace, name: str) -> object:
    return trace.variables[name].values


# --- the teaching subset runs ------------------------------------------------------------------


def test_assignments_loops_and_branches() -> None:
    trace = ok(
        "a, b = 1, 2.5\n"
        "a += 3\n"
        "c = [0, 0, 0]\n"
        "c[1] = 7\n"
        "d = {'k': 1}\n"
        "d['k'] += 1\n"
        "total = 0\n"
        "for i in range(5):\n"
        "    if i % 2 == 0:\n"
        "        total += i\n"
        "    else:\n"
        "        continue\n"
        "n = 0\n"
        "while n < 3:\n"
        "    n += 1\n"
    )
    assert values(trace, "a") == 4
    assert values(trace, "b") == 2.5
    assert values(trace, "c") == "[0, 7, 0]"
    assert values(trace, "d") == "{'k': 2}"
    assert values(trace, "total") == 0 + 2 + 4
    assert values(trace, "n") == 3


def test_functions_lambdas_comprehensions_and_strings() -> None:
    trace = ok(
        "def g(t, k=1):\n"
        "    return t + k\n"
        "f = lambda t: t * 2\n"
        "sq = [i * i for i in range(4)]\n"
        "pos = {c: i for i, c in enumerate('ab')}\n"
        "a, b = 4, 2.5\n"
        "print(f'{a} {b:.1f}', '{} {:.2f}'.format(a, b), g(1), f(3), sq, pos)\n"
    )
    assert trace.stdout == "4 2.5 4 2.50 2 6 [0, 1, 4, 9] {'a': 0, 'b': 1}\n"
    assert trace.variables["g"].kind == "function"


def test_grad_modes_and_catching_a_pytorch_error() -> None:
    trace = ok(
        "x = torch.ones(2, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    y = x * 2\n"
        "with torch.enable_grad():\n"
        "    z = x * 2\n"
        "try:\n"
        "    torch.ones(2, 3) @ torch.ones(2, 3)\n"
        "except RuntimeError as e:\n"
        "    msg = str(e)\n"
        "print('caught' if 'cannot be multiplied' in msg else 'missed')\n"
    )
    assert trace.variables["y"].requires_grad is False
    assert trace.variables["z"].requires_grad is True
    assert trace.variables["z"].grad_fn == "MulBackward0"
    assert trace.stdout == "caught\n"


def test_the_allowed_imports() -> None:
    trace = ok(
        "from __future__ import print_function\n"
        "import torch\n"
        "import numpy as np\n"
        "import math\n"
        "import torch.nn.functional as F\n"
        "from torch.autograd import Function\n"
        "import torch.nn as nn\n"
        "print(F.relu(torch.tensor([-1.0, 2.0])).tolist(), math.sqrt(16), np.arange(4).sum())\n"
        "print(Function is torch.autograd.Function, nn.Linear is torch.nn.Linear)\n"
        "print(torch.__version__)\n"
    )
    assert trace.stdout == f"[0.0, 2.0] 4.0 6\nTrue True\n{torch.__version__}\n"


def test_an_import_of_several_names_is_one_statement_and_one_step() -> None:
    code = ("from math import sin, cos, tan\nimport math, random as r\n"
            "from torch.utils.data import TensorDataset, DataLoader\n"
            "def f():\n    from torch import nn, optim\n    return nn.Linear, optim.SGD\n"
            "print(f() == (torch.nn.Linear, torch.optim.SGD), tan(0), 0 <= r.random() < math.pi,"
            " DataLoader is torch.utils.data.DataLoader)\n")
    assert len(sandbox.prepare(code).tree.body) == 5
    trace = ok(code)
    assert [s.line for s in trace.steps] == [1, 2, 3, 4, 5, 6, 7]
    assert trace.stdout == "True 0.0 True True\n"
    assert set(trace.steps[0].variables) == {"sin", "cos", "tan"}
    error = run("from torch import nn, os").error
    assert error is not None and "the module `os`" in error.message


def test_numpy_reductions() -> None:
    # ndarray.sum() imports numpy's helpers from C through the caller's builtins.
    trace = ok("a = np.arange(6.0).reshape(2, 3)\ns = a.sum()\nm = a.mean(axis=0)\n")
    assert values(trace, "s") == 15.0
    assert values(trace, "m") == [1.5, 2.5, 3.5]


def test_custom_autograd_function() -> None:
    trace = ok(
        "class MyReLU(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, input):\n"
        "        ctx.save_for_backward(input)\n"
        "        return input.clamp(min=0)\n"
        "\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        input, = ctx.saved_tensors\n"
        "        grad_input = grad_output.clone()\n"
        "        grad_input[input < 0] = 0\n"
        "        return grad_input\n"
        "\n"
        "x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)\n"
        "y = MyReLU.apply(x)\n"
        "y.sum().backward()\n"
    )
    assert values(trace, "y") == [0.0, 2.0, 0.0, 4.0]
    assert trace.variables["x"].grad == [0.0, 1.0, 0.0, 1.0]
    assert trace.variables["y"].grad_fn == "MyReLUBackward"
    assert trace.variables["MyReLU"].kind == "class"


def test_module_subclass() -> None:
    trace = ok(
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 1)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "\n"
        "net = Net()\n"
        "out = net(torch.ones(3, 2))\n"
        "n_params = len(list(net.parameters()))\n"
    )
    assert trace.variables["net"].kind == "module"
    assert trace.variables["out"].shape == [3, 1]
    assert trace.variables["out"].grad_fn == "AddmmBackward0"
    assert values(trace, "n_params") == 2


def test_teaching_private_attributes() -> None:
    trace = ok(
        "x = torch.ones(3)\n"
        "v0 = x._version\n"
        "x.add_(1)\n"
        "v1 = x._version\n"
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = a * a\n"
        "saved = y.grad_fn._saved_self\n"
    )
    assert (values(trace, "v0"), values(trace, "v1")) == (0, 1)
    assert values(trace, "saved") == [1.0, 2.0]


# --- refusals ----------------------------------------------------------------------------------

# Two harmless lines first, so the bad statement sits on line 3 and the line number is checked.
PRE = "x = torch.ones(2, requires_grad=True)\na = np.ones(2)\n"
FILES = "reaches files, processes or native code"
OUTSIDE = "outside the sandbox"

# Refused by `sandbox.prepare`, before anything runs: (id, code, type, line, reason).
STATIC = [
    ("import-os", PRE + "import os", "Refused", 3, "import of `os` is not allowed"),
    ("import-subprocess", PRE + "import subprocess", "Refused", 3, "`subprocess` is not allowed"),
    ("from-os", PRE + "from os import system", "Refused", 3, "import of `os` is not allowed"),
    ("__import__", PRE + "__import__('os')", "Refused", 3, "dunder names"),
    ("class-bases", PRE + "().__class__.__bases__", "Refused", 3, "`.__bases__`"),
    ("__dict__", PRE + "x.__dict__", "Refused", 3, "`.__dict__`"),
    ("torch.load", PRE + "torch.load('x')", "Refused", 3, FILES),
    ("torch.save", PRE + "torch.save(x, 'f')", "Refused", 3, "`.save` " + FILES),
    ("np.load", PRE + "np.load('f', allow_pickle=True)", "Refused", 3, "`.load` " + FILES),
    ("np.fromfile", PRE + "np.fromfile('f')", "Refused", 3, "`.fromfile` " + FILES),
    ("tofile", PRE + "a.tofile('f')", "Refused", 3, "`.tofile` " + FILES),
    ("np.memmap", PRE + "np.memmap('f')", "Refused", 3, "`.memmap` " + FILES),
    ("torch.hub", PRE + "torch.hub.load('repo', 'model')", "Refused", 3, FILES),
    ("torch.ops", PRE + "torch.ops.aten", "Refused", 3, "`.ops` " + FILES),
    ("cpp_extension", PRE + "torch.utils.cpp_extension", "Refused", 3, FILES),
    ("torch.jit", PRE + "torch.jit.script", "Refused", 3, "`.jit` " + FILES),
    ("torch.compile", PRE + "torch.compile(len)", "Refused", 3, "`.compile` " + FILES),
    ("profiler-trace", PRE + "p.export_chrome_trace('f')", "Refused", 3, FILES),
    ("profiler-legacy", PRE + "torch.autograd.profiler_legacy.profile()", "Refused", 3, FILES),
    ("checkpoint-reader", PRE + "torch.serialization.get_unsafe_globals_in_checkpoint('f')",
     "Refused", 3, FILES),
    ("ctypes", PRE + "a.ctypes", "Refused", 3, "`.ctypes` " + FILES),
    ("object-subclasses", PRE + "object.__subclasses__()", "Refused", 3, "`.__subclasses__`"),
    ("metaclass", PRE + "class A(torch.nn.Module, metaclass=type): pass", "Refused", 3,
     "`metaclass=`"),
    ("bare-except", PRE + "try:\n    pass\nexcept:\n    pass", "Refused", 5, "bare `except:`"),
    ("async", PRE + "async def f(): pass", "Refused", 3, "async code"),
    ("reserved-call", PRE + "__ae_tick__()", "Refused", 3, "reserved by the explorer"),
    ("dunder-method", PRE + "class N(torch.nn.Module):\n    def __getattribute__(self, n):\n"
     "        return 'n'", "Refused", 4, "`__getattribute__`"),
    ("import-star", PRE + "from torch import *", "Refused", 3, "`import *`"),
    ("syntax", PRE + "y = (1,\n", "SyntaxError", 3, "never closed"),
    ("exec", PRE + "exec('1')", "Refused", 3, "`exec` is not available"),
    ("eval", PRE + "eval('1')", "Refused", 3, "`eval` is not available"),
    ("open", PRE + "open('f')", "Refused", 3, "`open` is not available"),
    ("vars", PRE + "vars()", "Refused", 3, "`vars` is not available"),
    ("globals", PRE + "globals()", "Refused", 3, "`globals` is not available"),
    ("gds", PRE + "torch.cuda.gds.GdsFile('f', 65)", "Refused", 3, "`.gds` " + FILES),
    ("surrogate", PRE + "s = '\ud800'", "SyntaxError", 3, "U+D800 is not valid text"),
    ("too-long", PRE + "x = 1\n" * 20_000, "Refused", None, "at most 100,000"),
]

# Only the runtime guards can tell: `prepare` lets these through. The `*-helper` rows are what
# torch 2.13's own modules import (`operator.attrgetter`...), each a way out of the sandbox. The
# NameError rows are builtins that are simply not there.
RUNTIME = [
    ("torch.os", PRE + "torch.os.system('id')", "Refused", 3, "the module `os`"),
    ("torch.builtins", PRE + "torch.builtins", "Refused", 3, "the module `builtins`"),
    ("torch.sys", PRE + "torch.sys.modules", "Refused", 3, "the module `sys`"),
    ("torch.cuda.os", PRE + "torch.cuda.os", "Refused", 3, "the module `os`"),
    ("format-class", PRE + "'{0.__class__}'.format(1)", "Refused", 3, "format field"),
    ("format-private", PRE + "'{0._version}'.format(x)", "Refused", 3, "private attribute"),
    ("type-3-args", PRE + "type('A', (), {})", "Refused", 3, "making classes"),
    ("metaclass-by-type", PRE + "type(type(1))", "Refused", 3, "making classes"),
    ("metaclass-by-attr", PRE + "torch.autograd.function.FunctionMeta", "Refused", 3, OUTSIDE),
    ("set-class-attr", PRE + "torch.Tensor.add = None", "Refused", 3, "read-only"),
    ("set-module-attr", PRE + "np.pi = 3", "Refused", 3, "read-only"),
    ("patch-functional", PRE + "torch.nn.functional.relu = print", "Refused", 3, "read-only"),
    ("operator-helper", PRE + "torch.autograd.profiler_util.attrgetter('__globals__')",
     "Refused", 3, "`operator`"),
    ("functools-helper", PRE + "torch.optim.lr_scheduler.wraps", "Refused", 3, "`functools`"),
    ("ctypes-helper", PRE + "torch.xpu.pointer", "Refused", 3, "`_ctypes`"),
    ("storage-class", PRE + "torch.UntypedStorage(1).type('os.getpid')", "Refused", 3,
     "raw storage"),
    ("from-import", PRE + "from torch import os", "Refused", 3, "the module `os`"),
    ("private-module", PRE + "torch.quantization", "Refused", 3,
     "the module `torch.quantization`"),
    ("format-field-module", PRE + "'{0.os}'.format(torch)", "Refused", 3, "the module `os`"),
    ("str-subclass-format", PRE + "np.str_.format('{0.__class__}', 1)", "Refused", 3,
     "`str.format(...)`"),
    ("getattr-format", PRE + "getattr('{0.os.environ}', 'format')(torch)", "Refused", 3,
     "the module `os`"),
    ("getattr-format-map", PRE + "getattr('{t.os}', 'format_map')({'t': torch})", "Refused", 3,
     "the module `os`"),
    ("getattr-super-format", PRE + "getattr(super(np.str_, np.str_('{0.sys.path}')), 'format')"
     "(torch)", "Refused", 3, "the module `sys`"),
    ("map-getattr-format", PRE + "list(map(getattr, ['{0.os}'], ['format']))[0](torch)",
     "Refused", 3, "the module `os`"),
    ("datapipes", PRE + "torch.utils.data.datapipes.iter.FileLister(['/'])", "Refused", 3,
     "the module `torch.utils.data.datapipes`"),
    ("datapipe-class", PRE + "torch.utils.data.IterDataPipe", "Refused", 3,
     "`torch.utils.data.datapipes."),
    ("cpp-backtrace", PRE + "torch.utils.get_cpp_backtrace()", "Refused", 3,
     "`torch.utils.cpp_backtrace`"),
    ("setattr-module", PRE + "setattr(torch.nn.functional, 'relu', print)", "Refused", 3,
     "read-only"),
    ("setattr-blocked", PRE + "setattr(x, 'load', print)", "Refused", 3, "`.load` " + FILES),
    ("storage-resize", PRE + "x.untyped_storage().resize_(0)", "Refused", 3, "of a storage"),
    ("storage-type", PRE + "x.storage().type('os.system')", "Refused", 3, "of a storage"),
    ("private-of-tensor", PRE + "x._cdata", "Refused", 3, "private attribute `._cdata`"),
    ("private-of-module", PRE + "torch.nn.Linear(1, 1)._parameters", "Refused", 3,
     "private attribute `._parameters`"),
    ("setattr-dunder", PRE + "setattr(x, '__class__', torch.nn.Parameter)", "Refused", 3,
     "may be read, not changed"),
    ("delattr-class", PRE + "delattr(torch.Tensor, 'add')", "Refused", 3, "read-only"),
    ("import-by-name", PRE + "torch.set_default_tensor_type('this.x')", "Refused", 3,
     "not a tensor type"),
    ("caught-refusal", PRE + "try:\n    torch.os\nexcept Exception:\n    pass", "Refused", 4,
     "the module `os`"),
    ("huge-power", PRE + "10**10**10", "NumberLimit", 3, "more than a million bits"),
    ("huge-shift", PRE + "1 << 10**9", "NumberLimit", 3, "more than a million bits"),
    ("huge-pow-call", PRE + "pow(10, 10**10)", "NumberLimit", 3, "more than a million bits"),
    ("endless-loop", PRE + "while True: pass", "LoopLimit", 3, "loop iterations"),
    ("swallowed-limit", PRE + "while True:\n    try:\n        while True:\n            pass\n"
     "    except Exception:\n        pass", "LoopLimit", 6, "loop iterations"),
    ("huge-comprehension", PRE + "[i for i in range(10**8)]", "LoopLimit", 3,
     "loop iterations"),
    ("recursion", PRE + "def f(n):\n    return f(n + 1)\nf(0)", "RecursionError", 4,
     "keeps calling itself"),
]

# Names the rewrite introduces: a program can neither call nor replace them. (id, code, line)
RESERVED = [
    ("assign", "print('ran')\n__ae_tick__ = None", 2),
    ("def", "print('ran')\ndef __ae_tick__():\n    pass", 2),
    ("argument", "print('ran')\nf = lambda __ae_iter__: 0", 2),
    ("loop-target", "print('ran')\nfor __ae_attr__ in range(3):\n    pass", 2),
    ("import-as", "print('ran')\nimport torch as __ae_import__", 2),
    ("except-as", "print('ran')\ntry:\n    pass\nexcept RuntimeError as __ae_x__:\n    pass", 4),
    ("keyword", "print('ran')\nprint(1, __ae_settable__=2)", 2),
]


def _params(table: list[tuple[str, str, str, int | None, str]]) -> list[object]:
    return [pytest.param(*row[1:], id=row[0]) for row in table]


@pytest.mark.parametrize(("code", "kind", "line", "reason"), _params(STATIC + RUNTIME))
def test_refused(code: str, kind: str, line: int | None, reason: str) -> None:
    trace = run(code)
    assert trace.ok is False
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == (kind, line), trace.error
    assert reason in trace.error.message


@pytest.mark.parametrize(("code", "kind", "line", "reason"), _params(STATIC))
def test_refused_before_running(code: str, kind: str, line: int | None, reason: str) -> None:
    expected = SyntaxError if kind == "SyntaxError" else Refused
    with pytest.raises(expected) as caught:
        sandbox.prepare(code)
    assert caught.value.lineno == line if kind == "SyntaxError" else caught.value.line == line
    # And nothing of the program ran: the harmless first lines left no variables behind.
    assert run(code).steps == []


@pytest.mark.parametrize(("code", "kind", "line", "reason"), _params(RUNTIME))
def test_passes_the_static_check(code: str, kind: str, line: int, reason: str) -> None:
    sandbox.prepare(code)  # the runtime guards are what stop these
    steps = run(code).steps
    statements = [step.line for step in steps if not step.inner]
    assert statements[:2] == [1, 2]  # the lines before the bad one ran
    assert all(n < line for n in statements)
    assert all(step.line == line for step in steps if step.stopped)  # the state there


@pytest.mark.parametrize(("code", "line"), [pytest.param(*row[1:], id=row[0]) for row in RESERVED])
def test_guards_cannot_be_replaced(code: str, line: int) -> None:
    trace = run(code)
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == ("Refused", line)
    assert "reserved by the explorer" in trace.error.message
    assert trace.stdout == "" and trace.steps == []


def test_refusal_messages_are_readable() -> None:
    trace = run(PRE + "torch.os.system('id')")
    assert trace.error is not None
    assert trace.error.message == ("`.os` leads to the module `os`, which is outside the "
                                      "sandbox")
    error = run(PRE + "import os").error
    assert error is not None and "available: functools, math, numpy" in error.message


def test_a_swallowed_limit_is_raised_again() -> None:
    # `except Exception` cannot catch a limit (a BaseException), but should a library turn it
    # into an ordinary error, the guards remember it: every later turn and `check` raise again.
    guards = Guards(Limits(loop_iterations=3), Output(100))
    for _ in range(3):
        guards.tick()
    for _ in range(2):
        with pytest.raises(LoopLimit):
            guards.tick()
    with pytest.raises(LoopLimit):
        guards.check()


def test_the_rewrite_routes_loops_through_the_guards() -> None:
    tree = sandbox.prepare("for i in range(3):\n    pass\nwhile False:\n    pass\n").tree
    calls = {node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert "__ae_tick__" in calls
    first = [loop.body[0] for loop in tree.body]
    assert all(ast.unparse(stmt) == "__ae_tick__()" for stmt in first)


# --- how a program is read ---------------------------------------------------------------------


def test_full_width_punctuation_is_read_as_ascii() -> None:
    trace = ok("x = torch.rand（5,3)\n")
    assert trace.variables["x"].shape == [5, 3]
    assert any("Full-width" in note for note in english(trace.notes))


def test_ascii_program_has_no_notes() -> None:
    assert ok("x = torch.rand(5, 3)\n").notes == []


def test_syntax_error_reports_its_line() -> None:
    trace = run("a = 1\nb = 2\nc = a +* b\n")
    assert trace.ok is False and trace.error is not None
    assert (trace.error.type, trace.error.line) == ("SyntaxError", 3)
    assert trace.error.message == "invalid syntax"


# --- library code that imports or runs code by name ---------------------------------------------

BY_NAME = "imports modules or runs code by a name it is given"

# numpy's helpers that import whatever module a program names, however they are reached.
IMPORTERS = [
    ("np.info", "np.info('x', toplevel='os')", "`.info` " + BY_NAME),
    ("add_newdoc", "np.lib.add_newdoc('os', 'system', 'doc')", "`.add_newdoc` " + BY_NAME),
    ("from-import", "from numpy import info", "`.info` " + BY_NAME),
    ("getattr", "getattr(np, 'info')('x', toplevel='os')", "`.info` " + BY_NAME),
    ("format-field", "'{0.info}'.format(np)", "`.info` " + BY_NAME),
]


@pytest.mark.parametrize(("code", "reason"), [pytest.param(*row[1:], id=row[0])
                                              for row in IMPORTERS])
def test_numpy_importers_are_refused(code: str, reason: str) -> None:
    sandbox.prepare(code)  # what their code does refuses them, not their names
    trace = run(code)
    assert trace.error is not None and trace.error.type == "Refused", trace.error
    assert reason in trace.error.message


def _load(name: str) -> Any:
    return importlib.import_module(name)


def _exec_file(path: str) -> None:
    spec = importlib.util.spec_from_file_location("torch.anything", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # type: ignore[union-attr]


def fetch(name: str) -> Any:
    """A library helper that imports by name through a private helper."""
    return _load(name)


def direct(name: str) -> Any:
    return __import__(name)


def runs_file(path: str) -> None:
    _exec_file(path)


@functools.wraps(direct)
def wrapped(*args: Any) -> Any:
    return direct(*args)


def runs_text(text: str) -> Any:
    return eval(text)


def fixed() -> Any:
    return importlib.import_module("math")  # a constant name: the library chooses it


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any], str]:
    """Put a function into torch.nn.functional, as a library of tomorrow might ship it."""
    def plant(function: Any) -> str:
        monkeypatch.setattr(function, "__module__", "torch.nn.functional")
        monkeypatch.setattr(torch.nn.functional, "helper", function, raising=False)
        return "torch.nn.functional.helper"
    return plant


@pytest.mark.parametrize("helper", [fetch, direct, runs_file, wrapped, runs_text],
                         ids=["private-helper", "direct", "runs-file", "wrapped", "runs-text"])
def test_any_library_importer_is_refused_by_what_it_does(
        helper: Any, planted: Callable[[Any], str]) -> None:
    trace = run(f"{planted(helper)}('os')")
    assert trace.error is not None, trace.stdout
    assert trace.error.message == f"`.helper` {BY_NAME}, which this sandbox does not allow"


def test_a_library_import_of_a_fixed_module_is_fine(planted: Callable[[Any], str]) -> None:
    assert ok(f"print({planted(fixed)}().sqrt(4.0))").stdout == "2.0\n"


# --- what the program shows: no path of the server's ----------------------------------------


def test_a_module_is_shown_by_its_name() -> None:
    trace = ok("import torch.nn as nn\nprint(torch)\nprint('%r' % torch.nn, '%s' % np)\n"
               "print(repr(nn.functional), [math], f'{np.linalg!r}', '{}'.format(np.fft))\n"
               "print(np.char.mod(np.array(['%r']), torch))\n")
    assert trace.stdout == (
        "<module 'torch'>\n<module 'torch.nn'> <module 'numpy'>\n<module "
        "'torch.nn.functional'> [<module 'math'>] <module 'numpy.linalg'> <module 'numpy.fft'>"
        "\n[\"<module 'torch'>\"]\n")


@pytest.fixture
def anomaly() -> Iterator[None]:
    """Anomaly mode is a process-wide switch: leave it as it was."""
    enabled = torch.is_anomaly_enabled()
    yield
    torch.autograd.set_detect_anomaly(enabled)


def _files(stack: str) -> list[str]:
    return [line.split('"')[1] for line in stack.splitlines() if line.startswith('  File "')]


def test_anomaly_mode_keeps_the_programs_stack_not_the_servers(anomaly: None) -> None:
    trace = ok("torch.autograd.set_detect_anomaly(True)\nlin = torch.nn.Linear(1, 1)\n"
               "def f(x):\n    return lin(x)\ny = f(torch.ones(1))\n"
               "print(''.join(y.grad_fn.metadata['traceback_']))\n")
    files = _files(trace.stdout)
    assert files[:2] == ["<program>", "<program>"]  # line 5, then f on line 4
    assert files[2:] and all(f.startswith("torch/nn/modules/") for f in files[2:]), files
    assert '"<program>", line 5, in <module>' in trace.stdout
    assert '"<program>", line 4, in f' in trace.stdout
    for place in (sys.prefix, os.path.dirname(guards.__file__)):
        assert place not in trace.to_json()


def test_where_python_and_the_app_live_is_read_by_a_run_and_named_in_no_answer() -> None:
    readable = confine.readable_paths()
    assert places.PACKAGE in readable and not places.HOLDERS & set(readable)  # not the checkout
    assert all(p in readable for p in {os.path.realpath(p) for p in places.PYTHON})
    assert {os.path.join(p, "").encode() for p in places.PYTHON | places.HOLDERS} == set(
        wire.INSTALLED)
    answer = wire.message({"stdout": wire.encode(f"{places.PACKAGE}/trace/wire.py {sys.prefix}/x")})
    assert places.PACKAGE.encode() not in answer and sys.prefix.encode() not in answer


def test_an_anomaly_warning_names_the_program_line(anomaly: None) -> None:
    trace = run("x = torch.zeros(1, requires_grad=True)\n"
                "torch.autograd.set_detect_anomaly(True)\ny = (x / x).sum()\ny.backward()\n")
    assert trace.error is not None and "returned nan values" in trace.error.message
    stack = next(w for w in trace.warnings if "Traceback of forward call" in w)
    assert _files(stack) == ["<program>"]
    assert '"<program>", line 3, in <module>' in stack


# --- what learners write runs as in plain PyTorch ----------------------------------------------

LEARNER = {
    "main-name": "print(__name__)\nif __name__ == '__main__':\n    print('main')\n",
    "clip-grad-value": "w = torch.ones(3, requires_grad=True)\n"
                       "(w * torch.tensor([1.0, -5.0, 10.0])).sum().backward()\n"
                       "torch.nn.utils.clip_grad_value_([w], 2.0)\nprint(w.grad)\n"
                       "v = torch.nn.utils.parameters_to_vector([w])\n"
                       "torch.nn.utils.vector_to_parameters(v * 2, [w])\nprint(w)\n",
    "training-loop": "from torch.utils.data import DataLoader, TensorDataset\n"
                     "torch.manual_seed(0)\nxs = torch.linspace(-1, 1, 8).unsqueeze(1)\n"
                     "loader = DataLoader(TensorDataset(xs, 3 * xs + 1), batch_size=4, "
                     "shuffle=True)\nmodel = torch.nn.Linear(1, 1)\n"
                     "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                     "for epoch in range(3):\n    for xb, yb in loader:\n"
                     "        opt.zero_grad()\n"
                     "        loss = torch.nn.functional.mse_loss(model(xb), yb)\n"
                     "        loss.backward()\n"
                     "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
                     "        opt.step()\n    print(epoch, round(loss.item(), 4))\n"
                     "xb, yb = next(iter(loader))\nprint(xb.shape, type(loader).__name__)\n",
    "own-attributes": "class Box:\n    def __init__(self):\n        self.info = 'kept'\n"
                      "        self.test = 1\nb = Box()\n"
                      "print(b.info, b.test, hasattr(b, 'info'))\n",
    "getattr-format": "x = torch.ones(2)\nprint(getattr('{0.shape} {0.dtype}', 'format')(x))\n",
    "generator-send": "def running():\n    total = 0\n    while True:\n"
                      "        total += yield total\ng = running()\nnext(g)\n"
                      "print(g.send(2), g.send(3))\n",
    "cudnn-flags": "torch.backends.cudnn.deterministic = True\n"
                   "torch.backends.cudnn.benchmark = False\n"
                   "print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)\n",
    "class-names": "class Net(torch.nn.Module):\n    pass\n"
                   "print(Net().__class__.__name__, torch.ones(1).__class__.__name__)\n",
    "setattr-delattr": "import torch.autograd.forward_ad as fwAD\nfrom torch import nn\n"
                       "torch.manual_seed(0)\nmodel = nn.Linear(3, 2)\n"
                       "params = dict(model.named_parameters())\n"
                       "with fwAD.dual_level():\n    for name, p in params.items():\n"
                       "        delattr(model, name)\n"
                       "        setattr(model, name, fwAD.make_dual(p, torch.ones_like(p)))\n"
                       "    jvp = fwAD.unpack_dual(model(torch.ones(1, 3))).tangent\n"
                       "print(jvp, hasattr(model, 'weight'))\n",
    "sliding-window": "from numpy.lib.stride_tricks import sliding_window_view\n"
                      "print(sliding_window_view(np.arange(4), 2).sum(axis=1))\n",
}


def plain(code: str) -> str:
    """What `code` prints under plain `exec`, seeded as a run is."""
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<program>", "exec"),  # noqa: S102 - the reference run
             {"__name__": "__main__", "torch": torch, "np": np, "math": math})
    return out.getvalue()


@pytest.mark.parametrize("key", LEARNER)
def test_a_learners_program_prints_what_plain_pytorch_prints(key: str) -> None:
    assert ok(LEARNER[key]).stdout == plain(LEARNER[key])
