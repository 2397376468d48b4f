"""Interface text in English and Chinese: `text(key, lang)`. Lesson texts live with lessons.

The words are data, one file per language: `content/text/<lang>.toml`, `key = "text"` a line,
the same keys in every file. A translator edits those files; no Python changes.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

LANGUAGES = ("en", "zh")
FOLDER = Path(__file__).parent / "text"


@functools.cache
def texts() -> dict[str, dict[str, str]]:
    """Every interface string, keyed by its key and then by language."""
    table: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        with open(FOLDER / f"{lang}.toml", "rb") as file:
            for key, words in tomllib.load(file).items():
                table.setdefault(key, {})[lang] = words
    return table


def text(key: str, lang: str, **values: object) -> str:
    """The interface string `key` in `lang` (English if missing), formatted with `values`."""
    entry = texts()[key]
    return entry.get(lang, entry["en"]).format(**values)
