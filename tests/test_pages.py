"""Every page through Streamlit's AppTest: real script runs, real worker pool, no browser."""

from __future__ import annotations

import json
import math
import re

import pyarrow
import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content.examples import EXAMPLES
from explorer.content.i18n import text
from explorer.content.lessons import lessons
from explorer.record.execute import execute
from tests.conftest import editor_code, graph_viewer
from tests.programs import RNN
from tests.test_thin import BIG

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


def _shown(frame: object) -> list[list[str]]:
    """What a dataframe element shows in its cells: its Styler's display values."""
    table = pyarrow.ipc.open_stream(frame.proto.arrow_data.styler.display_values).read_all()
    return [list(row.values()) for row in table.to_pylist()]


def _sorts_as_numbers(frame: object) -> bool:
    """Whether every column of a dataframe element holds numbers (as its sorting compares)."""
    return all(kind in "fiucb" for kind in frame.value.dtypes.map(lambda d: d.kind))


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


def test_a_thinned_records_older_steps_say_what_of_each_tensor_was_kept() -> None:
    at = _run(_playground(), BIG)  # ~18 MiB whole: the older steps keep 100 values of each
    said = _text(at)
    assert "so it was thinned to" in said and "first 100 values" in said
    # After v0, ..., v7 = torch.randn(1000)… (BIG's loop makes the slider name its steps.)
    at.select_slider(key="playground.step").set_value(2).run()
    at.selectbox(key="playground.inspect").set_value("v0").run()
    v0 = torch.Generator().manual_seed(0)  # BIG's first statement, as the run seeds it
    norm = float(torch.linalg.vector_norm(torch.randn(1000, generator=v0).double()))
    shown = re.search(r"Showing the leading 100 of 1,000 elements\. The 2-norm of all 1,000: "
                      r"([0-9.]+)\.", _text(at))
    assert shown and math.isclose(float(shown[1]), norm, rel_tol=1e-12)


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
    assert editor_code(at) == example.code_in("en") != example.code  # commented in English


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
    assert text("sent_captured", "en") not in _text(at)  # backward() runs AccumulateGrad
    assert at.table[0].value.iloc[0][".grad"] == "`[[4.5000, 4.5000], [4.5000, 4.5000]]`"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_page_shows_a_retained_grad_from_the_step_that_wrote_it(lang: str) -> None:
    at = _app(lang)
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = SEED.replace("out = z.mean()",
                                                     "z.retain_grad()\nout = z.mean()")
    at.button(key="backward.run").click().run()
    assert not at.exception
    assert text("retained_grads", lang) not in _text(at)  # step 1: z's node has not begun
    at.button(key="backward.replay.1.forward").click().run()
    assert "2. `MulBackward0`" in _text(at) and text("retained_grads", lang) in _text(at)
    (table,) = at.table
    assert table.value.iloc[0].tolist() == ["z", "`[[0.2500, 0.2500], [0.2500, 0.2500]]`"]
    assert list(table.value.columns) == [text("col_tensor", lang), ".grad"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_call_that_raised_the_error_says_so_in_the_call_list(lang: str) -> None:
    at = _app(lang)
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = RNN
    at.button(key="backward.run").click().run()
    assert not at.exception
    rounds = text("round_short_of", lang, name="t", round=2, of=5)
    assert at.selectbox(key="backward.call").options == [  # the one that raised, opened
        f"#1 (backward) · {text('round_short_of', lang, name='t', round=1, of=5)}",
        f"#2 (backward) · {rounds} · {text('call_raised', lang)}"]
    assert at.selectbox(key="backward.call").value == 2


def test_a_round_asked_for_on_the_backward_page_opens_its_call() -> None:
    """A `while` loop's last round, run again on the Backward page, opens the call made in
    it, whatever call was chosen before."""
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = (
        "w = torch.tensor(1.0, requires_grad=True)\nloss = torch.tensor(9.0)\n"
        "while loss.item() > 0.01:\n    loss = (w - 3) ** 2\n    loss.backward()\n"
        "    with torch.no_grad():\n        w -= 0.05 * w.grad\n        w.grad.zero_()\n")
    at.button(key="backward.run").click().run()
    calls = at.selectbox(key="backward.call")
    assert calls.options[-1].startswith("#20 ") and len(calls.options) == 11
    calls.select(10).run()
    (again,) = [b for b in at.button if b.key and b.key.startswith("backward.again.")]
    again.click().run()
    assert not at.exception
    chosen = at.selectbox(key="backward.call")
    assert len(chosen.options) == 12 and chosen.value == 30  # the 30th round's, the last
    assert chosen.format_func(30).startswith("#30 (backward) · while")


SHADOWED = ("w = torch.tensor(5.0, requires_grad=True)\nx = torch.ones(3)\n"
            "def layer(x, w):\n    h = x * w\n    return h\n"
            "for i in range(30):\n    y = layer(x * 2, w)\n")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_local_of_a_globals_name_is_looked_inside_by_its_own_name(lang: str) -> None:
    """Inside `layer(x, w)` both `x`s can be looked inside: the program's, and the local one
    named with its function; and a step after rounds not stepped says they ran between."""
    trace = execute(SHADOWED)
    index = next(k for k, s in enumerate(trace.steps) if s.line == 4)  # h = x * w, round 1
    at = _run(_playground(lang), SHADOWED)
    at.session_state["playground.step"] = index + 1
    at.run()
    local = text("local_name", lang, name="x", call="layer()")
    assert {"x", local} <= set(at.selectbox(key="playground.inspect").options)
    for name, value in (("x", 1.0), (local, 2.0)):  # the global's values, the local's
        at.selectbox(key="playground.inspect").select(name).run()
        assert _shown(at.dataframe[-1]) == [[str(value).rstrip("0")] * 3], name
    later = next(k for k, s in enumerate(trace.steps) if s.line == 4 and s.rounds[0].round == 20)
    at.session_state["playground.step"] = later + 1
    at.run()
    lines = text("lines_in_all", lang, lines=text("lines_between", lang, count=27))  # 3 a round
    between = text("list_separator", lang).join(
        [text("rounds_between", lang, first=11, last=19, loop="`i`"), lines])
    assert f"● {text('changed_since', lang, rounds=between)}" in [c.value for c in at.caption]


def test_the_backward_page_shows_v_and_the_vjp_the_engine_wrote() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = ("x = torch.ones(3, requires_grad=True)\ny = x * x\n"
                                         "v = torch.tensor([0.1, 1.0, 0.0001])\ny.backward(v)\n")
    at.button(key="backward.run").click().run()
    assert not at.exception
    assert "Vector–Jacobian product" in _text(at) and "vᵀJ, added to x.grad" in _text(at)
    assert "one more backward pass per element" in _text(at)  # why J is not shown
    # As print(v) writes it: tensor([1.0000e-01, 1.0000e+00, 1.0000e-04]); numbers inside.
    assert _shown(at.dataframe[-1]) == [["1.0000e-01"], ["1.0000e+00"], ["1.0000e-04"]]
    assert list(at.dataframe[-1].value[0]) == pytest.approx([0.1, 1.0, 0.0001])
    vjp = json.loads(at.code[-1].value)  # vᵀJ = 2x · v, as the engine wrote it
    assert vjp == pytest.approx([0.2, 2.0, 0.0002])


def test_the_vjp_of_autograd_grad_is_said_to_be_returned_not_added_to_a_grad() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = (
        "x = torch.ones(3, requires_grad=True)\ny = x * x * 2\nv = torch.tensor([0.1, 1.0, 2.0])\n"
        "g, = torch.autograd.grad(y, x, grad_outputs=v)\nprint(x.grad)\n")
    at.button(key="backward.run").click().run()
    assert not at.exception
    shown = _text(at)
    assert text("vjp_explain_grad", "en") in shown and "writes no .grad" in shown
    assert text("vjp_explain", "en") not in shown and "added to x.grad" not in shown
    assert "vᵀJ, returned for x" in shown
    assert json.loads(at.code[-1].value) == pytest.approx([0.4, 4.0, 8.0])  # vᵀJ = 4x · v
    assert text("returned_grads", "en") not in shown  # the engine has not ended yet
    at.button(key="backward.replay.1.last").click().run()
    assert text("returned_grads", "en") in _text(at)
    assert f"→ AccumulateGrad{text('sent_captured', 'en')}" in _text(at)  # x's: never run
    assert [dict(row) for _, row in at.table[-1].value.iterrows()] == [
        {"input": "x", "gradient": "`[0.4000, 4.0000, 8.0000]`"}]


def test_a_program_without_backward_says_so() -> None:
    at = _app()
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = "x = torch.ones(3, requires_grad=True)\ny = x * 2\n"
    at.button(key="backward.run").click().run()
    assert not at.exception and "never calls backward()" in _text(at)


def test_a_table_of_numbers_sorts_them_as_numbers_and_shows_them_as_print_does() -> None:
    at = _run(_playground(), "w = torch.tensor([[10.0, 2.5], [9.0, 100.0], [1e-3, -3.0]])\n")
    frame = at.dataframe[0]
    assert _sorts_as_numbers(frame)  # 9 before 10 before 100, not "1.0000e+01" first
    assert list(frame.value.sort_values(0)[0]) == pytest.approx([1e-3, 9.0, 10.0])
    # As print(w) writes them: tensor([[ 1.0000e+01,  2.5000e+00], …])
    assert _shown(frame) == [["1.0000e+01", "2.5000e+00"], ["9.0000e+00", "1.0000e+02"],
                             ["1.0000e-03", "-3.0000e+00"]]


def test_a_functions_locals_are_marked_changed_against_the_same_call() -> None:
    # Back in fact(2.0, 1) once fact(2.0, 0) returned: the step before was the inner call's,
    # whose n and m differed from this call's.
    at = _run(_playground(), "def fact(t, n):\n    m = n - 1\n    if n == 0:\n        return t\n"
                             "    r = fact(t, m) * n\n    return r\n\ny = fact(2.0, 3)\n")
    steps = at.session_state["playground.trace"].steps
    back = next(k for k, s in enumerate(steps) if s.line == 5 and s.called == 3)
    assert steps[back - 1].called == 4  # the step before: inside the inner call
    at.session_state["playground.step"] = back + 1
    at.run()
    assert list(at.table[-1].value["name"]) == ["t", "n", "m", "● r"]  # r alone is new here


def test_ragged_values_are_shown_as_nested_lists() -> None:
    at = _run(_playground(), "import numpy as np\na = np.array([[1.5], 2.0], dtype=object)\n")
    assert not at.dataframe and json.loads(at.json[0].value) == [["1.5000"], "2.0000"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_passing_many_gradients_shows_the_first_and_counts_the_rest(lang: str) -> None:
    at = _app(lang)
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = ("xs = [torch.ones(1, requires_grad=True) * 1 for _ in "
                                         "range(30)]\ny = torch.stack(xs).sum()\ny.backward()\n")
    at.button(key="backward.run").click().run()
    at.button(key="backward.replay.1.forward").click().run()
    assert not at.exception
    shown = _text(at)
    assert "2. `StackBackward0`" in shown and shown.count("→ ") == 12
    assert text("gradients_more", lang, count=18) in shown


def _graph(code: str, lang: str = "en") -> AppTest:
    at = _app(lang)
    at.switch_page("pages/2_Graph.py").run()
    at.session_state["graph.code"] = code
    at.button(key="graph.run").click().run()
    assert not at.exception
    return at


def _choose(at: AppTest, name: str) -> AppTest:
    """Choose the node whose details are titled `name (id)`."""
    box = at.selectbox(key="graph.node")
    return box.set_value(next(i for i in box.options if i.startswith(f"{name} ("))).run()


def test_a_chosen_tensors_details_give_its_values_and_grad_in_full() -> None:
    at = _graph("x = torch.tensor([0.1, 1 / 3], requires_grad=True)\ny = (x * x).sum()\n"
                "y.backward()\n")
    said = _text(_choose(at, "x"))
    assert "`x` values (full precision)" in said and "`x` .grad (full precision)" in said
    # Each value reads back as the float32 it is (print(x) shows 0.3333 only): as print(x)
    # writes them with torch.set_printoptions(precision=8), and 7 for x.grad.
    assert "[0.10000000, 0.33333334]" in said and "[0.2000000, 0.6666667]" in said
    assert "leading" not in said


def test_the_details_of_a_large_tensor_say_what_was_kept_of_it() -> None:
    at = _graph("x = torch.arange(5000.0, requires_grad=True)\ny = x.sum()\n")
    norm = math.sqrt(sum(k * k for k in range(5000)))
    at = _choose(at, "x")
    assert f"Showing the leading 1,000 of 5,000 elements. The 2-norm of all 5,000: {norm!r}." \
        in _text(at)
    assert any(c.value.endswith("998., 999., …]") for c in at.code)  # not written as whole


def _marked(at: AppTest) -> list[int]:
    """The lines (first, last) the editor marks."""
    (editor,) = (e.proto for e in at.get("bidi_component")
                 if e.proto.component_name.endswith("autograd_explorer.editor"))
    return json.loads(editor.json)["step"]


def test_the_graph_pages_mark_is_the_line_its_caption_names_with_a_node_chosen() -> None:
    at = _choose(_graph(SEED), "MulBackward0")  # the last one: `* 3`, on line 3
    assert "Line 3 made `MulBackward0` · state after line 6" in _text(at)
    assert _marked(at) == [3, 3]
    at.button(key="graph.step.back").click().run()  # a step moved to: its line
    assert "State after line 5" in _text(at) and "made `MulBackward0`" not in _text(at)
    assert _marked(at) == [5, 5]
    assert at.selectbox(key="graph.node").value is not None  # still in the picture: chosen
    assert "made on line" in at.table[0].value.iloc[:, 0].tolist()
    at.button(key="graph.step.first").click().run()  # a picture without it: none chosen
    assert at.selectbox(key="graph.node").value is None
    assert "State after line 1" in _text(at) and _marked(at) == [1, 1]
    at.button(key="graph.step.last").click().run()
    assert at.selectbox(key="graph.node").value is None and _marked(at) == [6, 6]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_backward_page_says_how_many_numbers_had_no_room_and_where_to_read_them(
        lang: str) -> None:
    at = _app(lang)
    at.switch_page("pages/5_Backward.py").run()
    at.session_state["backward.code"] = (
        "x = torch.tensor([0.5, -1.0, 2.0, 3.0], requires_grad=True)\ny = x\n"
        "for i in range(18):\n    y = torch.tanh(y * x) + y\nout = y.sum()\nout.backward()\n")
    at.button(key="backward.run").click().run()
    at.toggle(key="backward.numbers").set_value(True).run()  # off for a graph this big
    at.button(key="backward.replay.1.last").click().run()
    assert not at.exception
    count = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["meta"]["left_off"]
    assert count > 0
    said = [c.value for c in at.caption if text("numbers_left_off", lang, count=count) in c.value]
    assert len(said) == 1 and text("engine_steps", lang) in said[0]
