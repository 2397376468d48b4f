"""The NumPy page's parts: the lesson picker, the pair of variables, the memory badge, heatmaps."""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.trace import Trace, Variables
from explorer.trace.schema import Variable
from explorer.ui.link import keep, restore
from explorer.ui.steps import after_line, error_panel, trace_controls
from explorer.views.numbers import written_each
from explorer.views.present import kept, statement
from explorer.views.sharing import (
    PRESETS,
    Cell,
    array_names,
    cells,
    changed_pair,
    default_pair,
    is_array,
    last_change,
    overlap,
    preset,
    preset_for,
    variable_changes,
)

CHANGED = "#d9480f"  # the theme's primary colour: what this step changed
SCALE = [[0.0, "#f8f9fa"], [1.0, "#74c0fc"]]  # light enough for dark text on every cell
KINDS = {"tensor": "torch.Tensor", "ndarray": "numpy.ndarray"}
WRAP = 20  # a 1-d value longer than this continues on the next row
PANEL_CHARS = 36  # about how many characters fit across one side's heatmap
SIDES = ("left", "right")


def lesson_picker(page: str, lang: str) -> None:
    """The NumPy lessons: picking one loads its code; the lesson's caption follows the code."""
    code_key = f"{page}.code"
    current = preset_for(st.session_state.get(code_key, ""))
    st.session_state[f"{page}.lesson"] = current.key if current else None

    def load() -> None:
        st.session_state[code_key] = preset(st.session_state[f"{page}.lesson"]).code
        st.session_state.pop(f"{page}.trace", None)

    st.selectbox(text("numpy_lesson", lang), [p.key for p in PRESETS], key=f"{page}.lesson",
                 format_func=lambda key: preset(key).title[lang], on_change=load,
                 placeholder="—")
    if current:
        st.info(current.caption[lang], icon=":material/school:")


def pair_view(page: str, trace: Trace, code: str, lang: str) -> None:
    """The error if any; then, at the chosen step, two variables side by side and the verdict."""
    error_panel(trace, code, lang)
    names = array_names(trace)
    if not names:
        if trace.steps:  # it ran, but made nothing to compare
            st.caption(text("numpy_no_arrays", lang))
        return
    if st.session_state.get(f"{page}.paired") is not trace:  # a new run: its own first view
        pair = default_pair(trace, code)
        st.session_state.update({f"{page}.left": pair[0], f"{page}.right": pair[1],
                                 f"{page}.step": last_change(trace, *pair) + 1,
                                 f"{page}.paired": trace})
    index = trace_controls(f"{page}.step", trace.steps, lang)
    step = trace.steps[index]
    before = trace.steps[index - 1].variables if index else {}
    after_line(page, step, lang)
    st.code(statement(code, step.line, step.end_line), language="python")
    for side in SIDES:
        restore(side, f"{page}.{side}", names)
    pair = [_chosen(page, side, names) for side in SIDES]
    for side, name in zip(SIDES, pair, strict=True):
        keep(side, name)
    moved = changed_pair(step.variables, before)
    if moved is not None and not set(moved) & set(pair):
        _elsewhere(page, moved, lang)
    a, b = (step.variables.get(name) for name in pair)
    if is_array(a) and is_array(b):
        _verdict(pair, a, b, lang)
    zrange = _zrange([info.values for info in (a, b) if is_array(info)])
    for side, name, column in zip(SIDES, pair, st.columns(2), strict=True):
        with column.container(border=True):
            _name_picker(page, side, names, lang)
            _side(name, step.variables, before, zrange, lang, f"{page}.{side}.chart")
    if is_array(a) or is_array(b):
        st.caption(text("numpy_changed", lang))
    output = "".join(ran.output for ran in trace.steps[: index + 1])
    if output:
        st.markdown(f"**{text('output', lang)}**")
        st.code(output, language=None)


def _elsewhere(page: str, moved: tuple[str, str | None], lang: str) -> None:
    """The step changed none of the pair shown: what it changed, and a button to show that."""
    left, right = moved
    names = text("names_separator", lang).join(code_span(n) for n in moved if n)
    st.info(text("numpy_elsewhere", lang, names=names),
            icon=":material/swap_horiz:")
    st.button(text("numpy_compare", lang, left=left, right=right) if right else
              text("numpy_show", lang, left=left), key=f"{page}.moved",
              on_click=lambda: st.session_state.update(
                  {f"{page}.left": left, f"{page}.right": right or st.session_state[
                      f"{page}.right"]}))


def _chosen(page: str, side: str, names: list[str]) -> str | None:
    """The name chosen for one side, if it still names a tensor or array of this run."""
    key = f"{page}.{side}"
    if st.session_state.get(key) not in names:
        st.session_state[key] = None
    return st.session_state[key]


def _name_picker(page: str, side: str, names: list[str], lang: str) -> None:
    """A selectbox whose choice outlives page switches (widget state does not)."""
    key = f"{page}.{side}"
    st.session_state[f"{key}.widget"] = st.session_state[key]
    st.selectbox(text(f"numpy_{side}", lang), names, key=f"{key}.widget", placeholder="—",
                 on_change=lambda: st.session_state.update(
                     {key: st.session_state[f"{key}.widget"]}))


def _verdict(pair: list[str | None], a: Variable, b: Variable, lang: str) -> None:
    """**shares memory** or **separate copy**, decided from the recorded memory, and why."""
    span = overlap(a, b)
    if span:
        st.success(f"**{text('numpy_shares', lang)}** — " + text(
            "numpy_shares_why", lang, start=f"{span[0]:#x}", n=span[1] - span[0]),
            icon=":material/link:")
        return
    why = (text("numpy_devices", lang, left=code_span(str(pair[0])), a=plain(a.device),
                right=code_span(str(pair[1])), b=plain(b.device))
           if a.device != b.device else text("numpy_copy_why", lang))
    st.warning(f"**{text('numpy_copy', lang)}** — {why}", icon=":material/link_off:")


def _side(name: str | None, now: Variables, before: Variables,
          zrange: tuple[float, float], lang: str, key: str) -> None:
    """One variable at this step: what it is, where its data live, its values and changes."""
    if name is None:
        st.caption(text("numpy_pick", lang))
        return
    info = now.get(name)
    if not is_array(info):
        st.caption(text("numpy_missing", lang) if info is None
                   else text("numpy_not_array", lang, kind=plain(info.kind)))
        return
    facts = [f"{KINDS[info.kind]} · {code_span(str(info.dtype))} · "
             f"{code_span(str(info.device))}",
             f"shape {code_span(str(tuple(info.shape)))} · strides "
             f"{code_span(str(tuple(info.strides or ())))}"]
    if info.memory is not None:
        start, end = info.memory
        facts.append(text("numpy_address", lang, start=f"{start:#x}", n=end - start)
                     + (f" · data_ptr `{info.data_ptr:#x}`" if info.data_ptr != start
                        else ""))
    st.markdown("  \n".join(facts))
    if not cells(info.values):
        st.caption(text("numpy_empty", lang))
        return
    changed = variable_changes(info, before.get(name))
    st.plotly_chart(heatmap(info.values, changed, zrange), key=key, width="stretch",
                    config={"displayModeBar": False})
    if said := kept(info.values, info.numel, info.norm, lang):
        st.caption(said)


def heatmap(values: Any, changed: set[Cell], zrange: tuple[float, float]) -> go.Figure:
    """Values as a grid, changed cells outlined; values written in the cells where they fit.

    n-d values get one row per leading index; 1-d values run in rows of `WRAP` cells.
    """
    table, shown = cells(values), cells(written_each(values))
    spots = {index: _position(index) for index in table}
    rows = sorted({row for row, _ in spots.values()})
    row_of = {row: r for r, row in enumerate(rows)}
    width = max(column for _, column in spots.values()) + 1
    z: list[list[float | None]] = [[None] * width for _ in rows]
    labels, where = [[""] * width for _ in rows], [[""] * width for _ in rows]
    for index, value in table.items():
        r, c = row_of[spots[index][0]], spots[index][1]
        z[r][c], labels[r][c] = _number(value), html.escape(shown[index])
        where[r][c] = str(list(index))
    outline = "".join(f"M{c - .46},{row_of[row] - .46}H{c + .46}V{row_of[row] + .46}H{c - .46}Z"
                      for row, c in map(spots.get, changed))
    fits = width * max(len(label) for row in labels for label in row) <= PANEL_CHARS
    figure = go.Figure(go.Heatmap(
        z=z, text=labels, customdata=where, texttemplate="%{text}" if fits else None,
        zmin=zrange[0], zmax=zrange[1], colorscale=SCALE, showscale=not fits, xgap=1, ygap=1,
        colorbar={"thickness": 8, "outlinewidth": 0, "tickfont": {"size": 10}},
        hovertemplate="%{customdata} %{text}<extra></extra>", textfont={"size": 13}))
    if outline:
        figure.add_shape(type="path", path=outline,
                         line={"color": CHANGED, "width": 3 if len(changed) <= 100 else 1})
    labelled = len(rows) > 1 or len(rows[0]) > 1  # one unlabelled row for a short vector
    figure.update_layout(height=min(600, 44 + 34 * len(rows)), plot_bgcolor="white",
                         margin={"l": 40 if labelled else 8, "r": 8, "t": 30, "b": 4})
    shown = range(0, len(rows), -(-len(rows) // 12))  # at most 12 row labels
    figure.update_xaxes(side="top", showgrid=False, zeroline=False, fixedrange=True, ticks="",
                        dtick=1 if width <= 10 else 5 if width <= 50 else None)
    figure.update_yaxes(autorange="reversed", showgrid=False, zeroline=False, fixedrange=True,
                        ticks="", showticklabels=labelled, tickvals=list(shown),
                        ticktext=[", ".join(map(str, rows[r])) for r in shown])
    return figure


def _position(index: Cell) -> tuple[Cell, int]:
    """Where a cell goes: its row (also the row's label) and its column."""
    if len(index) == 1:
        return (index[0] - index[0] % WRAP,), index[0] % WRAP
    return index[:-1], index[-1] if index else 0


def _number(value: Any) -> float | None:
    """A cell's colour value: numbers and booleans; NaN, infinities and complex have none."""
    return float(value) if isinstance(value, int | float) else None


def _zrange(all_values: list[Any]) -> tuple[float, float]:
    """One colour scale for both sides, so equal values look equal."""
    numbers = [n for values in all_values for v in cells(values).values()
               if (n := _number(v)) is not None]
    low, high = min(numbers, default=0.0), max(numbers, default=1.0)
    return low, high if high > low else low + 1
