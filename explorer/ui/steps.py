"""Stepping through a Trace: first / back / forward / last, a slider, and the state at a step."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pandas
import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.trace import Step, Trace
from explorer.trace.notes import SAMPLED, said
from explorer.ui.link import keep, restore
from explorer.views import places
from explorer.views.numbers import (
    PRECISION,
    full_decimals,
    grid,
    parsed,
    writer,
    written,
    written_each,
)
from explorer.views.present import kept, statement, variable_rows
from explorer.views.scene import Scene, scene

SPEEDS = {"slow": 1.5, "normal": 0.8, "fast": 0.3}  # seconds a step stays when playing
CHAR_PX, CELL_PX = 7, 26  # a table's digit and its cell's padding, in pixels
KEYS = {"back": "Left", "forward": "Right"}  # keyboard shortcuts of a player's controls
# The variables table's headers in the learner's language; the others are PyTorch's names.
HEADERS = {"name": "col_name", "type": "col_type", "value": "col_value",
           "tangent": "col_tangent"}


def step_controls(key: str, count: int, lang: str, param: str = "step",
                  player: bool = False, keys: bool = False,
                  place: Callable[[int], str] | None = None) -> int:
    """Python Tutor style controls over `count` steps, in one row (a phone's too, under the
    picture they move), then a slider; returns the chosen index (0-based). The step shown is
    `param` in the page's link. With `keys`, ← and → step. A `player` (which has the keys)
    also plays the steps one after another (Space plays and pauses), at a speed of the
    learner's choice: one page may have one player, or one set of keys. `place` names step
    n (1-based) on the slider, as the page's picture does, instead of its number."""
    return _controls(key, range(1, count + 1), lang, param, player, keys, place) - 1


def trace_controls(key: str, steps: Sequence[Step], lang: str, param: str = "step",
                   keys: bool = False) -> int:
    """`step_controls` over a run's steps; returns the chosen step's index (0-based). Where
    the program ran lines inside loops or functions, the slider names each step's line and
    rounds (explorer.views.places), and a row under it holds whether to step inside them
    (else over whole top-level statements) and the same line a round back or on (with
    `keys`, Shift+← and Shift+→)."""
    if not places.inner(steps):
        return step_controls(key, len(steps), lang, param, keys=keys)
    inside = st.session_state.setdefault(f"{key}.inside", True)
    stops = [i + 1 for i in places.stops(steps, inside)]
    index = _controls(key, stops, lang, param, False, keys,
                      lambda n: places.place(steps[n - 1], lang)) - 1
    _loop_row(key, steps, index, lang, keys)
    return index


def _controls(key: str, stops: Sequence[int], lang: str, param: str, player: bool,
              keys: bool, place: Callable[[int], str] | None) -> int:
    """The controls over the steps `stops` (1-based, ascending) as `step_controls` says;
    returns the chosen one. A step shown that is not among them (the learner folded the
    lines inside a statement) becomes the first stop after it."""
    restore(param, key)
    now = st.session_state[key] = places.folded(stops, st.session_state.get(key, stops[-1]))
    at = bisect_left(stops, now)
    labels = (("first", stops[0]), ("back", stops[at - 1] if at else None),
              ("forward", stops[at + 1] if at + 1 < len(stops) else None),
              ("last", stops[-1]))
    playing = player and len(stops) > 1
    with st.container(key=f"steps-{key}"):  # one row on every screen (explorer.ui.common)
        columns = st.columns(5 if playing else 4, gap="small")
    for column, (label, to) in zip(columns[:2] + columns[-2:], labels, strict=True):
        column.button(text(label, lang), key=f"{key}.{label}", on_click=_move, args=(key, to),
                      disabled=to is None or to == now, width="stretch",
                      shortcut=KEYS.get(label) if player or keys else None)
    if playing:
        _player(key, stops, lang, columns[2], place)
    elif len(stops) > 1:
        _slider(st, key, stops, lang, place)
    keep(param, st.session_state[key])
    return st.session_state[key]


def _move(key: str, to: int) -> None:
    """Show step `to` (1-based) of the controls `key`, and stop playing."""
    st.session_state[key] = to
    st.session_state[f"{key}.playing"] = False


def _loop_row(key: str, steps: Sequence[Step], index: int, lang: str, keys: bool) -> None:
    """Under the controls, one row: step inside loops and functions or over them, then the
    same line a round of its loops back and on (explorer.views.places.other_round)."""
    inside = f"{key}.inside"
    st.session_state[f"{inside}.widget"] = st.session_state[inside]  # outlives page switches
    with st.container(key=f"loops-{key}"):  # one row on every screen (explorer.ui.common)
        toggle, back, on = st.columns([2, 1, 1], gap="small", vertical_alignment="center")
    toggle.toggle(text("inside_steps", lang), key=f"{inside}.widget",
                  help=text("inside_steps_help", lang),
                  on_change=lambda: st.session_state.update(
                      {inside: st.session_state[f"{inside}.widget"]}))
    for column, label, later, shortcut in ((back, "round_back", False, "Shift+Left"),
                                           (on, "round_forward", True, "Shift+Right")):
        to = places.other_round(steps, index, later)
        column.button(text(label, lang), key=f"{key}.{label}", on_click=_move,
                      args=(key, (to or 0) + 1), disabled=to is None, width="stretch",
                      help=text(f"{label}_help", lang), shortcut=shortcut if keys else None)


def _slider(where: Any, key: str, stops: Sequence[int], lang: str,
            place: Callable[[int], str] | None) -> None:
    """The slider over steps `stops` in `where` (a container, or st), each named by `place`
    (else numbered: then they are 1..n)."""
    if place is None:
        where.slider(text("step", lang), stops[0], stops[-1], key=key)
    else:
        where.select_slider(text("step", lang), list(stops), key=key, format_func=place)


def _player(key: str, stops: Sequence[int], lang: str, button: Any,
            place: Callable[[int], str] | None = None) -> None:
    """Play / pause (in the column `button`, amid the step buttons), then the slider and the
    speed; while playing, the page moves one step on each tick."""
    playing, ticked = f"{key}.playing", f"{key}.ticked"

    def toggle() -> None:
        st.session_state[playing] = not st.session_state.get(playing, False)
        if st.session_state[playing] and st.session_state[key] >= stops[-1]:
            st.session_state[key] = stops[0]  # played to the end: from the start again

    on = st.session_state.get(playing, False)
    button.button(text("pause" if on else "play", lang), key=f"{key}.play", on_click=toggle,
                  shortcut="Space", type="primary" if on else "secondary", width="stretch")
    slider, speed = st.columns([4, 3], vertical_alignment="bottom")
    _slider(slider, key, stops, lang, place)
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
        if st.session_state[key] >= stops[-1]:
            st.session_state[playing] = False
        else:
            st.session_state[key] = stops[bisect_left(stops, st.session_state[key]) + 1]
        st.rerun()  # the whole page: the picture, the panel and the editor's marks

    tick()


def pause(key: str) -> None:
    """Stop the player of the controls `key` where it is (a step waits for the learner)."""
    st.session_state[f"{key}.playing"] = False


def mark(page: str, lines: tuple[int, int] | None, where: str = "",
         calling: Sequence[int] = ()) -> None:
    """The lines (first, last) page `page`'s editor marks in this run, decided where the page
    draws what they belong to, `where` they ran (the loops' rounds, the function: markdown,
    explorer.views.places.details) and the lines `calling` the function they are in;
    explorer.ui.editor draws the editor after the page, with them."""
    st.session_state[f"{page}.marked"] = lines
    st.session_state[f"{page}.marked_where"] = where
    st.session_state[f"{page}.calling"] = tuple(calling)


class Made(NamedTuple):
    """A node chosen on the picture: its name, and the lines of the statement that made it."""

    name: str
    lines: tuple[int, int]


def after_line(page: str, step: Step, lang: str, made: Made | None = None) -> None:
    """"State after line N" over the step shown, with the loops' rounds and the function it
    ran in (explorer.views.places), and the editor's mark of the same lines; or,
    for a node `made` chosen at this step, the line that made it, named first and marked: the
    one place caption and mark come from, on every page."""
    where = places.details(step, lang)
    mark(page, made.lines if made else (step.line, step.end_line), "" if made else where,
         () if made else step.calling or ())
    words = text("after_node", lang, line=made.lines[0], node=code_span(made.name),
                 after=step.line) if made else places.headline(step, lang)
    st.markdown(f"**{words}**" + (f" · {where}" if where else ""))


def show_trace(page: str, trace: Trace, code: str, lang: str, below: Any = None) -> None:
    """The run's state at the chosen step: the statement, variables, output; the error. The
    variables and the output go `below` (a container across the page), if given."""
    error_panel(trace, code, lang)
    if trace.steps:
        index = trace_controls(f"{page}.step", trace.steps, lang)
        step = trace.steps[index]
        after_line(page, step, lang)
        st.code(statement(code, step.line, step.end_line), language="python")
        before = trace.steps[index - 1] if index else None
        frame = places.in_frame_before(trace.steps, index) if step.calls else None
        with below or st.container():  # the table wants the page's width
            _variables(step, before, frame, lang, page)
        output = "".join(s.output for s in trace.steps[: index + 1])
        with below or st.container():
            st.markdown(f"**{text('output', lang)}**")
            if output:
                st.code(output, language=None)
            else:
                st.caption(text("no_output", lang))
    for warning in trace.warnings:
        st.warning(plain(warning), icon="⚠️")
    run_notes(trace, lang)
    st.caption(text("ran_in", lang, device=plain(trace.device), threads=trace.threads,
                    ms=trace.elapsed_ms) if trace.started else text("ran_nothing", lang))
    if trace.reused:
        st.caption(text("reused", lang))


def run_notes(trace: Trace, lang: str, keys: frozenset[str] | None = None) -> None:
    """The run's notes in `lang`, as captions: those of `keys`, or all."""
    for note in trace.notes:
        if keys is None or note.key in keys:
            st.caption(plain(said(note, lang)))


def sampled_notes(trace: Trace, lang: str) -> None:
    """The notes saying which backward calls and lines inside loops were kept, if any: for
    a page whose steps or calls skip some."""
    run_notes(trace, lang, SAMPLED)


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
        last = trace.steps[-1] if trace.steps else None
        if last is not None and last.stopped and (where := places.details(last, lang)):
            st.caption(text("stopped_where", lang, where=where))
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


def _variables(step: Step, before: Step | None, frame: Step | None, lang: str,
               page: str) -> None:
    """The program's variables at `step` (● what changed since `before`), then, in a
    function, its local variables (Python Tutor's frames: ● what changed since `frame`, the
    call's step before); then a variable to look inside (a local one of a global's name is
    named with its function's)."""
    shown = _table(variable_rows(step.variables, before.variables if before else {}, lang),
                   lang)
    if step.calls and step.locals is not None:
        st.markdown(f"**{text('locals_of', lang, call=code_span(f'{step.calls[-1]}()'))}**")
        shown |= _table(variable_rows(step.locals, (frame and frame.locals) or {}, lang), lang)
    if not shown:
        return
    between = places.not_stepped(before, step, lang)
    st.caption("● " + (text("changed_since", lang, rounds=between) if between else
                       text("changed", lang)))
    now = step.variables | {
        text("local_name", lang, name=name, call=f"{step.calls[-1]}()")
        if name in step.variables and step.calls else name: info
        for name, info in (step.locals or {}).items()}
    inspectable = [name for name, info in now.items() if info.kind in ("tensor", "ndarray")]
    if not inspectable:
        return
    restore("inspect", f"{page}.inspect", inspectable)
    name = st.selectbox(text("inspect", lang), inspectable, key=f"{page}.inspect")
    keep("inspect", name)
    info = now[name]
    for label, values, norm in ((text("values", lang), info.values, info.norm),
                                (text("grad", lang), info.grad, info.grad_norm),
                                (text("tangent", lang), info.tangent, None)):
        if values is not None:
            st.markdown(f"{code_span(name)} {label}")
            _values(values)
            if said := kept(values, info.numel, norm, lang):
                st.caption(said)


def _table(rows: list[dict[str, Any]], lang: str) -> bool:
    """A variables table, its headers in the learner's language (of no `rows`, that there are
    none); whether there was one."""
    if not rows:
        st.caption(text("no_variables", lang))
        return False
    st.table([{text(HEADERS[k], lang) if k in HEADERS else k: v for k, v in row.items()}
              for row in rows])
    return True


def _values(values: Any) -> None:
    """A 0-d value as text, 1-d as one row, 2-d as a grid, higher or ragged as nested lists."""
    if not isinstance(values, list):
        st.code(written(values), language=None)
    elif (rows := grid(values)) is not None:
        number_table(rows, width="stretch")
    else:
        st.json(written_each(values), expanded=False)


def number_table(rows: list[list[Any]], dtype: str | None = None, **options: Any) -> None:
    """A grid of numbers as a table that sorts them as numbers, each written as print(tensor)
    writes the grid (in full for a tensor of `dtype`, if given); `options` for st.dataframe."""
    write = writer(rows, full_decimals(rows, dtype) if dtype else PRECISION)
    table = pandas.DataFrame([[parsed(v) for v in row] for row in rows])
    if any(kind == "c" for kind in table.dtypes.map(lambda d: d.kind)):
        table = table.map(write)  # Arrow holds no complex numbers: these sort as text
    # Each column as wide as its longest number: a narrow place scrolls the table sideways,
    # where columns it shrank cut a number's sign and first digits off.
    widths = [max(len(write(v)) for v in column) for column in zip(*rows, strict=True)]
    st.dataframe(table.style.format(write), column_config={
        str(k): st.column_config.Column(width=CHAR_PX * wide + CELL_PX)
        for k, wide in enumerate(widths)}, **options)
