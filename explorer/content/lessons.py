"""The seed tutorials as guided lessons, in English and Chinese. Pure; the lessons are data.

Each lesson is a folder `content/lessons/<NN>-<key>/` holding one Markdown file per language
(`en.md`, `zh.md`). A file opens with a small front matter, then the lesson's text:

    ---
    title: What PyTorch is
    page: playground
    programs: first-look, tensor-add
    program.first-look: A first look: a tensor and its gradient
    look: Step through the program: ...
    ---
    PyTorch is NumPy-style arrays ...

A lesson on the Backward page may also ask before it shows (Predict, then see):
`predict: y, x.grad` (the gradient of tensor y, the `.grad` of leaf x; the same in every
language) and `hint: ...`, shown with each question.

`page` (one of PAGES' names) and `programs` must be the same in every language. A program is
the lesson's own, `programs/<key>.py` in its folder (or `<key>.<lang>.py`, one per language),
titled by a `program.<key>` line; else a built-in one (`explorer.content.examples`).

Lessons come in their folders' order; a new folder is a new lesson. A lesson that cannot be
read is left out and named, with its file, line and reason, in `Shelf.problems`; a lesson in
one language only is kept, in that language. Files are read again when one changes.

A lesson reads only files inside the lessons folder once links are resolved (a link that
leaves it is a lesson problem, its contents never read), each of them regular and at most
MAX_FILE_BYTES: the server that shows lessons to every visitor reads no more than that.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from explorer.content import examples
from explorer.content.examples import Example
from explorer.content.i18n import LANGUAGES, text

PLAYGROUND, GRAPH, BACKWARD = "pages/1_Playground.py", "pages/2_Graph.py", "pages/5_Backward.py"
NUMPY, DEVICES = "pages/3_NumPy.py", "pages/4_Devices.py"
CUSTOM, TRAINING = "pages/6_Custom_Function.py", "pages/7_Training.py"
PAGES = {"playground": PLAYGROUND, "graph": GRAPH, "backward": BACKWARD, "numpy": NUMPY,
         "devices": DEVICES, "custom": CUSTOM, "training": TRAINING}
FOLDER = Path(__file__).parent / "lessons"
VARIABLE = "EXPLORER_LESSONS"  # another lessons folder, e.g. a teacher's own
FIELDS = ("title", "page", "programs", "look")
# Predict, then see, on the Backward page: what to ask (`x.grad`, a leaf's; `y`, the gradient
# of the tensor `y`), and a hint shown with the question.
OPTIONAL = ("predict", "hint")
SHARED = ("page", "programs", "predict")  # the same in every language
ASKED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.grad)?")  # one thing `predict` asks
TITLE = "program."  # `program.<key>: title` titles a lesson's own program
# A lesson file at most: the app's own are under 1 KiB, and a program of the sandbox's
# 100,000 characters (explorer.safety.sandbox.MAX_CODE_CHARS), mostly ASCII, fits.
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Problem:
    """What is wrong with a lesson file: where (file, line if known) and why, in words that
    `text` keys `lesson_error_<kind>` give in every language."""

    path: Path
    line: int | None
    kind: str
    values: tuple[tuple[str, str], ...] = ()

    def reason(self, lang: str, escape: Callable[[str], str] = str) -> str:
        """Why, in `lang`; `escape` takes each value from the file (e.g. for Markdown)."""
        values = {name: escape(value) for name, value in self.values}
        if "language" in values:  # a language's code, named in `lang`
            values["language"] = text(f"language_{dict(self.values)['language']}", lang)
        return text(f"lesson_error_{self.kind}", lang, **values)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)

    def message(self, lang: str) -> str:
        return f"{self.where}: {self.reason(lang)}"


class Broken(Exception):
    """A lesson file that cannot be read; carries its Problem."""

    def __init__(self, path: Path, line: int | None, kind: str, **values: object) -> None:
        super().__init__(kind)
        self.problem = Problem(path, line, kind, tuple((k, str(v)) for k, v in values.items()))


@dataclass(frozen=True)
class Lesson:
    """One lesson, in the languages it is written in: its text, what to look at, and the
    programs it opens on which page."""

    key: str
    folder: Path
    title: dict[str, str]
    text: dict[str, str]
    look: dict[str, str]
    page: str
    programs: tuple[Example, ...]
    predict: tuple[str, ...] = ()  # what the Backward page asks before it shows (`x.grad`, `y`)
    hint: dict[str, str] = field(default_factory=dict)  # shown with those questions

    @property
    def examples(self) -> tuple[str, ...]:
        """Its programs' keys."""
        return tuple(program.key for program in self.programs)

    def language(self, lang: str) -> str:
        """The language it is shown in to a reader of `lang`: `lang`, else its first."""
        return lang if lang in self.title else next(iter(self.title))


@dataclass(frozen=True)
class Shelf:
    """The lessons of a folder that could be read, and what is wrong with the others."""

    lessons: tuple[Lesson, ...]
    problems: tuple[Problem, ...]


def folder() -> Path:
    """The folder `EXPLORER_LESSONS` names, else the app's own."""
    return Path(os.environ.get(VARIABLE) or FOLDER)


def shelf() -> Shelf:
    """The lessons of `folder()` as its files are now."""
    return load(folder())


def lessons() -> tuple[Lesson, ...]:
    """The lessons that could be read."""
    return shelf().lessons


def by_key(key: str) -> Lesson:
    """The lesson called `key`."""
    for lesson in lessons():
        if lesson.key == key:
            return lesson
    raise KeyError(f"no lesson called {key!r}")


def load(where: Path) -> Shelf:
    """Every lesson folder in `where`, in name order; read again when a file changes."""
    return _load(where, _fingerprint(where))


def _fingerprint(where: Path) -> tuple[tuple[str, int, int], ...]:
    """Each file and folder under `where` with its modification time and size."""
    try:
        found = [(str(path), *_stamp(path)) for path in where.rglob("*")]
    except OSError:
        return ()
    return tuple(sorted(found))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError:
        return (0, -1)
    return (status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=8)
def _load(where: Path, _fingerprint: tuple[tuple[str, int, int], ...]) -> Shelf:
    if not where.is_dir():
        return Shelf((), (Problem(where, None, "folder", (("variable", VARIABLE),)),))
    root = where.resolve()
    found: list[Lesson] = []
    problems: list[Problem] = []
    for path in sorted(p for p in where.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            lesson = _lesson(path, root)
        except Broken as broken:
            problems.append(broken.problem)
            continue
        twin = next((other for other in found if other.key == lesson.key), None)
        if twin is not None:
            problems.append(Problem(path, None, "duplicate", (("lesson", lesson.key),
                                                               ("other", twin.folder.name))))
            continue
        found.append(lesson)
    return Shelf(tuple(found), tuple(problems))


def _lesson(path: Path, root: Path) -> Lesson:
    _inside(path, root)
    files = {lang: path / f"{lang}.md" for lang in LANGUAGES if (path / f"{lang}.md").is_file()}
    if not files:
        raise Broken(path, None, "no_file", files=" / ".join(f"{lang}.md" for lang in LANGUAGES))
    fronts = {lang: _read(file, root) for lang, file in files.items()}
    first = next(iter(files))
    for lang, (fields, _) in fronts.items():
        for name in SHARED:
            mine, theirs = fields.get(name, ("", 1)), fronts[first][0].get(name, ("", 1))
            if _keys(mine[0]) != _keys(theirs[0]):
                raise Broken(files[lang], mine[1], "differ", field=name,
                             other=files[first].name)
    fields = fronts[first][0]
    page, line = fields["page"]
    if page not in PAGES:
        raise Broken(files[first], line, "page", page=page, pages=", ".join(PAGES))
    keys = _keys(fields["programs"][0])
    asked, line = fields.get("predict", ("", 1))
    if asked and page != "backward":
        raise Broken(files[first], line, "predict_page", page=page)
    for item in _keys(asked):
        if not ASKED.fullmatch(item):
            raise Broken(files[first], line, "predict_item", item=item)
    for lang, (own_fields, _) in fronts.items():
        for name, (_, number) in own_fields.items():
            if name.startswith(TITLE) and name[len(TITLE):] not in keys:
                raise Broken(files[lang], number, "title_unused", program=name[len(TITLE):])
    return Lesson(key=path.name.split("-", 1)[-1], folder=path,
                  title={lang: f["title"][0] for lang, (f, _) in fronts.items()},
                  text={lang: body for lang, (_, body) in fronts.items()},
                  look={lang: f["look"][0] for lang, (f, _) in fronts.items()},
                  predict=tuple(_keys(asked)),
                  hint={lang: f["hint"][0] for lang, (f, _) in fronts.items() if "hint" in f},
                  page=PAGES[page],
                  programs=tuple(_program(path, key, files, fronts, root) for key in keys))


Front = tuple[dict[str, tuple[str, int]], str]


def _keys(value: str) -> list[str]:
    """A comma-separated list's items."""
    return [key.strip() for key in value.split(",") if key.strip()]


def _program(path: Path, key: str, files: dict[str, Path], fronts: dict[str, Front],
             root: Path) -> Example:
    """Program `key`: the lesson's own (`programs/<key>.py`) if it has one, else built-in."""
    own = examples.versions(path / "programs", key)
    first = next(iter(files))
    if not own:
        try:
            return examples.by_key(key)
        except KeyError:
            raise Broken(files[first], fronts[first][0]["programs"][1], "program",
                         program=key) from None
    codes = {lang: _text(file, root) for lang, file in own.items()}
    titles = {}
    for lang, (fields, _) in fronts.items():
        line = fields["programs"][1]
        if lang not in own and "" not in own:
            raise Broken(files[lang], line, "program_language", program=key, code=lang)
        if TITLE + key not in fields:
            raise Broken(files[lang], line, "program_title", program=key)
        titles[lang] = fields[TITLE + key][0]
    base = codes.pop("", None)
    return Example(key=key, title=titles, seed="", code=base or codes[first], versions=codes,
                   folder=path / "programs")


def _inside(path: Path, root: Path) -> Path:
    """`path` with its links resolved; Broken if that leaves `root` (resolved itself)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as error:  # a loop of links: RuntimeError before 3.13
        raise Broken(path, None, "unreadable", reason=getattr(error, "strerror", None)
                     or error) from None
    if not real.is_relative_to(root):
        raise Broken(path, None, "outside", target=real)
    return real


def _text(path: Path, root: Path) -> str:
    """A file's text if it is inside `root` (`_inside`), a regular file and at most
    MAX_FILE_BYTES; Broken (with the line) if not, if it is not UTF-8 or cannot be read."""
    real = _inside(path, root)
    try:  # not a link swapped in since it was resolved, and never waiting on a pipe
        handle = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(handle, "rb") as file:
            status = os.fstat(handle)
            if not stat.S_ISREG(status.st_mode):
                raise Broken(path, None, "special")
            # One byte past the cap tells a file that grew since its size was read.
            raw = file.read(MAX_FILE_BYTES + 1) if status.st_size <= MAX_FILE_BYTES else None
    except OSError as error:
        raise Broken(path, None, "unreadable", reason=error.strerror or error) from None
    if raw is None or len(raw) > MAX_FILE_BYTES:
        raise Broken(path, None, "too_large", cap=f"{MAX_FILE_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise Broken(path, raw.count(b"\n", 0, error.start) + 1, "not_utf8") from None


FIELD = re.compile(r"[a-z]+(\.[a-z0-9-]+)?")


def _read(path: Path, root: Path) -> Front:
    """The front matter (`name: value` lines between `---` lines), each value with its line
    number, and the text after it (`_text`)."""
    lines = _text(path, root).splitlines()
    if not lines or lines[0].strip() != "---":
        raise Broken(path, 1, "no_front_matter")
    end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), None)
    if end is None:
        raise Broken(path, 1, "unclosed")
    fields: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        name, colon, value = (part.strip() for part in line.partition(":"))
        if not colon:
            raise Broken(path, number, "line", found=line.strip())
        if name not in FIELDS + OPTIONAL and not (name.startswith(TITLE)
                                                  and FIELD.fullmatch(name)):
            raise Broken(path, number, "unknown", field=name,
                         fields=", ".join(FIELDS + OPTIONAL))
        if name in fields:
            raise Broken(path, number, "twice", field=name, first=fields[name][1])
        if not value:
            raise Broken(path, number, "empty", field=name)
        fields[name] = (value, number)
    missing = [name for name in FIELDS if name not in fields]
    if missing:
        raise Broken(path, 1, "missing", fields=", ".join(missing))
    return fields, "\n".join(lines[end + 1:]).strip()
