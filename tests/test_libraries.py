"""The box finds the libraries its code looks up by name (pyseccomp's libseccomp) without
running a program inside it: the server finds them by their real paths before the box starts.

Ubuntu's `/sbin/ldconfig` is a shell script (it calls `ldconfig.real`) and slim containers have
none, while `ctypes.util.find_library` runs it. Both are built here, as root, in a private mount
namespace of a Python of its own: a shell script bound over ldconfig that calls the real one,
and an empty folder over ldconfig's. There a real pool runs a program walled.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from explorer.safety import box, confine, libraries
from tests.conftest import ROOT

LDCONFIG = os.path.realpath("/sbin/ldconfig")
# A pool's run of a program, and what the pool said about its walls.
APP = textwrap.dedent("""
    import json
    from explorer.pool.worker import WorkerPool
    pool = WorkerPool(size=1, require_walls=True)
    trace = pool.run("print(6 * 7)")
    print(json.dumps({"missing": pool.missing, "boxed": pool.boxed, "locked": pool.locked,
                      "stdout": trace.stdout, "error": trace.error and trace.error.message}))
    pool.close()
""")


def in_private_mounts(mounts: str, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `code` (with `args`) in a Python of its own, in a private mount namespace where the
    shell commands `mounts` ran first."""
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"',
         "sh", sys.executable, "-c", code, *args],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")})


def walled_run(mounts: str) -> dict[str, Any]:
    done = in_private_mounts(mounts, APP)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


private_mounts = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or not os.path.exists(LDCONFIG),
    reason="needs root, unshare (util-linux) and an ldconfig to stand in for (CI has them)")
walled_here = pytest.mark.skipif(bool(box.missing() or confine.missing()),
                                 reason=f"no wall here: {box.missing() or confine.missing()}")


@private_mounts
@walled_here
def test_a_program_runs_walled_where_ldconfig_is_a_shell_script(tmp_path: Path) -> None:
    real = tmp_path / "ldconfig.real"
    shutil.copy2(LDCONFIG, real)
    script = tmp_path / "ldconfig"  # Ubuntu's, in short
    script.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    script.chmod(0o755)
    shown = walled_run(f"mount --bind {script} {LDCONFIG}")
    assert shown == {"missing": [], "boxed": True, "locked": True, "stdout": "42\n",
                     "error": None}


@private_mounts
@walled_here
def test_a_program_runs_walled_where_there_is_no_ldconfig(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = os.path.dirname(LDCONFIG)
    check = f"test ! -e {LDCONFIG}"
    shown = walled_run(f"mount --bind {empty} {folder} && {check}")
    assert shown == {"missing": [], "boxed": True, "locked": True, "stdout": "42\n",
                     "error": None}


def test_libseccomp_is_found_by_its_real_path() -> None:
    found = libraries.located()
    assert os.path.realpath(found["seccomp"]) == found["seccomp"]  # absolute, no link
    assert ctypes.CDLL(found["seccomp"]).seccomp_init  # it is libseccomp, and it loads


def test_a_library_is_found_in_the_loaders_folders_without_find_library(tmp_path: Path) -> None:
    seccomp = libraries.located()["seccomp"]
    (tmp_path / "libexplorertest.so.3").symlink_to(seccomp)
    (tmp_path / "libexplorertest.so.3.1.4").write_text("not a library")
    os.environ["LD_LIBRARY_PATH"] = str(tmp_path)  # the loader looks here first
    try:
        assert str(tmp_path) == libraries.loader_folders()[0]
        assert libraries.locate("explorertest") == seccomp  # .so.3 first; the real file
    finally:
        del os.environ["LD_LIBRARY_PATH"]
    assert libraries.locate("explorertest") is None


def test_the_loaders_folders_follow_its_configuration_and_includes(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "ld.so.conf").write_text(f"# comment\ninclude conf.d/*.conf\n{tmp_path / 'a'}\n")
    (tmp_path / "conf.d" / "x.conf").write_text(
        f"{tmp_path / 'b'}  # why\n{tmp_path / 'nowhere'}\n")
    folders = libraries.loader_folders(str(tmp_path / "ld.so.conf"))
    assert folders[:2] == [str(tmp_path / "b"), str(tmp_path / "a")]
    assert str(tmp_path / "nowhere") not in folders


def test_find_library_answers_by_the_path_given_only_while_asked_to() -> None:
    with libraries.by_path({"seccomp": "/given/libseccomp.so.2"}):
        assert ctypes.util.find_library("seccomp") == "/given/libseccomp.so.2"
        assert ctypes.util.find_library("m") == ctypes.util.find_library("m")  # as before
    assert ctypes.util.find_library("seccomp") != "/given/libseccomp.so.2"


def test_the_box_is_told_the_libraries_the_server_found() -> None:
    argv = box.command(["true"], "/tmp", {})
    told = argv.index(libraries.VARIABLE)
    assert argv[told - 1] == "--setenv"
    assert json.loads(argv[told + 1]) == libraries.located()
    assert not any("ldconfig" in part for part in argv)  # nothing in the box runs it
