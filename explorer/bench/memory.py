"""Section 4: RSS of the zygote and of this process before and after many runs."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from pathlib import Path

from explorer.content.examples import by_key
from explorer.pool.worker import WorkerPool


@dataclass
class Memory:
    """RSS (MiB) of the zygote and of this process after warm-up and after `runs` runs."""

    runs: int
    zygote: tuple[float, float]
    parent: tuple[float, float]


def measure_memory(pool: WorkerPool, runs: int) -> Memory:
    code = by_key("autograd-basics").code
    zygote = _zygote_pid()
    before = _rss(zygote), _parent_rss()
    for _ in range(runs):
        pool.run(code)
    after = _rss(zygote), _parent_rss()
    return Memory(runs, (before[0], after[0]), (before[1], after[1]))


def _zygote_pid() -> int:
    """The zygote: this process's child (or, in the box, grandchild) running
    explorer.record.zygote."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if b"explorer.record.zygote" in cmdline and not cmdline.startswith(b"bwrap") and (
                parent == os.getpid() or _parent(parent) == os.getpid()):  # in the box or not
            return int(entry.name)
    raise RuntimeError("no zygote process found")


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def _rss(pid: int | str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def _parent_rss() -> float:
    gc.collect()
    return _rss("self")
