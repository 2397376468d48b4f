"""What a run sends back is untrusted: the server decodes it with bounds, checks it against the
Trace's schema, draws the picture itself and shows the run's words as words. Each case is a
forged answer, as a run that got past the sandbox could send (tests/forged.py); the pages
showing one are in tests/test_untrusted_pages.py."""

from __future__ import annotations

import gc
import json
import math
import re
import socket
import time
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from explorer.pool.worker import WorkerPool
from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Trace, notes
from explorer.trace.check import (
    MAX_DOT,
    MAX_LINE,
    MAX_LINES,
    MAX_MESSAGE,
    MAX_NAME,
    MAX_VARIABLES,
    BadResult,
    progress,
)
from explorer.trace.graph_view import torchviz_dot, view
from explorer.trace.schema import MAX_CALLS, MAX_NESTING, Edge, Graph, Node
from explorer.trace.wire import (
    HEADER,
    MAX_CONTAINERS,
    MAX_DEPTH,
    MAX_RESULT_BYTES,
    BadAnswer,
    TooLarge,
    body,
    decode,
    encode,
    finite,
    header,
    trace_message,
    uncollected,
)
from explorer.views import render
from explorer.views.devices import MAX_GPUS, cuda_devices
from explorer.views.render import MAX_STATEMENTS, LayoutError, TooTangled, svg
from tests.forged import EVIL, LINK, NOTE, forged, gradient, hostile
from tests.programs import MY_RELU, SEED


def drawn(graph: dict[str, Any]) -> Graph:
    """A graph made of `graph`'s nodes and edges as they are, unchecked: what a page draws
    is held to its own quoting, whatever a graph holds."""
    return Graph(dot=None, nodes=[Node(**n) for n in graph["nodes"]],
                 edges=[Edge(**e) for e in graph["edges"]])


def refused(answer: Any) -> str:
    """The message of the BadResult Trace `answer` makes (failing if it makes another)."""
    trace = Trace.from_dict(answer)
    assert not trace.ok and trace.error is not None and trace.error.type == "BadResult", trace
    return trace.error.message


def test_a_lone_surrogate_in_the_output_keeps_the_trace(pool: WorkerPool) -> None:
    trace = pool.run("print(chr(0xd800))\nprint('after')\n")
    assert trace.ok, trace.error
    assert trace.stdout == "\ufffd\nafter\n"
    assert decode(trace_message(Trace(ok=True, stdout="a\udfffb"))).get("stdout") == "a\ufffdb"


def test_an_answer_over_the_cap_is_refused_before_any_of_it_is_read() -> None:
    # A run's own record thins itself to fit (tests/test_thin.py): only an answer no run
    # makes comes here, and the server reads nothing of it.
    server, child = socket.socketpair()
    with server, child:
        child.sendall(HEADER.pack(MAX_RESULT_BYTES + 1) + b"{}")
        size, update = header(server)
        with pytest.raises(TooLarge, match="over the 16,777,216 byte cap"):
            body(server, size, MAX_RESULT_BYTES)
        assert not update and server.recv(2) == b"{}"  # still in the socket: nothing read


def test_a_malformed_answer_is_a_clear_value_error_never_a_crash() -> None:
    for depth in (MAX_DEPTH + 1, 900, 100_000):  # 900: json reads it, the server would not
        with pytest.raises(BadAnswer, match="nested more than"):
            decode(b'{"a": ' + b"[" * depth + b"]" * depth + b"}")
    for payload, why in ((b"[1, 2]", "not a JSON object"), (b"{'a': 1}", "not JSON"),
                         (b'{"a": ' + b"9" * 5000 + b"}", "not JSON"), (b"", "not JSON")):
        with pytest.raises(BadAnswer, match=why):
            decode(payload)
    assert issubclass(BadAnswer, ValueError)
    assert decode(b'{"stdout": "caf\xe9"}') == {"stdout": "caf\ufffd"}  # not UTF-8
    cleaned = decode(b'{"stdout": "a\\ud800b", "w": [["\\udfff"]], "\\ud83d": "\\ud83d\\ude00"}')
    assert cleaned == {"stdout": "a\ufffdb", "w": [["\ufffd"]], "\ufffd": "😀"}
    json.dumps(cleaned).encode()  # it can be sent on
    assert Trace.from_json(b"[" * 5000 + b"]" * 5000).error.type == "BadResult"


def test_an_answer_is_read_without_the_cyclic_collector_which_comes_back_after() -> None:
    seen = []
    with pytest.raises(BadAnswer), uncollected():
        seen.append(gc.isenabled())
        decode(b"[not json")
    assert seen == [False] and gc.isenabled()
    gc.disable()  # held off by someone else: left so
    try:
        with uncollected():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_answer_of_millions_of_tiny_objects_is_refused_before_decoding() -> None:
    # 16 MiB of `{},` cost the server 4 s and 800 MB to decode; counted first, it costs ~10 ms.
    flood = b'{"ok": true, "a": [' + b"{}," * ((16 << 20) // 3 - 10) + b"{}]}"
    started = time.monotonic()
    with pytest.raises(BadAnswer, match="lists and objects"):
        decode(flood)
    assert time.monotonic() - started < 0.5
    legit = trace_message(execute("x = torch.ones(3, requires_grad=True)\n(x * 2).sum()"
                                  ".backward()\n"))
    assert legit.count(b"{") + legit.count(b"[") < MAX_CONTAINERS // 100
    assert decode(legit)["ok"] is True


def test_a_flood_of_warnings_and_a_huge_message_are_cut() -> None:
    started = time.monotonic()
    trace = Trace.from_dict(decode(json.dumps(forged(
        ok=False, warnings=["w"] * 26_728, notes=[NOTE] * 26_728,
        error={"type": "RuntimeError", "message": "m" * (15 << 20), "line": 1,
               "explanation": {"en": EVIL, "zh": EVIL}})).encode()))
    assert time.monotonic() - started < 2
    assert len(trace.warnings) == len(trace.notes) == MAX_LINES
    assert trace.error is not None and len(trace.error.message) == MAX_MESSAGE
    assert trace.error.explanation is None  # made anew here: the run's own is dropped


STEPS = Limits().steps + Limits().line_steps + 1  # statements, lines inside, where it stopped


def test_an_answer_of_the_wrong_shape_is_a_clear_bad_result() -> None:
    step = {"line": 1, "end_line": 1, "output": "", "variables": {}}
    tensor = hostile()["variables"]["x"]
    call = {"call": 1, "kind": "backward", "steps": [], "leaf_grads": [], "value": None,
            "roots": [], "root": None, "vector": None}
    for answer, why in (
            ([1], "the answer is not an object"),
            ({"stdout": "no ok"}, "has no ok"),
            (forged(ok="yes"), "ok is not true or false"),
            (forged(steps={"line": 1}), "steps is not a list"),
            (forged(steps=[step | {"line": "1"}]), "a step's line is not a whole number"),
            (forged(steps=[step] * (STEPS + 1)),
             f"steps is not a list of at most {STEPS:,} ({STEPS + 1:,} came)"),
            (forged(steps=[step | {"graph": 0}]), "graph is not the number of one of the 0"),
            (forged(steps=[step | {"rounds": [{"line": 2, "name": "i", "round": 1,
                                               "depth": MAX_NESTING + 1}]}]),
             f"rounds holds what is not a whole number ≤ {MAX_NESTING}"),
            (forged(steps=[step | {"reached": [3] * (MAX_NESTING + 1)}]),
             f"reached is not a list of at most {MAX_NESTING}"),
            (forged(steps=[step | {"reached": [-3]}]), "reached holds what is not a whole"),
            (forged(steps=[step | {"since": [0] * (MAX_NESTING + 1)}]),
             f"since is not a list of at most {MAX_NESTING}"),
            (forged(steps=[step | {"skipped": -1}]), "skipped is not a whole number ≥ 0"),
            (forged(backward=[call | {"calls": ["f"] * (MAX_NESTING + 1)}]),
             f"calls is not a list of at most {MAX_NESTING}"),
            (forged(variables={"x": {"values": 1}}), "a variable has no kind"),
            (forged(variables={"x": tensor | {"numel": -1}}), "numel is not a whole number ≥ 0"),
            (forged(variables={"x": {"kind": "tensor", "values": []}}), "has no device"),
            (forged(graphs=[{"nodes": [{"id": "a", "kind": "html", "label": "a"}],
                             "edges": []}]), "a node of a kind"),
            (forged(graphs=[{"dot": "", "nodes": [], "edges": [{"src": "a", "dst": "b",
                                                                "kind": "href"}]}]), "edge"),
            (forged(backward=[call] * (MAX_CALLS + 1)), f"at most {MAX_CALLS}"),
            (forged(backward=[{"call": 1}]), "a backward call has no kind"),
            (forged(backward=[call | {"retained": [{"node": "n2"}]}]),
             "a retained .grad written has no leaf"),
            (forged(unstepped=[{"loop": -1, "line": 1, "name": "while", "round": 3}]),
             "unstepped holds what is not a whole number ≥ 0"),
            (forged(unstepped=[{"loop": 0, "line": 1, "name": "while", "round": 0}]),
             "unstepped holds what is not a whole number ≥ 1"),
            (forged(unstepped=[{"loop": 0, "line": 1, "name": "while", "round": 3}] * 9),
             "at most 8"),
            (forged(unstepped=[{"loop": 0, "line": 1, "name": "while", "round": 3}] * 2),
             "unstepped names a loop twice"),
            (forged(error={"type": "E", "message": "m", "line": "one"}), "line is not"),
            (forged(error={"type": ["E"], "message": "m"}), "type is not text")):
        assert why in refused(answer), (why, refused(answer))
    assert "answer" in refused(forged(ok=1)) and "sandbox" not in refused(forged(ok=1))
    error = {"type": "DeviceUnavailable", "message": "no GPU", "line": None}
    read = Trace.from_dict(forged(ok=False, error=error)).error
    assert msgspec.to_builtins(read) == error | {"explanation": None}


def test_graphs_naming_earlier_nodes_by_id_are_held_to_the_dot_a_run_sends() -> None:
    # Graphs after the first name its 1,000 nodes by id alone, their DOT written anew: an
    # answer of 2.4 MiB made 40 MB of DOT (within 16 MiB, 3.6 GB).
    label = "a" * 2_000
    nodes = [{"id": f"n{i}", "kind": "backward", "label": label, "name": "MulBackward0"}
             for i in range(1_000)]
    graphs = [{"dot": "x", "nodes": nodes, "edges": []}, *(
        {"dot": "x", "nodes": [f"n{i}" for i in range(1_000)], "edges": []}
        for _ in range(19))]
    step = {"line": 1, "end_line": 1, "output": "", "variables": {}}
    answer = json.dumps(forged(graphs=graphs, steps=[step | {"graph": k} for k in range(20)]))
    started = time.process_time()
    error = Trace.from_json(answer.encode()).error
    assert time.process_time() - started < 2.0 and len(answer) < 3 << 20
    assert error is not None and error.type == "BadResult"
    assert f"more than {MAX_DOT:,} characters of DOT" in error.message
    assert MAX_DOT == 2 * MAX_RESULT_BYTES
    assert Trace.from_json(json.dumps(forged(graphs=graphs[:2], steps=[step | {"graph": 1}])
                                      ).encode()).error is None  # 4 MB: drawn


def test_unknown_fields_go_and_every_count_is_bounded() -> None:
    limits = Limits(output_chars=5_000, loop_iterations=1_000)  # a run's own caps, not others
    answer = hostile()
    answer["steps"][0]["variables"] |= {f"v{i}": {"kind": "number", "values": i}
                                        for i in range(2 * MAX_VARIABLES)}
    answer["steps"][0]["variables"]["big"] = {"kind": "str", "values": [[0.5] * 9999] * 99}
    answer["steps"] = [answer["steps"][0] | {"output": "o" * (limits.output_chars - 10)},
                       answer["steps"][0] | {"output": "p" * 100}]
    answer["stdout"] = "o" * (limits.output_chars * 3)
    answer["losses"] *= limits.loop_iterations + 1
    answer["backdoor"] = "javascript:alert(1)"
    trace = Trace.from_dict(answer, limits)
    assert trace.error is not None and trace.error.type == EVIL  # the answer is taken...
    assert not hasattr(trace, "backdoor")  # ...its fields not
    assert not hasattr(trace.variables["x"], "href")
    assert not hasattr(trace.graphs[0].nodes[0], "URL")
    assert len(trace.steps[0].variables) == MAX_VARIABLES
    assert len(trace.stdout) == limits.output_chars
    assert sum(len(s.output) for s in trace.steps) == limits.output_chars
    assert len(trace.losses) == limits.loop_iterations
    long = forged(unstepped=[{"loop": 0, "line": 1, "name": "w" * 10_000, "round": 3}])
    assert len(Trace.from_dict(long).unstepped[0].name) == MAX_NAME
    wide = forged(variables={"w": {"kind": "list", "values": [1.0] * 10**6},
                             "o": {"kind": "Point", "values": [[{"a": 1}]]}})
    assert Trace.from_dict(wide).variables["w"].values == "<values too many to show>"
    assert Trace.from_dict(wide).variables["o"].values.startswith("<values not shown")
    nodes = [{"id": f"n{i}", "kind": "backward", "label": "A", "name": "A"}
             for i in range(limits.graph_nodes + 2)]
    big = Trace.from_dict(forged(graphs=[{"dot": "", "nodes": nodes, "edges": []}]), limits)
    assert msgspec.to_builtins(big.graphs) == [{"dot": None, "nodes": [], "edges": [], "note": {
        "key": "graph_too_big", "values": {"nodes": limits.graph_nodes}}}]
    assert notes.said(big.graphs[0].note, "en") == (
        f"it has more than {limits.graph_nodes:,} nodes, so it is not drawn.")


def test_a_progress_message_is_checked_like_the_trace() -> None:
    summary = {"call": 3, "kind": "backward", "value": 0.5, "grad_norms": {"w": 1.0}}
    assert msgspec.to_builtins(progress(summary | {"html": "<img>"})) == summary
    with pytest.raises(BadResult, match="value is not a number"):
        progress(summary | {"value": "1e9 <img src=x>"})


def test_a_real_run_is_taken_exactly_as_it_was_sent() -> None:
    code = (MY_RELU + SEED + "w = torch.randn(3, requires_grad=True)\nv = w[1:] * 2\n"
            "v.backward(torch.ones(2))\nimport numpy as np\na = np.ones((2, 3))\ns = 'hi'\n")
    trace = execute(code)
    assert trace.ok and trace.graphs and trace.backward
    assert Trace.from_json(trace_message(trace)) == trace  # the run's DOT too, byte for byte


def test_a_non_finite_number_crosses_as_text_and_reads_back_as_itself() -> None:
    trace = execute("x = torch.tensor([1.0, float('nan')], requires_grad=True)\n"
                    "y = (x * float('inf')).sum()\ny.backward()\nz = float('-inf')\n")

    def not_json(token: str) -> None:
        raise AssertionError(f"{token} is not JSON")

    for text in (trace_message(trace), trace.to_json()):  # the answer, the public form
        json.loads(text, parse_constant=not_json)
        again = Trace.from_json(text)
        assert again.ok and json.loads(again.to_json()) == json.loads(trace.to_json())
        assert math.isnan(again.backward[0].value) and math.isnan(again.losses[0].value)
        assert again.losses[0].grad_norms == {"x": math.inf}
        assert again.variables["z"].values == "-inf"
    assert "value is not a number" in refused(forged(losses=[
        {"call": 1, "kind": "backward", "value": "NaN", "grad_norms": {}}]))


def test_a_node_unchanged_since_the_graph_before_crosses_as_its_id() -> None:
    trace = execute("x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\n")
    sent = json.loads(trace_message(trace))["graphs"]
    assert [len(g["nodes"]) for g in sent] == [len(g.nodes) for g in trace.graphs]
    assert sent[-1]["nodes"].count("t1") == 1  # x, as it was
    assert Trace.from_json(trace_message(trace)).graphs == trace.graphs
    first = sent[0] | {"nodes": msgspec.to_builtins(trace.graphs[0].nodes)}
    for nowhere in ("t999", "t1"):  # no such node; none in the graph before (the first)
        graphs = [first, sent[1] | {"nodes": [nowhere]}] if nowhere == "t999" else \
            [sent[1] | {"nodes": [nowhere]}]
        assert "the id of one of the graph before" in refused(forged(graphs=graphs))


def test_a_node_named_twice_in_one_graph_is_refused_at_once() -> None:
    # Each repeat of a node with a 2,000-character label wrote it into the DOT again: 40 graphs
    # of a 20,001-fold repeat made 1.5 GB of DOT from a 4.8 MB answer.
    trace = execute("x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\n")
    sent = json.loads(trace_message(trace))["graphs"]
    first = sent[0] | {"nodes": msgspec.to_builtins(trace.graphs[0].nodes)}
    node = first["nodes"][0]
    for repeated in ([node, node], [node, node["id"]], [node["id"]] * 20_001):
        graphs = [first, sent[1] | {"nodes": repeated}]
        started = time.monotonic()
        assert "nodes hold one id twice" in refused(forged(graphs=graphs))
        assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(("shape", "why"), [
    ([2**63], "not a whole number ≤ 9,223,372,036,854,775,807"),
    ([10**4000] * 2, "not a whole number ≤ 9,223,372,036,854,775,807"),
    ([2**32, 2**32], "holds more than 9,223,372,036,854,775,807 elements"),
    ([2**62] * 1000, "holds more than")])
def test_a_shape_no_tensor_has_is_refused(shape: list[int], why: str) -> None:
    # 1,000 sizes of 4,299 digits each took 40 s to multiply on the Backward page, and a
    # size past 4,300 digits cannot be written.
    answer = hostile()
    answer["backward"][0]["steps"][0]["grad_outputs"] = [gradient(shape=shape)]
    started = time.monotonic()
    assert why in refused(answer)
    assert time.monotonic() - started < 1.0
    answer["backward"][0]["steps"][0]["grad_outputs"] = [gradient(shape=[2**31, 2**31, 0])]
    assert Trace.from_dict(answer).ok is False and Trace.from_dict(answer).error.type != (
        "BadResult")  # empty, as a real tensor may be


def test_a_variable_described_as_the_step_before_did_crosses_as_null() -> None:
    # `a` shares `t`'s memory: writing through it changes `t` with no version bump, and the
    # description (not the tensor's identity or version) decides what is the same.
    trace = execute("import numpy as np\nt = torch.zeros(3)\nu = torch.ones(2)\n"
                    "a = t.numpy()\na[0] = 5.0\nprint(a)\n")
    sent = json.loads(trace_message(trace))
    assert [sorted(n for n, v in s["variables"].items() if v is not None)
            for s in sent["steps"]] == [[], ["t"], ["u"], ["a"], ["a", "t"], []]
    assert set(sent["variables"].values()) == {None}  # the end: the last step's, all of it
    again = Trace.from_json(trace_message(trace))
    assert again == trace and again.steps[4].variables["t"].values == [5.0, 0.0, 0.0]
    first = dict(sent["steps"][0], variables={"x": None})
    for steps, end in (([first], {}), (sent["steps"][:1] + [dict(sent["steps"][1], variables={
            "nowhere": None})], {}), ([], {"t": None})):
        message = refused(forged(steps=steps, variables=end))
        assert "null for one of the step before" in message, message


def test_what_is_the_same_is_judged_without_running_the_programs_code() -> None:
    # An object array's items are described by their type's name: comparing the items would
    # call their __eq__, which is the program's (it may print, or raise and lose the answer).
    trace = execute("class A:\n    def __eq__(self, other):\n        print('eq ran')\n"
                    "        raise ValueError('no')\n"
                    "a = np.empty(2, dtype=object)\na[0], a[1] = A(), A()\n"
                    "a[0], a[1] = A(), A()\nb = 1\n")
    assert trace.ok and trace.stdout == "", (trace.error, trace.stdout)
    sent = json.loads(trace_message(trace))  # no ValueError, nothing printed
    assert [sorted(n for n, v in s["variables"].items() if v is not None)
            for s in sent["steps"]] == [["A"], ["a"], ["a"], [], ["b"]]  # new A()s: as before
    assert trace.variables["a"].values == ["<A>", "<A>"]


def test_an_answer_is_written_without_running_a_subclass_s_own_methods() -> None:
    ran = []

    class Text(str):
        def __str__(self) -> str:
            ran.append("__str__")
            return "told"

    class Number(float):
        def __float__(self) -> float:
            ran.append("__float__")
            return 0.0

        def __gt__(self, other: object) -> bool:
            ran.append("__gt__")
            return True

    written = encode(finite({"names": [Text("x")], "values": [Number(1.5), Number("-inf")],
                             Text("key"): Number("nan"), "other": object()}))
    assert json.loads(written) == {"names": ["x"], "values": [1.5, "-inf"], "key": "nan",
                                   "other": "<object>"}
    assert ran == []


def test_the_runs_dot_is_never_taken_as_it_is() -> None:
    trace = Trace.from_dict(hostile())
    dot = trace.graphs[0].dot
    shown = EVIL.replace("\n", "\\n")  # as a label writes it (graph_view._quote)
    assert "URL" not in dot and "javascript" not in dot.replace(shown, "")
    assert "t1 -> n2 [style=dotted]" in dot and "fillcolor=lightblue" in dot
    assert trace.graphs[0].nodes[0].colour == "lightblue"
    assert trace.graphs[0].edges[0].attrs == {"style": "dotted"}  # no URL kept either
    honest = execute(SEED).graphs[-1]
    for sneaked in ('\tgraph [URL="javascript:alert(1)"]\n', '\tt1 [label=<<b>x</b>>]\n',
                    '\tt1 [label=x href="javascript:alert(1)"]\n', "\tedge [style=dotted]\n",
                    '\tt1 -> t2 [dir=back]\n', '\tnode [label=x]\n'):
        forgery = msgspec.to_builtins(honest) | {"dot": honest.dot.replace("}\n", sneaked + "}\n")}
        checked = Trace.from_dict(forged(graphs=[forgery])).graphs[0].dot
        assert checked == torchviz_dot(honest)  # written anew from the nodes and edges


def test_the_picture_takes_no_link_or_markup_from_the_run() -> None:
    evil = f'lightblue" {LINK} x="'
    graph = {"nodes": [
        {"id": "a", "kind": "leaf", "label": "<<table href='javascript:alert(2)'><tr><td>x"
         "</td></tr></table>>", "colour": evil, "names": ["x"], "shape": [1],
         "dtype": "float32", "device": "cpu", "requires_grad": True, "is_leaf": True,
         "grad_fn": None, "version": 0},
        {"id": 'b" URL="javascript:alert(3)', "kind": "backward", "name": "AddBackward0",
         "label": "AddBackward0", "saved": {}}],
        "edges": [{"src": "a", "dst": 'b" URL="javascript:alert(3)', "kind": "grad",
                   "attrs": {"URL": "javascript:alert(4)", "style": "dotted",
                             "href": "javascript:alert(5)", "dir": "both"}}]}
    dot = view(drawn(graph)).dot
    assert "style=dotted" in dot and "dir=" not in dot and "fillcolor=lightblue" in dot
    picture = svg(dot)
    assert not re.search(r"<a [^>]*href", picture)  # graphviz's <a> carries only tooltips
    assert "<table" not in picture and "&lt;&lt;table" in picture  # the label, as text


def test_a_label_ending_in_a_backslash_cannot_reopen_the_dot() -> None:
    # Quoted as graphviz's own `quote` does, `x\` would escape its closing quote, and the
    # next text (here the tooltip, which holds the op's name) would be read as DOT.
    graph = {"nodes": [{"id": "n1", "kind": "backward", "label": "x\\",
                        "name": " URL=<javascript:alert(1)> target=_top x=<", "saved": {}},
                       {"id": "n2", "kind": "backward", "label": "y\\\\\\", "name": "B",
                        "saved": {"a\\": "b\\"}}], "edges": [{"src": "n1", "dst": "n2",
                                                               "kind": "grad"}]}
    picture = svg(view(drawn(graph)).dot)
    assert not re.search(r"<a [^>]*href", picture) and ">x\\</text>" in picture


def test_a_graph_too_big_to_lay_out_fails_fast_and_once() -> None:
    nodes = [{"id": f"n{i}", "kind": "backward", "name": f"Op{i}Backward0",
              "label": f"Op{i}Backward0", "saved": {}} for i in range(18_000)]
    edges = [{"src": f"n{i}", "dst": f"n{i + 1}", "kind": "grad"} for i in range(17_999)]
    dot = view(drawn({"nodes": nodes, "edges": edges})).dot  # no chain of one op: none collapses
    for _ in range(2):
        started = time.monotonic()
        with pytest.raises(render.TooLarge, match="more than the") as raised:
            svg(dot)
        assert time.monotonic() - started < 1.0 and raised.value.statements > MAX_STATEMENTS
    slow = view(drawn({"nodes": nodes[:800], "edges": edges[:799]}), collapse=False).dot
    with pytest.raises(LayoutError, match="took more than"):
        svg(slow, timeout_s=0.01)  # as a hostile graph that keeps `dot` busy would
    started = time.monotonic()
    with pytest.raises(LayoutError, match="took more than"):
        svg(slow)  # failed once: not laid out again, on any rerun
    assert time.monotonic() - started < 0.1


TANGLE = ("x = torch.ones(1, requires_grad=True)\nxs = [x]\nfor i in range({n}):\n"
          "    xs.append(torch.stack(xs).sum(0))\ny = xs[-1]\n")  # each sums all before it


def test_a_tangled_graph_is_refused_before_dot_runs() -> None:
    # 862 edges among 83 nodes kept `dot` busy past 40 s; refused at once, with the reason
    # (and the list's 41 tensors, each drawn with its edge: 901 among 122).
    dot = view(execute(TANGLE.format(n=40)).graph).dot
    started = time.monotonic()
    with pytest.raises(TooTangled, match="901 edges between 122 nodes") as raised:
        svg(dot)
    assert time.monotonic() - started < 0.5 and raised.value.nodes == 122
    assert "<svg" in svg(view(execute(TANGLE.format(n=15)).graph).dot)  # a smaller one is drawn


def test_a_graph_of_long_edges_is_refused_before_dot_runs() -> None:
    # Sparse, but each node also adds the one 1,500 before it: `dot` would make millions of
    # nodes along those edges (past 30 s and 3.6 GB). A loop reusing `x` 50 times is drawn.
    code = ("x = torch.ones(1, requires_grad=True)\nxs = [x]\nfor i in range(1, 3000):\n"
            "    xs.append(xs[-1] + xs[max(0, i - 1500)])\ny = xs[-1]\n")
    started = time.monotonic()
    with pytest.raises(TooTangled, match="crossing 3,371,251 ranks"):
        svg(view(execute(code).graph).dot)
    assert time.monotonic() - started < 5
    reuse = ("x = torch.ones(3, requires_grad=True)\ny = x\nfor i in range(50):\n"
             "    y = (y * 1.01 + x).sin()\nout = y.sum()\n")
    assert "<svg" in svg(view(execute(reuse).graph).dot)


def test_a_deep_stack_of_layers_is_not_taken_for_a_tangle() -> None:
    # Each layer's weight and bias lead only to their layer, and `dot` puts them beside it:
    # counted from the top instead, 100 layers crossed 19,900 ranks and were refused.
    code = ("import torch.nn as nn\nlayers = []\nfor i in range(100):\n"
            "    layers += [nn.Linear(4, 4), nn.Tanh()]\nnet = nn.Sequential(*layers)\n"
            "y = net(torch.ones(1, 4)).sum()\n")
    trace = execute(code, limits=Limits(time_s=60))
    assert trace.ok, trace.error
    assert svg(view(trace.graph).dot).count("AddmmBackward0") >= 100


def test_a_tensor_of_a_thousand_names_is_drawn_naming_the_first() -> None:
    # graphviz draws no label past 16,384 characters: the whole graph was left undrawn.
    aliases = " = ".join(f"name_{k:04d}" for k in range(1_000))
    trace = execute(f"x = torch.ones(1, requires_grad=True)\n{aliases} = x * 2\n")
    picture = svg(view(trace.graph).dot)
    assert "name_0000 = name_0001" in picture and "… (+9" in picture
    assert "name_0999" not in picture


def test_labels_and_ids_cannot_pass_edges_off_as_nodes() -> None:
    # Node statements hidden in labels (a line break, a tab, then `id [label=`) do not count
    # as nodes, and a run's node id is a plain name: the tangle is refused all the same.
    graph = execute(TANGLE.format(n=40)).graph
    fake = "\n\tfake [label=x]" * 200
    graph.nodes = [replace(n, label=n.label + fake) for n in graph.nodes]
    with pytest.raises(TooTangled):
        svg(view(graph).dot)
    node = msgspec.to_builtins(graph.nodes[0]) | {"id": 'a [label=x] -> b'}
    answer = forged(graphs=[{"dot": "", "nodes": [node], "edges": []}])
    assert "node id" in refused(answer)


def test_a_program_cannot_make_the_server_list_a_million_gpus() -> None:
    def run(code: str, device: str) -> Trace:
        return Trace.from_dict(forged(variables={"count": {"kind": "number", "type": "int",
                                                           "values": 10**12}}))
    assert len(cuda_devices(run)) == MAX_GPUS


def test_names_a_page_writes_many_times_are_cut_short() -> None:
    """Names (of variables, types, ops, loops, functions and a tensor's) are cut to MAX_NAME:
    pages write each many times over (a gradient's target, a hover line, a table row), and a
    name of 2,000 characters, a thousand times, made seconds of markup at each rerun."""
    long = "n" * 5_000
    one = gradient(values=[1.0], shape=[1])
    call = {"call": 1, "kind": "backward", "value": 1.0, "roots": ["t0"], "root": "t0",
            "vector": None, "rounds": [{"line": 1, "name": long, "round": 1}], "calls": [long],
            "leaf_grads": [{"node": "n0", "leaf": "t0", "names": [long], "after": 1,
                            "grad": one}],
            "steps": [{"node": "n0", "name": long, "grad_outputs": [one], "grad_inputs": []}]}
    answer = forged(
        variables={long: {"kind": long, "type": long, "values": 1}},
        graphs=[{"dot": "x", "edges": [], "nodes": [
            {"id": "n0", "kind": "backward", "label": long, "name": long},
            {"id": "t0", "kind": "output", "label": "t", "names": [long] * 3, "shape": [1],
             "dtype": "torch.float32", "device": "cpu", "requires_grad": True,
             "is_leaf": False}]}],
        steps=[{"line": 1, "end_line": 1, "output": "", "variables": {long: {
                    "kind": "number", "values": 1}},
                "locals": {long: {"kind": "number", "values": 1}}, "calls": [long],
                "rounds": [{"line": 1, "name": long, "round": 1}]}],
        backward=[call])
    trace = Trace.from_dict(answer)
    assert trace.error is None, trace.error
    step, node, tensor = trace.steps[0], *trace.graphs[0].nodes
    (name, variable), = trace.variables.items()
    assert {len(name), len(variable.kind), len(variable.type)} == {MAX_NAME}
    assert [len(n) for n in (*step.variables, *step.locals, *step.calls)] == [MAX_NAME] * 3
    assert len(step.rounds[0].name) == len(trace.backward[0].rounds[0].name) == MAX_NAME
    assert len(node.name) == MAX_NAME and len(node.label) == MAX_LINE  # a label is drawn once
    assert [len(n) for n in tensor.names] == [MAX_NAME] * 3
    assert len(trace.backward[0].steps[0].name) == len(trace.backward[0].calls[0]) == MAX_NAME
    assert [len(n) for n in trace.backward[0].leaf_grads[0].names] == [MAX_NAME]
