"""Content is data: programs are .py files listed in programs.toml, lessons are Markdown per
language, and a teacher adds a lesson by adding a folder."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.examples import EXAMPLES, PROGRAMS, by_key

NEW_LESSON = {
    "en": "---\ntitle: Broadcasting, by a teacher\npage: playground\n"
          "programs: tensor-add\nlook: The shapes column.\n---\nShapes line up from the right.\n",
    "zh": "---\ntitle: 广播（老师写的）\npage: playground\nprograms: tensor-add\n"
          "look: 形状一列。\n---\n形状从右边对齐。\n",
}


def test_every_program_file_is_listed_once_and_every_listed_program_has_a_file() -> None:
    with open(PROGRAMS / "programs.toml", "rb") as index:
        listed = [entry["key"] for entry in tomllib.load(index)["program"]]
    assert len(listed) == len(set(listed)) == len(EXAMPLES)
    assert sorted(listed) == sorted(path.stem for path in PROGRAMS.glob("*.py"))
    for example in EXAMPLES:
        assert set(example.title) == {"en", "zh"} and all(example.title.values())
        compile(example.code, f"{example.key}.py", "exec")  # each is a real program


def test_every_lesson_folder_has_every_language_and_real_programs() -> None:
    folders = sorted(p for p in lessons.FOLDER.iterdir() if p.is_dir())
    assert len(folders) == len(lessons.lessons())
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir()) == [f"{lang}.md" for lang in
                                                             lessons.LANGUAGES]
    for lesson in lessons.lessons():
        assert all(by_key(key) for key in lesson.examples)


@pytest.fixture
def teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the app's lessons, named by EXPLORER_LESSONS."""
    folder = tmp_path / "lessons"
    shutil.copytree(lessons.FOLDER, folder)
    monkeypatch.setenv(lessons.VARIABLE, str(folder))
    return folder


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_new_lesson_folder_appears_on_the_home_page(teacher: Path, lang: str) -> None:
    added = teacher / "12-broadcasting"
    added.mkdir()
    for language, body in NEW_LESSON.items():
        (added / f"{language}.md").write_text(body, encoding="utf-8")
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception
    title = NEW_LESSON[lang].split("title: ")[1].split("\n")[0]
    assert f"12. {title}" in [expander.label for expander in at.expander]
    assert at.button(key="lesson.broadcasting.tensor-add")


@pytest.mark.parametrize(("change", "message"), [
    (lambda text: text.replace("---\n", "", 1), "no front matter"),
    (lambda text: text.replace("look:", "seen:"), "the front matter lacks look"),
    (lambda text: text.replace("page: playground", "page: graph"), "differ between languages"),
    (lambda text: text.replace("page: playground", "page: nowhere"), "differ between"),
])
def test_a_broken_lesson_file_is_named_with_what_is_wrong(teacher: Path, change: object,
                                                          message: str) -> None:
    zh = teacher / "01-what-is-pytorch" / "zh.md"
    zh.write_text(change(zh.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(lessons.LessonError, match=message) as error:
        lessons.lessons()
    assert "01-what-is-pytorch" in str(error.value)
    assert (lessons.FOLDER / "01-what-is-pytorch" / "zh.md").read_text(encoding="utf-8") != \
        zh.read_text(encoding="utf-8")  # the app's own lesson is untouched
