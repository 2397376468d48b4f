"""Every page through Streamlit's AppTest: real script runs, real worker pool, no browser."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.examples import EXAMPLES

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
    at.text_area[0].set_value(code)
    at.button(key="playground.run").click().run()
    assert not at.exception
    return at


def _text(at: AppTest) -> str:
    """Everything the page says in markdown, captions, code blocks and alerts."""
    parts = [e.value for kind in ("markdown", "caption", "code", "error", "info", "warning")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_lists_every_example_in_both_languages(lang: str) -> None:
    at = _app(lang)
    assert not at.exception
    page = _text(at)
    assert all(example.title[lang] in page for example in EXAMPLES)
    assert ("Autograd Explorer" if lang == "en" else "Autograd 探索器") in at.title[0].value


def test_playground_runs_the_seed_program_and_shows_its_state() -> None:
    at = _run(_playground(), SEED)
    assert "tensor([[4.5000, 4.5000]" in _text(at)
    rows = at.table[0].value
    assert list(rows["name"]) == ["x", "y", "z", "out"]  # print() changed nothing
    out = rows.set_index("name").loc["out"]
    assert out["grad_fn"] == "MeanBackward0" and out["type"] == "tensor scalar"
    assert rows.set_index("name").loc["x", ".grad"].startswith("`[[4.5, 4.5]")
    assert "State after line 6" in _text(at)


def test_step_controls_walk_through_the_statements() -> None:
    at = _run(_playground(), SEED)
    at.button(key="playground.first").click().run()
    assert "State after line 1" in _text(at)
    assert list(at.table[0].value["name"]) == ["● x"]  # new in this step
    at.button(key="playground.forward").click().run()
    assert "State after line 2" in _text(at)
    assert at.slider(key="playground.step").value == 2
    at.slider(key="playground.step").set_value(4).run()
    assert "State after line 4" in _text(at)
    assert list(at.table[0].value["name"]) == ["x", "y", "z", "● out"]
    at.button(key="playground.last").click().run()
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
    assert at.text_area[0].value == example.code


def test_the_chinese_interface_explains_errors_in_chinese() -> None:
    at = _run(_playground("zh"), "x = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n")
    assert at.error[0].value == "第 2 行出现 RuntimeError"
    assert at.button(key="playground.run").label == "运行"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in at.info[0].value)
