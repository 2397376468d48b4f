"""Per-session rate limiting of runs: a token bucket for every visitor's session. Pure.

No Streamlit here: the editor passes its `st.session_state` to `RateLimiter.key` and asks
`take` before each run. The worker pool already caps how many runs go at once; this keeps one
session (a script clicking Run) from taking every turn. Opening new sessions gets new buckets,
so it bounds a session, not a person (SECURITY.md).
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from explorer.content.i18n import text

KEY = "ratelimit.key"  # where a session keeps its bucket's name


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """At most `burst` runs in a row for each key, then one every `interval_s` seconds."""

    def __init__(self, burst: int = 8, interval_s: float = 5.0, max_keys: int = 10_000) -> None:
        self.burst = burst
        self.interval_s = interval_s
        self.max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> float:
        """Spend one run of `key` at `now` (monotonic seconds): 0.0 if it may run now, else
        how many seconds until it may."""
        now = time.monotonic() if now is None else now
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= self.max_keys:
                    self._forget(now)
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            bucket.tokens = self._tokens(bucket, now)
            bucket.updated = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return 0.0
            return (1 - bucket.tokens) * self.interval_s

    def key(self, session: MutableMapping[str, Any]) -> str:
        """The bucket of the session whose state is `session` (made on its first run)."""
        return session.setdefault(KEY, secrets.token_hex(8))

    @staticmethod
    def message(wait_s: float, language: str = "en") -> str:
        """What the session reads when it must wait."""
        return text("rate_limited", language, seconds=math.ceil(wait_s))

    def _tokens(self, bucket: _Bucket, now: float) -> float:
        return min(self.burst, bucket.tokens + (now - bucket.updated) / self.interval_s)

    def _forget(self, now: float) -> None:
        """Make room: drop the buckets that have refilled (forgetting them changes nothing),
        and if none has, the one idle longest."""
        full = [k for k, b in self._buckets.items() if self._tokens(b, now) >= self.burst]
        for key in full or [min(self._buckets, key=lambda k: self._buckets[k].updated)]:
            del self._buckets[key]
