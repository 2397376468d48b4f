"""The program editor (an example picker, the code, the Run button) and the page around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.content.examples import EXAMPLES, by_key
from explorer.content.i18n import text
from explorer.runner.graph_view import node_lines
from explorer.runner.trace import Trace
from explorer.ui.backward import focused_lines
from explorer.ui.code_editor import code_editor
from explorer.ui.common import LIMITS, device, lang, may_run, page, pool
from explorer.ui.link import keep, take


def editor(name: str, language: str, run_on: str, default: str = "autograd-basics",
           replay: bool = False) -> Trace | None:
    """Show the editor of page `name`; run the code on `run_on` when asked. Returns the
    page's last Trace. On a page that `replay`s a backward pass, the editor marks the
    statement of the node the replay is about."""
    code_key, trace_key = f"{name}.code", f"{name}.trace"
    linked = take("code")
    fresh = linked != st.session_state.get(code_key) or trace_key not in st.session_state
    if linked is not None and fresh:  # shown in the editor, then run like any other program
        open_program(name, None, linked)
        st.session_state[f"{name}.linked"] = linked
    if code_key not in st.session_state:
        st.session_state[code_key] = by_key(default).code

    def load_example() -> None:
        st.session_state[code_key] = by_key(st.session_state[f"{name}.example"]).code
        st.session_state.pop(trace_key, None)

    def run_now(code: str) -> None:
        st.session_state[code_key] = code
        st.session_state[f"{name}.autorun"] = True

    st.selectbox(text("preset", language), [e.key for e in EXAMPLES], index=None,
                 format_func=lambda key: by_key(key).title[language], key=f"{name}.example",
                 on_change=load_example, placeholder="—")
    st.markdown(f"**{text('code', language)}**")
    slot = st.container()  # filled after a run, so that it marks that run's step and error
    keep("code", st.session_state[code_key])
    if st.session_state.get(f"{name}.linked") == st.session_state[code_key]:
        st.caption(text("link_opened", language))
    st.caption(text("sandbox_note", language, time=LIMITS.time_s, memory=LIMITS.memory_mb))
    clicked = st.button(text("run", language), type="primary", key=f"{name}.run")
    code = st.session_state[code_key]
    if (clicked or st.session_state.pop(f"{name}.autorun", False)) and may_run(code, language):
        with st.spinner(text("running", language)):
            trace = pool().run(code, device=run_on)
        st.session_state[trace_key] = trace
        st.session_state[f"{name}.ran"] = code
        st.session_state[f"{name}.step"] = max(len(trace.steps), 1)
    with slot:
        code_editor(f"{name}.editor", st.session_state[code_key], text("code", language),
                    **_marks(name, replay), on_run=run_now,
                    on_edit=lambda code: st.session_state.update({code_key: code}))
    return st.session_state.get(trace_key)


def _marks(name: str, replay: bool) -> dict[str, Any]:
    """What the editor marks of the page's last run, while it shows that run's program: the
    statement that made the graph node chosen in explorer.ui.graph's node details, else the
    lines the backward replay is about (explorer.ui.backward.focused_lines), else those of the
    step shown; and the error's line with its message."""
    trace: Trace | None = st.session_state.get(f"{name}.trace")
    if trace is None or st.session_state.get(f"{name}.ran") != st.session_state[f"{name}.code"]:
        return {"step": None, "error": None}
    shown = trace.step_at(st.session_state.get(f"{name}.step", len(trace.steps)) - 1)
    node = st.session_state.get(f"{name}.node")
    step = node_lines(trace).get(node) if node else (
        focused_lines(name, trace) if replay else None)
    error = trace.error if trace.error and trace.error.get("line") else None
    return {"step": step or ((shown.line, shown.end_line) if shown else None),
            "error": error and {"line": error["line"],
                                "message": f"{error['type']}: {error['message']}"[:300]}}


def open_program(name: str, page_path: str | None, code: str) -> None:
    """Put `code` in the editor `name` to run it there, going to its page (if not None)."""
    st.session_state[f"{name}.code"] = code
    st.session_state[f"{name}.autorun"] = True
    st.session_state.pop(f"{name}.trace", None)
    if page_path is not None:
        st.switch_page(page_path)


def editor_page(name: str, title_key: str, intro_key: str, default: str = "autograd-basics",
                above: Callable[[], None] | None = None,
                replay: bool = False) -> tuple[Trace | None, Any]:
    """What every program page shares: title, intro, the editor on the left (with `above`
    drawn over it) and the right column, returned with the page's last Trace to fill it.
    `replay`: the page replays a backward pass (`editor`)."""
    page(title_key)
    st.title(text(title_key, lang()))
    st.caption(text(intro_key, lang()))
    left, right = st.columns([1, 2], gap="medium")
    with left:
        slot = st.container()
        trace = editor(name, lang(), device(), default, replay)
    if above is not None:
        with slot:
            above()
    if trace is None:
        right.info(text("press_run", lang()))
    return trace, right
