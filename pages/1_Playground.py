"""Playground: run a program and step through the state after every statement."""

import streamlit as st

from explorer.i18n import text
from explorer.ui.common import device, lang, page
from explorer.ui.editor import editor
from explorer.ui.steps import show_trace

page("playground")
st.title(text("playground", lang()))
st.caption(text("playground_intro", lang()))
left, right = st.columns([1, 2], gap="medium")
with left:
    trace = editor("playground", lang(), device())
with right:
    if trace is None:
        st.info(text("press_run", lang()))
    else:
        show_trace("playground", trace, st.session_state["playground.code"], lang())
