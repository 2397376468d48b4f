"""The zygote's box: the bubblewrap command line that starts it walled off from the host.

Inside the box the zygote and every run forked from it see, read-only, only what Python
needs (`explorer.safety.confine.readable_paths`: the interpreter, its libraries, the app's own
package, the system's shared libraries, the CPU's description) plus, writable, the pool's
own directory; a private `/tmp`, `/dev` and `/proc`; new PID, IPC, network, UTS and cgroup
namespaces (no network at all, no other processes, no shared IPC objects); no capabilities;
no environment but what the pool sets; and a new session (no terminal to type into). As
root, the box drops to `nobody` (setpriv, from util-linux) before Python starts, so no run has
root's file rights; as another user, bubblewrap makes a user namespace and keeps that user.
The zygote is the box's PID 1: every run ends with it, and it ends when the pool closes its
standard input (also when the server dies). No `--die-with-parent`: Linux sends that signal
when the *thread* that started the box ends, and Streamlit starts the pool in a script thread.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import PurePath

from explorer.safety.confine import PACKAGE, gpu_devices, readable_paths

NOBODY = 65534  # the user a box started by root runs as
# ctypes finds libseccomp (explorer.safety.confine) with `ldconfig -p`, as the zygote starts.
LIBRARY_FINDER = ("/etc/ld.so.cache", os.path.realpath("/sbin/ldconfig"))
NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
              "--unshare-cgroup-try")


def command(argv: list[str], writable: str, env: Mapping[str, str],
            info_fd: int | None = None) -> list[str]:
    """`argv` run in the box, with `writable` (the pool's directory, which must belong to
    `box_user()`) bound read-write as its working directory. bubblewrap writes to `info_fd`
    the JSON `{"child-pid": ...}`: `argv`'s pid outside the box."""
    root = os.geteuid() == 0
    box = ["bwrap", *NAMESPACES, *(() if root else ("--unshare-user",)), "--new-session",
           "--as-pid-1", "--clearenv", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
           *(() if info_fd is None else ("--info-fd", str(info_fd)))]
    binds = [("--ro-bind", p) for p in (*readable_paths(), *LIBRARY_FINDER) if os.path.exists(p)]
    binds += [("--dev-bind", p) for p in gpu_devices()] + [("--bind", writable)]
    made = {"/"}
    for option, path in binds:  # parents 0755: bubblewrap may make them 0700, shut to nobody
        for parent in reversed(PurePath(path).parents):
            if str(parent) not in made:
                made.add(str(parent))
                box += ["--perms", "0755", "--dir", str(parent)]
        box += [option, path, path]
    for link in ("/lib", "/lib64", "/sbin"):
        if os.path.islink(link):
            box += ["--symlink", os.readlink(link), link]
    for name, value in env.items():
        box += ["--setenv", name, value]
    box += ["--chdir", writable]
    if root:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        box += ["--ro-bind", setpriv, setpriv, "--", setpriv, f"--reuid={NOBODY}",
                f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    else:
        box.append("--")
    return box + argv


def python() -> str:
    """The interpreter by the path the box shows it at: its directory's real path (a
    virtualenv reached through a symbolic link, or kept outside the checkout, is bound where
    it really is), its own name kept (a virtualenv's `python` knows its environment by the
    directory it is started from)."""
    folder, name = os.path.split(sys.executable)
    return os.path.join(os.path.realpath(folder), name)


def box_user() -> int:
    """The user id the box runs as (its directory must be theirs)."""
    return NOBODY if os.geteuid() == 0 else os.geteuid()


@functools.cache
def missing() -> str | None:
    """Why the box cannot be built on this machine, or None when it can (asked once)."""
    if sys.platform != "linux":
        return "the box needs Linux"
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None and (tool == "bwrap" or os.geteuid() == 0):
            return f"{tool} is not installed (Debian package `{package}`)"
    with tempfile.TemporaryDirectory(prefix="explorer-probe-") as place:
        os.chown(place, box_user(), -1)
        found = {"PYTHONPATH": os.path.dirname(PACKAGE)}  # as the pool's zygote finds it
        probe = command([python(), "-c", "import explorer"], place, found)
        try:
            done = subprocess.run(probe, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap could not start: {error}"
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap could not build the box: {said[-1] if said else done.returncode}"
    return None
