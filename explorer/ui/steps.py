"""Stepping through a Trace: first / back / forward / last, a slider, and the state at a step."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import pandas
import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.trace import Step, Trace, Variables
from explorer.ui.common import LIMITS
from explorer.ui.link import keep, restore
from explorer.views.numbers import PRECISION, full_decimals, parsed, writer, written, written_each
from explorer.views.present import kept, statement, variable_rows
from explorer.views.scene import Scene, scene
from explorer.views.unfinished import unfinished

SPEEDS = {"slow": 1.5, "normal": 0.8, "fast": 0.3}  # seconds a step stays when playing
KEYS = {"back": "Left", "forward": "Right"}  # keyboard shortcuts of a player's controls
# The variables table's headers in the learner's language; the others are PyTorch's names.
HEADERS = {"name": "col_name", "type": "col_type", "value": "col_value"}


def step_controls(key: str, count: int, lang: str, param: str = "step",
                  player: bool = False, keys: bool = False,
                  place: Callable[[int], str] | None = None) -> int:
    """Python Tutor style controls over `count` steps, in one row (a phone's too, under the
    picture they move), then a slider; returns the chosen index (0-based). The step shown is
    `param` in the page's link. With `keys`, ← and → step. A `player` (which has the keys)
    also plays the steps one after another (Space plays and pauses), at a speed of the
    learner's choice: one page may have one player, or one set of keys. `place` names step
    n (1-based) on the slider, as the page's picture does, instead of its number."""
    restore(param, key)
    st.session_state[key] = max(1, min(st.session_state.get(key, count), count))

    def move(to: int) -> None:
        st.session_state[key] = max(1, min(to, count))
        st.session_state[f"{key}.playing"] = False

    now = st.session_state[key]
    labels = (("first", 1), ("back", now - 1), ("forward", now + 1), ("last", count))
    playing = player and count > 1
    with st.container(key=f"steps-{key}"):  # one row on every screen (explorer.ui.common)
        columns = st.columns(5 if playing else 4, gap="small")
    for column, (label, to) in zip(columns[:2] + columns[-2:], labels, strict=True):
        column.button(text(label, lang), key=f"{key}.{label}", on_click=move, args=(to,),
                      disabled=to == now or not 1 <= to <= count, width="stretch",
                      shortcut=KEYS.get(label) if player or keys else None)
    if playing:
        _player(key, count, lang, columns[2], place)
    elif count > 1:
        _slider(st, key, count, lang, place)
    keep(param, st.session_state[key])
    return st.session_state[key] - 1


def _slider(where: Any, key: str, count: int, lang: str,
            place: Callable[[int], str] | None) -> None:
    """The slider over steps 1..`count` in `where` (a container, or st), each named by
    `place`."""
    if place is None:
        where.slider(text("step", lang), 1, count, key=key)
    else:
        where.select_slider(text("step", lang), list(range(1, count + 1)), key=key,
                            format_func=place)


def _player(key: str, count: int, lang: str, button: Any,
            place: Callable[[int], str] | None = None) -> None:
    """Play / pause (in the column `button`, amid the step buttons), then the slider and the
    speed; while playing, the page moves one step on each tick."""
    playing, ticked = f"{key}.playing", f"{key}.ticked"

    def toggle() -> None:
        st.session_state[playing] = not st.session_state.get(playing, False)
        if st.session_state[playing] and st.session_state[key] >= count:
            st.session_state[key] = 1  # played to the end: from the start again

    on = st.session_state.get(playing, False)
    button.button(text("pause" if on else "play", lang), key=f"{key}.play", on_click=toggle,
                  shortcut="Space", type="primary" if on else "secondary", width="stretch")
    slider, speed = st.columns([4, 3], vertical_alignment="bottom")
    _slider(slider, key, count, lang, place)
    chosen = speed.segmented_control(text("speed", lang), list(SPEEDS), key=f"{key}.speed",
                                     default="normal", format_func=lambda s: text(s, lang),
                                     label_visibility="collapsed") or "normal"
    if not on:
        return
    st.session_state[ticked] = time.monotonic()  # this run shows the step: the next tick moves

    @st.fragment(run_every=SPEEDS[chosen])
    def tick() -> None:
        if not st.session_state.get(playing) or (
                time.monotonic() - st.session_state[ticked] < SPEEDS[chosen] * 0.8):
            return  # paused since (`pause`), or too soon
        if st.session_state[key] >= count:
            st.session_state[playing] = False
        else:
            st.session_state[key] += 1
        st.rerun()  # the whole page: the picture, the panel and the editor's marks

    tick()


def pause(key: str) -> None:
    """Stop the player of the controls `key` where it is (a step waits for the learner)."""
    st.session_state[f"{key}.playing"] = False


def mark(page: str, lines: tuple[int, int] | None) -> None:
    """The lines (first, last) page `page`'s editor marks in this run, decided where the page
    draws what they belong to; explorer.ui.editor draws the editor after the page, with
    them."""
    st.session_state[f"{page}.marked"] = lines


class Made(NamedTuple):
    """A node chosen on the picture: its name, and the lines of the statement that made it."""

    name: str
    lines: tuple[int, int]


def after_line(page: str, step: Step, lang: str, made: Made | None = None,
               left_out: str | None = None) -> None:
    """"State after line N" over the step shown, and the editor's mark of the same lines; or,
    for a node `made` chosen at this step, the line that made it, named first and marked: the
    one place caption and mark come from, on every page. Then what the state `left_out`, if
    anything (`unfinished_note`)."""
    mark(page, made.lines if made else (step.line, step.end_line))
    words = text("after_node", lang, line=made.lines[0], node=code_span(made.name),
                 after=step.line) if made else text("after_line", lang, line=step.line)
    st.markdown(f"**{words}**")
    if left_out:
        st.caption(left_out)


def unfinished_note(trace: Trace, code: str, lang: str, index: int | None = None) -> str | None:
    """What the state at the run's error leaves out, in words: the top-level statement the
    error stopped part way (explorer.views.unfinished); None where nothing is left out, or
    step `index`, if given, is not the last (the state at the error)."""
    if index is not None and index != len(trace.steps) - 1:
        return None
    found = unfinished(trace, code, LIMITS.steps)
    return found.said(lang) if found else None


def show_trace(page: str, trace: Trace, code: str, lang: str, below: Any = None) -> None:
    """The run's state at the chosen step: the statement, variables, output; the error. The
    variables and the output go `below` (a container across the page), if given."""
    error_panel(trace, code, lang)
    if trace.steps:
        index = step_controls(f"{page}.step", len(trace.steps), lang)
        step = trace.steps[index]
        after_line(page, step, lang)
        st.code(statement(code, step.line, step.end_line), language="python")
        before = trace.steps[index - 1].variables if index else {}
        with below or st.container():  # the table wants the page's width
            if left_out := unfinished_note(trace, code, lang, index):
                st.info(left_out, icon=":material/history:")
            _variables(step.variables, before, lang, page)
        output = "".join(s.output for s in trace.steps[: index + 1])
        with below or st.container():
            st.markdown(f"**{text('output', lang)}**")
            if output:
                st.code(output, language=None)
            else:
                st.caption(text("no_output", lang))
    for warning in trace.warnings:
        st.warning(plain(warning), icon="⚠️")
    for note in trace.notes:
        st.caption(plain(note))
    st.caption(text("ran_in", lang, device=plain(trace.device), threads=trace.threads,
                    ms=trace.elapsed_ms) if trace.started else text("ran_nothing", lang))
    if trace.reused:
        st.caption(text("reused", lang))


def error_panel(trace: Trace, code: str, lang: str) -> None:
    """The run's error, if any: where, PyTorch's own words, and what they mean; then the
    scene of an autograd error, or of a gradient that is not finite (explorer.views.scene)."""
    error = trace.error
    found = scene(trace, code)
    if error is None:
        if found is not None:
            _scene(found, code, lang)
        return
    line = error.line
    title = (text("error_on_line", lang, type=plain(error.type), line=line) if line
             else text("error", lang, type=plain(error.type)))
    with st.container(border=True):
        st.error(title, icon="🛑")
        if line:
            st.code(statement(code, line, line), language="python")
        st.code(error.message, language=None, wrap_lines=True)
        if error.explanation:
            st.info(f"**{text('what_it_means', lang)}** — {getattr(error.explanation, lang)}",
                    icon="💡")
        if left_out := unfinished_note(trace, code, lang):
            st.warning(left_out, icon=":material/history:")
        if found is not None:
            _scene(found, code, lang, shown=line)


def _scene(found: Scene, code: str, lang: str, shown: int | None = None) -> None:
    """Where on the graph and on which line an autograd error happened, in plain words (the
    Graph page marks its nodes); the line's code unless it is the one `shown` already."""
    values = {key: code_span(str(value)) for key, value in found.said.items()}
    with st.container(border=True):
        st.markdown(f"**{text('scene_title', lang)}**")
        st.warning(text(f"scene_{found.kind}", lang, line=found.line or "?", **values),
                   icon=":material/my_location:")
        if found.line and found.line != shown:
            st.code(statement(code, found.line, found.line), language="python")


def _variables(now: Variables, before: Variables, lang: str, page: str) -> None:
    rows = variable_rows(now, before)
    if not rows:
        st.caption(text("no_variables", lang))
        return
    st.table([{text(HEADERS[k], lang) if k in HEADERS else k: v for k, v in row.items()}
              for row in rows])
    st.caption(f"● {text('changed', lang)}")
    inspectable = [name for name, info in now.items() if info.kind in ("tensor", "ndarray")]
    if not inspectable:
        return
    restore("inspect", f"{page}.inspect", inspectable)
    name = st.selectbox(text("inspect", lang), inspectable, key=f"{page}.inspect")
    keep("inspect", name)
    info = now[name]
    for label, values, norm in ((text("values", lang), info.values, info.norm),
                                (text("grad", lang), info.grad, info.grad_norm)):
        if values is not None:
            st.markdown(f"{code_span(name)} {label}")
            _values(values)
            if said := kept(values, info.numel, norm, lang):
                st.caption(said)


def _values(values: Any) -> None:
    """A 0-d value as text, 1-d as one row, 2-d as a grid, higher as nested lists."""
    if not isinstance(values, list):
        st.code(written(values), language=None)
    elif values and isinstance(values[0], list) and values[0] and isinstance(values[0][0], list):
        st.json(written_each(values), expanded=False)
    else:
        number_table(values if values and isinstance(values[0], list) else [values],
                     width="stretch")


def number_table(rows: list[list[Any]], dtype: str | None = None, **options: Any) -> None:
    """A grid of numbers as a table that sorts them as numbers, each written as print(tensor)
    writes the grid (in full for a tensor of `dtype`, if given); `options` for st.dataframe."""
    write = writer(rows, full_decimals(rows, dtype) if dtype else PRECISION)
    table = pandas.DataFrame([[parsed(v) for v in row] for row in rows])
    if any(kind == "c" for kind in table.dtypes.map(lambda d: d.kind)):
        table = table.map(write)  # Arrow holds no complex numbers: these sort as text
    st.dataframe(table.style.format(write), **options)
