"""A record over what a run may send back thins itself, a level at a time, and says so: the
output, the error and the state after the last statement always come back whole, and what
is cut keeps the norm of all of it."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from msgspec.structs import asdict

from explorer.pool.worker import WorkerPool
from explorer.record.backward import kept
from explorer.record.execute import execute
from explorer.record.thin import LEVELS, fitted
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.notes import english, said_part
from explorer.trace.wire import MAX_RESULT_BYTES, trace_message
from tests.plain import run_plain

# Eight tensors of 1,000 values, all changed by each of 120 statements (~18 MiB sent whole),
# a growing graph, printing along the way, 2,101 backward calls, and an error at the end.
NAMES = ", ".join(f"v{i}" for i in range(8))
BIG = "\n".join([
    "import torch",
    f"{NAMES} = " + ", ".join(["torch.randn(1000)"] * 8),
    "w = torch.ones(300, requires_grad=True)",
    "y = w * 2",
    *[f"{NAMES} = " + ", ".join(f"v{i} + 1" for i in range(8)) + (
        "\ny = y * 2\nprint('step', y.sum().item())" if k % 20 == 0 else "")
      for k in range(120)],
    "y.sum().backward()",
    "for _ in range(2100):\n    (w * 3).sum().backward()",
    "v0.sum().backward()",
]) + "\n"


def test_a_record_over_budget_comes_back_thinned_with_all_a_visitor_came_for(
        pool: WorkerPool) -> None:
    whole = execute(BIG)
    assert len(trace_message(copy.deepcopy(whole))) > MAX_RESULT_BYTES
    trace = pool.run(BIG)
    plain = run_plain([BIG], pool.threads, observe=True)[0]
    assert plain.result is not None and not plain.result["ok"]
    assert trace.stdout == plain.stdout and trace.stdout.count("step") == 6
    assert (trace.error.type, trace.error.message, trace.error.line) == (
        plain.result["type"], plain.result["message"], plain.result["line"])
    assert "thinned" in " ".join(english(trace.notes))
    assert len(trace_message(trace)) <= MAX_RESULT_BYTES
    last = _here(trace.variables)
    assert _here(trace.steps[-1].variables) == last == _here(whole.variables)  # the last state
    assert trace.graph == whole.graph and trace.backward == whole.backward
    for name, expected in plain.result["variables"].items():
        assert _flat(trace.variables[name].values) == expected["values"], name
    for thin, full in zip(trace.steps[:-1], whole.steps[:-1], strict=True):
        assert (thin.line, thin.output) == (full.line, full.output)
        for name, info in _here(thin.variables).items():
            _cut_from(info, _here(full.variables)[name])


def _here(variables: dict) -> dict:
    """Variables without where their data lives, which differs from process to process."""
    return {name: {k: v for k, v in asdict(info).items() if k not in ("data_ptr", "memory")}
            for name, info in variables.items()}


def _cut_from(cut: dict, whole: dict) -> None:
    """`cut` is `whole` with its values and `.grad` each whole or a leading block with the
    norm of all of it."""
    for key, norm in (("values", "norm"), ("grad", "grad_norm")):
        if cut.get(key) == whole.get(key):
            assert cut.get(norm) == whole.get(norm), key
            continue
        shown, all_of_it = _flat(cut[key]), _flat(whole[key])
        assert len(shown) < len(all_of_it) and all_of_it[:len(shown)] == shown, key
        if whole.get(norm) is not None:  # already a leading block: the norm of all of it
            assert cut[norm] == whole[norm], key
            continue
        expected = torch.linalg.vector_norm(torch.tensor(all_of_it, dtype=torch.float64))
        assert math.isclose(cut[norm], float(expected), rel_tol=1e-12), key
    if whole["truncated"] is not None:
        assert cut["truncated"] == (whole["truncated"] or cut["values"] != whole["values"])
    assert _rest(cut) == _rest(whole)


def _rest(info: dict) -> dict:
    return {k: v for k, v in info.items()
            if k not in ("values", "truncated", "norm", "grad", "grad_norm")}


def _flat(values: object) -> list:
    return [x for v in values for x in _flat(v)] if isinstance(values, list) else [values]


@pytest.fixture(scope="module")
def whole() -> Trace:
    trace = execute(BIG)
    assert trace.graphs and trace.backward
    return trace


def test_each_level_takes_something_from_a_record_that_has_it(whole: Trace) -> None:
    sizes = [len(trace_message(trace := copy.deepcopy(whole)))]
    for level, _, _ in LEVELS:
        assert level(trace) is not None
        sizes.append(len(trace_message(trace)))
        assert Trace.from_json(trace_message(trace)) == trace
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert all(level(trace) is None for level, _, _ in LEVELS)  # nothing left to take


def _thinned(trace: Trace, budget: int) -> list[str]:
    """What fitting `trace` into `budget` took, as its note says, checked against what it
    sent and what it kept."""
    whole = copy.deepcopy(trace)
    message = fitted(trace, budget)
    assert Trace.from_json(message) == trace  # what is said is what is sent
    assert (trace.stdout, trace.error, trace.graph) == (whole.stdout, whole.error, whole.graph)
    assert [(s.line, s.output) for s in trace.steps] == [(s.line, s.output) for s in whole.steps]
    notes = [n for n in english(trace.notes) if "thinned" in n]
    if not notes:
        assert trace == whole and len(message) <= budget
        return []
    assert len(notes) == 1 and (len(message) <= budget or budget < 1 << 10), notes
    return notes[0].split(": ", 1)[1].rstrip(".").split("; ")


def test_a_record_that_fits_is_sent_whole(whole: Trace) -> None:
    assert _thinned(copy.deepcopy(whole), len(trace_message(whole))) == []


def test_what_makes_a_record_big_is_what_is_thinned_and_the_rest_is_kept(whole: Trace) -> None:
    # BIG's bulk is its steps' values: cutting them to 100 is enough, and the rest stays.
    trace = copy.deepcopy(whole)
    assert _thinned(trace, MAX_RESULT_BYTES) == [
        "in the steps before the last, tensors and arrays keep their first 100 values and the "
        "norm of all of them"]
    assert (trace.graphs, trace.backward, trace.losses) == (
        whole.graphs, whole.backward, whole.losses)
    # Three replays of a 1,500-op chain: its bulk is the older calls, and the steps keep all.
    calls = execute("x = torch.ones(1000, requires_grad=True)\ny = x\n"
                    "for i in range(1500):\n    y = y * 1.0001\n"
                    "for k in range(3):\n    y.sum().backward(retain_graph=True)\n")
    variables = [s.variables for s in calls.steps]
    assert "only the last backward call recorded in full is replayed" in _thinned(
        calls, MAX_RESULT_BYTES)
    assert [c.call for c in calls.backward] == [3]
    assert [s.variables for s in calls.steps] == variables


def test_a_budget_nothing_fits_takes_every_level(whole: Trace) -> None:
    in_order = copy.deepcopy(whole)
    assert sorted(_thinned(copy.deepcopy(whole), 1)) == sorted(
        said_part(level(in_order), "en") for level, _, _ in LEVELS)


def test_a_budget_nothing_fits_still_keeps_the_output_the_error_and_the_last_state(
        whole: Trace) -> None:
    trace = copy.deepcopy(whole)
    message = fitted(trace, 1)
    assert len(message) > 1 and Trace.from_json(message) == trace
    assert trace.stdout == whole.stdout and trace.error == whole.error
    assert all(s.variables == {} for s in trace.steps[:-1])
    assert trace.variables.keys() == whole.variables.keys()
    for name, info in trace.variables.items():
        _cut_from(asdict(info), asdict(whole.variables[name]))


def test_a_cut_grad_keeps_its_norm_and_one_without_a_norm_stays_whole() -> None:
    trace = execute("w = torch.randn(500, requires_grad=True)\n(w * 3).sum().backward()\n"
                    "n = torch.zeros(500, requires_grad=True)\n"
                    "(n * torch.tensor(float('nan'))).sum().backward()\n")
    cut = copy.deepcopy(trace)
    fitted(cut, 1)
    w, n = cut.variables["w"], cut.variables["n"]
    assert len(w.grad) == 10 and math.isclose(
        w.grad_norm, math.sqrt(500 * 9.0), rel_tol=1e-12)
    assert n.grad == trace.variables["n"].grad and n.grad_norm is None


# A 500-round training loop through a function of the program's, on tensors of 10,000 values,
# recorded with line steps: every step inside the function describes its locals too. With
# `fail`, the last round's call stops at an error part way through the function.
LOOP = """import torch

torch.manual_seed(0)
x = torch.randn(100, 100)
w = torch.randn(100, 100, requires_grad=True)


def train_step(w, x, epoch):
    h = torch.tanh(x @ w)
    loss = (h * h).mean()
    loss.backward()
    if epoch == {fail}:
        h = h @ torch.ones(3, 3)
    return h, loss


for epoch in range(500):
    for part in range(4):
        h, loss = train_step(w, x, epoch)
        with torch.no_grad():
            w -= 0.01 * w.grad
            w.grad.zero_()
"""
LOOP_LIMITS = Limits(time_s=300, line_steps=400)  # fewer line steps: a quicker test


@pytest.fixture(scope="module", params=[None, 499], ids=["complete", "stopped"])
def loop(request: pytest.FixtureRequest) -> Trace:
    trace = execute(LOOP.format(fail=request.param), limits=LOOP_LIMITS)
    assert trace.ok is (request.param is None)
    # every kept round of the 2,000 (counted together, as backward calls are) steps through
    # the function's three lines before its `if`; and the last round, if the run ends it
    rounds = sum(map(kept, range(1, 2_001))) + (request.param is None)
    assert sum(s.locals is not None and s.line < 12 for s in trace.steps) == 3 * rounds
    return trace


def test_a_long_loop_with_line_steps_fits_and_keeps_its_last_and_stopped_steps(
        loop: Trace) -> None:
    # Its rounds sampled as backward calls are, the record fits the cap whole: thinned to
    # half its size, it must keep its last and stopped steps all the same.
    size = len(trace_message(loop))
    assert MAX_RESULT_BYTES // 8 < size <= MAX_RESULT_BYTES
    trace = copy.deepcopy(loop)
    went = _thinned(trace, size // 2)
    assert went and went[0] == ("in the steps before the last, tensors and arrays keep their "
                                "first 100 values and the norm of all of them")
    kept = [i for i, s in enumerate(loop.steps) if s.stopped or i == len(loop.steps) - 1]
    assert kept == [len(loop.steps) - 1] and bool(loop.steps[-1].stopped) is (not loop.ok)
    last, whole = trace.steps[-1], loop.steps[-1]
    assert (last.variables, last.locals, trace.variables) == (
        whole.variables, whole.locals, loop.variables)
    if not loop.ok:  # stopped in the function: its locals, `h` a whole 10,000-value tensor
        assert last.locals is not None and last.locals["h"].numel == 10_000
        assert last.locals["h"].values == whole.locals["h"].values
    cut = 0  # locals cut to a leading block
    for thin, full in zip(trace.steps[:-1], loop.steps[:-1], strict=True):
        assert (thin.locals is None) == (full.locals is None)
        for variables, of in ((thin.variables, full.variables), (thin.locals, full.locals)):
            for name, info in (variables or {}).items():
                _cut_from(asdict(info), asdict(of[name]))
                cut += variables is thin.locals and info != of[name]
    assert cut > 100


def test_the_levels_thin_older_locals_and_spare_the_stopped_step(loop: Trace) -> None:
    trace = copy.deepcopy(loop)
    trace.steps.append(copy.deepcopy(trace.steps[-2]))  # the stopped step no longer last
    trace.steps[-3].stopped = True
    for level, _, _ in LEVELS:
        level(trace)
    for i, (thin, full) in enumerate(zip(trace.steps, [*loop.steps, loop.steps[-2]],
                                         strict=True)):
        assert (thin.locals is None) == (full.locals is None), i
        if thin.stopped or i == len(trace.steps) - 1:  # cut to 10 at most, never dropped
            for name, info in (thin.locals or {}).items():
                _cut_from(asdict(info), asdict(full.locals[name]))
            assert thin.variables.keys() == full.variables.keys()
        else:
            assert thin.variables == {} and thin.locals in (None, {})
