"""Predict, then see, on a page that replays a backward pass: before an engine step is shown,
the learner types the gradients it will send (explorer.views.predict); the engine's own
values judge them. A lesson may name what to ask, with a hint; a link carries both the
switch and those names, never an answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from explorer.content.i18n import text
from explorer.content.markdown import code_span
from explorer.trace import Trace
from explorer.trace.schema import Call, Graph
from explorer.ui.link import keep, restore, take
from explorer.views.numbers import written
from explorer.views.permalink import NAME
from explorer.views.predict import (
    ATOL,
    RTOL,
    Question,
    Unreadable,
    Verdict,
    entry,
    judge,
    questions,
    read,
    score,
    shaped,
)

LINE = "  \n"  # a line break in markdown: a verdict's sentences a line each
Answers = dict[int, dict[str, Verdict]]  # engine step → question → verdict
Names = Callable[[str], str]  # a node's id → its name as the page shows it


@dataclass(frozen=True)
class Quiz:
    """What the replay of `call` (of `trace`, over its `graph`) asks on `page`: all it can, or
    only what a lesson named (`ask`), with the lesson's `hint`."""

    page: str
    trace: Trace
    call: Call
    graph: Graph
    name: Names
    ask: tuple[str, ...] = ()
    hint: str = ""

    def questions(self, index: int) -> list[Question]:
        return questions(self.call, index, self.graph, self.ask)

    def answers(self) -> Answers:
        """This run's answers for the call; a new run starts with none."""
        key = f"{self.page}.predict.answers"
        kept = st.session_state.get(key)
        if kept is None or kept[0] is not self.trace:
            kept = st.session_state[key] = (self.trace, {})
        return kept[1].setdefault(self.call.call, {})


def asking(page: str, code: str | None, lang: str) -> tuple[tuple[str, ...], str] | None:
    """The page's "Predict, then see" switch: None when off, else what to ask (a lesson's
    names while its program is the one that ran, or a link's; () for everything) and the
    hint. Both are kept in the page's link."""
    key, lesson = f"{page}.predict", f"{page}.ask"
    restore("predict", key)
    linked = take("ask")
    if linked:
        st.session_state[lesson] = {"code": None, "ask": tuple(linked)}
    on = st.toggle(text("predict_toggle", lang), key=key, help=text("predict_help", lang))
    keep("predict", True if on else None)
    declared = st.session_state.get(lesson)
    if not on:
        return None
    if not declared or declared["code"] not in (None, code):
        return (), ""
    keep("ask", list(declared["ask"]))
    return declared["ask"], declared.get("hint", {}).get(lang, "")


def lesson_asks(page: str, code: str, ask: tuple[str, ...], hint: dict[str, str]) -> None:
    """A lesson opens `code` on `page` asking `ask` (names as permalink.NAME allows)."""
    st.session_state[f"{page}.predict"] = True
    st.session_state[f"{page}.ask"] = {"code": code, "hint": hint,
                                       "ask": tuple(a for a in ask if NAME.fullmatch(a))}


def pending(quiz: Quiz, index: int) -> list[Question]:
    """The questions of engine step `index` not answered yet (the step stays hidden)."""
    answered = quiz.answers().get(index, {})
    asked = quiz.questions(index)
    return [] if all(q.key in answered for q in asked) else asked


def ask(quiz: Quiz, index: int, asked: list[Question], lang: str) -> None:
    """The form that asks `asked`; Check judges every answer, then the step is shown."""
    form = f"{quiz.page}.predict.{quiz.call.call}.{index}"
    st.markdown(f"**{text('predict_title', lang)}**")
    if quiz.hint:
        st.caption(quiz.hint)
    with st.form(form, border=True):
        for question in asked:
            st.text_input(_what(question, quiz.name, lang), key=f"{form}.{question.key}",
                          placeholder=text("predict_placeholder", lang))
            if problem := st.session_state.get(f"{form}.{question.key}.problem"):
                st.error(text(problem, lang))
        st.form_submit_button(text("predict_check", lang), type="primary", key=f"{form}.check",
                              on_click=_check, args=(quiz, index, asked, form))
    st.caption(text("predict_tolerance", lang, rtol=f"{RTOL:.0%}", atol=ATOL))


def _check(quiz: Quiz, index: int, asked: list[Question], form: str) -> None:
    """Judge the typed answers; one that is no number keeps the step hidden and says why."""
    verdicts = {}
    for question in asked:
        key = f"{form}.{question.key}"
        try:
            verdicts[question.key] = judge(read(st.session_state.get(key, "")),
                                           question.gradient)
            st.session_state.pop(f"{key}.problem", None)
        except Unreadable as problem:
            st.session_state[f"{key}.problem"] = str(problem)
    if len(verdicts) == len(asked):
        quiz.answers()[index] = verdicts


def verdicts(quiz: Quiz, index: int, lang: str) -> None:
    """How the learner's predictions of step `index` went, with the call's score so far."""
    answered = quiz.answers()
    if index not in answered:
        return
    for question in quiz.questions(index):
        verdict = answered[index].get(question.key)
        if verdict is None:
            continue
        what = _what(question, quiz.name, lang)
        engine = code_span(written(question.gradient.values))
        if verdict.right:
            st.success(text("predict_right", lang, what=what, value=engine),
                       icon=":material/check_circle:")
            continue
        typed = written(shaped(verdict.typed, question.gradient.shape))
        wrong = text("predict_wrong", lang, what=what, value=engine, typed=code_span(typed))
        if len(verdict.typed) == len(verdict.expected) and len(verdict.expected) > 1:
            wrong += LINE + text("predict_differ", lang, at=", ".join(
                entry(k, question.gradient.shape) for k in verdict.wrong))
        elif len(verdict.typed) != len(verdict.expected):
            wrong += LINE + text("predict_count", lang, expected=len(verdict.expected),
                                 typed=len(verdict.typed))
        st.error(wrong, icon=":material/cancel:")
    right, asked = score(answered)
    st.caption(text("predict_score", lang, call=quiz.call.call, right=right, asked=asked))


def _what(question: Question, name: Names, lang: str) -> str:
    return text(f"predict_{question.kind}", lang, to=name(question.to))
