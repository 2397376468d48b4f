"""The real process pool: every run in a fresh child of the zygote, limits enforced from outside.

These tests start real processes (a zygote that imports PyTorch, one child per run), so they
take a few seconds each; nothing is mocked.
"""

from __future__ import annotations

import gc
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from explorer.pool.worker import GRACE_S, PROGRESS_PER_S, WorkerPool, _Turns
from explorer.safety.limits import Limits
from tests.conftest import ROOT
from tests.programs import SEED

TIME_S = 2.0
LIMITS = Limits(time_s=TIME_S)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """A pool that runs every run: these tests are about running (tests/test_results.py is
    about the runs kept)."""
    pool = WorkerPool(size=2, limits=LIMITS, kept_bytes=0)
    assert pool.run("pass").ok  # the zygote is up: later timings measure runs only
    yield pool
    pool.close()


def assert_works(pool: WorkerPool) -> None:
    trace = pool.run("print(6 * 7)")
    assert trace.ok, trace.error
    assert trace.stdout == "42\n"


def processes(marker: str = "") -> set[int]:
    """Processes whose command line mentions `marker` (every one, without)."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker in Path(f"/proc/{entry}/cmdline").read_text():
                found.add(int(entry))
        except OSError:
            pass
    return found


def zygote_processes(pool: WorkerPool) -> list[int]:
    """The zygote and its children: every process started for this pool's socket."""
    return sorted(processes(pool._socket))


def run_processes(pool: WorkerPool) -> list[int]:
    """The pool's runs: children of the zygote (which, in the box, is bubblewrap's child),
    but for the one it keeps forked ahead (`spares`)."""
    return [p for p in _children(pool) if name_of(p) != "explorer-spare"]


def spares(pool: WorkerPool) -> list[int]:
    """The zygote's children waiting for a connection (explorer/record/zygote.py)."""
    return [p for p in _children(pool) if name_of(p) == "explorer-spare"]


def _children(pool: WorkerPool) -> list[int]:
    assert pool._zygote is not None
    found = zygote_processes(pool)
    parents = {p: parent_of(p) for p in found}
    zygotes = [p for p in found if parents[p] == pool._zygote.pid] if pool.boxed else [
        pool._zygote.pid]
    return [p for p in found if parents[p] in zygotes]


def name_of(pid: int) -> str | None:
    """The name of process `pid` (/proc/PID/comm; None once it has ended)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def parent_of(pid: int) -> int | None:
    """The parent of process `pid` (None once it has ended)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def clock_started() -> float:
    """The clock, read once this process's own garbage (what earlier tests left) is collected:
    a full collection of it would pause this process mid-run, and that pause is not the
    pool's (a deadline test allows the pool a quarter of a second)."""
    gc.collect()
    return time.monotonic()


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_seed_program(pool: WorkerPool) -> None:
    trace = pool.run(SEED)
    assert trace.ok, trace.error
    assert trace.variables["x"].grad == [[4.5, 4.5], [4.5, 4.5]]
    assert trace.variables["out"].grad_fn == "MeanBackward0"
    assert [step.line for step in trace.steps] == [1, 2, 3, 4, 5]
    assert trace.elapsed_ms > 0


def test_runs_do_not_share_state(pool: WorkerPool) -> None:
    # Each run is a fresh fork: a global change in one run is gone in the next one, and it
    # never reaches this process.
    assert pool.run("torch.set_default_dtype(torch.float64)\nx = torch.ones(1)\n") \
        .variables["x"].dtype == "torch.float64"
    assert pool.run("x = torch.ones(1)\n").variables["x"].dtype == "torch.float32"
    assert torch.get_default_dtype() == torch.float32


def test_memory_exhaustion_stays_in_the_child(pool: WorkerPool) -> None:
    address_space = resource.getrlimit(resource.RLIMIT_AS)
    now_kib = _resident_kib()  # made here, the tensor would lift the peak 1.6 GB above it
    trace = pool.run("a = 1\nx = torch.ones(20000, 20000)\n")  # 1.6 GB, over the 1 GiB cap
    assert trace.error is not None
    assert (trace.error.type, trace.error.line) == ("MemoryLimit", 2)
    assert "memory limit" in trace.error.message
    assert trace.variables["a"].values == 1  # what ran before is still described
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_kib < now_kib + 1_500_000, "the 1.6 GB tensor must not have been made here"
    assert resource.getrlimit(resource.RLIMIT_AS) == address_space  # the cap is the child's
    assert_works(pool)


# The programs from the issue: each gives a clear error in time and leaves the pool working.
BAD_PROGRAMS = [
    pytest.param("torch.ones(100000, 100000)", "MemoryLimit", "memory limit", id="40GB"),
    pytest.param("while True: pass", "LoopLimit", "loop iterations", id="endless-loop"),
    pytest.param("__import__('os')", "Refused", "dunder names", id="__import__"),
    pytest.param("torch.load('x')", "Refused", "`.load` reaches files", id="torch.load"),
    pytest.param("().__class__.__bases__", "Refused", "`.__bases__`", id="class-bases"),
]


@pytest.mark.parametrize(("code", "kind", "reason"), BAD_PROGRAMS)
def test_bad_program_fails_cleanly(pool: WorkerPool, code: str, kind: str, reason: str) -> None:
    started = time.monotonic()
    trace = pool.run(code)
    elapsed = time.monotonic() - started
    assert trace.ok is False and trace.error is not None
    assert trace.error.type == kind
    assert reason in trace.error.message
    assert elapsed < TIME_S + 3
    assert_works(pool)


def test_uninterruptible_run_is_killed(pool: WorkerPool) -> None:
    # 2**62 additions in one C call: the child's clock cannot interrupt it, the pool kills it.
    started = clock_started()
    trace = pool.run("a = 1\ntorch.ones(1).expand(2**62).sum()\n")
    assert TIME_S <= time.monotonic() - started < TIME_S + 1.5  # the deadline: limit + 1 s
    assert trace.error is not None
    assert trace.error.type == "TimeLimit"
    assert "stopped after 2 s" in trace.error.message
    # The child was killed, not left spinning: only the zygote remains.
    assert wait_until(lambda: run_processes(pool) == [])
    assert_works(pool)


def test_zygote_is_restarted_after_it_dies(pool: WorkerPool) -> None:
    zygote = pool._zygote
    assert zygote is not None
    zygote.kill()
    zygote.wait()
    assert_works(pool)
    assert pool._zygote is not None and pool._zygote.pid != zygote.pid
    assert pool._zygote.poll() is None


def test_concurrent_runs(pool: WorkerPool) -> None:
    codes = [f"x = torch.full((2,), {n}.0, requires_grad=True)\n(x * x).sum().backward()\n"
             f"print({n})\n" for n in range(4)]
    with ThreadPoolExecutor(max_workers=4) as threads:
        traces = list(threads.map(pool.run, codes))
    assert [t.ok for t in traces] == [True] * 4
    assert [t.stdout for t in traces] == [f"{n}\n" for n in range(4)]
    assert [t.variables["x"].grad for t in traces] == [[2.0 * n] * 2 for n in range(4)]


def test_server_secrets_do_not_reach_the_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLORER_TEST_SECRET", "s3cret")
    fresh = WorkerPool(size=1, limits=LIMITS)
    try:
        assert_works(fresh)
        assert fresh._zygote is not None
        environ = Path(f"/proc/{fresh._zygote.pid}/environ").read_bytes().split(b"\0")
        assert any(item.startswith(b"PATH=") for item in environ)  # really its environment
        assert not any(b"EXPLORER_TEST_SECRET" in item or b"s3cret" in item for item in environ)
    finally:
        fresh.close()


def test_close_leaves_nothing_behind() -> None:
    fresh = WorkerPool(size=1, limits=Limits(time_s=30))
    assert_works(fresh)
    assert fresh._zygote is not None
    zygote_pid, tmp = fresh._zygote.pid, Path(fresh._dir.name)
    assert (tmp / "zygote.sock").exists()

    # A run still going when the pool closes: its child must end with the zygote.
    late = threading.Thread(target=fresh.run, args=("import time\ntime.sleep(25)\n",))
    late.start()
    assert wait_until(lambda: len(run_processes(fresh)) == 1)
    fresh.close()
    late.join(timeout=10)

    assert not late.is_alive()
    assert not Path(f"/proc/{zygote_pid}").exists()
    assert not tmp.exists()
    assert wait_until(lambda: zygote_processes(fresh) == [])


def test_a_parent_that_imports_from_its_working_directory_still_gets_workers(
        tmp_path: Path) -> None:
    """`python script.py` from the project root finds `explorer` through "" in sys.path."""
    script = tmp_path / "run_seed.py"
    script.write_text("import sys\nsys.path[0] = ''\n"
                      "from explorer.pool.worker import WorkerPool\n"
                      "pool = WorkerPool(size=1)\nprint(pool.run('print(6 * 7)').stdout, end='')\n"
                      "pool.close()\n")
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.stdout == "42\n", done.stderr[-500:]


# --- the box and the lock are tested by effect in tests/test_wall.py ---------------------------


def test_the_zygote_lives_in_a_private_directory(pool: WorkerPool) -> None:
    assert pool._zygote is not None
    home = Path(pool._dir.name)
    proc = Path(f"/proc/{pool._zygote.pid}")
    assert home.stat().st_mode & 0o777 == 0o700
    assert Path(os.readlink(proc / "cwd")) == home
    environ = (proc / "environ").read_bytes().split(b"\0")
    assert {f"HOME={home}".encode(), f"TMPDIR={home}".encode()} <= set(environ)


def test_turns_are_first_come_first_served() -> None:
    # A Semaphore would let the thread that just released take the turn again at once: under
    # load one session could wait until `Busy` while others run again and again.
    turns = _Turns(1)
    assert turns.acquire(timeout=1)
    order: list[str] = []

    def wait_and_run(name: str) -> None:
        assert turns.acquire(timeout=10)
        order.append(name)
        turns.release()

    waiting = [threading.Thread(target=wait_and_run, args=(name,)) for name in "ab"]
    for thread in waiting:
        thread.start()
        time.sleep(0.1)  # queued in this order
    turns.release()
    assert turns.acquire(timeout=10)  # straight back in line: behind a and b
    order.append("again")
    for thread in waiting:
        thread.join()
    assert order == ["a", "b", "again"]
    assert not turns.acquire(timeout=0.1)  # still held: a timed-out wait gives up its place
    turns.release()
    assert turns.acquire(timeout=1)


def test_a_child_waits_forked_ahead_and_another_takes_its_place(pool: WorkerPool) -> None:
    assert_works(pool)
    assert wait_until(lambda: len(spares(pool)) == 1)
    (first,) = spares(pool)
    assert_works(pool)  # that child ran it: another waits in its place
    assert wait_until(lambda: len(spares(pool)) == 1 and spares(pool) != [first])
    (second,) = spares(pool)
    os.kill(second, 9)  # one that ends unused is replaced when the next run comes
    assert wait_until(lambda: spares(pool) == [])
    assert_works(pool)
    assert wait_until(lambda: len(spares(pool)) == 1 and spares(pool) != [second])
    assert wait_until(lambda: run_processes(pool) == [])


STATE = """print(torch.rand(2), np.random.rand(2), random.random())
print(torch.is_grad_enabled(), torch.is_inference_mode_enabled(), torch.is_anomaly_enabled(),
      torch.get_default_dtype(), torch.get_num_threads())
x = torch.ones(2, requires_grad=True)
(x * x).sum().backward()
print(x.grad, len(torch.optim.SGD([x], lr=0.1).state))
"""


def test_a_spare_that_warmed_up_runs_a_program_as_one_taken_at_once(pool: WorkerPool) -> None:
    # A spare with nothing to do runs the zygote's warm-up again (explorer/record/zygote.py);
    # one forked because a connection waits goes straight to it. Both give the same run.
    assert_works(pool)
    assert wait_until(lambda: len(spares(pool)) == 1)
    time.sleep(1)  # the spare has warmed up
    with ThreadPoolExecutor(2) as runs:  # the second waits: its spare does not warm up
        warmed, at_once = runs.map(lambda _: pool.run(f"import random\n{STATE}"), range(2))
    assert warmed.ok and at_once.ok, (warmed.error, at_once.error)
    assert warmed.stdout == at_once.stdout and "tensor([2., 2.])" in warmed.stdout


def test_a_runs_turn_ends_with_its_process_and_directory(pool: WorkerPool) -> None:
    # The Trace is handed over at once; the run's process (~10 ms to die) and its directory
    # go right after, while the run still holds its turn.
    assert pool.run("print(1)").stdout == "1\n"
    assert pool.settle(10)
    assert run_processes(pool) == []
    assert [p.name for p in Path(pool._dir.name).glob("run-*")] == []


def test_a_run_that_streams_progress_until_its_deadline_is_heard_and_ends_on_time(
        pool: WorkerPool) -> None:
    # Backward calls as fast as a program can make them: the run tells at most 20 a second,
    # which its progress budget allows, and is ended at its deadline as any other.
    limits = Limits(time_s=1.0, loop_iterations=10**9)
    heard: list[dict[str, object]] = []
    started = clock_started()
    trace = pool.run("x = torch.ones(2, requires_grad=True)\nfor i in range(10**9):\n"
                     "    (x * x).sum().backward()\n", limits=limits, on_progress=heard.append)
    assert time.monotonic() - started <= limits.time_s + GRACE_S + 0.25
    assert trace.error is not None and trace.error.type == "TimeLimit", trace.error
    assert 5 <= len(heard) <= PROGRESS_PER_S * limits.time_s + 1
    assert all(update.kind == "backward" and "x" in update.grad_norms for update in heard)
    assert_works(pool)


def _resident_kib() -> int:
    """This process's resident memory now (Linux), in KiB: what earlier tests left is no peak."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
