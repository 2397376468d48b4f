"""Section 6: the operating-system wall's cost, a walled pool against a bare one."""

from __future__ import annotations

import statistics
import time
from unittest import mock

from explorer.content.examples import by_key
from explorer.pool.worker import WorkerPool


def measure_wall(runs: int) -> dict[str, tuple[float, float]]:
    """Median seconds per run of a few programs, walled and bare, run turn about."""
    walled, bare = WorkerPool(size=1, kept_bytes=0), _bare_pool()
    programs = {"print(1)": "print(1)", "autograd-basics": by_key("autograd-basics").code}
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in programs}
    try:
        for pool in (walled, bare):
            pool.run("pass")
        for _ in range(runs):
            for key, code in programs.items():
                for pool, into in zip((walled, bare), times[key], strict=True):
                    started = time.perf_counter()
                    pool.run(code)
                    into.append(time.perf_counter() - started)
    finally:
        walled.close()
        bare.close()
    return {k: (statistics.median(w), statistics.median(b)) for k, (w, b) in times.items()}


def _bare_pool() -> WorkerPool:
    """A pool without the box and the lock: the path runs took before the wall."""
    with mock.patch("explorer.safety.box.missing", return_value="measured without"), \
            mock.patch("explorer.safety.confine.missing", return_value=["measured without"]):
        return WorkerPool(size=1, kept_bytes=0, require_walls=False)
