"""Run learners' programs in isolated processes: `WorkerPool.run(code) -> Trace`.

A pool owns one zygote (`explorer.record.zygote`) that has imported PyTorch, started in the box
`explorer.safety.box` builds; every run is served by a fresh child forked from it, which locks
itself in (`explorer.safety.confine`), so a run never pays PyTorch's import and nothing one run does
can reach the next or the host. The pool caps how many runs go at once, kills a child at its
deadline whatever it sends, restarts the zygote if it dies, and turns every failure into a
Trace with a clear error. The server process itself never imports PyTorch.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import logging
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from explorer.pool.results import MAX_BYTES, Results
from explorer.safety import box, confine
from explorer.safety.limits import Limits, time_message
from explorer.serve.hosting import settings
from explorer.trace import Trace, failure, refused
from explorer.trace.check import BadResult, progress
from explorer.trace.schema import Summary
from explorer.trace.wire import (
    MAX_PROGRESS_BYTES,
    MAX_RESULT_BYTES,
    BadAnswer,
    TooLarge,
    body,
    decode,
    header,
    job_message,
    recv,
    send,
    skip,
)

STARTUP_S = 120.0  # importing PyTorch on a cold machine
GRACE_S = 1.0  # past the time limit, the child's own clock had its chance: kill it
PROGRESS_PER_S = 20  # progress updates a run sends: explorer.record.backward waits 50 ms between
Progress = Callable[[Summary], None]
# What a child may see of the server's environment: no tokens, keys or passwords; and the
# two settings that make PyTorch's CPU arithmetic the same on every x86 CPU, where set (the
# kernels' instruction set, and MKL's reproducibility mode).
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
            "ATEN_CPU_CAPABILITY", "MKL_CBWR")
LOG = logging.getLogger(__name__)
CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


class WorkerPool:
    """Runs programs, at most `size` at once, each in a fresh process with `limits`.

    With `details` off (a public host), a failure of the pool itself names no cause (a
    path, an OS error) in the Trace; the cause goes to the server's log either way. A pool
    that cannot build the box or lock a run (`missing` says why) refuses every run with a
    `WallMissing` error, unless `require_walls` is False: by default, unless
    `EXPLORER_WITHOUT_WALLS=1` says the owner accepts the risk (explorer.serve.hosting).
    `threads`: torch's threads per run (default: the cores shared out between the runs).
    `kept_bytes`: how much of repeatable runs' Traces is kept and given again
    (explorer.pool.results; 0 keeps none: every run runs)."""

    def __init__(self, size: int = 2, limits: Limits = Limits(), wait_s: float = 30.0,
                 details: bool = True, require_walls: bool | None = None,
                 threads: int | None = None, kept_bytes: int = MAX_BYTES) -> None:
        self.missing = [gap for gap in (box.missing(), *confine.missing()) if gap]
        if require_walls is None:
            require_walls = settings().require_walls
        self.refuses = bool(self.missing) and require_walls  # every run
        for gap in self.missing:
            LOG.warning("%s: %s", "refusing every run, as a wall is missing" if self.refuses
                        else "running programs without part of the wall", gap)
        if box.stopped_by_apparmor():  # in the terminal that started the server
            LOG.warning("%s", box.apparmor_advice())
        self.boxed = box.missing() is None
        self.locked = not confine.missing()
        self.size = size
        self.limits = limits
        self.wait_s = wait_s
        self.details = details
        self.threads = threads or max(1, (os.cpu_count() or 1) // size)  # torch's, per run
        self._slots = _Turns(size)
        self.results = Results(kept_bytes)  # repeatable runs' Traces, for every caller
        self._lock = threading.Lock()
        self._dir = tempfile.TemporaryDirectory(  # by its real path: the box binds that
            prefix="explorer-", dir=os.path.realpath(tempfile.gettempdir()))
        self._socket = str(Path(self._dir.name) / "zygote.sock")
        self._zygote: subprocess.Popen[bytes] | None = None  # bubblewrap, in the box
        self.zygote_pid = 0  # the zygote itself
        self._zygote_fd: int | None = None  # a pidfd of it: its pid may be reused, this not
        # What the zygote wrote to its error output before it was ready, kept while it lives.
        self._zygote_errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        if not self.refuses:
            self._start_zygote()

    def run(self, code: str, *, device: str = "cpu", limits: Limits | None = None,
            seed: int | None = 0, keep: tuple[int, ...] = (),
            rounds: tuple[tuple[int, int], ...] = (),
            on_progress: Progress | None = None) -> Trace:
        """Run `code` and return its Trace. Never raises for anything the code does.

        `keep`: backward calls to record in full besides the first ten and calls 20, 40,
        80…; `rounds`: loops' rounds to step through besides, each (loop, round over the
        run), as a Trace's `unstepped` names them; `on_progress`: called with each backward
        call's summary while the program runs."""
        limits = limits or self.limits
        if self.refuses:
            return failure("WallMissing", self._refusal(), device=device)
        key = None
        if seed is not None and on_progress is None:  # a run streamed as it goes runs
            key = self.results.key(code, device, limits, seed, self.threads, keep, rounds)
            if (kept := self.results.get(key)) is not None:
                return kept
        if not self._slots.acquire(timeout=self.wait_s):
            return failure("Busy", "The explorer is busy with other runs; try again in a moment.",
                           device=device)
        ending: Callable[[], None] = _nothing
        try:
            # A locked run makes nothing: it runs in the zygote's shared, empty home.
            place = None if self.locked else f"run-{uuid.uuid4().hex}"
            job = job_message(code, device, limits, seed, self.threads, keep, place, rounds)
            trace, ending = self._run(job, place, device, limits, on_progress)
            if trace.error and trace.error.type == "WorkerCrashed" and self._zygote_died():
                ending()  # a dying zygote: once more
                ending = _nothing  # ended: never twice (its pidfd's number may be reused)
                trace, ending = self._run(job, place, device, limits, on_progress)
            if key is not None:
                self.results.put(key, trace)
        except BaseException:
            self._end(ending)
            raise
        # The caller has its Trace now; the run's turn ends with its process (a forked
        # process of PyTorch's size takes ~10 ms to die) and its directory.
        threading.Thread(target=self._end, args=(ending,), daemon=True).start()
        return trace

    def _refusal(self) -> str:
        """Why no program runs here, for a visitor: the cause only where `details` allows."""
        cause = f" ({'; '.join(self.missing)})" if self.details else ""
        return (f"Programs are not run here: this machine cannot wall them off from the "
                f"server{cause}. SECURITY.md says what the walls need; "
                "EXPLORER_WITHOUT_WALLS=1 runs them without, for a trusted audience only.")

    def _end(self, ending: Callable[[], None]) -> None:
        """End a run's process and remove its directory, then give its turn to the next."""
        try:
            ending()
        finally:
            self._slots.release()

    def settle(self, timeout_s: float) -> bool:
        """Wait until no run holds a turn (each run's process has ended and its directory is
        gone), at most `timeout_s` seconds; whether that came."""
        return self._slots.all_free(timeout_s)

    def close(self) -> None:
        """Stop the zygote (its children end with it) and remove the socket."""
        with self._lock:
            self._stop_zygote_locked()
            self._zygote = None
            self._zygote_errors.close()
        self._dir.cleanup()

    def _run(self, job: bytes, place: str | None, device: str, limits: Limits,
             on_progress: Progress | None) -> tuple[Trace, Callable[[], None]]:
        """The run's Trace, and what ends the run: its process killed and waited for, then its
        directory `place` removed."""
        try:
            conn = self._connect()
        except OSError as error:
            LOG.error("could not start a worker: %s", error)
            message = (f"Could not start a worker: {error}" if self.details
                       else "Could not start a worker; please try again in a moment.")
            return failure("WorkerUnavailable", message, device=device), _nothing
        started = time.monotonic()  # after a (re)start of the zygote: that is not the run's time
        watchdog: _Watchdog | None = None

        def read() -> Trace:
            nonlocal watchdog
            try:
                conn.settimeout(limits.time_s + GRACE_S)
                send(conn, job)
                watchdog = _Watchdog(conn, started + limits.time_s + GRACE_S)
                budget = int(PROGRESS_PER_S * (limits.time_s + GRACE_S)) + 1
                while True:  # progress updates (at most `budget`), then the Trace
                    size, update = header(conn)
                    if not update:
                        answer = body(conn, size, MAX_RESULT_BYTES)
                        watchdog.kill()  # it has answered: it ends while it is read
                        return Trace.from_json(answer, limits)
                    budget -= 1
                    if budget < 0:
                        raise BadAnswer(f"more progress updates than a run sends in "
                                        f"{limits.time_s:g} s ({PROGRESS_PER_S} a second)")
                    if size > MAX_PROGRESS_BYTES:
                        raise BadAnswer(f"a progress update of {size:,} bytes (a run sends at "
                                        f"most {MAX_PROGRESS_BYTES:,})")
                    if on_progress is None:
                        skip(conn, size)  # no one listens: nothing of it is decoded
                    else:
                        told = decode(body(conn, size, MAX_PROGRESS_BYTES))
                        on_progress(progress(told.get("progress")))
            except TooLarge as error:
                return failure("MemoryLimit", f"The run's record (variables, graphs and "
                               f"backward steps) came to {error.size / 2**20:,.0f} MiB, more "
                               f"than the {MAX_RESULT_BYTES >> 20} MiB a run may send back "
                               "even after thinning. Smaller graphs, fewer backward calls or "
                               "fewer top-level statements help.", device=device)
            except (BadAnswer, BadResult) as error:
                return refused(str(error), device=device)
            except (OSError, ValueError, TypeError, KeyError):
                late = time.monotonic() > started + limits.time_s + GRACE_S
                if late or (watchdog is not None and watchdog.fired):
                    return failure("TimeLimit", time_message(limits), device=device)
                return failure("WorkerCrashed", "The run ended without an answer (its process "
                               "died, perhaps from a crash inside a library). Nothing else "
                               "was affected; try again or simplify the program.",
                               device=device)

        def ending() -> None:
            if watchdog is not None:
                watchdog.stop()  # the child is gone: nothing writes into its directory
            if place is not None:
                _remove(Path(self._dir.name) / place)

        with conn:
            try:
                trace = read()
            except BaseException:
                ending()
                raise
        if watchdog is not None:
            watchdog.kill()  # answered or not, it runs no more; `ending` waits for its end
        return trace, ending

    def _zygote_died(self) -> bool:
        with self._lock:
            return self._zygote is None or self._zygote.poll() is not None

    def _connect(self) -> socket.socket:
        for attempt in range(2):
            self._ensure_zygote()
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # who sends: _Watchdog
            try:
                conn.connect(self._socket)
                return conn
            except OSError:
                conn.close()
                if attempt:
                    raise
                self._restart_zygote()
        raise AssertionError("unreachable")

    def _ensure_zygote(self) -> None:
        with self._lock:
            zygote = self._zygote
            if zygote is None or zygote.poll() is not None:
                self._start_zygote_locked()
                zygote = self._zygote
            assert zygote is not None and zygote.stdout is not None
            if not getattr(zygote, "ready", False):
                started, _, _ = select.select([zygote.stdout], [], [], STARTUP_S)
                said = zygote.stdout.readline().strip() if started else b""
                if said != b"ready":
                    self._stop_zygote_locked()
                    raise OSError(f"the worker process did not start within {STARTUP_S:g} s"
                                  if not started else "the worker process ended as it "
                                  f"started: {self._zygote_said() or 'it said nothing'}")
                zygote.ready = True  # type: ignore[attr-defined]

    def _zygote_said(self) -> str:
        """The last lines the zygote (or bubblewrap, starting it) wrote to its error output
        before it was ready: why it ended."""
        self._zygote_errors.seek(max(0, self._zygote_errors.seek(0, os.SEEK_END) - 4096))
        return box.last_lines(self._zygote_errors.read())

    def _restart_zygote(self) -> None:
        with self._lock:
            self._start_zygote_locked()

    def _stop_zygote_locked(self) -> None:
        """Kill the zygote and wait until it is gone, and with it every run: a child dies with
        it, and in the box it is PID 1 (bubblewrap, killed, cannot pass that on to its PID 1:
        the pool kills it by the pid bubblewrap gave)."""
        if self._zygote_fd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._zygote_fd, signal.SIGKILL)
            select.select([self._zygote_fd], [], [], STARTUP_S)  # readable once it has ended
            os.close(self._zygote_fd)
            self._zygote_fd = None
        if self._zygote is not None:
            self._zygote.kill()
            self._zygote.wait()

    def _start_zygote(self) -> None:
        with self._lock:
            self._start_zygote_locked()

    def _start_zygote_locked(self) -> None:
        self._stop_zygote_locked()  # what is left of the last one
        Path(self._socket).unlink(missing_ok=True)
        # Its error output until it is ready (then it writes nothing): a file of the server's
        # alone, unnamed, so that a zygote that cannot start says why.
        self._zygote_errors.close()
        self._zygote_errors = tempfile.TemporaryFile()  # noqa: SIM115 - as above
        env = {key: os.environ[key] for key in KEPT_ENV if key in os.environ}
        package = os.path.dirname(confine.PACKAGE)
        env.update(PYTHONPATH=package, HOME=self._dir.name,
                   TMPDIR=self._dir.name, MALLOC_ARENA_MAX="2", PYTHONDONTWRITEBYTECODE="1",
                   # one BLAS thread, and no TorchDynamo compiler
                   OPENBLAS_NUM_THREADS="1", TORCHDYNAMO_DISABLE="1",
                   # `torch.cuda.is_available()` asks NVML, never starting CUDA: a process
                   # that started it forks children that cannot
                   PYTORCH_NVML_BASED_CUDA_CHECK="1")
        python = box.python() if self.boxed else sys.executable
        argv = [python, "-m", "explorer.record.zygote", self._socket,
                *([] if self.locked else ["--unlocked"])]
        if not self.boxed:
            self._zygote = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._zygote_errors,
                cwd=self._dir.name, env=env, start_new_session=True)
            self.zygote_pid = self._zygote.pid
            self._zygote_fd = _pidfd(self.zygote_pid)
            return
        os.chown(self._dir.name, box.box_user(), -1)
        info, info_w = os.pipe()
        try:
            self._zygote = subprocess.Popen(
                box.command(argv, self._dir.name, env, info_w), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=self._zygote_errors, cwd=self._dir.name, env=env,
                start_new_session=True, pass_fds=(info_w,))
            os.close(info_w)
            said = b""
            while select.select([info], [], [], STARTUP_S)[0] and (part := os.read(info, 4096)):
                said += part  # until bubblewrap closes it
            self.zygote_pid = int(json.loads(said or b"{}").get("child-pid", self._zygote.pid))
            self._zygote_fd = _pidfd(self.zygote_pid)
        finally:
            os.close(info)


class _Turns:
    """At most `size` runs at once, the waiting ones served first come, first served (with a
    Semaphore, a thread that has just released can take the turn again ahead of them all)."""

    def __init__(self, size: int) -> None:
        self._size = self._free = size
        self._queue: collections.deque[object] = collections.deque()
        self._changed = threading.Condition()

    def acquire(self, timeout: float) -> bool:
        """Wait for a turn, at most `timeout` seconds; whether one was given."""
        me = object()
        with self._changed:
            self._queue.append(me)
            given = self._changed.wait_for(lambda: self._free and self._queue[0] is me, timeout)
            self._free -= bool(given)
            self._queue.remove(me)
            self._changed.notify_all()  # the next in line may go if a turn is still free
            return bool(given)

    def release(self) -> None:
        with self._changed:
            self._free += 1
            self._changed.notify_all()

    def all_free(self, timeout: float) -> bool:
        """Wait until no turn is taken, at most `timeout` seconds; whether that came."""
        with self._changed:
            return self._changed.wait_for(lambda: self._free == self._size, timeout)


def _pidfd(pid: int) -> int | None:
    """A handle on process `pid` (None if it has ended): unlike a pid, never reused."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


class _Watchdog:
    """Reads the child's hello, with its pid as the kernel gives it (SO_PASSCRED: true in the
    server's PID namespace, whatever the child says), then kills that child at `deadline`
    and cuts the connection, whatever the child sends meanwhile."""

    def __init__(self, conn: socket.socket, deadline: float) -> None:
        _, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(CREDENTIALS.size),
                                          socket.MSG_PEEK)
        pids = [CREDENTIALS.unpack(data[:CREDENTIALS.size])[0]
                for level, kind, data in ancillary
                if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS)]
        if not pids:
            raise ConnectionError("the worker left before it said hello")
        self._process = _pidfd(pids[0])  # None: already done, its answer waits in the socket
        recv(conn, 1 << 10)  # the hello itself
        self.fired = False
        self._conn = conn
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        if self._process is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._process, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self._conn.shutdown(socket.SHUT_RDWR)

    def kill(self) -> None:
        """Kill the child (it may be gone already)."""
        if self._process is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._process, signal.SIGKILL)

    def stop(self) -> None:
        """Kill the child, answered or not (an answer may be forged early), and wait until
        it has ended."""
        self._timer.cancel()
        self.kill()
        if self._process is not None:
            select.select([self._process], [], [], STARTUP_S)  # readable once it has ended
            os.close(self._process)


def _nothing() -> None:
    """What ends a run that never started."""


def _remove(place: Path) -> None:
    """Remove a run's directory, however deep the run made it: on Python 3.11
    shutil.rmtree recurses, and coreutils' rm does not."""
    try:
        shutil.rmtree(place, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", str(place)], check=False)


_default: WorkerPool | None = None
_default_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process-wide pool, as the host's settings make it (explorer.serve.hosting: its
    workers, limits, error details and walls), started on first use and stopped at exit;
    the app's pages and `explorer.run` share it."""
    global _default
    with _default_lock:
        if _default is None:
            host = settings()
            _default = WorkerPool(size=host.workers, limits=host.limits, details=host.details)
            atexit.register(_default.close)
        return _default


def run(code: str, *, device: str = "cpu", limits: Limits | None = None,
        seed: int | None = 0, keep: tuple[int, ...] = (),
        rounds: tuple[tuple[int, int], ...] = ()) -> Trace:
    """Run `code` in the default pool."""
    return default_pool().run(code, device=device, limits=limits, seed=seed, keep=keep,
                              rounds=rounds)
