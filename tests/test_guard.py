"""The Python guard teaches: it stops what issue-sized holes were found with (module-by-name
importers, file readers and writers, the format walk, install paths), and lets through what
learners' programs from PyTorch's own tutorials use, with plain PyTorch's output."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.pool.worker import WorkerPool
from explorer.record.execute import execute

LEGIT = {
    "main-guard": "def main():\n    print('main ran')\n\nif __name__ == '__main__':\n    main()\n",
    "torch.func": "from torch.func import grad, vmap\nx = torch.tensor([0.0, 1.0])\n"
                  "print(vmap(grad(torch.sin))(x))\n",
    "forward-ad": "import torch.autograd.forward_ad as fwAD\nx = torch.tensor([1.0, 2.0])\n"
                  "with fwAD.dual_level():\n    d = fwAD.make_dual(x, torch.ones(2))\n"
                  "    print(fwAD.unpack_dual(d * d).tangent)\n",
    "once-differentiable": "from torch.autograd.function import once_differentiable\n"
                           "print(callable(once_differentiable))\n",
    "global": "count = 0\ndef bump():\n    global count\n    count += 1\nbump()\nbump()\n"
              "print(count)\n",
    "nonlocal": "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n"
                "        return n\n    return inc\nc = counter()\nc()\nprint(c())\n",
    "builtins": "x = torch.ones(2, requires_grad=True)\nprint('grad' in dir(x), hasattr(x, 'grad'),"
                " getattr(x, 'shape'), getattr(x, 'nothing', 'default'))\n"
                "it = iter([3, 4])\nprint(next(it), next(it))\n",
    "clip-grad": "w = torch.ones(3, requires_grad=True)\n(w * 10).sum().backward()\n"
                 "print(torch.nn.utils.clip_grad_norm_([w], 1.0))\nprint(w.grad)\n"
                 "print(torch.nn.utils.parameters_to_vector([w]))\n",
    "dataloader": "from torch.utils.data import DataLoader, TensorDataset\n"
                  "ds = TensorDataset(torch.arange(6.0).view(3, 2), torch.arange(3))\n"
                  "for xb, yb in DataLoader(ds, batch_size=2):\n    print(xb.shape, yb)\n",
    "cudnn-flag": "torch.backends.cudnn.deterministic = True\n"
                  "print(torch.backends.cudnn.deterministic)\n",
    "class-name": "x = torch.ones(1)\nprint(x.__class__.__name__)\n",
    "plain-class": "class Counter:\n    def __init__(self):\n        self.n = 0\n"
                   "    def __call__(self):\n        self.n += 1\n        return self.n\n"
                   "c = Counter()\nc()\nprint(c())\n",
    "dataset-class": "class Squares(torch.utils.data.Dataset):\n    def __len__(self):\n"
                     "        return 3\n    def __getitem__(self, i):\n        if i >= 3:\n"
                     "            raise IndexError(i)\n        return torch.tensor(float(i * i))\n"
                     "print([float(v) for v in Squares()], len(Squares()))\n",
    "generator": "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n"
                 "            yield i\nprint(list(evens(7)))\n",
    "assert-close": "torch.testing.assert_close(torch.ones(2), torch.ones(2) + 1e-9)\n"
                    "print('close')\n",
    "sliding-window": "print(np.lib.stride_tricks.sliding_window_view(np.arange(5), 3))\n",
    "keywords": "def f(a, **kw):\n    return a, sorted(kw)\nopts = {'lr': 0.1, 'a': 2}\n"
                "print(f(**opts), dict(**{'b': 1}), torch.ones(2).to(**{'dtype': torch.int64}))\n",
}


def plain(code: str) -> str:
    """What plain `exec` prints, as a tutorial's reader would see it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<program>", "exec"), {"__name__": "__main__", "torch": torch,
                                                  "np": np})
    return out.getvalue()


@pytest.mark.parametrize("key", LEGIT)
def test_a_learners_program_runs_as_in_plain_pytorch(key: str) -> None:
    trace = execute(LEGIT[key])
    assert trace.ok, trace.error
    assert trace.stdout == plain(LEGIT[key])


CLOSED = {
    "np.test": ("np.test('os')", "runs test suites"),
    "np.linalg.test": ("np.linalg.test()", "runs test suites"),
    "np.info": ("np.info('x', toplevel='os')", "`.info`"),
    "add_newdoc": ("np.lib.add_newdoc('numpy', 'x', 'doc')", "`.add_newdoc`"),
    "distutils": ("np.distutils", "`.distutils`"),
    "numpy.testing": ("np.testing.assert_equal(1, 1)", "numpy.testing"),
    "file-reader": ("torch.PyTorchFileReader('x.pt')", "`.PyTorchFileReader`"),
    "file-writer": ("torch.PyTorchFileWriter('made.pt')", "`.PyTorchFileWriter`"),
    "as-strided": ("np.lib.stride_tricks.as_strided(np.ones(1), (10**6,), (8,))",
                   "`.as_strided`"),
    "super-format": ("print(super(np.str_, np.str_('{0.os.environ}')).format(torch))",
                     "module `os`"),
    "getattr-dunder": ("getattr(torch, '__builtins__')", "private attribute"),
    "getattr-module": ("getattr(torch, 'os')", "module `os`"),
    "class-on-library": ("class T(np.ndarray):\n    pass", "must subclass"),
    # Raw memory through an object that claims an array interface, made by `**` keys that
    # no written keyword may have, from the type of the `time` stand-in (a namespace type).
    "array-interface": ("import time\nNS = type(time)\n"
                        "face = {'data': (id(print), False), 'shape': (4,), 'typestr': '<u8',"
                        " 'version': 3}\nprint(np.asarray(NS(**{'__array_interface__': face})))",
                        "dunder names such as `__array_interface__`"),
    "keywords-dunder": ("def f(**kw):\n    return kw\nf(**{'__class__': 1})",
                        "dunder names such as `__class__`"),
    "keywords-reserved": ("print(dict(**{'__ae_attr__': 1}))", "reserved by the explorer"),
    # The same through a module's keys, which become its attributes.
    "parameter-dict-key": ("pd = torch.nn.ParameterDict()\npd['__array_interface__'] = {}\n"
                           "np.asarray(pd)", "may not be a dunder name"),
    "parameter-dict-init": ("torch.nn.ParameterDict({'__array_interface__': {}})",
                            "may not be a dunder name"),
    "module-dict-update": ("torch.nn.ModuleDict().update({'__array__': torch.nn.ReLU()})",
                           "may not be a dunder name"),
    # `super().__setattr__` (fast.ai's DummyModule) sets what `setattr` may set, no more.
    "super-setattr-dunder": ("class A:\n    def put(self, k, v):\n"
                             "        super().__setattr__(k, v)\nA().put('__class__', int)",
                             "`.__class__` may be read, not changed"),
    "super-setattr-library": ("class T(torch.nn.Module):\n    def put(self, k, v):\n"
                              "        super().__setattr__(k, v)\nT().put('_parameters', {})",
                              "private attribute `._parameters` of a library"),
    "super-setattr-other": ("class A:\n    pass\nsuper(A, A()).__setattr__('__dict__', {})",
                            "`.__dict__` may be read, not changed"),
    "super-setattr-getattr": ("class A:\n    def f(self):\n"
                              "        return getattr(super(), '__setattr__')\nA().f()",
                              "`.__setattr__`"),
}


@pytest.mark.parametrize("key", CLOSED)
def test_a_hole_found_from_outside_is_closed_with_a_clear_message(
        key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXPLORER_CANARY", "canary-8d1e")
    code, reason = CLOSED[key]
    trace = execute(code)
    assert trace.error is not None and trace.error.type == "Refused", trace.error
    assert reason in trace.error.message
    assert "canary-8d1e" not in trace.to_json() and os.listdir(tmp_path) == []


def test_the_time_stand_in_makes_nothing_but_times() -> None:
    trace = execute("import time\nt = time.perf_counter()\nprint(type(t).__name__, time)\n"
                    "type(time)(x=1)\n")
    assert trace.stdout == "float <module 'time' (its clocks and sleep)>\n"
    assert trace.error is not None and trace.error.type == "TypeError"


def test_a_class_of_the_programs_may_set_its_attributes_through_its_parent() -> None:
    trace = execute("class Seen:\n    def __init__(self):\n        self.names = []\n"
                    "    def __setattr__(self, k, v):\n        if k != 'names':\n"
                    "            self.names.append(k)\n        super().__setattr__(k, v)\n"
                    "s = Seen()\ns.w = torch.ones(2)\ns._hidden = 1\nprint(s.names, s.w.sum())\n"
                    "class M(torch.nn.Module):\n    def __setattr__(self, k, v):\n"
                    "        super().__setattr__(k, v)\nm = M()\nm.lin = torch.nn.Linear(2, 1)\n"
                    "print([n for n, _ in m.named_parameters()])\n")
    assert trace.ok, trace.error
    assert trace.stdout == "['w', '_hidden'] tensor(2.)\n['lin.weight', 'lin.bias']\n"


def test_the_functools_stand_in_gives_reduce_and_partial_and_nothing_else() -> None:
    trace = execute("from functools import reduce, partial\nimport functools\n"
                    "print(reduce(lambda a, b: a * b, [1, 2, 3, 4]), partial(pow, 2)(10))\n"
                    "print(functools.reduce is reduce, functools)\n"
                    "functools.update_wrapper\n")
    assert trace.stdout == ("24 1024\nTrue <module 'functools' (reduce and partial)>\n")
    assert trace.error is not None and trace.error.type == "AttributeError", trace.error
    assert trace.error.line == 5
    for reach, kind in (("from functools import wraps", "AttributeError"),
                        ("type(functools)(x=1)", "TypeError"),  # makes no namespace
                        ("torch.nn.modules.module.functools.wraps", "Refused")):  # torch's
        error = execute(f"import functools\n{reach}\n").error
        assert error is not None and error.type == kind, (reach, error)


def test_no_install_path_reaches_the_learner() -> None:
    pool = WorkerPool(size=1, kept_bytes=0)
    try:
        trace = pool.run("print(torch)\nprint('%r' % torch.nn)\n"
                         "torch.autograd.set_detect_anomaly(True)\n"
                         "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                         "print(y.grad_fn.metadata)\n")
    finally:
        pool.close()
    assert trace.ok, trace.error
    assert trace.stdout.startswith("<module 'torch'>\n<module 'torch.nn'>\n")
    assert '"<program>", line 5, in <module>' in trace.stdout
    text = trace.to_json()
    for place in (torch.__file__, os.path.dirname(np.__file__), str(Path.cwd())):
        assert os.path.dirname(place) not in text
