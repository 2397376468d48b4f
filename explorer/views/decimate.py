"""A long series cut to a bounded number of points that still shows every spike. Pure.

The series is split into equal buckets and each keeps its smallest and its largest value,
with the first and the last point of the whole series: whatever rises above or falls below
its neighbours stays on the chart, and the chart costs the same for a million points as for
a few thousand.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

POINTS = 2_000  # a line's points on a chart: about one per pixel of a wide screen


def extremes(ys: Sequence[float], points: int = POINTS) -> list[int]:
    """The indices of `ys` to draw, in order: all of them if there are at most `points`, else
    at most `points` of them (`points` >= 4): the first, the last, and the smallest and the
    largest of each of (`points` - 2) // 2 equal buckets."""
    count = len(ys)
    if count <= points:
        return list(range(count))
    buckets = (points - 2) // 2
    width = -(-count // buckets)  # ceiling: the last bucket may be short
    values = np.asarray(ys, dtype=float)
    low = np.full(buckets * width, np.inf)
    high = np.full(buckets * width, -np.inf)
    low[:count] = high[:count] = values
    starts = np.arange(buckets) * width
    kept = np.concatenate(([0, count - 1],
                           starts + low.reshape(buckets, width).argmin(axis=1),
                           starts + high.reshape(buckets, width).argmax(axis=1)))
    return np.unique(kept[kept < count]).tolist()
