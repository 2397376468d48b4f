"""Custom Function: your own autograd.Function, its node, its backward, and a gradient check."""

import streamlit as st

from explorer.ui.backward import backward_pass
from explorer.ui.common import lang
from explorer.ui.custom import gradient_check, tabs
from explorer.ui.editor import editor_page
from explorer.ui.graph import graph_at_step
from explorer.ui.link import publish
from explorer.ui.steps import error_panel

trace, state = editor_page("custom", "custom_page", "custom_intro",
                           default="custom-function-relu", replay=True)
if trace is not None:
    code = st.session_state["custom.ran"]  # the program the trace, check and replay are of
    with state:
        error_panel(trace, code, lang())
        for tab, shown in tabs(lang()):
            with shown:
                if tab == "check":
                    gradient_check(code, lang())
                elif tab == "graph" and trace.steps:
                    graph_at_step("custom", trace, len(trace.steps) - 1, lang(), code=code)
                elif tab == "backward":
                    backward_pass("custom", trace, lang(), code=code)
publish()
