"""The gradient check of a program's own autograd.Function classes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import plain
from explorer.ui.common import LIMITS, may_run, pool
from explorer.ui.link import keep, take
from explorer.ui.steps import error_panel, mark
from explorer.views.custom import (
    ATOL,
    EPS,
    RTOL,
    SIZE,
    Inputs,
    Jacobian,
    gradient_checks,
    inputs_used,
    jacobians,
    number,
    said,
    table,
    verdicts,
)

# A Jacobian's two tables side by side where the column has room for both, else one above
# the other; compact, each number on one line.
CSS = """<style>
[class*="st-key-jacobian-"] [data-testid="stHorizontalBlock"] { flex-wrap: wrap !important; }
[class*="st-key-jacobian-"] [data-testid="stColumn"] { min-width: min-content !important; }
[class*="st-key-jacobian-"] th, [class*="st-key-jacobian-"] td {
  font-size: .75rem !important; padding: .1rem .35rem !important; white-space: nowrap; }
</style>"""
CHECK_LIMITS = replace(LIMITS, line_steps=0)  # the check's variables are read, not its lines
CHECKED = "custom.check"  # (program, its Function classes, their check, its Trace or None)


def gradient_check(code: str, lang: str) -> None:
    """Run gradcheck (double precision) on each Function class of `code` (the program that
    ran) at the inputs the program gives it, say pass or fail, what it was checked at, and
    show the Jacobians it compared. Its parse and its run pass the gate (`may_run`) once per
    program: the session keeps the last program's check."""
    checked = st.session_state.get(CHECKED)
    if checked is None or checked[0] != code:
        if not may_run(code, lang):
            return
        names, program = gradient_checks(code)
        result = None
        if names:
            with st.spinner(text("gradcheck_running", lang)):
                result = pool().run(program, limits=CHECK_LIMITS)
        st.session_state[CHECKED] = checked = (code, names, program, result)
    _, names, program, result = checked
    mark("custom", None)  # the check is of a class: a line only where it names one, below
    if result is None:
        st.info(text("no_function", lang))
        return
    st.caption(text("gradcheck_explain", lang))
    if not result.ok:
        error_panel(result, program, lang)
    for index, verdict in enumerate(verdicts(result.variables, names)):
        name, passed, relu = verdict["name"], verdict["gradcheck"], verdict["matches_relu"]
        line = text("gradcheck_pass" if passed else "gradcheck_mismatch" if passed is False
                    else "gradcheck_unchecked", lang, name=plain(name))
        (st.success if passed else st.error)(line, icon=":material/check_circle:" if passed
                                             else ":material/cancel:")
        used = inputs_used(result.variables, name)
        if used is not None:
            _checked_at(name, used, lang)
            if index == 0 and used.line is not None:  # whose inputs the first was checked at
                mark("custom", (used.line, used.line))
        says = said(result.variables, name)
        if says and not passed:
            st.caption(text("gradcheck_says", lang, message=plain(says)))
        if relu is not None:
            st.caption(text("matches_relu" if relu else "differs_relu", lang, name=plain(name)))
        outputs, found = jacobians(result.variables, name)
        if found:
            with st.expander(text("jacobians_title", lang, name=plain(name)),
                             expanded=not passed):
                _jacobians(index, outputs, found, lang)
    with st.expander(text("check_program", lang)):
        st.code(program, language="python")


def _checked_at(name: str, used: Inputs, lang: str) -> None:
    """Whose values gradcheck took for class `name`: the program's, or seeded random ones of
    the shapes the program gives (and why), and whether it took its fast mode."""
    st.caption(text(f"checked_{used.source}", lang, name=plain(name), line=used.line,
                    shapes=plain(" · ".join(used.shapes)), size=SIZE))
    if used.fast:
        st.caption(text("gradcheck_fast", lang, size=used.elements))


def _jacobians(index: int, outputs: int, found: list[Jacobian], lang: str) -> None:
    """Each input's analytical and numerical Jacobians side by side, differing entries marked,
    the farthest apart in words, and the tolerance gradcheck used."""
    st.markdown(CSS, unsafe_allow_html=True)
    st.caption(text("jacobian_tolerance", lang, atol=f"{ATOL:g}", rtol=f"{RTOL:g}",
                    eps=f"{EPS:g}"))
    rows = len(found[0].analytical)
    if outputs > rows:
        st.caption(text("jacobian_rows", lang, rows=rows, outputs=outputs))
    for jacobian in found:
        with st.container(key=f"jacobian-{index}-{jacobian.index}"):
            st.markdown("**" + text("jacobian_input", lang, k=jacobian.index,
                                    count=jacobian.count, total=jacobian.size) + "**")
            columns = len(jacobian.analytical[0]) if jacobian.analytical else 0
            if jacobian.elements > columns:
                st.caption(text("jacobian_columns", lang, columns=columns,
                                size=jacobian.elements))
            worst = jacobian.worst()
            if worst is not None:
                a, n = (jacobian.analytical[worst[0]][worst[1]],
                        jacobian.numerical[worst[0]][worst[1]])
                st.caption(text("jacobian_worst", lang, i=worst[0], j=worst[1],
                                a=number(a, 6), n=number(n, 6), gap=number(abs(a - n), 6),
                                allowed=number(ATOL + RTOL * abs(n), 6)))
            left, right = st.columns(2)
            for column, key, values in ((left, "jacobian_analytical", jacobian.analytical),
                                        (right, "jacobian_numerical", jacobian.numerical)):
                column.caption(text(key, lang))
                column.markdown(table(values, jacobian.differs))


TABS = ("check", "graph", "backward")


def tabs(lang: str) -> list[tuple[str, Any]]:
    """The page's tabs (gradient check, graph, backward pass), the open one last: each draws
    what it shows in the editor's mark, and the last to draw decides it. The open one is
    `tab` in the page's link."""
    labels = {text(f"tab_{tab}", lang): tab for tab in TABS}
    key = f"custom.tab.{lang}"
    wanted = take("tab")
    if wanted is not None:
        st.session_state[key] = text(f"tab_{wanted}", lang)
    made = dict(zip(TABS, st.tabs(list(labels), key=key, on_change="rerun"), strict=True))
    opened = labels.get(st.session_state.get(key), TABS[0])
    keep("tab", opened)
    return sorted(made.items(), key=lambda tab: tab[0] == opened)
