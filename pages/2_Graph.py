"""Autograd graph: the grad_fn graph torchviz would draw, growing line by line."""

import streamlit as st

from explorer.ui.common import lang
from explorer.ui.editor import editor_page
from explorer.ui.graph import graph_at_step, graph_frame
from explorer.ui.library import library_graphs
from explorer.ui.link import publish
from explorer.ui.steps import after_line, error_panel, sampled_notes, trace_controls

trace, state = editor_page("graph", "graph_page", "graph_intro")
if trace is not None:
    with state:
        with st.container():  # where "Press Run" was, before the first run
            error_panel(trace, st.session_state["graph.code"], lang())
        line = None  # the step's, whose library passes are shown first
        if trace.steps:
            picture = st.container()  # the picture, then its controls right under it
            index = trace_controls("graph.step", trace.steps, lang(), keys=True)
            caption = st.container()  # what the editor marks, once the picture says
            sampled_notes(trace, lang())  # why the slider skips rounds
            made = graph_at_step("graph", trace, index, lang(), where=picture,
                                 code=st.session_state["graph.ran"])
            with caption:
                after_line("graph", trace.steps[index], lang(), made)
            line = trace.steps[index].line
        library_graphs("graph", trace, lang(), line)
else:  # the graph's frame, loaded before the first run: its first picture comes quicker
    with state, st.container():  # where the picture will be: the frame is kept there
        graph_frame("graph", lang())
publish()
