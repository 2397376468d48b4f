"""The caps every run lives under, and the errors that say which one was hit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Caps for one run. The defaults suit a shared public host with two cores."""

    time_s: float = 5.0
    memory_mb: int = 1024
    loop_iterations: int = 1_000_000
    output_chars: int = 100_000
    value_elements: int = 1_000  # values kept per tensor/array in a Snapshot (at least this many)
    steps: int = 1_000  # top-level statements recorded; later ones still run
    line_steps: int = 2_000  # lines recorded inside them (loops, blocks, functions)
    # What those lines' steps may describe, all told: tensor and array elements, and a
    # thousand for each graph node (a state of big tensors costs its values at every line).
    line_work: int = 20_000_000
    graph_nodes: int = 20_000  # nodes of one autograd graph drawn


class LimitExceeded(BaseException):
    """A run hit a cap. A BaseException, so `except Exception` in user code cannot swallow it."""

    kind = "Limit"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class TimeLimit(LimitExceeded):
    kind = "TimeLimit"


class LoopLimit(LimitExceeded):
    kind = "LoopLimit"


class NumberLimit(LimitExceeded):
    kind = "NumberLimit"


def time_message(limits: Limits) -> str:
    """What the learner reads when a run is stopped by the clock."""
    return (f"The program was stopped after {limits.time_s:g} s, the time limit for one run. "
            "Look for a loop that never ends or work that is much larger than intended.")


def memory_message(limits: Limits, detail: str) -> str:
    """What the learner reads when a run asks for more memory than it may have."""
    return (f"The program needed more than {limits.memory_mb} MiB, the memory limit for one "
            f"run. ({detail.strip()[:200]})")
