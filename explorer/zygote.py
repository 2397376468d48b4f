"""The zygote: a process that imports PyTorch once, then forks one fresh child per run.

`python -m explorer.zygote SOCKET` listens on a Unix socket. For every connection it forks;
the child reads one job, tells its pid (so the parent can kill it at the time limit), lowers
its own limits, runs the job and answers with the Trace as JSON, never pickle: even a child
that escaped the sandbox cannot make the server run code. The zygote ends when its standard
input closes, which happens when the parent goes away. It never touches CUDA, so each child
may start CUDA safely after the fork.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
import tempfile
from typing import Any

import torch

from explorer.execute import execute
from explorer.limits import Limits
from explorer.wire import recv, send, trace_message

# Linux constants (prctl.h, sched.h, capability.h) and the user a child runs as under root.
PR_SET_PDEATHSIG, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS = 1, 8, 38
CLONE_NEWNET = 0x40000000
CAPABILITY_VERSION_3, CAP_DAC_READ_SEARCH_BIT = 0x20080522, 1 << 2
NOBODY = 65534
_LIBC = ctypes.CDLL(None, use_errno=True)

# Run once before forking: every child inherits PyTorch's first-call set-up, including the
# TorchDynamo import an optimizer's first `step()` makes (2.5 s, in every run otherwise).
WARM_UP = ("x = torch.ones(2, 2, requires_grad=True)\nout = (x * x + 1).mean()\nout.backward()\n"
           "torch.optim.SGD([x], lr=0.1).step()\n")


def main(path: str) -> None:
    # One thread: a fork must not inherit a started OpenMP pool.
    torch.set_num_threads(1)
    execute(WARM_UP)
    _unshare_network()  # where Linux allows: SECURITY.md
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)  # the server's alone: a child running as nobody cannot connect
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)  # what libraries print (np.info) must not fill a
    os.dup2(quiet, 1)                         # pipe nobody reads: children write to nothing
    os.dup2(quiet, 2)
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable:  # the parent is gone
            return
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            _child(conn)
        conn.close()


def _child(conn: socket.socket) -> None:
    """Serve one job in this fresh process, then leave without running any cleanup."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        job = json.loads(recv(conn, 1 << 24))
        send(conn, json.dumps({"pid": os.getpid()}).encode())
        limits = Limits(**job["limits"])
        torch.set_num_threads(job["threads"])
        _confine(limits, job["device"])
        def progress(update: dict[str, Any]) -> None:  # streamed while the program runs
            send(conn, json.dumps({"progress": update}).encode())

        trace = execute(job["code"], device=job["device"], limits=limits, seed=job["seed"],
                        keep=tuple(job["keep"]), progress=progress)
        send(conn, trace_message(trace))
    except BaseException:  # noqa: BLE001 - the parent reports a child that did not answer
        code = 1
    finally:
        os._exit(code)


def _confine(limits: Limits, device: str) -> None:
    """The second wall, should a program get past the sandbox: this child gets a private
    directory, capped CPU time, memory and file size, no core dumps and, where Linux lets it,
    an unprivileged user, no new processes and no way to gain privileges again.

    The CPU cap is a backstop for C loops that nothing else can interrupt, should the parent
    be gone; the parent normally kills the child at the time limit first.
    """
    zygote = os.getppid()
    home = _private_dir()
    cpu_s = int(limits.time_s * torch.get_num_threads()) + 3
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writing a file fails instead of killing us
    cuda = device.startswith("cuda")
    if cuda:
        # An address-space cap breaks the CUDA driver: cap what PyTorch may allocate instead.
        if torch.cuda.is_available():
            index = torch.device(device).index or 0
            total = torch.cuda.get_device_properties(index).total_memory
            fraction = min(1.0, limits.memory_mb * 2**20 / total)
            torch.cuda.set_per_process_memory_fraction(fraction, index)
    else:
        # Start this run's OpenMP threads now: once processes are capped, none can start.
        torch.ones(torch.get_num_threads() << 16).add_(1)
        cap = _address_space() + limits.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    _drop_privileges(home)
    if not cuda:  # the CUDA driver starts threads of its own
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))  # not enforced for root
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the user changed: that clears it
    if os.getppid() != zygote:  # it ended before that: so does this run
        os._exit(1)


def _private_dir() -> str:
    """Make `run-<pid>` in the zygote's private directory this child's cwd, HOME and TMPDIR
    (the parent removes it after the run)."""
    home = os.path.abspath(f"run-{os.getpid()}")
    os.mkdir(home, 0o700)
    os.chdir(home)
    os.environ.update(HOME=home, TMPDIR=home)
    tempfile.tempdir = home  # set, not searched: the search writes a file, which fails here
    return home


def _drop_privileges(home: str) -> None:
    """As root, become `nobody`, keeping only the right to read files (the Python library may
    live under /root): no writing or deleting others' files, no signals to the server,
    rlimits that hold (RLIMIT_NPROC included). Elsewhere, or if Linux says no, stay as is."""
    if os.geteuid() != 0 or sys.platform != "linux":
        return
    try:
        os.chown(home, NOBODY, NOBODY)
        _prctl(PR_SET_KEEPCAPS, 1)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError:
        return
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)(CAP_DAC_READ_SEARCH_BIT, CAP_DAC_READ_SEARCH_BIT, 0, 0, 0, 0)
    _LIBC.capset(header, data)  # effective, permitted, inheritable (two 32-bit words each)


def _unshare_network() -> None:
    """Move this process (and so every child forked later) into a network namespace of its
    own: no interfaces but a loopback that is down, so no socket reaches anything. Needs
    root (or CAP_SYS_ADMIN); where Linux says no, nothing changes."""
    if sys.platform == "linux":
        _LIBC.unshare(CLONE_NEWNET)


def _prctl(option: int, value: int) -> None:
    if sys.platform == "linux":
        _LIBC.prctl(option, value, 0, 0, 0)


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


if __name__ == "__main__":
    main(sys.argv[1])
