"""The seed tutorials as guided lessons, in English and Chinese. Pure; the lessons are data.

Each lesson is a folder `content/lessons/<NN>-<key>/` holding one Markdown file per language
(`en.md`, `zh.md`). A file opens with a small front matter, then the lesson's text:

    ---
    title: What PyTorch is
    page: playground
    programs: tensor-create, tensor-add
    look: Step through the program: ...
    ---
    PyTorch is NumPy-style arrays ...

`page` (one of PAGES' names) and `programs` (keys of `explorer.content.examples`) must be the
same in every language. Lessons come in their folders' order; a new folder is a new lesson.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from explorer.content.i18n import LANGUAGES

PLAYGROUND, GRAPH, BACKWARD = "pages/1_Playground.py", "pages/2_Graph.py", "pages/5_Backward.py"
NUMPY, DEVICES = "pages/3_NumPy.py", "pages/4_Devices.py"
CUSTOM, TRAINING = "pages/6_Custom_Function.py", "pages/7_Training.py"
PAGES = {"playground": PLAYGROUND, "graph": GRAPH, "backward": BACKWARD, "numpy": NUMPY,
         "devices": DEVICES, "custom": CUSTOM, "training": TRAINING}
FOLDER = Path(__file__).parent / "lessons"
VARIABLE = "EXPLORER_LESSONS"  # another lessons folder, e.g. a teacher's own


class LessonError(ValueError):
    """A lesson file that cannot be read: says which file and what is wrong."""


@dataclass(frozen=True)
class Lesson:
    """One lesson: its text, what to look at, and the programs it opens on which page."""

    key: str
    title: dict[str, str]
    text: dict[str, str]
    look: dict[str, str]
    page: str
    examples: tuple[str, ...]


def lessons() -> tuple[Lesson, ...]:
    """The lessons of the folder `EXPLORER_LESSONS` names, else the app's own."""
    return load(Path(os.environ.get(VARIABLE) or FOLDER))


@functools.cache
def load(folder: Path) -> tuple[Lesson, ...]:
    """Every lesson folder in `folder`, in name order."""
    return tuple(_lesson(path) for path in sorted(folder.iterdir()) if path.is_dir())


def by_key(key: str) -> Lesson:
    """The lesson called `key`."""
    for lesson in lessons():
        if lesson.key == key:
            return lesson
    raise KeyError(f"no lesson called {key!r}")


def _lesson(folder: Path) -> Lesson:
    files = {lang: _read(folder / f"{lang}.md") for lang in LANGUAGES}
    shared = {(f["page"], f["programs"]) for f, _ in files.values()}
    if len(shared) > 1:
        raise LessonError(f"{folder.name}: `page` and `programs` differ between languages")
    page, programs = shared.pop()
    if page not in PAGES:
        raise LessonError(f"{folder.name}: page {page!r} is not one of {', '.join(PAGES)}")
    return Lesson(key=folder.name.split("-", 1)[-1],
                  title={lang: f["title"] for lang, (f, _) in files.items()},
                  text={lang: body for lang, (_, body) in files.items()},
                  look={lang: f["look"] for lang, (f, _) in files.items()},
                  page=PAGES[page],
                  examples=tuple(p.strip() for p in programs.split(",") if p.strip()))


def _read(path: Path) -> tuple[dict[str, str], str]:
    """The front matter (`key: value` lines between `---` lines) and the text after it."""
    try:
        _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
    except (OSError, ValueError) as error:
        raise LessonError(f"{path}: no front matter between `---` lines ({error})") from None
    fields = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    missing = {"title", "page", "programs", "look"} - set(fields)
    if missing:
        raise LessonError(f"{path}: the front matter lacks {', '.join(sorted(missing))}")
    return fields, body.strip()
