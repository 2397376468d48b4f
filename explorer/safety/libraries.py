"""The shared libraries the box's code looks up by name, found by the server before the box starts.

`ctypes.util.find_library` runs `/sbin/ldconfig -p` (then `gcc`, then `ld`): Ubuntu's ldconfig
is a shell script, a slim container has none, and the box has no shell and runs no program.
So the server finds each library that code in the box looks up by name (pyseccomp asks for
libseccomp and libc as it is imported) by its real path; the box binds exactly those files and
is told their paths (`VARIABLE`), and `by_path` answers `find_library` from them.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import glob
import json
import os
import sys
from collections.abc import Iterator, Mapping

NAMES = ("seccomp", "c")  # what pyseccomp looks up as it is imported
VARIABLE = "EXPLORER_LIBRARIES"  # the box's libraries, as JSON {name: path}
LOADER_CONFIG = "/etc/ld.so.conf"
RTLD_DI_LINKMAP = 2  # dlinfo(3)
_LIBC = ctypes.CDLL(None, use_errno=True)


class _LinkMap(ctypes.Structure):
    """The head of glibc's `struct link_map`: where a loaded library was loaded from."""

    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


@functools.cache
def located() -> dict[str, str]:
    """The real path of each library of `NAMES` found on this machine (asked once)."""
    found = {name: locate(name) for name in NAMES}
    return {name: path for name, path in found.items() if path}


def given() -> dict[str, str]:
    """The libraries the server found for this box (`VARIABLE`), else those found here."""
    told = os.environ.get(VARIABLE)
    return dict(json.loads(told)) if told else located()


def locate(name: str) -> str | None:
    """The real path of the shared library `name` (`seccomp` for libseccomp) as the dynamic
    loader loads it, or None: by `find_library`'s answer where it has one, else the first
    `lib<name>.so…` in the loader's folders that loads."""
    soname = ctypes.util.find_library(name)
    candidates = [soname] if soname else [
        path for folder in loader_folders()
        for path in sorted(glob.glob(os.path.join(glob.escape(folder), f"lib{name}.so*")),
                           key=lambda p: (p.count("."), p))]  # libseccomp.so.2 first
    for candidate in candidates:
        try:
            library = ctypes.CDLL(candidate)
        except OSError:  # not a library (glibc's libc.so is a linker script), or not ours
            continue
        return os.path.realpath(_loaded_from(library) or candidate)
    return None


def loader_folders(config: str = LOADER_CONFIG) -> list[str]:
    """Where the dynamic loader looks for a library, in its order: LD_LIBRARY_PATH, the
    folders its configuration names (with its `include`s), then the system's own."""
    folders = [f for f in os.environ.get("LD_LIBRARY_PATH", "").split(":") if f]
    folders += _configured(config, set())
    arch = getattr(sys.implementation, "_multiarch", "")  # e.g. x86_64-linux-gnu
    system = [f"{base}/{arch}" for base in ("/lib", "/usr/lib") if arch]
    folders += [*system, "/lib64", "/usr/lib64", "/lib", "/usr/lib"]
    return [f for f in dict.fromkeys(folders) if os.path.isdir(f)]


@contextlib.contextmanager
def by_path(paths: Mapping[str, str]) -> Iterator[None]:
    """While inside, `ctypes.util.find_library(name)` answers `paths[name]` where it has one
    (and asks as before otherwise)."""
    asked = ctypes.util.find_library
    ctypes.util.find_library = lambda name: paths.get(name) or asked(name)
    try:
        yield
    finally:
        ctypes.util.find_library = asked


def _configured(path: str, read: set[str]) -> list[str]:
    """The folders the loader's configuration file `path` names, its `include`s in place
    (each file read once)."""
    if path in read:
        return []
    read.add(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = [line.split("#")[0].strip() for line in file]
    except OSError:
        return []
    folders = []
    for line in filter(None, lines):
        if line.startswith("include "):
            pattern = os.path.join(os.path.dirname(path), line.split(None, 1)[1])
            for included in sorted(glob.glob(pattern)):
                folders += _configured(included, read)
        else:
            folders.append(line)
    return folders


def _loaded_from(library: ctypes.CDLL) -> str | None:
    """The file the loader loaded `library` from (None where dlinfo cannot say)."""
    dlinfo = getattr(_LIBC, "dlinfo", None)
    found = ctypes.POINTER(_LinkMap)()
    if dlinfo is None or dlinfo(ctypes.c_void_p(library._handle), RTLD_DI_LINKMAP,
                                ctypes.byref(found)) or not found:
        return None
    return found.contents.l_name.decode(errors="surrogateescape") or None
