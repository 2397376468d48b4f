"""Preset programs for Autograd Explorer, taken from the five tutorial notes in ``seeds/``.

The programs are data: ``content/programs/<key>.py`` each, listed in order with their titles
(en/zh), seed note and expected error in ``content/programs/programs.toml``.

Every code example in the notes (``000`` … ``004``) becomes one runnable, self-contained
preset.  The notes were extracted from PDFs, so their code was cleaned up:

* full-width parentheses and Kangxi-radical look-alike characters were replaced by the
  ordinary characters (``torch.rand（5,3)`` -> ``torch.rand(5,3)``);
* statements glued onto one line were split (``a = torch.randn(2, 2) a = ...``);
* a missing ``)`` was added (``print(x[:,1]``);
* comments that lost their indentation inside a loop body were re-indented;
* snippets that use variables from an earlier snippet (or from another note) get those
  lines prepended, under a comment that says where they come from.

Otherwise the notes' own lines and (Chinese) comments are kept, in the notes' order. A
program may also have a version per language, ``<key>.<lang>.py``: the same code commented in
that language, without the notes' leftovers, which the lessons open (``Example.code_in``).
Examples whose lesson *is* an error stop at the failing line and name the error in
``Example.error``; what the note does after the error is a separate example.

``EXAMPLES`` is ordered in two groups: tensor basics, then autograd (which opens with
``autograd-basics``).  Within each note the notes' order is preserved.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from explorer.content.i18n import LANGUAGES

__all__ = ["EXAMPLES", "PROGRAMS", "Example", "by_key"]

PROGRAMS = Path(__file__).parent / "programs"
STARTS = Path(__file__).parent / "training"  # the Training page's own starting programs


@dataclass(frozen=True)
class Example:
    """One preset program shown in the app's example picker."""

    key: str
    """Short stable slug, e.g. ``"autograd-mean"``: the file ``<key>.py``."""
    title: dict[str, str]
    """Short titles keyed by language: ``{"en": ..., "zh": ...}``."""
    seed: str
    """The seed note the example comes from, e.g. ``"001"``."""
    code: str
    """The runnable program (ends with a newline)."""
    error: str | None = None
    """For examples whose lesson is an error: a substring of PyTorch's error message."""
    versions: dict[str, str] = field(default_factory=dict)
    """The program commented in a language, by language: the files ``<key>.<lang>.py``."""
    folder: Path = PROGRAMS
    """Where its files are."""

    def code_in(self, lang: str) -> str:
        """The program as a lesson in `lang` opens it."""
        return self.versions.get(lang, self.code)

    def file(self, lang: str) -> Path:
        """The file `code_in(lang)` comes from."""
        return self.folder / (f"{self.key}.{lang}.py" if lang in self.versions else
                              f"{self.key}.py")


def versions(folder: Path, key: str) -> dict[str, Path]:
    """The files of program `key` in `folder`, by language ("" for ``<key>.py``)."""
    files = {"": folder / f"{key}.py"} | {lang: folder / f"{key}.{lang}.py" for lang in LANGUAGES}
    return {lang: path for lang, path in files.items() if path.is_file()}


def start(key: str, lang: str) -> str:
    """The Training page's starting program `key` (STARTS/<key>.<lang>.py), as a reader of
    `lang` reads it."""
    files = versions(STARTS, key)
    return (files.get(lang) or files.get("en") or files[""]).read_text(encoding="utf-8")


def load(folder: Path = PROGRAMS) -> tuple[Example, ...]:
    """The programs listed in `folder`'s programs.toml, in its order."""
    with open(folder / "programs.toml", "rb") as index:
        listed = tomllib.load(index)["program"]
    examples = []
    for entry in listed:
        files = {lang: path.read_text(encoding="utf-8")
                 for lang, path in versions(folder, entry["key"]).items()}
        examples.append(Example(code=files.pop(""), versions=files, folder=folder, **entry))
    return tuple(examples)


EXAMPLES: tuple[Example, ...] = load()
"""All presets: tensor basics first, then autograd (starting with ``autograd-basics``)."""

_BY_KEY: dict[str, Example] = {example.key: example for example in EXAMPLES}


def by_key(key: str) -> Example:
    """Return the example called ``key``; raise ``KeyError`` naming the known keys if absent."""
    try:
        return _BY_KEY[key]
    except KeyError:
        known = ", ".join(_BY_KEY)
        raise KeyError(f"no example with key {key!r}; known keys: {known}") from None
