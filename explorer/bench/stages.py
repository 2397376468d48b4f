"""Section 5: where the time goes — the chain executed in this process, stage by stage."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any
from unittest import mock

from explorer.bench.pipeline import SCALE_LIMITS, chain
from explorer.trace import Trace
from explorer.trace.wire import trace_message


@dataclass
class Stages:
    """The chain executed in this process (no fork, no worker process), stage by stage."""

    ops: int
    execute: float
    graphs: float  # recording graphs after each statement ...
    graph_calls: float
    at_backward: float  # ... and when backward is called, both inside `execute`
    hooks: float  # hooking every node of the pass
    encode: float  # the answer as a worker writes it
    decode: float  # ... as the server reads it: decoded and checked in one pass
    megabytes: float  # of the answer


@contextmanager
def _timing(target: Any, name: str, into: list[float]) -> Iterator[None]:
    """Add the time of every call of `target.name` to `into`."""
    original = getattr(target, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            into.append(time.perf_counter() - started)

    with mock.patch.object(target, name, timed):
        yield


def measure_stages(ops: int, runs: int) -> Stages:
    """Each stage's median over `runs` runs, each after a full garbage collection."""
    done = []
    for _ in range(runs):
        gc.collect()
        done.append(_stages(ops))
    return Stages(ops, *(statistics.median(getattr(d, f.name) for d in done)
                         for f in fields(Stages)[1:]))


def _stages(ops: int) -> Stages:
    from explorer.record import backward, execute

    per_step: list[float] = []
    at_backward: list[float] = []
    hooks: list[float] = []
    with (_timing(execute, "record_graph", per_step), _timing(backward, "record", at_backward),
          _timing(backward.Recorder, "_hook", hooks)):
        started = time.perf_counter()
        trace = execute.execute(chain(ops), limits=SCALE_LIMITS)
        ran = time.perf_counter() - started
    started = time.perf_counter()
    answer = trace_message(trace)
    encoded = time.perf_counter() - started
    started = time.perf_counter()
    Trace.from_json(answer, SCALE_LIMITS)
    decoded = time.perf_counter() - started
    return Stages(ops, ran, sum(per_step), len(per_step), sum(at_backward), sum(hooks),
                  encoded, decoded, len(answer) / 2**20)
