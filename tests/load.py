"""Load and faults: many real browser sessions against the real app, with bombs and killed workers.

    .venv/bin/python tests/load.py --sessions 16 --runs 1000 [--max-seconds 600]

Starts `streamlit run streamlit_app.py` on a free 127.0.0.1 port, opens one Playwright page per
session (a browser context each, all in one Debian Chromium) on the Playground, and has every
session type and run programs one after another: mostly ordinary ones, some bombs (endless
loop, 40 GB tensor, a refused import, a C loop only the time limit stops) and some that sleep
while this script kills their worker with SIGKILL. It reports throughput, latency, outcomes by
type, the runs that ended unlike their kind says, and the RSS of the server and the zygote
before and after. It stops after `--runs` runs or `--max-seconds`, whichever comes first, and
sends nothing anywhere but 127.0.0.1. Not collected by pytest: `tests/test_load.py` runs a small
version of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: find `explorer`
from explorer.bench.served import CHROMIUM, CHROMIUM_ARGS, app  # noqa: E402

RUN_TIMEOUT_S = 120.0  # a run waits at most 30 s for a worker, then at most 7 s to run

# Each kind of run: its share of the runs, its program (TOKEN marks it on the page) and the
# outcome it must have ("ok" or the error type).
KINDS: dict[str, tuple[float, str, str]] = {
    "normal": (0.75, "print('TOKEN')\nx = torch.ones(2, 2, requires_grad=True)\n"
                     "out = ((x + 2) * (x + 2) * 3).mean()\nout.backward()\nprint(x.grad)\n",
               "ok"),
    "loop": (0.07, "print('TOKEN')\nwhile True:\n    pass\n", "LoopLimit"),
    "memory": (0.06, "print('TOKEN')\nx = torch.ones(100000, 100000)\n", "MemoryLimit"),
    "refused": (0.07, "x = torch.ones(2)\ntorch.load('model.pt')  # TOKEN\n", "Refused"),
    "time": (0.02, "print('TOKEN')\ntorch.ones(1).expand(2**62).sum()\n", "TimeLimit"),
    "kill": (0.03, "print('TOKEN')\nimport time\ntime.sleep(4)\n", "WorkerCrashed"),
}
# Kinds whose run shows no output, only an error: the page tells one from the run before it
# by that error, so `plan` never puts two of the same kind in a row.
SILENT = {"time": "TimeLimit", "kill": "WorkerCrashed"}
# True once the run ended: nothing on the page is stale, and its token shows, or the error a
# silent run ends with, or `Busy`. (A click first reruns the page for the edited code alone,
# which still shows the previous run: only what this run alone can show counts.)
DONE = """([token, error]) => {
    if (document.querySelector("[data-stale='true']")) return false;
    const shown = [...document.querySelectorAll("[data-testid='stCode']")]
        .some(block => block.textContent.includes(token));
    const alert = document.querySelector("[data-testid='stAlert']")?.innerText ?? "";
    return shown || (error !== null && alert.includes(error)) || alert.includes("Busy");
}"""
OUTCOME = """() => {
    const alert = document.querySelector("[data-testid='stAlert']");
    return alert ? alert.innerText : "";
}"""


@dataclass
class Run:
    """One click of Run in one session, and what came of it."""

    session: int
    kind: str
    expected: str
    outcome: str = ""
    latency_s: float = 0.0
    started: float = 0.0


@dataclass
class Report:
    """What a load run measured."""

    sessions: int
    runs: list[Run] = field(default_factory=list)
    seconds: float = 0.0
    memory_before_mb: dict[str, float] = field(default_factory=dict)
    memory_after_mb: dict[str, float] = field(default_factory=dict)

    @property
    def unexpected(self) -> list[Run]:
        return [run for run in self.runs if run.outcome != run.expected]

    def summary(self) -> dict[str, Any]:
        latencies = sorted(run.latency_s for run in self.runs)
        normal = sorted(run.latency_s for run in self.runs if run.kind == "normal")
        return {
            "sessions": self.sessions, "runs": len(self.runs), "seconds": round(self.seconds, 1),
            "runs_per_s": round(len(self.runs) / self.seconds, 2) if self.seconds else 0.0,
            "latency_p50_s": _percentile(latencies, 50),
            "latency_p95_s": _percentile(latencies, 95),
            "normal_p50_s": _percentile(normal, 50), "normal_p95_s": _percentile(normal, 95),
            "kinds": dict(Counter(run.kind for run in self.runs)),
            "outcomes": dict(Counter(run.outcome for run in self.runs)),
            "unexpected": [asdict(run) for run in self.unexpected],
            "memory_before_mb": self.memory_before_mb, "memory_after_mb": self.memory_after_mb,
        }


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return round(values[0], 3) if values else 0.0
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 3)


def plan(sessions: int, runs: int, seed: int) -> list[list[str]]:
    """The kinds each session runs, in order: `runs` in all, mixed by `KINDS`' shares (a
    silent kind never twice in a row)."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    weights = [KINDS[kind][0] for kind in kinds]
    plans: list[list[str]] = [[] for _ in range(sessions)]
    for n in range(runs):
        kind, session = rng.choices(kinds, weights)[0], plans[n % sessions]
        session.append("normal" if kind in SILENT and session[-1:] == [kind] else kind)
    return plans


def _processes() -> Iterator[tuple[int, bytes, int]]:
    """(pid, command line, parent pid) of every process this script may look at."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError, ValueError):
                status = (proc / "status").read_text()
                ppid = int(status.split("PPid:")[1].split()[0])
                yield int(proc.name), (proc / "cmdline").read_bytes(), ppid


def server_processes(url: str) -> dict[str, int]:
    """The pids of the streamlit server serving `url` and of its zygote."""
    port = url.rsplit(":", 1)[1].encode()
    found: dict[str, int] = {}
    procs = list(_processes())
    for pid, cmdline, _ in procs:
        parts = cmdline.split(b"\0")
        if b"streamlit" in cmdline and b"run" in parts and port in parts:
            found["server"] = pid
    for pid, cmdline, ppid in procs:
        if b"explorer.record.zygote" in cmdline and ppid == found.get("server"):
            found["zygote"] = pid
    return found


def rss_mb(pids: dict[str, int]) -> dict[str, float]:
    """Resident memory of each named process, in MiB."""
    sizes = {}
    for name, pid in pids.items():
        with contextlib.suppress(OSError, IndexError):
            status = Path(f"/proc/{pid}/status").read_text()
            sizes[name] = round(int(status.split("VmRSS:")[1].split()[0]) / 1024, 1)
    return sizes


def kill_a_sleeping_worker(url: str, timeout_s: float = RUN_TIMEOUT_S) -> bool:
    """SIGKILL a zygote child that sleeps in `time.sleep`. Only `kill` runs sleep, and each
    kills one: should two kill each other's, every one of them is still killed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        zygote = server_processes(url).get("zygote")
        for pid, _, ppid in _processes():
            if ppid == zygote and "nanosleep" in _wchan(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                return True
        time.sleep(0.05)
    return False


def _wchan(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


async def session(number: int, kinds: list[str], browser: Any, url: str, deadline: float,
                  report: Report) -> None:
    """One visitor: open the Playground, then run `kinds` one after another until `deadline`."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        await page.goto(f"{url}/Playground?lang=en", timeout=120_000)
        run_button = page.get_by_role("button", name="Run")
        await run_button.wait_for(timeout=120_000)
        for n, kind in enumerate(kinds):
            if time.monotonic() > deadline:
                return
            token = f"session-{number}-run-{n}"
            await page.get_by_label("Code").fill(KINDS[kind][1].replace("TOKEN", token))
            run = Run(number, kind, KINDS[kind][2], started=time.monotonic())
            await run_button.click()
            killer = asyncio.create_task(asyncio.to_thread(kill_a_sleeping_worker, url)) \
                if kind == "kill" else None
            try:
                await page.wait_for_function(DONE, arg=[token, SILENT.get(kind)], polling=50,
                                             timeout=RUN_TIMEOUT_S * 1000)
                run.outcome = _outcome(await page.evaluate(OUTCOME))
            except Exception as error:  # noqa: BLE001 - a page that never answered is a result
                run.outcome = f"no answer ({type(error).__name__})"
            run.latency_s = time.monotonic() - run.started
            if killer is not None:
                await killer
            report.runs.append(run)
    finally:
        await context.close()


def _outcome(alert: str) -> str:
    """'ok', or the error type the page's alert names ('LoopLimit on line 2' -> LoopLimit)."""
    words = alert.replace("🛑", "").split()
    return words[0] if words else "ok"


async def drive(url: str, plans: list[list[str]], max_seconds: float) -> Report:
    """Run one session per plan against the app at `url` and measure."""
    from playwright.async_api import async_playwright

    report = Report(len(plans))
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await _warm_up(browser, url)
            pids = server_processes(url)
            report.memory_before_mb = rss_mb(pids)
            started = time.monotonic()
            await asyncio.gather(*(session(n, kinds, browser, url, started + max_seconds, report)
                                   for n, kinds in enumerate(plans)))
            report.seconds = time.monotonic() - started
            report.memory_after_mb = rss_mb(pids | server_processes(url))
        finally:
            await browser.close()
    return report


async def _warm_up(browser: Any, url: str) -> None:
    """One run before measuring: the server has started its worker pool (PyTorch's import)."""
    report = Report(1)
    await session(-1, ["normal"], browser, url, time.monotonic() + RUN_TIMEOUT_S, report)
    if report.unexpected:
        raise RuntimeError(f"the app does not run programs: {report.unexpected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--runs", type=int, default=1000, help="runs in all, over every session")
    parser.add_argument("--max-seconds", type=float, default=600.0,
                        help="start no run after this long (runs under way finish)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    with tempfile.TemporaryFile() as log, app(log) as url:
        plans = plan(args.sessions, args.runs, args.seed)
        report = asyncio.run(drive(url, plans, args.max_seconds))
    summary = report.summary()
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    sys.exit(1 if report.unexpected else 0)


if __name__ == "__main__":
    main()
