"""The operating-system wall, judged by effect with the Python guard out of the way.

A probe starts in the box the pool builds (`explorer.safety.box`), forks like the zygote, enters
its child exactly as a run does (`explorer.record.zygote.enter`: working directory, lock, limits),
and then runs *unguarded* Python: real builtins, `import os`, `ctypes`. Everything it tries
is reported back and judged here; canary files, processes and IPC objects are checked from
the outside afterwards. `PAYLOAD_PROBE` does the same for the named payloads of
`tests/wall_attacks.py`: the shared ones in one child, each `alone` one in a child of its own
next to another confined run and a stand-in for the zygote, whose state is compared before and
after.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.bench.served import ROOT
from explorer.pool.worker import WorkerPool
from explorer.safety import box, confine
from explorer.safety.limits import Limits
from tests.test_worker import parent_of, processes
from tests.wall_attacks import WALL_ATTACKS, WallAttack

pytestmark = pytest.mark.skipif(bool(box.missing() or confine.missing()),
                                reason=f"no wall here: {box.missing() or confine.missing()}")
SECRET = "canary-7f3a9c"

# Runs in the box: fork as the zygote does, enter the child as a run does, then attack.
PROBE = textwrap.dedent("""
    import ctypes, json, os, signal, socket, sys
    from explorer.record import zygote
    from explorer.safety import confine
    targets = json.loads(sys.argv[1])
    os.makedirs(zygote.HOME, 0o500)  # as the zygote does
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        print(os.read(read, 1 << 20).decode())
        os.waitpid(pid, 0)
        sys.exit(0)
    os.close(read)
    # A job cannot turn the lock off: the zygote alone decides (the lock is asserted below).
    job = {"limits": %(limits)s, "threads": 1, "dir": "run-probe", "lock": False,
           "device": "cpu"}
    zygote.enter(job, confine.readable_paths(), [])
    results = {}

    def attempt(name, action):
        try:
            value = action()
            results[name] = "allowed" if value is None else repr(value)[:200]
        except BaseException as error:
            results[name] = type(error).__name__

    def fork():
        if os.fork() == 0:
            os._exit(0)

    libc = ctypes.CDLL(None, use_errno=True)
    for name, path in targets["read"].items():
        attempt("read " + name, lambda: open(path).read())
    for name, path in targets["list"].items():
        attempt("list " + name, lambda: os.listdir(path))
    for name, path in targets["create"].items():
        attempt("create " + name, lambda: open(os.path.join(path, "left-behind"), "w").close())
    attempt("write here", lambda: os.write(os.open("data", os.O_WRONLY | os.O_CREAT), b"x"))
    attempt("execve", lambda: os.execv("/bin/sh", ["sh", "-c", "true"]))
    attempt("exec python", lambda: os.execv(sys.executable, [sys.executable, "-c", "1"]))
    attempt("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
    attempt("socketpair", socket.socketpair)
    attempt("fork", fork)
    attempt("shmget", lambda: libc.shmget(0, 4096, 0o1000 | 0o600) == -1 or "made one")
    attempt("semget", lambda: libc.semget(0, 1, 0o1000 | 0o600) == -1 or "made one")
    attempt("msgget", lambda: libc.msgget(0, 0o1000 | 0o600) == -1 or "made one")
    attempt("posix shm", lambda: open("/dev/shm/left-behind", "w").close())
    attempt("kill zygote", lambda: os.kill(os.getppid(), signal.SIGKILL))
    attempt("kill all", lambda: os.kill(-1, signal.SIGKILL))
    attempt("unshare", lambda: libc.unshare(0x10000000) == -1 or "unshared")
    attempt("ptrace", lambda: libc.ptrace(16, os.getppid(), 0, 0) == -1 or "attached")
    attempt("zygote memory", lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(1))
    attempt("zygote environ", lambda: open(f"/proc/{os.getppid()}/environ").read())
    attempt("own status", lambda: "Seccomp:\\t2" in open("/proc/self/status").read() or "no")
    attempt("uid", lambda: (os.getuid(), os.geteuid()))
    attempt("chmod pool dir", lambda: os.chmod("..", 0o777))
    attempt("chmod socket", lambda: os.chmod(targets["socket"], 0o777))
    attempt("raise limits", lambda: __import__("resource").setrlimit(
        __import__("resource").RLIMIT_AS, (-1, -1)))
    os.write(write, json.dumps(results).encode())
    os._exit(0)
""")


@pytest.fixture(scope="module")
def canaries() -> Iterator[dict[str, Path]]:
    """A world-readable canary inside the checkout and a root-only one in the home directory
    (where the test can make them), both outside what a run may read."""
    made = {"checkout": ROOT / "artifacts" / "canary.txt",
            "home": Path.home() / f".explorer-{SECRET}"}
    made["checkout"].parent.mkdir(exist_ok=True)
    for name, path in made.items():
        path.write_text(SECRET)
        path.chmod(0o644 if name == "checkout" else 0o600)
    yield made
    for path in made.values():
        path.unlink(missing_ok=True)


def ipc_objects() -> set[str]:
    """System V IPC objects on the host (keys and ids, from /proc/sysvipc)."""
    found = set()
    for kind in ("shm", "sem", "msg"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found |= {f"{kind} {' '.join(line.split()[:2])}" for line in lines}
    return found


@pytest.fixture(scope="module")
def attempts(canaries: dict[str, Path]) -> dict[str, str]:
    """What the probe reports, with the host checked before and after."""
    before_ipc, before_processes = ipc_objects(), processes()
    with tempfile.TemporaryDirectory(prefix="explorer-wall-") as place:
        other = Path(place) / "run-other"
        other.mkdir()
        (other / "secret.txt").write_text(SECRET)
        socket.socket(socket.AF_UNIX).bind(str(Path(place) / "zygote.sock"))  # a stand-in
        os.chmod(Path(place) / "zygote.sock", 0o600)
        os.chown(Path(place) / "zygote.sock", box.box_user(), -1)
        os.chown(place, box.box_user(), -1)
        targets = {
            "read": {"checkout canary": str(canaries["checkout"]),
                     "root-only canary": str(canaries["home"]),
                     "shadow": "/etc/shadow", "passwd": "/etc/passwd",
                     "other run": str(other / "secret.txt"),
                     "project README": str(ROOT / "README.md"),
                     "explorer source": str(ROOT / "explorer" / "safety" / "limits.py")},
            "list": {"root": "/", "home dir": str(Path.home()), "/home": "/home",
                     "checkout": str(ROOT), "pool dir": place, "other run": str(other),
                     "proc": "/proc", "tmp": "/tmp"},
            "create": {"tmp": "/tmp", "pool dir": place, "other run": str(other),
                       "explorer": str(ROOT / "explorer"), "private": "."},
            "socket": str(Path(place) / "zygote.sock"),
        }
        limits = json.dumps(Limits().__dict__)
        argv = [sys.executable, "-c", PROBE % {"limits": limits}, json.dumps(targets)]
        env = {"PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.monotonic()
        done = subprocess.run(box.command(argv, place, env), capture_output=True, text=True,
                              timeout=120, check=False, cwd=place)
        assert done.returncode == 0, done.stderr[-2000:]
        assert time.monotonic() - started < 60
        results: dict[str, str] = json.loads(done.stdout)
        results["left in pool dir"] = repr(sorted(set(os.listdir(place))
                                                  - {other.name, "zygote.sock"}))
        results["socket mode"] = oct(os.stat(Path(place) / "zygote.sock").st_mode & 0o777)
        results["other run untouched"] = repr(sorted(os.listdir(other)))
    time.sleep(0.2)
    results["processes left"] = repr(sorted(processes(place) - before_processes))
    results["ipc left"] = repr(sorted(ipc_objects() - before_ipc))
    results["canaries intact"] = repr(all(p.read_text() == SECRET for p in canaries.values()))
    return results


def test_nothing_outside_what_python_needs_can_be_read(attempts: dict[str, str]) -> None:
    for target in ("checkout canary", "root-only canary", "shadow", "passwd", "other run",
                   "project README"):
        assert attempts[f"read {target}"] in {"PermissionError", "FileNotFoundError"}, target
    assert SECRET not in json.dumps(attempts)
    assert attempts["read explorer source"].startswith("'\"\"\"The caps")  # the wall is exact


def test_nothing_outside_can_be_listed(attempts: dict[str, str]) -> None:
    for target in ("root", "home dir", "/home", "checkout", "pool dir", "other run", "proc",
                   "tmp"):
        assert attempts[f"list {target}"] in {"PermissionError", "FileNotFoundError"}, target


def test_no_file_is_made_not_even_in_the_private_directory(attempts: dict[str, str]) -> None:
    for target in ("tmp", "pool dir", "other run", "explorer", "private"):
        assert attempts[f"create {target}"] in {"PermissionError", "OSError",
                                                "FileNotFoundError"}, target
    assert attempts["write here"] == "PermissionError"
    assert attempts["posix shm"] in {"PermissionError", "FileNotFoundError"}
    assert attempts["other run untouched"] == repr(["secret.txt"])


def test_no_exec_socket_process_ipc_or_signal(attempts: dict[str, str]) -> None:
    for name in ("execve", "exec python", "socket", "unix socket", "socketpair", "fork",
                 "kill zygote", "kill all", "zygote memory", "zygote environ"):
        assert attempts[name] == "PermissionError", name
    for name in ("shmget", "semget", "msgget", "ptrace", "unshare"):
        assert attempts[name] == "True", name  # the call returned -1: refused
    assert attempts["own status"] == "True"  # a seccomp filter is in force
    # Landlock has no right for a file's mode: seccomp refuses it (the box's user owns both).
    assert attempts["chmod pool dir"] == attempts["chmod socket"] == "PermissionError"
    assert attempts["socket mode"] == "0o600"
    assert attempts["raise limits"] == "ValueError"
    uid = box.box_user()
    assert attempts["uid"] == repr((uid, uid))


def test_nothing_is_left_behind(attempts: dict[str, str]) -> None:
    assert attempts["processes left"] == "[]"
    assert attempts["ipc left"] == "[]"
    assert attempts["left in pool dir"] == "['home']"  # the zygote's: a locked run makes none
    assert attempts["canaries intact"] == "True"


def test_the_pool_runs_its_zygote_in_the_box() -> None:
    pool = WorkerPool(size=1, require_walls=True, kept_bytes=0)
    try:
        trace = pool.run("print(1 + 1)")
        assert trace.ok and trace.stdout == "2\n"
        assert pool._zygote is not None
        (zygote,) = [p for p in processes() if parent_of(p) == pool._zygote.pid]
        status = Path(f"/proc/{zygote}/status").read_text()
        assert "CapEff:\t0000000000000000" in status
        assert f"Uid:\t{box.box_user()}\t" in status
        for namespace in ("net", "pid", "ipc", "mnt", "uts"):
            assert (os.readlink(f"/proc/{zygote}/ns/{namespace}")
                    != os.readlink(f"/proc/self/ns/{namespace}")), namespace
    finally:
        pool.close()


# Runs in the box: for each group of payloads, a stand-in zygote and a victim run next to an
# attacker that enters its child as a run does and runs the payloads unguarded, one JSON line
# each. The zygote's stdin is a pipe here too.
PAYLOAD_PROBE = textwrap.dedent("""
    import ctypes, json, mmap, os, select, signal, sys, time
    from explorer.record import zygote
    from explorer.safety import confine
    payloads, T = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    readable = confine.readable_paths()
    os.makedirs(zygote.HOME, 0o500)  # as the zygote does
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    stdin_r, stdin_w = os.pipe()
    os.dup2(stdin_r, 0)
    os.close(stdin_r)

    def job(name):
        return {"limits": %(limits)s, "threads": 1, "dir": name, "device": "cpu"}

    def state(pid):
        try:
            limits = open(f"/proc/{pid}/limits").read()
            return [limits, os.getpriority(os.PRIO_PROCESS, pid),
                    sorted(os.sched_getaffinity(pid)), os.sched_getscheduler(pid)]
        except OSError as error:
            return repr(error)

    def asm(code):
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(code)
        call = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        call.page = page
        return call

    groups = [[p for p in payloads if not p["alone"]]] + [[p] for p in payloads if p["alone"]]
    results = {}
    for number, group in enumerate(groups):
        stand_in = os.fork()
        if stand_in == 0:  # unconfined, the box's user, Python's own signal handlers
            while True:
                time.sleep(0.05)
        ready_r, ready_w = os.pipe()
        victim = os.fork()
        if victim == 0:  # another run, busy
            zygote.enter(job(f"run-victim-{number}"), readable, [])
            os.write(ready_w, b"x")
            while True:
                sum(range(1000))
                time.sleep(0.005)
        os.read(ready_r, 1)
        before = [state(stand_in), state(victim)]
        read, write = os.pipe()
        attacker = os.fork()
        if attacker == 0:
            os.close(read)
            zygote.enter(job(f"run-{number}"), readable, [])
            scope = {"os": os, "sys": sys, "ctypes": ctypes, "asm": asm, "T": T,
                     "libc": ctypes.CDLL(None, use_errno=True), "victim": victim,
                     "zygote": stand_in}
            for payload in group:
                try:
                    try:
                        code = compile(payload["code"], payload["name"], "eval")
                        value = eval(code, scope)
                    except SyntaxError:
                        scope["result"] = None
                        exec(compile(payload["code"], payload["name"], "exec"), scope)
                        value = scope["result"]
                    outcome = "ok:" + repr(value)[:200]
                except BaseException as error:
                    outcome = type(error).__name__
                os.write(write, (json.dumps([payload["name"], outcome]) + "\\n").encode())
            os._exit(0)
        os.close(write)
        said = b""
        while part := os.read(read, 1 << 16):
            said += part
        os.close(read)
        _, status = os.waitpid(attacker, 0)
        for line in said.decode().splitlines():
            name, outcome = json.loads(line)
            results[name] = {"outcome": outcome}
        for payload in group:
            if payload["name"] not in results:
                signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
                died = signal.Signals(signum).name if signum else f"exit {status}"
                results[payload["name"]] = {"outcome": f"killed:{died}"}
        time.sleep(0.05)
        after = [state(stand_in), state(victim)]
        alive = [os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in (stand_in, victim)]
        stdin = bool(select.select([0], [], [], 0)[0])
        if stdin:
            os.read(0, 1 << 16)
        effects = []
        for who, ok, old, new in zip(("zygote", "victim"), alive, before, after):
            if not ok:
                effects.append(f"{who} died")
            elif old != new:
                effects.append(f"{who} changed")
        if stdin:
            effects.append("zygote stdin written")
        for payload in group:
            results[payload["name"]]["effects"] = effects
        for pid, living in zip((stand_in, victim), alive):
            if living:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def payload_results(canaries: dict[str, Path]) -> dict[str, dict[str, object]]:
    """Every payload of `WALL_ATTACKS` in the probe, with the host checked before and after."""
    before_ipc, before_processes = ipc_objects(), processes()
    explorer_dir = ROOT / "explorer"
    sources = {p.name: p.stat().st_mtime for p in explorer_dir.iterdir()}
    with tempfile.TemporaryDirectory(prefix="explorer-wall-") as place:
        other = Path(place) / "run-other"
        other.mkdir()
        (other / "secret.txt").write_text(SECRET)
        socket.socket(socket.AF_UNIX).bind(str(Path(place) / "zygote.sock"))  # a stand-in
        os.chmod(Path(place) / "zygote.sock", 0o600)
        os.chown(Path(place) / "zygote.sock", box.box_user(), -1)
        os.chown(place, box.box_user(), -1)
        site = next(p for p in sys.path if p.endswith("site-packages"))
        targets = {"checkout canary": str(canaries["checkout"]),
                   "root-only canary": str(canaries["home"]), "shadow": "/etc/shadow",
                   "passwd": "/etc/passwd", "hostname": "/etc/hostname",
                   "ld.so.cache": "/etc/ld.so.cache", "other run": str(other),
                   "other run name": other.name, "project README": str(ROOT / "README.md"),
                   "home bashrc": str(Path.home() / ".bashrc"), "home": str(Path.home()),
                   "checkout": str(ROOT), "pool dir": place, "explorer": str(explorer_dir),
                   "site-packages": site}
        targets["other run"] = str(other)
        payloads = [{"name": a.name, "code": a.code, "alone": a.alone} for a in WALL_ATTACKS]
        script = PAYLOAD_PROBE % {"limits": json.dumps(Limits().__dict__)}
        argv = [sys.executable, "-c", script, json.dumps(payloads), json.dumps(targets)]
        env = {"PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(box.command(argv, place, env), capture_output=True, text=True,
                              timeout=120, check=False, cwd=place)
        assert done.returncode == 0, done.stderr[-2000:]
        results: dict[str, dict[str, object]] = json.loads(done.stdout)
        left = sorted(set(os.listdir(place)) - {other.name, "zygote.sock", "home"})
        modes = [oct(os.stat(path).st_mode & 0o777) for path in (Path(place) / "zygote.sock",
                                                                  Path(place))]
        other_files = sorted(os.listdir(other))
    time.sleep(0.2)
    results["(host)"] = {
        "left in pool dir": left,
        "modes of socket and pool dir": modes,
        "other run": other_files,
        "processes left": sorted(processes(place) - before_processes),
        "ipc left": sorted(ipc_objects() - before_ipc),
        "canaries intact": all(p.read_text() == SECRET for p in canaries.values()),
        "sources intact": {p.name: p.stat().st_mtime for p in explorer_dir.iterdir()} == sources,
        "tmp left": [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("left-")],
    }
    return results


def test_the_payloads_are_many_and_named_once() -> None:
    names = [a.name for a in WALL_ATTACKS]
    assert len(names) == len(set(names))
    assert len(names) >= 150


@pytest.mark.parametrize("attack", WALL_ATTACKS, ids=lambda a: f"{a.category}-{a.name}")
def test_payload_is_stopped_by_the_wall(attack: WallAttack,
                                        payload_results: dict[str, dict[str, object]]) -> None:
    result = payload_results[attack.name]
    assert result["outcome"] in attack.expect, result
    assert SECRET not in json.dumps(result)
    if attack.alone:
        assert result["effects"] == [], result


def test_the_payloads_left_nothing_behind(
        payload_results: dict[str, dict[str, object]]) -> None:
    host = payload_results["(host)"]
    assert host["left in pool dir"] == [] and host["tmp left"] == []
    assert host["modes of socket and pool dir"] == ["0o600", "0o700"]
    assert host["other run"] == ["secret.txt"]
    assert host["processes left"] == [] and host["ipc left"] == []
    assert host["canaries intact"] is True and host["sources intact"] is True


def test_walls_built_ahead_are_raised_only_in_the_process_they_name(tmp_path: Path) -> None:
    """A spare child builds its walls before its run comes (explorer.record.zygote): walls
    built in one process refuse to lock another, and in their own they hold."""
    script = textwrap.dedent(f"""
        import os, sys
        from explorer.safety import confine
        walls = confine.Walls(confine.readable_paths())
        pid = os.fork()
        if pid == 0:
            try:
                walls.lock({str(tmp_path)!r})
            except RuntimeError as error:
                print(error, flush=True)
                os._exit(0)
            os._exit(1)
        os.waitpid(pid, 0)
        walls.lock({str(tmp_path)!r})
        try:
            open({str(ROOT / "README.md")!r}).read()
        except PermissionError:
            print("locked")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert done.stdout.splitlines() == ["these walls were built for another process", "locked"]
