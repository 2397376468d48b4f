"""A lesson reads only files inside the lessons folder once links are resolved, and none
larger than MAX_FILE_BYTES: a link that leaves the folder (a program, a lesson file, a whole
lesson folder, a program's key that climbs out) and an oversized file are each a lesson
problem named with its own path, and nothing of what lies outside is read or returned."""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.i18n import LANGUAGES
from explorer.serve.hosting import HOSTED
from explorer.ui import common
from tests.test_content import NEW_LESSON, OWN, add_lesson

SECRET = "outside-the-folder-4f1c"
SHADOW = Path("/etc/shadow")  # root's alone


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the lessons: a file only its owner reads, one every user reads, a
    program and a whole lesson, each holding SECRET."""
    folder = tmp_path / "outside"
    (folder / "lesson" / "programs").mkdir(parents=True)
    (folder / "owner-only.py").write_text(f"print('{SECRET}')\n")
    (folder / "owner-only.py").chmod(0o600)
    (folder / "everyone.py").write_text(f"print('{SECRET}')\n")
    (folder / "everyone.py").chmod(0o644)
    for lang in LANGUAGES:
        (folder / "lesson" / f"{lang}.md").write_text(
            NEW_LESSON[lang].replace("Shapes", SECRET).replace("形状从", SECRET))
        (folder / "lesson" / "programs" / f"broadcast.{lang}.py").write_text(
            f"print('{SECRET}')\n")
    return folder


def _program_to(name: str) -> Callable[[Path, Path], Path]:
    """The lesson's English program made a link to `name` beside the lessons."""
    def change(lesson: Path, outside: Path) -> Path:
        link = lesson / "programs" / "broadcast.en.py"
        link.unlink()
        link.symlink_to(outside / name)
        return link
    return change


def _lesson_file(lesson: Path, outside: Path) -> Path:
    link = lesson / "en.md"
    link.unlink()
    link.symlink_to(outside / "lesson" / "en.md")
    return link


def _lesson_folder(lesson: Path, outside: Path) -> Path:
    shutil.rmtree(lesson)
    lesson.symlink_to(outside / "lesson", target_is_directory=True)
    return lesson


def _climbing_key(lesson: Path, outside: Path) -> Path:
    """A program's key that climbs out of the lesson's programs/ folder."""
    key = "../../../outside/everyone"
    for lang in LANGUAGES:
        md = lesson / f"{lang}.md"
        md.write_text(re.sub(r"program\.broadcast: .*\n", "", md.read_text()).replace(
            "programs: broadcast,", f"programs: {key},"))
    return lesson / "programs" / f"{key}.py"


def _shadow(lesson: Path, outside: Path) -> Path:
    if not SHADOW.exists():
        pytest.skip(f"no {SHADOW} here")
    return _program_to(str(SHADOW))(lesson, outside)


LINKS = {"program to a file its owner alone reads": _program_to("owner-only.py"),
         "program to a file everyone reads": _program_to("everyone.py"),
         "program to root's own file": _shadow,
         "lesson file": _lesson_file, "lesson folder": _lesson_folder,
         "program key": _climbing_key}


def _everything(shelf: lessons.Shelf) -> str:
    """All the loader returns: every lesson and problem, and each problem in every language."""
    return repr(shelf) + "".join(p.message(lang) for p in shelf.problems for lang in LANGUAGES)


def _left(tmp_path: Path) -> tuple[list[str], list[str]]:
    """What is on disk under `tmp_path` and this process's open files."""
    return sorted(map(str, tmp_path.rglob("*"))), sorted(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("change", LINKS.values(), ids=LINKS)
def test_a_link_out_of_the_lessons_folder_is_refused_and_named(
        teacher: Path, outside: Path, tmp_path: Path,
        change: Callable[[Path, Path], Path]) -> None:
    link = change(add_lesson(teacher), outside)
    before = _left(tmp_path)
    shelf = lessons.shelf()
    assert _left(tmp_path) == before  # nothing written, no file left open
    assert len(shelf.lessons) == OWN and SECRET not in _everything(shelf)
    (problem,) = shelf.problems
    assert (problem.path, problem.line, problem.kind) == (link, None, "outside")
    assert problem.message("en").startswith(f"{link}: a link that leads outside the lessons")
    assert str(link.resolve()) in problem.message("en")
    assert re.search(r"[\u4e00-\u9fff]", problem.reason("zh"))


def test_a_link_that_stays_inside_is_followed(teacher: Path) -> None:
    lesson = add_lesson(teacher)
    program = lesson / "programs" / "broadcast.en.py"
    program.unlink()
    program.symlink_to(lesson / "programs" / "broadcast.zh.py")
    assert not lessons.shelf().problems
    assert lessons.by_key("broadcasting").programs[0].code_in("en").startswith("import torch")


OVERSIZED = {
    "lesson file": lambda lesson: (lesson / "en.md").write_text(
        NEW_LESSON["en"] + "x" * lessons.MAX_FILE_BYTES),
    "program of a terabyte, sparse": lambda lesson: os.truncate(
        lesson / "programs" / "broadcast.zh.py", 1 << 40),
}


@pytest.mark.parametrize("change", OVERSIZED.values(), ids=OVERSIZED)
def test_a_file_past_the_cap_is_refused_unread(teacher: Path,
                                               change: Callable[[Path], object]) -> None:
    lesson = add_lesson(teacher)
    change(lesson)
    (problem,) = lessons.shelf().problems
    assert problem.kind == "too_large" and "256 KiB" in problem.message("en")
    assert problem.path.parent in (lesson, lesson / "programs")
    assert re.search(r"[\u4e00-\u9fff]", problem.reason("zh"))


def test_a_pipe_swapped_in_for_a_lesson_file_is_refused_without_waiting(tmp_path: Path) -> None:
    pipe = tmp_path / "en.md"  # listed as a file, then made a pipe no one writes to
    os.mkfifo(pipe)
    with pytest.raises(lessons.Broken) as refused:
        lessons._text(pipe, tmp_path)
    assert refused.value.problem.kind == "special"
    assert "not a regular file" in refused.value.problem.message("en")


def _app() -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = "en"
    return at.run()


def test_a_link_out_is_named_with_its_path_locally_and_only_in_the_log_when_hosted(
        teacher: Path, outside: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    link = _program_to("everyone.py")(add_lesson(teacher), outside)
    at = _app()
    (box,) = at.error
    assert str(link) in box.value and "leads outside the lessons folder" in box.value
    monkeypatch.setattr(common, "SETTINGS", HOSTED)
    with caplog.at_level(logging.ERROR, logger="explorer.ui.lessons"):
        at = _app()
    shown = " ".join(e.value for kind in ("markdown", "warning", "error", "caption", "code")
                     for e in getattr(at, kind))
    assert not at.error and str(teacher) not in shown and str(outside) not in shown
    assert f"{link}: a link that leads outside" in caplog.text and SECRET not in caplog.text
