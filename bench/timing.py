"""Timing shared by the benchmarks (run as `python bench/NAME.py`, so this module is importable)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int, warmup: bool = True) -> float:
    """Shortest wall time of ``fn()`` over ``repeat`` runs, after one warm-up run (robust to other load)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
