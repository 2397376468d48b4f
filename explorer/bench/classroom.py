"""A classroom on one box, measured: `python -m explorer.bench --classroom`.

Each learner is a Streamlit session spoken to over Streamlit's own websocket protocol (its
protobuf BackMsg / ForwardMsg; no browser), so one process plays a hundred of them; like a
tab, it keeps the large messages Streamlit marks cacheable and is then sent their hash
alone. A learner opens the Playground from a lesson link (the program in the URL runs on
open, as a shared link's does), then every `interval_s` seconds presses Run, or types a new
program into the editor and presses Ctrl+Enter (the editor's own message). A run's latency is
from the message that asks for it to the server's "script finished"; it went well if the
page then shows the run's caption ("Ran on …") and no error or warning.

Scenarios: `lesson` (everyone runs the same lesson program), `distinct` (every run's program
differs), `hosted` (the lesson, with the server in hosted mode). Each prints one line:
`classroom: scenario=… sessions=N runs=R p50_s=x p95_s=y errors=E cache_hits=H`; then the
calibration (4 learners' typed programs timed by this client, in a process of its own, and,
side by side, 4 in Chromium: on the wire, as this client times its own, by a relay between
each tab and the server, and in the tab, to the run's "script finished" message and to the
output drawn; each learner's runs in a slot of their own, so that no run meets another:
`classroom: calibration sessions=4 protocol_p50_s=x browser_p50_s=y ratio=r
browser_tab_p50_s=z browser_drawn_p50_s=w`); last, the knee, the fewest sessions at which
the lesson's p95 passes KNEE_S: `classroom: knee_sessions=N`.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from explorer.bench.relay import latency, relays
from explorer.bench.served import CHROMIUM, CHROMIUM_ARGS, pinned, server
from explorer.content.examples import by_key
from explorer.content.i18n import text
from explorer.views.permalink import encode_code

T = TypeVar("T")

PAGE = "Playground"
LESSON = "autograd-basics"
RAN = text("ran_in", "en", device="", threads=0, ms=0).split(" ")[0]  # "Ran"
EDITOR = "autograd_explorer.editor"  # the code editor component's name
REUSED = text("reused", "en")  # the page says a run was kept from an earlier one
KNEE_S = 2.0
# In the calibration's tabs, before the app's scripts: when Ctrl+Enter went down, when each
# "script finished" message came on the websocket (a ForwardMsg whose top-level fields hold
# that one: protobuf read that far, no further), and when the page first shows the output
# `token` in a code block, all on the tab's clock (ms since the epoch).
TAB_CLOCK = """
const now = () => performance.timeOrigin + performance.now();
const tab = window.__tab = {finished: [], pressed: 0, drawn: 0, token: null};
const finishes = buffer => {
  const bytes = new Uint8Array(buffer);
  let at = 0;
  const varint = () => {
    let value = 0, shift = 0, byte;
    do { byte = bytes[at++]; value += (byte & 127) * 2 ** shift; shift += 7; } while (byte & 128);
    return value;
  };
  while (at < bytes.length) {
    const key = varint(), wire = key % 8;
    if (Math.floor(key / 8) === FINISHED) return true;
    if (wire === 0) varint(); else if (wire === 2) { const size = varint(); at += size; }
    else if (wire === 1) at += 8; else if (wire === 5) at += 4; else return false;
  }
  return false;
};
addEventListener("keydown", e => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) tab.pressed = now();
}, true);
const Socket = window.WebSocket;
window.WebSocket = class extends Socket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", e => {
      if (e.data instanceof ArrayBuffer && finishes(e.data)) tab.finished.push(now());
    });
  }
};
const look = () => {
  if (tab.token && !tab.drawn) for (const block of document.querySelectorAll(
      "[data-testid='stCode']")) {
    if (block.innerText.includes(tab.token)) { tab.drawn = now(); break; }
  }
  setTimeout(look, 2);
};
look();
""".replace("FINISHED", str(ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number))
RUN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Run:
    """One press of Run (or the link's run on open), as the learner saw it."""

    latency_s: float
    ok: bool
    problem: str = ""  # what went wrong: the error's first words, "timeout", "no result"
    reused: bool = False  # the server kept the result from an earlier run


class Learner:
    """One Streamlit session on the Playground, over the websocket."""

    def __init__(self, socket: Any) -> None:  # a websockets client connection
        self.socket = socket
        self.run_button = ""
        self.editor = ""  # the code editor component's id
        self.kept: dict[str, ForwardMsg] = {}  # as a tab keeps them: cacheable ones, by hash

    async def open(self, code: str) -> Run:
        """Open the page from a link carrying `code`: it runs on open."""
        return await self._rerun(f"code={encode_code(code)}&lang=en")

    async def press_run(self) -> Run:
        """Press Run (the program in the editor runs again)."""
        return await self._rerun("lang=en", trigger=self.run_button)

    async def type_and_run(self, code: str) -> Run:
        """Put `code` in the editor and press Ctrl+Enter, as the editor sends it."""
        return await self._rerun("lang=en", editor_run=code)

    async def _rerun(self, query: str, trigger: str = "", editor_run: str | None = None) -> Run:
        message = BackMsg()
        message.rerun_script.query_string = query
        message.rerun_script.page_name = PAGE
        if trigger:
            widget = message.rerun_script.widget_states.widgets.add()
            widget.id, widget.trigger_value = trigger, True
        if editor_run is not None:  # the editor's state and "run" event, as the editor sends
            widget = message.rerun_script.widget_states.widgets.add()  # them on Ctrl+Enter
            widget.id, widget.json_value = self.editor, json.dumps({"code": editor_run})
            widget = message.rerun_script.widget_states.widgets.add()
            widget.id = f"$$STREAMLIT_INTERNAL_KEY_{self.editor}__events"  # its events' id
            widget.json_trigger_value = json.dumps([{"event": "run", "value": editor_run}])
        message.rerun_script.cached_message_hashes.extend(self.kept)
        started = time.perf_counter()
        ran, reused, problem = False, False, ""
        try:
            async with asyncio.timeout(RUN_TIMEOUT_S):
                await self.socket.send(message.SerializeToString())
                while True:
                    reply = self._kept(await self.socket.recv())
                    kind = reply.WhichOneof("type")
                    if kind == "script_finished":
                        break
                    if kind != "delta" or reply.delta.WhichOneof("type") != "new_element":
                        continue
                    element = reply.delta.new_element
                    shown = element.WhichOneof("type")
                    if shown == "button" and element.button.label == "Run":
                        self.run_button = element.button.id
                    elif shown == "bidi_component" and element.bidi_component.component_name \
                            == EDITOR:
                        self.editor = element.bidi_component.id
                    elif shown == "markdown" and element.markdown.body.startswith(RAN):
                        ran = True
                    elif shown == "markdown" and element.markdown.body == REUSED:
                        reused = True
                    elif shown in ("alert", "exception") and not problem:
                        body = element.alert.body if shown == "alert" else element.exception.message
                        problem = " ".join(body.split()[:6]) or shown
        except TimeoutError:
            return Run(time.perf_counter() - started, False, "timeout")
        except websockets.ConnectionClosed:  # its replica went away
            return Run(time.perf_counter() - started, False, "disconnected")
        latency = time.perf_counter() - started
        return Run(latency, ran and not problem, problem or ("" if ran else "no result"),
                   reused)


    def _kept(self, received: bytes) -> ForwardMsg:
        """A message as the tab reads it: one sent by its hash alone (Streamlit's message
        cache: one the tab said it keeps) is the kept one; a cacheable one is kept."""
        reply = ForwardMsg()
        reply.ParseFromString(received)
        if reply.WhichOneof("type") == "ref_hash":
            return self.kept[reply.ref_hash]
        if reply.metadata.cacheable:
            self.kept[reply.hash] = reply
        return reply


def connect(url: str, cookie: str | None = None) -> Any:
    """A new page's websocket to the app at `url` (with a load balancer's `cookie`): a new
    Streamlit session. Use it as `async with`, or await it."""
    return websockets.connect(url.replace("http", "ws", 1) + "/_stcore/stream",
                              subprotocols=["streamlit"], max_size=None,
                              open_timeout=RUN_TIMEOUT_S,
                              additional_headers={"Cookie": cookie} if cookie else None)


async def learner(url: str, program: Callable[[int], str], until: float, interval_s: float,
                  runs: list[Run]) -> None:
    """A learner: open the lesson link, then every `interval_s` until `until` run the program
    `program(number)`: the same one again by pressing Run, a new one by typing it into the
    editor and pressing Ctrl+Enter."""
    await asyncio.sleep(random.uniform(0, interval_s))  # the class does not click in step
    async with connect(url) as socket:
        session = Learner(socket)
        runs.append(await session.open(program(0)))
        number = 1
        while time.monotonic() + interval_s < until and session.run_button and session.editor:
            await asyncio.sleep(interval_s)
            code = program(number)
            same = code == program(number - 1)
            runs.append(await (session.press_run() if same else session.type_and_run(code)))
            number += 1


async def _class(url: str, sessions: int, duration_s: float, interval_s: float,
                 distinct: bool) -> list[Run]:
    runs: list[Run] = []
    until = time.monotonic() + duration_s
    lesson = by_key(LESSON).code

    def program_of(learner_number: int) -> Callable[[int], str]:
        if not distinct:
            return lambda _: lesson
        return lambda n: f"{lesson}# learner {learner_number}, run {n}\n"

    await asyncio.gather(*(learner(url, program_of(i), until, interval_s, runs)
                           for i in range(sessions)))
    return runs


CALIBRATION_PACE_S = 4.0  # between one learner's runs in the calibration


@dataclass
class Calibration:
    """The calibration's latencies, in seconds: this client's (to "script finished"); the
    browser's on the wire (its run request to the server's "script finished", noted by a
    relay between tab and server: what the server gives a tab's session); and the browser's
    in the tab, from the key going down to the same message and to the run's output drawn."""

    protocol: list[float]
    browser: list[float]
    tab: list[float]
    drawn: list[float]


def _program(who: str, learner: int, run: int) -> str:
    """A calibration run's program: the lesson, printing whose run it is."""
    return f"{by_key(LESSON).code}print('{who}-{learner}-{run}')\n"


async def _paced(run: int, begun: float, slot: int, slots: int) -> None:
    """Wait for a calibration learner's `run`: each learner has its `slot` of the pace, so
    that no run meets another in the server."""
    due = begun + (run + slot / slots) * CALIBRATION_PACE_S
    await asyncio.sleep(max(0.0, due - time.monotonic()))


async def _opened(everyone: Any) -> None:
    """Wait until every learner of the calibration, of both clients, has opened the lesson."""
    await asyncio.to_thread(everyone.wait, RUN_TIMEOUT_S)


def _protocol_side(url: str, sessions: int, runs: int, everyone: Any) -> list[float]:
    """This client's part of the calibration, in a process of its own: in the process that
    drives the browsers, its learners would hear the server only when Playwright's own
    traffic with them let them."""
    async def learner(number: int) -> list[float]:
        async with connect(url) as socket:
            session = Learner(socket)
            await session.open(by_key(LESSON).code)
            await _opened(everyone)
            begun, seen = time.monotonic(), []
            for run in range(runs):
                await _paced(run, begun, 2 * number, 2 * sessions)
                seen.append((await session.type_and_run(_program("p", number, run))).latency_s)
            return seen

    async def everyone_of_them() -> list[float]:
        return [t for seen in await asyncio.gather(*map(learner, range(sessions)))
                for t in seen]

    return asyncio.run(everyone_of_them())


async def _calibration(url: str, sessions: int, runs: int, cpus: set[int]) -> Calibration:
    """The same work from this client and from Debian's Chromium, side by side: `sessions`
    learners of each open the lesson link; once all have, each runs `runs` programs of its
    own, one every CALIBRATION_PACE_S, typed into the editor and run with Ctrl+Enter. Each
    tab reaches the app through a relay of its own (explorer.bench.relay). All of it runs on
    `cpus`: this thread's CPUs, which every process it starts inherits."""
    from playwright.async_api import async_playwright, expect

    lesson = by_key(LESSON).code
    result = Calibration([], [], [], [])
    windows: list[tuple[int, float, float]] = []  # a tab's relay port, and when a run began, ended

    async def browser(chromium: Any, number: int, everyone: Any, port: int) -> None:
        context = await chromium.new_context(viewport={"width": 1400, "height": 1000})
        await context.add_init_script(TAB_CLOCK)
        try:
            page = await context.new_page()
            await page.goto(f"http://127.0.0.1:{port}/{PAGE}?code={encode_code(lesson)}&lang=en")
            await expect(page.get_by_text(RAN).first).to_be_visible(timeout=RUN_TIMEOUT_S * 1e3)
            await _opened(everyone)
            begun = time.monotonic()
            for run in range(runs):
                code = _program("b", number, run)
                await page.get_by_label("Code").fill(code)
                await _paced(run, begun, 2 * number + 1, 2 * sessions)
                token = code.splitlines()[-1].split("'")[1]  # what its last line prints
                before = await page.evaluate("token => { window.__tab.token = token; "
                                             "window.__tab.drawn = 0; "
                                             "return window.__tab.finished.length; }", token)
                since = time.monotonic()
                await page.get_by_label("Code").press("Control+Enter")
                # The run's rerun is the last to finish: wait until it has, and is drawn.
                await page.wait_for_function(
                    "n => window.__tab.drawn > 0 && window.__tab.finished.length > n && "
                    "performance.timeOrigin + performance.now() - window.__tab.finished.at(-1)"
                    " > 300", arg=before, timeout=RUN_TIMEOUT_S * 1e3, polling=20)
                windows.append((port, since, time.monotonic()))
                tab = await page.evaluate("window.__tab")
                result.tab.append((tab["finished"][-1] - tab["pressed"]) / 1000)
                result.drawn.append((tab["drawn"] - tab["pressed"]) / 1000)
        finally:
            await context.close()

    os.sched_setaffinity(0, cpus)
    spawn = multiprocessing.get_context("spawn")
    with relays(url, sessions) as wire, spawn.Manager() as manager, \
            ProcessPoolExecutor(1, mp_context=spawn) as other:
        everyone = manager.Barrier(2 * sessions)
        ours = other.submit(_protocol_side, url, sessions, runs, everyone)  # side by side
        # The browsers draw only when no other client would run (SCHED_IDLE: a policy of this
        # thread's, which Playwright's driver and the Chromium it starts inherit).
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        async with async_playwright() as playwright:
            chromium = await playwright.chromium.launch(executable_path=CHROMIUM,
                                                        args=CHROMIUM_ARGS)
            try:
                await asyncio.gather(*(browser(chromium, i, everyone, port)
                                       for i, port in enumerate(wire.ports)))
            finally:
                await chromium.close()
        result.protocol = await asyncio.wrap_future(ours)
    for port, since, until in windows:
        if (seconds := latency(wire.notes[port], since, until)) is not None:
            result.browser.append(seconds)
    return result


def calibration(url: str, server_pid: int, sessions: int = 4, runs: int = 5) -> str:
    """This client against the browser client on the same work, as a printed line. The
    learners' browsers would draw on their own machines: here the server (process
    `server_pid` and all under it) has a core of its own, and the clients the others."""
    cpus = sorted(os.sched_getaffinity(0))
    server_cpus, clients = ({cpus[0]}, set(cpus[1:])) if len(cpus) > 1 else (set(cpus),) * 2
    with pinned(server_pid, server_cpus):
        seen = play(_calibration(url, sessions, runs, clients))
    protocol, browser = statistics.median(seen.protocol), statistics.median(seen.browser)
    return (f"classroom: calibration sessions={sessions} protocol_p50_s={protocol:.3f} "
            f"browser_p50_s={browser:.3f} ratio={protocol / browser:.2f} "
            f"browser_tab_p50_s={statistics.median(seen.tab):.3f} "
            f"browser_drawn_p50_s={statistics.median(seen.drawn):.3f}")


def scenario(url: str, sessions: int, duration_s: float, interval_s: float,
             distinct: bool = False) -> list[Run]:
    """`sessions` learners for `duration_s` seconds, each pressing Run every `interval_s`."""
    return play(_class(url, sessions, duration_s, interval_s, distinct))


def play(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on a loop of its own, in a thread of its own: the caller's thread may
    already run a loop (Playwright's sync API keeps one)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def line(name: str, sessions: int, runs: list[Run]) -> str:
    """The scenario's one line, as the module's docstring gives it."""
    p50 = statistics.median(r.latency_s for r in runs) if runs else 0.0
    errors = sum(not r.ok for r in runs)
    hits = sum(r.reused for r in runs)
    return (f"classroom: scenario={name} sessions={sessions} runs={len(runs)} p50_s={p50:.3f} "
            f"p95_s={p95(runs):.3f} errors={errors} cache_hits={hits}")


def p95(runs: list[Run]) -> float:
    """The 95th percentile of the runs' latencies (0 without runs)."""
    latencies = sorted(r.latency_s for r in runs)
    return latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if runs else 0.0


@contextmanager
def served(hosted: bool) -> Iterator[tuple[str, int]]:
    """The app on this machine (hosted mode or local), warmed by one run: its URL and the
    server's pid."""
    with tempfile.TemporaryFile() as log, server(log, hosted=hosted) as (url, process):
        scenario(url, 1, 0.0, 0.1)  # the worker's first run imports PyTorch: not a learner's
        yield url, process.pid


def classroom(quick: bool, progress: Callable[[str], None]) -> list[str]:
    """Every scenario and the knee, as printed lines."""
    sessions, duration, interval = (4, 12.0, 3.0) if quick else (100, 120.0, 10.0)
    lines = []
    problems: list[str] = []
    with served(hosted=False) as (url, pid):
        for name, distinct in (("lesson", False), ("distinct", True)):
            progress(f"classroom: {name}, {sessions} sessions")
            runs = scenario(url, sessions, duration, interval, distinct)
            lines.append(line(name, sessions, runs))
            problems += [r.problem for r in runs if not r.ok]
        progress("classroom: calibration against Chromium, 4 sessions")
        calibrated = calibration(url, pid, runs=2 if quick else 5)
        counts = (2, 4) if quick else (25, 50, 100, 150, 200, 300)
        knee = f">{counts[-1]}"  # not reached
        for count in counts:
            progress(f"classroom: knee, {count} sessions")
            if p95(scenario(url, count, duration / 3, interval)) > KNEE_S:
                knee = str(count)
                break
    with served(hosted=True) as (url, _):
        progress(f"classroom: hosted, {sessions} sessions")
        runs = scenario(url, sessions, duration, interval)
        lines.append(line("hosted", sessions, runs))
        problems += [r.problem for r in runs if not r.ok]
    lines.append(calibrated)
    if problems:
        seen = statistics.multimode(problems)
        lines.append(f"classroom: most frequent problem: {seen[0]!r} ({problems.count(seen[0])})")
    lines.append(f"classroom: knee_sessions={knee}")
    return lines
