"""The zygote: a process that imports PyTorch once, then forks one fresh child per run.

`python -m explorer.record.zygote SOCKET` listens on a Unix socket, normally inside the box that
`explorer.safety.box` builds. It keeps one child forked ahead, waiting for the next connection
(so a run does not wait for a fork of this large process, nor, when the spare had time to
warm up, for most of the page faults a fork's child takes); the child that takes a
connection tells the zygote, which forks the next one. That child reads one job, says hello
(the parent learns its pid from the kernel, to kill it at the deadline), enters the empty home
that locked runs share, locks itself in (`explorer.safety.confine`), lowers its limits, runs the job
and answers with the Trace as JSON, never pickle: even a child that escaped the sandbox cannot
make the server run code; its progress updates are small and marked (the server may drop them
unread). The zygote ends when its standard input closes, which happens when the
parent goes away. It never touches CUDA nor runs autograd's engine, so each child may start
both safely after the fork.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import sys
import tempfile
from typing import Any, NoReturn

import torch

from explorer.record.execute import execute
from explorer.record.thin import fitted
from explorer.safety import confine
from explorer.safety.limits import Limits
from explorer.trace.schema import Summary
from explorer.trace.wire import MAX_PROGRESS_BYTES, encode, finite, recv, send

MAX_TASKS = 256  # processes and threads of the box's user a run may bring it to
MAX_FILES = 256  # open files of a run
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15  # prctl.h: the standard library has no prctl
SPARE, RUN = b"explorer-spare", b"explorer-run"  # a child's name (`ps`, /proc/PID/comm)
# Every locked run's working directory, HOME and TMPDIR, in the pool's directory: one, empty and
# read-only, made once. A locked run makes no file, and so no run changes a directory that a
# run can stat (its times and link count would tell when others start and end).
HOME = "home"
_LIBC = ctypes.CDLL(None, use_errno=True)

# Run once before forking: every child inherits PyTorch's first-call set-up, including the
# TorchDynamo import an optimizer's first `step()` makes (2.5 s, in every run otherwise), and
# the error explanations the last line's error reads (a child may be out of memory by then),
# and what forward-mode AD's first op imports (it warns of torch.jit.script as it does: a run
# would show a warning its program never caused). Forward only, the gradient set by hand: a
# backward here would start autograd's engine, and wherever CUDA is present PyTorch then
# refuses autograd in every forked child. (The same modules are imported as with a backward;
# forward-mode AD needs no engine.)
# Run again by a spare while no connection waits: a forked child pays a page fault for each
# of the zygote's pages it first writes, and a run's first ~2,000 (~6 ms) are then taken
# ahead of it.
WARM_UP = ("x = torch.ones(2, 2, requires_grad=True)\nout = (x * x + 1).mean()\n"
           "with torch.autograd.forward_ad.dual_level():\n"
           "    torch.autograd.forward_ad.make_dual(x.detach(), x.detach()).sin()\n"
           "x.grad = torch.ones_like(x)\ntorch.optim.SGD([x], lr=0.1).step()\nx.numpy()\n")
# Time enough for all of it on a busy machine: a warm-up cut short leaves TorchDynamo to be
# imported by each run, which then fails to make its cache directory (a run writes nothing).
WARM_UP_LIMITS = Limits(time_s=120)


def main(path: str, lock: bool) -> None:
    """Serve runs on the socket `path`, each locked (`explorer.safety.confine`) if `lock`: decided
    here once by the server, never by a job."""
    # One thread: a fork must not inherit a started OpenMP pool.
    torch.set_num_threads(1)
    execute(WARM_UP, limits=WARM_UP_LIMITS)
    gc.freeze()  # what is here now is never collected: a child's collections leave it unread
    readable, gpus = confine.readable_paths(), confine.gpu_devices()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)  # the server's alone (a locked child cannot even make a socket)
    listener.listen(64)
    if lock:
        os.makedirs(HOME, 0o500, exist_ok=True)  # exists when the zygote is started again
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)  # what libraries print (np.info) must not fill a
    os.dup2(quiet, 1)                         # pipe nobody reads: children write to nothing
    os.dup2(quiet, 2)
    took, tell = os.pipe()  # a spare that took a connection says so here
    locked = readable if lock else None
    spare: int | None = _spare(listener, took, tell, locked, gpus)  # a pidfd of it
    last: int | None = None  # of the child that took the last connection, while it runs
    while True:
        watch = [sys.stdin, took, spare] if spare is not None else [sys.stdin, listener]
        ready, _, _ = select.select(watch + ([last] if last is not None else []), [], [])
        if sys.stdin in ready:  # the parent is gone
            return
        if took in ready:  # the spare took a connection: it runs now
            os.read(took, 64)
            if last is not None:
                os.close(last)
            last, spare = spare, None
        elif spare in ready:  # it ended unused: the next one when a connection waits
            os.close(spare)  # (so one that cannot start is not forked again and again)
            spare = None
        ended = last is not None and last in ready
        if ended:
            os.close(last)
            last = None
        # The next spare is forked once the last run has ended (a fork beside a run slows
        # it down), or at once when a connection waits.
        if spare is None and (ended or listener in ready):
            spare = _spare(listener, took, tell, locked, gpus, last)


def _spare(listener: socket.socket, took: int, tell: int, readable: list[str] | None,
           gpus: list[str], running: int | None = None) -> int:
    """Fork the child that takes the next connection; a pidfd of it. (`running`: the
    zygote's pidfd of a run, which the child closes.)"""
    zygote = os.getpid()
    pid = os.fork()
    if pid:
        return os.pidfd_open(pid)
    try:
        _prctl(PR_SET_NAME, SPARE)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a spare ends with the zygote
        for fd in (took, running):
            if fd is not None:
                os.close(fd)
        if os.getppid() != zygote:
            os._exit(1)
        try:  # else they are built in the run, whose failure the parent then reports
            walls = confine.Walls(readable, gpus) if readable is not None else None
        except Exception:  # noqa: BLE001
            walls = None
        if not select.select([listener], [], [], 0)[0]:
            execute(WARM_UP)
        conn, _ = listener.accept()
        listener.close()
        os.write(tell, b".")
        os.close(tell)  # a run cannot make the zygote fork
        _prctl(PR_SET_NAME, RUN)
    except BaseException:  # noqa: BLE001 - the zygote forks another
        os._exit(1)
    _child(conn, readable, gpus, walls)


def _child(conn: socket.socket, readable: list[str] | None, gpus: list[str],
           walls: confine.Walls | None) -> NoReturn:
    """Serve one job in this process, then leave without running any cleanup."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        job = json.loads(recv(conn, 1 << 24))
        send(conn, b"{}")  # the parent reads this child's pid from the kernel (SO_PASSCRED)
        limits = enter(job, readable, gpus, walls)
        def progress(update: Summary) -> None:  # streamed while the program runs
            message = encode({"progress": finite(update)})
            if len(message) <= MAX_PROGRESS_BYTES:  # a larger one would end the run
                send(conn, message, progress=True)

        trace = execute(job["code"], device=job["device"], limits=limits, seed=job["seed"],
                        keep=tuple(job["keep"]),
                        rounds=tuple((loop, at) for loop, at in job["rounds"]),
                        progress=progress)
        send(conn, fitted(trace))
    except BaseException:  # noqa: BLE001 - the parent reports a child that did not answer
        code = 1
    finally:
        os._exit(code)


def enter(job: dict[str, Any], readable: list[str] | None, gpus: list[str],
          walls: confine.Walls | None = None) -> Limits:
    """Everything between a job's arrival and its program, in this order: threads, CUDA for a
    CUDA run, the working directory, the lock (while this process has one thread; none without
    `readable`; with `walls`, built ahead for it), the limits. Standard input becomes /dev/null: the
    zygote's pipe, reopened by /proc/self/fd/0, is writable."""
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    limits = Limits(**job["limits"])
    torch.set_num_threads(job["threads"])
    if job["device"].startswith("cuda"):
        _start_cuda(job["device"])
    if readable is None:  # unlocked: what the run makes goes in a directory of its own
        _home(os.path.abspath(os.path.basename(job["dir"])), make=True)
    else:
        (walls or confine.Walls(readable, gpus)).lock(_home(os.path.abspath(HOME)))
    _limit(limits, job["device"])
    return limits


def _limit(limits: Limits, device: str) -> None:
    """Cap this child's CPU time, memory and file size, with no core dumps, and end it with
    the zygote. The CPU cap is a backstop for C loops that nothing else can interrupt,
    should the parent be gone; the parent normally kills the child at its deadline first."""
    zygote = os.getppid()
    cpu_s = int(limits.time_s * torch.get_num_threads()) + 3
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Threads count as processes: a run cannot take every pid of the machine; nor, through
    # many files (epoll watches on each), kernel memory its address space does not count.
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_TASKS, MAX_TASKS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_FILES, MAX_FILES))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writing a file fails instead of killing us
    if device.startswith("cuda") and torch.cuda.is_initialized():
        # The GPU's memory is capped by PyTorch; the cap below counts the driver's mappings
        # made so far, which is why CUDA started first (`_start_cuda`).
        index = torch.device(device).index or 0
        total = torch.cuda.get_device_properties(index).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, limits.memory_mb * 2**20 / total),
                                                   index)
    # Start this run's OpenMP threads before the cap: their stacks count towards it.
    torch.ones(torch.get_num_threads() << 16).add_(1)
    cap = _address_space() + limits.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:  # it ended before that: so does this run
        os._exit(1)


def _start_cuda(device: str) -> None:
    """Start CUDA in this child, before its walls: CUDA's first call fails under Landlock
    (`cuInit` names its threads through /proc), the seccomp filter and an address-space cap
    (error 304, seen on an H100 and an H200), and none of them stops a CUDA already started.
    Nothing here where the machine has no such device: the run's own first use says so."""
    if torch.cuda.is_available():
        index = torch.device(device).index or 0
        if index < torch.cuda.device_count():
            torch.ones(1, device=torch.device("cuda", index)).add_(1)
            torch.cuda.synchronize(index)


def _home(home: str, make: bool = False) -> str:
    """Make `home` (if `make`: the parent chose its name and removes it after the run) this
    child's cwd, HOME and TMPDIR."""
    if make:
        os.mkdir(home, 0o700)
    os.chdir(home)
    os.environ.update(HOME=home, TMPDIR=home)
    tempfile.tempdir = home  # set, not searched: the search writes a file, which fails here
    return home


def _prctl(option: int, value: int | bytes) -> None:
    if sys.platform == "linux":
        _LIBC.prctl(option, value, 0, 0, 0)


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


if __name__ == "__main__":
    main(sys.argv[1], lock=sys.argv[2:] != ["--unlocked"])
