"""The last wall, raised by each run's process on itself before the program runs.

Assume the program runs arbitrary Python with real builtins. After `Walls.lock()` this process:
- opens only files beneath what Python needs and its own empty private directory, all
  read-only (it makes no file, not even an empty one), by Landlock: not the host's `/etc`,
  `/root`, `/home`, the app's checkout, other runs' directories or `/proc` of other
  processes;
- makes none of these system calls, by a seccomp filter (libseccomp): `execve`, new
  processes (threads are allowed), new sockets, tracing or reading other processes, System V
  or POSIX IPC objects, mounts and namespaces, BPF, perf events, kernel keys, io_uring,
  userfaultfd, modules, a file's owner to signal, a file's mode, owner, times, flags or
  extended attributes, inotify; a signal goes only to itself, and limits, priorities, CPU
  affinity and memory placement are set on itself only. Each fails with EPERM (ENOSYS for
  `clone3`, so that threads fall back to `clone`, and for system calls newer than this
  list): a plain error.

Both hold for every thread started later, which is why `Walls.lock()` runs while the
process has one thread. `missing()` tells what this kernel lacks; `explorer.safety.box`
builds the walls around the zygote itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from pathlib import PurePath

import landlock

from explorer.safety import libraries
from explorer.safety.places import PACKAGE, PYTHON

# pyseccomp finds libseccomp with ctypes.util.find_library as it is imported, which runs
# ldconfig: in the box, where no program runs, it is told the path the server found.
with libraries.by_path(libraries.given()):
    import pyseccomp as seccomp

CLONE_THREAD = 0x00010000
# Denied outright. Names this architecture lacks (`fork` on aarch64) are skipped.
DENIED = (
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "process_madvise", "kcmp", "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "tkill",
    "socket", "socketpair", "shmget", "shmat", "semget", "msgget", "mq_open",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree",
    "move_mount", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "init_module", "finit_module",
    "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct",
    "quotactl", "syslog", "personality", "name_to_handle_at", "open_by_handle_at",
    "fanotify_init", "memfd_secret", "seccomp",
    # A file's mode, owner, times and extended attributes: Landlock has no right for them, and
    # the box's user owns the pool's directory and the zygote's socket.
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
    "setxattrat", "removexattrat", "file_setattr", "removexattr", "lremovexattr",
    "fremovexattr", "open_tree_attr",
    "inotify_init", "inotify_init1",  # watching the pool's directory shows others' runs
)
# System calls newer than some libseccomp knows by name, by their number (the same on x86-64
# and arm64 from 424 on), and the numbers after them, for calls not made yet.
NUMBERS = {"setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467, "file_setattr": 469}
UNKNOWN = range(470, 512)
SIGNALS = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: a pid
# First argument a pid, 0 for this process: allowed for 0 only. (setpriority and ioprio_set
# take "which" first: 0 is one process, and their second argument is that pid.)
OWN_ONLY = ("prlimit64", "sched_setaffinity", "sched_setparam", "sched_setscheduler",
            "sched_setattr", "migrate_pages", "move_pages", "setpriority", "ioprio_set")
BY_WHO = ("setpriority", "ioprio_set")
# Commands denied, compared on 32 bits (the kernel reads no more): those that name a process
# to signal when a file is ready (fcntl's F_SETOWN, F_SETSIG and F_SETOWN_EX, ioctl's
# FIOSETOWN and SIOCSPGRP) and those that change a file's flags (ioctl's FS_IOC_SETFLAGS, its
# 32-bit twin and FS_IOC_FSSETXATTR).
COMMANDS = {"fcntl": (8, 10, 15), "ioctl": (0x8901, 0x8902, 0x40086602, 0x40046602, 0x401C5820)}
READ = landlock.FSAccess.READ_FILE | landlock.FSAccess.READ_DIR
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class Walls:
    """Both walls built for this process and not yet raised: all that needs no run (a few
    ms), done by a child while it waits for its run (explorer.record.zygote). `lock` raises
    them, in this process only: the filter names it."""

    def __init__(self, readable: Iterable[str], gpus: Iterable[str] = ()) -> None:
        self.pid = os.getpid()
        self._ruleset = _ruleset([*readable, os.path.realpath("/proc/self")], gpus)
        self._filter = _filter()

    def lock(self, private: str) -> None:
        """Confine this process (and threads it starts later) for good: Landlock first
        (reading `readable`, `private` and this process's own `/proc/<pid>`), then the
        seccomp filter."""
        if os.getpid() != self.pid:
            raise RuntimeError("these walls were built for another process")
        self._ruleset.allow(private, rules=READ)  # its working directory, empty
        self._ruleset.apply()
        self._filter.load()


def readable_paths() -> list[str]:
    """What Python and its libraries read while running: the interpreter and its libraries,
    the app's own package, the system's shared libraries and the CPU's description. Sorted,
    without paths that lie inside another one."""
    places = {*PYTHON, PACKAGE, "/usr/lib", "/usr/lib64", "/lib", "/lib64",
              "/sys/devices/system/cpu"}
    kept: list[str] = []
    for path in sorted({os.path.realpath(p) for p in places if os.path.exists(p)}):
        if not any(PurePath(path).is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def gpu_devices() -> list[str]:
    """NVIDIA's device files, where present (CUDA needs them)."""
    names = sorted(os.listdir("/dev")) if os.path.isdir("/dev") else []
    return [f"/dev/{name}" for name in names if name.startswith("nvidia")]


def missing() -> list[str]:
    """What the kernel lacks for `Walls`: empty when both walls stand."""
    gaps = []
    try:
        landlock.plumbing.landlock_abi_version()
    except Exception:  # noqa: BLE001 - any failure means no Landlock here
        gaps.append("Landlock (Linux 5.13+ with the landlock LSM enabled)")
    try:
        seccomp.SyscallFilter(seccomp.ALLOW)
    except Exception:  # noqa: BLE001 - libseccomp missing or unusable
        gaps.append("seccomp (libseccomp2)")
    return gaps


def _ruleset(readable: Iterable[str], gpus: Iterable[str]) -> landlock.Ruleset:
    ruleset = landlock.Ruleset()
    for path in readable:
        ruleset.allow(path, rules=READ if os.path.isdir(path) else landlock.FSAccess.READ_FILE)
    file_rights = landlock.FSAccess.all_file() & ~landlock.FSAccess.EXECUTE
    for path in (*DEVICES, *gpus):
        if os.path.exists(path):
            ruleset.allow(path, rules=file_rights)
    return ruleset


def _filter() -> seccomp.SyscallFilter:
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.CTL_TSYNC, 1)
    denied = seccomp.ERRNO(errno.EPERM)
    for name in DENIED:
        _add(rules, denied, name)
    _add(rules, seccomp.ERRNO(errno.ENOSYS), "clone3")  # glibc then uses clone
    _add(rules, denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    me = os.getpid()
    for name in SIGNALS:
        _add(rules, denied, name, seccomp.Arg(0, seccomp.NE, me))
    for name in OWN_ONLY:
        _add(rules, denied, name, seccomp.Arg(0, seccomp.NE, 0))
    for name in BY_WHO:
        _add(rules, denied, name, seccomp.Arg(1, seccomp.NE, 0))
    for number in UNKNOWN:
        _add(rules, seccomp.ERRNO(errno.ENOSYS), number)
    for name, commands in COMMANDS.items():
        for command in commands:
            _add(rules, denied, name, seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFF_FFFF, command))
    return rules


def _add(rules: seccomp.SyscallFilter, action: int, call: str | int,
         *args: seccomp.Arg) -> None:
    """Add a rule for `call` (a name, or a number), by number where libseccomp does not know
    the name; a name this architecture lacks (`fork` on arm64) is skipped."""
    for each in (call, NUMBERS.get(call) if isinstance(call, str) else None):
        if each is not None:
            with contextlib.suppress(OSError, ValueError):
                rules.add_rule(action, each, *args)
                return
