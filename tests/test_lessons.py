"""Lessons, the custom Function check and the training page: content, logic and pages."""

from __future__ import annotations

import re

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.examples import by_key
from explorer.content.i18n import LANGUAGES
from explorer.runner.worker import WorkerPool
from explorer.ui.lessons import EDITORS
from explorer.views.custom import gradient_checks, verdicts
from explorer.views.training import Settings, program
from tests.programs import MY_RELU


def test_every_lesson_is_written_in_both_languages_and_points_at_real_programs() -> None:
    assert len(lessons.lessons()) >= 10
    for lesson in lessons.lessons():
        for part in (lesson.title, lesson.text, lesson.look):
            assert set(part) == set(LANGUAGES) and all(part.values())
            assert re.search(r"[\u4e00-\u9fff]", part["zh"]), lesson.key
        assert lesson.page in set(EDITORS) | {lessons.TRAINING}
        assert all(by_key(key).code for key in lesson.examples)


def test_the_lessons_cover_the_seed_topics() -> None:
    covered = " ".join(lesson.text["en"] for lesson in lessons.lessons())
    for topic in ("torch.empty", "torch.zeros", "new_ones", "randn_like", "out=result",
                  "add_", "view(-1", ".item()", "numpy()", "from_numpy", ".to(device)",
                  "requires_grad", "grad_fn", "backward()", "zero_()", "detach()", "no_grad",
                  "requires_grad_", "y.backward(v)", "save_for_backward", "apply"):
        assert topic in covered, topic


def test_the_gradient_check_passes_for_the_seeds_relu_and_fails_for_a_wrong_one(
        pool: WorkerPool) -> None:
    names, program = gradient_checks(by_key("my-relu-train").code)
    assert names == ["MyReLU"]
    result = pool.run(program)
    assert result.ok, result.error
    assert verdicts(result.variables, ["MyReLU"]) == [
        {"name": "MyReLU", "gradcheck": True, "matches_relu": True}]
    wrong = MY_RELU.replace("grad_input[input < 0] = 0", "grad_input[input < 0] = 1")
    result = pool.run(gradient_checks(wrong)[1])
    assert verdicts(result.variables, ["MyReLU"])[0] == {
        "name": "MyReLU", "gradcheck": False, "matches_relu": False}


def test_the_check_program_leaves_out_the_training_loop() -> None:
    checked = gradient_checks(by_key("my-relu-train").code)[1]
    assert "for t in range" not in checked and "class MyReLU" in checked


def test_a_program_without_a_function_class_or_that_does_not_parse_has_no_check() -> None:
    assert gradient_checks("x = 1\n") == gradient_checks("class A(:\n") == ([], "")
    assert gradient_checks("x = 1\0\n") == ([], "")  # a NUL: ValueError on some versions


def test_training_with_the_seeds_settings_falls_and_matches_plain_pytorch(
        pool: WorkerPool) -> None:
    code = program(Settings())
    trace = pool.run(code, limits=pool.limits.__class__(time_s=30))
    assert trace.ok, trace.error
    losses = [s["value"] for s in trace.losses]
    assert len(losses) == 500 and losses[-1] < losses[0] / 1000
    assert set(trace.losses[0]["grad_norms"]) == {"w1", "w2"}
    assert trace.threads == pool.threads
    threads = torch.get_num_threads()
    torch.set_num_threads(trace.threads)  # MKL's float sums depend on the thread count
    torch.manual_seed(0)
    plain: list[float] = []
    namespace = {"print": lambda *a: None}
    try:
        exec(code.replace("loss.backward()", "plain.append(loss.item())\n    loss.backward()"),
             namespace | {"plain": plain})
    finally:
        torch.set_num_threads(threads)
    assert losses == pytest.approx(plain, rel=1e-6)


def test_settings_replace_the_seeds_numbers_and_nothing_else() -> None:
    code = program(Settings(n=8, d_in=20, h=5, d_out=3, learning_rate=1e-3, iterations=7))
    assert "N, D_in, H, D_out = 8, 20, 5, 3" in code
    assert "learning_rate = 0.001" in code and "for t in range(7):" in code
    assert code.replace("8, 20, 5, 3", "64, 1000, 100, 10").replace("0.001", "1e-6").replace(
        "range(7)", "range(500)") == by_key("my-relu-train").code


def _app(lang: str = "en") -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params["lang"] = lang
    return at.run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lesson_opens_and_runs_on_its_page(lang: str) -> None:
    for lesson in lessons.lessons():
        for key in lesson.examples:
            at = _app(lang)
            at.button(key=f"lesson.{lesson.key}.{key}").click().run()
            assert not at.exception, (lesson.key, key)
            if lesson.page == lessons.TRAINING:
                continue
            trace = at.session_state[f"{EDITORS[lesson.page]}.trace"]
            example = by_key(key)
            assert trace.ok == (example.error is None), (key, trace.error)


def test_the_custom_function_page_checks_the_seeds_relu() -> None:
    at = _app()
    at.switch_page("pages/6_Custom_Function.py").run()
    at.button(key="custom.run").click().run()
    assert not at.exception
    assert "gradcheck passed: MyReLU.backward" in at.success[0].value
    figure = at.get("plotly_chart")[0].proto.spec
    assert "MyReLUBackward" in figure


def test_the_training_page_trains_and_opens_an_iteration() -> None:
    at = _app("zh")
    at.switch_page("pages/7_Training.py").run()
    at.number_input[5].set_value(50)  # iterations, to keep the test quick
    at.button[0].click().run()
    assert not at.exception
    assert "损失从" in at.success[0].value
    at.number_input(key="training.k").set_value(7)
    at.button(key="training.open").click().run()
    assert not at.exception
    figure = at.get("plotly_chart")[-1].proto.spec
    assert "MyReLUBackward" in figure and "MmBackward0" in figure
