"""The one gate before every run and every parse of a visitor's text in the server
(explorer.ui.common.may_run: the program cap, then the session's rate limit), and the editor's
values checked where they arrive (explorer/ui/code_editor.py). Pages are driven with
Streamlit's AppTest; what a browser could send is forged as its widget states."""

from __future__ import annotations

import dataclasses
import gc
import json
import re
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.testing.v1 import AppTest

from explorer.content import lessons
from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.safety.sandbox import MAX_CODE_CHARS, Refused, prepare
from explorer.serve.ratelimit import KEY, RateLimiter
from explorer.ui import common, custom
from explorer.views import devices, training
from explorer.views.permalink import encode_code

VISITOR = "visitor"  # the session's rate-limit bucket
MIB = 2**20


@pytest.fixture
def limiter(monkeypatch: pytest.MonkeyPatch) -> RateLimiter:
    """The app's rate limiter for this test: a burst of 100 that never refills."""
    runs = RateLimiter(burst=100, interval_s=3600.0)
    monkeypatch.setattr(common, "RUNS", runs)
    return runs


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The programs the app's worker pool is asked to run from now on for a visitor: the
    server's own question, once per process, of how many GPUs it has is asked first."""
    common.cuda_devices()
    pool, asked = common.pool(), []
    run = pool.run

    def counted(code: str, **kwargs: Any) -> Any:
        asked.append(code)
        return run(code, **kwargs)

    monkeypatch.setattr(pool, "run", counted)
    return asked


def app(page: str | None = None, lang: str = "en", **query: str) -> AppTest:
    """A fresh session (its bucket VISITOR) on `page`, opened with the URL query `query`."""
    at = AppTest.from_file("../streamlit_app.py", default_timeout=90)
    at.query_params.update({"lang": lang, **query})
    at.session_state[KEY] = VISITOR
    if page is not None:
        at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def drain(limiter: RateLimiter) -> None:
    """Spend the rest of the session's burst."""
    while limiter.take(VISITOR) == 0:
        pass


def waits(at: AppTest, lang: str = "en") -> bool:
    """Whether the page says the session must wait (explorer.serve.ratelimit)."""
    said = re.escape(text("rate_limited", lang, seconds=999)).replace("999", r"\d+")
    return any(re.fullmatch(said, str(w.value)) for w in at.warning)


def editor_states(at: AppTest, **values: object) -> WidgetStates:
    """The widget states of `at` as its browser would send them, with its editor sending
    `values`: `code` (its state) and `run` (its Ctrl+Enter trigger) or any other, as is."""
    (editor,) = [e.proto for e in at.get("bidi_component")
                 if e.proto.component_name.endswith("autograd_explorer.editor")]
    states = at._tree.get_widget_states()
    run = values.pop("run", None)
    if values:
        states.widgets.append(WidgetState(id=editor.id, json_value=json.dumps(values)))
    if run is not None:
        states.widgets.append(WidgetState(id=_make_trigger_id(editor.id, "events"),
                                          json_trigger_value=json.dumps(
                                              [{"event": "run", "value": run}])))
    return states


def send(at: AppTest, **values: object) -> AppTest:
    """Rerun `at` after its editor sent `values` (`editor_states`)."""
    at._run(editor_states(at, **values))
    assert not at.exception, at.exception
    return at


def longest_kept(at: AppTest) -> int:
    """The longest text (characters, or bytes of a widget's message as the browser sent it)
    that the session keeps anywhere: its own values and its widgets', sent or read."""
    state = at._session_state._state
    stack: list[Any] = [state._old_state, state._new_session_state,
                        state._new_widget_state.states]
    seen: set[int] = set()
    longest = 0
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, str | bytes):
            longest = max(longest, len(item))
        elif isinstance(item, Message):
            longest = max(longest, item.ByteSize())
        elif isinstance(item, dict):
            stack += [*item, *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            stack += item
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack += [getattr(item, field.name) for field in dataclasses.fields(item)]
    return longest


def too_long(count: int, lang: str = "en") -> str:
    return text("code_too_long", lang, count=count, cap=MAX_CODE_CHARS)


def errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def program(chars: int) -> str:
    """A program of `chars` characters (a whole number of lines of six)."""
    return "x = 1\n" * (chars // 6)


def custom_page() -> AppTest:
    """The Custom Function page after a run of its default program, checked."""
    at = app("pages/6_Custom_Function.py")
    at.button(key="custom.run").click().run()
    assert any("gradcheck passed" in s.value for s in at.success)
    return at


# --- The Custom Function page: its parse passes the gate once per program -----------------

def cost(at: AppTest, states: Callable[[], WidgetStates],
         tries: int = 7) -> tuple[float, float, int]:
    """The least wall time and processor time (s) and the least peak of Python memory (bytes)
    of a rerun of `at` with the widget states `states()`, over `tries` reruns each (states
    made before measuring). Processor time is what the rerun cost the server's process:
    unlike wall time, other processes of a busy machine add nothing to it."""
    walls, cpus, peaks = [], [], []
    for _ in range(tries):
        sent = states()
        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        at._run(sent)
        peaks.append(tracemalloc.get_traced_memory()[1] - start)
        tracemalloc.stop()
        sent = states()
        wall, cpu = time.perf_counter(), time.process_time()
        at._run(sent)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert not at.exception, at.exception
    return min(walls), min(cpus), min(peaks)


def streamlits_own(value: object) -> float:
    """The least time Streamlit takes here with a component's value before any callback of the
    app runs: it decodes the browser's JSON, and encodes it again."""
    sent, times = json.dumps(value), []
    for _ in range(5):
        began = time.process_time()
        json.dumps(json.loads(sent))
        times.append(time.process_time() - began)
    return min(times)


def test_a_2m_character_program_costs_the_custom_page_almost_nothing(
        limiter: RateLimiter, runs: list[str]) -> None:
    at = custom_page()
    ran = list(runs)
    big = program(2_000_000)
    edits = iter(range(1_000_000))
    base_wall, base_cpu, base_peak = cost(
        at, lambda: editor_states(at, code=f"x = {next(edits)}\n"))
    for sent in ({"code": big}, {"run": big}):  # the editor losing focus, Ctrl+Enter
        wall, cpu, peak = cost(at, lambda sent=sent: editor_states(at, **sent))
        streamlit = streamlits_own(sent)
        print(f"{list(sent)}: {(cpu - base_cpu) * 1000:.1f} ms of processor time "
              f"({streamlit * 1000:.1f} ms of it Streamlit's JSON; wall time "
              f"{(wall - base_wall) * 1000:.1f} ms) and {(peak - base_peak) / MIB:.1f} MiB "
              "more than an edit")
        # Before the gate: 9.5 s and 1 GiB for 1.8 M characters, parsed on every rerun.
        assert cpu - base_cpu - streamlit < 0.050, (sent.keys(), cpu, base_cpu, streamlit)
        assert peak - base_peak < 20 * MIB, (sent.keys(), peak, base_peak)
        assert errors(at) == [too_long(len(big))]
        assert longest_kept(at) <= MAX_CODE_CHARS
    assert runs == ran  # nothing run since the page's own run and check
    assert at.session_state["custom.ran"] == by_key("custom-function-relu").code


def test_an_over_cap_program_is_refused_before_its_check_parses_it(
        limiter: RateLimiter, runs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    at = custom_page()
    ran = list(runs)
    parsed: list[str] = []
    monkeypatch.setattr(custom, "gradient_checks", lambda code: parsed.append(code))
    big = program(2_000_000)
    at.session_state["custom.ran"] = big  # as if it had come in some other way
    at.run()
    assert not at.exception and parsed == [] and runs == ran
    assert too_long(len(big)) in errors(at)


def test_the_check_parses_each_program_once(limiter: RateLimiter,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    checks = custom.gradient_checks
    monkeypatch.setattr(custom, "gradient_checks",
                        lambda code: parsed.append(code) or checks(code))
    at = custom_page()
    for tab in ("graph", "backward", "check"):
        at.session_state["custom.tab.en"] = text(f"tab_{tab}", "en")
        at.run()
    send(at, code="x = 1\n")  # an edit: checked when it runs, not before
    assert len(parsed) == 1
    at.button(key="custom.run").click().run()
    assert parsed[1:] == ["x = 1\n"]
    assert text("no_function", "en") in [i.value for i in at.info]


# --- Every action that runs a program spends the rate limit ------------------------------

def test_the_editors_run_button_waits_for_the_rate_limit(limiter: RateLimiter,
                                                        runs: list[str]) -> None:
    at = app("pages/1_Playground.py")
    drain(limiter)
    at.button(key="playground.run").click().run()
    assert waits(at) and runs == [] and "playground.trace" not in at.session_state


def test_ctrl_enter_in_the_editor_waits_for_the_rate_limit(limiter: RateLimiter,
                                                          runs: list[str]) -> None:
    at = app("pages/2_Graph.py")
    drain(limiter)
    send(at, run="y = 2\n")
    assert waits(at) and runs == [] and "graph.trace" not in at.session_state
    assert at.session_state["graph.code"] == "y = 2\n"  # kept, to run when the wait is over


def test_a_lesson_opened_from_home_waits_for_the_rate_limit(limiter: RateLimiter,
                                                           runs: list[str]) -> None:
    lesson = next(item for item in lessons.lessons() if item.page == lessons.BACKWARD)
    at = app()
    drain(limiter)
    at.button(key=f"lesson.{lesson.key}.{lesson.examples[0]}").click().run()
    assert waits(at) and runs == [] and "backward.trace" not in at.session_state


def test_a_program_opened_from_a_link_waits_for_the_rate_limit(limiter: RateLimiter,
                                                              runs: list[str]) -> None:
    drain(limiter)
    at = app("pages/1_Playground.py", code=encode_code("z = 3\n"))
    assert waits(at) and runs == [] and "playground.trace" not in at.session_state


def test_the_gradient_check_waits_for_the_rate_limit(runs: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    at = app("pages/6_Custom_Function.py")
    monkeypatch.setattr(common, "RUNS", RateLimiter(burst=1, interval_s=3600.0))
    at.button(key="custom.run").click().run()
    assert runs == [by_key("custom-function-relu").code]
    assert waits(at) and custom.CHECKED not in at.session_state
    assert not any("gradcheck" in s.value for s in at.success)


def test_opening_the_devices_page_waits_for_the_rate_limit(limiter: RateLimiter,
                                                          runs: list[str]) -> None:
    at = app()
    drain(limiter)
    at.switch_page("pages/4_Devices.py").run()
    assert waits(at) and not at.table and not at.get("plotly_chart")
    assert devices.PROBE not in runs and devices.TIMING not in runs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_measure_again_waits_for_the_rate_limit(limiter: RateLimiter, runs: list[str],
                                                lang: str) -> None:
    at = app("pages/4_Devices.py", lang)
    (timing_key,) = [k for k in at.session_state if k.startswith("devices.timing.")]
    measured = at.session_state[timing_key]
    runs.clear()
    drain(limiter)
    at.button(key="devices.again").click().run()
    assert waits(at, lang) and runs == []
    assert at.session_state[timing_key] is measured and at.get("plotly_chart")  # still shown


def test_training_waits_for_the_rate_limit(limiter: RateLimiter, runs: list[str]) -> None:
    at = app("pages/7_Training.py")
    at.session_state["training.code"] = training.program(training.Settings(iterations=5))
    drain(limiter)
    at.button(key="training.train").click().run()
    assert waits(at) and runs == [] and "training.run" not in at.session_state


def test_opening_an_iteration_waits_for_the_rate_limit(limiter: RateLimiter,
                                                      runs: list[str]) -> None:
    at = app("pages/7_Training.py")
    at.session_state["training.code"] = training.program(training.Settings(iterations=5))
    at.button(key="training.train").click().run()
    assert len(runs) == 1 and "training.run" in at.session_state
    drain(limiter)
    at.button(key="training.open").click().run()
    assert waits(at) and len(runs) == 1 and "training.pass" not in at.session_state


# --- What the editor sends is checked where it arrives -----------------------------------

@pytest.mark.parametrize("sent", [{"code": 12345}, {"code": ["x = 1\n"] * 1000},
                                  {"code": {"nested": "x"}}, {"run": ["x = 1\n"]},
                                  {"code": "x = 1\n", "other": "y" * 1000}])
def test_the_editor_refuses_what_is_not_a_program(limiter: RateLimiter, runs: list[str],
                                                   sent: dict[str, object]) -> None:
    at = app("pages/1_Playground.py")
    before = at.session_state["playground.code"]
    send(at, **sent)
    assert errors(at) == [text("code_not_text", "en")]
    assert at.session_state["playground.code"] == before and runs == []
    assert at.session_state["playground.editor"] == {}  # nothing of what it sent is kept


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_editor_refuses_a_program_over_the_cap_and_keeps_none(
        limiter: RateLimiter, runs: list[str], lang: str) -> None:
    at = app("pages/1_Playground.py", lang)
    before = at.session_state["playground.code"]
    huge = program(8_000_000)
    for sent in ({"code": huge}, {"run": huge}, {"code": before, "run": huge}):
        states = editor_states(at, **sent)
        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        at._run(states)
        del states
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
        assert not at.exception, at.exception
        assert errors(at) == [too_long(len(huge), lang)]
        assert grown < 1 * MIB, (sent.keys(), grown)  # of 8 MB sent
        assert longest_kept(at) <= MAX_CODE_CHARS
        assert at.session_state["playground.code"] == before and runs == []
    send(at, code="w = 4\n")  # an ordinary edit after: taken, and the refusal gone
    assert at.session_state["playground.code"] == "w = 4\n" and not errors(at)


def test_the_editor_takes_a_program_at_the_cap(limiter: RateLimiter) -> None:
    at = app("pages/1_Playground.py")
    longest = "#" * (MAX_CODE_CHARS - 1) + "\n"
    send(at, code=longest)
    assert at.session_state["playground.code"] == longest and not errors(at)
    assert longest_kept(at) >= MAX_CODE_CHARS  # what longest_kept looks at holds it


def test_the_gate_refuses_what_the_sandbox_would() -> None:
    at_cap, over = "#" * MAX_CODE_CHARS, "#" * (MAX_CODE_CHARS + 1)
    prepare(at_cap)
    with pytest.raises(Refused):
        prepare(over)
    assert common.refusal(at_cap, "zh") is None and common.refusal("x = 1\n", "en") is None
    assert common.refusal(over, "zh") == too_long(MAX_CODE_CHARS + 1, "zh")
    assert common.refusal(b"x = 1\n", "en") == text("code_not_text", "en")

