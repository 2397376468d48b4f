"""A long series cut for a chart (explorer.views.decimate) keeps its first and last points and
every bucket's minimum and maximum, so no spike is lost, and never holds more points than
asked, whatever its shape."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.views.decimate import POINTS, extremes

RNG = np.random.default_rng(0)
N = 120_000


def _spiky() -> list[float]:
    """A falling loss with spikes up and down at random calls, one of each at the ends."""
    ys = np.exp(-np.linspace(0, 10, N)) + 1e-3
    spikes = RNG.choice(N, 50, replace=False)
    ys[spikes[:25]] *= 1e4
    ys[spikes[25:]] *= 1e-4
    ys[1], ys[-2] = 1e9, 1e-12
    return ys.tolist()


SERIES = {
    "spiky": _spiky(),
    "flat with one spike": [1.0] * (N // 2) + [50.0] + [1.0] * (N // 2),
    "flat with one dip": [1.0] * 777 + [1e-30] + [1.0] * N,
    "sawtooth": [float(i % 7) for i in range(N)],
    "alternating": [(-1.0) ** i for i in range(N)],
    "noise": RNG.normal(size=N).tolist(),
    "inf at the end": [1.0] * N + [float("inf")],
}


@pytest.mark.parametrize("name", SERIES)
def test_a_reduced_series_keeps_its_ends_and_every_extreme(name: str) -> None:
    ys = SERIES[name]
    kept = extremes(ys)
    assert len(kept) <= POINTS and kept == sorted(set(kept))
    assert kept[0] == 0 and kept[-1] == len(ys) - 1
    values = [ys[i] for i in kept]
    assert min(values) == min(ys) and max(values) == max(ys)
    # Every stretch as long as a bucket shows its own spike.
    width = -(-len(ys) // ((POINTS - 2) // 2))
    for start in range(0, len(ys), width):
        stretch = ys[start:start + width]
        shown = [ys[i] for i in kept if start <= i < start + width]
        assert min(shown) == min(stretch) and max(shown) == max(stretch)


@pytest.mark.parametrize("points", [4, 5, 100, POINTS])
def test_a_million_points_come_to_at_most_the_bound(points: int) -> None:
    ys = RNG.normal(size=1_000_000).tolist()
    kept = extremes(ys, points)
    assert 2 < len(kept) <= points and kept[0] == 0 and kept[-1] == len(ys) - 1


@pytest.mark.parametrize("count", [0, 1, 2, POINTS])
def test_a_short_series_is_drawn_whole(count: int) -> None:
    assert extremes([1.0] * count) == list(range(count))
