"""The `dot`s kept running (explorer/views/render.py): the same pictures as a new `dot` draws,
a failure or a slow graph ends only that `dot`, and no more of them than allowed."""

from __future__ import annotations

import os
import select
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from xml.etree import ElementTree

import pytest

from explorer.trace.graph_view import view
from explorer.trace.schema import Edge, Graph, Node
from explorer.views import render
from explorer.views.render import LayoutError, positions, svg
from tests.test_worker import name_of, parent_of, processes


def _chain(n: int, name: str = "Op") -> str:
    nodes = [Node(id=f"n{i}", kind="backward", name=f"{name}{i}Backward0",
                  label=f"{name}{i}Backward0", saved={}) for i in range(n)]
    edges = [Edge(src=f"n{i}", dst=f"n{i + 1}", kind="grad") for i in range(n - 1)]
    return view(Graph(dot=None, nodes=nodes, edges=edges), collapse=False).dot


def _dots() -> list[int]:
    """This process's `dot` children."""
    return [p for p in processes() if name_of(p) == "dot" and parent_of(p) == os.getpid()]


def _fresh(dot: str, *formats: str) -> bytes:
    """What a new `dot`, run once, draws."""
    return subprocess.run(["dot", *render.NETWORK_SIMPLEX, *(f"-T{f}" for f in formats)],
                          input=dot.encode(), capture_output=True, check=True).stdout


def test_graph_after_graph_is_drawn_as_a_new_dot_draws_it() -> None:
    graphs = [_chain(n, name) for n in (3, 40, 7) for name in ("Mul", "Add")]
    for dot in graphs * 2:
        assert svg(dot).encode() == _fresh(dot, "svg")
        layout = positions(dot)
        assert len(layout["nodes"]) == dot.count("[label=")
        assert svg(dot).encode() == _fresh(dot, "svg")  # drawn with the positions
    assert 1 <= len(_dots()) <= 2 * render.DOTS  # one kind for SVG, one for SVG with positions


def test_a_graph_dot_cannot_read_fails_with_its_words_and_the_next_is_drawn() -> None:
    svg(_chain(5))  # a kept `dot` is running
    with pytest.raises(LayoutError, match="syntax error"):
        svg("digraph {\n\ta -> \n}\n")
    assert "Op2Backward0" in svg(_chain(6))


def test_a_slow_graph_ends_its_dot_and_the_next_is_drawn_at_once() -> None:
    slow = _chain(800, "Slow")
    with pytest.raises(LayoutError, match="took more than"):
        svg(slow, timeout_s=0.01)
    started = time.monotonic()
    assert "Quick2Backward0" in svg(_chain(5, "Quick"))
    assert time.monotonic() - started < 2.0


def test_many_sessions_at_once_share_a_few_dots() -> None:
    graphs = [_chain(20 + i) for i in range(24)]
    with ThreadPoolExecutor(max_workers=8) as threads:
        pictures = list(threads.map(svg, graphs))
    assert all(f"Op{19 + i}Backward0" in p for i, p in enumerate(pictures))
    assert len(_dots()) <= 2 * render.DOTS


def test_downloads_wait_for_their_own_dot_and_no_longer_than_a_layout_may_take() -> None:
    """Visitors asking for PNGs (made when asked, in Streamlit's threads, on every click)
    hold only the download's `dot`: a page's picture is drawn at once all the same; and a
    PNG that finds the download's `dot` busy waits no longer than a layout may take, saying
    so, and is drawn once asked again."""
    held = render._downloading.acquire(timeout=5)  # the visitors' PNGs, being drawn
    try:
        started = time.monotonic()
        assert "Page2Backward0" in svg(_chain(5, "Page"))
        assert time.monotonic() - started < 2.0
        started = time.monotonic()
        with pytest.raises(LayoutError, match="busy drawing other graphs for 0.3 s"):
            render.png(_chain(5, "Png"), timeout_s=0.3)
        assert 0.3 <= time.monotonic() - started < 2.0
    finally:
        if held:
            render._downloading.release()
    assert held and render.png(_chain(5, "Png")).startswith(b"\x89PNG")  # not kept as failed
    assert render._running.acquire(blocking=False) and render._downloading.acquire(
        blocking=False)  # every slot given back
    render._running.release()
    render._downloading.release()


def test_a_dot_is_replaced_after_its_share_of_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "GRAPHS_PER_DOT", 3)
    render._Dot.close_idle()
    seen = set()
    for n in range(3, 10):
        svg(_chain(n, "Turn"))
        seen.update(_dots())
    assert len(seen) >= 3  # 7 graphs, 3 to a `dot`
    assert len(_dots()) <= 2 * render.DOTS


# Texts a program can put in a name (a module's, a key, a class's) that reach the DOT.
HOSTILE = ['a\\\x00\n"{} } } digraph { X [label=<X>] } /*', "line\nbreak\r\n\u2028\u2029\x85",
           'odd\\', 'q"uote\\"', "tab\there", "\x1b[31m\x7f", "</svg><script>alert(1)</script>",
           '<a xlink:href="javascript:alert(1)">x</a>', "\\G \\N \\L \\l", "subgraph node"]


def _named(names: list[str]) -> str:
    nodes = [Node(id=f"t{i}", kind="leaf", label=f"{name}\n (2)", names=[name], shape=[2],
                  dtype="float32", device="cpu", requires_grad=True, is_leaf=True, grad_fn=None,
                  version=0, module=name) for i, name in enumerate(names)]
    return view(Graph(dot=None, nodes=nodes, edges=[]), collapse=False).dot


@pytest.mark.parametrize("name", HOSTILE)
def test_every_text_reaches_dot_as_a_string_drawn_as_written(name: str) -> None:
    dot = _named([name])
    assert not render.INSIDE_A_LINE.search(dot)  # no text ends its line or string early
    picture = svg(dot)
    assert picture.encode() == _fresh(dot, "svg") and picture.count('class="node"') == 1
    assert not _links_or_scripts(picture)  # any markup is drawn as text
    assert "explorer_" not in picture  # no request's name (`\\G`) is drawn
    assert "Victim" in svg(_chain(3, "Victim"))  # and the next graph is its own


def _links_or_scripts(picture: str) -> list[str]:
    """The SVG's elements that are scripts or carry a link."""
    return [element.tag for element in ElementTree.fromstring(picture).iter()
            if element.tag.endswith("script") or any(k.endswith("href") for k in element.attrib)]


def test_a_dot_out_of_step_is_ended_and_the_graph_drawn_anew() -> None:
    render._Dot.close_idle()
    svg(_chain(3))
    kept = render._Dot._idle[("svg",)][-1]
    assert kept.proc.stdin is not None and kept.proc.stdout is not None
    kept.proc.stdin.write(b"digraph stale {\n\tStale [label=STALE]\n}\n")  # an answer no one
    kept.proc.stdin.flush()                                                # asked for
    select.select([kept.proc.stdout], [], [], 5)
    picture = svg(_chain(4, "Fresh"))
    assert "Fresh3Backward0" in picture and "STALE" not in picture
    assert picture.encode() == _fresh(_chain(4, "Fresh"), "svg")
    assert kept.proc.poll() is not None  # that `dot` is gone


def test_only_dot_the_explorer_wrote_is_laid_out() -> None:
    for forged in ('digraph {\n\ta [label="x\x00"]\n}\n', 'graph {\n\ta\n}\n',
                   'digraph {\n\ta\n}\ndigraph {\n\tb\n}\n\x00',
                   'digraph {\n\ta [label="\r"]\n}\n'):
        with pytest.raises(LayoutError, match="not a graph the explorer wrote"):
            svg(forged)
    assert "Op2Backward0" in svg(_chain(3))
