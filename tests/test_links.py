"""Permalinks on the real pages (Streamlit's AppTest, real worker runs): a page's state goes
into its URL, and a fresh session opened with that URL shows the same page; bad links are
refused with a reason and leave a working page."""

from __future__ import annotations

import base64
import re
import zlib

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.examples import by_key
from explorer.content.i18n import LANGUAGES, text
from explorer.views.permalink import MAX_QUERY, encode_code
from explorer.views.training import Settings, program
from tests.conftest import editor_code
from tests.programs import SEED

TWO_CALLS = ("x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\n"
             "z = (x * 3).sum()\nz.backward()\n")
NUMPY = "a = torch.ones(3)\nb = a.numpy()\nc = torch.tensor(b)\na.add_(1)\n"


def _open(page: str, query: dict[str, str] | None = None) -> AppTest:
    """A fresh session (a new tab) opening `page` with the URL query `query`."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params.update(query or {})
    at.switch_page(page)
    at.run()
    assert not at.exception
    return at


def _run(at: AppTest, name: str, code: str) -> AppTest:
    at.session_state[f"{name}.code"] = code
    at.button(key=f"{name}.run").click().run()
    assert not at.exception
    return at


def _link(at: AppTest) -> dict[str, str]:
    return {name: at.query_params[name][-1] if isinstance(at.query_params[name], list)
            else at.query_params[name] for name in at.query_params}


def _seen(at: AppTest) -> list[str]:
    """What the page shows a person: text, tables, the graph picture, figures."""
    parts = [str(e.value) for kind in ("title", "markdown", "caption", "code", "error", "info",
                                       "warning", "success") for e in getattr(at, kind)]
    parts += [t.value.to_json() for t in at.table]
    parts += [f.proto.srcdoc for f in at.get("iframe") if 'id="share"' not in f.proto.srcdoc]
    parts += [f.proto.spec for f in at.get("plotly_chart")]
    # Run times differ, and so does whether a run was kept from an earlier one (the server's
    # state, not the page's); the link's own note is the one thing a link adds.
    reused = {text("reused", lang) for lang in LANGUAGES}
    return [re.sub(r"\d+ (ms|毫秒)", "", p) for p in parts
            if ":material/link:" not in p and p not in reused]


def _same_page(before: AppTest, page: str) -> AppTest:
    """Open `before`'s URL in a fresh session: the same URL, the same widgets, the same page."""
    link = _link(before)
    after = _open(page, link)
    assert _link(after) == link
    assert editor_code(after) == editor_code(before)
    for kind in ("slider", "toggle", "checkbox", "selectbox", "multiselect", "number_input"):
        assert getattr(after, kind).values == getattr(before, kind).values, kind
    assert _seen(after) == _seen(before)
    return after


def test_the_graph_page_round_trips_step_roots_options_and_node() -> None:
    at = _run(_open("pages/2_Graph.py"), "graph", SEED)
    at.slider(key="graph.step").set_value(4).run()
    at.multiselect(key="graph.roots.3").set_value(["y", "z"]).run()
    at.toggle(key="graph.saved").set_value(False).run()
    node = at.selectbox(key="graph.node").options[2]
    at.selectbox(key="graph.node").set_value(node).run()
    link = _link(at)
    assert link["step"] == "4" and link["roots"] == "y,z" and link["saved"] == "0"
    after = _same_page(at, "pages/2_Graph.py")
    assert "Opened from a shared link" in "".join(c.value for c in after.caption)


def test_the_backward_page_round_trips_the_call_and_the_place_on_its_timeline() -> None:
    at = _run(_open("pages/5_Backward.py"), "backward", TWO_CALLS)
    at.selectbox(key="backward.call").set_value(1).run()
    # Call 1's timeline: lines 1 and 2 built its graph, then the engine's steps; it opens at
    # the engine's first step (3), and Forward goes to its second.
    at.button(key="backward.replay.1.forward").click().run()
    assert _link(at)["call"] == "1" and _link(at)["replay"] == "4"
    _same_page(at, "pages/5_Backward.py")


def test_the_playground_round_trips_the_step_and_the_variable_inspected() -> None:
    at = _run(_open("pages/1_Playground.py", {"lang": "zh"}), "playground", SEED)
    at.slider(key="playground.step").set_value(3).run()
    at.selectbox(key="playground.inspect").set_value("y").run()
    assert _link(at)["lang"] == "zh" and _link(at)["inspect"] == "y"
    _same_page(at, "pages/1_Playground.py")


def test_the_numpy_page_round_trips_the_pair_and_the_step() -> None:
    at = _run(_open("pages/3_NumPy.py"), "numpy", NUMPY)
    at.selectbox(key="numpy.right.widget").set_value("c").run()
    at.slider(key="numpy.step").set_value(3).run()
    assert _link(at)["right"] == "c"
    _same_page(at, "pages/3_NumPy.py")


def test_the_custom_function_page_round_trips_its_open_tab() -> None:
    at = _open("pages/6_Custom_Function.py")
    at.button(key="custom.run").click().run()
    assert _link(at)["tab"] == "check"
    at.session_state["custom.tab.en"] = "Backward pass"
    at.run()
    assert _link(at)["tab"] == "backward"
    _same_page(at, "pages/6_Custom_Function.py")


def test_the_training_page_round_trips_its_program_and_the_run() -> None:
    at = _open("pages/7_Training.py")
    code = program(Settings(h=8, iterations=20))
    at.session_state["training.code"] = code
    at.button(key="training.train").click().run()
    assert not at.exception
    at.number_input(key="training.k").set_value(7).run()
    at.button(key="training.open").click().run()
    link = _link(at)
    assert (link["code"], link["trained"], link["k"], link["opened"]) == (
        encode_code(code), "1", "7", "1")
    _same_page(at, "pages/7_Training.py")


def test_a_training_link_of_the_old_settings_opens_their_program() -> None:
    at = _open("pages/7_Training.py", {"h": "8", "iters": "20", "trained": "1"})
    assert editor_code(at) == program(Settings(h=8, iterations=20))
    assert len(at.session_state["training.run"][1].losses) == 20
    assert _link(at)["code"] == encode_code(program(Settings(h=8, iterations=20)))


def test_a_link_shows_the_program_it_runs_and_runs_it_in_the_sandbox() -> None:
    code = "print('from the link')\nimport os\n"
    at = _open("pages/1_Playground.py", {"code": encode_code(code)})
    assert editor_code(at) == code  # the visitor sees what runs
    assert "Refused on line 2" in [e.value for e in at.error]  # the same sandbox's verdict
    assert not at.table  # nothing ran


BOMB = zlib.compress(b"#" * (64 * 1024 * 1024), 9)[:4000]  # unpacks to megabytes
BAD = {
    "damaged": ({"code": "zeNoDAMAGED", "step": "2"}, "its program is damaged"),
    "bomb": ({"code": "z" + base64.urlsafe_b64encode(BOMB).decode()}, "unpacks to more than"),
    "too long": ({"code": encode_code("x = 1\n"), "pad": "x" * MAX_QUERY}, "longer than"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_link_is_refused_with_its_reason_and_the_page_starts_as_usual(case: str) -> None:
    query, reason = BAD[case]
    at = _open("pages/2_Graph.py", query)
    assert len(at.error) == 1
    assert reason in at.error[0].value and "Showing the page as it starts" in at.error[0].value
    assert editor_code(at) == by_key("autograd-basics").code  # the default page
    assert "Press **Run**" in "".join(i.value for i in at.info)  # nothing ran
    assert _link(at)["code"] == encode_code(by_key("autograd-basics").code)  # URL cleaned
    at.button(key="graph.run").click().run()  # and the page works
    assert not at.exception and at.get("iframe")


def test_a_bad_value_is_named_and_the_rest_of_the_link_still_opens() -> None:
    at = _open("pages/1_Playground.py", {"code": encode_code(SEED), "step": "many",
                                         "lang": "zh", "device": "cuda:3"})
    warnings = [w.value for w in at.warning]
    assert any("`step`" in w for w in warnings)
    assert any("cuda:3" in w for w in warnings)
    assert editor_code(at) == SEED and at.button(key="playground.run").label == "运行"
    assert _link(at)["device"] == "cpu" and _link(at)["step"] == str(at.slider[0].value)


def test_a_rerun_carrying_an_older_url_does_not_undo_a_click() -> None:
    """The browser may send a click before it has taken the last run's URL: only the first
    run of a session reads the URL."""
    at = _run(_open("pages/1_Playground.py"), "playground", SEED)
    at.button(key="playground.step.first").click().run()
    at.button(key="playground.step.forward").click().run()
    assert _link(at)["step"] == "2"
    at.query_params["step"] = "1"  # the URL as it was one run ago
    at.button(key="playground.step.forward").click().run()
    assert at.slider(key="playground.step").value == 3 and _link(at)["step"] == "3"
