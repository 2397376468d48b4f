"""Per-session rate limiting (`explorer.serve.ratelimit`): pure, so time is passed in, never
waited."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from explorer.serve.ratelimit import KEY, RateLimiter


def test_a_burst_then_one_run_per_interval() -> None:
    limiter = RateLimiter(burst=3, interval_s=10.0)
    assert [limiter.take("s", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("s", now=0.0) == pytest.approx(10.0)
    assert limiter.take("s", now=4.0) == pytest.approx(6.0)  # refused turns spend nothing
    assert limiter.take("s", now=10.0) == 0.0
    assert limiter.take("s", now=10.0) == pytest.approx(10.0)


def test_an_idle_session_gets_its_burst_back_but_no_more() -> None:
    limiter = RateLimiter(burst=2, interval_s=1.0)
    assert limiter.take("s", now=0.0) == limiter.take("s", now=0.0) == 0.0
    assert [limiter.take("s", now=1000.0) for _ in range(3)][-1] > 0


def test_sessions_are_limited_separately() -> None:
    limiter = RateLimiter(burst=1, interval_s=60.0)
    assert limiter.take("a", now=0.0) == 0.0
    assert limiter.take("a", now=1.0) > 0
    assert limiter.take("b", now=1.0) == 0.0


def test_memory_stays_bounded() -> None:
    limiter = RateLimiter(burst=1, interval_s=60.0, max_keys=100)
    for n in range(1000):
        limiter.take(f"session-{n}", now=float(n))
    assert len(limiter._buckets) <= 100
    assert limiter.take("session-999", now=999.0) > 0  # a recent bucket is kept


def test_concurrent_clicks_spend_exactly_the_burst() -> None:
    limiter = RateLimiter(burst=5, interval_s=3600.0)
    with ThreadPoolExecutor(max_workers=8) as threads:
        waits = list(threads.map(lambda _: limiter.take("s", now=0.0), range(50)))
    assert waits.count(0.0) == 5


def test_a_session_keeps_its_key() -> None:
    state: dict[str, object] = {}
    limiter = RateLimiter()
    key = limiter.key(state)
    assert state[KEY] == key and limiter.key(state) == key and limiter.key({}) != key


def test_the_message_names_the_wait() -> None:
    assert RateLimiter.message(4.2) == "Too many runs in a short time: please try again in 5 s."
    assert "5 秒" in RateLimiter.message(4.2, "zh")
