"""One visitor's program never reaches another visitor through the server's shared parts.

Visitors are Streamlit sessions (AppTest) of one server process: they share its worker pool
and result cache (`st.cache_resource`), its layout caches (`st.cache_data`) and its kept
`dot`s. Two victims (one on each page) stay all along and have drawn a graph of their own
before each attack (the module's first, then the attack before). In each attack the
attacker's sessions run a hostile program (tests/shared_attacks.py) on the Graph page and
on the Backward page; then, while another session of the attacker's replays their graphs
through the kept `dot`s, the victims run new programs of their own, with names no one else
uses. Judged by what is drawn:

- each victim's picture (the Graph page's SVG; the Backward page's SVG under its figure, and
  its positions) is one SVG of the victim's own graph: its own names, its own nodes, no name
  of the attacker or of another visitor, no link, script or `javascript:`; drawn in seconds;
- the attacker's own picture is drawn, one SVG of their own nodes, with their names shown as
  text (MARK) and nothing of the payload read as DOT (no node or link it smuggles in);
- the same program text from two visitors after an attack shows that program to both;
- a Trace handed out by the result cache, changed by its caller, never reaches another one;
- a run that read the clock or entropy is never given to the next visitor.

A failing attack leaves the shared parts reset (its own verdict stays), so that the next is
judged on its own.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import threading
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import explorer
from explorer.trace import Trace
from explorer.trace.graph_view import view
from explorer.trace.schema import Error
from explorer.views import render
from explorer.views.export import animation_view
from tests.shared_attacks import (
    CARRIERS,
    CLASS_NAMINGS,
    CLOCKS,
    ENTROPY,
    EVIL,
    IDENTIFIER_CARRIERS,
    IDENTIFIERS,
    MARK,
    PAYLOAD,
    identifier_program,
    shown,
    string_attacks,
)

PAGES = {"graph": "pages/2_Graph.py", "backward": "pages/5_Backward.py"}
BOUND_S = 15.0  # a page with a small graph, run and drawn: about a second, even on a busy machine
SCRIPT_TIMEOUT_S = 90  # a page waiting on a stuck `dot` (30 s) still comes back, to be judged
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
TOKEN = re.compile(r"(?:alpha|beta|lin)_([0-9a-f]{10})")
ACTIVE_TAGS = {"script", "foreignObject", "iframe", "object", "embed", "image", "use"}


# --- What a picture shows -------------------------------------------------------------------


def picture_problems(svg: str | None, *, ids: set[str], show: list[str],
                     hide: list[str], token: str | None, clusters: int | None,
                     strict: bool) -> list[str]:
    """What is wrong with `svg` as a picture of a graph whose node ids are `ids`: it must be one
    SVG, with no link, script or handler, every node one of `ids`, at most `clusters` module
    boxes, every text of `show` and none of `hide` in its words (labels and tooltips), and no
    visitor's name but those of `token`. `strict` (a victim's picture): not even the text
    `javascript:`."""
    if not svg:
        return ["no picture"]
    problems = []
    if svg.count("<svg") != 1 or svg.count("</svg>") != 1:
        problems.append(f"{svg.count('<svg')} SVGs in one answer")
    if strict and "javascript:" in svg.lower():
        problems.append("`javascript:` in the picture")
    try:
        root = ElementTree.fromstring(svg[svg.index("<svg"):svg.rindex("</svg>") + 6]
                                      if "<svg" in svg and "</svg>" in svg else svg)
    except ElementTree.ParseError as error:
        return [*problems, f"not XML: {error}"]
    words, nodes, boxes = [], [], 0
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        if tag in ACTIVE_TAGS:
            problems.append(f"a <{tag}> element")
        for key, value in element.attrib.items():
            name = key.removeprefix(XLINK)
            if name in ("href", "target") or name.lower().startswith("on"):
                problems.append(f"<{tag} {name}={value[:60]!r}>")
            if key == f"{XLINK}title":
                words.append(value)
        if tag in ("text", "title") and element.text:
            words.append(element.text)
        if tag == "g" and element.get("class") == "node":
            title = element.find(f"{SVG}title")
            nodes.append(title.text if title is not None else "")
        if tag == "g" and element.get("class") == "cluster":
            boxes += 1
    if not nodes:
        problems.append("no node drawn")
    if strange := sorted(set(nodes) - ids):
        problems.append(f"nodes of no graph of this visitor: {[n[:30] for n in strange[:5]]}")
    if clusters is not None and boxes > clusters:
        problems.append(f"{boxes} module boxes, at most {clusters} expected")
    text = "\n".join(words)
    problems += [f"{word[:40]!r} not shown" for word in show if word not in text]
    problems += [f"{word[:40]!r} shown" for word in hide if word in text]
    if others := sorted({t for t in TOKEN.findall(text) if t != token}):
        problems.append(f"another visitor's names: {others}")
    return problems


def graph_ids(trace: Trace) -> set[str]:
    """Every node id any of the Trace's graphs has, and the ids of groups a view may make."""
    ids = {node.id for graph in trace.graphs for node in graph.nodes}
    return ids | {f"{kind}{i}" for kind in ("group", "module") for i in range(1, 50)}


def module_boxes(trace: Trace) -> int:
    """How many module boxes the Trace's graphs may draw: one per module path and the paths
    around it."""
    paths = {node.module for graph in trace.graphs for node in graph.nodes
             if node.module is not None}
    return len({".".join(p.split(".")[:i]) for p in paths for i in range(1, p.count(".") + 2)})


# --- Visitors -------------------------------------------------------------------------------


class Visitor:
    """A browser session on one of the program pages, as AppTest drives it."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.at = self._open(page)

    @staticmethod
    def _open(page: str) -> AppTest:
        at = AppTest.from_file("../streamlit_app.py", default_timeout=SCRIPT_TIMEOUT_S)
        at.query_params["lang"] = "en"
        at.run()
        at.switch_page(PAGES[page]).run()
        return at

    def run(self, code: str) -> float:
        """Run `code` on this page as its Run button does; how long the page took. A session
        its rate limit stops opens a new tab (a visitor may: SECURITY.md) and runs it there."""
        for _ in range(2):
            self.at.session_state[f"{self.page}.code"] = code
            started = time.monotonic()
            self.at.button(key=f"{self.page}.run").click().run()
            took = time.monotonic() - started
            if self.ran() == code:
                return took
            self.at = self._open(self.page)
        raise AssertionError(f"the {self.page} page never ran the program: {self.texts()}")

    def ran(self) -> str | None:
        try:
            return self.at.session_state[f"{self.page}.ran"]
        except KeyError:
            return None

    def trace(self) -> Trace:
        return self.at.session_state[f"{self.page}.trace"]

    def texts(self) -> list[str]:
        """What the page says in alerts, and any exception."""
        return [str(e.value) for kind in ("error", "warning") for e in getattr(self.at, kind)] \
            + [str(e.value) for e in self.at.exception]

    def picture(self) -> str | None:
        """The SVG this page shows: the Graph page's viewer, or the image under the Backward
        page's figure."""
        if self.page == "graph":
            for element in self.at.get("bidi_component"):
                proto = element.proto
                if proto.component_name.endswith("autograd_explorer.graph") and (
                        svg := json.loads(proto.json).get("svg")):
                    return svg
            return None
        for element in self.at.get("plotly_chart"):
            for image in json.loads(element.proto.spec)["layout"].get("images", []):
                source = image.get("source", "")
                if source.startswith("data:image/svg+xml;base64,"):
                    return base64.b64decode(source.split(",", 1)[1]).decode()
        return None

    def positions_problems(self) -> list[str]:
        """The Backward page's positions (what its layout cache holds for the DOT it drew)
        name exactly the nodes of the visitor's own view."""
        from explorer.ui.backward import _layout  # the page's own cached layout

        trace = self.trace()
        if not trace.backward:
            return ["no backward call recorded"]
        shown_view = animation_view(trace, trace.backward[0])
        try:
            layout, _ = _layout(shown_view.dot)
        except render.LayoutError as error:
            return [f"positions not laid out: {error}"]
        if differ := sorted(set(layout["nodes"]) ^ set(shown_view.nodes)):
            return [f"positions of other nodes than its own: {[n[:30] for n in differ[:6]]}"]
        return []

    def page_problems(self, took: float) -> list[str]:
        problems = [f"took {took:.1f} s"] if took > BOUND_S else []
        problems += [f"the page says: {t[:200]}" for t in self.texts()]
        return problems


def victim_program(token: str) -> str:
    """A program with names only this visitor uses (a Linear's parameters and its box too)."""
    return (f"lin_{token} = torch.nn.Linear(2, 1)\n"
            f"alpha_{token} = torch.ones(2, requires_grad=True)\n"
            f"beta_{token} = lin_{token}(alpha_{token}).sum() * 3\n"
            f"beta_{token}.backward()\n")


class Victim(Visitor):
    """A visitor who runs programs of their own, each with names no one else uses."""

    def draw_own(self, hide: list[str]) -> list[str]:
        """Run a new program of this visitor's; what is wrong with what the page shows."""
        token = secrets.token_hex(5)
        took = self.run(victim_program(token))
        problems = self.page_problems(took)
        trace = self.trace()
        problems += picture_problems(
            self.picture(), ids=graph_ids(trace), token=token, clusters=1, strict=True,
            show=[f"alpha_{token}", f"beta_{token}"], hide=[MARK, EVIL, *hide])
        if self.page == "backward":
            problems += self.positions_problems()
        return [f"victim on the {self.page} page: {p}" for p in problems]


# --- The attacks ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def attackers() -> dict[str, Visitor]:
    """An attacker's sessions, one on each page (a new tab when the rate limit says wait)."""
    return {page: Visitor(page) for page in PAGES}


@pytest.fixture(scope="module")
def victims() -> Iterator[tuple[Victim, Victim]]:
    """Two visitors who stay while attackers come and go: one on each page, each showing a
    graph of their own before the first attack."""
    graph, backward = Victim("graph"), Victim("backward")
    problems = graph.draw_own([]) + backward.draw_own([])
    assert not problems, problems
    yield graph, backward


def reset_shared_parts() -> None:
    """The kept `dot`s ended and the layout caches emptied: after a failed attack, so that the
    next one is judged on its own."""
    from explorer.ui.backward import _layout
    from explorer.ui.graph import layout

    with contextlib.suppress(Exception):
        render._Dot.close_idle()
    for cached in (layout, _layout):
        cached.clear()
    for kept in ("_drawn", "_failed"):
        with contextlib.suppress(Exception):
            getattr(render, kept).clear()


@contextlib.contextmanager
def judged() -> Iterator[None]:
    try:
        yield
    except BaseException:
        reset_shared_parts()
        raise


class Replay(threading.Thread):
    """Another session of the attacker's, laying out the attacker's graphs (as other views
    of them: without attributes, without saved tensors, the animation's) through the kept
    `dot`s while the victims' pages run."""

    def __init__(self, trace: Trace) -> None:
        super().__init__(daemon=True)
        self.trace = trace
        graph = trace.graph
        self.dots = [] if graph is None else [
            view(graph, show_attrs=False).dot, view(graph, show_saved=False).dot,
            view(graph, show_saved=False, show_attrs=False).dot]
        if trace.backward and trace.backward[0].graph is not None:
            self.dots.append(animation_view(trace, trace.backward[0]).dot)
        self.answers: list[str | Exception] = []

    def run(self) -> None:
        for dot in self.dots:
            for draw in (render.svg, lambda d: render.positions(d) and render.svg(d)):
                try:
                    self.answers.append(draw(dot))
                except Exception as error:  # noqa: BLE001 - judged below, whatever it is
                    self.answers.append(error)


def attack(attackers: dict[str, Visitor], victims: tuple[Victim, Victim], code: str,
           show: list[str], hide: list[str]) -> None:
    """`code` run by the attacker on both pages, then replayed while two others run programs of
    their own; every picture judged. `show`: what the attacker's picture must show of their
    names; `hide`: what no victim may see."""
    graph_victim, backward_victim = victims
    with judged():
        problems: list[str] = []
        for page, attacker in attackers.items():
            took = attacker.run(code)
            trace = attacker.trace()
            assert trace.ok and trace.graph is not None, trace.error  # an attack that runs
            # The attacker's own name may say EVIL and `javascript:` as text: what must not
            # be there is a node, box or link of the payload's.
            drawn = picture_problems(attacker.picture(), ids=graph_ids(trace), show=show,
                                     hide=[], token=None, clusters=module_boxes(trace),
                                     strict=False)
            problems += [f"attacker ({page}): {p}" for p in attacker.page_problems(took) + drawn]
        replay = Replay(attackers["backward"].trace())
        replay.start()
        problems += backward_victim.draw_own(hide) + graph_victim.draw_own(hide)
        replay.join(timeout=4 * SCRIPT_TIMEOUT_S)
        for answer in replay.answers:
            if isinstance(answer, Exception):
                problems.append(f"attacker's replay: {type(answer).__name__}: {answer}"[:300])
            else:
                problems += [f"attacker's replay: {p}" for p in picture_problems(
                    answer, ids=graph_ids(replay.trace), show=[], hide=[], token=None,
                    clusters=module_boxes(replay.trace), strict=False)]
        assert not problems, "\n".join(dict.fromkeys(problems))


@pytest.mark.parametrize(("carrier", "payload"), string_attacks())
def test_a_name_that_reaches_dot_is_shown_as_text_and_to_no_one_else(
        attackers: dict[str, Visitor], victims: tuple[Victim, Victim], carrier: str,
        payload: str) -> None:
    where = CARRIERS[carrier]
    code = where.program(PAYLOAD[payload].for_context(where.context))
    attack(attackers, victims, code, show=[MARK] if where.context != "none" else [], hide=[])


@pytest.mark.parametrize("name", list(IDENTIFIERS))
@pytest.mark.parametrize("carrier", list(IDENTIFIER_CARRIERS))
def test_an_identifier_of_any_script_or_word_is_shown_as_text_and_to_no_one_else(
        attackers: dict[str, Visitor], victims: tuple[Victim, Victim], carrier: str,
        name: str) -> None:
    word = shown(IDENTIFIERS[name])
    code = identifier_program(carrier, IDENTIFIERS[name])
    # Long enough to be the attacker's alone, it is hidden from the victims.
    attack(attackers, victims, code, show=[word[:50]],
           hide=[word[:50]] if len(word) > 8 else [])


@pytest.mark.parametrize("form", list(CLASS_NAMINGS))
def test_a_class_never_takes_a_name_that_is_not_an_identifier(form: str) -> None:
    """Function and Module classes are named by `class` statements only: a name given by
    `type()` or assigned later never names a node, and what the run draws is its own."""
    from explorer.ui.common import pool

    trace = pool().run(CLASS_NAMINGS[form])
    names = [(node.name or "") + node.label for graph in trace.graphs
             for node in graph.nodes]
    assert not [name for name in names if MARK in name], names
    if trace.graph is not None:
        problems = picture_problems(render.svg(view(trace.graph).dot), ids=graph_ids(trace),
                                    show=[], hide=[MARK], token=None, clusters=0, strict=True)
        assert not problems, problems


def test_a_fold_of_a_module_with_a_hostile_name_is_drawn_as_text(
        victims: tuple[Victim, Victim]) -> None:
    """The Graph page's fold draws a module as one node labelled with its path."""
    name = PAYLOAD["armed_link_then_comment"].for_context("label")
    with judged():
        attacker = Visitor("graph")
        attacker.run(CARRIERS["add_module"].program(name))
        fold = attacker.at.multiselect(key="graph.fold")
        started = time.monotonic()  # the module named by the payload (not `net` around it)
        fold.set_value([path for path in fold.options if MARK in path]).run()
        trace = attacker.trace()
        problems = attacker.page_problems(time.monotonic() - started) + picture_problems(
            attacker.picture(), ids=graph_ids(trace), show=[MARK, "folded"], hide=[],
            token=None, clusters=module_boxes(trace), strict=False)
        problems += victims[0].draw_own([]) + victims[1].draw_own([])
        assert not problems, "\n".join(problems)


# --- The caches -----------------------------------------------------------------------------


# The armed payloads, each through a carrier where it stands as it was made to.
ARMED = [(name, "parameter_dict" if "cluster" not in payload.armed else "add_module")
         for name, payload in PAYLOAD.items() if payload.armed]


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize(("payload", "carrier"), ARMED)
def test_the_same_program_from_two_visitors_after_an_attack_shows_that_program(
        victims: tuple[Victim, Victim], page: str, payload: str, carrier: str) -> None:
    """After an attack on this page's kind of `dot`, one visitor runs a program and a second
    runs the same text: the second is given the first's Trace and layout from the caches,
    and both must be that program's own picture."""
    where = CARRIERS[carrier]
    with judged():
        attacker = Visitor(page)
        attacker.run(where.program(PAYLOAD[payload].for_context(where.context)))
        token = secrets.token_hex(5)
        code = victim_program(token)
        problems = []
        for who in ("first", "second"):
            visitor = Visitor(page)
            took = visitor.run(code)
            trace = visitor.trace()
            if who == "second" and not trace.reused:
                problems.append("the second visitor's run was not given from the result cache")
            seen = visitor.page_problems(took) + picture_problems(
                visitor.picture(), ids=graph_ids(trace), show=[f"alpha_{token}", f"beta_{token}"],
                hide=[MARK, EVIL], token=token, clusters=1, strict=True)
            problems += [f"{who} visitor: {p}" for p in seen]
            if page == "backward":
                problems += [f"{who} visitor: {p}" for p in visitor.positions_problems()]
        assert not problems, "\n".join(problems)


SNIPPET = ("w = torch.ones(3, requires_grad=True)\ny = (w * w).sum()\ny.backward()\n"
           "print(w.grad)\n")
Change = Callable[[Trace], object]
CHANGES: dict[str, Change] = {
    "stdout": lambda t: setattr(t, "stdout", "changed"),
    "error": lambda t: setattr(t, "error", Error(type="Changed", message="changed", line=1,
                                                 explanation=None)),
    "variable_values": lambda t: setattr(t.variables["w"], "values", [6.0, 6.0, 6.0]),
    "variables_cleared": lambda t: t.variables.clear(),
    "steps_cleared": lambda t: t.steps.clear(),
    "step_output": lambda t: setattr(t.steps[-1], "output", "changed"),
    "step_variables": lambda t: t.steps[0].variables.clear(),
    "graph_label": lambda t: setattr(t.graphs[-1].nodes[0], "label", '"] } digraph { evil }'),
    "graph_dot": lambda t: setattr(t.graphs[-1], "dot", "digraph { evil [URL=<javascript:x>] }"),
    "graph_edges": lambda t: t.graphs[-1].edges.clear(),
    "backward_steps": lambda t: t.backward[0].steps.clear(),
    "warnings": lambda t: t.warnings.append("changed"),
}


def _comparable(trace: Trace) -> dict[str, Any]:
    return {k: v for k, v in json.loads(trace.to_json()).items()
            if k not in ("reused", "elapsed_ms")}


@pytest.mark.parametrize("which", ["first", "given_again"])
@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("runner", ["explorer.run", "the_app_pool"])
def test_a_trace_changed_by_its_caller_never_reaches_a_later_caller(
        runner: str, change: str, which: str) -> None:
    if runner == "explorer.run":
        run: Callable[[str], Trace] = explorer.run
    else:
        from explorer.ui.common import pool

        run = pool().run
    code = f"{SNIPPET}# {runner} {change} {which} {secrets.token_hex(4)}\n"
    first = run(code)
    assert first.ok and first.repeatable, first.error
    expected = _comparable(first)
    changed = first if which == "first" else run(code)
    CHANGES[change](changed)
    later = run(code)
    assert _comparable(later) == expected


@pytest.mark.parametrize("code", CLOCKS + ENTROPY)
def test_a_run_that_read_the_clock_or_entropy_is_not_given_to_the_next_visitor(
        code: str) -> None:
    from explorer.ui.common import pool

    first = pool().run(code)
    assert first.ok, first.error
    again = pool().run(code)
    assert not again.reused, f"given again: {again.stdout!r} (first: {first.stdout!r})"
    assert not first.repeatable
