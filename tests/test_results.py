"""Repeatable runs are computed once: the same seeded program, device, limits, threads and
versions give the same Trace, kept in bounded memory; anything else runs every time."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import tracemalloc
import weakref
from collections.abc import Iterator

import pytest

from explorer.content.examples import EXAMPLES
from explorer.pool.results import ENTRY_BYTES, Results
from explorer.pool.worker import MAX_RESULT_BYTES, WorkerPool
from explorer.safety.limits import Limits
from explorer.serve.hosting import settings
from explorer.trace import Trace
from explorer.trace.wire import trace_message
from tests.forged import forged
from tests.programs import SEED


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """The app's pool, keeping repeatable runs as the app's does."""
    workers = WorkerPool(size=settings().workers)
    yield workers
    workers.close()


RANDOM = "w = torch.randn(3, requires_grad=True)\nloss = (w * w).sum()\nloss.backward()\n" \
         "print(w.grad)\n"


def test_a_seeded_run_is_kept_and_given_again_as_a_fresh_run_gives_it(pool: WorkerPool) -> None:
    hits = pool.results.hits
    first = pool.run(RANDOM)
    again = pool.run(RANDOM)
    assert first.ok and first.repeatable and not first.reused
    assert again.reused and pool.results.hits == hits + 1
    assert again.stdout == first.stdout and again.variables == first.variables
    fresh = WorkerPool(1, threads=pool.threads)  # a pool of its own: nothing kept
    try:
        assert fresh.run(RANDOM).stdout == first.stdout
    finally:
        fresh.close()


def test_what_decides_a_run_is_in_its_key(pool: WorkerPool) -> None:
    pool.run(RANDOM)
    kept = pool.results.hits
    for other in ({"seed": 1}, {"limits": dataclasses.replace(pool.limits, value_elements=7)},
                  {"keep": (3,)}, {"rounds": ((0, 3),)}):
        assert not pool.run(RANDOM, **other).reused, other
    assert not pool.run(RANDOM + "# a comment\n").reused
    assert pool.results.hits == kept


@pytest.mark.parametrize("code", [
    "import time\nprint(time.perf_counter() > 0)\n",  # reaches the clock
    "from time import monotonic\nstart = monotonic()\n",
    "r = np.random.default_rng()\nprint(r.random())\n",  # draws on entropy
    "g = torch.Generator()\ng.seed()\nprint(torch.rand(1, generator=g))\n",
    "while True:\n    x = 1\n",  # runs out of time
])
def test_a_run_that_may_not_repeat_is_run_every_time(pool: WorkerPool, code: str) -> None:
    limits = dataclasses.replace(pool.limits, time_s=1.0, loop_iterations=10**9)
    first, second = pool.run(code, limits=limits), pool.run(code, limits=limits)
    assert not first.repeatable and not second.reused
    assert not pool.run(RANDOM, seed=None).reused and not pool.run(RANDOM, seed=None).reused


# NumPy reads 'now' and 'today' (any case) as the clock wherever it makes a datetime64 from
# text; Python's datetime objects, which a datetime64 gives, read it too.
CLOCKS = [
    "print(np.datetime64('now'))",
    "print(np.datetime64('today'))",
    "print(np.datetime64('now', 's'))",
    "print(np.datetime64('NOW', 'ms'))",
    "print(np.datetime64(b'now'))",
    "print(np.datetime_as_string(np.datetime64('now')))",
    "print(np.array(['now'], dtype='datetime64[s]'))",
    "print(np.array('today', dtype='M8[D]'))",
    "print(np.array(['now']).astype('datetime64'))",
    "print(np.array(['now']).astype(np.datetime64))",
    "print(np.asarray(['now'], '<M8[s]').view('i8'))",
    "t = np.full(2, 'now', dtype='M8[s]')",  # only shown as a variable
    "a = np.zeros(1, 'M8[s]')\na[0] = 'now'\nprint(a)",
    "print(np.array([b'now']).astype('M8[s]'))",
    "print(np.array([('now', 1)], dtype=[('t', 'M8[s]'), ('n', 'i4')]))",
    "print(np.array([('now', 1)], dtype='M8[s],i4'))",
    "print(np.array('now', '(2,)M8[s]'))",
    "print(np.busday_offset('today', 0, roll='forward'))",
    "print(np.is_busday('today'))",
    "print(np.busday_count('today', '2200-01-01'))",
    "print(f\"{np.array(['now'], 'M8[s]')}\")",
    "print(int(np.array(['now'], 'M8[s]').astype('i8')[0]))",
    "print(torch.tensor(np.array(['now'], 'M8[s]').astype('i8')))",
    "print(np.datetime64('2020-01-01T00:00').item().now())",
    "print(type(np.datetime64('2020-01-01').item()).today())",
    "print(np.datetime64('2020-01-01T00:00').astype('O').fromtimestamp(0).now())",
    "print(np.array(['n' + 'ow']).astype(chr(77) + '8[s]'))",  # names built as it runs
    "print(np.datetime64(chr(110) + 'ow'))",
    "print(np.array(['to' + 'day']).astype(chr(77)) + np.timedelta64(1, 'D'))",
]


@pytest.mark.parametrize("code", CLOCKS)
def test_a_run_that_reads_the_clock_is_run_every_time(pool: WorkerPool, code: str) -> None:
    first, second = pool.run(code), pool.run(code)
    assert first.ok, first.error
    assert not first.repeatable and not second.repeatable and not second.reused


@pytest.mark.parametrize("code", [
    "print('the time is now')",
    "m = torch.nn.Linear(2, 1)\nprint(list(m.state_dict().keys()))",  # an OrderedDict's
    "x = np.arange(3)\nprint(x.astype('f4'), x.dtype.kind)",
    "print('5 m/s', 'Mm', np.array(['2020-01-01']))",
])
def test_a_run_near_a_clock_that_repeats_is_kept(pool: WorkerPool, code: str) -> None:
    first = pool.run(code)
    assert first.ok and first.repeatable and pool.run(code).reused


def test_a_run_streamed_as_it_goes_runs_every_time(pool: WorkerPool) -> None:
    pool.run(RANDOM)
    heard: list[dict] = []
    streamed = pool.run(RANDOM, on_progress=heard.append)
    assert not streamed.reused and heard  # the learner sees each backward call come in


def test_the_kept_runs_take_bounded_memory_the_least_recently_used_going_first() -> None:
    trace = Trace(ok=True, repeatable=True)
    one = len(pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)) + ENTRY_BYTES
    results = Results(max_bytes=2 * one + one // 2)
    for name in "abc":
        results.put(name, trace)
    assert len(results) == 2 and results.size == 2 * one and results.get("a") is None
    assert results.get("b") == dataclasses.replace(trace, reused=True)  # b used: c goes first
    results.put("d", trace)
    assert results.get("c") is None and results.get("b") and results.get("d")
    results.put("e", Trace(ok=True, repeatable=True, stdout="x" * 3 * one))  # over all: never
    results.put("f", Trace(ok=True))  # not repeatable: never kept
    assert results.get("e") is None and results.get("f") is None
    assert (results.hits, results.misses) == (3, 4)


def big_answer(steps: int, tensor: str = "torch.randn(1000)") -> str:
    """A short program whose answer grows with each of its `steps` statements: eight
    `tensor`s, all changed by each statement (what a statement leaves as it was does not
    cross the wire again)."""
    names = ", ".join(f"v{i}" for i in range(8))
    change = f"{names} = " + ", ".join(f"v{i} + 1" for i in range(8))
    return "\n".join([f"{names} = " + ", ".join([tensor] * 8)] + [change] * steps) + "\n"


def test_the_kept_runs_memory_stays_under_its_bound_with_the_largest_answers(
        pool: WorkerPool) -> None:
    """What the cache holds is what it counts, measured with the largest answers a run makes:
    by bytes (just under the 16 MiB a run may send) and by objects (just under the million
    lists a run's answer may hold: decoded, ~90 MiB); and with many small ones (where a key
    and its place in the table weigh most). It holds nothing of the Traces it is given."""
    by_bytes = pool.run(big_answer(108))
    by_objects = pool.run(big_answer(112, "torch.zeros(1000, 1)"))
    assert 15 << 20 < len(trace_message(by_bytes)) <= MAX_RESULT_BYTES
    assert trace_message(by_objects).count(b"[") > 900_000
    for trace, count, bound in ((by_bytes, 12, 64 << 20), (by_objects, 8, 64 << 20),
                                (pool.run(SEED), 5_000, 1 << 20)):
        assert trace.ok and trace.repeatable
        results = Results(bound)
        tracemalloc.start()
        try:
            for n in range(count):
                results.put(str(n), trace)
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert 1 < len(results) < count and held <= bound, (len(results), held)
        given = pickle.loads(pickle.dumps(trace))  # a run's Trace of its own
        results.put("given", given)
        dropped = weakref.ref(given)
        del given  # its caller is done with it: nothing of it stays
        assert dropped() is None and results.get("given") is not None


def test_a_changed_trace_never_reaches_a_later_run(pool: WorkerPool) -> None:
    code = SEED + "print(out)\n"
    fresh = pool.run(code)
    assert fresh.repeatable and fresh.steps and fresh.variables and fresh.graphs
    first = copy.deepcopy(fresh)
    for trace in (fresh, pool.run(code)):  # the run's own Trace, then one given again
        trace.stdout = "changed"
        trace.variables["x"].values = "changed"
        trace.steps[0].variables.clear()
        trace.steps.append(trace.steps[0])
        trace.graphs[0].nodes.clear()
        trace.notes.append("changed")
        again = pool.run(code)
        assert again.reused and dataclasses.replace(again, reused=False) == first


def test_every_lesson_program_is_kept(pool: WorkerPool) -> None:
    """Deterministic programs stay repeatable: every lesson's, run again, is given again."""
    for example in EXAMPLES:
        first = pool.run(example.code)
        assert first.repeatable, example.key
        assert pool.run(example.code).reused, example.key


def test_a_key_differs_for_each_thing_that_decides_a_run() -> None:
    base = dict(code="x = 1\n", device="cpu", limits=Limits(), seed=0, threads=1, keep=())
    keys = {Results.key(**base)} | {Results.key(**base | {name: value}) for name, value in (
        ("code", "x = 2\n"), ("device", "cuda"), ("limits", Limits(time_s=4.0)), ("seed", 1),
        ("threads", 2), ("keep", (1,)), ("rounds", ((0, 1),)))}
    assert len(keys) == 8


@pytest.mark.parametrize("values", [[0.5] * 1000, [[0.5]] * 500, ["x"] * 1000],
                         ids=["floats", "lists", "texts"])
def test_what_the_cache_counts_is_what_it_holds_for_forged_answers(values: list) -> None:
    """Answers forged to decode large (a float in four bytes of JSON takes 32 in the
    server): what the cache counts is within 2× of what it holds, and that stays under its
    bound, however many it is given."""
    tensor = {"kind": "tensor", "shape": [len(values)], "dtype": "torch.float32",
              "device": "cpu", "requires_grad": False, "is_leaf": True, "numel": len(values),
              "truncated": False}
    steps = [{"line": n + 1, "end_line": n + 1, "output": "",
              "variables": {f"v{i}": tensor | {"values": values[i:] + values[:i]}
                            for i in range(8)}} for n in range(40)]
    answer = json.dumps(forged(steps=steps, repeatable=True)).encode()
    trace = Trace.from_json(answer)
    assert trace.ok and trace.repeatable and len(trace.steps) == 40
    results = Results(16 << 20)
    tracemalloc.start()
    try:
        for n in range(20):
            results.put(str(n), Trace.from_json(answer))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 1 < len(results) < 20 and results.size <= 16 << 20
    assert results.size / 2 <= held <= 2 * results.size, (results.size, held)
