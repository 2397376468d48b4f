"""Autograd Explorer, home page. Run with `streamlit run streamlit_app.py`; pages in pages/."""

import streamlit as st

from explorer.examples import EXAMPLES
from explorer.i18n import text
from explorer.ui.common import lang, page, pool

page("home")
pool()  # start the worker now: the first run should not wait for PyTorch to import
st.title(text("app_title", lang()))
st.markdown(f"#### {text('tagline', lang())}")
st.write(text("home_what", lang()))
st.page_link("pages/1_Playground.py", label=f"{text('home_start', lang())} → "
             f"{text('playground', lang())}", icon=":material/play_arrow:")
st.subheader(text("home_examples", lang()))
st.markdown("\n".join(f"- {e.title[lang()]} · `{e.key}`" for e in EXAMPLES))
