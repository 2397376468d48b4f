"""Repeatable runs are computed once: the same seeded program, device, limits, threads and
versions give the same Trace, kept in bounded memory; anything else runs every time."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from explorer.runner.results import Results
from explorer.runner.trace import Trace
from explorer.runner.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.serve.hosting import settings


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
                  {"keep": (3,)}):
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


def test_a_run_streamed_as_it_goes_runs_every_time(pool: WorkerPool) -> None:
    pool.run(RANDOM)
    heard: list[dict] = []
    streamed = pool.run(RANDOM, on_progress=heard.append)
    assert not streamed.reused and heard  # the learner sees each backward call come in


def test_the_kept_runs_take_bounded_memory_the_least_recently_used_going_first() -> None:
    results = Results(max_bytes=100)
    trace = Trace(ok=True, repeatable=True)
    for name in "abc":
        results.put(name, trace, 40)
    assert len(results) == 2 and results.size == 80 and results.get("a") is None
    assert results.get("b") is trace  # b used: c goes first
    results.put("d", trace, 40)
    assert results.get("c") is None and results.get("b") is trace and results.get("d")
    results.put("e", trace, 101)  # larger than all: never kept
    results.put("f", Trace(ok=True), 1)  # not repeatable: never kept
    assert results.get("e") is None and results.get("f") is None
    assert (results.hits, results.misses) == (3, 4)


def test_a_key_differs_for_each_thing_that_decides_a_run() -> None:
    base = dict(code="x = 1\n", device="cpu", limits=Limits(), seed=0, threads=1, keep=())
    keys = {Results.key(**base)} | {Results.key(**base | {name: value}) for name, value in (
        ("code", "x = 2\n"), ("device", "cuda"), ("limits", Limits(time_s=4.0)), ("seed", 1),
        ("threads", 2), ("keep", (1,)))}
    assert len(keys) == 7
