"""Every page through Streamlit's AppTest: real script runs, real worker pool, no browser."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.examples import EXAMPLES
from explorer.content.lessons import lessons
from tests.conftest import editor_code, graph_viewer

SEED = ("x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\nout = z.mean()\n"
        "out.backward()\nprint(x.grad)\n")


def _app(lang: str = "en") -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def _playground(lang: str = "en") -> AppTest:
    at = _app(lang)
    at.switch_page("pages/1_Playground.py").run()
    assert not at.exception
    return at


def _run(at: AppTest, code: str) -> AppTest:
    at.session_state["playground.code"] = code
    at.button(key="playground.run").click().run()
    assert not at.exception
    return at


def _text(at: AppTest) -> str:
    """Everything the page says in markdown, captions, code blocks and alerts."""
    parts = [e.value for kind in ("markdown", "caption", "code", "error", "info", "warning")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_lists_every_lesson_in_both_languages(lang: str) -> None:
    at = _app(lang)
    assert not at.exception
    assert [e.label for e in at.expander] == [f"{number}. {lesson.title[lang]}" for number, lesson
                                             in enumerate(lessons(), start=1)]
    assert ("Autograd Explorer" if lang == "en" else "Autograd 探索器") in at.title[0].value


def test_playground_runs_the_seed_program_and_shows_its_state() -> None:
    at = _run(_playground(), SEED)
    assert "tensor([[4.5000, 4.5000]" in _text(at)
    rows = at.table[0].value
    assert list(rows["name"]) == ["x", "y", "z", "out"]  # print() changed nothing
    out = rows.set_index("name").loc["out"]
    assert out["grad_fn"] == "MeanBackward0" and out["type"] == "tensor scalar"
    assert rows.set_index("name").loc["x", ".grad"].startswith("`[[4.5000, 4.5000]")
    assert "State after line 6" in _text(at)


def test_step_controls_walk_through_the_statements() -> None:
    at = _run(_playground(), SEED)
    at.button(key="playground.step.first").click().run()
    assert "State after line 1" in _text(at)
    assert list(at.table[0].value["name"]) == ["● x"]  # new in this step
    at.button(key="playground.step.forward").click().run()
    assert "State after line 2" in _text(at)
    assert at.slider(key="playground.step").value == 2
    at.slider(key="playground.step").set_value(4).run()
    assert "State after line 4" in _text(at)
    assert list(at.table[0].value["name"]) == ["x", "y", "z", "● out"]
    at.button(key="playground.step.last").click().run()
    assert "State after line 6" in _text(at)


def test_a_pytorch_error_is_shown_with_its_line_and_an_explanation() -> None:
    at = _run(_playground(), "x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n")
    assert at.error[0].value == "RuntimeError on line 3"
    assert "grad can be implicitly created only for scalar outputs" in _text(at)
    assert "gradient" in at.info[0].value
    assert list(at.table[0].value["name"]) == ["x", "● y"]  # the state before the failing line


def test_a_refused_program_names_the_line_and_the_reason() -> None:
    at = _run(_playground(), "x = 1\nimport os\n")
    assert at.error[0].value == "Refused on line 2"
    assert "import of `os` is not allowed" in _text(at)
    assert not at.table  # nothing ran


def test_choosing_an_example_loads_its_code() -> None:
    at = _playground()
    example = EXAMPLES[-1]
    at.selectbox(key="playground.example").set_value(example.key).run()
    assert editor_code(at) == example.code


def test_the_chinese_interface_explains_errors_in_chinese() -> None:
    at = _run(_playground("zh"), "x = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n")
    assert at.error[0].value == "第 2 行出现 RuntimeError"
    assert at.button(key="playground.run").label == "运行"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in at.info[0].value)


def test_the_graph_page_draws_the_seed_graph_of_the_last_assigned_tensor() -> None:
    at = _app()
    at.switch_page("pages/2_Graph.py").run()
    at.button(key="graph.run").click().run()
    assert not at.exception
    roots = at.multiselect[0]
    assert roots.value == ["out"] and set(roots.options) == {"x", "y", "z", "out"}
    viewer, _ = graph_viewer(at)
    assert all(label in viewer for label in ("MeanBackward0", "AddBackward0", "AccumulateGrad"))
    at.button(key="graph.step.first").click().run()
    assert "No tensor requires grad yet" in _text(at)  # after `import torch`? none yet
    at.button(key="graph.step.forward").click().run()
    viewer, _ = graph_viewer(at)
    assert "AccumulateGrad" not in viewer and "(2, 2)" in viewer  # just the leaf x


def test_the_graph_page_explains_what_detach_leaves_out() -> None:
    at = _app("zh")
    at.switch_page("pages/2_Graph.py").run()
    at.session_state["graph.code"] = "x = torch.ones(2, requires_grad=True)\nd = x.detach() * 2\n"
    at.button(key="graph.run").click().run()
    assert not at.exception
    assert "不在计算图中：`d`" in _text(at)


def test_the_backward_page_replays_the_seed_pass_step_by_step() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.button(key="backward.run").click().run()
    assert not at.exception
    figure = at.get("plotly_chart")[0].proto.spec
    # The picture is the step the panel shows: no frames or slider of its own.
    assert "step 1 of 5: MeanBackward0" in figure and '"frames"' not in figure
    assert "1. `MeanBackward0`" in _text(at)
    at.button(key="backward.replay.1.last").click().run()
    assert "5. `AccumulateGrad`" in _text(at)
    assert "step 5 of 5: AccumulateGrad" in at.get("plotly_chart")[0].proto.spec
    assert "added into the leaf's .grad" in _text(at)
    assert at.table[0].value.iloc[0][".grad"] == "`[[4.5000, 4.5000], [4.5000, 4.5000]]`"


def test_the_backward_page_shows_v_and_the_vjp_the_engine_wrote() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = ("x = torch.ones(3, requires_grad=True)\ny = x * x\n"
                                         "v = torch.tensor([0.1, 1.0, 0.0001])\ny.backward(v)\n")
    at.button(key="backward.run").click().run()
    assert not at.exception
    assert "Vector–Jacobian product" in _text(at) and "vᵀJ, added to x.grad" in _text(at)
    assert "one more backward pass per element" in _text(at)  # why J is not shown
    # As print(v) writes it: tensor([1.0000e-01, 1.0000e+00, 1.0000e-04])
    assert list(at.dataframe[-1].value.to_numpy().ravel()) == ["1.0000e-01", "1.0000e+00",
                                                               "1.0000e-04"]
    vjp = json.loads(at.code[-1].value)  # vᵀJ = 2x · v, as the engine wrote it
    assert vjp == pytest.approx([0.2, 2.0, 0.0002])


def test_a_program_without_backward_says_so() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = "x = torch.ones(3, requires_grad=True)\ny = x * 2\n"
    at.button(key="backward.run").click().run()
    assert not at.exception and "never calls backward()" in _text(at)
