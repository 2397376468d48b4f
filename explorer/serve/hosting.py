"""Hosted mode: tighter settings for a public demo, chosen by `EXPLORER_HOSTED`. Pure.

`EXPLORER_HOSTED` set to 1, true, yes or on (any case, spaces ignored) turns it on; unset,
empty or anything else (0, false, a typo) leaves the local settings. Hosted mode runs one
program at a time in a smaller box, lets a session run less often, and shows visitors no
server details in error messages (the details go to the server's log instead).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from explorer.content.i18n import text
from explorer.safety.limits import Limits
from explorer.serve.ratelimit import RateLimiter

VARIABLE = "EXPLORER_HOSTED"
WORKERS = "EXPLORER_WORKERS"
WITHOUT_WALLS = "EXPLORER_WITHOUT_WALLS"
ON = frozenset({"1", "true", "yes", "on"})
LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """What the app runs with."""

    hosted: bool
    limits: Limits  # every run the pages start
    workers: int  # runs at once, shared by every session
    burst: int  # runs a session may start in a row...
    interval_s: float  # ...then one every this many seconds
    training_limits: Limits  # the training page's runs (thousands of iterations)

    @property
    def require_walls(self) -> bool:
        """Whether programs may run only inside the box and lock (explorer.safety.box/confine):
        always, unless `EXPLORER_WITHOUT_WALLS=1` says the owner accepts the risk."""
        return os.environ.get(WITHOUT_WALLS, "").strip().lower() not in ON

    @property
    def details(self) -> bool:
        """Whether error messages may name causes (paths, OS errors, graphviz): locally."""
        return not self.hosted

    def rate_limiter(self) -> RateLimiter:
        """A fresh per-session rate limiter with these settings."""
        return RateLimiter(burst=self.burst, interval_s=self.interval_s)

    def cause(self, error: BaseException, lang: str) -> str:
        """`error`'s text for a visitor: as it is locally; in hosted mode a plain phrase (the
        text may name the server's paths or programs), the text going to the server's log."""
        if self.details:
            return str(error)
        LOG.error("%s: %s", type(error).__name__, error)
        return text("cause_hidden", lang)


# A learner's machine or a trusted group: two runs at once, generous caps; a learner
# clicking through lessons never meets the rate limit, a script hammering Run gets one run
# every 2 s after its first 30.
LOCAL = Settings(hosted=False, limits=Limits(), workers=2, burst=30, interval_s=2.0,
                 training_limits=Limits(time_s=20))
# A public link on a small shared host (little memory, a share of a core). The heaviest lesson
# programs (500 training iterations, backward recorded) take about 1 s on two idle cores, so
# every lesson still runs; a bomb holds the one worker 4 s (+2 s grace) instead of 5, with half
# the memory; one worker leaves the server its share; a session's stored Traces stay small.
HOSTED = Settings(
    hosted=True,
    limits=Limits(time_s=4.0, memory_mb=512, loop_iterations=500_000, output_chars=20_000,
                  value_elements=500, steps=300, line_steps=600, line_work=5_000_000,
                  graph_nodes=5_000),
    workers=1, burst=10, interval_s=5.0,
    training_limits=Limits(time_s=10.0, memory_mb=512, output_chars=20_000, value_elements=500,
                           steps=300, line_steps=600, line_work=5_000_000, graph_nodes=5_000))


def hosted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether `environ` asks for hosted mode."""
    return environ.get(VARIABLE, "").strip().lower() in ON


def settings(environ: Mapping[str, str] = os.environ) -> Settings:
    """The settings `environ` asks for; `EXPLORER_WORKERS=N` (a positive number) sets how
    many runs go at once, the rest as chosen."""
    chosen = HOSTED if hosted(environ) else LOCAL
    workers = environ.get(WORKERS, "").strip()
    if workers.isdigit() and int(workers) > 0:
        return replace(chosen, workers=int(workers))
    return chosen
