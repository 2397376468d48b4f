"""Text from a run (untrusted) inside markdown: shown as itself, never as markup. Pure."""

from __future__ import annotations

import re

MARKUP = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$])")  # what markdown would read


def plain(text: object) -> str:
    """`text` as plain words: no link, image, emphasis, heading, HTML, emoji code, formula."""
    return MARKUP.sub(r"\\\1", str(text))


LINE_BREAKS = re.compile(r"\r\n|[\r\n]")


def code_span(text: str) -> str:
    """`text` as inline code, on one line: a program's strings must not render as links or
    images (a line break could end the span; it is shown as ↵)."""
    return "`" + LINE_BREAKS.sub("↵", text.replace("`", "ˋ")) + "`" if text else ""
