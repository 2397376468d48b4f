"""Training: any training loop typed in the editor, its loss drawn as it falls."""

import streamlit as st

from explorer.content.i18n import text
from explorer.ui.common import lang, page
from explorer.ui.link import publish
from explorer.ui.training import iteration_pass, program_editor, train

page("training_page")
st.title(text("training_page", lang()))
st.caption(text("training_edit_intro", lang()))
left, right = st.columns(2, gap="medium")
with left:
    draw = program_editor(lang())
with right:
    ran = train(lang())
draw()  # once the run is shown: the editor marks its error
if ran is not None:
    iteration_pass(*ran, lang())
publish()
