"""Check a folder of lessons as a teacher would want before class: every file reads, every
lesson is in every language, and every program it opens runs (in the pool the app uses,
given as `run`) as its lesson says: to the end, or to the error a built-in program is about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES
from explorer.content.lessons import Problem


class Ran(Protocol):
    """What a run tells here (an explorer.trace.Trace): its error, if it stopped with one."""

    error: dict[str, Any] | None


@dataclass(frozen=True)
class Report:
    """What was checked and what is wrong."""

    lessons: int
    programs: int
    problems: tuple[Problem, ...]


def check(folder: Path, run: Callable[[str], Ran]) -> Report:
    """Read every lesson of `folder` and run each program file it opens once."""
    shelf = lessons.load(folder)
    problems = list(shelf.problems)
    ran: set[Path] = set()
    for lesson in shelf.lessons:
        problems += [Problem(lesson.folder / f"{lang}.md", None, "language_missing",
                             (("language", lesson.language(lang)),))
                     for lang in LANGUAGES if lang not in lesson.title]
        for program in lesson.programs:
            for lang in lesson.title:
                path = program.file(lang)
                if path not in ran:
                    ran.add(path)
                    problems += _ran(path, program.error, run(program.code_in(lang)))
    return Report(len(shelf.lessons), len(ran), tuple(problems))


def _ran(path: Path, expected: str | None, trace: Ran) -> list[Problem]:
    """What is wrong with a run of the program in `path` that should stop with `expected`."""
    error = trace.error
    if error is None:
        return [] if expected is None else [Problem(path, None, "no_error",
                                                    (("expected", expected),))]
    if expected is not None and expected in error.message:
        return []
    return [Problem(path, error.line, "stopped",
                    (("error", f"{error.type}: {error.message}"),))]
