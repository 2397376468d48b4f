"""The gradient check of a program's own autograd.Function classes."""

from __future__ import annotations

import streamlit as st

from explorer.custom import check_program, function_classes, verdicts
from explorer.i18n import text
from explorer.ui.common import pool
from explorer.ui.steps import error_panel


def gradient_check(code: str, lang: str) -> None:
    """Run gradcheck (double precision) on each Function class and say pass or fail."""
    names = function_classes(code)
    if not names:
        st.info(text("no_function", lang))
        return
    st.caption(text("gradcheck_explain", lang))
    program = check_program(code)
    key = f"custom.check.{hash(program)}"
    if key not in st.session_state:
        with st.spinner(text("gradcheck_running", lang)):
            st.session_state[key] = pool().run(program)
    result = st.session_state[key]
    if not result.ok:
        error_panel(result, program, lang)
    for verdict in verdicts(result.variables, names):
        passed, relu = verdict["gradcheck"], verdict["matches_relu"]
        line = text("gradcheck_pass" if passed else "gradcheck_fail", lang, name=verdict["name"])
        (st.success if passed else st.error)(line, icon=":material/check_circle:" if passed
                                             else ":material/cancel:")
        if relu is not None:
            st.caption(text("matches_relu" if relu else "differs_relu", lang,
                            name=verdict["name"]))
    with st.expander(text("check_program", lang)):
        st.code(program, language="python")
