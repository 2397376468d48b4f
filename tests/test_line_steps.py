"""Lines inside loops, blocks and the program's functions are steps of their own
(explorer/record/lines.py, explorer/record/execute.py). The hooks the rewrite puts in change
nothing the program can see: the same output, values, `.grad`, errors, RNG state and
`_version`s as plain PyTorch (same seed, same thread count) and as the app without them. The
steps say where each line ran: its loops and rounds, its calls, its locals. A hostile program
can neither reach the hooks nor make them break the run or the Trace.

"""

from __future__ import annotations

import ast
import gc
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest

import explorer.record.execute as execute_module
from explorer.pool.worker import WorkerPool
from explorer.record import lines as lines_module
from explorer.record.execute import execute
from explorer.record.lines import FORGET, Plan
from explorer.safety.limits import Limits, TimeLimit
from explorer.safety.sandbox import FILENAME
from explorer.trace import Trace
from explorer.trace.graph_view import default_root, named_outputs, node_lines
from explorer.trace.notes import english
from explorer.trace.schema import MAX_NESTING, Round
from explorer.trace.wire import trace_message
from explorer.views.graph_page import statement_added
from explorer.views.timeline import timeline
from tests.plain import PlainRun, run_plain, without_addresses

LIMITS = Limits(time_s=30)  # generous: fidelity is judged on values, not on speed
HEAD = "import random\nimport numpy as np\nimport torch\n"  # plain `exec` has no torch, np
# Printed at the end of every fidelity case: the RNG states the recorder must leave alone.
TAIL = ("print('rng', torch.rand(2), np.random.rand(2), random.random())\n"
        "print('rng state', torch.get_rng_state().sum().item(), np.random.get_state()[2])\n")


def run(code: str, **limits: Any) -> Trace:
    return execute(code, limits=Limits(**({"time_s": 30} | limits)))


@contextmanager
def unhooked() -> Iterator[None]:
    """Runs in which `plan` rewrites nothing: the app as it was before line steps."""
    with mock.patch.object(execute_module, "plan", lambda tree: Plan()):
        yield


def round_trips(trace: Trace) -> None:
    """What a worker sends of `trace` is taken by the server as it is (schema and caps)."""
    again = Trace.from_json(trace_message(trace))
    assert again.error is None or again.error.type != "BadResult", again.error
    assert again == trace
    assert Trace.from_json(trace.to_json()) == trace


def rounds(step: Any) -> list[tuple[int, str, int, int | None]]:
    return [(r.line, r.name, r.round, r.of) for r in step.rounds or []]


def inner(trace: Trace) -> list[Any]:
    """The steps of lines inside top-level statements (not the top-level steps)."""
    return [s for s in trace.steps if s.within is not None]


# --- 1. Pure observer: the same program gives the same everything, with and without hooks ---

CASES = {
    "nested-loops": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
acc = torch.zeros(2)
for i in range(3):
    for j in range(2):
        acc = acc + x * (i + j)
        if j == 1:
            acc.add_(1)
            noise = torch.randn(2)
    for k in [10, 20]:
        acc = acc * 1.0
loss = acc.sum()
loss.backward()
print(acc, x.grad, acc._version, x._version, noise)
""",
    "while-break-continue-else": """
n = 0
seen = []
while n < 12:
    n += 1
    if n % 3 == 0:
        continue
    if n == 11:
        break
    seen.append(n)
else:
    seen.append(-1)
m = 0
while m < 3:
    m += 1
else:
    seen.append(100)
for i in range(3):
    if i == 5:
        break
else:
    seen.append('for-else')
print(seen, n, m)
""",
    "try-except-finally-in-loops": """
out = []
for i in range(5):
    try:
        if i % 2:
            raise ValueError(f'odd {i}')
        out.append(i)
    except ValueError as e:
        out.append(str(e))
    finally:
        out.append('f')
w = torch.ones(2, requires_grad=True)
for k in range(3):
    try:
        y = (w * (k + 1)).sum()
        y.backward()
        if k == 1:
            z = torch.ones(3) + torch.ones(2)
    except RuntimeError as e:
        out.append('caught')
    finally:
        with torch.no_grad():
            w.grad.mul_(0.5)
print(out, w.grad, w.grad._version, w._version)
""",
    "generators-paused-mid-loop": """
def batches(xs):
    for i in range(0, len(xs), 2):
        chunk = xs[i:i + 2]
        print('yield', i)
        yield chunk
        print('resumed', i)
    print('done')

def chain(xs):
    yield from batches(xs)
    yield xs[:1]

g = chain(torch.arange(10.0, requires_grad=True))
first = next(g)
total = first.sum()
for epoch in range(2):
    part = next(g)
    total = total + part.sum()
    print('consumer', epoch)
for rest in g:
    total = total + rest.sum()
print(total)

def counter():
    k = 0
    while True:
        k += 1
        got = yield k
        if got:
            k = got

c = counter()
vals = [next(c), next(c), c.send(10), next(c)]
print(vals)
""",
    "recursion": """
def scale(n):
    if n <= 1:
        return base
    rest = scale(n - 1)
    out = rest * n
    return out

def fib(n):
    if n < 2:
        return n
    a = fib(n - 1)
    b = fib(n - 2)
    return a + b

base = torch.tensor([1.5], requires_grad=True)
r = scale(6)
r.backward()
print(r, base.grad, fib(12))
""",
    "module-forward-with-a-loop": """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
            x = torch.nn.functional.dropout(x, 0.2, self.training)
        return x.sum()

net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = net(torch.randn(4, 3))
    loss.backward()
    opt.step()
    print(step, loss.item())
w = net.layers[0].weight
print(w, w.grad, w._version)
""",
    "comprehensions-and-lambdas": """
def sq(v):
    r = v * v
    return r

xs = [sq(torch.tensor(float(i), requires_grad=True)) for i in range(4)]
f = lambda t: sq(t) + 1
ys = list(map(f, [torch.tensor(2.0)]))
d = {i: sq(i) for i in range(3)}
s = sum(sq(i) for i in range(4))
for k in range(2):
    zs = [sq(z) for z in xs if z.item() > k]
    total = sum(zs)
    g = (lambda q: [sq(p) for p in range(q)])(3)
total.backward()
print(xs, ys, d, s, total, g)
""",
    "no-grad-blocks": """
w = torch.ones(3, requires_grad=True)
for i in range(3):
    loss = (w * w).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
        u = w * 2
print(w, w._version, u.requires_grad, w.grad, w.grad._version)
with torch.no_grad():
    for j in range(2):
        v = w + j
with torch.enable_grad():
    for j in range(2):
        q = w + j
print(v.requires_grad, q.requires_grad, torch.is_grad_enabled())
""",
    "custom-function-backward-with-loops": """
class Pow3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x
        for _ in range(2):
            y = y * x
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = g
        for k in range(3):
            print('backward round', k)
            out = out * 1.0
        return 3 * x * x * out

x = torch.tensor([1.0, 2.0], requires_grad=True)
for i in range(2):
    y = Pow3.apply(x).sum()
    y.backward()
print(x.grad, x._version)
""",
    "torch-func-transforms": """
from torch.func import grad, vmap

def f(x):
    s = x
    for i in range(3):
        s = s * x
        if i == 1:
            s = s + 1
    return s.sum()

g = grad(f)(torch.tensor([1.0, 2.0]))
v = vmap(grad(f))(torch.ones(2, 3))
for k in range(2):
    h = vmap(f)(torch.ones(2, 3) * k)
print(g, v, h)
""",
    "autograd-functional-calls-a-function-with-loops": """
def f(x):
    s = x
    for i in range(3):
        s = s * x
    return s

x = torch.tensor([1.0, 2.0])
for k in range(2):
    j = torch.autograd.functional.jacobian(f, x)
    h = torch.autograd.functional.hessian(lambda t: f(t).sum(), x, create_graph=True)
print(j, h)
""",
    "dataloader-loops": """
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.arange(10.0).reshape(5, 2), torch.arange(5.0))
dl = DataLoader(ds, batch_size=2, shuffle=True)
w = torch.zeros(2, requires_grad=True)
for epoch in range(2):
    for xb, yb in dl:
        loss = ((xb @ w - yb) ** 2).mean()
        loss.backward()
        print(epoch, xb.tolist())
print(w.grad, len(dl))
""",
    # len() of a DataLoader calls len() of its BatchSampler, which calls the program's sampler
    "dataloader-with-the-programs-sampler": """
from torch.utils.data import DataLoader, TensorDataset

class Order:
    def __iter__(self):
        return iter([2, 0, 1])

    def __len__(self):
        print('len ran')
        return 3

dl = DataLoader(TensorDataset(torch.arange(3.0)), sampler=Order(), batch_size=2)
for (b,) in dl:
    print(b)
""",
    "own-iterable-class-that-prints": """
class Bag:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        print('len ran')
        return len(self.items)

    def __iter__(self):
        print('iter ran')
        return iter(self.items)

class Old:
    def __len__(self):
        print('old len ran')
        return 2

    def __getitem__(self, i):
        print('getitem', i)
        if i >= 3:
            raise IndexError(i)
        return i

b = Bag([1, 2, 3])
for v in b:
    w = v * 2
for i, v in enumerate(b):
    w = v
for v in Old():
    w = v
print(len(b), w)
""",
    "saved-tensor-tensor-hooks-and-inference-mode": """
def pack(t):
    for i in range(2):
        print('pack', i)
    return t

def unpack(t):
    for i in range(2):
        print('unpack', i)
    return t

def hook(g):
    for i in range(2):
        print('tensor hook', i)
    return g

a = torch.ones(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    for k in range(2):
        b = a * a
c = b.sum()
c.backward()
d = a * 3
d.register_hook(hook)
d.sum().backward()
with torch.inference_mode():
    for i in range(2):
        e = torch.ones(2) * i
        e.add_(1)
print(a.grad, e, a._version)
""",
    "error-in-round-37": """
def f(k):
    total = 0
    for i in range(50):
        total += i
        if i == 36:
            bad = [1][k]
    return total

x = torch.ones(2, requires_grad=True)
y = f(5)
""",
    "error-in-a-while-loop-in-a-method": """
class Walker:
    def walk(self, t):
        n = 0
        while True:
            n += 1
            t = t * 2
            if n == 15:
                t = t + torch.ones(5)

w = Walker()
w.walk(torch.ones(3))
""",
}
# Loops whose length the hook must not ask for: it would run the program's code, or fail.
UNSIZED_CASES = {
    # ChainDataset is torch's, its len() calls the program's datasets' __len__ (and the
    # DataLoader then remembers it, warning when more samples come).
    "dataloader-of-a-chain-of-the-programs-datasets": """
from torch.utils.data import ChainDataset, DataLoader, IterableDataset

class Numbers(IterableDataset):
    def __iter__(self):
        return iter([torch.tensor(1.0), torch.tensor(2.0), torch.tensor(3.0)])

    def __len__(self):
        print('len ran')
        return 1

dl = DataLoader(ChainDataset([Numbers()]), batch_size=None)
for b in dl:
    print(b)
""",
    # len(range(10**20)) raises OverflowError: the hook asks for it, plain Python never does.
    "a-range-too-long-for-len": """
for i in range(10 ** 20):
    if i == 2:
        break
print(i)
""",
}


def _programs(cases: dict[str, str]) -> dict[str, str]:
    return {key: HEAD + code.lstrip("\n") + TAIL for key, code in cases.items()}


@pytest.fixture(scope="module")
def fidelity() -> dict[str, tuple[PlainRun, Trace, Trace]]:
    """Each case in plain PyTorch, in the app, and in the app without line hooks."""
    programs = _programs(CASES | UNSIZED_CASES)
    hooked = {key: execute(code, limits=LIMITS) for key, code in programs.items()}
    with unhooked():
        bare = {key: execute(code, limits=LIMITS) for key, code in programs.items()}
    threads = {trace.threads for trace in hooked.values()}
    assert len(threads) == 1
    plain = run_plain(list(programs.values()), threads.pop(), filename=FILENAME, observe=True)
    return {key: (p, hooked[key], bare[key]) for key, p in zip(programs, plain, strict=True)}


def _flat(values: Any) -> list[float]:
    """A Trace's nested values as plain PyTorch's observer writes them: flat floats."""
    if isinstance(values, list):
        return [v for item in values for v in _flat(item)]
    return [float(values)]


def _without_addresses(variables: dict[str, Any]) -> dict[str, Any]:
    """Variables as descriptions, less what differs from process to process (addresses)."""
    def plain(field: str, value: Any) -> Any:
        return without_addresses(value) if isinstance(value, str) else value

    return {name: None if v is None else {f: plain(f, getattr(v, f)) for f in v.__struct_fields__
                                          if f not in ("data_ptr", "memory")}
            for name, v in variables.items()}


def _same_as_plain(plain: PlainRun, trace: Trace) -> None:
    assert plain.result is not None, plain.stderr
    assert without_addresses(trace.stdout) == without_addresses(plain.stdout)
    result = plain.result
    error = trace.error and (trace.error.type, trace.error.message, trace.error.line)
    assert error == (None if result["ok"] else (result["type"], result["message"],
                                                result["line"]))
    for name, seen in result["variables"].items():
        if seen["kind"] != "tensor" or seen["values"] is None:
            continue
        mine = trace.variables[name]
        assert mine.kind == "tensor" and not mine.truncated, name
        assert _flat(mine.values) == pytest.approx(seen["values"], nan_ok=True), name
        if seen["grad"] is None:
            assert mine.grad is None, name
        else:
            assert _flat(mine.grad) == pytest.approx(seen["grad"], nan_ok=True), name


@pytest.mark.parametrize("key", CASES)
def test_the_program_sees_what_plain_pytorch_shows(
        key: str, fidelity: dict[str, tuple[PlainRun, Trace, Trace]]) -> None:
    plain, trace, _ = fidelity[key]
    _same_as_plain(plain, trace)


@pytest.mark.parametrize("key", CASES)
def test_the_hooks_change_nothing_the_app_recorded_before(
        key: str, fidelity: dict[str, tuple[PlainRun, Trace, Trace]]) -> None:
    _, trace, bare = fidelity[key]
    assert trace.stdout == bare.stdout
    assert trace.error == bare.error
    assert trace.warnings == bare.warnings
    assert _without_addresses(trace.variables) == _without_addresses(bare.variables)
    assert [(c.call, c.kind, c.value, [g.grad for g in c.leaf_grads]) for c in trace.backward] \
        == [(c.call, c.kind, c.value, [g.grad for g in c.leaf_grads]) for c in bare.backward]
    assert [s.line for s in trace.steps if s.within is None and not s.stopped] \
        == [s.line for s in bare.steps if not s.stopped]
    round_trips(trace)


@pytest.mark.parametrize("key", UNSIZED_CASES)
def test_a_loop_hook_runs_nothing_plain_python_does_not(
        key: str, fidelity: dict[str, tuple[PlainRun, Trace, Trace]]) -> None:
    plain, trace, bare = fidelity[key]
    _same_as_plain(plain, bare)  # the app without hooks agrees with plain PyTorch...
    assert trace.warnings == bare.warnings
    _same_as_plain(plain, trace)  # ...and with them it should too


def test_the_cases_record_steps_inside_their_blocks(
        fidelity: dict[str, tuple[PlainRun, Trace, Trace]]) -> None:
    for key in CASES:
        _, trace, bare = fidelity[key]
        assert inner(trace), key  # not vacuous: the hooks ran
        assert not [s for s in inner(bare) if not s.stopped], key


# --- 2. What is recorded ---


def test_nested_loops_say_each_loop_and_round() -> None:
    trace = run("total = 0\nfor i in range(3):\n    for j in range(2):\n        total += i * j\n"
                "print(total)\n")
    assert trace.ok, trace.error
    steps = [s for s in inner(trace) if s.line == 4]
    assert [rounds(s) for s in steps] == [
        [(2, "i", a, 3), (3, "j", b, 2)] for a in (1, 2, 3) for b in (1, 2)]
    assert all(s.within == 2 and s.end_line == 4 and s.calls is None for s in steps)
    assert [s.variables["total"].values for s in steps] == [0, 0, 0, 1, 1, 3]
    assert [s.line for s in trace.steps if s.within is None] == [1, 2, 5]


def test_sampling_keeps_rounds_1_to_10_then_doubling_and_the_last_when_known() -> None:
    trace = run("for i in range(200):\n    t = i\n")
    kept = [*range(1, 11), 20, 40, 80, 160, 200]
    assert [rounds(s) for s in inner(trace)] == [[(1, "i", r, 200)] for r in kept]
    assert [s.variables["t"].values for s in inner(trace)] == [r - 1 for r in kept]
    (note,) = [n for n in english(trace.notes) if "Not every line was recorded" in n]
    assert f"{200 - len(kept)} lines ran in rounds not kept" in note
    (one,) = english(run("n = 0\nwhile n < 11:\n    n += 1\n").notes)  # round 11 unknown
    assert "1 line ran in a round not kept (" in one
    unknown = run("n = 0\nwhile n < 200:\n    n += 1\n")
    assert [rounds(s) for s in inner(unknown)] == [
        [(2, "while", r, None)] for r in kept[:-1]]
    tensor = run("for row in torch.ones(30, 2):\n    t = row\n")
    assert [s.rounds[0].round for s in inner(tensor)] == [*range(1, 11), 20, 30]
    assert {s.rounds[0].of for s in inner(tensor)} == {30}


def test_nested_loops_sample_their_rounds_counted_together_as_backward_calls_are() -> None:
    # 12 × 12 rounds of the inner loop, counted over the run: 1–10, 20, 40, 80 and the last
    trace = run("for i in range(12):\n    for j in range(12):\n        t = i * j\n"
                "    u = i\n")
    kept = [*range(1, 11), 20, 40, 80, 144]
    assert [[r.round for r in s.rounds] for s in inner(trace) if s.line == 3] == [
        [(k - 1) // 12 + 1, (k - 1) % 12 + 1] for k in kept]
    assert [[r.round for r in s.rounds] for s in inner(trace) if s.line == 4] == [
        [k] for k in [*range(1, 11), 12]]
    # a loop of the program's function, called in a loop: its rounds counted across calls
    called = run("def epoch(n):\n    for b in range(n):\n        t = b\n\n"
                 "for e in range(30):\n    epoch(4)\n")
    assert [[r.round for r in s.rounds] for s in inner(called) if s.line == 3] == [
        [(k - 1) // 4 + 1, (k - 1) % 4 + 1] for k in [*range(1, 11), 20, 40, 80, 120]]
    # the last round is the very last only where every loop around it knows its length
    unknown = run("e = 0\nwhile e < 30:\n    e += 1\n    for b in range(4):\n        t = b\n")
    assert [s.rounds[-1].round for s in inner(unknown) if s.line == 5][-1] == 4
    assert len([s for s in inner(unknown) if s.line == 5]) == 10 + 3  # 20, 40, 80


def test_a_training_loops_kept_rounds_are_its_backward_calls_recorded_in_full() -> None:
    trace = run("from torch.utils.data import DataLoader, TensorDataset\n"
                "w = torch.ones(2, requires_grad=True)\n"
                "dl = DataLoader(TensorDataset(torch.ones(40, 2)), batch_size=4)\n"
                "for epoch in range(9):\n    for (x,) in dl:\n"
                "        loss = (x @ w).sum()\n        loss.backward()\n")
    assert trace.ok, trace.error
    stepped = {tuple(r.round for r in s.rounds) for s in inner(trace) if s.line == 7}
    full = {tuple(r.round for r in c.rounds) for c in trace.backward}
    assert len(full) == 10 + 3 + 1  # calls 1–10, 20, 40, 80, and the last round's
    assert stepped == full  # every round stepped can be replayed, the last too


def test_a_function_called_in_a_loop_steps_with_the_callers_rounds_and_its_locals() -> None:
    trace = run("def f(a):\n    b = a + 1\n    return b\n\nfor i in range(4):\n    c = f(i)\n")
    in_f = [s for s in inner(trace) if s.line == 2]
    assert [rounds(s) for s in in_f] == [[(5, "i", r, 4)] for r in range(1, 5)]
    assert all(s.calls == ["f"] and s.within == 5 for s in in_f)
    assert [s.called for s in in_f] == [1, 2, 3, 4]  # which call of f, over the run
    assert all(s.calling == [6] for s in in_f)  # the line that called it
    assert [(s.locals["a"].values, s.locals["b"].values) for s in in_f] == [
        (a, a + 1) for a in range(4)]
    assert all("c" not in s.locals for s in in_f)
    after = [s for s in inner(trace) if s.line == 6]
    assert after[0].locals is None and after[0].calls is None and after[0].calling is None
    assert after[-1].variables["c"].values == 4


@pytest.mark.parametrize("code", [
    "def f(a):\n    b = a + 1\n    return b\n\nfor i in range(40):\n    c = f(i)\n",
    "def h(a):\n    b = a + 1\n    return b\n\ndef g():\n    for i in range(40):\n"
    "        c = h(i)\n\ng()\n",
])
def test_a_function_called_in_a_loop_steps_only_in_the_callers_kept_rounds(code: str) -> None:
    trace = run(code)
    in_callee = [s for s in inner(trace) if s.line == 2]
    assert [s.rounds[-1].round for s in in_callee] == [*range(1, 11), 20, 40]
    assert [s.called for s in in_callee] == [*range(1, 11), 20, 40]  # counted, stepped or not


def test_recursion_names_each_call_and_its_own_locals() -> None:
    trace = run("def fact(n):\n    if n <= 1:\n        return 1\n    rest = fact(n - 1)\n"
                "    out = rest * n\n    return out\n\nr = fact(4)\n")
    assert trace.ok and trace.variables["r"].values == 24
    steps = [s for s in inner(trace) if s.line == 4]
    assert [len(s.calls) for s in steps] == [3, 2, 1]
    assert all(set(s.calls) == {"fact"} for s in steps)
    assert [s.called for s in steps] == [3, 2, 1]  # fact(2) was the third call, fact(4) the first
    assert [s.calling for s in steps] == [[8, 4, 4], [8, 4], [8]]  # each frame around it at
    assert [(s.locals["n"].values, s.locals["rest"].values) for s in steps] == [
        (2, 1), (3, 2), (4, 6)]


def test_deep_recursion_tells_the_innermost_calls_and_stays_valid() -> None:
    code = ("def down(n):\n    for i in range(2):\n        m = n\n    if n == 0:\n"
            "        return 0\n    k = down(n - 1)\n    return k + 1\n\nprint(down(400))\n")
    trace = run(code)
    assert trace.ok and trace.stdout == "400\n"
    deepest = max(inner(trace), key=lambda s: len(s.calls or []))
    assert len(deepest.calls) == MAX_NESTING and len(deepest.rounds) <= MAX_NESTING
    # The lines of the innermost frames around each step, as many as `calls` names at most.
    assert all(len(s.calling or ()) <= MAX_NESTING for s in inner(trace))
    assert deepest.calling == [9] + [6] * (MAX_NESTING - 1)  # 16 calls deep: print(down(400))
    assert len(inner(trace)) <= Limits().line_steps
    round_trips(trace)


def test_a_method_says_its_class_and_locals() -> None:
    trace = run("class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.fc = torch.nn.Linear(2, 2)\n\n    def forward(self, x):\n"
                "        for k in range(2):\n            x = self.fc(x)\n        return x\n\n"
                "net = Net()\nout = net(torch.ones(2))\n")
    assert trace.ok, trace.error
    steps = [s for s in inner(trace) if s.line == 8]
    assert [rounds(s) for s in steps] == [[(7, "k", 1, 2)], [(7, "k", 2, 2)]]
    assert all(s.calls == ["Net.forward"] and s.within == 12 for s in steps)
    assert [s.called for s in steps] == [1, 1]  # two rounds of one call
    assert sorted(steps[0].locals) == ["k", "self", "x"]
    assert steps[1].locals["x"].shape == [2] and steps[1].locals["x"].grad_fn is not None


def test_a_return_steps_with_its_value_named_in_the_locals_and_the_graph() -> None:
    trace = run("class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.fc = torch.nn.Linear(2, 1)\n\n    def forward(self, x):\n"
                "        return torch.relu(self.fc(x))\n\ndef pair(t):\n"
                "    return t * 2, t.sum()\n\nnet = Net()\nfor i in range(2):\n"
                "    out = net(torch.ones(2))\na, b = pair(out)\n")
    assert trace.ok, trace.error
    forward = [s for s in inner(trace) if s.line == 7]
    assert [(rounds(s), s.calls) for s in forward] == [
        ([(13, "i", r, 2)], ["Net.forward"]) for r in (1, 2)]
    assert sorted(forward[0].locals) == ["return", "self", "x"]
    assert forward[0].locals["return"].grad_fn == "ReluBackward0"
    labels = [n.label.split("\n")[0] for n in trace.graphs[forward[0].graph].nodes]
    assert "return" in labels and "ReluBackward0" in labels
    (paired,) = [s for s in inner(trace) if s.line == 10]
    assert paired.locals["return"].kind == "tuple"
    labels = [n.label.split("\n")[0] for n in trace.graphs[paired.graph].nodes]
    assert {"return[0]", "return[1]"} <= set(labels)


def test_the_graph_inside_a_function_is_drawn_first_for_what_its_line_made() -> None:
    trace = run("w = torch.ones(2, requires_grad=True)\nout = w * 1\n\n"
                "def f(v):\n    u = v.exp()\n    return u.sum()\n\n"
                "for i in range(2):\n    out = f(w * i)\n")
    firsts = {(s.line, s.rounds[-1].round): default_root(
        trace, i, named_outputs(trace.graphs[s.graph])) for i, s in enumerate(trace.steps)
        if s.calls and s.graph is not None}
    # Round 2 still holds round 1's `out`, a global: the function's own line wins.
    assert firsts == {(5, 1): "u", (6, 1): "return", (5, 2): "u", (6, 2): "return"}


def test_a_function_returning_a_tuple_is_drawn_first_for_its_first_tensor() -> None:
    trace = run("def encode(x, w):\n    h = x @ w\n    return h.tanh(), h.sigmoid()\n\n"
                "w = torch.ones(3, 2, requires_grad=True)\na, b = encode(torch.ones(2, 3), w)\n")
    (returning,) = [i for i, s in enumerate(trace.steps) if s.calls and s.line == 3]
    graph = trace.graphs[trace.steps[returning].graph]
    assert default_root(trace, returning, named_outputs(graph)) == "return[0]"


ARGUMENT = ("def act(z):\n    return torch.tanh(z)\n\nx = torch.ones(2, 3)\n"
            "W = torch.full((3, 2), 0.5, requires_grad=True)\ny = act(x @ W).sum()\n"
            "y.backward()\n")


def test_what_a_calls_argument_made_is_the_calling_lines_not_the_functions() -> None:
    trace = run(ARGUMENT)
    ops = {n.name: n.id for n in trace.graphs[trace.steps[-1].graph].nodes
           if n.kind == "backward"}
    lines = node_lines(trace)
    assert {name: lines[node][0] for name, node in ops.items()} == {
        "SumBackward0": 6, "TanhBackward0": 2, "MmBackward0": 6, "AccumulateGrad": 6}
    (returning,) = [i for i, s in enumerate(trace.steps) if s.calls]
    assert ops["MmBackward0"] not in statement_added(trace, returning)
    assert ops["TanhBackward0"] in statement_added(trace, returning)
    assert ops["MmBackward0"] in statement_added(trace, returning + 1)  # y = act(x @ W).sum()
    (call,) = trace.backward
    made = {trace.steps[b.step].line if b.step is not None else None: b.added
            for b in timeline(trace, call).built}
    assert ops["MmBackward0"] in made[6] and ops["TanhBackward0"] in made[2]


def test_a_recursive_functions_arguments_are_each_callers_line() -> None:
    trace = run("def down(x, n):\n    if n == 0:\n        return x\n"
                "    return down(torch.relu(x) + 1, n - 1)\n\n"
                "w = torch.ones(2, requires_grad=True)\nout = down(w * 2, 3)\n")
    lines = node_lines(trace)
    made = {n.name: lines[n.id][0] for n in trace.graphs[trace.steps[-1].graph].nodes
            if n.kind == "backward" and n.name != "AccumulateGrad"}
    assert made == {"MulBackward0": 7, "ReluBackward0": 4, "AddBackward0": 4}


def test_a_return_step_lets_the_value_go_as_the_function_returns() -> None:
    # A frame that outlives its call (a traceback holds it) keeps no value the rewrite held.
    tree = ast.parse("def f(x):\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
                     "        frames.append(e.__traceback__.tb_frame)\n    return [x]\n")
    found = lines_module.plan(tree)
    frames: list[Any] = []
    namespace = {"frames": frames, "__ae_line__": lambda number: None,
                 "__ae_enter__": lambda: None, "__ae_recursion__": RecursionError}
    exec(compile(tree, "<planned>", "exec"), namespace)  # noqa: S102 - the test's own program
    assert namespace["f"](1) == [1] and found.places[-1].hands == "return"
    assert frames[0].f_locals[lines_module.RETURNED] == []


def test_a_generator_paused_at_its_yield_keeps_no_value_the_rewrite_held() -> None:
    tree = ast.parse("def gen():\n    for k in range(2):\n        yield Box(k)\n")
    found = lines_module.plan(tree)

    class Box:  # a value the consumer lets go of while the generator is paused
        def __init__(self, k: int) -> None:
            self.k = k

    namespace = {"Box": Box, "__ae_line__": lambda number: None, "__ae_enter__": lambda: None,
                 "__ae_loop__": lambda number, iterable=None: iterable,
                 "__ae_round__": lambda number: None, "__ae_recursion__": RecursionError}
    exec(compile(tree, "<planned>", "exec"), namespace)  # noqa: S102 - the test's own program
    paused = namespace["gen"]()
    gone = weakref.ref(next(paused))
    assert gone() is None and found.places[-1].hands == "yield"
    assert next(paused).k == 1


def test_comprehensions_and_lambdas_are_not_frames_of_their_own() -> None:
    trace = run("def sq(v):\n    r = v * v\n    return r\n\nxs = [sq(i) for i in range(3)]\n"
                "f = lambda t: sq(t)\nfor k in range(2):\n    y = f(k)\n")
    top = [s for s in inner(trace) if s.line == 2 and s.within == 5]
    assert len(top) == 3 and all(s.calls == ["sq"] and s.rounds is None for s in top)
    assert [s.locals["v"].values for s in top] == [0, 1, 2]
    looped = [s for s in inner(trace) if s.line == 2 and s.within == 7]
    assert [(rounds(s), s.calls) for s in looped] == [
        ([(7, "k", r, 2)], ["sq"]) for r in (1, 2)]


def test_a_generator_keeps_its_rounds_while_the_consumer_loops() -> None:
    trace = run("def gen():\n    for k in range(4):\n        v = k * 10\n        yield v\n\n"
                "g = gen()\nfor e in range(2):\n    a = next(g)\nfor b in g:\n    c = b\n")
    assert trace.ok, trace.error
    made = [s for s in inner(trace) if s.line == 3]
    assert [rounds(s) for s in made] == [
        [(7, "e", 1, 2), (2, "k", 1, 4)], [(7, "e", 2, 2), (2, "k", 2, 4)],
        [(2, "k", 3, 4)], [(2, "k", 4, 4)]]
    assert all(s.calls == ["gen"] for s in made)
    assert [s.locals["v"].values for s in made] == [0, 10, 20, 30]
    # At `yield v` as it hands v over, before the consumer's line that took it
    handed = [k for k, s in enumerate(trace.steps) if s.line == 4]
    assert [trace.steps[k].rounds[-1].round for k in handed] == [1, 2, 3, 4]
    assert [trace.steps[k].locals["yield"].values for k in handed] == [0, 10, 20, 30]
    assert [trace.steps[k + 1].line for k in handed] == [8, 8, 10, 10]


def test_blocks_step_inside_while_else_try_and_with() -> None:
    trace = run("n = 0\nwhile n < 2:\n    n += 1\n    try:\n        x = 1 / (n - 2)\n"
                "    except ZeroDivisionError:\n        x = -1\n    finally:\n        y = n\n"
                "else:\n    z = n\nwith torch.no_grad():\n    w = torch.ones(1) * 2\n")
    assert trace.ok, trace.error
    assert [(s.line, [r.round for r in s.rounds or []]) for s in inner(trace)] == [
        (3, [1]), (5, [1]), (9, [1]), (3, [2]), (7, [2]), (9, [2]), (11, []), (13, [])]


def test_no_step_while_the_engine_runs_or_a_transform_does() -> None:
    code = CASES["custom-function-backward-with-loops"] + CASES["torch-func-transforms"]
    trace = run(code)
    assert trace.ok, trace.error
    backward_body = range(12, 18)  # Pow3.backward's lines
    assert not [s for s in inner(trace) if s.line in backward_body]
    assert [s.calls for s in inner(trace) if s.line == 8] == [["Pow3.forward"]] * 4
    f_body = range(code.count("\n", 0, code.index("def f")) + 2, code.index("\ng = grad"))
    f_lines = [s for s in inner(trace) if s.calls == ["f"]]
    assert not f_lines, [s.line for s in f_lines]
    assert f_body  # the transformed function's lines exist, but are not stepped


def test_backward_calls_carry_their_rounds() -> None:
    trace = run("w = torch.ones(2, requires_grad=True)\nfor epoch in range(3):\n"
                "    loss = (w * w).sum()\n    loss.backward()\n")
    assert [c.rounds for c in trace.backward] == [  # a round makes two nodes: Mul and Sum
        [Round(line=2, name="epoch", round=r, of=3, loop_began=0,
               previous_began=2 * (r - 2) if r > 1 else None, began=2 * (r - 1))]
        for r in (1, 2, 3)]


def test_a_dataloaders_last_batch_is_kept_as_its_length_is_known() -> None:
    trace = run("from torch.utils.data import DataLoader, TensorDataset\n"
                "dl = DataLoader(TensorDataset(torch.arange(24.0)), batch_size=2)\n"
                "for (b,) in dl:\n    c = b\n")
    assert [[(r.line, r.round, r.of) for r in s.rounds] for s in inner(trace)] == [
        [(3, r, 12)] for r in [*range(1, 11), 12]]
    assert {s.rounds[0].name for s in inner(trace)} <= {"(b,)", "b,"}
    assert inner(trace)[-1].variables["c"].values == [22.0, 23.0]


def test_a_loop_over_the_programs_own_class_has_no_known_length() -> None:
    trace = run(CASES["own-iterable-class-that-prints"])
    assert trace.ok, trace.error
    assert all(r.of is None for s in inner(trace) for r in s.rounds or [] if r.name == "v")
    assert trace.stdout.count("len ran") == 1  # the program's own len(b), nothing more


def test_a_loop_over_torchs_module_containers_knows_its_length_a_generator_does_not() -> None:
    trace = run("class Layers(torch.nn.ModuleList):\n    def __len__(self):\n"
                "        print('len ran')\n        return 9\n\n"
                "lin = [torch.nn.Linear(2, 2) for _ in range(3)]\n"
                "for a in torch.nn.ModuleList(lin):\n    x = a\n"
                "for b in torch.nn.Sequential(*lin[:2]):\n    x = b\n"
                "for c in torch.nn.ParameterList([torch.ones(1)] * 4):\n    x = c\n"
                "for d in Layers(lin):\n    x = d\n"
                "for e in lin[0].parameters():\n    x = e\n")
    assert trace.ok, trace.error
    assert {r.name: r.of for s in inner(trace) for r in s.rounds or []} == {
        "a": 3, "b": 2, "c": 4, "d": None, "e": None}
    assert trace.stdout == "len ran\n"  # as the subclass was made (extend), not by the loop


def test_an_error_in_round_37_stops_with_that_round_and_the_state_there() -> None:
    code = ("def f(k):\n    total = 0\n    for i in range(50):\n        total += i\n"
            "        if i == 36:\n            bad = [1][k]\n    return total\n\n"
            "x = torch.ones(2)\ny = f(5)\n")
    trace = run(code)
    assert trace.error is not None and (trace.error.type, trace.error.line) == ("IndexError", 6)
    last = trace.steps[-1]
    assert last.stopped and (last.line, last.within) == (6, 10)
    assert rounds(last) == [(3, "i", 37, 50)] and last.calls == ["f"]
    assert {k: v.values for k, v in last.locals.items()} == {
        "k": 5, "total": sum(range(37)), "i": 36}
    assert trace.variables == last.variables and "y" not in trace.variables
    assert sum(1 for s in trace.steps if s.stopped) == 1
    round_trips(trace)


def test_an_error_in_a_while_loop_stops_in_its_round() -> None:
    trace = run(CASES["error-in-a-while-loop-in-a-method"])
    assert trace.error is not None and trace.error.type == "RuntimeError"
    last = trace.steps[-1]
    assert last.stopped and last.calls == ["Walker.walk"]
    assert [(r.name, r.round) for r in last.rounds] == [("while", 15)]
    assert last.locals["n"].values == 15 and last.locals["t"].values == [2.0 ** 15] * 3


def test_the_line_steps_cap_holds_and_the_note_says_what_was_left_out() -> None:
    trace = run("for i in range(5):\n    a = i\n    b = a\n    c = b\nprint(c)\n",
                line_steps=7)
    assert trace.ok and trace.stdout == "4\n"
    assert len(inner(trace)) == 7
    assert [s.line for s in trace.steps if s.within is None] == [1, 5]
    (note,) = [n for n in english(trace.notes) if "Not every line was recorded" in n]
    assert "8 lines ran after the first 7 inner steps" in note
    round_trips(trace)


def test_a_step_inside_a_loop_tells_its_own_output() -> None:
    trace = run("for i in range(3):\n    print('round', i)\n    x = i\nprint('end')\n")
    assert [s.output for s in trace.steps] == ["round 0\n", "", "round 1\n", "", "round 2\n",
                                               "", "", "end\n"]
    assert "".join(s.output for s in trace.steps) == trace.stdout


@pytest.mark.parametrize("code", [
    "xs = [1, 2, 3]\nfor x in xs:\n    if x < 20:\n        xs.append(x + 10)\n",
    "xs = [1, 2, 3, 4]\n\ndef f():\n    return xs.pop()\n\nfor x in iter(f, 1):\n"
    "    y = x\n",
    "def f():\n    return 1\n\nfor i, x in enumerate(iter(f, 2)):\n    if i == 2:\n"
    "        break\n    y = x\n",
])
def test_a_round_is_never_past_the_known_length(code: str) -> None:
    trace = run(code)
    assert trace.ok and len(inner(trace)) >= 2
    assert all(r.of is None or r.round <= r.of for s in inner(trace) for r in s.rounds or [])


# --- 3. Hostile programs ---


@pytest.mark.parametrize("code", [
    "__ae_line__(0)\n", "x = __ae_round__\n", "for i in range(2):\n    __ae_loop__(0, [])\n",
    "getattr(__builtins__, '__ae_line__')\n", "d = dict(__ae_line__=1)\n",
    "def f(__ae_line__=1):\n    return 1\n", "class A:\n    __ae_round__ = 1\n",
    "for i in range(2):\n    __ae_line__ = print\n",
    "def f():\n    global __ae_line__\n    __ae_line__ = print\n",
    "import torch as __ae_loop__\n", "s = '__ae_' + 'line__'\nx = getattr(torch, s, None)\n",
    "x = getattr(print, '__globals__')\n", "g = (lambda: 0).__globals__\n",
    "h = [].__class__.__base__\n", "f = lambda: 0\nc = getattr(f, '__code__')\n",
])
def test_a_program_cannot_name_or_reach_the_hooks(code: str) -> None:
    trace = run(code)
    assert trace.error is not None and trace.error.type == "Refused", trace.error
    assert trace.stdout == "" and not inner(trace)


@pytest.mark.parametrize("hook", ["__ae_line__", "__ae_returned__"])
def test_a_global_statement_naming_a_hook_changes_nothing(hook: str) -> None:
    # `global __ae_line__` alone passes the sandbox; every use of the name is refused, so it
    # can neither read nor bind it: the steps are as they would be without it, and a value
    # returned through a global of the rewrite's is returned all the same.
    trace = run(f"def f():\n    global {hook}\n    for i in range(2):\n        x = i\n"
                "    return x\n\nr = f()\n")
    assert trace.ok, trace.error
    assert [(s.line, rounds(s)) for s in inner(trace)] == [
        (4, [(3, "i", 1, 2)]), (4, [(3, "i", 2, 2)]), (5, [])]
    assert trace.variables["r"].values == 1


def test_a_program_can_neither_call_nor_replace_a_hook_through_its_namespace() -> None:
    # The hooks live in the program's globals; a function's globals and the namespace are out
    # of reach by every route the sandbox knows, so judged by effect: steps are as usual.
    trace = run("def f():\n    for i in range(2):\n        x = i\n    return x\n\n"
                "ns = {}\ntry:\n    ns = getattr(f, 'func_globals')\nexcept AttributeError:\n"
                "    ns = {}\nr = f()\n")
    assert trace.error is None or trace.error.type == "Refused"
    if trace.ok:
        assert [s.line for s in inner(trace) if s.calls == ["f"]] == [3, 3]


def test_a_million_rounds_stop_at_the_loop_cap_in_time() -> None:
    started = time.monotonic()
    trace = execute("t = 0\nfor i in range(2_000_000):\n    t += 1\n", limits=Limits())
    assert time.monotonic() - started < Limits().time_s + 1
    assert trace.error is not None and trace.error.type in ("LoopLimit", "TimeLimit")
    last = trace.steps[-1]
    assert last.stopped and last.rounds[0].of == 2_000_000
    assert len(inner(trace)) < 40
    round_trips(trace)


def test_a_line_in_a_round_not_kept_is_passed_without_walking_the_frames() -> None:
    code = ("t = 0\nfor i in range(100_000):\n    a = i\n    b = a\n    t += b\n"
            "print(t)\n")
    with mock.patch.object(lines_module, "running", wraps=lines_module.running) as walked:
        trace = execute(code, limits=Limits(time_s=60))
    assert trace.ok and trace.stdout == f"{sum(range(100_000))}\n"
    kept_rounds = 10 + 13 + 1  # 1–10, 20…81,920 (13 of them), and the last
    assert walked.call_count == 3 * kept_rounds  # each of the 300,000 others: one dict lookup


def test_time_limit_holds_for_an_endless_loop_with_steps() -> None:
    started = time.monotonic()
    trace = execute("def f(x):\n    y = x + 1\n    return y\n\nn = 0\nwhile True:\n"
                    "    n = f(n)\n", limits=Limits(time_s=1, loop_iterations=10**12))
    assert time.monotonic() - started < 3
    assert trace.error is not None and trace.error.type == "TimeLimit"
    last = trace.steps[-1]
    assert last.stopped and last.line in (2, 3, 6, 7)
    assert all(r.name == "while" for r in last.rounds or [])
    round_trips(trace)


class _Counting(dict):  # type: ignore[type-arg]
    """A dict that remembers the most entries it held, by its name."""

    peaks: dict[str, int] = {}

    def __init__(self, name: str, value: dict[Any, Any]) -> None:
        super().__init__(value)
        self.name = name

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        _Counting.peaks[self.name] = max(_Counting.peaks.get(self.name, 0), len(self))


def _counted(name: str) -> Any:
    """An attribute of Lines held as a `_Counting`, however often it is made anew."""
    return property(lambda self: self.__dict__[name],
                    lambda self, value: self.__dict__.__setitem__(name, _Counting(name, value)))


class _Watched(lines_module.Lines):
    """Lines whose round counters and functions' clocks are `_Counting`."""

    _rounds = _counted("_rounds")
    _entered = _counted("_entered")


def test_round_counters_stay_bounded() -> None:
    # 20,000 calls each starting a loop, 6,000 generators left paused inside theirs, 6,000
    # left paused outside any loop, and a recursion with a loop in each frame: the counters
    # (and the clocks of the functions begun) are forgotten past FORGET entries.
    code = ("def once():\n    for j in range(1):\n        x = j\n\n"
            "def gen():\n    for k in range(3):\n        yield k\n\n"
            "def flat():\n    yield 1\n\n"
            "def down(n):\n    for i in range(1):\n        if n:\n            down(n - 1)\n\n"
            "for n in range(20_000):\n    once()\n"
            "paused = []\nfor n in range(6_000):\n    g = gen()\n    first = next(g)\n"
            "    paused.append(g)\n"
            "for n in range(6_000):\n    g = flat()\n    first = next(g)\n"
            "    paused.append(g)\n"
            "down(300)\n")
    _Counting.peaks.clear()
    with mock.patch.object(execute_module, "Lines", _Watched):
        trace = execute(code, limits=Limits(time_s=60))
    assert trace.ok, trace.error
    for peak in (_Counting.peaks["_rounds"], _Counting.peaks["_entered"]):
        assert FORGET <= peak <= FORGET + 2  # it filled, then was forgotten


def test_a_huge_loop_body_is_capped_and_valid() -> None:
    body = "".join(f"    a = i + {n}\n" for n in range(3_000))
    trace = run("for i in range(3):\n" + body + "print(a)\n")
    assert trace.ok and trace.stdout == "3001\n"
    assert len(inner(trace)) == Limits().line_steps
    (note,) = [n for n in english(trace.notes) if "Not every line was recorded" in n]
    assert f"{3 * 3_000 - Limits().line_steps:,} lines ran after the first" in note
    round_trips(trace)


def test_the_time_limit_hitting_inside_a_step_leaves_a_clear_error_and_a_valid_trace() -> None:
    # As the clock would: the 4th description the steps make raises the run's TimeLimit.
    real = execute_module.snapshot
    calls = [0]

    def slow(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 4:
            raise TimeLimit("The program was stopped after 5 s, the time limit for one run.")
        return real(*args, **kwargs)

    code = ("def f(t):\n    u = t * 2\n    return u\n\nx = torch.ones(2, requires_grad=True)\n"
            "for i in range(3):\n    try:\n        y = f(x)\n    except Exception:\n"
            "        print('the program caught it')\n")
    with mock.patch.object(execute_module, "snapshot", slow):
        trace = execute(code, limits=LIMITS)
    assert trace.error is not None and trace.error.type == "TimeLimit"
    assert trace.error.line in (2, 8) and "program caught" not in trace.stdout
    assert trace.steps[-1].stopped
    round_trips(trace)


@pytest.mark.parametrize("time_s", [0.15, 0.3, 0.45, 0.6])
def test_the_real_clock_hitting_anywhere_in_steps_leaves_a_valid_trace(time_s: float) -> None:
    # Steps dominate: each call of `grow` is stepped (no loop in it) and draws a growing graph.
    code = ("x = torch.ones(3, requires_grad=True)\nys = [x]\n\ndef grow(t):\n"
            "    u = t * 1.001\n    v = u + 0\n    return v\n\n"
            "for i in range(100_000):\n    ys.append(grow(ys[-1]))\n")
    started = time.monotonic()
    trace = execute(code, limits=Limits(time_s=time_s))
    assert time.monotonic() - started < 2 * time_s + 2
    assert trace.error is not None and trace.error.type == "TimeLimit", trace.error
    assert trace.error.line in (4, 5, 6, 7, 10)  # 4: as a call of `grow` starts, at its def
    round_trips(trace)


def test_steps_do_not_lower_the_recursion_depth_a_program_reaches() -> None:
    code = ("def depth(n):\n    try:\n        m = depth(n + 1)\n    except RuntimeError:\n"
            "        m = n\n    return m\n\nprint(depth(0))\n")
    with unhooked():
        bare = execute(code, limits=LIMITS)
    trace = execute(code, limits=LIMITS)
    assert bare.ok and trace.ok
    assert trace.stdout == bare.stdout


def test_steps_recorded_under_inference_mode_and_no_grad_keep_the_modes() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\nwith torch.inference_mode():\n"
                "    for i in range(2):\n        y = torch.ones(2) * i\n        y.add_(1)\n"
                "with torch.no_grad():\n    z = x * 2\nq = x * 2\n"
                "print(y.is_inference(), z.requires_grad, q.requires_grad, "
                "torch.is_grad_enabled(), torch.is_inference_mode_enabled())\n")
    assert trace.ok, trace.error
    assert trace.stdout == "True False True True False\n"
    assert [s.line for s in inner(trace)] == [4, 5, 4, 5, 7]
    assert inner(trace)[1].variables["y"].version is None  # an inference tensor keeps none



@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_trace_is_not_changed_after_the_run_by_a_generator_finalised_later() -> None:
    trace = execute("x = torch.ones(2, requires_grad=True)\n\ndef gen():\n    try:\n"
                    "        for i in range(3):\n            yield i\n    finally:\n"
                    "        y = x * 5\n\ng = gen()\na = next(g)\n", limits=LIMITS)
    assert trace.ok, trace.error
    before = trace.to_json()
    gc.collect()  # the namespace is a cycle (its functions' globals): `g` is closed now
    assert trace.to_json() == before


def test_a_step_inside_a_raw_saved_tensors_pack_hook_does_not_crash_the_run(
        pool: WorkerPool) -> None:
    code = ("def pack(t):\n    u = 1\n    return t\n\ndef unpack(t):\n    return t\n\n"
            "x = torch.ones(2, requires_grad=True)\ny = x.pow(2)\n"
            "y.grad_fn._raw_saved_self.register_hooks(pack, unpack)\nprint('done')\n")
    trace = pool.run(code)  # in a worker: in this process it would end pytest
    assert trace.ok, trace.error
    assert trace.stdout == "done\n"


def test_a_round_that_ends_at_continue_or_break_steps_there() -> None:
    trace = run("total = 0\nfor i in range(6):\n    if i % 2:\n        continue\n"
                "    total += i\n    if total > 5:\n        break\n")
    assert trace.ok, trace.error
    assert [(s.line, s.rounds[0].round, s.variables["total"].values) for s in inner(trace)] == [
        (5, 1, 0), (4, 2, 0), (5, 3, 2), (4, 4, 2), (5, 5, 6), (7, 5, 6)]
