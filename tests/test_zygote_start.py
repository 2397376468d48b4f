"""How the zygote starts: it forks before autograd's engine or CUDA has started, and one that
cannot start says why.

Where the run starts is part of the wall: wherever CUDA is present PyTorch refuses autograd in a
child forked after a backward ("Unable to handle autograd's threading in combination with
fork-based multiprocessing"), and CUDA in a child forked after CUDA started. The first tests
can fail on a machine without a GPU: the real zygote (`explorer.record.zygote`, its module run
as the pool runs it) starts under a tripwire on the engine's entry point
(`Variable._execution_engine`, which every backward and `autograd.grad` goes through) and on
CUDA's start (`torch.cuda._lazy_init`); at each fork, the zygote ends with status 97 if either
was used in it, having written which to `tripped`. A run through its socket then shows that its
children do run backward.
"""

from __future__ import annotations

import ctypes.util
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

from explorer.safety import box, libraries
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.wire import MAX_RESULT_BYTES, body, header, job_message, recv, send
from tests.conftest import ROOT
from tests.test_libraries import in_private_mounts

TRIPPED = 97
# Runs the zygote's module as `python -m explorer.record.zygote SOCKET --unlocked` would, with
# the tripwire set first; its second argument is code the zygote's process runs before its own.
TRIPWIRE = textwrap.dedent("""
    import os, runpy, sys
    import torch
    from torch.autograd.variable import Variable

    zygote, used = os.getpid(), []

    class Tripwire:
        def __init__(self, engine):
            self.engine = engine

        def __getattr__(self, name):  # run_backward, queue_callback, ...
            if os.getpid() == zygote:
                used.append(f"autograd's engine ({name})")
            return getattr(self.engine, name)

    Variable._execution_engine = Tripwire(Variable._execution_engine)
    lazy_init = torch.cuda._lazy_init

    def cuda_start():
        if os.getpid() == zygote:
            used.append("CUDA")
        return lazy_init()

    torch.cuda._lazy_init = cuda_start
    fork = os.fork

    def checked_fork():
        if os.getpid() == zygote and (used or torch.cuda.is_initialized()):
            with open("tripped", "w") as said:  # its error output is /dev/null by now
                said.write(f"started before the fork: {used or ['CUDA']}")
            os._exit(TRIPPED)
        return fork()

    os.fork = checked_fork
    exec(sys.argv[2])
    sys.argv = ["zygote", sys.argv[1], "--unlocked"]
    runpy.run_module("explorer.record.zygote", run_name="__main__", alter_sys=True)
""").replace("TRIPPED", str(TRIPPED))
# The Playground's errors after running `print(6 * 7)`, in an app of its own.
PAGE = textwrap.dedent("""
    import json, sys
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(sys.argv[1], default_timeout=120)
    at.run()
    at.switch_page("pages/1_Playground.py").run()
    at.session_state["playground.code"] = "print(6 * 7)"
    at.button(key="playground.run").click().run()
    print(json.dumps({"errors": [e.value for e in at.error], "code": [c.value for c in at.code]}))
""")
CLI = "import sys\nfrom explorer.cli import main\nsys.exit(main(sys.argv[1:]))\n"
PROGRAM = "x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\nprint(x.grad)\n"


def start(folder: Path, before: str = "") -> subprocess.Popen[bytes]:
    """The real zygote under the tripwire, serving `folder / "zygote.sock"` unlocked."""
    return subprocess.Popen(
        [sys.executable, "-c", TRIPWIRE, str(folder / "zygote.sock"), before],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=folder,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TORCHDYNAMO_DISABLE": "1"})


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start(tmp_path)
    yield process
    process.kill()
    process.wait()


def ask(path: Path, code: str, folder: str = "run-1") -> Trace:
    """Run `code` through the zygote's socket as the pool does, unlocked (in `folder`)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        limits = Limits(time_s=30)
        send(conn, job_message(code, "cpu", limits, 0, 1, (), folder))
        recv(conn, 1 << 10)  # the child's hello
        while True:
            size, update = header(conn)
            answer = body(conn, size, MAX_RESULT_BYTES)
            if not update:
                return Trace.from_json(answer, limits)


def tripped(folder: Path) -> str:
    return (folder / "tripped").read_text() if (folder / "tripped").exists() else ""


def test_the_zygote_forks_before_autograds_engine_or_cuda_starts(
        zygote: subprocess.Popen[bytes], tmp_path: Path) -> None:
    assert zygote.stdout is not None and zygote.stderr is not None
    assert zygote.stdout.readline() == b"ready\n", zygote.stderr.read().decode()[-2000:]
    try:
        trace = ask(tmp_path / "zygote.sock", PROGRAM)  # the spare was forked past the tripwire
    except OSError as error:
        pytest.fail(f"the zygote ended ({error}): {tripped(tmp_path)}")
    assert not tripped(tmp_path)
    assert trace.ok, trace.error
    assert trace.stdout == "tensor([2., 2., 2.])\n"  # its child ran the engine itself
    # forward-mode AD's first op found what it imports there already: no warning of PyTorch's
    # own (of torch.jit.script) is the program's
    try:
        forward = ask(tmp_path / "zygote.sock",
                      "j = torch.func.jacfwd(torch.sin)(torch.zeros(2))\n", "run-2")
    except OSError as error:
        pytest.fail(f"the zygote ended ({error}): {tripped(tmp_path)}")
    assert forward.ok and forward.warnings == [], (forward.error, forward.warnings)
    assert forward.variables["j"].values == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(("before", "caught"), [
    ("x = torch.ones(1, requires_grad=True)\n(2 * x).backward()", "engine (run_backward)"),
    ("x = torch.ones(1, requires_grad=True)\ntorch.autograd.grad(2 * x, x)", "autograd's engine"),
    # Where PyTorch has no CUDA this raises, once the tripwire has seen the attempt.
    ("try:\n    torch.cuda.init()\nexcept (AssertionError, RuntimeError):\n    pass", "CUDA"),
], ids=["backward", "autograd.grad", "cuda"])
def test_the_tripwire_catches_what_starts_before_the_fork(tmp_path: Path, before: str,
                                                          caught: str) -> None:
    """The test above can fail here: a zygote that started either first is stopped."""
    process = start(tmp_path, before)
    process.communicate(timeout=300)
    assert process.returncode == TRIPPED
    assert caught in tripped(tmp_path)


# A zygote that cannot start says why, at once: its error output's last lines, in the pool's
# answer, on the page and from `explorer run`. Built as root in a private mount namespace, where
# PyTorch's core library is an empty file (a broken install: the server, which never imports
# PyTorch, and the box's probe, which imports the walls only, do not see it).
TORCH_CORE = glob.glob(os.path.join(os.path.dirname(str(find_spec("torch").origin)), "_C.*.so"))
broken_torch_here = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or not TORCH_CORE,
    reason="needs root and unshare (util-linux) to break PyTorch in a private mount namespace")
POOL = textwrap.dedent("""
    from explorer.pool.worker import WorkerPool
    pool = WorkerPool(size=1)
    trace = pool.run("print(6 * 7)")
    print(trace.error.type if trace.error else None, trace.error and trace.error.message)
""")


def broken_torch(folder: Path) -> str:
    """The mount that leaves PyTorch's core library empty."""
    (folder / "empty.so").touch()
    return f"mount --bind {folder / 'empty.so'} {TORCH_CORE[0]}"


def says_why(message: str) -> bool:
    """Whether `message` says the zygote ended as it started, with the import's error."""
    return ("the worker process ended as it started" in message and "file too short" in message
            and "within" not in message)


@broken_torch_here
def test_a_zygote_that_cannot_start_is_reported_with_its_reason(tmp_path: Path) -> None:
    done = in_private_mounts(broken_torch(tmp_path), POOL)
    assert done.returncode == 0, done.stderr[-3000:]
    kind, message = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert kind == "WorkerUnavailable"
    assert says_why(message), message


@broken_torch_here
def test_explorer_run_says_why_the_zygote_did_not_start(tmp_path: Path) -> None:
    program = tmp_path / "six.py"
    program.write_text("print(6 * 7)\n")
    done = in_private_mounts(broken_torch(tmp_path), CLI, "run", str(program))
    assert done.returncode == 1
    assert "WorkerUnavailable" in done.stdout and says_why(done.stdout), done.stdout


@broken_torch_here
def test_the_page_says_why_the_zygote_did_not_start(tmp_path: Path) -> None:
    done = in_private_mounts(broken_torch(tmp_path), PAGE, str(ROOT / "streamlit_app.py"))
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert "WorkerUnavailable" in shown["errors"]  # the error panel's title, its words below
    assert any(says_why(words) for words in shown["code"]), shown


@pytest.mark.skipif(os.geteuid() != 0 or bool(box.missing()),
                    reason="needs root (the box runs as nobody) and a box")
def test_a_box_that_cannot_load_libseccomp_is_reported_with_its_reason(tmp_path: Path) -> None:
    """libseccomp where only root may read it: the server loads it, the box's user cannot.
    The probe, which raises the walls in a box, says so before any zygote starts."""
    hidden = tmp_path / "root-only"
    hidden.mkdir()
    seccomp = hidden / os.path.basename(str(ctypes.util.find_library("seccomp")))
    shutil.copyfile(libraries.located()["seccomp"], seccomp)
    seccomp.chmod(0o600)
    done = subprocess.run(
        [sys.executable, "-c", POOL], capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "LD_LIBRARY_PATH": str(hidden)}, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    kind, message = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert kind == "WallMissing"
    assert "bubblewrap could not build the box" in message
    assert f"{seccomp}: cannot open shared object file: Permission denied" in message, message
