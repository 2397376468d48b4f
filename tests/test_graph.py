"""The autograd graph: the same picture as torchviz, stable ids, views of it, layout."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
import torch
from torchviz import make_dot

from explorer.record.execute import execute
from explorer.record.graph import Ids, record
from explorer.trace.graph_view import (
    COLLAPSE_ABOVE,
    checked_dot,
    modules,
    named_outputs,
    node_lines,
    outputs,
    view,
)
from explorer.views.graph_page import statement_added
from explorer.views.numbers import number
from explorer.views.present import node_values
from explorer.views.render import LayoutError, svg
from tests.programs import MY_RELU
from tests.programs import SEED as PLAIN_SEED

SEED = "import torch\n" + PLAIN_SEED + "print(x.grad)\n"


class _ReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, i: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(i)
        return i.clamp(min=0)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
        (i,) = ctx.saved_tensors
        return g * (i > 0)


def _programs() -> dict[str, dict[str, Any]]:
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    seed = {"x": x, "y": y, "z": z, "out": z.mean()}
    w = torch.randn(3, 2, requires_grad=True)
    h = torch.randn(4, 3).mm(w)
    e = _ReLU.apply(h).exp()
    v, t, c = e[:, 0], e.t(), torch.cat([e, e])
    views = {"w": w, "h": h, "e": e, "v": v, "t": t, "c": c, "loss": c.sum() + v.sum()}
    a = torch.randn(3, requires_grad=True)
    aliases = {"a": a, "b": a, "q": (a * 2).sigmoid(), "k": torch.ones(3)}
    return {"seed": seed, "custom-views-cat": views, "aliases": aliases}


def _normalise(dot: str) -> str:
    """Node names replaced by their order of first appearance."""
    names: dict[str, str] = {}
    return re.sub(r'(?m)(?<=^\t)(?:"[^"]+"|\w+)|(?<=-> )(?:"[^"]+"|\w+)',
                  lambda m: names.setdefault(m[0], f"N{len(names)}"), dot)


@pytest.mark.parametrize("name", list(_programs()))
def test_the_dot_is_torchvizs_own_picture(name: str) -> None:
    variables = _programs()[name]
    ours = record(variables, Ids(), 20_000)
    assert ours is not None
    tensors = {id(v): v for v in variables.values()
               if isinstance(v, torch.Tensor) and (v.requires_grad or v.grad_fn is not None)}
    names = {key: " = ".join(n for n, v in variables.items() if v is t)
             for key, t in tensors.items()}
    fns = _fns(tensors.values())  # alive through make_dot: its ids are theirs
    theirs = make_dot(tuple(tensors.values()), params={names[k]: t for k, t in tensors.items()},
                      show_attrs=True, show_saved=True)
    expected = _variables_kept(_escaped(theirs.source), tensors, fns)
    assert expected != _escaped(theirs.source)  # each program has a variable make_dot redraws
    assert _normalise(ours.dot) == _normalise(expected)
    assert _drawn(ours.dot) == _drawn(expected)  # and the same picture


def _escaped(dot: str) -> str:
    """torchviz breaks a label's lines with a newline in the string; the explorer writes
    graphviz's `\\n` for it, so that no DOT string holds a control character
    (graph_view._quote). The same picture."""
    return re.sub(r'"[^"]*"', lambda m: m[0].replace("\n", "\\n"), dot)


def _fns(roots: Any) -> dict[str, Any]:
    """str(id(node)) -> node, for every backward node behind `roots` (as make_dot names them)."""
    found: dict[str, Any] = {}
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if str(id(fn)) not in found:
            found[str(id(fn))] = fn
            stack.extend(u for u, _ in fn.next_functions if u is not None)
    return found


def _variables_kept(theirs: str, named: dict[int, torch.Tensor], fns: dict[str, Any]) -> str:
    """make_dot's DOT (`theirs`, escaped) with exactly the explorer's deviation: where make_dot
    draws a variable as an orange saved tensor, that statement is left out and the saved edge
    goes to the variable's own node; and a named leaf that requires grad is blue where
    make_dot first draws it green as an output. A variable is a leaf that requires grad or a
    named tensor: the same object (make_dot redraws its node), or a saved output unpacked
    afresh (make_dot gives it a node of its own) whose `grad_fn` is the saving node and
    `output_nr` a named tensor's with that `grad_fn`."""
    variables = {str(key) for key in named}
    leaves = {str(key) for key, t in named.items() if t.is_leaf} | set(
        re.findall(r'(?m)^\t(\d+) \[.*fillcolor=lightblue\]$', theirs))
    made = {(str(id(t.grad_fn)), t.output_nr): str(key) for key, t in named.items()
            if t.grad_fn is not None}
    owner = {saved: fn for fn, saved in re.findall(r'(?m)^\t(\d+) -> (\d+) \[dir=none\]$',
                                                   theirs)}
    orange = dict(re.findall(r'(?m)^\t(\d+) \[label="([^"]*?)\\n [^"]*" fillcolor=orange\]$',
                             theirs))
    alias: dict[str, str] = {}  # a saved output's node of its own -> the named tensor's node
    for node, attr in orange.items():
        fn = fns.get(owner.get(node, ""))
        if fn is not None and node not in leaves | variables:
            name, _, index = attr.partition("[")
            value = getattr(fn, f"_saved_{name}")
            value = value[int(index.rstrip("]"))] if index else value
            if value.grad_fn is fn and (owner[node], value.output_nr) in made:
                alias[node] = made[owner[node], value.output_nr]
    dropped = set(orange) & (leaves | variables | set(alias))
    lines = []
    for line in theirs.splitlines(keepends=True):
        node = re.match(r'\t(\d+) \[label=".*" fillcolor=(\w+)\]$', line)
        if node and node[2] == "orange" and node[1] in dropped:
            continue
        if node and node[1] in leaves and node[2] == "darkolivegreen1":
            line = line.replace("darkolivegreen1", "lightblue")
        lines.append(re.sub(r'(?<=-> )(\d+)', lambda m: alias.get(m[1], m[1]), line))
    return "".join(lines)


def test_the_seed_graph_has_exactly_pytorchs_nodes_named_after_the_variables() -> None:
    trace = execute(SEED)
    graph = trace.graph
    backward = Counter(n.name for n in graph.nodes if n.kind == "backward")
    assert backward == {"MeanBackward0": 1, "MulBackward0": 2, "AddBackward0": 1,
                        "AccumulateGrad": 1}
    leaves = [n for n in graph.nodes if n.kind == "leaf"]
    assert [n.names for n in leaves] == [["x"]]
    assert leaves[0].requires_grad and leaves[0].is_leaf
    assert {name for n in outputs(graph) for name in n.names} == {"x", "y", "z", "out"}
    assert r'label="out\n ()"' in graph.dot


def test_node_ids_are_stable_from_step_to_step() -> None:
    trace = execute(SEED)
    first = trace.graphs[trace.steps[2].graph]  # after `y = x + 2`
    ids = {n.name if n.kind == "backward" else n.label: n.id
           for n in first.nodes}
    last = {n.name if n.kind == "backward" else n.label: n.id
            for n in trace.graph.nodes}
    assert ids["AddBackward0"] == last["AddBackward0"]
    assert ids["AccumulateGrad"] == last["AccumulateGrad"]
    assert len({s.graph for s in trace.steps[1:]}) == len(trace.graphs)  # one per change


def test_the_graph_grows_statement_by_statement() -> None:
    trace = execute(SEED)
    sizes = [0 if s.graph is None else len(trace.graphs[s.graph].nodes) for s in trace.steps]
    assert sizes[0] == 0  # `import torch`
    assert sizes[1:5] == sorted(sizes[1:5]) and sizes[1] < sizes[4]


def test_a_custom_function_is_its_own_node_with_its_saved_tensor() -> None:
    code = MY_RELU + "x = torch.randn(4, requires_grad=True)\nh = x * 2\ny = MyReLU.apply(h)\n"
    graph = execute(code).graph
    node = next(n for n in graph.nodes if n.kind == "backward" and n.custom)
    assert node.name == "MyReLUBackward"
    assert node.saved == {"saved_tensors[0]": "h: tensor(4,) float32"}
    saved = [e.src for e in graph.edges if e.dst == node.id and e.kind == "saved"]
    h = next(n for n in graph.nodes if n.names == ["h"])
    assert saved == [h.id] and h.kind == "output"  # h itself, green, not an orange copy


def test_after_backward_freed_buffers_are_described_where_torchviz_raises() -> None:
    x = torch.randn(4, requires_grad=True)
    s = (_ReLU.apply(x * 2) ** 2).sum()
    s.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        make_dot(s)
    code = MY_RELU + ("x = torch.randn(4, requires_grad=True)\ny = MyReLU.apply(x * 2)\n"
                      "s = (y * y).sum()\ns.backward()\n")
    trace = execute(code)
    assert trace.ok, trace.error
    saved = {k: v for n in trace.graph.nodes if n.kind == "backward"
             for k, v in n.saved.items()}
    assert saved["saved_tensors"] == "saved values freed by backward()"
    assert saved["self"] == "saved values freed by backward()"  # PowBackward0's


def test_detach_and_no_grad_leave_tensors_out_of_the_graph() -> None:
    code = ("x = torch.ones(3, requires_grad=True)\nd = (x * 2).detach()\n"
            "with torch.no_grad():\n    n = x * 3\ny = x * 4\n")
    graph = execute(code).graph
    named = {name for node in graph.nodes for name in node.names or ()}
    assert named == {"x", "y"}


def test_in_place_ops_bump_the_version_shown_in_the_graph() -> None:
    code = ("x = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y.sigmoid()\n"
            "y.add_(1)\n")
    trace = execute(code)
    before = trace.graphs[trace.steps[2].graph]
    after = trace.graph
    version = {n.names[0]: n.version for n in after.nodes if n.names}
    assert version["y"] == 1
    assert {n.names[0]: n.version for n in before.nodes if n.names}["y"] == 0


def test_define_by_run_the_graph_length_follows_the_data() -> None:
    code = ("x = torch.randn(3, requires_grad=True)\ny = x * 2\nn = 1\n"
            "while y.data.norm() < 1000:\n    y = y * 2\n    n += 1\n")
    for seed in (0, 1, 2):
        trace = execute(code, seed=seed)
        muls = sum(n.name == "MulBackward0" for n in trace.graph.nodes)
        assert muls == trace.variables["n"].values


def test_a_3000_op_loop_is_drawn_where_torchviz_overflows() -> None:
    code = ("x = torch.ones(1, requires_grad=True)\ny = x\nfor i in range(3000):\n"
            "    y = y * 1.001\n")
    trace = execute(code)
    assert trace.ok
    graph = trace.graph
    assert sum(n.name == "MulBackward0" for n in graph.nodes) == 3000
    y = torch.ones(1, requires_grad=True)
    for _ in range(3000):
        y = y * 1.001
    with pytest.raises(RecursionError):
        make_dot(y)
    full = view(graph, collapse=False)
    assert len(full.nodes) == len(graph.nodes)
    small = view(graph)
    assert len(graph.nodes) > COLLAPSE_ABOVE
    assert [len(m) for m in small.groups.values()] == [3000]
    assert len(small.nodes) < 10
    assert "MulBackward0 × 3000" in svg(small.dot)


def test_a_view_keeps_what_leads_to_the_chosen_output() -> None:
    code = "a = torch.ones(2, requires_grad=True)\nb = a * 3\nc = b.exp()\nd = a + 1\n"
    graph = execute(code).graph
    node_of = {name: n.id for n in outputs(graph) for name in n.names}
    only_c = view(graph, [node_of["c"]])
    names = {n.name for n in only_c.nodes.values()}
    assert {"ExpBackward0", "MulBackward0", "AccumulateGrad"} <= names
    assert "AddBackward0" not in names and only_c.hidden > 0
    assert any(n.kind == "saved" for n in only_c.nodes.values())
    plain = view(graph, [node_of["c"]], show_saved=False, show_attrs=False)
    assert not any(n.kind == "saved" for n in plain.nodes.values())
    assert "----" not in plain.dot and "----" in only_c.dot


def test_a_view_of_an_output_leaves_out_the_later_operations_that_saved_it() -> None:
    code = "x = torch.ones(2, requires_grad=True)\ny = x * 3\nz = (y * y).sum()\n"
    graph = execute(code).graph
    node_of = {name: n.id for n in outputs(graph) for name in n.names}
    only_y = view(graph, [node_of["y"]])
    assert sorted(n.name for n in only_y.nodes.values() if n.kind == "backward") == [
        "AccumulateGrad", "MulBackward0"]  # not y * y's MulBackward0, which saved y
    assert {"SumBackward0", "MulBackward0"} <= {
        n.name for n in view(graph, [node_of["z"]]).nodes.values()}


def test_svg_layout_with_graphviz_and_a_clear_error_for_bad_dot() -> None:
    picture = svg(view(execute(SEED).graph).dot)
    assert picture.lstrip().startswith("<?xml") and "MeanBackward0" in picture
    with pytest.raises(LayoutError):
        svg("digraph { this is not dot")


def test_the_cli_json_carries_the_graph_with_torchvizs_node_set(tmp_path: Any) -> None:
    program = tmp_path / "seed.py"
    program.write_text(SEED)
    done = subprocess.run([sys.executable, "-m", "explorer", "run", str(program), "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    graph = json.loads(done.stdout)["graph"]
    in_dot = set(re.findall(r"(?m)^\t(\w+) \[", graph["dot"])) - {"graph", "node"}
    assert in_dot == {n["id"] for n in graph["nodes"]}
    assert all(e["src"] in in_dot and e["dst"] in in_dot for e in graph["edges"])


def test_each_node_knows_the_statement_that_made_it() -> None:
    trace = execute(PLAIN_SEED)  # x on line 1, y = x + 2, z = y * y * 3, out = z.mean()
    lines = node_lines(trace)
    graph = trace.graphs[trace.steps[-1].graph]
    named = named_outputs(graph)
    assert {name: lines[named[name]] for name in "xyz"} == {"x": (1, 1), "y": (2, 2),
                                                             "z": (3, 3)}
    made = Counter((lines[n.id][0], n.name) for n in graph.nodes
                   if n.kind == "backward")
    assert made == {(2, "AddBackward0"): 1, (2, "AccumulateGrad"): 1, (3, "MulBackward0"): 2,
                    (4, "MeanBackward0"): 1}


MODEL = """model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                            torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Tanh()))
x = torch.randn(5, 3)
loss = model(x).pow(2).mean()
loss.backward()
"""


def test_a_modules_parameters_are_named_as_torchviz_names_them() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    out = model(torch.randn(2, 3)).sum()
    ours = record({"model": model, "out": out}, Ids(), 20_000)
    assert ours is not None
    named = {f"model.{n}": p for n, p in model.named_parameters()}
    theirs = make_dot(out, params={"out": out} | named, show_attrs=True, show_saved=True)
    # No parameter is saved by a node, so no deviation (`_variables_kept`).
    assert _normalise(ours.dot) == _normalise(_escaped(theirs.source))
    assert _drawn(ours.dot) == _drawn(theirs.source)  # and the same picture


def _drawn(dot: str) -> str:
    """The SVG a new `dot` draws, with node names replaced by their order of appearance."""
    picture = subprocess.run(["dot", "-Tsvg"], input=_normalise(dot).encode(),
                             capture_output=True, check=True).stdout.decode()
    assert picture.count("<g id=\"node") >= 3
    return picture


def test_each_node_names_the_module_whose_call_made_it() -> None:
    graph = execute(MODEL).graph
    made = Counter((n.module, n.name) for n in graph.nodes
                   if n.kind == "backward")
    assert made == {("model.0", "AddmmBackward0"): 1, ("model.0", "TBackward0"): 1,
                    ("model.0", "AccumulateGrad"): 2, ("model.1", "ReluBackward0"): 1,
                    ("model.2.0", "AddmmBackward0"): 1, ("model.2.0", "TBackward0"): 1,
                    ("model.2.0", "AccumulateGrad"): 2, ("model.2.1", "TanhBackward0"): 1,
                    (None, "PowBackward0"): 1, (None, "MeanBackward0"): 1}
    leaves = {n.label.split("\n")[0]: n.module for n in graph.nodes
              if n.kind == "leaf"}
    assert leaves == {"model.0.weight": "model.0", "model.0.bias": "model.0",
                      "model.2.0.weight": "model.2.0", "model.2.0.bias": "model.2.0"}
    assert modules(graph) == ["model", "model.0", "model.1", "model.2", "model.2.0",
                              "model.2.1"]


def test_a_module_no_variable_reaches_lends_its_nodes_to_the_named_one_around_it() -> None:
    code = ("class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = torch.nn.Linear(2, 2)\n    def forward(self, x):\n"
            "        return torch.nn.Tanh()(self.fc(x)) * 2\n"
            "net = Net()\nout = net(torch.ones(1, 2)).sum()\n")
    graph = execute(code).graph
    made = {n.name: n.module for n in graph.nodes if n.kind == "backward"}
    assert made["TanhBackward0"] == "net" and made["MulBackward0"] == "net"
    assert made["AddmmBackward0"] == "net.fc" and made["SumBackward0"] is None


def test_each_module_is_a_box_around_its_nodes_nested_as_the_modules_are() -> None:
    graph = execute(MODEL).graph
    shown = view(graph, show_saved=False)
    laid = json.loads(subprocess.run(["dot", "-Tjson0"], input=shown.dot.encode(),
                                     capture_output=True, check=True).stdout)
    boxes = {o["name"].removeprefix("cluster_"): [float(v) for v in o["bb"].split(",")]
             for o in laid["objects"] if o["name"].startswith("cluster_")}
    assert sorted(boxes) == modules(graph)
    centres = {o["name"]: tuple(map(float, o["pos"].split(","))) for o in laid["objects"]
               if "pos" in o}

    def inside(point: tuple[float, float], box: list[float]) -> bool:
        return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]

    for node in shown.nodes.values():
        module = node.module
        for path, box in boxes.items():
            within = module is not None and (module == path or module.startswith(path + "."))
            assert inside(centres[node.id], box) == within, (node.label, path)


def test_a_folded_module_is_one_node_in_the_module_around_it() -> None:
    graph = execute(MODEL).graph
    whole = view(graph)
    folded = view(graph, fold=("model.2", "model.2.0"))
    (gid, members), = folded.groups.items()
    inner = {i for i, n in whole.nodes.items() if (n.module or "").startswith("model.2.")}
    assert set(members) == inner and not inner & set(folded.nodes)
    node = folded.nodes[gid]
    assert node.module == "model" and node.label == f"model.2\n({len(inner)} nodes, folded)"
    assert "cluster_model.2" not in folded.dot and "cluster_model.0" in folded.dot
    into = {e.src for e in graph.edges if e.dst in inner and e.src not in inner}
    assert into and all(f"\t{src} -> {gid}\n" in folded.dot for src in into)
    svg(folded.dot)  # graphviz draws it


def test_numbers_under_the_labels_are_the_variables_values_and_grads() -> None:
    trace = execute(SEED)
    step = trace.steps[-1]
    graph = trace.graphs[step.graph]
    named = named_outputs(graph)
    notes = node_values(graph, step.variables)
    assert notes == {named["x"]: "= 1.\ngrad 4.5000", named["y"]: "= 3.", named["z"]: "= 27.",
                     named["out"]: "= 27."}
    dot = view(graph, notes=notes).dot
    assert r'label="x\n (2, 2)\n= 1.\ngrad 4.5000"' in dot
    before = trace.steps[-3]  # before backward: no .grad yet
    assert node_values(trace.graphs[before.graph], before.variables)[named["x"]] == "= 1."


def test_a_tensor_too_big_to_send_whole_is_written_as_its_shape_and_norm() -> None:
    trace = execute("w = torch.linspace(-1, 1, 3000).reshape(60, 50).requires_grad_()\n"
                    "loss = (w * w).sum()\nloss.backward()\n")
    step = trace.steps[-1]
    info = step.variables["w"]
    assert info.truncated and len(sum(info.values, [])) < 3000
    w = torch.linspace(-1, 1, 3000)
    # The norms of all 3,000 values and of the .grad (2w), not of the leading block sent.
    assert info.norm == pytest.approx(float(w.double().norm()))
    assert info.grad_norm == pytest.approx(float(2 * w.double().norm()))
    notes = node_values(trace.graphs[step.graph], step.variables)
    named = named_outputs(trace.graphs[step.graph])
    assert notes[named["w"]] == (f"= 60×50 ‖{number(info.norm)}‖\n"
                                 f"grad 60×50 ‖{number(info.grad_norm)}‖")
    assert notes[named["loss"]] == f"= {number(float((w * w).sum()))}"
    assert step.variables["loss"].norm is None  # sent whole: no norm needed


def test_the_nodes_a_statement_added_are_outlined() -> None:
    trace = execute(PLAIN_SEED)  # y = x + 2 on line 2, z = y * y * 3 on line 3
    graphs = [trace.graphs[s.graph] if s.graph is not None else None for s in trace.steps]
    new = statement_added(trace, 2)
    kinds = Counter(n.name or n.kind for n in graphs[2].nodes if n.id in new)
    assert kinds == {"MulBackward0": 2, "output": 1, "saved": 1}  # and y * y, saved by `* 3`
    dot = view(graphs[2], marked=new).dot
    assert dot.count(' color="#f76707"') == dot.count('penwidth=2.5') == 4
    # An outline only: each keeps its own fill (graphviz fills with `color` when none is given).
    marked = re.findall(r'(?m)^\t(\w+) \[.*color="#f76707" fillcolor=(\w+)', dot)
    kind = {n.id: n.kind for n in graphs[2].nodes}
    assert sorted((kind[i], fill) for i, fill in marked) == [
        ("backward", "lightgrey"), ("backward", "lightgrey"), ("output", "darkolivegreen1"),
        ("saved", "orange")]
    assert statement_added(trace, 0) == {n.id for n in graphs[0].nodes}


ISSUE_31 = """x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor([1.5, 2.0, -0.5], requires_grad=True)
y = x * w
t = torch.tanh(y)
z = t + x ** 2
out = z.sum()
"""


def test_a_variable_a_node_saves_keeps_its_own_node_whatever_the_walk_meets_first() -> None:
    variables: dict[str, Any] = {"torch": torch}
    exec(ISSUE_31, variables)  # the test's own program, in plain PyTorch
    tensors = {k: v for k, v in variables.items() if isinstance(v, torch.Tensor)}
    drawn = []
    for order in (list(tensors), list(reversed(tensors))):
        graph = record({k: tensors[k] for k in order}, Ids(), 20_000)
        assert graph is not None
        nodes = {n.id: n for n in graph.nodes}
        drawn.append(sorted((n.kind, n.label) for n in nodes.values()))
        named = named_outputs(graph)
        assert {nodes[named[k]].kind for k in "xw"} == {"leaf"}
        assert {nodes[named[k]].kind for k in ("y", "t", "z", "out")} == {"output"}
        assert not [n for n in nodes.values() if n.kind == "saved"]  # all saved are variables
        saved = {(nodes[e.src].name, nodes[e.dst].label.split("\n")[0])
                 for e in graph.edges if e.kind == "saved"}
        # MulBackward0 saved x and w, PowBackward0 x, TanhBackward0 its result: t itself.
        assert saved == {("MulBackward0", "x"), ("MulBackward0", "w"), ("PowBackward0", "x"),
                         ("TanhBackward0", "t")}
        mul = next(n for n in nodes.values() if n.name == "MulBackward0")
        assert mul.saved == {"other": "w: tensor(3,) float32", "self": "x: tensor(3,) float32"}
        backward_page = view(graph, [named["out"]], show_saved=False, show_attrs=False)
        assert {backward_page.nodes[named[k]].kind for k in "xw"} == {"leaf"}
        assert "dir=none" not in backward_page.dot
        assert _kept_as_written(graph)
    assert drawn[0] == drawn[1]


def _kept_as_written(graph: dict[str, Any]) -> bool:
    """The run's DOT is in torchviz's form: the server keeps it as it is."""
    return checked_dot(graph.dot, graph) == graph.dot


def test_the_server_writes_a_graph_anew_sized_as_torchviz_sizes_it() -> None:
    # The server may not import torchviz (it imports PyTorch): explorer.trace.graph_view writes
    # a run's DOT anew, statement by statement, sized as torchviz's own resize_graph sized it,
    # below its 12-inch floor and above.
    for ops in (2, 100):
        graph = execute(f"x = torch.ones(1, requires_grad=True)\ny = x\nfor _ in range({ops}):\n"
                        "    y = y * 2\n").graphs[-1]
        assert checked_dot(graph.dot, graph) == graph.dot  # the run's, as torchviz wrote it
        size = float(re.search(r'size="([\d.]+),', graph.dot)[1])
        assert (size == 12) == (ops == 2)
