"""A run's notes, said in the learner's language. A note (explorer.trace.schema.Note) is a
key and numbers: its words are the interface text `note_<key>` (explorer/content/text), its
parts' `part_<key>`, joined into its `{parts}`. Pure: no torch, no Streamlit."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from string import Formatter

from explorer.content.i18n import text, texts
from explorer.trace.schema import Note, Part

PARTS = "parts"  # the placeholder a note's parts fill
SAMPLED = frozenset({"backward_calls", "lines"})  # which backward calls and lines were kept


def said(note: Note, lang: str) -> str:
    """`note` in `lang`, its numbers as the English writes them."""
    parts = text("list_separator", lang).join(said_part(part, lang) for part in note.parts)
    return text(f"note_{note.key}", lang, parts=parts, **note.values)


def said_part(part: Part, lang: str) -> str:
    """One of a note's parts in `lang`."""
    return text(f"part_{part.key}", lang, **part.values)


def english(notes: Iterable[Note]) -> list[str]:
    """`notes` in English (the command line's, a benchmark's)."""
    return [said(note, "en") for note in notes]


@functools.cache
def placeholders(name: str) -> frozenset[str] | None:
    """What the interface text `name` fills in; None if there is no such text."""
    entry = texts().get(name)
    if entry is None:
        return None
    return frozenset(field for _, field, _, _ in Formatter().parse(entry["en"]) if field)
