"""The Backward page names what it shows as the program does: a module's parameters by their
paths (`net.0.weight`), never by the ids the picture is drawn with (`t11`, `n10`)."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from explorer.record.execute import execute
from explorer.trace.graph_view import SHOWN_NAME, named_outputs, shown_name
from explorer.trace.schema import Node
from tests.test_figure import MLP

PARAMETERS = {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}


def _text(at: AppTest) -> str:
    """Everything the page says in markdown, captions, code blocks, alerts and tables."""
    parts = [e.value for kind in ("markdown", "caption", "code", "error", "info", "warning")
             for e in getattr(at, kind)]
    parts += [table.value.to_string() for table in at.table]
    return "\n".join(str(p) for p in parts)


def test_the_step_panel_names_a_modules_parameters_by_their_paths() -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60).run()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = MLP
    at.button(key="backward.run").click().run()
    assert not at.exception
    said = ""
    for _ in range(40):  # every engine step, to the last
        said += _text(at)
        if "step 11 of 11" in at.get("plotly_chart")[0].proto.spec:
            break
        at.button(key="backward.replay.1.forward").click().run()
    assert not re.findall(r"(?<![\w.])[tn]\d+\b", said)
    leaves = {name.replace("\\", "") for name in at.table[-1].value.iloc[:, 0]}  # markdown
    assert leaves == PARAMETERS, leaves
    assert "→ AccumulateGrad" in said


def test_a_node_is_named_by_the_program_or_by_what_its_picture_writes() -> None:
    leaf = Node(id="t11", kind="leaf", label="net.2.bias\n (2)")
    named = Node(id="t1", kind="output", label="loss\n ()", names=["loss"])
    op = Node(id="n10", kind="backward", label="AccumulateGrad", name="AccumulateGrad")
    nameless = Node(id="t5", kind="saved", label="\n (3)")
    assert [shown_name(n) for n in (leaf, named, op, nameless)] == [
        "net.2.bias", "loss", "AccumulateGrad", None]
    many = Node(id="t2", kind="output", label="a\n ()", names=[f"a{i}" for i in range(1000)])
    shown = shown_name(many)
    assert shown is not None and len(shown) == SHOWN_NAME and shown.startswith("a0, a1, a2, ")
    assert shown.endswith("…")


def test_a_backward_call_inside_a_function_names_its_graph_as_the_functions_steps_do() -> None:
    """`loss.backward()` in a function of the program's: its root is the function's `loss`
    (`train_step.loss` once a global has that name, as the steps there say), never `root 0`."""
    trace = execute("x = torch.randn(4, 3)\nw = torch.randn(3, 2, requires_grad=True)\n"
                    "def train_step(w, x):\n    h = torch.tanh(x @ w)\n"
                    "    loss = (h * h).mean()\n    loss.backward()\n    return h, loss\n"
                    "for epoch in range(3):\n    h, loss = train_step(w, x)\n")
    roots = []
    for call in trace.backward:
        nodes = {n.id: n for n in trace.graphs[call.graph].nodes}
        roots.append(nodes[call.root].names)
    assert roots == [["loss"], ["train_step.loss"], ["train_step.loss"]]
    steps = [s for s in trace.steps if s.line == 5 and s.graph is not None]
    assert "train_step.loss" in named_outputs(trace.graphs[steps[1].graph])
