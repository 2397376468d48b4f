"""The lessons on the home page: text, what to look at, and programs that open where they
are best seen."""

from __future__ import annotations

import streamlit as st

from explorer.content import lessons
from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.ui.common import PAGES
from explorer.ui.editor import open_program

# The editor of each page a lesson can open in; the training page has its own settings.
EDITORS = {lessons.PLAYGROUND: "playground", lessons.GRAPH: "graph",
           lessons.BACKWARD: "backward", lessons.NUMPY: "numpy", lessons.CUSTOM: "custom"}
PAGE_TITLES = {path: key for path, key, _ in PAGES}


def lesson_list(lang: str) -> None:
    """Every lesson, numbered; each example button opens its program and runs it."""
    st.subheader(text("lessons_title", lang))
    for number, lesson in enumerate(lessons.lessons(), start=1):
        with st.expander(f"{number}. {lesson.title[lang]}", expanded=number == 1):
            st.markdown(lesson.text[lang])
            st.caption(f"**{text('lesson_look', lang)}** {lesson.look[lang]}")
            page = text(PAGE_TITLES[lesson.page], lang)
            for key in lesson.examples:
                label = text("lesson_open", lang, title=by_key(key).title[lang], page=page)
                if st.button(label, key=f"lesson.{lesson.key}.{key}"):
                    _open(lesson.page, key)


def _open(page_path: str, example: str) -> None:
    if page_path in EDITORS:
        open_program(EDITORS[page_path], page_path, by_key(example).code)
    else:
        st.switch_page(page_path)
