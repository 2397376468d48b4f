"""Interface text, derivative rules, error explanations and NumPy presets are data: every
language has the same keys and the same `{placeholders}`, and every key the code asks for is
there."""

from __future__ import annotations

import ast
import re
import string
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.content import explain, i18n, rules
from explorer.content.i18n import LANGUAGES, texts
from explorer.views import sharing

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "explorer").rglob("*.py"), *(ROOT / "pages").glob("*.py"),
                  ROOT / "streamlit_app.py"])
# Calls whose arguments at these positions are interface text keys.
KEY_ARGUMENTS = {"text": (0,), "LinkError": (0,), "page": (0,), "editor_page": (1, 2)}


def fields(template: str) -> set[str]:
    """The names of the `{placeholders}` of `template`."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name}


def translated(entries: list[dict]) -> Iterator[dict[str, str]]:
    """Each entry's texts by language, for the data files keyed by rule."""
    for entry in entries:
        for part in ("title", "caption"):
            if part in entry:
                yield entry[part]
        if "en" in entry:
            yield {lang: entry[lang] for lang in LANGUAGES if lang in entry}


def test_every_language_file_has_the_same_keys() -> None:
    tables = {}
    for lang in LANGUAGES:
        with open(i18n.FOLDER / f"{lang}.toml", "rb") as file:
            tables[lang] = tomllib.load(file)
    assert sorted(path.stem for path in i18n.FOLDER.glob("*.toml")) == sorted(LANGUAGES)
    english = tables["en"]
    for lang, table in tables.items():
        assert set(table) == set(english), lang
        assert all(isinstance(words, str) and words.strip() for words in table.values()), lang


@pytest.mark.parametrize("key", sorted(texts()))
def test_every_language_fills_the_same_placeholders(key: str) -> None:
    entry = texts()[key]
    assert set(entry) == set(LANGUAGES)
    assert {lang: fields(words) for lang, words in entry.items()} == {
        lang: fields(entry["en"]) for lang in LANGUAGES}


@pytest.mark.parametrize("file", [rules.FILE, explain.FILE, sharing.FILE], ids=lambda f: f.name)
def test_rules_errors_and_presets_are_in_every_language(file: Path) -> None:
    with open(file, "rb") as data:
        loaded = tomllib.load(data)
    entries = [entry for value in loaded.values()
               for entry in (value if isinstance(value, list) else [value])]
    texts_by_lang = list(translated(entries))
    assert len(texts_by_lang) >= len(entries)
    for words in texts_by_lang:
        assert set(words) == set(LANGUAGES) and all(w.strip() for w in words.values()), words
        assert len({frozenset(fields(w)) for w in words.values()}) == 1, words


def test_error_placeholders_are_groups_of_their_pattern() -> None:
    for rule in explain._rules():
        assert fields(rule.en) <= set(rule.pattern.groupindex), rule.pattern.pattern


def keys_used() -> Iterator[tuple[str, int, str]]:
    """(file, line, key or key pattern) for every interface text key the source names."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            for position in KEY_ARGUMENTS.get(name, ()):
                if position < len(node.args):
                    key = _key_pattern(node.args[position])
                    if key is not None:
                        yield path.relative_to(ROOT).as_posix(), node.lineno, key


def _key_pattern(argument: ast.expr) -> str | None:
    """A regular expression for the keys an argument can be: None when it is not a string."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return re.escape(argument.value)
    if isinstance(argument, ast.JoinedStr):
        return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ".+"
                       for part in argument.values)
    return None


def test_every_key_the_code_names_exists() -> None:
    used = list(keys_used())
    assert len(used) > 100  # the search itself works
    missing = [(file, line, key) for file, line, key in used
               if not any(re.fullmatch(key, known) for known in texts())]
    assert not missing


def test_every_table_row_and_chart_line_has_its_words() -> None:
    from explorer.views import devices

    for row in (*devices.ROWS, devices.SEED_ROW):
        assert f"devices_row_{row.name}" in texts()
    for series in devices.SERIES:
        assert f"devices_series_{series}" in texts()
