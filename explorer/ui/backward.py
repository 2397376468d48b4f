"""The backward pass on a page: one timeline (the statements that built the graph, then the
engine's steps), its picture, and a panel on the place shown."""

from __future__ import annotations

import functools
import math
from typing import Any

# Imported whole before any download can build a figure on its own thread: plotly checks
# values against the pandas it finds in sys.modules, and a first st.table on the script
# thread would otherwise leave a half-imported one there for it to trip over.
import pandas  # noqa: F401
import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.content.rules import rule
from explorer.trace import Step, Trace
from explorer.trace.graph_view import node_lines, shown_name
from explorer.trace.schema import Call, Gradient, Graph, Node
from explorer.ui import predict
from explorer.ui.graph import layout_failed
from explorer.ui.link import keep, restore
from explorer.ui.steps import after_line, mark, number_table, pause, sampled_notes, step_controls
from explorer.views import places
from explorer.views.animation import HOVER, NUMBERS_UP_TO, figure, growing, left_off, waiting
from explorer.views.export import animation_html, animation_view
from explorer.views.hooked import changed
from explorer.views.numbers import exact, flat, grid, number
from explorer.views.present import counted, described, few, preview, statement
from explorer.views.render import LayoutError, positions, svg
from explorer.views.timeline import Timeline, timeline

HEIGHT = 500  # px: the picture, its controls under it and the marked line fit one screen
# Gradients one side of a step's panel shows, and rows of a table of them: a node may pass
# thousands (`torch.stack` of a thousand tensors sends a thousand), each a table of its own.
SHOWN, ROWS = 12, 50
COLUMNS = 4  # vᵀJs the Vector–Jacobian panel shows beside v


@st.cache_data(show_spinner=False, max_entries=32)
def _layout(dot: str) -> tuple[dict[str, Any], str]:
    """graphviz's positions and SVG for `dot`, computed once per distinct graph."""
    return positions(dot), svg(dot)


def backward_pass(page: str, trace: Trace, lang: str, chosen: int | None = None,
                  code: str | None = None) -> None:
    """Pick a recorded backward call (`chosen`: its number, if known) and replay it: with the
    program's `code`, on one timeline after the statements that built its graph."""
    call = _call(page, trace, lang, chosen)
    if call is None:
        return
    sampled_notes(trace, lang)  # why the calls, or the lines that built one, skip some
    if call.graph is None or not call.steps:
        st.warning(text("backward_unrecorded" if call.raised and call.graph is not None
                        else "backward_nothing", lang))
        return
    graph = trace.graphs[call.graph]
    shown = animation_view(trace, call)
    try:
        with st.spinner(text("laying_out", lang)):
            layout, picture = _layout(shown.dot)
    except LayoutError as error:
        st.error(layout_failed(error, lang))
        return
    chart = st.container()  # the picture, then its controls right under it
    line = timeline(trace, call, forward=code is not None, shown=shown)
    index = _position(page, call, line, lang)
    asking = predict.asking(page, code, lang)  # beside the controls it changes
    left = st.container()  # the numbers the picture had no room for, once it is drawn
    st.markdown(f"#### {text('engine_steps', lang)}")
    panel = st.container()
    st.caption(text("animation_help", lang))
    if line.built:
        st.caption(text("timeline_help", lang))
    numbers = st.toggle(text("numbers_on_picture", lang), key=f"{page}.numbers",
                        value=len(layout["nodes"]) <= NUMBERS_UP_TO)
    quiz = None if asking is None else predict.Quiz(page, trace, call, graph, _namer(graph),
                                                    *asking)
    st.download_button(text("download_animation", lang),
                       lambda: animation_html(trace, call.call, lang),
                       f"backward-pass-{call.call}.html", "text/html", key=f"{page}.html",
                       on_click="ignore", icon=":material/download:")
    built = line.statement(index)
    with panel:
        if built is None:
            step = line.engine_step(index)
            asked = predict.pending(quiz, step) if quiz else []
            if asked:  # the player waits for the prediction
                pause(_replay(page, call))
            if quiz and not asked:
                predict.verdicts(quiz, step, lang)
            _engine_panel(call, graph, step, lang, quiz, asked)
            # What is asked stays hidden: the picture as the steps before left it.
            picture_now = waiting(call, layout, picture, shown.groups, step, HEIGHT, numbers,
                                  lang) if asked else figure(
                call, layout, picture, shown.groups, at=step, numbers=numbers,
                animated=False, lang=lang, height=HEIGHT, ahead=quiz is None)
        else:
            made = None if built.step is None else trace.steps[built.step]
            _statement_panel(page, code or "", made, graph, built.added, lang)
            place = dict(step=index + 1, steps=len(line.built))
            picture_now = growing(call, layout, picture, shown.groups, line.made(index),
                                  built.added, text("forward_step", lang, **place,
                                                    line=made.line) if made else
                                  text("forward_unstepped", lang, **place),
                                  height=HEIGHT, lang=lang)
    clicked = st.session_state.get(f"{page}.clicked")
    if clicked and clicked[1:] == (call.call, index):  # a node clicked at this place
        mark(page, node_lines(trace).get(clicked[0]))
    elif built is None:  # the statement that made the node the engine step runs
        mark(page, node_lines(trace).get(call.steps[step].node))
    # A click is read once, then the chart is drawn anew under a new key, with nothing
    # selected (plotly fades what a selection leaves out).
    key = f"{page}.figure.{st.session_state.get(f'{page}.clicks', 0)}"
    chart.plotly_chart(picture_now, key=key, config={"displaylogo": False},
                       on_select=functools.partial(_clicked, page, key, call.call, index),
                       selection_mode="points")
    if count := left_off(picture_now):
        left.caption(f"{text('numbers_left_off', lang, count=count)}  \n"  # a line each
                     f"{text('numbers_in_panel', lang, heading=text('engine_steps', lang))}")
    _vjp(call, graph, lang)


def _call(page: str, trace: Trace, lang: str, chosen: int | None) -> Call | None:
    """The backward call to replay: `chosen`, the only one, or the learner's choice."""
    if not trace.backward:
        st.info(text("no_backward", lang))
        return None
    calls = {c.call: c for c in trace.backward}
    if chosen in calls:
        return calls[chosen]
    if len(calls) == 1:
        return trace.backward[0]
    key = f"{page}.call"
    restore("call", key, calls)
    if st.session_state.get(key) not in calls:  # a new run: its last call
        st.session_state[key] = trace.backward[-1].call
    call = calls[st.selectbox(text("backward_call", lang), list(calls), key=key,
                              format_func=lambda n: _call_name(calls[n], trace, lang))]
    keep("call", call.call)
    return call


def _call_name(call: Call, trace: Trace, lang: str) -> str:
    """A recorded call as the call list names it: its number, its kind, the rounds of the
    loops it ran in, the function of the program's it was made in and whether it raised ("#2
    (backward) · t round 2/5 · step() #2 · raised an error")."""
    parts = [f"#{call.call} ({call.kind})",
             places.around(call.rounds, call.calls, call.called, lang),
             text("call_raised", lang) if call.raised else ""]
    return " · ".join(part for part in parts if part)


def _position(page: str, call: Call, line: Timeline, lang: str) -> int:
    """The learner's place on the timeline (0-based): the controls, with a player."""
    key = _replay(page, call)
    # Opened at the engine's first step: the page is about the backward pass ("first" and
    # Play from the end go back to the statements that built the graph).
    st.session_state.setdefault(key, len(line.built) + 1)
    return step_controls(key, len(line), lang, param="replay", player=True,
                         place=lambda n: line.place(n - 1, lang))


def _replay(page: str, call: Call) -> str:
    """The key of the controls that replay `call`."""
    return f"{page}.replay.{call.call}"


def _clicked(page: str, key: str, call: int, index: int) -> None:
    """Note the node clicked on the picture (its invisible point carries the node's id; a
    number's, what the number is about)."""
    points = st.session_state[key]["selection"]["points"]
    node = next((p["customdata"] for p in points if p.get("curve_number") == HOVER
                 and isinstance(p.get("customdata"), str)), None)
    st.session_state[f"{page}.clicked"] = (node, call, index) if node else None
    st.session_state[f"{page}.clicks"] = st.session_state.get(f"{page}.clicks", 0) + 1


def _statement_panel(page: str, code: str, step: Step | None, graph: Graph,
                     added: frozenset[str], lang: str) -> None:
    """A statement that built the graph (None: lines not stepped): its code and the nodes it
    added."""
    nodes = {n.id: n for n in graph.nodes}
    if step is None:
        mark(page, None)
        st.info(text("statement_unstepped", lang), icon=":material/fast_forward:")
    else:
        after_line(page, step, lang)
        st.code(statement(code, step.line, step.end_line), language="python")
    st.caption(text("statement_added", lang,
                    nodes=counted(sorted(_name(nodes.get(n), n) for n in added))))


def _engine_panel(call: Call, graph: Graph, index: int, lang: str,
                  quiz: predict.Quiz | None, asked: list[predict.Question]) -> None:
    """One engine step: the node's rule, what it received and what it sent, and the
    `.grad`s written so far; what is `asked` is hidden and asked for instead."""
    step = call.steps[index]
    nodes = {n.id: n for n in graph.nodes}
    custom = step.node in nodes and bool(nodes[step.node].custom)
    device = next((g.device for g in step.grad_outputs if g), "?")
    done = text("raised_here", lang) if step.raised else text("on_device", lang,
                                                               device=plain(device))
    st.markdown(f"**{index + 1}. {code_span(str(step.name))}** · {done}")
    st.info(rule(step.name, lang, custom), icon=":material/functions:")
    node = nodes.get(step.node)
    if node is not None and node.order:
        maker = nodes.get(node.made_by or "")
        st.caption(text("made_by_step", lang, order=node.order, call=node.made_in,
                        maker=code_span(maker.name if maker else str(node.made_by))))
    received, sent = st.columns(2)
    with received:
        st.markdown(f"**{text('received', lang)}**")
        if any(q.kind in ("received", "of") for q in asked):
            st.caption(text("predict_hidden", lang))
        else:
            for grad in step.grad_outputs[:SHOWN]:
                _gradient(grad, lang)
            _more(len(step.grad_outputs) - SHOWN, lang)
            if carried := changed(call).get(index):
                st.warning(text("received_hooked", lang, carried=" + ".join(
                    code_span(described(g)) for g in carried[:SHOWN])), icon=":material/phishing:")
    with sent:
        if quiz and asked:
            predict.ask(quiz, index, asked, lang)
        else:
            st.markdown(f"**{text('sent', lang)}**")
            passed = [grad for grad in step.grad_inputs if grad]
            for grad in passed[:SHOWN]:
                target = nodes.get(grad.to)
                captured = call.kind == "grad" and target is not None and (
                    target.name == "AccumulateGrad")  # grad() returns it: the node never runs
                st.caption(f"→ {_name(target, grad.to)}" + (
                    text("sent_captured", lang) if captured else ""))
                _gradient(grad, lang)
            _more(len(passed) - SHOWN, lang)
            if step.raised:
                st.error(text("sent_raised", lang), icon="🛑")
            elif not any(step.grad_inputs):
                st.caption(text("sent_nothing", lang))
    for grads, heading, named in ((call.leaf_grads, "leaf_grads", "col_leaf"),
                                  (call.retained or [], "retained_grads", "col_tensor")):
        written = [g for g in grads if g.after <= index + (0 if asked else 1)]
        if written:  # (a hook may have cleared a .grad)
            st.markdown(f"**{text(heading, lang)}**")
            latest = {g.leaf: g.grad for g in written}
            _grads([(_name(nodes.get(leaf), leaf), grad) for leaf, grad in latest.items()],
                   text(named, lang), ".grad", lang)
    if call.returned and index == len(call.steps) - 1 and not asked:
        st.markdown(f"**{text('returned_grads', lang)}**")
        _grads(_returned(call, nodes), text("col_input", lang), text("col_returned", lang),
               lang)


def _grads(grads: list[tuple[str, Gradient | None]], named: str, heading: str,
           lang: str) -> None:
    """A table of named gradients (the first ROWS), a norm only for those too long to read
    whole."""
    shown = grads[:ROWS]
    large = [bool(g and not few(g.values, g.truncated)) for _, g in shown]
    st.table([{named: name, heading: code_span(preview(g.values)) if g else "None",
               **({f"‖{heading}‖": number(g.norm) if g and big else ""} if any(large) else {})}
              for (name, g), big in zip(shown, large, strict=True)])
    _more(len(grads) - ROWS, lang)


def _more(count: int, lang: str) -> None:
    """Says that `count` more gradients are not shown, if any are."""
    if count > 0:
        st.caption(text("gradients_more", lang, count=count))


def _delivered(call: Call, nodes: dict[str, Node]) -> list[tuple[str, Gradient | None]]:
    """What backward() delivered to each leaf's AccumulateGrad, by the leaf's names."""
    names = {g.node: plain(" = ".join(g.names)) if g.names else _name(nodes.get(g.leaf), g.leaf)
             for g in call.leaf_grads}
    return [(names.get(s.node) or plain(s.node), s.grad_outputs[0] if s.grad_outputs else None)
            for s in call.steps if s.name == "AccumulateGrad"]


def _returned(call: Call, nodes: dict[str, Node]) -> list[tuple[str, Gradient | None]]:
    """What grad() returned, by the program's names for each input."""
    return [(plain(" = ".join(r.names)) if r.names else _name(nodes.get(r.input), r.input),
             r.grad) for r in call.returned or []]


def _gradient(grad: Gradient | None, lang: str) -> None:
    """A gradient the engine passed, every digit (a grid as a table); of a large one, what
    was kept, said to be a leading block."""
    if not grad:
        st.caption("None")
        return
    values = grad.values
    cut = grad.truncated and isinstance(values, list)
    if isinstance(values, list) and values and not isinstance(values[0], list) and not few(
            values, grad.truncated):
        values = [[v] for v in values]  # a long vector reads as a column, as a grid does
    if isinstance(values, list) and values and isinstance(values[0], list) and grid(values):
        number_table(values, grad.dtype, width="stretch",
                     height=min(38 + 35 * len(values), 250))
    else:
        st.code(exact(values, grad.dtype, grad.shape), language=None, wrap_lines=True)
    kept = [text("truncated", lang, shown=f"{len(flat(values)):,}",
                 total=f"{math.prod(grad.shape):,}")] if cut else []
    summary = [] if few(values, grad.truncated) else [  # a few values say it all
        text("gradient_shape", lang, shape=plain(tuple(grad.shape))),
        text("gradient_norm", lang, norm=number(grad.norm))]
    st.caption(" · ".join([*summary, plain(grad.device), *kept]))


def _namer(graph: Graph) -> predict.Names:
    """A node's id → its name as the page shows it."""
    nodes = {n.id: n for n in graph.nodes}
    return lambda node: _name(nodes.get(node), node)


def _name(node: Node | None, fallback: str) -> str:
    """A node's name as its picture writes it (`shown_name`), as plain markdown text."""
    return plain((node and shown_name(node)) or fallback)


def _vjp(call: Call, graph: Graph, lang: str) -> None:
    """For y.backward(v) on a small vector y: v, and the vᵀJ the engine delivered to each
    leaf's AccumulateGrad (J itself is not built: `jacobian_reason`); for
    torch.autograd.grad(y, x, v), which runs no AccumulateGrad, the vᵀJ it returned."""
    if not isinstance(call.vector, list) or any(isinstance(x, list) for x in call.vector):
        return  # none, or not a vector's values
    st.markdown(f"#### {text('vjp_title', lang)}")
    st.caption(text("vjp_explain_grad" if call.kind == "grad" else "vjp_explain", lang))
    nodes = {n.id: n for n in graph.nodes}
    returned = call.kind == "grad"
    results = [(text("vjp_returned" if returned else "vjp_result", lang, leaf=name), grad)
               for name, grad in (_returned if returned else _delivered)(call, nodes)]
    columns = st.columns(1 + min(len(results), COLUMNS))
    columns[0].markdown("**v**")
    with columns[0]:
        number_table([[x] for x in call.vector], width="stretch")
    for column, (heading, grad) in zip(columns[1:], results, strict=False):
        column.markdown(f"**{heading}**")
        with column:
            _gradient(grad, lang)
    _more(len(results) - COLUMNS, lang)




def figure_frame(page: str) -> None:
    """What the replay draws with, drawn before the first run, 1 px high: an empty figure, a
    code block and a table, so that the browser loads and compiles their scripts with the
    page, not when the first replay comes (plotly's alone is 4.7 MB: a second or more)."""
    with st.container(height=1, border=False, key=f"{page}-frame"):
        st.plotly_chart({"data": [{"type": "scatter", "x": [], "y": []}], "layout": {
            "height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0},
            "xaxis": {"visible": False}, "yaxis": {"visible": False}}}, key=f"{page}.frame",
            config={"staticPlot": True, "displayModeBar": False})
        st.code("", language="python")
        st.dataframe([[0]])
