"""Autograd graph: the grad_fn graph torchviz would draw, growing statement by statement."""

import streamlit as st

from explorer.i18n import text
from explorer.ui.common import device, lang, page
from explorer.ui.editor import editor
from explorer.ui.graph import graph_at_step
from explorer.ui.steps import error_panel, step_controls

page("graph_page")
st.title(text("graph_page", lang()))
st.caption(text("graph_intro", lang()))
left, right = st.columns([1, 2], gap="medium")
with left:
    trace = editor("graph", lang(), device())
with right:
    if trace is None:
        st.info(text("press_run", lang()))
    else:
        error_panel(trace, st.session_state["graph.code"], lang())
        if trace.steps:
            index = step_controls("graph.step", len(trace.steps), lang())
            st.markdown(f"**{text('after_line', lang(), line=trace.steps[index].line)}**")
            graph_at_step("graph", trace, index, lang())
