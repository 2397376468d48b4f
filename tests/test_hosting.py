"""Hosting: hosted mode's settings, the `autograd-explorer` command, the Dockerfile, and the
hosted files checked without Docker: requirements.txt installed into a fresh venv, the app
installed from a copy of the source and started from there, as a host would."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from playwright.sync_api import expect

from explorer.bench.served import ROOT, free_port, wait_healthy
from explorer.content.examples import EXAMPLES
from explorer.content.i18n import text
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.serve import launch
from explorer.serve.hosting import HOSTED, LOCAL, VARIABLE, hosted, settings
from explorer.trace.notes import english
from explorer.views.render import LayoutError, svg
from explorer.views.training import STARTS, starting
from tests.conftest import ARTIFACTS

PIP_TIMEOUT_S = 15 * 60  # measured here: about 100 s with nothing in pip's cache
LIMIT_ERRORS = {"TimeLimit", "MemoryLimit", "LoopLimit", "NumberLimit", "WorkerCrashed", "Busy"}
# The launcher's entry point, called as the console script calls it.
LAUNCH = "import sys; from explorer.serve.launch import main; main(sys.argv[1:])"
TORCH_WHEEL = re.compile(r"https://download\.pytorch\.org/whl/cpu/torch-2\.13\.0%2Bcpu-"
                         r"(cp\d+-cp\d+-manylinux_2_28_\w+)\.whl#sha256=[0-9a-f]{64}")


# Hosted mode's settings -------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1", "true", "TRUE", " yes ", "On"])
def test_hosted_mode_is_on_for_a_yes(value: str) -> None:
    assert hosted({VARIABLE: value}) and settings({VARIABLE: value}) is HOSTED


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off", "2", "enabled", "tru", "1 1"])
def test_anything_else_is_the_local_mode(value: str) -> None:
    assert not hosted({VARIABLE: value}) and settings({VARIABLE: value}) is LOCAL
    assert settings({}) is LOCAL


def test_every_hosted_limit_is_smaller() -> None:
    for field in dataclasses.fields(Limits):
        assert getattr(HOSTED.limits, field.name) < getattr(LOCAL.limits, field.name), field
        assert (getattr(HOSTED.training_limits, field.name)
                <= getattr(LOCAL.training_limits, field.name)), field
    assert HOSTED.training_limits.time_s < LOCAL.training_limits.time_s
    assert HOSTED.training_limits.memory_mb < LOCAL.training_limits.memory_mb
    assert HOSTED.workers == 1 < LOCAL.workers
    assert LOCAL.details and not HOSTED.details


def test_a_hosted_session_runs_less_often() -> None:
    public, local = HOSTED.rate_limiter(), LOCAL.rate_limiter()
    assert [public.take("s", now=0.0) for _ in range(10)] == [0.0] * 10
    assert public.take("s", now=0.0) == pytest.approx(5.0)
    assert public.take("s", now=5.0) == 0.0
    assert [local.take("s", now=0.0) for _ in range(30)] == [0.0] * 30
    assert local.take("s", now=0.0) == pytest.approx(2.0)
    assert HOSTED.rate_limiter().take("s", now=0.0) == 0.0  # each limiter has its own buckets


@pytest.mark.parametrize(("value", "expected"), [("yes", HOSTED), ("0", LOCAL)])
def test_the_app_takes_its_settings_from_the_environment(value: str, expected: Any) -> None:
    """The pages' shared parts, imported in a server-like process with EXPLORER_HOSTED set."""
    probe = ("import json; from explorer.ui import common, training; p = common.pool(); "
             "print(json.dumps([common.SETTINGS.hosted, repr(common.LIMITS), p.size, p.details, "
             "repr(p.limits), common.RUNS.burst, common.RUNS.interval_s, "
             "repr(training.LIMITS)])); p.close()")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, VARIABLE: value})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == [expected.hosted, repr(expected.limits), expected.workers, expected.details,
                    repr(expected.limits), expected.burst, expected.interval_s,
                    repr(expected.training_limits)]


def test_every_lesson_program_fits_the_hosted_caps(pool: WorkerPool) -> None:
    """Memory, loops, output, values, steps and graph size; the clock is left out (60 s), as
    it depends on the machine's load, not on the program."""
    caps = dataclasses.replace(HOSTED.limits, time_s=60)
    runs = [(e.key, pool.run(e.code, limits=caps)) for e in EXAMPLES]
    training = dataclasses.replace(HOSTED.training_limits, time_s=60)
    runs += [(f"training {key}", pool.run(starting(key, "en"), limits=training))
             for key in STARTS]
    for key, trace in runs:
        assert trace.error is None or trace.error.type not in LIMIT_ERRORS, (key, trace.error)
        assert not [n for n in english(trace.notes) if "cap" in n or "Only the first" in n], key
    # the training page's starting programs: the seed's 500 iterations
    assert all(trace.ok and len(trace.losses) == 500 for _, trace in runs[-len(STARTS):])


def test_hosted_errors_name_no_cause_but_the_log_has_it(caplog: Any) -> None:
    with pytest.raises(LayoutError) as raised:  # graphviz's own complaint about broken DOT
        svg("digraph {\n\ta -> \n}\n")
    error = raised.value
    assert "syntax error" in str(error)
    assert LOCAL.cause(error, "en") == str(error)  # locally as helpful as before
    with caplog.at_level(logging.ERROR, logger="explorer.serve.hosting"):
        for lang in ("en", "zh"):
            shown = HOSTED.cause(error, lang)
            assert shown == text("cause_hidden", lang) and "syntax" not in shown
    assert "syntax error" in caplog.text


def test_a_hosted_pool_that_cannot_start_a_worker_names_no_path(caplog: Any) -> None:
    """The pool's private directory vanishes (a /tmp cleaner): the next run cannot start a
    worker, and the OS error names that directory."""
    for details in (True, False):
        pool = WorkerPool(size=1, details=details, kept_bytes=0)
        home = pool._dir.name  # the pool's private directory (zygote socket, runs' homes)
        try:
            assert pool.run("x = 1").ok  # the zygote is up and serving
            shutil.rmtree(home)
            with caplog.at_level(logging.ERROR, logger="explorer.pool.worker"):
                trace = pool.run("x = 2")
        finally:
            pool.close()
        assert trace.error is not None and trace.error.type == "WorkerUnavailable"
        message = trace.error.message
        if details:
            assert home in message
        else:
            assert message == "Could not start a worker; please try again in a moment."
        assert home in caplog.text  # the operator reads the cause in the server's log
        caplog.clear()
        assert not Path(home).exists() and not _processes_with(home)


# The command, the requirements and the Dockerfile -----------------------------------------

def test_the_command_is_installed_and_explains_itself() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"autograd-explorer": "explorer.serve.launch:main"}
    done = subprocess.run([sys.executable, "-c", LAUNCH, "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: autograd-explorer")
    for option in ("--port PORT", "--address ADDRESS", "--hosted", "(default: 8501)"):
        assert option in done.stdout
    assert launch.app_dir(launch.places()) == ROOT  # a checkout serves its own files


@pytest.mark.parametrize(("port", "says"), [("0", "0 is not a port (1-65535)"),
                                            ("70000", "70000 is not a port"),
                                            ("http", "invalid port value: 'http'")])
def test_a_bad_port_is_refused(port: str, says: str) -> None:
    done = subprocess.run([sys.executable, "-c", LAUNCH, "--port", port], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr


def test_without_the_app_files_the_command_says_where_it_looked(tmp_path: Path) -> None:
    """A Python whose `explorer` has no app files beside it and none installed with it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "env"],
                   check=True, timeout=120)
    shutil.copytree(ROOT / "explorer", tmp_path / "lib" / "explorer",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run([tmp_path / "env" / "bin" / "python", "-c", LAUNCH, "--port", "8501"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "lib"),
                               "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("autograd-explorer: the app's files (streamlit_app.py, pages, "
                                  ".streamlit/config.toml) are in none of: ")
    assert str(tmp_path / "lib") in done.stderr  # beside the package
    assert str(tmp_path / "env" / "share" / "autograd-explorer") in done.stderr  # installed
    assert "pip install ." in done.stderr
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, nothing started


def _requirements() -> list[Requirement]:
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return [Requirement(line) for line in lines if line and not line.startswith("#")]


def test_requirements_match_pyproject() -> None:
    """Same packages and lower bounds; torch pinned to a CPU build pyproject allows."""
    wanted = {Requirement(d).name: Requirement(d) for d in tomllib.loads(
        (ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    given = [r for r in _requirements() if r.name != "torch"]
    assert sorted(r.name for r in given) == sorted(name for name in wanted if name != "torch")
    for req in given:
        assert (req.specifier, req.marker) == (wanted[req.name].specifier,
                                               wanted[req.name].marker), req
    for torch in (r for r in _requirements() if r.name == "torch"):
        version = "2.13.0+cpu" if torch.url else str(torch.specifier).removeprefix("==")
        assert version == "2.13.0+cpu" and version in wanted["torch"].specifier


@pytest.mark.parametrize(("python", "system", "machine", "expected"), [
    ("3.12", "linux", "x86_64", "cp312-cp312-manylinux_2_28_x86_64"),  # Community Cloud, Docker
    ("3.12", "linux", "aarch64", "cp312-cp312-manylinux_2_28_aarch64"),  # Docker on arm64
    ("3.11", "linux", "x86_64", "==2.13.0+cpu"),  # from a wheel directory pip is given
    ("3.13", "linux", "x86_64", "==2.13.0+cpu"),
    ("3.12", "darwin", "arm64", "==2.13.0+cpu"),
])
def test_each_machine_gets_one_cpu_torch(python: str, system: str, machine: str,
                                         expected: str) -> None:
    where = {"python_version": python, "sys_platform": system, "platform_machine": machine}
    chosen = [r for r in _requirements()
              if r.name == "torch" and (r.marker is None or r.marker.evaluate(where))]
    assert len(chosen) == 1
    (torch,) = chosen
    if torch.url:  # the wheel itself, hash-checked: no index or page is asked for it
        found = TORCH_WHEEL.fullmatch(torch.url)
        assert found and found.group(1) == expected
    else:
        assert str(torch.specifier) == expected
    assert not [line for line in (ROOT / "requirements.txt").read_text().splitlines()
                if line.startswith("-")]  # no index, no find-links: nothing asked per package


def _dockerfile() -> dict[str, list[str]]:
    """Each instruction's arguments, continuation lines joined."""
    joined = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    found: dict[str, list[str]] = {}
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.setdefault(word, []).append(" ".join(rest.split()))
    return found


def _healthcheck() -> list[str]:
    (healthcheck,) = _dockerfile()["HEALTHCHECK"]
    return json.loads(healthcheck[healthcheck.index("CMD ") + 4:])


def test_the_dockerfile_serves_and_checks_the_apps_port_and_health_path() -> None:
    docker = _dockerfile()
    assert docker["FROM"] == ["python:3.12-slim"]
    assert docker["EXPOSE"] == ["8501"]
    assert "EXPLORER_HOSTED=1" in docker["ENV"]
    assert docker["USER"] and docker["USER"] != ["root"]
    command = json.loads(docker["CMD"][0])
    assert command[0] == "autograd-explorer"
    args = launch.parser().parse_args(command[1:])
    assert (args.address, args.port) == ("0.0.0.0", 8501)
    assert launch.parser().parse_args([]).port == 8501  # the command's own default, too
    (url,) = re.findall(r"http://[^'\"]+", " ".join(_healthcheck()))
    assert url == "http://localhost:8501/_stcore/health"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "artifacts", "**/__pycache__", "tests"} <= set(ignored)


# The hosted files, end to end --------------------------------------------------------------

def _docker_context(target: Path) -> None:
    """Copy the repository as `docker build` would send it: without what .dockerignore names
    (`**/name` at any depth, other patterns from the root)."""
    patterns = [p for p in (ROOT / ".dockerignore").read_text().split() if not p.startswith("#")]

    def ignored(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).relative_to(ROOT)
        return {name for name in names for p in patterns
                if fnmatch.fnmatch((here / name).as_posix(), p.removeprefix("**/"))
                or (p.startswith("**/") and fnmatch.fnmatch(name, p[3:]))}

    shutil.copytree(ROOT, target, ignore=ignored)


def _run_bounded(command: list[Any], timeout_s: float, log: Path) -> float:
    """Run `command` with its output in `log`; fail (its whole group stopped) if it takes
    longer than `timeout_s` or fails. Returns the seconds it took."""
    started = time.monotonic()
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            code: int | None = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
    if code != 0:
        what = (f"took more than {timeout_s:.0f} s (an unreachable package index?)"
                if code is None else f"failed ({code})")
        pytest.fail(f"`{' '.join(map(str, command))}` {what}; its output ends with:\n"
                    f"{log.read_text(errors='replace')[-3000:]}")
    return time.monotonic() - started


@pytest.fixture(scope="module")
def hosted_install(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A fresh venv with requirements.txt and then the app (a regular install, no deps) from
    a copy of the source, as the Dockerfile does; pip keeps its usual cache. Removed after
    the tests (PyTorch makes it about a gigabyte)."""
    python = shutil.which("python3.11")
    assert python, "python3.11 is not on PATH"
    work = tmp_path_factory.mktemp("hosting")
    source, venv, log = work / "source", work / "venv", work / "pip.log"
    try:
        _docker_context(source)
        _run_bounded([python, "-m", "venv", venv], 120, log)
        pip = [venv / "bin" / "python", "-m", "pip"]
        took = _run_bounded([*pip, "install", "-r", source / "requirements.txt"],
                            PIP_TIMEOUT_S, log)
        print(f"pip install -r requirements.txt: {took:.0f} s")  # shown with -s or -rP
        # nothing was asked of PyTorch's own server, unreachable here
        assert "download.pytorch.org" not in log.read_text(errors="replace")
        _run_bounded([*pip, "install", "--no-deps", source], 600, log)
        yield {"source": source, "venv": venv}
    finally:
        shutil.rmtree(work)


def _processes_with(marker: str) -> list[int]:
    """Processes whose command line contains `marker` (a path of this test's own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue  # it ended meanwhile
    return found


@contextmanager
def _serving(command: list[Any], cwd: Path, env: dict[str, str], name: str,
             venv: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The server `command` starts (it must listen on the port it is given), until the block
    ends; then its process group is stopped and nothing of `venv` may be left running."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / f"{name}.log", "w+b") as log:
        server = subprocess.Popen([*command, str(port)], cwd=cwd, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, server, log)
            yield url, server
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
            deadline = time.monotonic() + 15  # the zygote leaves when the server is gone
            while _processes_with(str(venv)) and time.monotonic() < deadline:
                time.sleep(0.2)
            left = _processes_with(str(venv))
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            assert not left, f"{name}: still running after the server stopped: {left}"


def _server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (VARIABLE, "PYTHONPATH")}
    return env | extra


@pytest.mark.browser
def test_the_installed_command_serves_the_hosted_app(hosted_install: dict[str, Path],
                                                     browser: Any, tmp_path: Path) -> None:
    venv = hosted_install["venv"]
    command = [venv / "bin" / "autograd-explorer", "--address", "127.0.0.1", "--port"]
    with _serving(command, tmp_path, _server_env(**{VARIABLE: "1"}), "hosted-command",
                  venv) as (url, server):
        # the installed copy of the app, not a checkout's
        served = Path(os.readlink(f"/proc/{server.pid}/cwd"))
        assert served == venv / "share" / "autograd-explorer"
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            tab = context.new_page()
            tab.goto(url)
            expect(tab.get_by_role("heading", level=1)).to_have_text(text("app_title", "en"))
            limits = HOSTED.limits
            expect(tab.get_by_test_id("stSidebar")).to_contain_text(text(
                "hosted_note", "en", time=limits.time_s, memory=limits.memory_mb,
                burst=HOSTED.burst, interval=HOSTED.interval_s))
            tab.screenshot(path=ARTIFACTS / "hosted-home.png")
            # .streamlit/config.toml applies: the app's own page list, no developer toolbar
            expect(tab.get_by_test_id("stSidebarNav")).to_have_count(0)
            expect(tab.get_by_test_id("stAppDeployButton")).to_have_count(0)
            tab.get_by_role("link", name=text("playground", "en"), exact=True).click()
            expect(tab.get_by_text(text("sandbox_note", "en", time=limits.time_s,
                                        memory=limits.memory_mb))).to_be_visible()
            tab.get_by_role("button", name=text("run", "en")).click()
            expect(tab.get_by_text("State after line 7")).to_be_visible(timeout=60_000)
            tab.screenshot(path=ARTIFACTS / "hosted-playground.png")
        finally:
            context.close()
        # the Dockerfile's health check, pointed at this server: healthy, then not
        check = [str(part).replace("localhost:8501", url.removeprefix("http://"))
                 for part in _healthcheck()]
        assert subprocess.run([venv / "bin" / "python", *check[1:]], timeout=30).returncode == 0
    assert subprocess.run([venv / "bin" / "python", *check[1:]], timeout=30,
                          capture_output=True).returncode != 0


@pytest.mark.browser
def test_community_clouds_way_serves_the_repository_root(hosted_install: dict[str, Path],
                                                         browser: Any) -> None:
    """`streamlit run streamlit_app.py` in the repository, hosted mode from a top-level
    secret (Community Cloud's settings), `explorer` imported from the repository root."""
    source, venv = hosted_install["source"], hosted_install["venv"]
    secrets = source / ".streamlit" / "secrets.toml"
    secrets.write_text(f'{VARIABLE} = "1"\n')
    command = [venv / "bin" / "python", "-m", "streamlit", "run", "streamlit_app.py",
               "--server.address", "127.0.0.1", "--server.port"]
    try:
        with _serving(command, source, _server_env(), "hosted-cloud", venv) as (url, _):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            try:
                tab = context.new_page()
                tab.goto(url)
                expect(tab.get_by_role("heading", level=1)).to_have_text(text("app_title", "en"))
                expect(tab.get_by_test_id("stSidebar")).to_contain_text(
                    text("hosted_note", "en", time=HOSTED.limits.time_s,
                         memory=HOSTED.limits.memory_mb, burst=HOSTED.burst,
                         interval=HOSTED.interval_s))
            finally:
                context.close()
    finally:
        secrets.unlink()
