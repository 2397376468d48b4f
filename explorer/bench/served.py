"""The app served on this machine, for the benchmark's browser mode and the tests:
`streamlit run streamlit_app.py` on a free port of 127.0.0.1, and Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium's own background traffic would be refused by a closed network: switch it off.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, server: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Wait up to 60 s for the Streamlit `server` at `url` to answer its health check; if it
    exits or never answers, raise with the end of its `log`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"streamlit exited: {log.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit did not become healthy within 60 s")


@contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """The project at git `revision`, checked out beside this one until the block ends;
    LookupError, with git's words, where it cannot be."""
    with tempfile.TemporaryDirectory() as where:
        tree = Path(where) / "app"
        added = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach",
                                "--quiet", str(tree), revision], capture_output=True, text=True,
                               check=False)
        if added.returncode:
            raise LookupError(f"cannot check out {revision!r}: {added.stderr.strip()}")
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)


@contextmanager
def app(log: IO[bytes], hosted: bool = False, root: Path = ROOT) -> Iterator[str]:
    """The app of the checkout at `root` on a free port (in hosted mode if `hosted`), its
    output in `log`; its URL until the block ends."""
    with server(log, hosted, root) as (url, _):
        yield url


@contextmanager
def server(log: IO[bytes], hosted: bool = False,
           root: Path = ROOT) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`app`, with the server's process (the leader of its own process group)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port",
         str(port), "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=os.environ | {"EXPLORER_HOSTED": "1" if hosted else ""})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        yield url, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def threads_under(pid: int) -> list[int]:
    """Every thread of process `pid` and of every process under it (/proc's task lists)."""
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            found.append(int(task.name))
            with suppress(OSError):
                todo += map(int, (task / "children").read_text().split())
    return found


@contextmanager
def pinned(pid: int, cpus: set[int]) -> Iterator[None]:
    """Process `pid` and every process under it on `cpus` until the block ends, then on the
    CPUs they had; what they start meanwhile inherits the CPUs of the thread that starts it."""
    every = os.sched_getaffinity(pid)
    _pin(pid, cpus)
    try:
        yield
    finally:
        _pin(pid, every)


def _pin(pid: int, cpus: set[int]) -> None:
    for thread in threads_under(pid):
        with suppress(OSError):  # it has ended meanwhile
            os.sched_setaffinity(thread, cpus)
