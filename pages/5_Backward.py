"""Backward pass: the engine's real backward pass, animated and step by step."""

import streamlit as st

from explorer.ui.backward import backward_pass, figure_frame
from explorer.ui.common import lang
from explorer.ui.editor import editor_page
from explorer.ui.link import publish
from explorer.ui.steps import error_panel

trace, state = editor_page("backward", "backward_page", "backward_intro", replay=True)
if trace is not None:
    with state:
        code = st.session_state["backward.ran"]
        error_panel(trace, code, lang())
        backward_pass("backward", trace, lang(), code=code)
else:  # what the replay draws with, loaded before the first run: it comes quicker
    with state:
        figure_frame("backward")
publish()
