"""The zygote: a process that imports PyTorch once, then forks one fresh child per run.

`python -m explorer.zygote SOCKET` listens on a Unix socket. For every connection it forks;
the child reads one job, tells its pid (so the parent can kill it at the time limit), lowers
its own limits, runs the job and answers with the Trace as JSON, never pickle: even a child
that escaped the sandbox cannot make the server run code. The zygote ends when its standard
input closes, which happens when the parent goes away. It never touches CUDA, so each child
may start CUDA safely after the fork.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import socket
import sys

import torch

from explorer.execute import execute
from explorer.limits import Limits
from explorer.wire import recv, send

WARM_UP = "x = torch.ones(2, 2, requires_grad=True)\nout = (x * x + 1).mean()\nout.backward()\n"


def main(path: str) -> None:
    # One small run first, so every child inherits PyTorch's first-call set-up. One thread:
    # a fork must not inherit a started OpenMP pool.
    torch.set_num_threads(1)
    execute(WARM_UP)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
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
        trace = execute(job["code"], device=job["device"], limits=limits, seed=job["seed"])
        send(conn, trace.to_json().encode())
    except BaseException:  # noqa: BLE001 - the parent reports a child that did not answer
        code = 1
    finally:
        os._exit(code)


def _confine(limits: Limits, device: str) -> None:
    """Lower this child's limits: no files written, no core dumps, capped memory and CPU.

    The CPU cap is a backstop for C loops that nothing else can interrupt, should the parent
    be gone; the parent normally kills the child at the time limit first.
    """
    _die_with_parent()
    cpu_s = int(limits.time_s * torch.get_num_threads()) + 3
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writing a file fails instead of killing us
    if device.startswith("cuda"):
        # An address-space cap breaks the CUDA driver: cap what PyTorch may allocate instead.
        if torch.cuda.is_available():
            index = torch.device(device).index or 0
            total = torch.cuda.get_device_properties(index).total_memory
            fraction = min(1.0, limits.memory_mb * 2**20 / total)
            torch.cuda.set_per_process_memory_fraction(fraction, index)
        return
    size = _address_space()
    cap = size + limits.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _die_with_parent() -> None:
    """Ask Linux to kill this child when the zygote ends (prctl PR_SET_PDEATHSIG)."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 is PR_SET_PDEATHSIG


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


if __name__ == "__main__":
    main(sys.argv[1])
