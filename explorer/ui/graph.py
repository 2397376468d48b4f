"""Showing a graph: SVG with pan and zoom, node details, downloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span, plain
from explorer.trace import Trace, notes
from explorer.trace.graph_view import (
    FREED,
    View,
    modules,
    named_outputs,
    node_lines,
    order_fill,
    orders,
)
from explorer.trace.schema import Node, Variable
from explorer.ui.code_editor import ASSETS
from explorer.ui.common import SETTINGS
from explorer.ui.link import keep, restore
from explorer.ui.steps import Made
from explorer.views.carried import alive
from explorer.views.export import trace_json
from explorer.views.graph_page import Options, defaults, drawn, no_graph
from explorer.views.numbers import exact
from explorer.views.present import kept, variable
from explorer.views.render import MAX_STATEMENTS, LayoutError, TooLarge, TooTangled, png, svg
from explorer.views.scene import scene

# Our viewer and graphviz's SVG of the server's own DOT: no markup from the program. The
# component makes a frame of its own that may run scripts but has no origin, loads the viewer
# page there once and posts each picture to it: the page around has scripts and an origin,
# and the picture's frame must never have both.
_VIEWER = st.components.v2.component(
    "autograd_explorer.graph", html="",
    js=(ASSETS / "graph.js").read_text(encoding="utf-8"))
_VIEWER_PAGE = (ASSETS / "viewer.html").read_text(encoding="utf-8")
# The picture's height: as much of the window as leaves the title above it and its step
# controls below in view (at 1400×1000 and on a phone), at most 560 px.
HEIGHT = "clamp(260px, 100vh - 330px, 560px)"
ORDERS_SHOWN = 12  # derivative orders counted and offered one by one (a run may make more)


def viewer(key: str, picture: str, chosen: str | None, height: int | str, title: str,
           on_node_change: Callable[[], None] | None = None) -> None:
    """The viewer's frame `height` high (px, or a CSS length), showing `picture` ("": none)
    with `chosen` marked."""
    _VIEWER(key=f"{key}.viewer", data={"viewer": _VIEWER_PAGE, "svg": picture,
                                        "chosen": chosen, "height": height, "title": title},
            on_node_change=on_node_change)


def graph_frame(key: str, lang: str) -> None:
    """The graph's frame, empty and with no height, where page `key`'s graph will be: made
    before the first run, so that its page is loaded by the time the first picture comes."""
    viewer(key, "", None, 0, text("graph_title", lang))


@st.cache_data(show_spinner=False, max_entries=64)
def layout(dot: str) -> str:
    """SVG for `dot`, laid out once per distinct DOT text."""
    return svg(dot)


def show_graph(view: View, trace: Trace, index: int, lang: str, key: str,
               height: int | str = HEIGHT, where: Any = None) -> Made | None:
    """The graph after step `index` with pan/zoom and hover details (in the container
    `where`, if given), then downloads (the picture, and the `trace` it came from) and a node
    inspector; the node chosen at this step, if any, to mark."""
    where = where or st.container()  # the frame alone there, kept from picture to picture
    try:
        with st.spinner(text("laying_out", lang)):
            picture = layout(view.dot)
    except LayoutError as error:
        where.error(layout_failed(error, lang))
        return None
    chosen = _chosen(view, key, index)

    def clicked() -> None:  # a node's id, from the viewer: its details open, its line marked
        node = st.session_state[f"{key}.viewer"].node
        if node in view.nodes:
            st.session_state.update({f"{key}.node": node, f"{key}.node_at": index})

    with where:
        viewer(key, picture, chosen, height, text("graph_title", lang), on_node_change=clicked)
    st.caption(text("graph_help", lang))
    files = st.container(horizontal=True)  # as many a row as fit whole, the rest below
    files.download_button(text("download_svg", lang), picture, "autograd-graph.svg",
                          "image/svg+xml", key=f"{key}.svg")
    # PNG and JSON are made only when asked for: a big graph's PNG takes a while to draw.
    files.download_button(text("download_png", lang), lambda: png(view.dot),
                          "autograd-graph.png", "image/png", key=f"{key}.png", on_click="ignore")
    files.download_button(text("download_dot", lang), view.dot, "autograd-graph.dot",
                          "text/vnd.graphviz", key=f"{key}.dot")
    files.download_button(text("download_json", lang), lambda: trace_json(trace), "trace.json",
                          "application/json", key=f"{key}.json", on_click="ignore")
    return _inspector(view, trace, index, lang, key)


def _chosen(view: View, key: str, index: int) -> str | None:
    """The node whose details are open: a link's, or the learner's, if the picture has it
    (else none). Its line is marked at the step it was chosen at, until another is shown
    (`{key}.node_at`: that step)."""
    if restore("node", f"{key}.node", list(view.nodes)):
        st.session_state[f"{key}.node_at"] = index
    if st.session_state.get(f"{key}.node") not in view.nodes:
        st.session_state[f"{key}.node"] = None
    if st.session_state.get(f"{key}.node_at") != index:
        st.session_state[f"{key}.node_at"] = None
    return st.session_state[f"{key}.node"]


def layout_failed(error: LayoutError, lang: str) -> str:
    """Why a graph is not drawn, as markdown: too big, or graphviz's words (which may quote
    the graph's labels) shown as words."""
    if isinstance(error, TooLarge):
        return text("layout_failed", lang, reason=text("layout_too_big", lang,
                                                       count=error.statements, cap=MAX_STATEMENTS))
    if isinstance(error, TooTangled):
        return text("layout_failed", lang, reason=text(
            "layout_too_tangled", lang, nodes=error.nodes, edges=error.edges,
            crossings=error.crossings))
    return text("layout_failed", lang, reason=plain(SETTINGS.cause(error, lang)))


def _inspector(view: View, trace: Trace, index: int, lang: str, key: str) -> Made | None:
    """A node's details after step `index`: the line that made it, what it is and, for a
    variable's tensor, its values and `.grad` in full; the node, if chosen at this step."""
    chosen = st.selectbox(text("node_details", lang), list(view.nodes), index=None,
                          key=f"{key}.node", format_func=lambda i: _title(view.nodes[i]),
                          placeholder="—", on_change=lambda: st.session_state.update(
                              {f"{key}.node_at": index}))
    keep("node", chosen)
    if chosen is None:
        return None
    node, lines = view.nodes[chosen], node_lines(trace).get(chosen)
    made = [(text("made_on_line", lang), lines[0])] if lines else []
    st.table([{"": k, " ": code_span(str(v))} for k, v in [*made, *_details(node, lang)]])
    info = variable(node, trace.steps[index].variables)
    if info is not None:
        _in_full(node, info, lang)
    marked = st.session_state.get(f"{key}.node_at") == index and lines is not None
    return Made(_name(node), lines) if marked else None


def _in_full(node: Node, info: Variable, lang: str) -> None:
    """A variable's tensor values and `.grad`, every digit; of a large one, what was kept,
    said to be a leading block, with the 2-norm of all of it."""
    name = code_span(" = ".join(node.names or ()))
    for label, values, norm in ((text("values", lang), info.values, info.norm),
                                (text("grad", lang), info.grad, info.grad_norm)):
        if values is None:
            continue
        st.markdown(text("in_full", lang, name=name, what=label))
        st.code(exact(values, info.dtype, info.shape), language=None, wrap_lines=True)
        if said := kept(values, info.numel, norm, lang):
            st.caption(said)


def _name(node: Node) -> str:
    """A node's op, or the names of the variables it is (else its kind)."""
    if node.kind in ("backward", "group"):
        return node.name
    return ", ".join(node.names or ()) or node.kind


def _title(node: Node) -> str:
    return f"{_name(node)} ({node.id})"


def _details(node: Node, lang: str) -> list[tuple[str, Any]]:
    """A node's details, each named in `lang` (PyTorch's attribute names as they are)."""
    if node.kind == "group":
        return [(text("detail_op", lang), node.name),
                (text("detail_nodes", lang), len(node.members))]
    if node.kind == "backward":
        rows = [(text("detail_op", lang), node.name),
                (text("detail_custom", lang), bool(node.custom))]
        if node.order:
            rows += [(text("detail_order", lang), node.order),
                     (text("detail_made_by", lang), node.made_by),
                     (text("detail_made_in", lang), node.made_in)]
        return rows + [(text("detail_saved", lang, name=plain(k)), v)
                       for k, v in (node.saved or {}).items()]
    return [(text("detail_tensor", lang), _name(node)),
            *((k, getattr(node, k)) for k in ("shape", "dtype", "device", "requires_grad",
                                              "is_leaf", "grad_fn", "version"))]


def _fold(page: str, paths: list[str], lang: str) -> list[str]:
    """The modules to draw as one node each, chosen among `paths` (none: no choice shown)."""
    if not paths:
        return []
    restore("fold", f"{page}.fold", paths)
    fold = st.multiselect(text("fold_modules", lang), paths, key=f"{page}.fold",
                          placeholder="—")
    keep("fold", fold or None)
    return fold


def _order(page: str, sizes: dict[int, int], lang: str) -> int | None:
    """How many nodes each derivative order has, and the one order to draw (None: all; no
    choice shown where the graph is the forward's alone); the first ORDERS_SHOWN orders."""
    if not sizes:
        return None
    more = " · …" if len(sizes) > ORDERS_SHOWN else ""
    sizes = dict(list(sizes.items())[:ORDERS_SHOWN])
    st.caption(text("orders_sizes", lang, sizes=" · ".join(
        text("order_nodes", lang, order=_badge(order, lang), nodes=nodes)
        for order, nodes in sizes.items()) + more))
    choices = [0, *sizes]  # 0: all
    restore("order", f"{page}.order", sizes)
    if st.session_state.get(f"{page}.order") not in choices:
        st.session_state[f"{page}.order"] = 0
    order = st.segmented_control(
        text("derivative_order", lang), choices, key=f"{page}.order",
        format_func=lambda k: text("order_label", lang, order=k) if k else text(
            "order_all", lang))
    keep("order", order or None)
    return order or None


def _badge(order: int, lang: str) -> str:
    """Derivative `order` named in the colour the picture fills its nodes with."""
    if order == 1:
        return f":gray-background[{text('order_forward', lang)}]"
    return f":{order_fill(order)[1]}-background[{text('order_label', lang, order=order)}]"


def graph_at_step(page: str, trace: Trace, index: int, lang: str,
                  where: Any = None, code: str | None = None) -> Made | None:
    """The graph after step `index` (the picture in the container `where`, if given, as
    over its step controls): root choice, options, and what is not in it; the node chosen
    at this step, if any, to mark. After the last step of `code` (the program that ran), the
    scene of its autograd error is marked, in the graph of every output."""
    where = where or st.container()
    step = trace.steps[index]
    outside = [name for name, info in step.variables.items()
               if info.kind == "tensor" and not info.requires_grad]
    if step.graph is None or trace.graphs[step.graph].note:
        with where:
            graph_frame(page, lang)  # kept, first in its place, for the next step's picture
            if step.graph is None:
                st.info(text(no_graph(trace, index), lang))
            else:
                st.warning(text("graph_note", lang, note=plain(notes.said(
                    trace.graphs[step.graph].note, lang))))
        if outside:
            st.caption(text("not_in_graph", lang, names=", ".join(map(code_span, outside))))
        return None
    graph = trace.graphs[step.graph]
    named = named_outputs(graph)
    first = defaults(trace, index)
    found = scene(trace, code) if code is not None and index == len(trace.steps) - 1 else None
    if found is not None and found.nodes:
        first = replace(first, roots=())
    for param, key, value in (("roots", f"{page}.roots.{index}", list(first.roots)),
                              ("saved", f"{page}.saved", first.saved),
                              ("attrs", f"{page}.attrs", first.attrs),
                              ("expand", f"{page}.expand", first.expand),
                              ("values", f"{page}.values", first.numbers)):
        restore(param, key, named if param == "roots" else None)
        st.session_state.setdefault(key, value)
    roots = st.multiselect(text("roots", lang), list(named), key=f"{page}.roots.{index}",
                           placeholder=text("roots_all", lang))
    options = st.container(horizontal=True, gap="medium")  # whole labels, wrapped
    saved = options.toggle(text("show_saved", lang), key=f"{page}.saved")
    attrs = options.toggle(text("show_attrs", lang), key=f"{page}.attrs")
    numbers = options.toggle(text("numbers_on_picture", lang), key=f"{page}.values")
    expand = st.session_state[f"{page}.expand"]
    fold = _fold(page, modules(graph), lang)
    order = _order(page, orders(graph), lang)
    shown = drawn(trace, index, Options(tuple(roots), saved, attrs, expand, numbers,
                                        tuple(fold), order),
                  frozenset(found.nodes) if found is not None and found.nodes else None)
    for note in _grouped(shown, lang) + ([_freed(shown, lang)] if saved else []):
        if note:
            st.caption(note)
    if any(made.line == step.line for made in trace.library):
        st.caption(text("library_here", lang, line=step.line))
    if (living := alive(trace, index)) is not None:
        st.caption(" ".join([text("alive_nodes", lang, nodes=living.nodes),
                             *(keeper.said(lang) for keeper in living.keepers)]))
    if expand or any(not n.folded for g in shown.groups if (n := shown.nodes.get(g))):
        st.checkbox(text("expand", lang), key=f"{page}.expand")
        keep("expand", expand)
    keep("roots", roots)
    keep("saved", saved)
    keep("attrs", attrs)
    keep("values", numbers)
    if outside:
        st.caption(text("not_in_graph", lang, names=", ".join(map(code_span, outside))))
    return show_graph(shown, trace, index, lang, key=page, where=where)


def _grouped(shown: View, lang: str) -> list[str]:
    """What the picture draws as one box: the modules folded, the long chains collapsed."""
    groups = [(shown.nodes.get(g, {}), len(m)) for g, m in shown.groups.items()]
    folded = [(n.name, size) for n, size in groups if n.folded]
    chains = [size for n, size in groups if not n.folded]
    notes = []
    if len(folded) == 1:
        notes.append(text("folded_one", lang, module=code_span(folded[0][0]), nodes=folded[0][1]))
    elif folded:
        notes.append(text("folded", lang, modules=len(folded), nodes=sum(s for _, s in folded)))
    if chains:
        notes.append(text("collapsed_one" if len(chains) == 1 else "collapsed", lang,
                          chains=len(chains), nodes=sum(chains)))
    return notes


def _freed(shown: View, lang: str) -> str | None:
    """Why saved tensors are missing from the picture: backward() freed them (None: it did not
    free any that the picture would draw)."""
    ops = {n.name: None for n in shown.nodes.values()
           if n.kind == "backward" and FREED in (n.saved or {}).values()}
    return text("saved_freed", lang, ops=", ".join(map(code_span, ops))) if ops else None
