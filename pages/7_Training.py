"""Training: the seed's two-layer network trained by hand, the loss drawn as it falls."""

import streamlit as st

from explorer.content.i18n import text
from explorer.ui.common import lang, page
from explorer.ui.link import publish
from explorer.ui.training import iteration_pass, settings_form, train

page("training_page")
st.title(text("training_page", lang()))
st.caption(text("training_intro", lang()))
settings = settings_form(lang())
trace = train(settings, lang())
if trace is not None:
    iteration_pass(settings, trace, lang())
publish()
