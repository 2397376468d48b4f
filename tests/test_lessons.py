"""Lessons, the custom Function check and the training page: content, logic and pages."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content import lesson_check, lessons
from explorer.content.examples import by_key
from explorer.content.i18n import LANGUAGES, text
from explorer.content.markdown import plain
from explorer.pool.worker import WorkerPool
from explorer.serve.hosting import HOSTED
from explorer.ui import common
from explorer.ui.lessons import EDITORS
from explorer.views.custom import gradient_checks, verdicts
from explorer.views.training import Settings, program
from tests.programs import MY_RELU
from tests.test_content import ADDED, NEW_LESSON, OWN, PROGRAM, add_lesson


def test_every_lesson_is_written_in_both_languages_and_opens_programs_commented_in_it() -> None:
    assert len(lessons.lessons()) >= 10
    for lesson in lessons.lessons():
        for part in (lesson.title, lesson.text, lesson.look):
            assert set(part) == set(LANGUAGES) and all(part.values())
            assert re.search(r"[\u4e00-\u9fff]", part["zh"]), lesson.key
        assert lesson.page in set(EDITORS) | {lessons.TRAINING}
        for opened in lesson.programs:
            assert not re.search(r"[\u4e00-\u9fff]", opened.code_in("en")), opened.key
            for lang in LANGUAGES:  # no notebook cells, no notes the learner cannot see
                assert not re.search(r"In \[\d+\]|来自|from (the )?(an )?earlier|note 00|"
                                     r"TUTORIAL|coding:",
                                     opened.code_in(lang)), (opened.key, lang)


def test_the_first_lesson_opens_a_program_of_its_own_not_the_second_lessons() -> None:
    first, second = lessons.lessons()[:2]
    assert not set(first.examples) & set(second.examples)
    assert first.programs[0].folder == first.folder / "programs"


def test_the_apps_own_lessons_pass_lessons_check() -> None:
    done = subprocess.run([sys.executable, "-m", "explorer", "lessons", "check",
                           str(lessons.FOLDER)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith("no problems.\n")


def test_lessons_check_names_each_problem_with_file_and_line(tmp_path: Path) -> None:
    """A program that stops, one that should stop but does not, a broken file and a missing
    language: each named, in English and in Chinese; exit status 1."""
    folder = tmp_path / "lessons"
    error_dir, broken_dir = f"{OWN + 2:02d}-error", f"{OWN + 3:02d}-broken"  # after ADDED
    add_lesson(folder)
    (folder / ADDED / "programs" / "broadcast.zh.py").write_text(
        "import torch\nx = torch.ones(2)\nx.backward()\n", encoding="utf-8")
    (folder / error_dir).mkdir()
    (folder / error_dir / "en.md").write_text(NEW_LESSON["en"].replace(
        "broadcast, tensor-add", "requires-grad-non-leaf-error").replace(
        "program.broadcast: Stretching a row\n", ""), encoding="utf-8")
    (folder / broken_dir).mkdir()
    (folder / broken_dir / "zh.md").write_text("title: 没有头信息\n", encoding="utf-8")
    for lang, words in (("en", "the program stopped: RuntimeError"), ("zh", "程序中途停止")):
        done = subprocess.run([sys.executable, "-m", "explorer", "lessons", "check",
                               str(folder), "--lang", lang],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 1, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 4 and lines[-1].startswith("3 "), done.stdout
        stopped, missing, broken = sorted(lines[:3])
        assert stopped.startswith(f"{folder}/{ADDED}/programs/broadcast.zh.py:3: "), \
            stopped
        assert words in stopped
        assert missing.startswith(f"{folder}/{error_dir}/zh.md: "), missing
        assert broken.startswith(f"{folder}/{broken_dir}/zh.md:1: "), broken


def test_a_program_that_should_stop_with_an_error_but_does_not_is_named(
        pool: WorkerPool) -> None:
    (problem,) = lesson_check._ran(Path("p.py"), "some error", pool.run("x = 1\n"))
    assert problem.message("en") == "p.py: the program should stop with “some error”, but " \
        "it ran to the end"


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
    losses = [s.value for s in trace.losses]
    assert len(losses) == 500 and losses[-1] < losses[0] / 1000
    assert set(trace.losses[0].grad_norms) == {"w1", "w2"}
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
        for opened in lesson.programs:
            at = _app(lang)
            at.button(key=f"lesson.{lesson.key}.{opened.key}").click().run()
            assert not at.exception, (lesson.key, opened.key)
            trace = (at.session_state["training.run"][1] if lesson.page == lessons.TRAINING
                     else at.session_state[f"{EDITORS[lesson.page]}.trace"])
            assert trace.ok == (opened.error is None), (opened.key, trace.error)
            if lesson.page != lessons.TRAINING:
                assert at.session_state[f"{EDITORS[lesson.page]}.ran"] == opened.code_in(lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_opens_its_program_named_in_the_picker_with_what_to_look_at(
        lang: str) -> None:
    lesson = lessons.by_key("numpy-bridge")
    at = _app(lang)
    at.button(key="lesson.numpy-bridge.tensor-to-numpy").click().run()
    assert not at.exception
    assert at.selectbox(key="numpy.example").value == "tensor-to-numpy"
    assert f"**{text('lesson_look', lang)}** {lesson.look[lang]}" in [c.value for c in at.caption]
    assert at.session_state["numpy.code"] == by_key("tensor-to-numpy").code_in(lang)
    at.session_state["numpy.code"] = "print(1)\n"  # another program: the line goes
    at.run()
    assert lesson.look[lang] not in " ".join(c.value for c in at.caption)


@pytest.fixture
def teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A teacher's lessons folder, named by EXPLORER_LESSONS: the app's own and one more."""
    folder = tmp_path / "lessons"
    shutil.copytree(lessons.FOLDER, folder)
    add_lesson(folder)
    monkeypatch.setenv(lessons.VARIABLE, str(folder))
    return folder


def _titles(at: AppTest) -> list[str]:
    return [expander.label for expander in at.expander]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_teachers_lesson_opens_its_own_program_in_the_readers_language(
        teacher: Path, lang: str) -> None:
    at = _app(lang)
    title = NEW_LESSON[lang].split("title: ")[1].split("\n")[0]
    assert f"{len(_titles(at))}. {title}" == _titles(at)[-1]
    at.button(key="lesson.broadcasting.broadcast").click().run()
    assert not at.exception
    assert at.session_state["playground.trace"].ok
    assert at.session_state["playground.ran"] == PROGRAM[lang]
    assert at.selectbox(key="playground.example").value is None  # not a built-in program


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_broken_lesson_is_named_on_the_page_and_the_others_stay(teacher: Path,
                                                                  lang: str) -> None:
    zh = teacher / ADDED / "zh.md"
    zh.write_text(NEW_LESSON["zh"].replace("page: playground", "page: graph"), encoding="utf-8")
    at = _app(lang)
    assert not at.exception and len(_titles(at)) == len(lessons.lessons()) == OWN
    (box,) = at.error
    assert text("lessons_broken", lang) in box.value and f"{zh}:3" in box.value
    assert lessons.shelf().problems[0].reason(lang, plain) in box.value
    zh.write_text(NEW_LESSON["zh"].replace("广播", "广播（改过）"), encoding="utf-8")
    at.run()  # fixed: shown again, edited, on the next run without a restart
    assert not at.error and len(_titles(at)) == OWN + 1
    assert ("广播（改过）" in _titles(at)[-1]) == (lang == "zh")


def test_a_hosted_server_tells_visitors_little_and_its_log_the_rest(
        teacher: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    (teacher / ADDED / "en.md").write_text("no front matter\n", encoding="utf-8")
    monkeypatch.setattr(common, "SETTINGS", HOSTED)
    with caplog.at_level(logging.ERROR, logger="explorer.ui.lessons"):
        at = _app()
    assert not at.exception and not at.error and len(_titles(at)) == OWN
    assert [w.value for w in at.warning] == [text("lessons_broken_hosted", "en")]
    assert str(teacher) not in " ".join(m.value for m in at.markdown)
    assert f"{teacher}/{ADDED}/en.md:1: the file must begin" in caplog.text


def test_a_lesson_in_one_language_is_shown_in_it_with_a_note(teacher: Path) -> None:
    (teacher / ADDED / "zh.md").unlink()
    at = _app("zh")
    assert not at.exception and not at.error
    assert _titles(at)[-1] == f"{OWN + 1}. Broadcasting, by a teacher"
    assert text("lesson_only_in", "zh", language="英文") in [i.value for i in at.info]
    at.button(key="lesson.broadcasting.broadcast").click().run()
    assert at.session_state["playground.ran"] == PROGRAM["en"]


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
    at.session_state["training.code"] = program(Settings(iterations=50))  # quick
    at.button(key="training.train").click().run()
    assert not at.exception
    assert "损失从" in at.success[0].value
    at.number_input(key="training.k").set_value(7)
    at.button(key="training.open").click().run()
    assert not at.exception
    figure = at.get("plotly_chart")[-1].proto.spec
    assert "MyReLUBackward" in figure and "MmBackward0" in figure
