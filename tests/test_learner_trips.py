"""Small things a learner trips on (issue 31), in English and Chinese, through AppTest: the
slider counts as the picture does; a refused run says nothing ran; a fold is called a fold;
saved tensors freed by backward() are said to be; the tables' headers are translated."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import text

SEED = ("x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\nout = z.mean()\n"
        "out.backward()\nprint(x.grad)\n")
MODEL = ("model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())\n"
         "out = model(torch.ones(1, 3)).sum()\n")
CHAIN = "x = torch.ones(1, requires_grad=True)\ny = x\nfor i in range(200):\n    y = y * 1.001\n"
LANGS = ["en", "zh"]


def _page(page: str, lang: str, code: str) -> AppTest:
    """The page `page` (its file's name) after a run of `code`."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run().switch_page(f"pages/{page}.py").run()
    name = page.split("_", 1)[1].lower()
    at.session_state[f"{name}.code"] = code
    at.button(key=f"{name}.run").click().run()
    assert not at.exception
    return at


def _ran_on(lang: str) -> str:
    """The start of "Ran on cpu in … ms" in `lang`, up to the time."""
    ran = text("ran_in", lang, device="cpu", threads=0, ms=0)
    return ran[:ran.index("cpu") + 7]


def _picture(at: AppTest) -> str:
    """The replay figure's JSON, its words unescaped."""
    spec = at.get("plotly_chart")[0].proto.spec
    return json.dumps(json.loads(spec), ensure_ascii=False)


def _said(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning")
                     for e in getattr(at, kind))


@pytest.mark.parametrize("lang", LANGS)
def test_the_slider_counts_as_the_picture_does(lang: str) -> None:
    at = _page("5_Backward", lang, SEED)
    at.button(key="backward.replay.1.last").click().run()
    slider = at.select_slider(key="backward.replay.1")
    last = text("place_engine", lang, step=5, steps=5)  # "step 5 of 5", not "9"
    assert slider.value == 9 and slider.format_func(slider.value) == last
    assert last in _picture(at)  # the picture's caption
    at.button(key="backward.replay.1.first").click().run()
    first = text("place_statement", lang, step=1, steps=4)
    assert at.select_slider(key="backward.replay.1").format_func(1) == first
    assert first in _picture(at)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("code", ["x = torch.ones(2\n", "import os\n"])  # syntax; refused
def test_a_run_stopped_before_its_first_statement_says_nothing_ran(lang: str,
                                                                   code: str) -> None:
    said = _said(_page("1_Playground", lang, code))
    assert text("ran_nothing", lang) in said
    assert _ran_on(lang) not in said


@pytest.mark.parametrize("lang", LANGS)
def test_a_run_that_ran_still_says_where_and_how_long(lang: str) -> None:
    said = _said(_page("1_Playground", lang, "x = 1\n"))
    assert text("ran_nothing", lang) not in said
    assert _ran_on(lang) in said


@pytest.mark.parametrize("lang", LANGS)
def test_a_folded_module_is_called_folded_not_a_large_graph(lang: str) -> None:
    at = _page("2_Graph", lang, MODEL)
    at.multiselect(key="graph.fold").select("model.0").run()
    said = _said(at)
    assert text("folded_one", lang, module="`model.0`", nodes=6) in said, said
    assert text("collapsed", lang, chains=1, nodes=0)[:8] not in said
    assert not at.checkbox  # nothing to expand


@pytest.mark.parametrize("lang", LANGS)
def test_one_collapsed_chain_is_one_chain(lang: str) -> None:
    said = _said(_page("2_Graph", lang, CHAIN))
    assert text("collapsed_one", lang, nodes=200) in said, said


@pytest.mark.parametrize("lang", LANGS)
def test_saved_tensors_after_backward_say_backward_freed_them(lang: str) -> None:
    at = _page("2_Graph", lang, SEED)
    freed = text("saved_freed", lang, ops="`MulBackward0`").split("：")[-1].split(":")[-1]
    assert freed in _said(at)  # after out.backward(), Saved tensors on (the default)
    at.toggle(key="graph.saved").set_value(False).run()
    assert freed not in _said(at)
    at.toggle(key="graph.saved").set_value(True).run()
    at.button(key="graph.step.first").click().run()
    at.button(key="graph.step.forward").click().run()
    at.button(key="graph.step.forward").click().run()  # z = y * y * 3: saved, not freed
    assert freed not in _said(at)


@pytest.mark.parametrize("lang", LANGS)
def test_the_tables_headers_are_in_the_learners_language(lang: str) -> None:
    at = _page("1_Playground", lang, SEED)
    headers = list(at.table[0].value.columns)
    assert [text(k, lang) for k in ("col_name", "col_type", "col_value")] == [
        h for h in headers if h not in ("dtype", "device", "requires_grad", "is_leaf",
                                        "grad_fn", "_version", ".grad")]
    at = _page("5_Backward", lang, SEED)
    at.button(key="backward.replay.1.last").click().run()
    assert list(at.table[0].value.columns)[0] == text("col_leaf", lang)


def test_the_backward_page_loads_the_replays_scripts_before_the_first_run() -> None:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60).run()
    at.switch_page("pages/5_Backward.py").run()
    assert [c.key for c in at.get("plotly_chart")] == ["backward.frame"]  # plotly's script
    assert at.get("code") and at.dataframe  # and the code block's, the table's
    at.session_state["backward.code"] = SEED
    at.button(key="backward.run").click().run()
    assert [c.key for c in at.get("plotly_chart")] == ["backward.figure.0"]  # gone


@pytest.mark.parametrize("lang", LANGS)
def test_a_nodes_details_are_named_in_the_learners_language(lang: str) -> None:
    at = _page("2_Graph", lang, SEED)
    node = next(o for o in at.selectbox(key="graph.node").options if "MulBackward0" in o)
    at.selectbox(key="graph.node").select(node).run()
    named = list(at.table[0].value.iloc[:, 0])
    assert named[:3] == [text("made_on_line", lang), text("detail_op", lang),
                         text("detail_custom", lang)]
    assert text("detail_saved", lang, name="self") in named
