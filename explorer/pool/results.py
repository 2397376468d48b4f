"""Traces kept by what decides them: a seeded run of the same program on the same device,
with the same limits, threads and versions, gives the same Trace again. A class that runs a
lesson's program computes it once.

Only repeatable runs are kept (Trace.repeatable: seeded, nothing reached that is not known to
behave the same every time, no time or memory limit hit). A Trace is kept pickled, which is
what its bound counts (decoded, a Trace takes several times its answer's bytes), the least
recently used going first. Only the server pickles, and only Traces it has checked: no bytes
from a worker are ever unpickled. Each hit unpickles a Trace of its own, so what one caller
changes in its Trace never reaches another.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
from collections import OrderedDict
from dataclasses import asdict
from importlib.metadata import version

from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.wire import uncollected

MAX_BYTES = 64 << 20  # of kept Traces, pickled, with their keys
ENTRY_BYTES = 512  # a kept Trace's key and its place in the table, more than they take
VERSIONS = {name: version(name) for name in ("torch", "numpy")}


class Results:
    """Repeatable runs' Traces, at most `max_bytes` of them as kept, with hit counts."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.hits = self.misses = self.size = 0
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(code: str, device: str, limits: Limits, seed: int, threads: int,
            keep: tuple[int, ...], rounds: tuple[tuple[int, int], ...] = ()) -> str:
        """What decides a run's Trace, as one hash."""
        decided = {"code": code, "device": device, "limits": asdict(limits), "seed": seed,
                   "threads": threads, "keep": keep, "rounds": rounds, "versions": VERSIONS}
        return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> Trace | None:
        """A copy of the Trace kept under `key`, marked reused, if any (a hit or a miss,
        counted)."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                self.misses += 1
                return None
            self._kept.move_to_end(key)
            self.hits += 1
        with uncollected():  # many small dicts and lists, no cycles
            trace: Trace = pickle.loads(kept)  # noqa: S301 - pickled by `put`, from a checked Trace
        trace.reused = True
        return trace

    def put(self, key: str, trace: Trace) -> None:
        """Keep a repeatable `trace` (others are not kept, nor one over the bound alone)."""
        if not trace.repeatable or not self.max_bytes:
            return
        kept = pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)
        size = len(kept) + ENTRY_BYTES
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = kept
            self.size += size
            while self.size > self.max_bytes:
                _, dropped = self._kept.popitem(last=False)
                self.size -= len(dropped) + ENTRY_BYTES

    def __len__(self) -> int:
        return len(self._kept)
