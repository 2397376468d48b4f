"""Playground: run a program and step through the state after every statement."""

import streamlit as st

from explorer.ui.common import lang
from explorer.ui.editor import editor_page
from explorer.ui.link import publish
from explorer.ui.steps import show_trace

trace, state = editor_page("playground", "playground", "playground_intro")
below = st.container()  # the variables' table, across the page: every column in view
if trace is not None:
    with state:
        show_trace("playground", trace, st.session_state["playground.code"], lang(),
                   below=below)
publish()
