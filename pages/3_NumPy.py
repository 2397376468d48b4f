"""Tensor ↔ NumPy: a tensor and an array side by side, shared memory or a separate copy."""

import streamlit as st

from explorer.ui.common import lang
from explorer.ui.editor import editor_page
from explorer.ui.link import publish
from explorer.ui.sharing import lesson_picker, pair_view

trace, state = editor_page("numpy", "numpy_page", "numpy_intro", default="tensor-to-numpy",
                           above=lambda: lesson_picker("numpy", lang()))
if trace is not None:
    with state:
        pair_view("numpy", trace, st.session_state["numpy.code"], lang())
publish()
