"""Famous lessons at their published sizes, for the benchmark: the four exercises of
Karpathy's "becoming a backprop ninja" (tests/learner_programs/makemore/), each run in the
pool as the app runs it, timed and weighed: the record as sent, and as it would be with
every step's variables written whole (as it was sent before a step sent only what changed).
"""

from __future__ import annotations

import ast
import json
import statistics
import time
from dataclasses import dataclass

from explorer.bench.served import ROOT
from explorer.pool.worker import WorkerPool
from explorer.trace.wire import MAX_RESULT_BYTES, trace_message

LESSONS = sorted((ROOT / "tests" / "learner_programs" / "makemore").glob("backprop_ninja_ex*.py"))


@dataclass
class Lesson:
    """One lesson's run: seconds (median), statements, what it sent and what it would have
    sent whole (bytes), and whether its record was thinned to fit."""

    name: str
    code: str
    statements: int
    seconds: float
    error: str | None
    sent: int
    whole: int
    thinned: bool
    bare: float = 0.0


def measure_lessons(pool: WorkerPool, runs: int) -> list[Lesson]:
    """Each lesson `runs` times in `pool`, then once in this process to weigh its record
    whole (this imports PyTorch here)."""
    from explorer.record.execute import execute

    lessons = []
    for path in LESSONS:
        code = path.read_text()
        times, trace = [], None
        for _ in range(runs):
            started = time.perf_counter()
            trace = pool.run(code)
            times.append(time.perf_counter() - started)
        assert trace is not None
        here = execute(code)
        lessons.append(Lesson(
            path.stem, code, len(ast.parse(code).body), statistics.median(times),
            trace.error.type if trace.error else None, len(trace_message(trace)),
            len(json.dumps(here.to_dict(), ensure_ascii=False, default=str).encode()),
            any(note.key == "thinned" for note in trace.notes)))
    return lessons


def fits(lesson: Lesson) -> bool:
    """Ran to its end and sent everything: nothing thinned, within the cap."""
    return lesson.error is None and not lesson.thinned and lesson.sent <= MAX_RESULT_BYTES
