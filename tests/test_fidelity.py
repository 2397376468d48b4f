"""Observing changes nothing: a program prints, computes and fails in the app exactly as in
plain PyTorch (same seed, same thread count), whatever hooks it registers. Each case here once
behaved differently; what the recorder leaves out, the Trace says."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from textwrap import dedent

import pytest

from explorer.pool.worker import default_pool
from explorer.safety.sandbox import FILENAME
from explorer.trace import Trace
from explorer.trace.graph_view import view
from explorer.trace.notes import english
from explorer.views.animation import figure
from explorer.views.render import positions, svg
from tests.plain import PlainRun, run_plain, without_addresses

EVERY_HOOK = (Path(__file__).parent / "learner_programs" / "hooks" / "every_kind_of_hook.py")
CASES = {
    "tensor-hook-and-retain-grad": (  # the Jacobian panel once ran one backward per row
        "import torch\nx = torch.tensor([2.0, 0.4, 0.06], requires_grad=True)\ny = x * x\n"
        "y.register_hook(lambda g: print('hook saw', g))\ny.retain_grad()\n"
        "v = torch.tensor([4.0, 0.8, 0.12])\ny.backward(v)\n"
        "print(y.grad, x.grad)\n"),
    "saved-tensor-hooks": (  # drawing the graph once unpacked every saved tensor
        "import torch\n\ndef pack_hook(x):\n    print('Packing', x)\n    return x\n\n"
        "def unpack_hook(x):\n    print('Unpacking', x)\n    return x\n\n"
        "a = torch.ones(5, requires_grad=True)\nb = torch.ones(5, requires_grad=True) * 2\n"
        "with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):\n"
        "    y = a * b\ny.sum().backward()\nprint(a.grad)\n"),
    "inference-mode": (  # reading `_version` of an inference tensor once killed the run
        "import torch\nwith torch.inference_mode():\n    x = torch.ones(3)\n    y = x * 2\n"
        "print(x.is_inference(), y)\nx.add_(1)\n"),
    "post-accumulate-hook-clears-grad": (  # once crashed the recorder
        "import torch\np = torch.ones(2, requires_grad=True)\n\ndef step(param):\n"
        "    print('step with', param.grad)\n    param.grad = None\n\n"
        "p.register_post_accumulate_grad_hook(step)\n(p * 3).sum().backward()\nprint(p.grad)\n"),
    "grad-with-positional-vector": (  # `args[1]` (the inputs) was once taken for v
        "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * x\n"
        "v = torch.tensor([1.0, 2.0, 3.0])\n(g,) = torch.autograd.grad(y, x, v)\nprint(g)\n"),
    "hessian-vector-product": (
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\n"
        "(g,) = torch.autograd.grad(y, x, create_graph=True)\nv = torch.tensor([1.0, 0.5])\n"
        "(hv,) = torch.autograd.grad(g, x, grad_outputs=v)\nprint(g, hv)\n"),
    "wrong-shape-gradient": (  # PyTorch's own error, not the panel's matmul error
        "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\n"
        "y.backward(torch.ones(2))\n"),
    "batched-grads": (  # a vmapped gradient must not be detached in a hook
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\n"
        "(jac,) = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)\nprint(jac)\n"),
    "node-metadata-untouched": (  # node ids were once kept in grad_fn.metadata
        "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\n"
        "print(y.grad_fn.metadata, z.grad_fn.metadata)\nz.backward()\n"
        "print(z.grad_fn.next_functions[0][0].metadata)\n"),
    "rng-untouched-by-recording": (
        "import random\nimport numpy as np\nimport torch\n"
        "x = torch.randn(4, requires_grad=True)\n(x.exp() * torch.rand(4)).sum().backward()\n"
        "print(torch.rand(2), np.random.rand(2), random.random())\n"
        "print(torch.get_rng_state().sum(), np.random.get_state()[2], random.getstate()[1][:3])\n"),
    "own-repr-not-run": (  # describing a variable once ran the program's `__repr__`
        "class Point:\n    def __init__(self, x):\n        self.x = x\n\n"
        "    def __repr__(self):\n        print('repr ran')\n        return f'Point({self.x})'\n\n"
        "p = Point(3)\npoints = [p, p]\nprint(points)\n"),
    "every-kind-of-hook": EVERY_HOOK.read_text(),
    # Describing a value once ran the program's code through a library's: a module's repr
    # (its parts' extra_repr, _get_name), a container's repr (its items' __repr__), reprlib's
    # method chosen by a class's name, a walk of modules (named_modules, __hash__), a length
    # hint (__len__), a saved attribute's str; a function's locals once outlived it; a lazy
    # module's parameter, not yet made, once failed the step (and the program).
    **{f"no-program-code-{name}": dedent(code) for name, code in {
        "module-repr": """
            import torch.nn as nn
            class Inner(nn.Module):
                def extra_repr(self):
                    print("extra_repr ran")
                    return "inner"
            class Net(nn.Module):
                def _get_name(self):
                    print("_get_name ran")
                    return "Net"
            net, outer = nn.Sequential(Inner()), Net()
            print("end")
            """,
        "container-repr": """
            import functools
            import numpy as np
            class Obj:
                def __repr__(self):
                    print("repr ran")
                    return "Obj"
            p = functools.partial(print, Obj())
            v = {"a": Obj()}.values()
            err, cut = ValueError(Obj()), slice(Obj())
            arrays = [np.array([Obj()], dtype=object)]
            print("end")
            """,
        "class-named-list": """
            class list:
                def __len__(self):
                    print("len ran")
                    return 1
                def __iter__(self):
                    print("iter ran")
                    return iter([1])
            x = list()
            print("end")
            """,
        "module-walk": """
            import torch, torch.nn as nn
            class Child(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = nn.Parameter(torch.ones(2))
                def named_modules(self):
                    print("named_modules ran")
                    return [("child", self)]
                def __hash__(self):
                    print("hash ran")
                    return 7
            class Eq(nn.Module):
                def __eq__(self, other):
                    return self is other
            net = nn.Sequential(Child(), Eq())
            (net[0].w * 2).sum().backward()
            print("end")
            """,
        "length-hint": """
            class Data:
                def __len__(self):
                    print("len ran")
                    return 2
                def __getitem__(self, i):
                    if i >= 2:
                        raise IndexError(i)
                    return i
            for i, x in enumerate(Data()):
                pass
            for x in reversed(Data()):
                pass
            print("end")
            """,
        "saved-attribute-str": """
            import torch
            class Obj:
                def __str__(self):
                    print("str ran")
                    return "Obj"
            class Twice(torch.autograd.Function):
                @staticmethod
                def forward(ctx, a):
                    ctx._saved_thing = Obj()
                    return a * 2
                @staticmethod
                def backward(ctx, g):
                    return g * 2
            x = torch.ones(2, requires_grad=True)
            y = Twice.apply(x)
            print("end")
            """,
        "lazy-module": """
            import torch
            w = torch.nn.LazyLinear(3).weight
            net = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU())
            print(net(torch.ones(2, 3)).shape, w.requires_grad)
            """,
        "locals-let-go": """
            def opened(i):
                try:
                    yield i
                finally:
                    print("closed", i)
            def f():
                it = opened(1)
                next(it)
                for k in range(12):
                    if k == 10:
                        it = None
                print("loop done")
                try:
                    raise ValueError("x")
                except ValueError as e:
                    it = opened(2)
                    next(it)
                return
            f()
            print("after f")
            """}.items()},
}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[PlainRun, Trace]]:
    """Each case in plain PyTorch (one subprocess) and in the app (the worker pool)."""
    pool = default_pool()
    plain = run_plain(list(CASES.values()), pool.threads, filename=FILENAME)
    with ThreadPoolExecutor(pool.size) as runner:
        traces = list(runner.map(pool.run, CASES.values()))
    return dict(zip(CASES, zip(plain, traces, strict=True), strict=True))


@pytest.mark.parametrize("key", CASES)
def test_recording_changes_nothing_the_program_can_see(
        key: str, runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    plain, trace = runs[key]
    assert plain.result is not None, plain.stderr
    assert without_addresses(trace.stdout) == without_addresses(plain.stdout)
    error = trace.error and (trace.error.type, trace.error.message, trace.error.line)
    expected = plain.result
    assert error == (None if expected["ok"] else (
        expected["type"], expected["message"], expected["line"]))


def test_a_hook_of_every_kind_prints_the_same_with_and_without_recording(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    plain, trace = runs["every-kind-of-hook"]
    kinds = ("module forward pre", "module forward", "pack", "unpack", "tensor hook",
             "node pre", "node post", "module backward pre", "module backward",
             "leaf tensor hook", "post accumulate")
    assert all(f"{kind} " in plain.stdout for kind in kinds)
    assert trace.ok and trace.stdout == plain.stdout  # no address printed: equal as they are
    assert len(trace.backward) == 1 and trace.backward[0].steps


def test_no_backward_pass_is_added_and_vjp_is_what_the_engine_gave(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    _, trace = runs["tensor-hook-and-retain-grad"]
    (call,) = trace.backward  # one call: nothing ran backward for the explorer
    assert call.vector == pytest.approx([4.0, 0.8, 0.12])
    assert call.jacobian is None and "one more backward pass" in call.jacobian_reason
    (leaf,) = call.leaf_grads
    assert leaf.grad.values == pytest.approx(trace.variables["x"].grad)
    delivered = [s for s in call.steps if s.name == "AccumulateGrad"]
    assert delivered[0].grad_outputs[0].values == pytest.approx([16.0, 0.64, 0.0144])


@pytest.mark.parametrize(("key", "vector"), [("grad-with-positional-vector", [1.0, 2.0, 3.0]),
                                             ("hessian-vector-product", [1.0, 0.5])])
def test_v_is_the_vector_the_program_passed(
        key: str, vector: list[float], runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    _, trace = runs[key]
    assert trace.ok, trace.error
    assert trace.backward[-1].vector == pytest.approx(vector)


def test_saved_tensors_packed_by_hooks_are_described_unread(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    _, trace = runs["saved-tensor-hooks"]
    packed = {(n.name, tuple(sorted(n.saved))) for g in trace.graphs for n in g.nodes
              if any("unpack hook" in v for v in (n.saved or {}).values())}
    assert packed == {("MulBackward0", ("other", "self"))}
    assert any("saved-tensor hooks" in note for note in english(trace.notes))
    _, plain_graph = runs["inference-mode"]  # no hooks: nothing said
    assert not any("saved-tensor hooks" in note for note in english(plain_graph.notes))


def test_what_the_recorder_leaves_out_it_says(runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    _, batched = runs["batched-grads"]
    assert batched.backward == [] and any("is_grads_batched" in n for n in english(batched.notes))
    _, inference = runs["inference-mode"]
    assert inference.steps[1].variables["x"].version is None  # it keeps no version
    _, own = runs["own-repr-not-run"]
    assert own.variables["points"].values == "[<Point object>, <Point object>]"


def test_a_gradient_a_hook_cleared_is_shown_as_none(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    _, trace = runs["post-accumulate-hook-clears-grad"]
    (call,) = trace.backward
    assert [g.grad for g in call.leaf_grads] == [None]
    assert trace.losses[0].grad_norms == {}
    shown = view(trace.graphs[call.graph], call.roots, show_saved=False, show_attrs=False)
    fig = figure(call, positions(shown.dot), svg(shown.dot), shown.groups)
    assert ".grad = None" in str(fig.to_plotly_json())

