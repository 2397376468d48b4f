"""The pages' work on a run's answer is bounded by the answer's size, not by a product of its
parts: answers a run could send once past the sandbox (tests/forged.py), at the caps the
check allows, each read by the page code that once took a minute or more over them (steps ×
nodes, names × edges, steps × values), and the inputs that once raised on the server."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from graphviz import quoting

from explorer.trace import Trace, graph_view
from explorer.trace.check import MAX_MODULE
from explorer.trace.graph_view import modules, node_lines, view
from explorer.trace.schema import MAX_NESTING, Gradient
from explorer.views import custom, predict
from explorer.views.animation import figure
from explorer.views.carried import alive
from explorer.views.export import animation_view
from explorer.views.graph_page import statement_added
from explorer.views.present import summed
from explorer.views.render import positions, svg
from explorer.views.scene import scene
from explorer.views.sharing import changed_cells, changed_pair, default_pair, last_change
from explorer.views.timeline import timeline
from tests.forged import forged, gradient

BOUND_S = 2.0  # each took from 8 s to 2 minutes on these answers; now tens of milliseconds
NODES = 20_000  # Limits().graph_nodes
STEPS = 3_000


def timed(work: Callable[[], Any]) -> Any:
    """`work()`, checked to end within BOUND_S."""
    start = time.perf_counter()
    done = work()
    assert time.perf_counter() - start < BOUND_S
    return done


def op(i: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"n{i}", "kind": "backward", "label": "MulBackward0",
            "name": "MulBackward0"} | fields


def tensor(i: int, kind: str = "output", **fields: Any) -> dict[str, Any]:
    return {"id": f"t{i}", "kind": kind, "label": f"t{i}\n (1)", "shape": [1],
            "dtype": "torch.float32", "device": "cpu", "requires_grad": True,
            "is_leaf": kind == "leaf", "version": 0} | fields


def grad(src: str, dst: str) -> dict[str, str]:
    return {"src": src, "dst": dst, "kind": "grad"}


def step(graph: int | None = 0, **fields: Any) -> dict[str, Any]:
    return {"line": 2, "end_line": 2, "output": "", "variables": {}, "graph": graph} | fields


ROUND = {"line": 1, "name": "i", "round": 5, "loop_began": 0, "previous_began": NODES // 2,
         "began": NODES + 1}


def test_a_timeline_reads_each_graph_once_whatever_the_steps() -> None:
    """Steps in a loop's round, each showing one small graph, before a call whose graph is the
    biggest a run draws: each step once dated the whole call graph's nodes."""
    rest = [op(i, seq=i) for i in range(NODES - 3)]
    called = {"dot": "x", "nodes": [tensor(1, names=["y"]), op(NODES, seq=NODES), *rest],
              "edges": [grad(f"n{NODES}", "t1"),
                        *(grad(f"n{i}", f"n{i + 1}") for i in range(NODES - 4))]}
    small = {"dot": "x", "nodes": [tensor(9, "leaf", names=["x"])], "edges": []}
    call = {"call": 1, "kind": "backward", "value": 1.0, "graph": 1, "roots": ["t1"],
            "vector": None, "root": "t1", "after": STEPS, "leaf_grads": [],
            "steps": [{"node": f"n{NODES}", "name": "MulBackward0",
                       "grad_outputs": [gradient()], "grad_inputs": []}]}
    trace = Trace.from_dict(forged(graphs=[small, called], backward=[call],
                                   steps=[step(rounds=[ROUND])] * STEPS))
    assert not trace.error
    built = timed(lambda: timeline(trace, trace.backward[0]))
    assert {node for b in built.built for node in b.added} == {"t1", f"n{NODES}"}
    assert timed(lambda: node_lines(trace)) == {"t9": (2, 2)}


def test_nodes_left_to_a_calling_line_are_not_dated_again_at_each_step() -> None:
    """Steps inside functions, each begun later than every node of the graph was made: what
    their caller's line made waits for its step, and was dated anew at each step."""
    nodes = [op(i, seq=i) for i in range(NODES)]
    steps = [step(calls=["f"], entered=NODES + k) for k in range(STEPS)]
    trace = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": []}],
                                   steps=steps))
    assert timed(lambda: node_lines(trace)) == {}
    assert timed(lambda: statement_added(trace, STEPS - 1)) == frozenset()


def test_what_keeps_earlier_rounds_is_told_in_one_walk() -> None:
    """A chain of nodes made in earlier rounds, each tensor named: each name once walked the
    graph again (names × edges)."""
    count = NODES // 2
    nodes = [*(op(i, seq=i) for i in range(count)),
             *(tensor(i, names=[f"v{i}"]) for i in range(count))]
    edges = [*(grad(f"n{i}", f"n{i + 1}") for i in range(count - 1)),
             *(grad(f"n{i}", f"t{i}") for i in range(count))]
    trace = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": edges}],
                                   steps=[step(rounds=[ROUND])]))
    kept = timed(lambda: alive(trace, 0))
    assert kept is not None and kept.nodes == count
    [keeper] = kept.keepers  # the last reaches all; each other wholly within it, not told
    assert (keeper.names, keeper.nodes, keeper.first, keeper.last) == (
        (f"v{count - 1}",), count, 1, 3)  # all made before round 4 began


def test_a_cycle_no_graph_autograd_made_has_ends_the_walk() -> None:
    nodes = [op(0, seq=0), op(1, seq=1), tensor(0, names=["a"])]
    edges = [grad("n0", "n1"), grad("n1", "n0"), grad("n1", "t0")]
    trace = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": edges}],
                                   steps=[step(rounds=[ROUND])]))
    kept = timed(lambda: alive(trace, 0))
    assert kept is not None and [k.names for k in kept.keepers] == [("a",)]


def test_the_scene_of_a_freed_graph_walks_it_once_for_all_names() -> None:
    """Two freed nodes, a thousand names on each of their outputs, 80,000 edges: the scene
    once walked the graph again for each name."""
    freed = "saved values freed by backward()"
    nodes = [op(0, saved={"self": freed}), op(1, saved={"self": freed}),
             tensor(0, names=[f"a{j}" for j in range(1000)]),
             tensor(1, names=[f"b{j}" for j in range(1000)]),
             *(op(i) for i in range(2, NODES - 4))]
    edges = [grad("n0", "t0"), grad("n1", "t1")] * 40_000
    call = {"call": 1, "kind": "backward", "value": 1.0, "graph": 0, "roots": ["t0"],
            "vector": None, "root": "t0", "raised": True, "steps": [], "leaf_grads": []}
    trace = Trace.from_dict(forged(
        ok=False, error={"type": "RuntimeError", "line": 3, "message":
                         "Trying to backward through the graph a second time"},
        graphs=[{"dot": "x", "nodes": nodes, "edges": edges}], backward=[call],
        steps=[step(line=3, end_line=3)]))
    code = "for i in range(2):\n    a0 = a0 * 2\n    a0.backward()\n"
    said = timed(lambda: scene(trace, code))
    assert said is not None and (said.kind, said.line) == ("freed_loop", 2)


def test_module_paths_are_cut_to_a_depth_and_walked_up_once() -> None:
    """Paths 1,000 modules deep, each node's its own: every prefix of each was made and drawn
    as a box (40 nodes: 40,000 boxes)."""
    deep = [tensor(i, module=(f"b{i}." + "a." * 1000)[:2000].rstrip("."))
            for i in range(2_000)]
    graph = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": deep, "edges": []}],
                                   steps=[step()])).graphs[0]
    assert {len(n.module.split(".")) for n in graph.nodes} == {MAX_NESTING}
    assert max(len(n.module) for n in graph.nodes) <= MAX_MODULE
    paths = timed(lambda: modules(graph))
    assert len(paths) == 2_000 * MAX_NESTING  # bK, and the 15 boxes within it
    assert "b7.a.a" in paths and timed(lambda: view(graph)).dot.count("subgraph") == len(paths)


def test_a_pair_unchanged_for_thousands_of_steps_is_compared_once() -> None:
    """A step that sends a variable unchanged (null) holds the very object the step before
    did: its 3,999 cells (as many as a run may send) were compared anew at each step."""
    count = 3_999
    array = {"kind": "tensor", "shape": [count], "dtype": "torch.float32", "device": "cpu",
             "requires_grad": False, "is_leaf": True, "numel": count, "truncated": False,
             "values": [0.0] * count, "memory": [0, 4 * count], "data_ptr": 0}
    other = array | {"kind": "ndarray", "memory": [10**6, 10**6 + 4 * count], "data_ptr": 10**6}
    steps = [step(None, variables={"a": array, "b": other}),
             *[step(None, variables={"a": None, "b": None})] * (STEPS - 1)]
    trace = Trace.from_dict(forged(steps=steps, variables={"a": None, "b": None}))
    assert isinstance(trace.steps[-1].variables["a"].values, list)
    assert timed(lambda: last_change(trace, "a", "b")) == 0


def test_what_a_step_of_a_thousand_new_arrays_changed_is_told_without_their_cells() -> None:
    """The NumPy page asks at each rerun what the step shown changed: a step may bring 1,000
    variables of 3,999 values each, and building their cells took seconds."""
    count, names = 3_999, 1_000
    array = {"kind": "tensor", "shape": [count], "dtype": "torch.float32", "device": "cpu",
             "requires_grad": False, "is_leaf": True, "numel": count, "truncated": False,
             "values": [0.0] * count}
    at = [{f"v{k}": array | {"memory": [8 * k * count, 8 * k * count + 4 * count],
                             "data_ptr": 8 * k * count, "values": [float(n)] * count}
           for k in range(names)} for n in (1, 2)]
    trace = Trace.from_dict(forged(steps=[step(None, variables=v) for v in at]))
    first, second = (s.variables for s in trace.steps)
    assert timed(lambda: changed_pair(first, {})) == ("v0", "v1")
    assert timed(lambda: changed_pair(second, first)) == ("v0", "v1")
    assert timed(lambda: changed_pair(second, second)) is None


def test_the_first_pair_shown_is_looked_for_among_a_bounded_number() -> None:
    """The NumPy page opens on a tensor and an array that share memory, looked for among
    all pairs of a step's variables: 500 tensors and 500 arrays, all apart."""
    small = {"kind": "tensor", "shape": [1], "dtype": "torch.float32", "device": "cpu",
             "requires_grad": False, "is_leaf": True, "numel": 1, "truncated": False,
             "values": [0.0]}
    variables = {f"{kind[0]}{k}": small | {"kind": kind, "memory": [8 * n, 8 * n + 4],
                                           "data_ptr": 8 * n}
                 for n, (k, kind) in enumerate((k, kind) for kind in ("tensor", "ndarray")
                                               for k in range(500))}
    trace = Trace.from_dict(forged(steps=[step(None, variables=variables)],
                                   variables=variables))
    assert timed(lambda: default_pair(trace, "")) == ("t0", "n0")


def test_cells_ragged_differently_all_count_as_changed() -> None:
    assert changed_cells([[1], [2, 3]], [[1], [2]]) == {(1, 1)}  # a cell the step before lacks


def test_integers_past_a_floats_range_are_written_and_judged() -> None:
    huge = 10 ** 400
    assert summed([huge, 1], [2], None, False) == "2 ‖inf‖"
    verdict = predict.judge([1.0], Gradient(shape=[1], dtype="torch.int64", device="cpu",
                                            values=[-huge], truncated=False, norm=0.0,
                                            max_abs=0.0))
    assert not verdict.right and verdict.expected == [float("-inf")]


def test_a_program_too_deep_to_write_back_has_no_gradient_check() -> None:
    """`ast.unparse` of a base 1,000 terms deep recursed past the limit on every page."""
    code = "class G(" + "+".join(["0"] * 1_000) + "):\n    pass\n"
    assert custom.gradient_checks(code) == ([], "")


def test_long_labels_are_quoted_each_time_not_kept_for_every_session() -> None:
    # The quoting of 65,536 labels of 2,000 Chinese characters, remembered, held 517 MB.
    before = graph_view._remembered.cache_info().currsize
    long = ["字" * 1_995 + str(k) for k in range(100)]
    assert [graph_view._quote(t) for t in long] == [graph_view._quoted(t) for t in long]
    assert graph_view._remembered.cache_info().currsize == before
    graph_view._quote("n12")
    assert graph_view._remembered.cache_info().currsize <= before + 1  # ids: remembered


def test_labels_of_backslashes_are_quoted_in_linear_time_as_graphviz_quotes_them() -> None:
    # A module's key of 2,000 backslashes made each of its parameters' labels take 0.2 s in
    # graphviz's quoting, on every rerun of the Graph and Backward pages (and the check's).
    short = ["", "node", "Edge", "-4.2", ".5", "a b", 'say "hi"', "\\", '\\"', "a\\", "&amp",
             "x\n\"y", "\t\\\x00", "<b>", "中文 \\ \"q\""]
    for text in short:  # graphviz's own quoting of the text made drawable, as before
        drawable = graph_view._CONTROL.sub(graph_view._visible,
                                           text.replace("\\", "\\\\").replace("&", "&amp;"))
        assert graph_view._quoted(text) == quoting.quote(drawable, is_html_string=lambda _: False)
    slashes = ["\\" * 20_000 + str(k) for k in range(50)]  # 3 minutes in graphviz's quoting
    quoted = timed(lambda: [graph_view._quote(t) for t in slashes])
    assert quoted[0] == '"' + "\\" * 40_000 + '0"'


@pytest.mark.parametrize("depth", [1, 60])
def test_the_gradient_checks_of_a_thousand_functions_deep_in_loops_are_written_in_time(
        depth: int) -> None:
    # Each class's call was looked for through the whole program, at every loop around it:
    # 1,600 classes in a loop took 23 s, 500 in twenty loops 23 s.
    classes = 1_000
    code = ("from torch.autograd import Function\n"
            + "".join(f"class F{k}(Function):\n    pass\n" for k in range(classes))
            + "".join(" " * d + "for i in range(2):\n" for d in range(depth))
            + "".join(" " * depth + f"F{k}.apply(x)\n" for k in range(classes)))
    names, program = timed(lambda: custom.gradient_checks(code))
    assert names == [f"F{k}" for k in range(classes)]
    compile(program, "<check>", "exec")  # it parses: the check the sandbox would run


def test_folding_thousands_of_modules_costs_what_the_graph_holds() -> None:
    """Each module folded was looked for in every node, and in every other module folded:
    2,000 of 5,000 modules over 20,000 nodes took 6.5 s on each rerun of the Graph page."""
    nodes = [op(i, module=f"net.blocks.b{i % 5_000}.fc") for i in range(NODES)]
    graph = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": []}],
                                   steps=[step()])).graphs[0]
    fold = (*(f"net.blocks.b{k}" for k in range(2_000)), "net.blocks.b7.fc", "net.nowhere")
    shown = timed(lambda: view(graph, fold=fold))
    assert len(shown.groups) == 2_000  # b7's fc lies in b7, folded whole; nowhere holds none
    assert sorted(len(members) for members in shown.groups.values()) == [4] * 2_000
    assert shown.groups["module8"] == [f"n{i}" for i in range(7, NODES, 5_000)]


def test_the_keepers_of_a_million_names_are_found_without_an_int_for_each() -> None:
    """Each name made its own int of as many bits as earlier rounds made nodes: 1,500 tensors
    of 1,000 names each over 18,000 old nodes held 3.8 GB, on each rerun of the Graph page."""
    count, tensors, names = NODES // 2, 200, 1_000
    nodes = [*(op(i, seq=i) for i in range(count)),
             *(tensor(j, names=[f"v{j}_{k}" for k in range(names)]) for j in range(tensors))]
    edges = [*(grad(f"n{i}", f"n{i + 1}") for i in range(count - 1)),
             *(grad(f"n{count - 1}", f"t{j}") for j in range(tensors))]
    trace = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": edges}],
                                   steps=[step(rounds=[ROUND])]))
    [keeper] = timed(lambda: alive(trace, 0)).keepers  # all reach the whole chain, together
    assert len(keeper.names) == tensors * names and keeper.nodes == count


def test_variables_of_too_many_sets_of_tensors_are_not_told_as_keepers() -> None:
    """30,000 list variables, each holding its own pair of 10,000 tensors, over 10,000 old
    nodes: 300 million bits to find; no keeper is told rather than some."""
    count = NODES // 2
    held: dict[int, list[str]] = {}
    for k in range(30_000):
        for j, tensor_of in enumerate((k % count, (3 * k + k // count + 1) % count)):
            held.setdefault(tensor_of, []).append(f"v{k}[{j}]")
    nodes = [*(op(i, seq=i) for i in range(count)),
             *(tensor(j, names=held.get(j, [])) for j in range(count))]
    edges = [*(grad(f"n{i}", f"n{i + 1}") for i in range(count - 1)),
             *(grad(f"n{j}", f"t{j}") for j in range(count))]
    trace = Trace.from_dict(forged(graphs=[{"dot": "x", "nodes": nodes, "edges": edges}],
                                   steps=[step(rounds=[ROUND])]))
    kept = timed(lambda: alive(trace, 0))
    assert kept is not None and kept.nodes == count and kept.keepers == ()


def test_many_grads_written_at_one_node_of_many_edges_are_drawn_in_time() -> None:
    """Each `.grad` looked through every edge out of its node: 20,000 `.grad`s (and as many
    retained) at a node of 1,000 edges took 4.7 s to draw one step."""
    tensors, written = 1_000, 20_000
    one = gradient(values=[1.0], shape=[1])
    grads = [{"node": "n0", "leaf": f"t{k % tensors}", "names": ["v"], "after": 1, "grad": one}
             for k in range(written)]
    call = {"call": 1, "kind": "backward", "value": 1.0, "graph": 0, "roots": ["t0"],
            "root": "t0", "vector": None, "after": 1, "leaf_grads": grads, "retained": grads,
            "steps": [{"node": "n0", "name": "MulBackward0", "grad_outputs": [one],
                       "grad_inputs": [one | {"to": f"t{k}"} for k in range(tensors)]}]}
    graph = {"dot": "x", "nodes": [op(0, seq=0), *(tensor(k) for k in range(tensors))],
             "edges": [grad("n0", f"t{k}") for k in range(tensors)]}
    trace = Trace.from_dict(forged(graphs=[graph], backward=[call], steps=[step()]))
    shown = animation_view(trace, trace.backward[0])
    layout, picture = positions(shown.dot), svg(shown.dot)
    drawn = timed(lambda: figure(trace.backward[0], layout, picture, shown.groups, at=0,
                                 numbers=True, animated=False))
    assert drawn.data[0] is not None


def test_the_first_step_showing_a_freed_graph_reads_each_graph_once() -> None:
    """Three thousand steps showing one graph of 20,000 nodes, each node saving fifty values,
    none freed but the last node: the scene once read every node again at each step."""
    saved = {f"v{j}": "tensor(1) float32" for j in range(50)}
    nodes = [*(op(i, saved=saved) for i in range(NODES - 1)),
             op(NODES, saved={"self": "saved values freed by backward()"})]
    trace = Trace.from_dict(forged(
        ok=False, error={"type": "RuntimeError", "line": 5, "message":
                         "Trying to backward through the graph a second time"},
        graphs=[{"dot": "x", "nodes": nodes[:-1], "edges": []},
                {"dot": "x", "nodes": nodes, "edges": []}],
        steps=[*[step(line=2, end_line=2)] * STEPS, step(graph=1, line=4, end_line=4)]))
    said = timed(lambda: scene(trace, "x = 1\n"))
    assert said is not None and (said.kind, said.line, said.nodes) == ("freed", 4, (f"n{NODES}",))


def test_a_hover_writes_an_ops_name_short_however_often_it_names_it() -> None:
    """Nodes each sending eleven gradients to one op of a long name full of `&`: each hover
    line wrote the whole name, escaped (five characters for each `&`), a 222 MB figure."""
    senders, one = 50, gradient(values=[1.0], shape=[1])
    name = "&" * 5_000
    steps = [{"node": "n0", "name": name, "grad_outputs": [one], "grad_inputs": []},
             *({"node": f"n{i}", "name": name, "grad_outputs": [one],
                "grad_inputs": [one | {"to": "n0"}] * 11} for i in range(1, senders))]
    call = {"call": 1, "kind": "backward", "value": 1.0, "graph": 0, "roots": ["n0"],
            "root": "n0", "vector": None, "after": 1, "leaf_grads": [], "steps": steps}
    graph = {"dot": "x", "nodes": [op(i, name=name) for i in range(senders)],
             "edges": [grad(f"n{i}", "n0") for i in range(1, senders)]}
    trace = Trace.from_dict(forged(graphs=[graph], backward=[call], steps=[step()]))
    shown = animation_view(trace, trace.backward[0])
    layout, picture = positions(shown.dot), svg(shown.dot)
    drawn = timed(lambda: figure(trace.backward[0], layout, picture, shown.groups,
                                 at=senders - 1, numbers=True, animated=False))
    hovers = [t for data in drawn.data for t in (getattr(data, "hovertext", None) or ())]
    assert hovers and max(map(len, hovers)) < 12 * (5 * 60 + 100)
