"""Timing shared by the benchmarks (run as `python bench/NAME.py`, so this module is importable)."""

from __future__ import annotations

import subprocess
import sys
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


def child(code: str, *args: object) -> tuple[float, float]:
    """Run ``code`` in a fresh interpreter with ``args`` (its sys.argv[1:]); it prints its seconds and peak RSS (MB).

    Each measured pass runs in its own process, so that each peak RSS is its own.
    """
    res = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True)
    seconds, rss = res.stdout.split()[-2:]
    return float(seconds), float(rss)
