"""What a library function's backward passes are, in words: the Graph page's list of the
graphs torch.func's transforms (and torch.autograd.functional, gradcheck) ran backward through
for the program, and what each was. Pure: no Streamlit, no torch."""

from __future__ import annotations

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace.schema import LibraryPass


def label(made: LibraryPass, lang: str) -> str:
    """A pass in few words, as plain text (a choice's label): "line 10 · grad · level 3"."""
    parts = [text("line_short", lang, line=made.line), made.called]
    if made.level is not None:
        parts.append(text("level_short", lang, level=made.level))
    return " · ".join(parts)


def said(made: LibraryPass, lang: str) -> str:
    """What ran, as markdown: the line and function, the transforms around the pass with
    their levels, whose graph it is, and how often it ran there."""
    parts = [text("library_called", lang, line=made.line, called=code_span(made.called))]
    if made.within:
        parts.append(text("library_within", lang, transforms=" › ".join(
            text("library_transform", lang, transform=code_span(level.transform),
                 level=level.level) for level in made.within)))
    if made.level is not None:
        parts.append(text("library_traced", lang, level=made.level))
    elif made.within:
        parts.append(text("library_ended", lang))
    if sum(level.transform == "grad" for level in made.within) > 1:
        parts.append(text("library_nested", lang))
    if any(level.transform == "vmap" for level in made.within):
        parts.append(text("library_per_sample", lang))
    if made.passes > 1:
        parts.append(text("library_passes", lang, passes=made.passes))
    return " ".join(parts)
