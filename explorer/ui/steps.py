"""Stepping through a Trace: first / back / forward / last, a slider, and the state at a step."""

from __future__ import annotations

import streamlit as st

from explorer.i18n import text
from explorer.present import LISTING_CSS, code_html, variable_rows
from explorer.trace import Trace


def step_controls(page: str, trace: Trace, lang: str) -> int:
    """Python Tutor style controls; returns the chosen step index (0-based)."""
    key, count = f"{page}.step", len(trace.steps)
    st.session_state[key] = max(1, min(st.session_state.get(key, count), count))

    def move(to: int) -> None:
        st.session_state[key] = max(1, min(to, count))

    now = st.session_state[key]
    buttons = st.columns(4)
    labels = (("first", 1), ("back", now - 1), ("forward", now + 1), ("last", count))
    for column, (label, to) in zip(buttons, labels, strict=True):
        column.button(text(label, lang), key=f"{page}.{label}", on_click=move, args=(to,),
                      disabled=count <= 1 or to == now or not 1 <= to <= count,
                      use_container_width=True)
    if count > 1:
        st.slider(text("step", lang), 1, count, key=key)
    return st.session_state[key] - 1


def show_trace(page: str, trace: Trace, code: str, lang: str) -> None:
    """The run's state at the chosen step: code listing, variables, output, error."""
    _error(trace, lang)
    if not trace.steps:
        return
    index = step_controls(page, trace, lang)
    step = trace.steps[index]
    listing, state = st.columns([2, 3])
    with listing:
        st.markdown(LISTING_CSS, unsafe_allow_html=True)
        failed_here = index == len(trace.steps) - 1 and trace.error is not None
        error_line = trace.error["line"] if failed_here else None
        st.markdown(code_html(code, step.line, step.end_line, error_line),
                    unsafe_allow_html=True)
    with state:
        st.markdown(f"**{text('after_line', lang, line=step.line)}**")
        before = trace.steps[index - 1].variables if index else {}
        _variables(step.variables, before, lang, page)
    output = "".join(s.output for s in trace.steps[: index + 1])
    st.markdown(f"**{text('output', lang)}**")
    if output:
        st.code(output, language=None)
    else:
        st.caption(text("no_output", lang))
    for warning in trace.warnings:
        st.warning(warning, icon="⚠️")
    for note in trace.notes:
        st.caption(note)
    st.caption(text("ran_in", lang, device=trace.device, ms=trace.elapsed_ms))


def _error(trace: Trace, lang: str) -> None:
    error = trace.error
    if error is None:
        return
    title = (text("error_on_line", lang, type=error["type"], line=error["line"])
             if error["line"] else text("error", lang, type=error["type"]))
    with st.container(border=True):
        st.error(title, icon="🛑")
        st.code(error["message"], language=None, wrap_lines=True)
        if error["explanation"]:
            st.info(f"**{text('what_it_means', lang)}** — {error['explanation'][lang]}",
                    icon="💡")


def _variables(now: dict, before: dict, lang: str, page: str) -> None:
    rows = variable_rows(now, before)
    if not rows:
        st.caption(text("no_variables", lang))
        return
    st.table(rows)
    st.caption(f"● {text('changed', lang)}")
    inspectable = [r["name"] for r in rows if now[r["name"]]["kind"] in ("tensor", "ndarray")]
    if not inspectable:
        return
    name = st.selectbox(text("inspect", lang), inspectable, key=f"{page}.inspect")
    info = now[name]
    for label, values in ((text("values", lang), info["values"]),
                          (text("grad", lang), info.get("grad"))):
        if values is None:
            continue
        st.markdown(f"`{name}` {label}")
        _values(values)
    if info.get("truncated"):
        st.caption(text("truncated", lang, shown="≥1,000", total=f"{info['numel']:,}"))


def _values(values: object) -> None:
    """A 0-d value as text, 1-d as one row, 2-d as a grid, higher as nested lists."""
    if not isinstance(values, list):
        st.code(str(values), language=None)
    elif values and isinstance(values[0], list) and values[0] and isinstance(values[0][0], list):
        st.json(values, expanded=False)
    else:
        grid = values if values and isinstance(values[0], list) else [values]
        st.dataframe(grid, use_container_width=True)
