"""Section 2: warm end-to-end latency of every seed program (explorer.content.examples);
and `--seeds --against REVISION`: the same against a git revision's checkout."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.bench.pipeline import Served, serve
from explorer.bench.served import ROOT, checkout
from explorer.bench.table import ms, table
from explorer.content.examples import EXAMPLES
from explorer.pool.worker import WorkerPool

SEED_BUDGET_S = 15.0  # a seed program slower than this is run fewer times (at least 5)
POOL_SIZE = 2  # the app's: each run gets os.cpu_count() // 2 threads
SEED_AGAINST = 1.1  # the seed programs' p50 against a revision's: unchanged within 10%


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


# Run in a checkout, this one's or a revision's, with {"codes", "runs", "size"} on its
# standard input: each program once to warm up, then `runs` more each, printed as seconds in
# JSON. It uses only what every revision since the pool's kept results (`kept_bytes`) has.
TIMES = """
import json, sys
from explorer.bench.pipeline import serve
from explorer.pool.worker import WorkerPool
asked = json.load(sys.stdin)
pool = WorkerPool(size=asked["size"], kept_bytes=0)
try:
    for code in asked["codes"].values():
        serve(pool, code)
    times = {key: [serve(pool, code).total for _ in range(asked["runs"])]
             for key, code in asked["codes"].items()}
finally:
    pool.close()
json.dump(times, sys.stdout)
"""


def seeds_against(revision: str, quick: bool, progress: Callable[[str], None]) -> list[str]:
    """This checkout's seed programs, end to end through a pool, in this checkout and in git
    `revision`'s, a pool each in a process of its own: rounds turn about, each program warm
    `runs` times a round. A table of each program's median both ways, then the p50 over all
    runs and its target."""
    runs, rounds = (1, 2) if quick else (7, 3)
    codes = {example.key: example.code for example in EXAMPLES}
    with checkout(revision) as tree:
        roots = {"now": ROOT, revision: tree}
        times: dict[str, dict[str, list[float]]] = {name: {key: [] for key in codes}
                                                    for name in roots}
        for turn in range(rounds):
            for name in list(roots)[::-1 if turn % 2 == 0 else 1]:  # each first in turn
                progress(f"seed programs, round {turn + 1} of {rounds}: {name}")
                for key, taken in _times(name, roots[name], codes, runs).items():
                    times[name][key] += taken
    now, then = times["now"], times[revision]
    rows = [[key, ms(statistics.median(now[key])), ms(statistics.median(then[key])),
             f"{statistics.median(now[key]) / statistics.median(then[key]):.2f}"]
            for key in codes]
    p50_now, p50_then = (statistics.median(t for taken in side.values() for t in taken)
                         for side in (now, then))
    ratio = p50_now / p50_then
    return [f"== Seed programs against {revision} (end to end through a pool of "
            f"{POOL_SIZE}, {rounds} rounds turn about, {runs} warm runs of each a round; "
            "medians) ==",
            table(["example", "now_ms", f"{revision}_ms", "ratio"], rows), "", "== Targets ==",
            f"{'PASS' if ratio <= SEED_AGAINST else 'MISS'}  seed programs' p50 within "
            f"{SEED_AGAINST - 1:.0%} of {revision}'s: {ms(p50_now)} ms against "
            f"{ms(p50_then)} ms ({ratio:.2f}×)"]


def _times(name: str, root: Path, codes: dict[str, str], runs: int) -> dict[str, list[float]]:
    """`TIMES` run in the checkout `name` at `root`; LookupError with the end of its error
    where it cannot run there (a revision older than the pool's `kept_bytes`)."""
    done = subprocess.run([sys.executable, "-c", TIMES], cwd=root, check=False, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(root)},
                          input=json.dumps({"codes": codes, "runs": runs, "size": POOL_SIZE}))
    if done.returncode:
        said = done.stderr.strip().splitlines()[-1:] or ["no error was printed"]
        raise LookupError(f"the seed programs cannot be timed in {name}: {said[0]}")
    return json.loads(done.stdout)
