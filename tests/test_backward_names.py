"""The Backward page names what it shows as the program does: a module's parameters by their
paths (`net.0.weight`), never by the ids the picture is drawn with (`t11`, `n10`)."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from explorer.trace.graph_view import shown_name
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
