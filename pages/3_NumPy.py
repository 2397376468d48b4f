"""Tensor ↔ NumPy: a tensor and an array side by side, shared memory or a separate copy."""

import streamlit as st

from explorer.i18n import text
from explorer.ui.common import device, lang, page
from explorer.ui.editor import editor
from explorer.ui.sharing import lesson_picker, pair_view

page("numpy_page")
st.title(text("numpy_page", lang()))
st.caption(text("numpy_intro", lang()))
left, right = st.columns([5, 9], gap="medium")
with left:
    lessons = st.container()  # above the editor, drawn after it has set the code up
    trace = editor("numpy", lang(), device(), default="tensor-to-numpy")
    with lessons:
        lesson_picker("numpy", lang())
with right:
    if trace is None:
        st.info(text("press_run", lang()))
    else:
        pair_view("numpy", trace, st.session_state["numpy.code"], lang())
