"""The backward pass on a page: the animation, and a step-by-step panel beside it."""

from __future__ import annotations

import functools
from typing import Any

# Imported whole before any download can build a figure on its own thread: plotly checks
# values against the pandas it finds in sys.modules, and a first st.table on the script
# thread would otherwise leave a half-imported one there for it to trip over.
import pandas  # noqa: F401
import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.content.rules import rule
from explorer.runner.trace import Trace
from explorer.ui.graph import layout_failed
from explorer.ui.link import keep, restore
from explorer.ui.steps import step_controls
from explorer.views.animation import NUMBERS_UP_TO, figure, frames_of
from explorer.views.export import animation_html, animation_view
from explorer.views.present import preview
from explorer.views.render import LayoutError, positions, svg


@st.cache_data(show_spinner=False, max_entries=32)
def _layout(dot: str) -> tuple[dict[str, Any], str]:
    """graphviz's positions and SVG for `dot`, computed once per distinct graph."""
    return positions(dot), svg(dot)


def backward_pass(page: str, trace: Trace, lang: str, chosen: int | None = None) -> None:
    """Pick a recorded backward call (`chosen`: its number, if known) and replay it."""
    if not trace.backward:
        st.info(text("no_backward", lang))
        return
    calls = {c["call"]: c for c in trace.backward}
    if chosen in calls:
        call = calls[chosen]
    elif len(calls) > 1:
        key = f"{page}.call"
        restore("call", key, calls)
        if st.session_state.get(key) not in calls:  # a new run: its last call
            st.session_state[key] = trace.backward[-1]["call"]
        call = calls[st.selectbox(text("backward_call", lang), list(calls), key=key,
                                  format_func=lambda n: f"#{n} ({calls[n]['kind']})")]
        keep("call", call["call"])
    else:
        call = trace.backward[0]
    if "graph" not in call or not call["steps"]:
        st.warning(text("backward_nothing", lang))
        return
    graph = trace.graphs[call["graph"]]
    shown = animation_view(trace, call)
    try:
        with st.spinner(text("laying_out", lang)):
            layout, picture = _layout(shown.dot)
    except LayoutError as error:
        st.error(layout_failed(error, lang))
        return
    chart = st.container()
    st.caption(text("animation_help", lang))
    st.download_button(text("download_animation", lang),
                       lambda: animation_html(trace, call["call"], lang),
                       f"backward-pass-{call['call']}.html", "text/html", key=f"{page}.html",
                       on_click="ignore", icon=":material/download:")
    batches = frames_of(len(call["steps"]))
    if len(batches) < len(call["steps"]):
        st.caption(text("batched", lang, steps=len(call["steps"]), frames=len(batches)))
    numbers = st.toggle(text("numbers_on_picture", lang), key=f"{page}.numbers",
                        value=len(layout["nodes"]) <= NUMBERS_UP_TO)
    index = _step_panel(page, call, graph, lang)
    # A click is read once, then the chart is drawn anew under a new key, with nothing
    # selected (plotly fades what a selection leaves out).
    key = f"{page}.figure.{st.session_state.get(f'{page}.clicks', 0)}"
    chart.plotly_chart(figure(call, layout, picture, shown.groups, at=index, numbers=numbers,
                              animated=False, lang=lang),
                       key=key, config={"displaylogo": False},
                       on_select=functools.partial(_clicked, page, key, call["call"], index),
                       selection_mode="points")
    _vjp(call, lang)


def focused_node(page: str, trace: Trace) -> str | None:
    """The node the page's replay is about, known before the page is drawn (widgets keep
    their values in the session): the one last clicked on the picture, if the step shown has
    not moved since, else the engine step's."""
    calls = {c["call"]: c for c in trace.backward}
    call = calls.get(st.session_state.get(f"{page}.call")) or (
        trace.backward[-1] if trace.backward else None)
    if not call or not call["steps"]:
        return None
    index = st.session_state.get(f"{page}.engine.{call['call']}", 1)  # as the panel starts
    index = max(1, min(index, len(call["steps"]))) - 1
    clicked = st.session_state.get(f"{page}.clicked")
    if clicked and clicked[1:] == (call["call"], index):
        return clicked[0]
    return call["steps"][index]["node"]


def _clicked(page: str, key: str, call: int, index: int) -> None:
    """Note the node clicked on the picture (its invisible point carries the node's id)."""
    points = st.session_state[key]["selection"]["points"]
    node = next((p["customdata"] for p in points if isinstance(p.get("customdata"), str)), None)
    st.session_state[f"{page}.clicked"] = (node, call, index) if node else None
    st.session_state[f"{page}.clicks"] = st.session_state.get(f"{page}.clicks", 0) + 1


def _step_panel(page: str, call: dict[str, Any], graph: dict[str, Any], lang: str) -> int:
    """One engine step at a time: the node's rule, what it received and what it sent.
    Returns the step shown, which the animation above shows too."""
    st.markdown(f"#### {text('engine_steps', lang)}")
    key = f"{page}.engine.{call['call']}"
    st.session_state.setdefault(key, 1)  # start at the first step, so Play runs the whole pass
    index = step_controls(key, len(call["steps"]), lang, param="engine", player=True)
    step = call["steps"][index]
    nodes = {n["id"]: n for n in graph["nodes"]}
    custom = nodes.get(step["node"], {}).get("custom", False)
    device = next((g["device"] for g in step["grad_outputs"] if g), "?")
    st.markdown(f"**{index + 1}. {code_span(str(step['name']))}** · "
                f"{text('on_device', lang, device=plain(device))}")
    st.info(rule(step["name"], lang, custom), icon=":material/functions:")
    received, sent = st.columns(2)
    with received:
        st.markdown(f"**{text('received', lang)}**")
        for grad in step["grad_outputs"]:
            _gradient(grad)
    with sent:
        st.markdown(f"**{text('sent', lang)}**")
        for grad in step["grad_inputs"]:
            if grad:
                st.caption(f"→ {_name(nodes.get(grad['to'], {}), grad['to'])}")
                _gradient(grad)
        if not any(step["grad_inputs"]):
            st.caption(text("sent_nothing", lang))
    written = [g for g in call["leaf_grads"] if g["after"] <= index + 1]
    if written:
        st.markdown(f"**{text('leaf_grads', lang)}**")
        latest = {g["leaf"]: g for g in written}
        st.table([{"leaf": _name(nodes.get(leaf, {}), leaf),  # a hook may have cleared .grad
                   ".grad": code_span(preview(g["grad"]["values"])) if g["grad"] else "None",
                   "‖.grad‖": f"{g['grad']['norm']:.4g}" if g["grad"] else ""}
                  for leaf, g in latest.items()])
    return index


def _gradient(grad: dict[str, Any] | None) -> None:
    if not grad:
        st.caption("None")
        return
    values = grad["values"]
    if isinstance(values, list) and values and isinstance(values[0], list) and not (
            values[0] and isinstance(values[0][0], list)):
        st.dataframe(values, width="stretch", height=min(38 + 35 * len(values), 250))
    else:
        st.code(str(values), language=None, wrap_lines=True)
    st.caption(f"shape {plain(tuple(grad['shape']))} · ‖g‖ = {grad['norm']:.4g} · "
               f"{plain(grad['device'])}"
               + (" · …" if grad["truncated"] else ""))


def _name(node: dict[str, Any], fallback: str) -> str:
    """A node's variable names, else its op's name, as plain markdown text."""
    return plain(", ".join(node.get("names", [])) or node.get("name") or fallback)


def _vjp(call: dict[str, Any], lang: str) -> None:
    """For y.backward(v) on a small vector y: v, and the vᵀJ the engine delivered to each
    leaf's AccumulateGrad (J itself is not built: `jacobian_reason`)."""
    if call.get("vector") is None:
        return
    st.markdown(f"#### {text('vjp_title', lang)}")
    st.caption(text("vjp_explain", lang))
    names = {g["node"]: " = ".join(g["names"]) or g["leaf"] for g in call["leaf_grads"]}
    delivered = [s for s in call["steps"] if s["name"] == "AccumulateGrad"]
    columns = st.columns(1 + len(delivered))
    columns[0].markdown("**v**")
    columns[0].dataframe([[x] for x in call["vector"]], width="stretch")
    for column, step in zip(columns[1:], delivered, strict=True):
        name = plain(names.get(step["node"], step["node"]))
        column.markdown(f"**{text('vjp_result', lang, leaf=name)}**")
        with column:
            _gradient(step["grad_outputs"][0] if step["grad_outputs"] else None)
