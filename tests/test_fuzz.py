"""Fuzzing: whatever a stranger types, the explorer answers with a Trace, never an exception.

Hypothesis makes programs from the teaching grammar (assignments of torch expressions, small
loops, `if`, `try`, calls, and attribute names that include dunder, private and blocked ones),
random bytes, random text and damaged seed programs. Most run in-process through
`explorer.record.execute.execute` (fast) under a memory cap like a worker's; a smaller number run
through a real WorkerPool, which must answer as the in-process run did and keep no worker
behind.
"""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.content.examples import EXAMPLES
from explorer.pool.worker import WorkerPool
from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.wire import trace_message
from tests.test_worker import run_processes, wait_until

LIMITS = Limits(time_s=1.0, loop_iterations=10_000)
FUZZ = settings(deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NAMES = ("a", "b", "x", "y")
PRELUDE = "a = torch.ones(3)\nb = torch.randn(2, 3, requires_grad=True)\nx = 2\ny = 0\n"
# Attribute names and called functions: ordinary ones (four times as likely), and ones that
# must be refused (dunder, private, blocked) or lead outside (`torch.os`).
ATTRS = ("shape", "T", "grad", "data", "dtype", "requires_grad", "grad_fn", "is_leaf", "ndim",
         "real", "_version", "_base", "__doc__", "__name__", "sum", "mean", "tolist", "item",
         "backward", "detach", "clone", "numpy", "relu", "add_", "zero_", "format", "nn",
         "functional", "linalg", "next_functions", "weight", "parameters", "pi") * 4 + (
         "__class__", "__dict__", "__globals__", "__init__", "_private", "_C", "storage", "os",
         "sys", "builtins", "load", "save", "jit", "utils", "ctypes", "tofile", "gi_frame",
         "f_globals", "mro", "hub", "serialization", "cuda", "random")
# None of these iterates in C over an argument that could be huge.
CALLS = ("torch.relu", "torch.sigmoid", "torch.exp", "torch.tensor", "torch.as_tensor",
         "torch.is_tensor", "F.relu", "np.array", "np.sqrt", "math.sqrt", "math.floor", "len",
         "abs", "str", "repr", "float", "int", "bool", "round", "type", "print", "isinstance",
         "pow", "format") * 4 + ("getattr", "eval", "open", "__import__", "vars", "super")
LEAVES = ("torch.ones(3)", "torch.zeros(2, 3)", "torch.randn(3, requires_grad=True)",
          "torch.arange(4.0)", "torch.eye(2)", "torch.tensor([1.0, -2.0])", "np.ones(3)",
          "np.arange(4)", "True", "None", "'s'", "'{0}'", "'{0.__class__}'", "[1, 2]", "(1,)",
          "{}", "torch", "np", "math", "F", "torch.nn", "torch.float64", "torch.nn.Linear(3, 2)")
OPS = ("+", "-", "*", "/", "//", "%", "@", "**", "<<", "==", "<", "and", "or")


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(NAMES), st.sampled_from(LEAVES),
                       st.integers(-3, 9).map("({})".format), st.floats(-2, 2).map("({!r})".format))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        args = st.lists(inner, max_size=3).map(", ".join)
        return st.one_of(
            st.builds("({} {} {})".format, inner, st.sampled_from(OPS), inner),
            st.builds("{}.{}".format, inner, st.sampled_from(ATTRS)),
            st.builds("{}({})".format, st.sampled_from(CALLS), args),
            st.builds("{}({})".format, inner, args),
            st.builds("{}[{}]".format, inner, inner),
            st.builds("(-{})".format, inner),
            st.builds("(lambda {}: {})".format, st.sampled_from(NAMES), inner),
            st.builds("[{} for {} in range({})]".format, inner, st.sampled_from(NAMES),
                      st.integers(0, 4)),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def _statements(depth: int) -> st.SearchStrategy[list[str]]:
    expr = _expressions()
    name = st.sampled_from(NAMES)
    simple = st.one_of(
        st.builds("{} = {}".format, name, expr),
        st.builds("{} {}= {}".format, name, st.sampled_from("+-*"), expr),
        st.builds("print({})".format, expr),
        expr,
        st.builds("{}.{} = {}".format, name, st.sampled_from(ATTRS), expr),
        st.builds("from {} import {}".format, st.sampled_from(("torch", "numpy", "torch.nn")),
                  st.sampled_from(ATTRS)),
        st.just("import torch.nn.functional as F"),
    ).map(lambda line: [line])
    if depth == 0:
        return simple
    body = st.lists(_statements(depth - 1), min_size=1, max_size=3).map(
        lambda blocks: ["    " + line for block in blocks for line in block])
    compound = st.one_of(
        st.builds(lambda n, k, b: [f"for {n} in range({k}):", *b], name, st.integers(0, 4), body),
        st.builds(lambda e, b, c: [f"if {e}:", *b, "else:", *c], expr, body, body),
        st.builds(lambda b: ["try:", *b, "except (RuntimeError, TypeError) as e:", "    pass"],
                  body),
        st.builds(lambda n, b: [f"def f({n}):", *b, f"    return {n}"], name, body),
        st.builds(lambda b: ["while y < 3:", "    y = y + 1", *b], body),
    )
    return st.one_of(simple, compound)


PROGRAMS = st.lists(_statements(2), min_size=1, max_size=6).map(
    lambda blocks: PRELUDE + "\n".join(line for block in blocks for line in block) + "\n")


@contextmanager
def capped_memory(mb: int = 1024) -> Iterator[None]:
    """This process may grow by at most `mb` MiB, as a worker may: a generated program that
    asks for more gets a MemoryError instead of the test machine's memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + mb * 2**20, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def answered(code: str) -> Trace:
    """Run `code` in-process and check that the answer is a clean Trace."""
    with capped_memory():
        trace = execute(code, limits=LIMITS)
    check(trace)
    return trace


def check(trace: Trace) -> None:
    """A Trace that crosses the wire as strict JSON: ok, or an error with a type and message."""
    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in a Trace's JSON")

    wire = Trace.from_dict(json.loads(trace_message(trace), parse_constant=no_constants))
    assert wire.ok == trace.ok
    if trace.ok:
        assert trace.error is None
    else:
        assert trace.error is not None
        assert trace.error.type and isinstance(trace.error.message, str)
        assert trace.error.line is None or trace.error.line >= 1


@settings(FUZZ, max_examples=1200)
@given(PROGRAMS)
def test_generated_programs(code: str) -> None:
    answered(code)


@settings(FUZZ, max_examples=500)
@given(st.binary(max_size=300).map(lambda raw: raw.decode("utf-8", "surrogateescape")))
def test_random_bytes(code: str) -> None:
    answered(code)


@settings(FUZZ, max_examples=500)
@given(st.text(st.characters(codec=None), max_size=200))
def test_random_text(code: str) -> None:
    answered(code)


SHORT_EXAMPLES = [e.code for e in EXAMPLES if len(e.code) < 400 and "range(" not in e.code]


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(SHORT_EXAMPLES), st.data())
def test_damaged_seed_programs(code: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(code)))
    end = data.draw(st.integers(start, min(len(code), start + 20)))
    insert = data.draw(st.one_of(st.text(max_size=10), st.sampled_from(
        [".__class__", "._C", "\n    ", "(", ")", ":", "'", "**9**9", ".os", " import os"])))
    answered(code[:start] + insert + code[end:])


@pytest.fixture(scope="module")
def fuzz_pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(size=2, limits=Limits(time_s=2.0, loop_iterations=10_000), kept_bytes=0)
    yield pool
    assert wait_until(lambda: run_processes(pool) == [])  # no worker left behind
    assert pool.run("print(6 * 7)").stdout == "42\n"
    pool.close()


@settings(FUZZ, max_examples=40)
@given(PROGRAMS)
def test_generated_programs_in_a_worker(fuzz_pool: WorkerPool, code: str) -> None:
    trace = fuzz_pool.run(code)
    check(trace)
    here = answered(code)
    # The same answer as in-process (values may differ only in memory addresses).
    assert (trace.ok, trace.error and trace.error.type) == \
        (here.ok, here.error and here.error.type), (trace.error, here.error)
