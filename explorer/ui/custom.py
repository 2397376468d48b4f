"""The gradient check of a program's own autograd.Function classes."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.ui.common import may_run, pool
from explorer.ui.link import keep, take
from explorer.ui.steps import error_panel
from explorer.views.custom import gradient_checks, verdicts

CHECKED = "custom.check"  # (program, its Function classes, their check, its Trace or None)


def gradient_check(code: str, lang: str) -> None:
    """Run gradcheck (double precision) on each Function class of `code` (the program that
    ran) and say pass or fail. Its parse and its run pass the gate (`may_run`) once per
    program: the session keeps the last program's check."""
    checked = st.session_state.get(CHECKED)
    if checked is None or checked[0] != code:
        if not may_run(code, lang):
            return
        names, program = gradient_checks(code)
        result = None
        if names:
            with st.spinner(text("gradcheck_running", lang)):
                result = pool().run(program)
        st.session_state[CHECKED] = checked = (code, names, program, result)
    _, names, program, result = checked
    if result is None:
        st.info(text("no_function", lang))
        return
    st.caption(text("gradcheck_explain", lang))
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
