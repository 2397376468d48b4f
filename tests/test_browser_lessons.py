"""Every lesson opens and runs from the home page in Chromium, in English and Chinese; and a
teacher adds a lesson with its own program from a folder outside the app, breaks it and fixes
it, seeing each state on the next page load without a restart."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from explorer.bench.served import server
from explorer.content import lessons
from explorer.content.i18n import text, texts
from explorer.ui.common import PAGES
from tests.conftest import ARTIFACTS
from tests.test_content import NEW_LESSON, OWN, PROGRAM, add_lesson

pytestmark = pytest.mark.browser
TITLES = {path: key for path, key, _ in PAGES}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_lesson_runs_in_the_browser(page: Any, app_url: str, lang: str) -> None:
    for number, lesson in enumerate(lessons.lessons()):
        example = lesson.programs[0]
        page.goto(f"{app_url}/?lang={lang}")
        # Click once the home page's first run is over: a click during it was once lost.
        expect(page.locator("[data-testid='stApp']")).to_have_attribute(
            "data-test-script-state", "notRunning")
        card = page.locator("[data-testid='stExpander']").nth(number)
        expect(card).to_contain_text(lesson.title[lang])
        label = text("lesson_open", lang, title=example.title[lang],
                     page=text(TITLES[lesson.page], lang))
        if number:  # the first lesson starts open, the others closed
            card.locator("summary").click()
        heading = page.get_by_role("heading", name=text(TITLES[lesson.page], lang), exact=True)
        card.get_by_role("button", name=label).click()
        try:
            expect(heading).to_be_visible(timeout=15_000)
        except AssertionError:  # in about half of full-suite runs one click here is lost
            card.get_by_role("button", name=label).click()  # (not yet understood): once more
            expect(heading).to_be_visible()
        expect(page.get_by_text(text("lesson_look", lang)).first).to_be_visible()  # shown again
        if lesson.page == lessons.TRAINING:  # it trains as it opens
            fell = texts()["loss_fell"][lang].split("{")[0]  # the words before the numbers
            expect(page.get_by_text(fell)).to_be_visible(timeout=60_000)
        else:
            done = text("ran_in", lang, device="cpu", threads=1, ms=0).split("cpu")[0]
            marker = page.get_by_text(done) if lesson.page == lessons.PLAYGROUND else None
            if marker is not None:
                expect(marker.first).to_be_visible()
        expect(page.locator("[data-testid='stException']")).to_have_count(0)
        errors = page.locator("[data-testid='stAlertContentError']")
        if example.error is None:
            expect(errors).to_have_count(0)
        else:
            expect(errors.first).to_be_visible()
    page.screenshot(path=ARTIFACTS / f"lesson-training-{lang}.png")


@pytest.fixture(scope="module")
def teacher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app served with `EXPLORER_LESSONS` naming a teacher's folder (a copy of the app's
    lessons), and that folder."""
    folder = tmp_path_factory.mktemp("teacher") / "lessons"
    shutil.copytree(lessons.FOLDER, folder)
    with (pytest.MonkeyPatch.context() as env, open(ARTIFACTS / "teacher.log", "w+b") as log):
        env.setenv(lessons.VARIABLE, str(folder))
        with server(log) as (url, _):
            yield url, folder


def _home(page: Any, url: str, lang: str = "en") -> Any:
    page.goto(f"{url}/?lang={lang}")
    expect(page.locator("[data-testid='stApp']")).to_have_attribute(
        "data-test-script-state", "notRunning")
    expect(page.locator("[data-testid='stExpander']").first).to_be_visible()
    return page.locator("[data-testid='stExpander']")


def test_a_teacher_adds_breaks_and_fixes_a_lesson_without_a_restart(
        page: Any, teacher: tuple[str, Path]) -> None:
    url, folder = teacher
    cards = _home(page, url)
    expect(cards).to_have_count(OWN)
    added = add_lesson(folder)  # a lesson with a program of its own
    cards = _home(page, url)
    expect(cards).to_have_count(OWN + 1)
    card = cards.nth(OWN)
    expect(card).to_contain_text(f"{OWN + 1}. Broadcasting, by a teacher")
    card.locator("summary").click()
    label = text("lesson_open", "en", title="Stretching a row", page=text("playground", "en"))
    card.get_by_role("button", name=label).click()
    expect(page.get_by_role("heading", name=text("playground", "en"), exact=True)).to_be_visible()
    expect(page.get_by_text(text("lesson_look", "en")).first).to_be_visible()
    expect(page.get_by_text("The shapes column.")).to_be_visible()
    expect(page.get_by_text("tensor([[1., 2., 3.]").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "lesson-teacher-opened.png")

    en = added / "en.md"
    en.write_text(NEW_LESSON["en"].replace("look:", "look"), encoding="utf-8")  # broken
    for lang in ("en", "zh"):
        cards = _home(page, url, lang)
        box = page.locator("[data-testid='stAlertContentError']")
        expect(box).to_contain_text(text("lessons_broken", lang))
        expect(box).to_contain_text(f"{en}:6")
        reason = lessons.load(folder).problems[0].reason(lang)
        expect(box).to_contain_text(reason.replace("`", ""))  # `name: value` as code
        expect(cards).to_have_count(OWN)  # the others are still there
        expect(cards.nth(OWN - 1)).to_contain_text(lessons.lessons()[OWN - 1].title[lang])
    page.screenshot(path=ARTIFACTS / "lesson-teacher-broken.png")

    en.write_text(NEW_LESSON["en"].replace("by a teacher", "fixed"), encoding="utf-8")
    (added / "programs" / "broadcast.en.py").write_text(
        PROGRAM["en"].replace("torch.arange(3)", "torch.arange(3) * 10"), encoding="utf-8")
    cards = _home(page, url)
    expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)
    expect(cards).to_have_count(OWN + 1)
    card = cards.nth(OWN)
    expect(card).to_contain_text(f"{OWN + 1}. Broadcasting, fixed")
    card.locator("summary").click()
    card.get_by_role("button", name=label).click()
    expect(page.get_by_text("tensor([[ 1., 11., 21.]").first).to_be_visible()
