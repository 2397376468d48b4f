"""Backward pass: the engine's real backward pass, animated and step by step."""

import streamlit as st

from explorer.i18n import text
from explorer.ui.backward import backward_pass
from explorer.ui.common import device, lang, page
from explorer.ui.editor import editor
from explorer.ui.steps import error_panel

page("backward_page")
st.title(text("backward_page", lang()))
st.caption(text("backward_intro", lang()))
left, right = st.columns([1, 2], gap="medium")
with left:
    trace = editor("backward", lang(), device())
with right:
    if trace is None:
        st.info(text("press_run", lang()))
    else:
        error_panel(trace, st.session_state["backward.code"], lang())
        backward_pass("backward", trace, lang())
