"""Section 8: the server's CPU for a Training page rerun after a long run. The loop of the
hosted limits' shape, `(ws[i % 1000] * 2.0).backward()` over 1,000 leaves, is run in the pool
under the hosted training limits; then the page is run through Streamlit's AppTest with that
run's Trace, first when its charts are made and then on each rerun (a widget touched, a tab
come back), each timed in this process's CPU seconds."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from streamlit.testing.v1 import AppTest

from explorer.bench.served import ROOT
from explorer.pool.worker import WorkerPool
from explorer.serve.hosting import HOSTED
from explorer.views.training import calls

LONG_LOOP = """import torch

ws = [torch.ones(1, requires_grad=True) for _ in range(1000)]
for i in range({count}):
    (ws[i % 1000] * 2.0).backward()
"""
FULL_CALLS, QUICK_CALLS = 120_000, 5_000


@dataclass
class Rerun:
    """The backward calls the run made, the CPU seconds of the page's first run with it and
    of each rerun after."""

    calls: int
    error: str | None
    first: float
    reruns: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.reruns)


def measure_rerun(pool: WorkerPool, quick: bool, reruns: int) -> Rerun:
    """The long loop run once, then the Training page with its Trace, `reruns` times."""
    code = LONG_LOOP.format(count=QUICK_CALLS if quick else FULL_CALLS)
    trace = pool.run(code, limits=HOSTED.training_limits)
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.switch_page("pages/7_Training.py")
    at.run()
    at.session_state["training.code"] = code
    at.session_state["training.run"] = (code, trace)
    times = []
    for _ in range(reruns + 1):
        started = time.process_time()
        at.run()
        times.append(time.process_time() - started)
        assert not at.exception, at.exception
    return Rerun(calls(trace.losses), trace.error.type if trace.error else None, times[0],
                 times[1:])
