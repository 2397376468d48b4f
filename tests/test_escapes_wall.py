"""Hostile programs (`tests/escapes_wall.py`) through a real worker pool, judged by effect.

Each program, whatever stops it: the secret comes back in no Trace (its JSON, stdout, error),
the canary is never made, nothing is left in the pool's directory or made by the box's user in
the temporary directory,
no run process outlives its run, the run ends within its time limit + 1 s, and the next run
works. A native crash ends as a clear error. The last tests give the server's side of the
wall unguarded programs: a zygote whose runs `exec` the program after entering their child
exactly as a run does.
"""

from __future__ import annotations

import secrets
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest

from explorer.pool.worker import GRACE_S, PROGRESS_PER_S, WorkerPool
from explorer.safety import box, confine
from explorer.safety.limits import Limits
from explorer.serve.hosting import WITHOUT_WALLS
from explorer.trace import Trace
from tests.escapes_wall import HOSTILE, WALL_LIMITS, Hostile
from tests.test_worker import clock_started, run_processes, wait_until

NEXT = "print(6 * 7)"
SLACK_S = 1.0  # scheduling on two cores shared with other work
Outcome = tuple[Trace, float, Trace]  # the run, its wall time, the next run after it
CATEGORIES = {"files", "listing", "exec", "network", "processes", "ipc", "signals", "proc",
              "bombs", "native"}


@pytest.fixture(scope="module")
def canary() -> Iterator[tuple[Path, str]]:
    """A directory with a secret file; `canary` inside it must never come to exist."""
    with tempfile.TemporaryDirectory(prefix="explorer-canary-") as place:
        folder = Path(place)
        folder.chmod(0o755)
        token = secrets.token_hex(16)
        (folder / "secret").write_text(token)
        (folder / "secret").chmod(0o644)
        yield folder, token


@pytest.fixture(scope="module")
def outcomes(pool: WorkerPool, canary: tuple[Path, str]) -> dict[str, Outcome]:
    folder, _ = canary
    before = set(Path(tempfile.gettempdir()).iterdir())
    assert pool.run(NEXT).stdout == "42\n"  # the zygote has started: its start is not timed

    def one(program: Hostile) -> tuple[str, Outcome]:
        code = program.code.replace("CANARY", str(folder / "canary"))
        code = code.replace("SECRET", str(folder / "secret"))
        started = time.monotonic()
        trace = pool.run(code, limits=WALL_LIMITS)
        return program.id, (trace, time.monotonic() - started, pool.run(NEXT))

    with ThreadPoolExecutor(max_workers=pool.size) as threads:
        found = dict(threads.map(one, HOSTILE))
    made = [p for p in set(Path(tempfile.gettempdir()).iterdir()) - before
            if p.lstat().st_uid == box.box_user() and not p.name.startswith("explorer-")]
    found["(tmp)"] = (Trace(ok=True), 0.0, Trace(ok=True, stdout=repr(sorted(map(str, made)))))
    return found


def test_the_hostile_set_is_large_and_well_formed() -> None:
    ids = [h.id for h in HOSTILE]
    assert len(ids) == len(set(ids)) and len(ids) >= 100
    assert {h.category for h in HOSTILE} == CATEGORIES


@pytest.mark.parametrize("program", HOSTILE, ids=lambda h: f"{h.category}-{h.id}")
def test_hostile_program_has_no_effect(program: Hostile, outcomes: dict[str, Outcome],
                                       canary: tuple[Path, str]) -> None:
    folder, token = canary
    trace, took, after = outcomes[program.id]
    assert token not in trace.to_json() and token not in trace.stdout
    assert not (folder / "canary").exists()
    assert took <= WALL_LIMITS.time_s + 1 + SLACK_S, took
    if program.crash:
        assert trace.error is not None and trace.error.message, trace
    assert after.ok and after.stdout == "42\n", "the next run in the pool must work"


def test_nothing_is_left_behind(pool: WorkerPool, outcomes: dict[str, Outcome],
                                canary: tuple[Path, str]) -> None:
    folder, token = canary
    assert sorted(p.name for p in folder.iterdir()) == ["secret"]
    assert (folder / "secret").read_text() == token
    assert outcomes["(tmp)"][2].stdout == "[]"
    assert wait_until(lambda: run_processes(pool) == [])
    assert pool.settle(SLACK_S)
    assert [p.name for p in Path(pool._dir.name).glob("run-*")] == []


# --- the server's side of the wall, with the guard out of the way -------------------------

UNGUARDED_ZYGOTE = textwrap.dedent("""
    import sys
    import explorer.record.zygote as zygote
    guarded = zygote.execute
    def execute(code, **options):
        if code.startswith("#unguarded"):
            exec(code, {"__name__": "__main__"})
            return guarded("pass", **options)
        return guarded(code, **options)
    zygote.execute = execute
    zygote.main(sys.argv[1], lock="--unlocked" not in sys.argv)
""")
SOCKET_FDS = ("import os\nfds = []\nfor fd in map(int, os.listdir('/proc/self/fd')):\n"
              "    try:\n        if os.readlink(f'/proc/self/fd/{fd}').startswith('socket:'):\n"
              "            fds.append(fd)\n    except OSError:\n        pass\n")


@contextmanager
def _unguarded_workers(size: int, locked: bool = True) -> Iterator[WorkerPool]:
    """A real pool in the box whose runs execute `#unguarded` programs as plain Python, after
    the lock (`locked`; else with none, as the owner may accept where Landlock is missing)."""
    if box.missing() or confine.missing():
        pytest.skip("no wall here")
    command = box.command

    def unguarded(argv: list[str], *args: Any, **options: Any) -> list[str]:
        if argv[1:3] == ["-m", "explorer.record.zygote"]:
            argv = [argv[0], "-c", UNGUARDED_ZYGOTE, *argv[3:]]
        return command(argv, *args, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(box, "command", unguarded)
        if not locked:
            patch.setattr(confine, "missing", lambda: ["(this test) no lock"])
            patch.setenv(WITHOUT_WALLS, "1")
        workers = WorkerPool(size=size, limits=WALL_LIMITS, require_walls=locked, kept_bytes=0)
        try:
            yield workers
        finally:
            workers.close()


@pytest.fixture(scope="module")
def unguarded_pool() -> Iterator[WorkerPool]:
    """Two unguarded runs at once: a run can look for another."""
    with _unguarded_workers(size=2) as workers:
        yield workers


def _unguarded(pool: WorkerPool, code: str) -> tuple[Trace | BaseException, float]:
    started = time.monotonic()
    try:
        trace: Trace | BaseException = pool.run("#unguarded\n" + code)
    except BaseException as error:  # noqa: BLE001 - the pool must never raise: judged below
        trace = error
    return trace, time.monotonic() - started


def test_an_unguarded_run_is_confined(unguarded_pool: WorkerPool) -> None:
    trace, took = _unguarded(unguarded_pool, "import os\nos.listdir('/')")
    assert isinstance(trace, Trace) and trace.error is not None  # PermissionError
    trace, took = _unguarded(unguarded_pool, "while True:\n    pass")
    assert took <= WALL_LIMITS.time_s + 1 + SLACK_S
    assert unguarded_pool.run(NEXT).stdout == "42\n"


def test_a_run_that_hangs_up_is_still_killed(unguarded_pool: WorkerPool) -> None:
    code = SOCKET_FDS + "for fd in fds:\n    os.close(fd)\nimport time\ntime.sleep(30)\n"
    _unguarded(unguarded_pool, code)
    assert wait_until(lambda: run_processes(unguarded_pool) == [],
                      WALL_LIMITS.time_s + 1 + SLACK_S)


def test_a_run_that_answers_early_leaves_nothing(unguarded_pool: WorkerPool) -> None:
    code = SOCKET_FDS + textwrap.dedent("""
        import socket, time
        from explorer.trace import failure
        from explorer.trace.wire import send, trace_message
        send(socket.socket(fileno=fds[0]), trace_message(failure("Forged", "early")))
        end, n = time.time() + 4, 0
        while time.time() < end:
            try:
                os.mkdir(f"f{n}")
                n += 1
            except OSError:
                time.sleep(0.001)
    """)
    _unguarded(unguarded_pool, code)
    time.sleep(0.5)
    left = [p.name for p in Path(unguarded_pool._dir.name).glob("run-*")]
    alive = run_processes(unguarded_pool)
    wait_until(lambda: run_processes(unguarded_pool) == [], 6)
    assert (left, alive) == ([], [])


def test_a_run_makes_nothing_so_its_turn_ends_on_time(unguarded_pool: WorkerPool) -> None:
    # 100,000 empty files (or a directory 1,500 deep) once held a worker 2.5 s past its limit
    # while the server removed them: now not one is made.
    code = ("import os\nfor i in range(100_000):\n    try:\n"
            "        os.close(os.open(f'e{i}', os.O_CREAT))\n    except OSError:\n        pass\n"
            "for _ in range(1500):\n    try:\n        os.mkdir('d')\n        os.chdir('d')\n"
            "    except OSError:\n        pass\n")
    trace, took = _unguarded(unguarded_pool, code)
    assert isinstance(trace, Trace) and took <= WALL_LIMITS.time_s + 1 + SLACK_S, took
    assert unguarded_pool.settle(SLACK_S), "the run's turn does not end with its process"
    assert [p.name for p in Path(unguarded_pool._dir.name).glob("run-*")] == []


def test_a_run_cannot_end_the_zygote_through_its_stdin(unguarded_pool: WorkerPool) -> None:
    zygote = unguarded_pool.zygote_pid
    _unguarded(unguarded_pool, "import os\nos.write(os.open('/proc/self/fd/0', os.O_WRONLY), b'x')")
    time.sleep(0.3)
    assert Path(f"/proc/{zygote}").exists()


def test_a_run_cannot_signal_the_zygote(unguarded_pool: WorkerPool) -> None:
    """The zygote is PID 1 of the box with no handlers: signals from inside are dropped."""
    zygote = unguarded_pool.zygote_pid
    _unguarded(unguarded_pool, "import fcntl, os, time\nr, w = os.pipe()\n"
               "fcntl.fcntl(r, fcntl.F_SETOWN, 1)\nfcntl.fcntl(r, 10, 9)\n"
               "fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\nos.write(w, b'x')\ntime.sleep(0.3)")
    assert Path(f"/proc/{zygote}").exists()


def test_a_run_cannot_limit_the_zygote(unguarded_pool: WorkerPool) -> None:
    zygote = unguarded_pool.zygote_pid
    _unguarded(unguarded_pool, "import resource\nresource.prlimit(1, resource.RLIMIT_CPU, (1, 1))")
    unguarded_pool.run(NEXT)  # the zygote forks: its CPU time is checked
    time.sleep(0.3)
    assert Path(f"/proc/{zygote}").exists()



def test_a_run_holds_nothing_of_the_zygote(unguarded_pool: WorkerPool) -> None:
    """A run's child was forked ahead of its run (explorer/record/zygote.py): by then it has
    closed the zygote's listening socket, the pipe on which it told the zygote it took its
    connection, and any handle on another run. What it holds: its connection, /dev/null and
    its walls."""
    code = SOCKET_FDS + textwrap.dedent("""
        import socket
        from explorer.trace import failure
        from explorer.trace.wire import send, trace_message
        held = []
        for fd in fds + [fd for fd in map(int, os.listdir('/proc/self/fd')) if fd not in fds]:
            try:
                held.append(os.readlink(f'/proc/self/fd/{fd}').split(':[')[0]
                            if fd in fds else os.readlink(f'/proc/self/fd/{fd}'))
            except OSError:
                pass  # the listing's own
        send(socket.socket(fileno=fds[0]), trace_message(failure("Held", " ".join(held))))
    """)
    trace, _ = _unguarded(unguarded_pool, code)
    assert isinstance(trace, Trace) and trace.error is not None, trace
    connection, *rest = trace.error.message.split()
    assert connection == "socket" and set(rest) <= {"/dev/null", "anon_inode:[landlock-ruleset]"}
    assert unguarded_pool.run(NEXT).stdout == "42\n"


# --- a run that floods the server with progress updates (issue 26, item 6) ---------------------

FLOOD_LIMITS = Limits(time_s=1.0)
TOLERANCE_S = 0.25  # past the deadline the pool promises: connecting, killing, answering
FLOOD = SOCKET_FDS + textwrap.dedent("""
    import json, socket, time
    from explorer.trace.wire import HEADER, PROGRESS
    conn = socket.socket(fileno=fds[0])
    update = json.dumps({"progress": {"call": 1, "kind": "backward", "value": 1.0,
                                      "grad_norms": {"w": 1.0}}}).encode()
    def tell(message, size=None):
        conn.sendall(HEADER.pack((len(message) if size is None else size) | PROGRESS) + message)
""")
UPDATE = {"call": 1, "kind": "backward", "value": 1.0, "grad_norms": {"w": 1.0}}
# Each flood, how its run ends (refused at once, or at its deadline), and whether a listener
# hears some of it (updates a run may send, up to its budget).
FLOODS = {
    "huge updates": ("big = update.replace(b'\"w\"', b'\"' + b'w' * (15 << 20) + b'\"')\n"
                     "while True:\n    tell(big)", "BadResult", False),
    "many small updates": ("while True:\n    tell(update)", "BadResult", True),
    "an endless update": ("tell(b'', 1 << 62)\nwhile True:\n    conn.sendall(bytes(1 << 20))",
                          "BadResult", False),
    "an update cut short": ("tell(update[:10], len(update))\ntime.sleep(30)", "TimeLimit",
                            False),
    "updates at a run's pace": ("while True:\n    tell(update)\n    time.sleep(0.1)",
                                "TimeLimit", True),
}


def _kib(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split(f"{field}:")[1].split()[0])


def _peak_growth(action: Callable[[], Trace]) -> tuple[Trace, int]:
    """`action()`, and by how many bytes this process's peak resident memory grew meanwhile."""
    before = _kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from here
    return action(), (_kib("VmHWM") - before) << 10


@pytest.mark.parametrize("listening", [False, True], ids=["unheard", "heard"])
@pytest.mark.parametrize(("flood", "ends_as", "some_heard"), FLOODS.values(), ids=list(FLOODS))
def test_a_progress_flood_ends_on_time_and_costs_the_server_nothing(
        unguarded_pool: WorkerPool, flood: str, ends_as: str, some_heard: bool,
        listening: bool) -> None:
    assert unguarded_pool.run(NEXT).stdout == "42\n"  # the zygote is up: its start is not timed
    heard: list[dict[str, Any]] = []
    started = clock_started()
    trace, grown = _peak_growth(lambda: unguarded_pool.run(
        "#unguarded\n" + FLOOD + flood, limits=FLOOD_LIMITS,
        on_progress=heard.append if listening else None))
    took = time.monotonic() - started
    assert took <= FLOOD_LIMITS.time_s + GRACE_S + TOLERANCE_S, took
    assert trace.error is not None and trace.error.type == ends_as, trace.error
    assert grown < 4 << 20, grown  # one huge update is 15 MiB
    assert len(heard) <= PROGRESS_PER_S * (FLOOD_LIMITS.time_s + GRACE_S) + 1
    assert all(msgspec.to_builtins(update) == UPDATE for update in heard)
    assert bool(heard) == (listening and some_heard)
    assert unguarded_pool.run(NEXT).stdout == "42\n"


# --- what a run can stat tells nothing of other runs (issue 26, item 7) -----------------------

STAT = SOCKET_FDS + textwrap.dedent("""
    import json, socket, sys
    from explorer.trace import failure
    from explorer.trace.wire import send, trace_message
    places, up = {"socket": sys.argv[1]}, "."
    while True:  # its directory and every one above it, and the zygote's socket
        places[up] = up
        if os.path.realpath(up) == "/":
            break
        up = ".." if up == "." else up + "/.."
    seen = {}
    for name, place in places.items():
        info = os.stat(place)
        seen[name] = [info.st_nlink, info.st_mtime_ns, info.st_ctime_ns, info.st_size]
    send(socket.socket(fileno=fds[0]), trace_message(failure("Seen", json.dumps(seen))))
""")


def _seen(pool: WorkerPool) -> str:
    trace, _ = _unguarded(pool, STAT)
    assert isinstance(trace, Trace) and trace.error is not None and trace.error.type == "Seen"
    return trace.error.message


def test_what_a_run_can_stat_tells_nothing_of_other_runs(unguarded_pool: WorkerPool) -> None:
    before = _seen(unguarded_pool)
    assert '"..": [' in before and '"../..": [' in before
    other = threading.Thread(target=_unguarded, args=(unguarded_pool, "import time\n"
                                                                      "time.sleep(1)"))
    other.start()
    assert wait_until(lambda: len(run_processes(unguarded_pool)) == 1)
    during = _seen(unguarded_pool)
    assert other.is_alive(), "the other run was still going"
    other.join()
    assert unguarded_pool.settle(SLACK_S)
    assert before == during == _seen(unguarded_pool)


def test_an_unlocked_run_has_a_directory_of_its_own_removed_after_it() -> None:
    code = SOCKET_FDS + textwrap.dedent("""
        import socket
        from explorer.trace import failure
        from explorer.trace.wire import send, trace_message
        os.makedirs("made/deeper")
        open("made/empty", "w").close()
        send(socket.socket(fileno=fds[0]), trace_message(failure("Here", os.getcwd())))
    """)
    with _unguarded_workers(size=1, locked=False) as workers:
        trace, _ = _unguarded(workers, code)
        assert isinstance(trace, Trace) and trace.error is not None, trace
        here = Path(trace.error.message)
        assert here.parent == Path(workers._dir.name) and here.name.startswith("run-")
        assert workers.settle(SLACK_S)
        assert not here.exists() and list(here.parent.glob("run-*")) == []
