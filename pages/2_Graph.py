"""Autograd graph: the grad_fn graph torchviz would draw, growing statement by statement."""

import streamlit as st

from explorer.content.i18n import text
from explorer.ui.common import lang
from explorer.ui.editor import editor_page
from explorer.ui.graph import graph_at_step, graph_frame
from explorer.ui.link import publish
from explorer.ui.steps import error_panel, step_controls

trace, state = editor_page("graph", "graph_page", "graph_intro")
if trace is not None:
    with state:
        error_panel(trace, st.session_state["graph.code"], lang())
        if trace.steps:
            index = step_controls("graph.step", len(trace.steps), lang())
            st.markdown(f"**{text('after_line', lang(), line=trace.steps[index].line)}**")
            graph_at_step("graph", trace, index, lang())
else:  # the graph's frame, loaded before the first run: its first picture comes quicker
    with state:
        graph_frame("graph", lang())
publish()
