"""Plain-language explanations of the errors a learner's PyTorch program can raise.

Errors from PyTorch are lessons: each rule pairs a pattern on the exception message (and, where
it matters, the exception class) with a short explanation, in English and Simplified Chinese,
of the rule that was broken and what to write instead. The rules are data,
`content/errors.toml`: tried in its order, the first match wins. A text may name a group of
its pattern in braces, e.g. ``{name}``, to quote a detail of the message back to the learner.

The patterns follow PyTorch 2.13's wording; each one is exercised against the real error in
``tests/test_explain.py``.
"""

import functools
import re
import tomllib
from pathlib import Path
from typing import NamedTuple

from explorer.content.markdown import code_span

FILE = Path(__file__).parent / "errors.toml"
QUOTED_FIELD = re.compile(r"`(\{\w+\})`")  # in a text of errors.toml


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    error_type: str | None  # exception class name to require, or None for any
    en: str
    zh: str


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    """The rules of `content/errors.toml`, in its order."""
    with open(FILE, "rb") as file:
        entries = tomllib.load(file)["error"]
    return tuple(_Rule(re.compile(e["pattern"]), e.get("type"), e["en"], e["zh"])
                 for e in entries)


def explain(error_type: str, message: str) -> dict[str, str] | None:
    """Return {"en": ..., "zh": ...} explaining this error, or None when there is nothing to add."""
    for rule in _rules():
        if rule.error_type not in (None, error_type):
            continue
        match = rule.pattern.search(message)
        if match:  # the message's parts are the program's words: shown as code, never markdown
            details = {k: code_span(v or "") for k, v in match.groupdict().items()}
            return {lang: _unquoted(template).format(**details)
                    for lang, template in (("en", rule.en), ("zh", rule.zh))}
    return None


def _unquoted(template: str) -> str:
    """`template` without the backticks around its `{fields}`: each detail is a code span."""
    return QUOTED_FIELD.sub(r"\1", template)
