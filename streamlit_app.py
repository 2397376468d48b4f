"""Autograd Explorer, home page. Run with `streamlit run streamlit_app.py`; pages in pages/."""

import streamlit as st

from explorer.content.i18n import text
from explorer.ui.common import lang, page, pool
from explorer.ui.lessons import lesson_list
from explorer.ui.link import publish

page("home")
pool()  # start the worker now: the first run should not wait for PyTorch to import
st.title(text("app_title", lang()))
st.markdown(f"#### {text('tagline', lang())}")
st.write(text("home_what", lang()))
st.page_link("pages/1_Playground.py", label=f"{text('home_start', lang())} → "
             f"{text('playground', lang())}", icon=":material/play_arrow:")
lesson_list(lang())
publish()
