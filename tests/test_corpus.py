"""Learner programs drawn from PyTorch's own documentation and tutorials behave in the app
exactly as in plain PyTorch: the same printed output (bar object addresses), the same error,
the same values and `.grad` of every variable, and for every backward call the leaf gradients
the recorder kept are the `.grad` plain PyTorch has after that call.

The programs are data: tests/learner_programs/<category>/<name>.py. Plain PyTorch runs them
all in one subprocess (`tests.plain`), the app through one worker pool, with the same seed
and thread count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from explorer.pool.worker import default_pool
from explorer.safety.limits import Limits
from explorer.safety.sandbox import FILENAME
from explorer.trace import Trace
from explorer.trace.graph_view import COLLAPSE_ABOVE, order_fill, view
from explorer.views.hooked import changed
from explorer.views.render import svg
from tests.plain import PlainRun, run_plain, without_addresses
from tests.test_schema import exactly

CORPUS = Path(__file__).parent / "learner_programs"
PROGRAMS = {f"{path.parent.name}/{path.stem}": path.read_text()
            for path in sorted(CORPUS.glob("*/*.py"))}
# Programs the sandbox refuses for now, with the reason: each is compared as soon as it runs.
UNHURRIED = Limits(time_s=60)  # the app's limits but time: gradcheck makes 600 backward calls
REFUSED: dict[str, str] = {}
REVERSE_MODE = re.compile(r"\b(grad|grad_and_value|vjp|jacrev|hessian)\(")  # torch.func's


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[PlainRun, Trace]]:
    """Every program in plain PyTorch and in the app."""
    pool = default_pool()
    codes = list(PROGRAMS.values())
    plain = run_plain(codes, pool.threads, filename=FILENAME, observe=True)
    with ThreadPoolExecutor(pool.size) as runner:  # behaviour, not speed: a busy machine
        traces = list(runner.map(lambda code: pool.run(code, limits=UNHURRIED), codes))
    return dict(zip(PROGRAMS, zip(plain, traces, strict=True), strict=True))


def test_the_corpus_covers_the_docs() -> None:
    counts = {category.name: len(list(category.glob("*.py"))) for category in CORPUS.iterdir()
              if category.is_dir()}
    assert sum(counts.values()) >= 150, counts
    assert min(counts.values()) >= 8, counts
    assert set(REFUSED) <= set(PROGRAMS)


@pytest.mark.parametrize("key", PROGRAMS)
def test_the_app_agrees_with_plain_pytorch(key: str,
                                           runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    plain, trace = runs[key]
    assert plain.returncode == 0 and plain.result is not None, plain.stderr
    if trace.error and trace.error.type == "Refused" and key in REFUSED:
        pytest.skip(f"refused by the sandbox for now: {REFUSED[key]}")
    assert trace.threads == default_pool().threads
    assert without_addresses(trace.stdout) == without_addresses(plain.stdout)
    result = plain.result
    if result["ok"]:
        assert trace.ok, trace.error
    else:
        assert trace.error is not None, result
        assert (trace.error.type, trace.error.message, trace.error.line) == (
            result["type"], result["message"], result["line"])
    for name, expected in result["variables"].items():
        assert name in trace.variables, name
        _same(trace.variables[name], expected, name)
    _same_gradients(trace, result["calls"])


def test_every_trace_is_the_typed_public_form(runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    for key, (_, trace) in runs.items():
        try:
            exactly(trace)
        except (AssertionError, msgspec.ValidationError) as wrong:
            raise AssertionError(f"{key}: {wrong}") from None


def test_derivative_orders_hold_together_and_are_drawn(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    """Every node a create_graph call made is one order above the node whose backward made it,
    in a call the program made; no program without create_graph has any; and the picture
    fills each order in its colour."""
    tagged = 0
    for key, (_, trace) in runs.items():
        made = {n.id: n for g in trace.graphs for n in g.nodes if n.order}
        if "create_graph" not in PROGRAMS[key]:
            assert not made, key
            continue
        orders_of = {n.id: n.order or 1 for g in trace.graphs for n in g.nodes
                     if n.kind == "backward"}
        calls = len(trace.losses)
        for node in made.values():
            maker = orders_of.get(node.made_by or "")
            assert maker is None or maker == node.order - 1, (key, node)
            assert 1 <= node.made_in <= calls, (key, node)
        for graph in trace.graphs:
            present = {n.order for n in graph.nodes if n.order} if graph.dot else set()
            if present and len(graph.nodes) <= COLLAPSE_ABOVE:
                picture = svg(view(graph).dot)
                assert all(f'fill="{order_fill(k)[0]}"' in picture for k in present), key
        tagged += bool(made)
    assert tagged >= 10  # the corpus's programs of gradients of gradients


def test_only_a_hook_changes_what_a_node_received_from_its_edges(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    """A node is said to have received other than its edges carried (explorer.views.hooked)
    only in a program with hooks, and in those whose hooks change a gradient."""
    said = {key for key, (_, trace) in runs.items() for call in trace.backward if changed(call)}
    assert all("hook" in PROGRAMS[key] for key in said), said
    assert {"hooks/clip_with_hooks", "hooks/node_prehook", "hooks/leaf_hook_order"} <= said


def test_every_library_pass_is_drawn_at_the_programs_line(
        runs: dict[str, tuple[PlainRun, Trace]]) -> None:
    """A backward pass a library function ran (torch.func, autograd.functional, gradcheck)
    names a line of the program that calls into a library, and its graph is one that
    graphviz draws; the corpus's torch.func programs have such passes, inside transforms."""
    drawn, within = set(), set()
    for key, (_, trace) in runs.items():
        lines = PROGRAMS[key].splitlines()
        for made in trace.library:
            assert "(" in lines[made.line - 1], (key, made)
            graph = trace.graphs[made.graph]
            if graph.dot:
                assert "<svg" in svg(view(graph).dot), key
            drawn.add(key)
            within |= {w.transform for w in made.within}
    reverse = {key for key, code in PROGRAMS.items() if key.startswith("torch_func/")
               and REVERSE_MODE.search(code)}
    assert len(reverse) >= 8 and reverse <= drawn, reverse - drawn
    assert {"vmap", "grad", "jvp"} <= within


def _same(got: dict[str, Any], expected: dict[str, Any], name: str) -> None:
    """One variable: its values and, for a tensor, its `.grad`."""
    if expected["kind"] == "str":
        assert expected["values"].startswith(got.values), name
        return
    _same_values(got.values, expected["values"], name)
    if expected["kind"] == "tensor":
        assert (got.grad is None) == (expected["grad"] is None), f"{name}.grad"
        if expected["grad"] is not None:
            _same_values(got.grad, expected["grad"], f"{name}.grad")


def _same_gradients(trace: Trace, calls: list[dict[str, Any]]) -> None:
    """Each recorded backward call's leaf gradients against plain PyTorch's `.grad` after the
    same call (calls counted among the program's backward calls, recorded in full or not)."""
    numbers = [s.call for s in trace.losses if s.kind == "backward"]
    assert len(numbers) == len(calls)
    nth = {number: i for i, number in enumerate(numbers)}
    for call in trace.backward:
        if call.kind != "backward":
            continue
        expected = calls[nth[call.call]]
        for leaf in call.leaf_grads:
            for name in leaf.names:
                where = f"{name}.grad after backward call {call.call}"
                assert (leaf.grad is None) == (expected[name] is None), where
                if leaf.grad is not None:
                    _same_values(leaf.grad.values, expected[name], where)


def _same_values(got: Any, expected: list[float] | None, where: str) -> None:
    """The app's (leading) values equal plain PyTorch's, NaN equal to NaN."""
    unavailable = isinstance(got, str) and got.startswith("<values unavailable")
    assert unavailable == (expected is None), where
    if expected is None:
        return
    flat = list(_flat(got))
    assert len(flat) <= len(expected) and (flat or not expected), where
    np.testing.assert_array_equal(np.array(flat, dtype=float),
                                  np.array(expected[:len(flat)], dtype=float), err_msg=where)


def _flat(values: Any) -> Iterator[float]:
    """A Snapshot's nested values as plain PyTorch's flat floats (complex: real, imaginary)."""
    if isinstance(values, list):
        for value in values:
            yield from _flat(value)
    elif isinstance(values, str):
        try:
            yield float(values)  # "nan", "inf", integers past 2**53
        except ValueError:
            number = complex(values)
            yield from (number.real, number.imag)
    elif isinstance(values, complex):
        yield from (values.real, values.imag)
    else:
        yield float(values)
