"""The lessons on the home page: text, what to look at, and programs that open where they
are best seen. A lesson that cannot be read is named for the teacher: on the page locally, in
the server's log (and a short note on the page) in hosted mode."""

from __future__ import annotations

import functools
import logging

import streamlit as st

from explorer.content import lessons
from explorer.content.examples import PROGRAMS, Example
from explorer.content.i18n import LANGUAGES, text
from explorer.content.lessons import Lesson, Problem
from explorer.content.markdown import code_span, plain
from explorer.ui import common
from explorer.ui.editor import open_program
from explorer.ui.predict import lesson_asks

# The editor of each page a lesson can open in.
EDITORS = {lessons.PLAYGROUND: "playground", lessons.GRAPH: "graph",
           lessons.BACKWARD: "backward", lessons.NUMPY: "numpy", lessons.CUSTOM: "custom",
           lessons.TRAINING: "training"}
PICKERS = set(EDITORS.values()) - {"training"}  # pages whose picker lists built-in programs
PAGE_TITLES = {path: key for path, key, _ in common.PAGES}
LOG = logging.getLogger(__name__)


def lesson_list(lang: str) -> None:
    """Every lesson, numbered; each example button opens its program and runs it."""
    st.subheader(text("lessons_title", lang))
    shelf = lessons.shelf()
    if shelf.problems:
        _problems(shelf.problems, lang)
    for number, lesson in enumerate(shelf.lessons, start=1):
        shown = lesson.language(lang)
        with st.expander(f"{number}. {lesson.title[shown]}", expanded=number == 1):
            if shown != lang:
                st.info(text("lesson_only_in", lang, language=text(f"language_{shown}", lang)),
                        icon=":material/translate:")
            st.markdown(lesson.text[shown])
            st.caption(f"**{text('lesson_look', lang)}** {lesson.look[shown]}")
            page = text(PAGE_TITLES[lesson.page], lang)
            for program in lesson.programs:
                label = text("lesson_open", lang, title=program.title[shown], page=page)
                if st.button(label, key=f"lesson.{lesson.key}.{program.key}"):
                    _open(lesson, program, shown)


def _problems(problems: tuple[Problem, ...], lang: str) -> None:
    """Locally, each problem with its file and line; hosted, a note (the log has them)."""
    if not common.SETTINGS.details:
        _log(problems)
        st.warning(text("lessons_broken_hosted", lang), icon=":material/error:")
        return
    lines = [f"- {code_span(problem.where)} {problem.reason(lang, plain)}"
             for problem in problems]
    st.error("\n".join([text("lessons_broken", lang), "", *lines]), icon=":material/error:")


@functools.lru_cache(maxsize=64)
def _log(problems: tuple[Problem, ...]) -> None:
    """Each problem in the server's log, once for as long as it lasts."""
    for problem in problems:
        LOG.error("lesson left out: %s", problem.message("en"))


def _open(lesson: Lesson, program: Example, shown: str) -> None:
    """Open `program` on the lesson's page, in the lesson's language, with what to look at
    (explorer.ui.editor shows it while the program is the lesson's) and, for a built-in
    program, its name in the page's example picker."""
    if lesson.page not in EDITORS:
        st.switch_page(lesson.page)
    name, code = EDITORS[lesson.page], program.code_in(shown)
    if name in PICKERS:
        st.session_state[f"{name}.example"] = program.key if program.folder == PROGRAMS else None
    st.session_state[f"{name}.look"] = {"code": code} | {
        lang: f"**{text('lesson_look', lang)}** {lesson.look.get(lang, lesson.look[shown])}"
        for lang in LANGUAGES}
    if lesson.predict:
        lesson_asks(name, code, lesson.predict, lesson.hint)
    open_program(name, lesson.page, code)
