"""The Graph page's last part: the graphs library functions ran backward through for the
program (torch.func's transforms, torch.autograd.functional, gradcheck), one at a time."""

from __future__ import annotations

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.trace import Trace, notes
from explorer.trace.graph_view import view
from explorer.ui.graph import layout, layout_failed, viewer
from explorer.ui.link import keep, restore
from explorer.views.library import label, said
from explorer.views.render import LayoutError

HEIGHT = "clamp(220px, 60vh, 420px)"  # below the program's own graph: smaller


def library_graphs(page: str, trace: Trace, lang: str, line: int | None = None) -> None:
    """Each library pass's graph and what ran, chosen among them (none: nothing shown); on
    coming to a step at `line`, the first pass made there is chosen."""
    if not trace.library:
        return
    st.subheader(text("library_title", lang))
    st.caption(text("library_intro", lang))
    choices = list(range(len(trace.library)))
    here = [i for i in choices if trace.library[i].line == line]
    if restore("library", f"{page}.library", choices):
        st.session_state[f"{page}.library_at"] = line  # the link's choice stands
    elif here and st.session_state.get(f"{page}.library_at") != line:
        st.session_state[f"{page}.library"] = here[0]
    st.session_state[f"{page}.library_at"] = line
    chosen = st.selectbox(text("library_choice", lang), choices, key=f"{page}.library",
                          format_func=lambda i: label(trace.library[i], lang))
    keep("library", chosen or None)
    made = trace.library[chosen or 0]
    st.markdown(said(made, lang))
    graph = trace.graphs[made.graph]
    if graph.note:
        st.warning(text("graph_note", lang, note=plain(notes.said(graph.note, lang))))
        return
    try:
        picture = layout(view(graph).dot)
    except LayoutError as error:
        st.error(layout_failed(error, lang))
        return
    viewer(f"{page}.library", picture, None, HEIGHT, text("library_title", lang))
