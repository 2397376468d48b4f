"""Section 2: warm end-to-end latency of every seed program (explorer.content.examples)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from explorer.bench.pipeline import Served, serve
from explorer.content.examples import EXAMPLES
from explorer.pool.worker import WorkerPool

SEED_BUDGET_S = 15.0  # a seed program slower than this is run fewer times (at least 5)


@dataclass
class Seed:
    """Warm end-to-end times of one seed program, and its time in plain PyTorch (seconds)."""

    key: str
    runs: list[Served]
    error: str | None
    bare: float = 0.0

    @property
    def times(self) -> list[float]:
        return [r.total for r in self.runs]

    def pct(self, q: int) -> float:
        """The q-th percentile (nearest rank)."""
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def measure_seeds(pool: WorkerPool, runs: int) -> list[Seed]:
    """`runs` runs of each seed program, fewer (at least 5) past SEED_BUDGET_S."""
    seeds = []
    for example in EXAMPLES:
        done: list[Served] = []
        started = time.perf_counter()
        while len(done) < runs and (len(done) < 5 or time.perf_counter() - started
                                    < SEED_BUDGET_S):
            done.append(serve(pool, example.code))
        seeds.append(Seed(example.key, done, done[0].error))
    return seeds
