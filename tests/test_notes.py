"""A run's notes are keys and numbers said in the learner's language: every note has its words
in every language, filling the same numbers; a real run's notes read in Chinese hold no English
sentence, and the Graph and Backward pages say which steps and calls were kept; a forged note
is refused before any page says it."""

from __future__ import annotations

import copy
import re
from string import Formatter
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.content.i18n import LANGUAGES, texts
from explorer.record.execute import execute
from explorer.record.thin import fitted
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.check import MAX_LINES
from explorer.trace.notes import SAMPLED, said
from explorer.trace.schema import MAX_NUMBER, MAX_PARTS
from explorer.trace.wire import trace_message
from tests.forged import NOTE, forged

NOTES = sorted(key for key in texts() if key.startswith(("note_", "part_")))
SPECS = {"", ",", ",.1f", "g"}  # formats that write a whole number and a fraction alike
# Every note but the saved-tensor hooks' and the library's undrawn passes (tests/
# test_fidelity.py, tests/test_library_passes.py): full-width punctuation, backward calls and
# lines not kept, a library's backward calls, output dropped; then thinned.
PROGRAM = """from torch.func import grad
x = torch.rand（3)
w = torch.ones(3, requires_grad=True)
for i in range(300):
    loss = (w * i).sum()
    loss.backward()
d = grad(lambda t: t ** 2)(torch.tensor(1.5))
print('x' * 100)
"""
SENTENCE = re.compile(r"[A-Za-z']+(?:[ ,]+[A-Za-z']+){2,}")  # three English words in a row
HAN = re.compile(r"[\u4e00-\u9fff]")


def formats(words: str) -> dict[str, str]:
    """The `{placeholders}` of `words`, each with its format."""
    return {name: spec for _, name, spec, _ in Formatter().parse(words) if name}


@pytest.fixture(scope="module")
def run() -> Trace:
    """PROGRAM's Trace as the server reads it."""
    return Trace.from_json(execute(PROGRAM, limits=Limits(output_chars=10)).to_json())


@pytest.fixture(scope="module")
def thinned(run: Trace) -> Trace:
    """PROGRAM's Trace thinned to half its size, as the server reads it."""
    trace = copy.deepcopy(run)
    return Trace.from_json(fitted(trace, len(trace_message(trace)) // 2))


@pytest.mark.parametrize("key", NOTES)
def test_every_note_says_the_same_numbers_in_every_language(key: str) -> None:
    entry = texts()[key]
    assert set(entry) == set(LANGUAGES)
    numbers = formats(entry["en"])
    assert set(numbers.values()) <= SPECS
    for lang, words in entry.items():
        assert formats(words) == numbers, lang
        for number in (1_234, 1_234.5):  # a run sends either: each format writes both
            assert words.format(**dict.fromkeys(numbers, number))


def test_a_real_runs_notes_read_in_chinese_hold_no_english_sentence(thinned: Trace) -> None:
    keys = {note.key for note in thinned.notes}
    assert {"full_width", "backward_calls", "lines", "library_calls", "output_dropped",
            "thinned"} <= keys, keys
    for note in thinned.notes:
        english, chinese = said(note, "en"), said(note, "zh")
        assert SENTENCE.search(english) and HAN.search(chinese), note
        assert not SENTENCE.search(chinese), chinese
    (lines,) = [note for note in thinned.notes if note.key == "lines"]
    assert said(lines, "en").startswith("Not every line was recorded as a step: 570 lines ran "
                                        "in rounds not kept")
    assert "570 行" in said(lines, "zh")


def shown(page: str, name: str, trace: Trace, lang: str) -> AppTest:
    """Page `page` in `lang` showing `trace`, as after PROGRAM ran there."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(page).run()
    at.session_state[f"{name}.trace"] = trace
    at.session_state[f"{name}.ran"] = at.session_state[f"{name}.code"] = PROGRAM
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(("page", "name"), [("pages/2_Graph.py", "graph"),
                                            ("pages/5_Backward.py", "backward")])
def test_the_graph_and_backward_pages_say_which_steps_and_calls_were_kept(
        run: Trace, page: str, name: str) -> None:
    at = shown(page, name, run, "zh")
    captions = [str(caption.value) for caption in at.caption]
    sampled = [note for note in run.notes if note.key in SAMPLED]
    assert len(sampled) == 2
    for note in sampled:
        assert any(said(note, "zh").split("：")[0] in caption for caption in captions), note
    others = [said(note, "zh")[:6] for note in run.notes if note.key not in SAMPLED]
    assert others and not any(o in caption for o in others for caption in captions)


@pytest.mark.parametrize("note", [
    {"key": "evil"},  # no note of a run's
    {"key": "older_graphs"},  # a part's key
    {"key": "output_dropped", "values": {"count": 1}},  # a number short
    {"key": "packed", "values": {"count": 1}},  # a number too many
    {"key": "output_dropped", "values": {"count": "<img src=x>", "cap": 1}},
    {"key": "output_dropped", "values": {"count": 10**30, "cap": 1}},
    {"key": "output_dropped", "values": {"count": MAX_NUMBER + 1, "cap": 1}},
    {"key": "output_dropped", "values": {"count": -1, "cap": 1}},
    {"key": "packed", "parts": [{"key": "older_graphs"}]},  # parts its words do not hold
    {"key": "lines", "parts": [{"key": "evil"}]},
    {"key": "lines", "values": {"parts": 1}, "parts": [{"key": "older_graphs"}]},
    {"key": "lines", "parts": [{"key": "older_graphs"}] * (MAX_PARTS + 1)},
    {"key": "lines", "parts": [{"key": "lines", "parts": [{"key": "older_graphs"}]}]},
    "The program ran backward 3 times.",  # words: a note is a key and numbers
], ids=str)
def test_a_forged_note_is_refused(note: Any) -> None:
    trace = Trace.from_dict(forged(notes=[NOTE, note]))
    assert not trace.ok and trace.error is not None and trace.error.type == "BadResult", trace


def test_a_flood_of_notes_is_cut_and_a_forged_one_leaves_the_page_whole() -> None:
    assert len(Trace.from_dict(forged(notes=[NOTE] * 10_000)).notes) == MAX_LINES
    at = shown("pages/1_Playground.py", "playground",
               Trace.from_dict(forged(notes=[{"key": "evil", "values": {"x": 1}}])), "zh")
    assert any("BadResult" in str(error.value) for error in at.error)
