"""The gradient check of a program's own autograd.Function classes."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.ui.common import pool
from explorer.ui.link import keep, take
from explorer.ui.steps import error_panel
from explorer.views.custom import check_program, function_classes, verdicts


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
        line = text("gradcheck_pass" if passed else "gradcheck_fail", lang,
                    name=plain(verdict["name"]))
        (st.success if passed else st.error)(line, icon=":material/check_circle:" if passed
                                             else ":material/cancel:")
        if relu is not None:
            st.caption(text("matches_relu" if relu else "differs_relu", lang,
                            name=plain(verdict["name"])))
    with st.expander(text("check_program", lang)):
        st.code(program, language="python")


TABS = ("check", "graph", "backward")


def tabs(lang: str) -> list[Any]:
    """The page's tabs: gradient check, graph, backward pass. The open one is `tab` in the
    page's link."""
    labels = {text(f"tab_{tab}", lang): tab for tab in TABS}
    key = f"custom.tab.{lang}"
    wanted = take("tab")
    if wanted is not None:
        st.session_state[key] = text(f"tab_{wanted}", lang)
    opened = st.tabs(list(labels), key=key, on_change="rerun")
    keep("tab", labels.get(st.session_state.get(key), TABS[0]))
    return list(opened)
