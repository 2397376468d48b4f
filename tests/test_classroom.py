"""The protocol-level learner (explorer.bench.classroom) against the real app over its websocket."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import websockets

from explorer.bench.classroom import Learner, Run, connect, play
from explorer.bench.relay import ASKED, FINISHED, latency, relays
from explorer.bench.served import pinned, threads_under
from tests.programs import SEED


async def _visit(url: str, code: str, presses: int) -> list[Run]:
    address = url.replace("http", "ws", 1) + "/_stcore/stream"
    async with websockets.connect(address, subprotocols=["streamlit"], max_size=None) as socket:
        learner = Learner(socket)
        runs = [await learner.open(code)]
        for _ in range(presses):
            runs.append(await learner.press_run())
        return runs


def test_a_learner_opens_a_lesson_link_and_presses_run(app_url: str) -> None:
    runs = play(_visit(app_url, SEED, presses=2))
    assert [r.ok for r in runs] == [True, True, True], runs
    assert all(0 < r.latency_s < 60 for r in runs)


def test_a_program_typed_into_the_editor_is_the_one_that_runs(app_url: str) -> None:
    async def visit() -> list[Run]:
        async with connect(app_url) as socket:
            learner = Learner(socket)
            return [await learner.open(SEED), await learner.type_and_run("print(nowhere)\n"),
                    await learner.type_and_run(SEED + "# again\n")]

    opened, typed, fixed = play(visit())
    assert opened.ok and not typed.ok and "NameError" in typed.problem and fixed.ok


def test_a_failing_program_counts_as_a_problem_with_its_words(app_url: str) -> None:
    (run,) = play(_visit(app_url, "x = 1\nprint(undefined_name)\n", presses=0))
    assert not run.ok and "NameError" in run.problem


class _Counted:
    """A websocket that counts the bytes it receives."""

    def __init__(self, socket: object) -> None:
        self.socket, self.received = socket, 0

    async def send(self, message: bytes) -> None:
        await self.socket.send(message)

    async def recv(self) -> bytes:
        message = await self.socket.recv()
        self.received += len(message)
        return message


def test_the_editors_code_crosses_the_websocket_once_per_tab(app_url: str) -> None:
    # The editor's 370 KB bundle is an element of its own whose message never changes: a tab
    # that keeps it (as this learner does, like a browser) is sent its hash alone.
    async def visit() -> list[tuple[Run, int]]:
        async with connect(app_url) as socket:
            counted = _Counted(socket)
            learner, seen = Learner(counted), []
            for run in (lambda: learner.open(SEED), learner.press_run,
                        lambda: learner.type_and_run(SEED + "print('typed')\n")):
                before = counted.received
                seen.append((await run(), counted.received - before))
            return seen

    (opened, first), *again = play(visit())
    assert opened.ok and first > 300_000, first
    for run, size in again:
        assert run.ok and size < 50_000, (run, size)


def test_the_relay_notes_a_sessions_runs_as_they_cross_the_wire(app_url: str) -> None:
    # The calibration's relay (explorer.bench.relay) between a learner and the real app: it
    # forwards every byte (the learner's runs go well) and notes each run asked for and each
    # script finished, as the learner itself times them.
    async def visit(url: str) -> list[tuple[Run, float, float]]:
        async with connect(url) as socket:
            learner, runs = Learner(socket), []
            for code in (SEED, SEED + "# again\n", "print(nowhere)\n"):
                since = time.monotonic()
                run = await (learner.type_and_run(code) if runs else learner.open(code))
                runs.append((run, since, time.monotonic()))
            return runs

    with relays(app_url, 1) as wire:
        runs = play(visit(f"http://127.0.0.1:{wire.ports[0]}"))
    notes = wire.notes[wire.ports[0]]
    assert [r.ok for r, _, _ in runs] == [True, True, False]
    assert [kind for _, kind in notes] == [ASKED, FINISHED] * 3
    for run, since, until in runs:
        on_the_wire = latency(notes, since, until)
        assert on_the_wire is not None and 0 < on_the_wire <= run.latency_s
        assert run.latency_s - on_the_wire < 0.05  # what the learner timed, less its own work


def test_a_process_tree_is_pinned_to_cpus_and_let_go() -> None:
    # The calibration gives the server a core of its own (explorer.bench.served.pinned): every
    # thread of the process and of its children, and what they start meanwhile.
    tree = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, threading, time
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        sys.stdin.readline()
        late = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(late.pid, flush=True)
        time.sleep(60)
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert tree.stdout is not None and tree.stdin is not None
        child = int(tree.stdout.readline())
        every = os.sched_getaffinity(tree.pid)
        one = {min(every)}  # a CPU this machine lets it use, whichever that is
        with pinned(tree.pid, one):
            threads = threads_under(tree.pid)
            assert len(threads) >= 3 and child in threads
            assert all(os.sched_getaffinity(t) == one for t in threads)
            tree.stdin.write("\n")
            tree.stdin.flush()
            late = int(tree.stdout.readline())
            assert os.sched_getaffinity(late) == one  # started while pinned: inherited
        assert all(os.sched_getaffinity(t) == every for t in threads_under(tree.pid))
        assert late in threads_under(tree.pid)
    finally:
        for pid in threads_under(tree.pid)[::-1]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        tree.wait()
