"""The program editor (an example picker, the code, the Run button) and the page around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.content.examples import EXAMPLES, by_key
from explorer.content.i18n import text
from explorer.trace import Trace
from explorer.trace.schema import LastRound
from explorer.ui.code_editor import code_editor
from explorer.ui.common import LIMITS, device, lang, may_run, page, pool
from explorer.ui.link import keep, take
from explorer.views import places
from explorer.views.present import cut


def editor(name: str, language: str, run_on: str,
           default: str = "autograd-basics") -> tuple[Trace | None, Callable[[], None]]:
    """Show the editor of page `name`; run the code when asked (`_run`). Returns the page's
    last Trace, and what draws the code itself in its place: called after the page has shown
    the run, so that it marks what the page marked (`_marks`)."""
    code_key, trace_key = f"{name}.code", f"{name}.trace"
    for marked in ("marked", "marked_where"):  # marked anew by this run's page
        st.session_state.pop(f"{name}.{marked}", None)
    linked, linked_last = take("code"), take("last")
    fresh = linked != st.session_state.get(code_key) or trace_key not in st.session_state
    if linked is not None and fresh:  # shown in the editor, then run like any other program
        open_program(name, None, linked)
        st.session_state[f"{name}.linked"] = linked
        st.session_state[f"{name}.linked_last"] = linked_last  # a round its run stepped too
    if code_key not in st.session_state:
        st.session_state[code_key] = by_key(default).code

    def load_example() -> None:
        st.session_state[code_key] = by_key(st.session_state[f"{name}.example"]).code_in(language)
        st.session_state.pop(trace_key, None)

    def run_now(code: str) -> None:
        st.session_state[code_key] = code
        st.session_state[f"{name}.autorun"] = True

    st.selectbox(text("preset", language), [e.key for e in EXAMPLES], index=None,
                 format_func=lambda key: by_key(key).title[language], key=f"{name}.example",
                 on_change=load_example, placeholder="—")
    look = st.session_state.get(f"{name}.look")  # a lesson's (explorer.ui.lessons._open)
    if look and look["code"] == st.session_state[code_key]:
        st.caption(look[language])
    st.markdown(f"**{text('code', language)}**")
    keep("code", st.session_state[code_key])
    if st.session_state.get(f"{name}.linked") == st.session_state[code_key]:
        st.caption(text("link_opened", language))
    # Over the code, not between it and a phone's picture (stacked under it).
    st.caption(text("sandbox_note", language, time=LIMITS.time_s, memory=LIMITS.memory_mb))
    slot = st.container()  # filled after the page, so that it marks what the page shows
    clicked = st.button(text("run", language), type="primary", key=f"{name}.run")
    code = st.session_state[code_key]
    _run(name, code, run_on, clicked, language)
    if st.session_state.get(f"{name}.ran") == code:
        keep("last", st.session_state.get(f"{name}.last"))

    def draw() -> None:
        with slot:
            marks = _marks(name)
            code_editor(f"{name}.editor", st.session_state[code_key], text("code", language),
                        **marks, on_run=run_now,
                        on_edit=lambda code: st.session_state.update({code_key: code}))
            _where(name, language, marks["step"])
            _last_rounds(name, language)
    return st.session_state.get(trace_key), draw


def _run(name: str, code: str, run_on: str, clicked: bool, language: str) -> None:
    """Run `code` when asked: by Run on `run_on`, from the editor, from a link (stepping
    through the loop's round its run did), or again as the run shown ran, stepping through a
    loop's last round (`_last_rounds`); then show its last step, or that round's first and
    the first backward call made in it (where the page lists calls, explorer.ui.backward)."""
    trace_key = f"{name}.trace"
    again: tuple[str, LastRound] | None = st.session_state.pop(f"{name}.again", None)
    if again is not None and (again[0] != code or trace_key not in st.session_state
                              or st.session_state.get(f"{name}.ran") != code):
        again = None  # asked of a run no longer shown
    linked = st.session_state.pop(f"{name}.linked_last", None)  # for the link's own run
    if not (clicked or st.session_state.pop(f"{name}.autorun", False) or again) or (
            not may_run(code, language)):
        return
    last = again[1] if again else None
    if last is not None:
        asked: tuple[int, int] | None = (last.loop, last.round)
    else:  # Run asks for none; a link's own run, for the round its run stepped through
        asked = None if clicked else linked
    with st.spinner(text("running", language)):
        trace = pool().run(code, device=st.session_state[trace_key].device if last else run_on,
                           rounds=(asked,) if asked else ())
    st.session_state.update({trace_key: trace, f"{name}.ran": code, f"{name}.last": asked})
    at = places.last_round(trace.steps, last.line) if last else None
    st.session_state[f"{name}.step"] = max(len(trace.steps), 1) if at is None else at + 1
    if at is not None and last is not None and (
            call := places.call_in_round(trace.backward, trace.steps[at], last.line)):
        st.session_state[f"{name}.call"] = call


def _marks(name: str) -> dict[str, Any]:
    """What the editor marks of the page's last run, while it shows that run's program: the
    lines the page marked as it drew this run (explorer.ui.steps.mark: the step its caption
    names, the node chosen, the node the backward replay is about; none where they were not
    stepped), else those of the last step, with the lines that called its function; and the
    error's line with its message."""
    trace: Trace | None = st.session_state.get(f"{name}.trace")
    if trace is None or st.session_state.get(f"{name}.ran") != st.session_state[f"{name}.code"]:
        return {"step": None, "error": None}
    shown = trace.step_at(len(trace.steps) - 1)
    marked = f"{name}.marked"  # None there: the page marks no line (one not stepped)
    step = st.session_state.get(marked, (shown.line, shown.end_line) if shown else None)
    calling = st.session_state.get(f"{name}.calling", (shown.calling or ()) if shown else ())
    error = trace.error if trace.error and trace.error.line else None
    return {"step": step, "calling": calling,
            "error": error and {"line": error.line,
                                "message": cut(f"{error.type}: {error.message}", 300)}}


def _where(name: str, language: str, marked: tuple[int, int] | None) -> None:
    """Under the editor, the rounds of the loops and the function the `marked` line ran in,
    as the page's caption says them (explorer.ui.steps.mark): beside the line, where a phone
    shows that caption further down."""
    where = st.session_state.get(f"{name}.marked_where")
    if marked and where:
        line = text("line_short", language, line=marked[0])
        st.caption(f":material/repeat: {line} · {where}")


def _last_rounds(name: str, language: str) -> None:
    """Under the editor, for each loop of the run shown whose last round no step went
    through: how many rounds it ran, and a button that runs the program again, the same way,
    stepping through that round too (where the run would repeat)."""
    trace: Trace | None = st.session_state.get(f"{name}.trace")
    code = st.session_state[f"{name}.code"]
    if trace is None or st.session_state.get(f"{name}.ran") != code:
        return
    for last in trace.unstepped:
        said = places.unstepped(last, trace.steps, language)
        if not trace.repeatable:
            st.caption(f"{said} {text('last_round_unrepeatable', language)}")
            continue
        st.caption(said)
        number = places.last_round_number(last)
        st.button(text("last_round_again", language, round=number), icon=":material/replay:",
                  key=f"{name}.again.{last.loop}",
                  help=text("last_round_help", language, round=number),
                  on_click=st.session_state.update, args=({f"{name}.again": (code, last)},))


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
    drawn over it) and the right column, returned with the page's last Trace to fill it
    (`with` it: on leaving it, the editor is drawn, marking what the column marked).
    `replay` is kept for the pages that say so: every page marks what it shows."""
    page(title_key)
    st.title(text(title_key, lang()))
    st.caption(text(intro_key, lang()))
    left, right = st.columns(2, gap="medium")  # the editor: 60 characters a line at 1400 px
    with left:
        slot = st.container()
        trace, draw = editor(name, lang(), device(), default)
    if above is not None:
        with slot:
            above()
    if trace is None:
        right.info(text("press_run", lang()))
        draw()
        return trace, right
    return trace, _Column(right, draw)


class _Column:
    """The page's right column: the page fills it `with` it, and on leaving it the editor
    (`then`) is drawn, once, so that its mark is the one the column decided."""

    def __init__(self, column: Any, then: Callable[[], None]) -> None:
        self.column, self.then = column, then

    def __enter__(self) -> Any:
        return self.column.__enter__()

    def __exit__(self, kind: Any, *raised: Any) -> Any:
        try:
            return self.column.__exit__(kind, *raised)
        finally:
            then, self.then = self.then, None
            # Not when Streamlit stops the run (a newer one replaces it): it draws the editor.
            if then is not None and (kind is None or issubclass(kind, Exception)):
                then()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.column, name)
