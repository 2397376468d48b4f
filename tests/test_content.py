"""Content is data: programs are .py files listed in programs.toml, lessons are Markdown per
language, and a teacher adds a lesson, with programs of its own, by adding a folder. A broken
lesson is left out alone and named with its file, line and reason; edits show at once."""

from __future__ import annotations

import ast
import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer.content import lessons
from explorer.content.examples import EXAMPLES, PROGRAMS, Example, by_key
from explorer.content.i18n import LANGUAGES

NEW_LESSON = {
    "en": "---\ntitle: Broadcasting, by a teacher\npage: playground\n"
          "programs: broadcast, tensor-add\nprogram.broadcast: Stretching a row\n"
          "look: The shapes column.\n---\nShapes line up from the right.\n",
    "zh": "---\ntitle: 广播（老师写的）\npage: playground\nprograms: broadcast, tensor-add\n"
          "program.broadcast: 拉伸一行\nlook: 形状一列。\n---\n形状从右边对齐。\n",
}
PROGRAM = {"en": "import torch\n# a row stretched to a matrix\nprint(torch.ones(2, 3) + "
                 "torch.arange(3))\n",
           "zh": "import torch\n# 一行被拉伸成矩阵\nprint(torch.ones(2, 3) + torch.arange(3))\n"}
OWN = len([p for p in lessons.FOLDER.iterdir() if p.is_dir()])  # the app's own lessons
ADDED = f"{OWN + 1:02d}-broadcasting"  # a teacher's lesson, after the app's own


def test_every_program_file_is_listed_once_and_every_listed_program_has_a_file() -> None:
    with open(PROGRAMS / "programs.toml", "rb") as index:
        listed = [entry["key"] for entry in tomllib.load(index)["program"]]
    assert len(listed) == len(set(listed)) == len(EXAMPLES)
    names = {path.name.split(".")[0]: path for path in PROGRAMS.glob("*.py")}
    assert sorted(listed) == sorted(names)
    for path in PROGRAMS.glob("*.py"):  # `<key>.py` or `<key>.<lang>.py`
        assert re.fullmatch(rf"[a-z0-9-]+(\.({'|'.join(LANGUAGES)}))?\.py", path.name), path
    for example in EXAMPLES:
        assert set(example.title) == {"en", "zh"} and all(example.title.values())
        compile(example.code, f"{example.key}.py", "exec")  # each is a real program


def _statements(code: str) -> str:
    """The program without its comments and docstrings."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:]  # type: ignore[attr-defined]
    return ast.dump(tree)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.versions], ids=lambda e: e.key)
def test_a_programs_language_versions_differ_from_it_only_in_comments(example: Example) -> None:
    for lang, code in example.versions.items():
        assert _statements(code) == _statements(example.code), lang
        if lang == "en":
            assert not re.search(r"[\u4e00-\u9fff]", code), example


def test_every_lesson_folder_has_every_language_and_real_programs() -> None:
    folders = sorted(p for p in lessons.FOLDER.iterdir() if p.is_dir())
    assert len(folders) == len(lessons.lessons())
    for folder in folders:
        assert sorted(p.name for p in folder.glob("*.md")) == [f"{lang}.md" for lang in
                                                               lessons.LANGUAGES]
    assert not lessons.shelf().problems
    for lesson in lessons.lessons():
        assert set(lesson.title) == set(LANGUAGES)
        assert all(program.code_in(lang) for program in lesson.programs for lang in LANGUAGES)


def add_lesson(folder: Path, files: dict[str, str] = NEW_LESSON) -> Path:
    """A new lesson `ADDED` (`NN-broadcasting`, after the app's own) in `folder`, with a
    program of its own."""
    added = folder / ADDED
    (added / "programs").mkdir(parents=True)
    for language, body in files.items():
        (added / f"{language}.md").write_text(body, encoding="utf-8")
        (added / "programs" / f"broadcast.{language}.py").write_text(PROGRAM[language],
                                                                     encoding="utf-8")
    return added


def test_a_lesson_folder_carries_its_own_programs_in_each_language(teacher: Path) -> None:
    add_lesson(teacher)
    lesson = lessons.by_key("broadcasting")
    own, builtin = lesson.programs
    assert own.title == {"en": "Stretching a row", "zh": "拉伸一行"}
    assert {lang: own.code_in(lang) for lang in LANGUAGES} == PROGRAM
    assert own.file("zh") == teacher / ADDED / "programs" / "broadcast.zh.py"
    assert builtin is by_key("tensor-add")
    assert len(lessons.lessons()) == OWN + 1


def test_one_program_file_serves_every_language(teacher: Path) -> None:
    added = add_lesson(teacher)
    for language in LANGUAGES:
        (added / "programs" / f"broadcast.{language}.py").unlink()
    (added / "programs" / "broadcast.py").write_text("print(1)\n", encoding="utf-8")
    own = lessons.by_key("broadcasting").programs[0]
    assert own.code_in("en") == own.code_in("zh") == "print(1)\n"


def test_edits_show_on_the_next_read_without_a_restart(teacher: Path) -> None:
    added = add_lesson(teacher)
    assert lessons.by_key("broadcasting").title["en"] == "Broadcasting, by a teacher"
    en = added / "en.md"
    en.write_text(NEW_LESSON["en"].replace("by a teacher", "edited"), encoding="utf-8")
    assert lessons.by_key("broadcasting").title["en"] == "Broadcasting, edited"
    program = added / "programs" / "broadcast.en.py"
    program.write_text("print('changed')\n", encoding="utf-8")
    assert lessons.by_key("broadcasting").programs[0].code_in("en") == "print('changed')\n"
    en.write_text("no front matter\n", encoding="utf-8")
    assert [p.path for p in lessons.shelf().problems] == [en]
    shutil.rmtree(added)  # the bad lesson removed: its problem goes with it
    assert not lessons.shelf().problems
    assert len(lessons.lessons()) == OWN


def test_a_lesson_in_one_language_is_kept_in_that_language(teacher: Path) -> None:
    add_lesson(teacher, {"en": NEW_LESSON["en"]})
    lesson = lessons.by_key("broadcasting")
    assert set(lesson.title) == {"en"}
    assert lesson.language("zh") == lesson.language("en") == "en"
    assert not lessons.shelf().problems and len(lessons.lessons()) == OWN + 1


def _edit(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


# (what the teacher did to zh.md, the line named, the problem's kind, words of its reason)
BROKEN = [
    (_edit("---\n", ""), 1, "no_front_matter", "`---`"),
    (lambda text: "---\n" + "".join(text.split("---\n")[1:]), 1, "unclosed", "never ends"),
    (_edit("look:", "look"), 6, "line", "expected `name: value`"),
    (_edit("look:", "seen:"), 6, "unknown", "unknown field “seen”"),
    (_edit("look:", "title: again\nlook:"), 6, "twice", "first on line 2"),
    (_edit("page: playground", "page:"), 3, "empty", "“page” is empty"),
    (lambda text: re.sub(r"look: .*\n", "", text), 1, "missing", "lacks look"),
    (_edit("page: playground", "page: graph"), 3, "differ", "en.md"),
    (_edit("programs: broadcast, tensor-add", "programs: broadcast, tensor-ad"), 4, "differ",
     "“programs” differs"),
    (_edit("program.broadcast:", "program.broadcst:"), 5, "title_unused", "program.broadcst"),
    (_edit("look:", "predict: y\nlook:"), 6, "differ", "“predict” differs"),
]


@pytest.mark.parametrize(("change", "line", "kind", "words"), BROKEN)
def test_a_broken_lesson_is_left_out_alone_and_named_with_its_file_line_and_reason(
        teacher: Path, change: Callable[[str], str], line: int, kind: str, words: str) -> None:
    added = add_lesson(teacher)
    zh = added / "zh.md"
    zh.write_text(change(zh.read_text(encoding="utf-8")), encoding="utf-8")
    shelf = lessons.shelf()
    assert len(shelf.lessons) == OWN and "broadcasting" not in {x.key for x in shelf.lessons}
    (problem,) = shelf.problems
    assert (problem.path, problem.line, problem.kind) == (zh, line, kind)
    assert words in problem.message("en") and str(zh) in problem.message("en")
    chinese = problem.reason("zh")
    assert re.search(r"[\u4e00-\u9fff]", chinese) and chinese != problem.reason("en")


# (what the teacher did to the lesson folder, the file named (relative), line, kind, words)
BROKEN_FOLDERS = [
    (lambda d: [(d / f"{lang}.md").unlink() for lang in LANGUAGES], ".", None, "no_file",
     "en.md / zh.md"),
    (lambda d: (d / "en.md").write_bytes(b"---\ntitle: caf\xe9\n"), "en.md", 2, "not_utf8",
     "UTF-8"),
    (lambda d: [(d / f"{lang}.md").write_text(NEW_LESSON[lang].replace("page: playground",
                                                                       "page: nowhere"))
                for lang in LANGUAGES], "en.md", 3, "page", "“nowhere” is not one of playground"),
    (lambda d: (d / "programs" / "broadcast.zh.py").unlink(), "zh.md", 4, "program_language",
     "programs/broadcast.zh.py"),
    (lambda d: [(d / f"{lang}.md").write_text(NEW_LESSON[lang].replace(", tensor-add",
                                                                       ", no-such"))
                for lang in LANGUAGES], "en.md", 4, "program", "no program “no-such”"),
    (lambda d: (d / "zh.md").write_text(NEW_LESSON["zh"].replace("program.broadcast: 拉伸一行\n",
                                                                 "")),
     "zh.md", 4, "program_title", "program.broadcast: …"),
    (lambda d: (d / "programs" / "broadcast.en.py").write_bytes(b"print(1)\n\xff\n"),
     "programs/broadcast.en.py", 2, "not_utf8", "UTF-8"),
    (lambda d: shutil.copytree(d, d.parent / f"{OWN + 2:02d}-broadcasting"),
     f"{OWN + 2:02d}-broadcasting", None, "duplicate", f"also the key of {ADDED}"),
    (lambda d: _both(d, "look:", "predict: y\nlook:"), "en.md", 6, "predict_page",
     "“predict” asks on the Backward page: this lesson opens “playground”"),
    (lambda d: _both(d, "page: playground\n", "page: backward\n", "look:",
                     "predict: y, x.grad()\nlook:"), "en.md", 6, "predict_item",
     "“x.grad()” is not something to predict"),
]


def _both(folder: Path, *edits: str) -> None:
    """The new lesson with each (old, new) pair of `edits` made in every language."""
    for lang in LANGUAGES:
        text = NEW_LESSON[lang]
        for old, new in zip(edits[::2], edits[1::2], strict=True):
            text = text.replace(old, new)
        (folder / f"{lang}.md").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("change", "file", "line", "kind", "words"), BROKEN_FOLDERS,
                         ids=[case[3] for case in BROKEN_FOLDERS])
def test_a_broken_lesson_folder_is_left_out_alone(
        teacher: Path, change: Callable[[Path], object], file: str, line: int | None,
        kind: str, words: str) -> None:
    added = add_lesson(teacher)
    change(added)
    shelf = lessons.shelf()
    assert len(shelf.lessons) == OWN + (kind == "duplicate")  # the first of two twins stays
    (problem,) = shelf.problems
    path = teacher / file if kind == "duplicate" else added / file
    assert (problem.path, problem.line, problem.kind) == (path, line, kind)
    assert words in problem.message("en")
    assert re.search(r"[\u4e00-\u9fff]", problem.reason("zh"))


def test_a_lesson_on_the_backward_page_names_what_it_asks_and_its_hint(teacher: Path) -> None:
    added = add_lesson(teacher)
    _both(added, "page: playground\n", "page: backward\n", "look:",
          "predict: y, x.grad\nhint: Two paths meet at y.\nlook:")
    (zh := added / "zh.md").write_text(zh.read_text(encoding="utf-8").replace(
        "Two paths meet at y.", "两条路径在 y 汇合。"), encoding="utf-8")
    lesson = lessons.by_key("broadcasting")
    assert lesson.predict == ("y", "x.grad")
    assert lesson.hint == {"en": "Two paths meet at y.", "zh": "两条路径在 y 汇合。"}
    assert lessons.by_key("what-is-pytorch").predict == ()  # asked only where named


def test_a_lessons_folder_that_is_not_there_is_named(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lessons.VARIABLE, str(tmp_path / "nowhere"))
    (problem,) = lessons.shelf().problems
    assert problem.path == tmp_path / "nowhere" and "EXPLORER_LESSONS" in problem.message("en")
    assert not lessons.lessons()


def test_the_app_s_own_lessons_are_untouched_by_a_teacher_s_edits(teacher: Path) -> None:
    zh = teacher / "01-what-is-pytorch" / "zh.md"
    zh.write_text("broken\n", encoding="utf-8")
    assert lessons.load(lessons.FOLDER).problems == ()
    assert len(lessons.shelf().problems) == 1
