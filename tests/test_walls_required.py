"""Without its wall the app fails closed: a machine that cannot build the box refuses every
run and every page says why, unless `EXPLORER_WITHOUT_WALLS=1` says the owner accepts the
risk (then every page says that). The box is built from real paths, so a virtualenv reached
through a symbolic link is walled like any other.

Each case is a real app (Streamlit's AppTest, the real pool) in a Python of its own, started
as an owner would start it: through a linked virtualenv, or with a PATH without bubblewrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from explorer.bench.served import ROOT
from explorer.safety import box, confine

walled_here = pytest.mark.skipif(bool(box.missing() or confine.missing()),
                                 reason=f"no wall here: {box.missing() or confine.missing()}")

# The Playground runs `print(6 * 7)`; what the page showed and what the pool's zygote is.
APP = textwrap.dedent("""
    import json, os, sys
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(sys.argv[1], default_timeout=120)
    at.query_params["lang"] = sys.argv[2]
    at.run()
    at.switch_page("pages/1_Playground.py").run()
    at.session_state["playground.code"] = "print(6 * 7)"
    at.button(key="playground.run").click().run()
    from explorer.ui.common import pool
    zygote = pool().zygote_pid

    def ns(pid, kind):
        return os.readlink(f"/proc/{pid}/ns/{kind}")

    print(json.dumps({
        "errors": [e.value for e in at.error], "warnings": [e.value for e in at.warning],
        "code": [e.value for e in at.code], "exception": [str(e) for e in at.exception],
        "zygote": zygote,
        "own_pid_ns": bool(zygote) and ns(zygote, "pid") != ns("self", "pid"),
        "own_net_ns": bool(zygote) and ns(zygote, "net") != ns("self", "net")}))
""")


def _app(python: str, lang: str = "en", **env: str) -> dict[str, Any]:
    """What the Playground showed after running `print(6 * 7)` in an app of its own."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")} | env
    done = subprocess.run([python, "-c", APP, str(ROOT / "streamlit_app.py"), lang],
                          capture_output=True, text=True, timeout=300, env=environ, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _path_without_bubblewrap(tmp_path: Path) -> str:
    """A PATH with the tools the app uses but bubblewrap."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("dot", "setpriv", "ldconfig", "rm"):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    return str(tools)


@walled_here
def test_a_virtualenv_reached_through_a_link_runs_programs_walled(tmp_path: Path) -> None:
    link = tmp_path / "venv"
    link.symlink_to(os.path.realpath(sys.prefix), target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    shown = _app(str(python))
    assert shown["exception"] == [] and shown["errors"] == [] and shown["warnings"] == []
    assert any("42" in code for code in shown["code"])
    assert shown["own_pid_ns"] and shown["own_net_ns"]  # the zygote is in the box


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_bubblewrap_every_run_is_refused_and_the_page_says_why(
        tmp_path: Path, lang: str) -> None:
    shown = _app(sys.executable, lang, PATH=_path_without_bubblewrap(tmp_path))
    assert shown["exception"] == []
    banner = "Programs are not run on this server" if lang == "en" else "此服务器不运行程序"
    assert any(banner in error and "bwrap is not installed" in error
               for error in shown["errors"])
    assert any("WallMissing" in error for error in shown["errors"])  # the run's own error
    assert not any("42" in code for code in shown["code"])
    assert shown["zygote"] == 0  # no process was started to run anything


def test_a_public_host_without_bubblewrap_refuses_runs_naming_no_cause(tmp_path: Path) -> None:
    shown = _app(sys.executable, PATH=_path_without_bubblewrap(tmp_path), EXPLORER_HOSTED="1")
    assert any("Programs are not run on this server" in error for error in shown["errors"])
    assert not any("bwrap" in error for error in shown["errors"])
    assert not any("42" in code for code in shown["code"]) and shown["zygote"] == 0


def test_the_owners_override_runs_programs_and_every_page_says_so(tmp_path: Path) -> None:
    shown = _app(sys.executable, PATH=_path_without_bubblewrap(tmp_path),
                 EXPLORER_WITHOUT_WALLS="1")
    assert shown["exception"] == [] and shown["errors"] == []
    assert any("without the operating system's walls" in warning and "bwrap" in warning
               for warning in shown["warnings"])
    assert any("42" in code for code in shown["code"])
    assert not shown["own_pid_ns"]  # unwalled, as the banner says
