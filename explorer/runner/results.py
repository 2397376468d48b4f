"""Traces kept by what decides them: a seeded run of the same program on the same device,
with the same limits, threads and versions, gives the same Trace again. A class that runs a
lesson's program computes it once.

Only repeatable runs are kept (Trace.repeatable: seeded, no clock or entropy reached, no time
or memory limit hit); the memory they take is bounded, the least recently used going first.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import asdict
from importlib.metadata import version

from explorer.runner.trace import Trace
from explorer.safety.limits import Limits

MAX_BYTES = 64 << 20  # of the runs' answers, as they came from the workers
VERSIONS = {name: version(name) for name in ("torch", "numpy")}


class Results:
    """Repeatable runs' Traces, at most `max_bytes` of answers, with hit counts."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.hits = self.misses = self.size = 0
        self._kept: OrderedDict[str, tuple[Trace, int]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(code: str, device: str, limits: Limits, seed: int, threads: int,
            keep: tuple[int, ...]) -> str:
        """What decides a run's Trace, as one hash."""
        decided = {"code": code, "device": device, "limits": asdict(limits), "seed": seed,
                   "threads": threads, "keep": keep, "versions": VERSIONS}
        return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> Trace | None:
        """The Trace kept under `key`, if any (a hit or a miss, counted)."""
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                self.misses += 1
                return None
            self._kept.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: str, trace: Trace, size: int) -> None:
        """Keep a repeatable `trace` whose answer was `size` bytes (others are not kept)."""
        if not trace.repeatable or size > self.max_bytes:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = (trace, size)
            self.size += size
            while self.size > self.max_bytes:
                _, (_, dropped) = self._kept.popitem(last=False)
                self.size -= dropped

    def __len__(self) -> int:
        return len(self._kept)
