"""Unguarded payloads for the operating-system wall (`tests/test_wall.py`).

Each `WallAttack` is Python run with real builtins in a child confined exactly as a run. Its
`code` is an expression, or statements that set `result`; the probe records the value as
`ok:<repr>`, the exception as its type name, or `killed:<SIGNAL>` if the process died. The
names in scope: `os`, `ctypes`, `libc` (the C library), `asm(bytes)` (machine code as a
callable returning a long), `T` (paths the test fills in: canaries, other runs, the pool
directory...), `victim` (another confined run, busy) and `zygote` (an unconfined process of
the box's user, a stand-in for the zygote; unlike it, not PID 1, so signals are aimed at
`victim`). An `alone` payload runs in its own child, so that
its effect on `victim`, `zygote` and the zygote's standard input (a pipe, as in the pool) is
judged for it alone: all three must come out untouched.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WallAttack:
    """An unguarded attempt, its category and the outcomes that mean the wall held."""

    name: str
    category: str
    code: str
    expect: frozenset[str]
    alone: bool = False


DENIED = frozenset({"PermissionError"})
HIDDEN = frozenset({"PermissionError", "FileNotFoundError"})
NO_WRITE = frozenset({"PermissionError", "FileNotFoundError", "OSError", "IsADirectoryError"})
FAILED = frozenset({"ok:-1"})  # a libc call that returned -1
SIGSYS = frozenset({"killed:SIGSYS"})


SYS = {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322,
       "socket": 41, "socketpair": 53, "ptrace": 101, "unshare": 272, "setns": 308,
       "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "bpf": 321,
       "perf_event_open": 298, "keyctl": 250, "add_key": 248, "request_key": 249,
       "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "init_module": 175,
       "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
       "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179,
       "syslog": 103, "personality": 135, "name_to_handle_at": 303,
       "open_by_handle_at": 304, "fanotify_init": 300, "memfd_secret": 447, "seccomp": 317,
       "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240, "pidfd_open": 434,
       "pidfd_getfd": 438, "pidfd_send_signal": 424, "process_vm_readv": 310,
       "process_vm_writev": 311, "process_madvise": 440, "kcmp": 312, "tkill": 200,
       "open_tree": 428, "move_mount": 429, "fsopen": 430, "fspick": 433,
       "mount_setattr": 442, "iopl": 172, "ioperm": 173, "sethostname": 170,
       "settimeofday": 164, "setuid": 105, "setgid": 106, "capset": 126, "vhangup": 153,
       "fchmodat2": 452, "fchownat": 260, "futimesat": 261, "utimensat": 280,
       "lsetxattr": 189, "fsetxattr": 190, "lremovexattr": 198}


def _read(name: str, target: str) -> WallAttack:
    return WallAttack(f"read {name}", "files", f"open(T[{target!r}]).read()", HIDDEN)


def _list(name: str, path: str) -> WallAttack:
    return WallAttack(f"list {name}", "listing", f"os.listdir({path})", HIDDEN)


def _create(name: str, code: str) -> WallAttack:
    return WallAttack(f"create {name}", "files", code, NO_WRITE)


def _sys(name: str, args: str, category: str) -> WallAttack:
    """A raw system call that seccomp refuses (the C library returns -1)."""
    return WallAttack(f"syscall {name}({args[:24]})", category,
                      f"libc.syscall({SYS[name]}, {args})", FAILED)


READS = [_read(n, n) for n in ("checkout canary", "root-only canary", "shadow", "passwd",
                               "hostname", "ld.so.cache", "other run", "project README",
                               "home bashrc")]
FILES = [
    *READS,
    WallAttack("read canary via os.open", "files",
               "os.read(os.open(T['checkout canary'], os.O_RDONLY), 100)", HIDDEN),
    WallAttack("read canary via /proc/self/root", "files",
               "open('/proc/self/root' + T['checkout canary']).read()", HIDDEN),
    WallAttack("read other run via /proc/self/cwd", "files",
               "open('/proc/self/cwd/../' + T['other run name'] + '/secret.txt').read()", HIDDEN),
    WallAttack("read other run via ..", "files",
               "open('../' + T['other run name'] + '/secret.txt').read()", HIDDEN),
    WallAttack("read canary via O_PATH and /proc/self/fd", "files",
               "fd = os.open(T['checkout canary'], os.O_PATH)\n"
               "result = open(f'/proc/self/fd/{fd}').read()", HIDDEN),
    WallAttack("read canary via mmap", "files",
               "import mmap\nresult = mmap.mmap(os.open(T['checkout canary'], os.O_RDONLY), 0,"
               " prot=mmap.PROT_READ)[:]", HIDDEN),
    WallAttack("read canary via ctypes fopen", "files",
               "result = libc.fopen(T['checkout canary'].encode(), b'r')", frozenset({"ok:0"})),
    WallAttack("read canary via openat2", "files",
               "import struct\nhow = struct.pack('QQQ', 0, 0, 0)\n"
               "result = libc.syscall(437, -100, T['checkout canary'].encode(), how, len(how))",
               FAILED),
    WallAttack("symlink to canary then read", "files",
               "os.symlink(T['checkout canary'], 'link')\nresult = open('link').read()", HIDDEN),
    WallAttack("hardlink canary into private dir", "files",
               "os.link(T['checkout canary'], 'hard')\nresult = open('hard').read()",
               frozenset({"PermissionError", "OSError", "FileNotFoundError"})),
    WallAttack("hardlink other run's file", "files",
               "os.link('../' + T['other run name'] + '/secret.txt', 'hard2')",
               frozenset({"PermissionError", "OSError", "FileNotFoundError"})),
    WallAttack("rename other run's file here", "files",
               "os.rename('../' + T['other run name'] + '/secret.txt', 'stolen')", HIDDEN),
    _create("in /tmp", "open('/tmp/left-behind', 'w').close()"),
    _create("in pool dir", "open(T['pool dir'] + '/left-behind', 'w').close()"),
    _create("in pool dir via ..", "open('../left-behind', 'w').close()"),
    _create("in other run", "open(T['other run'] + '/left-behind', 'w').close()"),
    _create("in explorer", "open(T['explorer'] + '/left_behind.py', 'w').close()"),
    _create("in site-packages (.pth)", "open(T['site-packages'] + '/evil.pth', 'w').close()"),
    _create("in /dev/shm", "open('/dev/shm/left-behind', 'w').close()"),
    _create("in home", "open(T['home'] + '/left-behind', 'w').close()"),
    _create("via /proc/self/root/tmp", "open('/proc/self/root/tmp/left-behind', 'w').close()"),
    _create("dir in /tmp", "os.mkdir('/tmp/left-dir')"),
    _create("symlink in /tmp", "os.symlink('/', '/tmp/left-link')"),
    _create("fifo in /tmp", "os.mkfifo('/tmp/left-fifo')"),
    _create("rename private file out", "open('mine', 'w').close()\nos.rename('mine', '../mine')"),
    _create("truncate explorer source", "os.truncate(T['explorer'] + '/safety/limits.py', 0)"),
    _create("chmod explorer source", "os.chmod(T['explorer'] + '/safety/limits.py', 0o777)"),
    _create("utime explorer source", "os.utime(T['explorer'] + '/safety/limits.py', (0, 0))"),
    _create("unlink explorer source", "os.unlink(T['explorer'] + '/safety/limits.py')"),
    _create("setxattr on explorer source",
            "os.setxattr(T['explorer'] + '/safety/limits.py', 'user.x', b'1')"),
    _create("write /proc/sys", "open('/proc/sys/kernel/core_pattern', 'w').write('|/x')"),
    _create("write /sys", "open('/sys/devices/system/cpu/cpu0/online', 'w').write('0')"),
    _create("contents in private dir", "os.write(os.open('data', os.O_WRONLY | os.O_CREAT), b'x')"),
    _create("fallocate in private dir",
            "os.posix_fallocate(os.open('big', os.O_WRONLY | os.O_CREAT), 0, 1 << 20)"),
    _create("memfd contents", "os.write(os.memfd_create('m'), b'x' * 4096)"),
    _create("memfd ftruncate", "os.ftruncate(os.memfd_create('m'), 1 << 30)"),
    WallAttack("explorer source is readable", "files",
               "open(T['explorer'] + '/safety/limits.py').read(12)",
               frozenset({"ok:'\"\"\"The caps '"})),
    _create("empty file in private dir", "open('empty', 'w').close()"),
    _create("many empty files in private dir",
            "for i in range(100_000):\n    os.close(os.open(f'e{i}', os.O_CREAT))"),
    _create("dir in private dir", "os.mkdir('sub')"),
    _create("symlink in private dir", "os.symlink('/', 'root')"),
    *(WallAttack(f"{name} pool dir", "files", code, DENIED) for name, code in (
        ("chmod", "os.chmod('..', 0o777)"), ("chmod private dir", "os.chmod('.', 0o777)"),
        ("fchmod private dir, not", "os.fchmod(os.open('.', os.O_RDONLY), 0o777)"),
        ("chmod fd of private dir, not", "os.chmod(os.open('.', os.O_RDONLY), 0o777)"),
        ("chown", "os.chown('..', os.getuid(), os.getgid())"),
        ("utime", "os.utime('..')"),
        ("utime fd of private dir, not", "os.utime(os.open('.', os.O_RDONLY))"),
        ("setxattr", "os.setxattr('..', 'user.x', b'1')"),
        ("removexattr", "os.removexattr('..', 'user.x')"))),
    WallAttack("file_setattr on own dir (Linux 6.17)", "files",
               "import struct\nattr = bytearray(32)\n"
               "result = libc.syscall(469, -100, b'.', bytes(attr), len(attr), 0)", FAILED),
    WallAttack("FS_IOC_SETFLAGS on own dir", "files",
               "import fcntl, struct\nfd = os.open('.', os.O_RDONLY)\n"
               "fcntl.ioctl(fd, 0x40086602, struct.pack('l', 0x40 | 0x80))", DENIED),
    WallAttack("FS_IOC_FSSETXATTR on own dir", "files",
               "import fcntl\nfd = os.open('.', os.O_RDONLY)\n"
               "fcntl.ioctl(fd, 0x401C5820, bytes(28))", DENIED),
    WallAttack("inotify on pool dir", "listing",
               "import ctypes\nresult = libc.inotify_init1(0)", FAILED),
    WallAttack("a syscall newer than the filter", "kernel", "libc.syscall(500, 0, 0)", FAILED),
    WallAttack("files past the open-file limit", "fds",
               "fds = []\ntry:\n    for i in range(1000):\n"
               "        fds.append(os.open('/dev/null', os.O_RDONLY))\nexcept OSError:\n"
               "    pass\nfor fd in fds:\n    os.close(fd)\nresult = 0 < len(fds) < 256",
               frozenset({"ok:True"})),
    *(_sys(name, args, "files") for name, args in (
        ("fchmodat2", "-100, b'..', 0o777, 0"), ("fchownat", "-100, b'..', 0, 0, 0"),
        ("futimesat", "-100, b'..', 0"), ("utimensat", "-100, b'..', 0, 0"),
        ("lsetxattr", "b'..', b'user.x', b'1', 1, 0"),
        ("fsetxattr", "os.open('.', os.O_RDONLY), b'user.x', b'1', 1, 0"),
        ("lremovexattr", "b'..', b'user.x'"))),
]

LISTING = [
    *(_list(n, p) for n, p in (
        ("root", "'/'"), ("home dir", "T['home']"), ("/home", "'/home'"),
        ("checkout", "T['checkout']"), ("pool dir", "T['pool dir']"), ("parent", "'..'"),
        ("other run", "T['other run']"), ("proc", "'/proc'"), ("tmp", "'/tmp'"),
        ("dev", "'/dev'"), ("etc", "'/etc'"), ("sys", "'/sys'"), ("dev/shm", "'/dev/shm'"),
        ("proc self root", "'/proc/self/root'"), ("proc 1", "'/proc/1'"),
        ("proc 1 cwd", "'/proc/1/cwd'"), ("proc 1 root", "'/proc/1/root'"),
        ("proc zygote fd", "f'/proc/{zygote}/fd'"), ("proc victim cwd", "f'/proc/{victim}/cwd'"),
        ("usr", "'/usr'"))),
    WallAttack("scandir pool dir via O_PATH", "listing",
               "fd = os.open(T['pool dir'], os.O_PATH)\nresult = os.listdir(f'/proc/self/fd/{fd}')",
               HIDDEN),
    WallAttack("getdents pool dir", "listing",
               "fd = os.open(T['pool dir'], os.O_RDONLY | os.O_DIRECTORY)\n"
               "result = libc.syscall(217, fd, ctypes.create_string_buffer(4096), 4096)",
               HIDDEN),
    WallAttack("glob other runs", "listing",
               "import glob\nresult = glob.glob(T['pool dir'] + '/run-*/*')", frozenset({"ok:[]"})),
]

EXEC = [
    WallAttack("execv /bin/sh", "exec", "os.execv('/bin/sh', ['sh', '-c', 'true'])", DENIED),
    WallAttack("execv python", "exec", "os.execv(sys.executable, [sys.executable, '-c', '1'])",
               DENIED),
    WallAttack("execve via ctypes", "exec",
               "result = libc.execve(sys.executable.encode(), None, None)", FAILED),
    _sys("execve", "b'/bin/sh', 0, 0", "exec"),
    _sys("execveat", "-100, b'/bin/sh', 0, 0, 0", "exec"),
    WallAttack("memfd + fexecve", "exec",
               "fd = os.memfd_create('e')\nos.execve(fd, ['x'], {})",
               frozenset({"PermissionError", "OSError"})),
    WallAttack("ld.so runs a program", "exec",
               "os.execv('/lib64/ld-linux-x86-64.so.2', ['ld', '/bin/true'])",
               frozenset({"PermissionError", "FileNotFoundError"})),
    WallAttack("os.system", "exec", "os.system('true')",  # 127 << 8: glibc could not spawn
               frozenset({"ok:32512", "ok:-1", "PermissionError"})),
    WallAttack("subprocess", "exec", "import subprocess\nsubprocess.run(['true'])",
               frozenset({"PermissionError", "OSError", "FileNotFoundError"})),
    WallAttack("os.posix_spawn", "exec", "os.posix_spawn('/bin/true', ['true'], {})",
               frozenset({"PermissionError", "OSError"})),
    WallAttack("posix_spawn via ctypes", "exec",
               "pid = ctypes.c_int(0)\nargv = (ctypes.c_char_p * 2)(b'true', None)\n"
               "result = libc.posix_spawn(ctypes.byref(pid), b'/bin/true', None, None, argv, None)",
               frozenset({"ok:1", "ok:38", "ok:2"})),  # an errno (EPERM / ENOSYS / ENOENT)
]

PROCESSES = [
    WallAttack("os.fork", "process", "os.fork()", DENIED),
    WallAttack("multiprocessing", "process",
               "import multiprocessing as m\np = m.Process(target=print)\np.start()", DENIED),
    _sys("fork", "", "process"),
    _sys("vfork", "", "process"),
    _sys("clone", "17, 0, 0, 0, 0", "process"),  # SIGCHLD, no CLONE_THREAD: a new process
    _sys("clone", "17 | 0x10000000, 0, 0, 0, 0", "process"),  # ... in a new user namespace
    WallAttack("syscall clone3", "process", "libc.syscall(435, 0, 0)", FAILED),
    WallAttack("raw fork instruction", "process",
               "asm(b'\\xb8\\x39\\x00\\x00\\x00\\x0f\\x05\\xc3')()", frozenset({"ok:-1"})),
    WallAttack("threads are allowed", "process",
               "import threading\nt = threading.Thread(target=int)\nt.start()\nt.join()\n"
               "result = 'thread ran'", frozenset({"ok:'thread ran'"})),
    WallAttack("thread bomb stops at the task limit", "process",
               "import threading\nthreading.stack_size(1 << 16)\nstop = threading.Event()\n"
               "started = 0\ntry:\n    for i in range(2000):\n"
               "        threading.Thread(target=stop.wait, daemon=True).start()\n"
               "        started += 1\nexcept RuntimeError:\n    pass\nstop.set()\n"
               "result = 0 < started < 256", frozenset({"ok:True"})),
    WallAttack("setuid root", "process", "os.setuid(0)", DENIED),
    WallAttack("setgroups", "process", "os.setgroups([0])", DENIED),
    WallAttack("no capabilities", "process",
               "[l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]",
               frozenset({"ok:'0000000000000000'"})),
    WallAttack("raise address-space cap", "process",
               "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
               frozenset({"ValueError"})),
    WallAttack("raise file-size cap", "process",
               "import resource\nresource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))",
               frozenset({"ValueError"})),
    WallAttack("raise cpu cap", "process",
               "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (-1, -1))",
               frozenset({"ValueError"})),
    WallAttack("raise core cap", "process",
               "import resource\nresource.setrlimit(resource.RLIMIT_CORE, (-1, -1))",
               frozenset({"ValueError"})),
    WallAttack("prlimit the zygote's files", "process",
               "import resource\nresource.prlimit(zygote, resource.RLIMIT_NOFILE, (3, 3))",
               DENIED, alone=True),
    WallAttack("prlimit another run's cpu", "process",
               "import resource\nresource.prlimit(victim, resource.RLIMIT_CPU, (1, 1))",
               DENIED, alone=True),
    WallAttack("setpriority the zygote", "process",
               "os.setpriority(os.PRIO_PROCESS, zygote, 19)", DENIED, alone=True),
    WallAttack("sched_setaffinity the zygote", "process", "os.sched_setaffinity(zygote, {0})",
               DENIED, alone=True),
    WallAttack("SCHED_IDLE another run", "process",
               "os.sched_setscheduler(victim, os.SCHED_IDLE, os.sched_param(0))", DENIED,
               alone=True),
    WallAttack("prctl set mm", "process", "libc.prctl(35, 8, 0, 0, 0)", FAILED),
    WallAttack("prctl no_new_privs stays", "process", "libc.prctl(39, 0, 0, 0, 0)",
               frozenset({"ok:1"})),
    WallAttack("seccomp filter is in force", "process",
               "'Seccomp:\\t2' in open('/proc/self/status').read()", frozenset({"ok:True"})),
]

NETWORK = [
    *(WallAttack(f"socket {family}", "network",
                 f"import socket\nsocket.socket({number}, {kind})", DENIED)
      for family, number, kind in (
          ("AF_INET tcp", 2, 1), ("AF_INET udp", 2, 2), ("AF_INET raw", 2, 3),
          ("AF_INET6", 10, 1), ("AF_UNIX", 1, 1), ("AF_UNIX dgram", 1, 2),
          ("AF_NETLINK", 16, 3), ("AF_PACKET", 17, 3), ("AF_VSOCK", 40, 1),
          ("AF_ALG", 38, 5), ("AF_BLUETOOTH", 31, 1), ("AF_KEY", 15, 3))),
    WallAttack("socketpair", "network", "import socket\nsocket.socketpair()", DENIED),
    _sys("socket", "2, 1, 0", "network"),
    _sys("socketpair", "1, 1, 0, ctypes.create_string_buffer(8)", "network"),
    WallAttack("socket via ctypes", "network", "libc.socket(1, 1, 0)", FAILED),
    WallAttack("connect to the zygote socket", "network",
               "import socket\ns = socket.socket(socket.AF_UNIX)\n"
               "s.connect(T['pool dir'] + '/zygote.sock')",
               DENIED),
    WallAttack("abstract unix socket", "network",
               "import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0explorer-left')",
               DENIED),
    WallAttack("accept on every inherited fd", "network",
               "import socket\nresult = []\n"
               "for fd in range(3, 64):\n"
               "    try:\n"
               "        socket.socket(fileno=fd).accept()\n"
               "        result.append(fd)\n"
               "    except OSError:\n"
               "        pass", frozenset({"ok:[]"})),
]

IPC = [
    WallAttack("shmget", "ipc", "libc.shmget(0, 4096, 0o1000 | 0o600)", FAILED),
    WallAttack("semget", "ipc", "libc.semget(0, 1, 0o1000 | 0o600)", FAILED),
    WallAttack("msgget", "ipc", "libc.msgget(0, 0o1000 | 0o600)", FAILED),
    WallAttack("shmat an id", "ipc", "libc.shmat(0, None, 0)", frozenset({"ok:-1"})),
    WallAttack("msgctl an id", "ipc", "libc.msgctl(0, 0, None)", FAILED),
    _sys("mq_open", "b'q', 0o100, 0o600, 0", "ipc"),
    WallAttack("shm_open", "ipc", "ctypes.CDLL('librt.so.1').shm_open(b'/left', 0o102, 0o600)",
               FAILED),
    WallAttack("posix semaphore", "ipc", "open('/dev/shm/sem.left', 'w')", HIDDEN),
    WallAttack("memfd is private", "ipc", "os.memfd_create('x') > 2", frozenset({"ok:True"})),
]

SIGNALS = [
    WallAttack("kill the zygote", "signals", "os.kill(zygote, 9)", DENIED, alone=True),
    WallAttack("kill another run", "signals", "os.kill(victim, 9)", DENIED, alone=True),
    WallAttack("kill the parent", "signals", "os.kill(os.getppid(), 2)", DENIED, alone=True),
    WallAttack("kill everyone", "signals", "os.kill(-1, 9)", DENIED, alone=True),
    WallAttack("kill the group", "signals", "os.kill(0, 9)", DENIED, alone=True),
    WallAttack("killpg", "signals", "os.killpg(os.getpgid(victim), 9)",
               frozenset({"PermissionError", "ProcessLookupError"}), alone=True),
    WallAttack("tgkill another run", "signals", "libc.syscall(234, victim, victim, 9)", FAILED,
               alone=True),
    WallAttack("tgkill own group, other tid", "signals",
               "libc.syscall(234, os.getpid(), victim, 9)", FAILED, alone=True),
    _sys("tkill", "2, 9", "signals"),
    WallAttack("rt_sigqueueinfo another run", "signals",
               "libc.syscall(129, victim, 9, ctypes.create_string_buffer(128))", FAILED,
               alone=True),
    _sys("pidfd_open", "2, 0", "signals"),
    _sys("pidfd_send_signal", "3, 9, 0, 0", "signals"),
    WallAttack("F_SETOWN + F_SETSIG SIGKILL at another run", "signals",
               "import fcntl\nr, w = os.pipe()\nfcntl.fcntl(r, fcntl.F_SETOWN, victim)\n"
               "fcntl.fcntl(r, 10, 9)\nfcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\n"
               "os.write(w, b'x')\nimport time\ntime.sleep(0.2)", DENIED, alone=True),
    WallAttack("F_SETOWN + F_SETSIG SIGTERM at another run", "signals",
               "import fcntl\nr, w = os.pipe()\nfcntl.fcntl(r, fcntl.F_SETOWN, victim)\n"
               "fcntl.fcntl(r, 10, 15)\nfcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\n"
               "os.write(w, b'x')\nimport time\ntime.sleep(0.2)", DENIED, alone=True),
    WallAttack("FIOSETOWN SIGIO at another run", "signals",
               "import fcntl, struct\nr, w = os.pipe()\n"
               "fcntl.ioctl(r, 0x8901, struct.pack('i', victim))\n"
               "fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\nos.write(w, b'x')\n"
               "import time\ntime.sleep(0.2)", DENIED, alone=True),
    WallAttack("own signals still work", "signals",
               "import signal\nseen = []\n"
               "signal.signal(signal.SIGUSR1, lambda *a: seen.append(1))\n"
               "os.kill(os.getpid(), signal.SIGUSR1)\nresult = seen", frozenset({"ok:[1]"})),
]

PROC = [
    WallAttack("zygote memory", "proc", "open(f'/proc/{zygote}/mem', 'rb').read(1)", HIDDEN),
    WallAttack("zygote environ", "proc", "open(f'/proc/{zygote}/environ').read()", HIDDEN),
    WallAttack("zygote cmdline", "proc", "open(f'/proc/{zygote}/cmdline').read()", HIDDEN),
    WallAttack("zygote maps", "proc", "open(f'/proc/{zygote}/maps').read()", HIDDEN),
    WallAttack("pid 1 environ", "proc", "open('/proc/1/environ').read()", HIDDEN),
    WallAttack("another run's memory", "proc", "open(f'/proc/{victim}/mem', 'rb').read(1)",
               HIDDEN),
    WallAttack("another run's cwd", "proc", "os.listdir(f'/proc/{victim}/cwd/')", HIDDEN),
    WallAttack("another run's fd", "proc", "open(f'/proc/{victim}/fd/0').read(1)", HIDDEN),
    WallAttack("another run's ns", "proc", "os.open(f'/proc/{victim}/ns/net', os.O_RDONLY)",
               HIDDEN),
    WallAttack("kallsyms", "proc", "open('/proc/kallsyms').read(100)", HIDDEN),
    WallAttack("core_pattern", "proc", "open('/proc/sys/kernel/core_pattern').read()", HIDDEN),
    WallAttack("sysvipc list", "proc", "open('/proc/sysvipc/shm').read()", HIDDEN),
    WallAttack("ptrace attach the zygote", "proc", "libc.ptrace(16, zygote, 0, 0)", FAILED),
    WallAttack("ptrace traceme", "proc", "libc.ptrace(0, 0, 0, 0)", FAILED),
    _sys("ptrace", "16, 2, 0, 0", "proc"),
    WallAttack("process_vm_readv another run", "proc",
               "buf = ctypes.create_string_buffer(8)\n"
               "iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)\n"
               "result = libc.process_vm_readv(victim, iov, 1, iov, 1, 0)", FAILED),
    _sys("process_vm_writev", "2, 0, 0, 0, 0, 0", "proc"),
    _sys("process_madvise", "3, 0, 0, 0, 0", "proc"),
    _sys("kcmp", "2, 3, 0, 0, 0", "proc"),
    _sys("pidfd_getfd", "3, 0, 0", "proc"),
    WallAttack("own /proc is readable", "proc", "len(open('/proc/self/status').read()) > 0",
               frozenset({"ok:True"})),
    WallAttack("own memory via /proc/self/mem", "proc",
               "open('/proc/self/mem', 'rb').seek(0) == 0", frozenset({"ok:True"})),
]

KERNEL = [
    *(_sys(name, args, "kernel") for name, args in (
        ("unshare", "0x10000000"), ("unshare", "0x40000000"), ("unshare", "0x00020000"),
        ("setns", "0, 0"), ("mount", "b'none', b'/tmp', b'tmpfs', 0, 0"),
        ("umount2", "b'/proc', 2"), ("pivot_root", "b'.', b'.'"), ("chroot", "b'.'"),
        ("open_tree", "-100, b'/', 1"), ("move_mount", "-1, b'', -100, b'/tmp', 0"),
        ("fsopen", "b'tmpfs', 0"), ("fspick", "-100, b'/', 0"),
        ("mount_setattr", "-100, b'/', 0, 0, 0"), ("bpf", "0, 0, 0"),
        ("perf_event_open", "ctypes.create_string_buffer(128), 0, -1, -1, 0"),
        ("keyctl", "0, -3, 0"), ("add_key", "b'user', b'k', b'v', 1, -3"),
        ("request_key", "b'user', b'k', 0, -3"), ("userfaultfd", "0"),
        ("io_uring_setup", "8, ctypes.create_string_buffer(120)"),
        ("io_uring_enter", "0, 0, 0, 0, 0, 0"), ("init_module", "0, 0, b''"),
        ("finit_module", "0, b'', 0"), ("delete_module", "b'x', 0"),
        ("kexec_load", "0, 0, 0, 0"), ("kexec_file_load", "0, 0, 0, 0, 0"),
        ("reboot", "0xfee1dead, 672274793, 0, 0"), ("swapon", "b'/tmp/x', 0"),
        ("swapoff", "b'/tmp/x'"), ("acct", "b'/tmp/x'"), ("quotactl", "0, 0, 0, 0"),
        ("syslog", "3, ctypes.create_string_buffer(64), 64"), ("personality", "0x0008"),
        ("name_to_handle_at", "-100, b'/', 0, 0, 0"), ("open_by_handle_at", "-100, 0, 0"),
        ("fanotify_init", "0, 0"), ("memfd_secret", "0"), ("seccomp", "1, 0, 0"),
        ("iopl", "3"), ("ioperm", "0, 1024, 1"), ("sethostname", "b'x', 1"),
        ("settimeofday", "ctypes.create_string_buffer(16), 0"), ("setuid", "0"),
        ("setgid", "0"), ("capset", "0, 0"), ("vhangup", ""))),
    WallAttack("int 0x80 (i386 ABI) getpid", "kernel",
               "asm(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')()", SIGSYS, alone=True),
    WallAttack("x32 ABI getpid", "kernel", "asm(b'\\xb8\\x27\\x00\\x00\\x40\\x0f\\x05\\xc3')()",
               SIGSYS, alone=True),
    WallAttack("x32 ABI fork", "kernel", "asm(b'\\xb8\\x39\\x00\\x00\\x40\\x0f\\x05\\xc3')()",
               SIGSYS, alone=True),
    WallAttack("x32 ABI socket", "kernel",
               "asm(b'\\xb8\\x29\\x00\\x00\\x40\\xbf\\x02\\x00\\x00\\x00\\xbe\\x01\\x00\\x00\\x00"
               "\\x31\\xd2\\x0f\\x05\\xc3')()", SIGSYS, alone=True),
]

FDS = [
    WallAttack("inherited fds are few", "fds",
               "result = sorted(int(f) for f in os.listdir('/proc/self/fd') if int(f) < 3)",
               frozenset({"ok:[0, 1, 2]"})),
    WallAttack("stdin is not the zygote's pipe", "fds",
               "result = os.readlink('/proc/self/fd/0')", frozenset({"ok:'/dev/null'"})),
    WallAttack("TIOCSTI on stdin", "fds",
               "import fcntl\nfcntl.ioctl(0, 0x5412, b'x')", frozenset({"OSError"})),
    WallAttack("TIOCSTI on stdout", "fds",
               "import fcntl\nfcntl.ioctl(1, 0x5412, b'x')", frozenset({"OSError"})),
    WallAttack("open /dev/tty", "fds", "open('/dev/tty', 'w')",
               frozenset({"PermissionError", "OSError", "FileNotFoundError"})),
    WallAttack("open /dev/ptmx", "fds", "open('/dev/ptmx', 'w')", HIDDEN),
    WallAttack("open /dev/mem", "fds", "open('/dev/mem', 'rb')", HIDDEN),
    WallAttack("open /dev/kmsg", "fds", "open('/dev/kmsg', 'rb')", HIDDEN),
    WallAttack("open /dev/userfaultfd", "fds", "open('/dev/userfaultfd', 'rb')", HIDDEN),
    WallAttack("open /dev/null is allowed", "fds", "open('/dev/null', 'w').write('x')",
               frozenset({"ok:1"})),
]

WALL_ATTACKS: list[WallAttack] = [*FILES, *LISTING, *EXEC, *PROCESSES, *NETWORK, *IPC,
                                  *SIGNALS, *PROC, *KERNEL, *FDS]
