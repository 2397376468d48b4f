"""deploy/: two replicas of the app behind HAProxy (deploy/haproxy.cfg, Debian's package) on
loopback, spoken to over Streamlit's websocket as browsers would; and the Kubernetes manifest,
validated against Kubernetes' own schema."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from explorer.bench.classroom import Learner, connect, play
from explorer.bench.served import free_port, server
from explorer.content.examples import by_key

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SLOW = "import time\ntime.sleep(3)\nprint('slept')\n"  # 3 s on any machine: cut off at 1 s


@pytest.fixture
def haproxy() -> str:
    found = shutil.which("haproxy")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy is missing in CI: `make test` should install it")
        pytest.skip("haproxy is not installed (`make test` installs it)")
    return found


def _config(port: int, replicas: list[str]) -> str:
    """deploy/haproxy.cfg as shipped, listening on `port` of loopback, with the `replicas`
    (host:port) named one by one instead of found by DNS."""
    shipped = (DEPLOY / "haproxy.cfg").read_text()
    servers = "".join(f"    server app{i} {where} check inter 500ms fall 1 rise 1\n"
                      for i, where in enumerate(replicas, 1))
    config, found = re.subn(r"(?m)^    server-template .*\n", servers, shipped)
    assert found == 1
    return config.replace("    bind :8080", f"    bind 127.0.0.1:{port}")


@pytest.fixture
def replicas(haproxy: str) -> Iterator[tuple[str, dict[str, subprocess.Popen[bytes]]]]:
    """Two replicas of the app behind HAProxy: the proxy's URL, and the replicas' servers by
    the name HAProxy gives them."""
    with tempfile.TemporaryDirectory() as where, \
            tempfile.TemporaryFile() as log_1, tempfile.TemporaryFile() as log_2, \
            server(log_1) as (url_1, app_1), server(log_2) as (url_2, app_2):
        port = free_port()
        config = Path(where) / "haproxy.cfg"
        config.write_text(_config(port, [url_1.removeprefix("http://"),
                                         url_2.removeprefix("http://")]))
        proxy = subprocess.Popen([haproxy, "-db", "-f", str(config)],
                                 env=os.environ | {"COOKIE_KEY": "test-key", "APP": "unused"},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while not _healthy(url):
                assert proxy.poll() is None, proxy.stderr.read().decode()
                assert time.monotonic() < deadline, "HAProxy did not come up"
                time.sleep(0.2)
            yield url, {"app1": app_1, "app2": app_2}
        finally:
            proxy.terminate()
            proxy.wait(timeout=10)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


class Browser:
    """One learner's browser: the replica cookie HAProxy gave it, and its page's websocket."""

    def __init__(self, url: str) -> None:
        self.url = url
        with urllib.request.urlopen(f"{url}/", timeout=10) as response:  # the page itself
            self.cookie = response.headers["Set-Cookie"].split(";")[0]
            self.replica = response.headers["X-Replica"]
        self.socket: Any = None

    async def connect(self) -> Learner:
        """Open (or, after a loss, reopen) the page's websocket, as the page does."""
        self.socket = await connect(self.url, self.cookie)
        self.replica = self.socket.response.headers["X-Replica"]
        return Learner(self.socket)


async def _class(url: str, victim_of: Any) -> dict[str, Any]:
    browsers = [Browser(url) for _ in range(4)]
    learners = [await b.connect() for b in browsers]
    first = await asyncio.gather(*(s.open(by_key("autograd-basics").code) for s in learners))
    placed = [b.replica for b in browsers]
    # Every learner starts a slow run; one replica dies while they run.
    runs = [asyncio.create_task(s.type_and_run(f"{SLOW}# learner {i}\n"))
            for i, s in enumerate(learners)]
    await asyncio.sleep(1.0)
    victim = victim_of(placed)
    cut = await asyncio.gather(*runs)
    # Its learners' pages reconnect (HAProxy sends them to the replica left) and run again.
    again = {}
    for i, (browser, run) in enumerate(zip(browsers, cut, strict=True)):
        if not run.ok:
            learners[i] = await browser.connect()
            again[i] = (browser.replica, await learners[i].open(f"{SLOW}# learner {i}\n"))
    after = await asyncio.gather(*(s.press_run() for s in learners))
    for browser in browsers:
        await browser.socket.close()
    return {"first": first, "placed": placed, "victim": victim, "cut": cut, "again": again,
            "after": after}


def test_sessions_spread_over_replicas_and_survive_the_loss_of_one(replicas: Any) -> None:
    url, servers = replicas

    def kill_one(placed: list[str]) -> str:
        victim = placed[0]
        os.killpg(servers[victim].pid, signal.SIGKILL)
        return victim

    seen = play(_class(url, kill_one))
    assert all(run.ok for run in seen["first"]), seen["first"]
    assert sorted(seen["placed"]) == ["app1", "app1", "app2", "app2"]  # spread over both
    victim = seen["victim"]
    for i, (where, run) in enumerate(zip(seen["placed"], seen["cut"], strict=True)):
        if where == victim:
            assert not run.ok and run.problem == "disconnected", run
        else:  # the other replica's sessions are untouched
            assert run.ok, (i, run)
    survivor = "app2" if victim == "app1" else "app1"
    assert sorted(seen["again"]) == [i for i, p in enumerate(seen["placed"]) if p == victim]
    assert all(where == survivor and run.ok for where, run in seen["again"].values()), seen
    assert all(run.ok for run in seen["after"]), seen["after"]
    assert servers[victim].wait(timeout=10) == -signal.SIGKILL


def _documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_the_kubernetes_manifest_is_valid_and_matches_hosted_mode() -> None:
    documents = _documents("kubernetes.yaml")
    for document in documents:
        kubernetes_validate.validate(document, "1.32", strict=True)
    kinds = {d["kind"]: d for d in documents}
    assert set(kinds) == {"Deployment", "Service", "Ingress"}
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    (app,) = pod["containers"]
    assert {"name": "EXPLORER_HOSTED", "value": "1"} in app["env"]
    assert app["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert kinds["Deployment"]["spec"]["replicas"] >= 2
    ingress = kinds["Ingress"]["metadata"]["annotations"]
    assert ingress["nginx.ingress.kubernetes.io/affinity"] == "cookie"  # sticky sessions


def test_the_compose_file_runs_the_replicas_behind_the_shipped_haproxy_config(
        haproxy: str) -> None:
    (compose,) = _documents("compose.yaml")
    services = compose["services"]
    assert services["app"]["environment"]["EXPLORER_HOSTED"] == "1"
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in services["proxy"]["volumes"]
    checked = subprocess.run([haproxy, "-c", "-f", str(DEPLOY / "haproxy.cfg")],
                             env=os.environ | {"COOKIE_KEY": "k", "APP": "localhost:8501"},
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
