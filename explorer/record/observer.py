"""The recorder reads the program's values and never runs the program's code, though a library
function it calls may call back into the program: a container's repr calls its items'
`__repr__`, a module's repr their `extra_repr`, a length hint a `__len__`, a set of modules
their `__hash__`. Within `refusing()` a call into any function of the program's raises
ProgramCode before the function's first line runs (a profile function, sys.setprofile, sees
each call as it starts), and the block learns that it was refused even where a library swallowed
the error: the recorder then says what it could not read, and the program never knows."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from types import FrameType
from typing import Any

from explorer.safety.sandbox import FILENAME


class ProgramCode(Exception):
    """The recorder was about to run a function of the program's."""


@dataclass
class Refusal:
    """Whether a block `refusing()` guarded was refused a call into the program's code."""

    refused: bool = False


@contextmanager
def refusing() -> Iterator[Refusal]:
    """A block in which no function of the program's runs (a block within it is told of its
    own refusals)."""
    refusal = Refusal()
    previous = sys.getprofile()

    def refuse(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == FILENAME:
            refusal.refused = True
            raise ProgramCode(frame.f_code.co_name)

    sys.setprofile(refuse)
    try:
        yield refusal
    finally:
        sys.setprofile(previous)


def read(value: Any, written: Callable[[Any], str] = str) -> str:
    """`written(value)` (its `str` by default); `<Obj object>` where that would run the
    program's code. What else it raises, it raises."""
    shown = None
    with suppress(ProgramCode), refusing() as refusal:
        shown = written(value)
    return f"<{type(value).__name__} object>" if shown is None or refusal.refused else shown
