"""The recorder's shortcuts (issue #40) say what the long ways said: binding a backward call's
arguments, the DOT text around a graph, a graph drawn again from remembered lines, the rounds
a line decides on alone, module calls beside the program's hooks and those that end in an
exception, and the tokens of modules."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
from graphviz import Digraph
from torchviz.dot import resize_graph

from explorer.record.backward import _Binder
from explorer.record.execute import execute
from explorer.record.graph import Ids, _source, record
from explorer.record.modules import Modules
from explorer.trace.graph_view import NODE_ATTR

CALLS = [((1,), {}), ((1, 2), {}), ((1, 2, 3, 4), {"inputs": 5}), ((1,), {"inputs": 2}),
         ((), {"tensors": 1}), ((1,), {"create_graph": True, "retain_graph": False}),
         ((1,), {"inputs": 5, "grad_tensors": 2}), ((1, 2, 3, 4, 5, 6), {})]
BAD = [((), {}), ((1,), {"tensors": 2}), ((1,), {"nothing": 2}), ((1, 2, 3, 4, 5, 6, 7), {})]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_call_is_bound_as_inspect_binds_it(args: tuple[Any, ...],
                                             kwargs: dict[str, Any]) -> None:
    for function in (torch.autograd.backward, torch.autograd.grad):
        try:
            expected = inspect.signature(function).bind(*args, **kwargs).arguments
        except TypeError:
            with pytest.raises(TypeError):
                _Binder(function).bind(*args, **kwargs)
            continue
        got = _Binder(function).bind(*args, **kwargs).arguments
        assert list(got.items()) == list(expected.items())


@pytest.mark.parametrize(("args", "kwargs"), BAD)
def test_a_call_inspect_refuses_is_refused_with_its_error(args: tuple[Any, ...],
                                                          kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError) as expected:
        inspect.signature(torch.autograd.backward).bind(*args, **kwargs)
    with pytest.raises(TypeError) as got:
        _Binder(torch.autograd.backward).bind(*args, **kwargs)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("rows", [0, 1, 79, 80, 81, 500])
def test_the_dot_text_is_what_make_dots_digraph_writes(rows: int) -> None:
    body = [f"\tn{i} [label=x]\n" for i in range(rows)]
    dot = Digraph(node_attr=NODE_ATTR, graph_attr=dict(size="12,12"))
    dot.body.extend(body)
    resize_graph(dot)
    assert _source(body) == dot.source


def test_a_graph_drawn_again_is_the_same_graph() -> None:
    # The second drawing takes its DOT lines and labels from what the first remembered.
    x = torch.randn(3, 4, requires_grad=True)
    y = (x @ torch.randn(4, 2)).relu()
    z = torch.cat([y, y]).sum() * 2
    ids = Ids()
    first = record({"x": x, "y": y, "z": z}, ids, 1_000)
    again = record({"x": x, "y": y, "z": z}, ids, 1_000)
    assert first is not None and first.dot
    assert again == first
    z.backward()  # freed now: the labels lose their values, as torchviz's do
    freed = record({"x": x, "y": y, "z": z}, ids, 1_000)
    assert freed is not None and freed != first
    labels = {n.name: n.label for n in (*first.nodes, *freed.nodes) if n.kind == "backward"}
    assert labels["ReluBackward0"] == "ReluBackward0"  # the freed one, drawn last
    assert [n.label for n in first.nodes if n.name == "ReluBackward0"] == [
        "ReluBackward0\n" + "-" * 22 + "\nresult: [saved tensor]"]


def test_a_custom_functions_node_still_shows_what_its_context_saved() -> None:
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(t)
            ctx._saved_factor = (2, 3)  # an attribute of the program's, read as it always was
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
            return g * 2

    x = torch.ones(2, requires_grad=True)
    y = Scale.apply(x)
    graph = record({"x": x, "y": y}, Ids(), 1_000)
    assert graph is not None
    node = next(n for n in graph.nodes if n.name == "ScaleBackward")
    assert node.saved["factor"] == "(2, 3)"
    assert node.saved["saved_tensors[0]"] == "x: tensor(2,) float32"


def test_rounds_not_kept_are_passed_over_and_kept_ones_stepped() -> None:
    code = ("total = 0\nfor i in range(30):\n    total = total + i\n"
            "k = 0\nwhile k < 25:\n    k = k + 1\n")
    trace = execute(code)
    assert trace.ok, trace.error
    rounds = [(s.line, s.rounds[-1].round) for s in trace.steps if s.rounds]
    assert [r for line, r in rounds if line == 3] == [*range(1, 11), 20, 30]
    assert [r for line, r in rounds if line == 6] == [*range(1, 11), 20]


def test_a_module_call_an_exception_ended_keeps_the_nodes_it_made() -> None:
    code = ("class Inner(torch.nn.Module):\n    def forward(self, x):\n"
            "        self.made = x * 2\n        raise ValueError('stop')\n"
            "class Outer(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.inner = Inner()\n        self.quiet = torch.nn.Identity()\n"
            "    def forward(self, x):\n        try:\n            self.inner(x)\n"
            "        except ValueError:\n            pass\n"
            "        return self.quiet(self.inner.made) * 3\n"
            "net = Outer()\nx = torch.ones(2, requires_grad=True)\nout = net(x)\n"
            "again = net.inner.made + 1\n")
    trace = execute(code)
    assert trace.ok, trace.error
    graph = trace.graphs[trace.steps[-1].graph]
    made = sorted((n.name, str(n.module)) for n in graph.nodes if n.kind == "backward")
    assert made == [("AccumulateGrad", "None"), ("AddBackward0", "None"),  # after the calls
                    ("MulBackward0", "net"),  # x * 3, after the call that raised
                    ("MulBackward0", "net.inner")]  # x * 2, in the call that raised


HOOKED = [
    # forward adds a forward hook to its own module: PyTorch runs it from the next call on
    ("class Net(torch.nn.Module):\n    def forward(self, x):\n"
     "        if not getattr(self, 'hooked', False):\n            self.hooked = True\n"
     "            self.register_forward_hook(lambda m, i, o: o * 10)\n"
     "        return x + 1\n"
     "net = Net()\nprint(net(torch.ones(1)).tolist(), net(torch.ones(1)).tolist())\n"),
    # ... one always called, and the forward raises: it does not run
    ("class Net(torch.nn.Module):\n    def forward(self, x):\n"
     "        self.register_forward_hook(lambda m, i, o: print('always', o), always_call=True)\n"
     "        raise ValueError('no')\n"
     "net = Net()\ntry:\n    net(torch.ones(1))\n"
     "except ValueError as e:\n    print('caught', e)\n"),
    # a module's own hooks, with kwargs, one replacing the input and one the output
    ("lin = torch.nn.Linear(2, 1)\n"
     "lin.register_forward_pre_hook(lambda m, a, k: ((a[0] * 2,), k), with_kwargs=True)\n"
     "lin.register_forward_hook(lambda m, a, o: o + 1)\n"
     "print(lin(torch.ones(1, 2)).shape, torch.nn.ReLU()(torch.tensor([-1.0, 2.0])).tolist())\n"),
]


@pytest.mark.parametrize("code", HOOKED)
def test_module_calls_run_hooks_as_plain_pytorch_runs_them(
        code: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Global module hooks would differ: a hook a forward adds to its own module would run at
    # once, and one always called would run where the forward raised.
    exec(compile("import torch\n" + code, "<plain>", "exec"), {})  # noqa: S102
    plain = capsys.readouterr().out
    trace = execute(code)
    assert trace.ok, trace.error
    assert trace.stdout == plain


def test_module_calls_with_or_without_the_programs_hooks_name_the_nodes_they_made() -> None:
    code = ("model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh())\n"
            "out = model(torch.ones(1, 2)).sum()\n"
            "model[1].register_forward_hook(lambda m, i, o: None)\n"  # a hook of its own
            "again = model(torch.ones(1, 2)).sum()\n")
    trace = execute(code)
    assert trace.ok, trace.error
    graph = trace.graphs[trace.steps[-1].graph]
    made = sorted((n.name, str(n.module)) for n in graph.nodes if n.kind == "backward")
    assert made == sorted([("AddmmBackward0", "model.0"), ("TBackward0", "model.0"),
                           ("TanhBackward0", "model.1"), ("SumBackward0", "None")] * 2
                          + [("AccumulateGrad", "model.0")] * 2)


def test_a_module_at_the_address_of_one_gone_gets_a_token_no_other_has() -> None:
    modules = Modules()
    kept = [torch.nn.Linear(1, 1) for _ in range(3)]
    gone = torch.nn.Linear(1, 1)
    address = id(gone)
    tokens = [modules.token(m, new=True) for m in (*kept, gone)]
    del gone
    for _ in range(100):  # CPython mostly hands the address out again at once
        again = torch.nn.Linear(1, 1)
        if id(again) == address:
            break
    else:
        pytest.skip("no module was made at the address of the one gone")
    tokens.append(modules.token(again, new=True))
    tokens.append(modules.token(torch.nn.Linear(1, 1), new=True))
    assert len(set(tokens)) == len(tokens)
    assert [modules.token(m) for m in kept] == tokens[:3]


def test_a_loop_past_the_numbers_remembered_keeps_its_last_rounds_modules() -> None:
    modules = Modules(most=60)  # a long loop's numbers, in small
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    with modules.install():
        outs = [model(torch.ones(1, 2)).sum() for _ in range(100)]  # 5 numbers a round
    names = modules.names({"model": model})
    made = [names.of_node(fn) for fn in (outs[-1].grad_fn.next_functions[0][0],  # Addmm
                                         outs[-1].grad_fn)]  # Sum, outside the model
    assert made == ["model.2", None]
    assert len(modules._owner) <= 60  # the older half went, as often as the numbers outran it
    assert names.of_node(outs[0].grad_fn.next_functions[0][0]) is None  # the first round's
