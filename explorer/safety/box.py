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
The box runs no program but Python: the libraries its code looks up by name are found by the
server and bound by their paths (`explorer.safety.libraries`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePath

from explorer.content.i18n import text
from explorer.safety import confine, libraries
from explorer.safety.confine import PACKAGE, gpu_devices, readable_paths

NOBODY = 65534  # the user a box started by root runs as
LOADER_CACHE = "/etc/ld.so.cache"  # how the dynamic loader finds a library CUDA opens by name
# Ubuntu (23.10 on) keeps unprivileged users from making user namespaces, which bubblewrap
# needs, unless AppArmor gives the program that right.
USERNS_RESTRICTION = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
APPARMOR = ("AppArmor keeps programs that are not root's from making user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns = 1)")
# What the box's probe runs: the import of the walls, and (where they stand) raising them.
PROBE_IMPORT = "from explorer.safety import confine\n"
PROBE_LOCK = "import os\nconfine.Walls(confine.readable_paths(), confine.gpu_devices())" \
             ".lock(os.getcwd())\n"
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
    shown = readable_paths()
    found = libraries.located()
    named = [p for p in found.values()  # a library outside what Python needs, by itself
             if not any(PurePath(p).is_relative_to(folder) for folder in shown)]
    binds = [("--ro-bind", p) for p in (*shown, LOADER_CACHE, *named) if os.path.exists(p)]
    binds += [("--dev-bind", p) for p in gpu_devices()] + [("--bind", writable)]
    made = {"/"}
    for option, path in binds:  # parents 0755: bubblewrap may make them 0700, shut to nobody
        for parent in reversed(PurePath(path).parents):
            if str(parent) not in made:
                made.add(str(parent))
                box += ["--perms", "0755", "--dir", str(parent)]
        box += [option, path, path]
    for link in ("/lib", "/lib64"):
        if os.path.islink(link):
            box += ["--symlink", os.readlink(link), link]
    for name, value in {**env, libraries.VARIABLE: json.dumps(found)}.items():
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
    """Why the box cannot be built on this machine, or None when it can (asked once): the
    probe imports the walls in a box and, where this kernel has them, raises them there."""
    if sys.platform != "linux":
        return "the box needs Linux"
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None and (tool == "bwrap" or os.geteuid() == 0):
            return f"{tool} is not installed (Debian package `{package}`)"
    probe = PROBE_IMPORT + ("" if confine.missing() else PROBE_LOCK)
    with tempfile.TemporaryDirectory(prefix="explorer-probe-") as place:
        os.chown(place, box_user(), -1)
        found = {"PYTHONPATH": os.path.dirname(PACKAGE)}  # as the pool's zygote finds it
        try:
            done = subprocess.run(command([python(), "-c", probe], place, found),
                                  capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap could not start: {error}"
    return None if not done.returncode else failure_reason(done.stderr, root=os.geteuid() == 0)


def failure_reason(said: bytes, root: bool, setting: str = USERNS_RESTRICTION) -> str:
    """Why a box did not start, from its error output `said`: AppArmor where bubblewrap
    itself failed (its lines begin `bwrap:`) for a user other than root while `setting`
    restricts user namespaces; else the output's last lines."""
    told = last_lines(said)
    if told.startswith("bwrap:") and not root and userns_restricted(setting):
        return f"bubblewrap could not build the box: {APPARMOR}"
    return f"bubblewrap could not build the box: {told or 'it said nothing'}"


def userns_restricted(setting: str = USERNS_RESTRICTION) -> bool:
    """Whether AppArmor keeps unprivileged users from making user namespaces, as Ubuntu does
    from 23.10 on (`setting` reads 1): bubblewrap, as a user other than root, then fails
    ("setting up uid map: Permission denied") unless an AppArmor profile gives it the
    right."""
    try:
        return Path(setting).read_text(encoding="ascii").strip() == "1"
    except (OSError, UnicodeDecodeError):
        return False


def stopped_by_apparmor() -> bool:
    """Whether the box cannot be built because AppArmor keeps bubblewrap from making its
    user namespace (then `apparmor_advice` says what to run). Builds no box where AppArmor
    restricts nothing."""
    return (os.geteuid() != 0 and userns_restricted()
            and missing() == f"bubblewrap could not build the box: {APPARMOR}")


def apparmor_advice(lang: str = "en") -> str:
    """What to run where AppArmor stops bubblewrap, and why, as Markdown in `lang`."""
    return text("apparmor_fix", lang, **apparmor_commands())


def apparmor_commands() -> dict[str, str]:
    """The two ways to let bubblewrap make its namespaces, as shell commands: a profile for
    bubblewrap alone, or lifting the restriction for every program until the next boot."""
    bwrap = os.path.realpath(shutil.which("bwrap") or "/usr/bin/bwrap")
    rule = (f"abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap {bwrap} "
            "flags=(unconfined) {\\n  userns,\\n}\\n")
    return {"profile": f"printf '{rule}' | sudo tee /etc/apparmor.d/bwrap && "
                       "sudo apparmor_parser -r /etc/apparmor.d/bwrap",
            "sysctl": "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0"}


def last_lines(said: bytes, count: int = 3, width: int = 600) -> str:
    """The last `count` lines of a process's error output, for a person: where it says why
    it ended (a traceback ends with its error), at most `width` characters. A traceback's
    lines that only point (`^^^^`) are left out."""
    lines = [line for line in said.decode(errors="replace").splitlines() if line.strip(" ^~")]
    return " | ".join(line.strip() for line in lines[-count:])[-width:]
