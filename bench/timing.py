"""Timing shared by the benchmarks (run as `python bench/NAME.py`, so this module is importable)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def parse_args(ap: argparse.ArgumentParser,
               plan: Callable[[argparse.Namespace], None] | None = None) -> argparse.Namespace:
    """``ap.parse_args()``, with ``--dry-run``: parse the command line (an unknown or renamed option fails as it
    would in a real run; abbreviations are refused, so a renamed option is not silently matched by its old prefix),
    print what was parsed (and ``plan(args)``) and exit 0 without measuring anything. The docs' tests run every
    benchmark command the docs show so (tests/test_bench_commands.py)."""
    ap.allow_abbrev = False
    ap.add_argument("--dry-run", action="store_true",
                    help="parse the options, print them and exit without measuring (what the docs' tests run)")
    args = ap.parse_args()
    if args.dry_run:
        shown = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "dry_run"}
        print(f"{ap.prog} (dry run): {shown}")
        if plan:
            plan(args)
        sys.exit(0)
    return args


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


def reference_and_ours(code: str, *args: object, labels: tuple[str, str] = ("reference", "ours")
                       ) -> tuple[tuple[float, float], tuple[float, float], str]:
    """:func:`child` of ``code`` with ``args`` and then "reference", and again with "ours": both (seconds, MB),
    and the line that compares them (time and peak, and the ratios ours / reference), named by ``labels``."""
    (rt, rm), (ot, om) = (child(code, *args, which) for which in ("reference", "ours"))
    return (rt, rm), (ot, om), (f"{labels[0]} {rt:6.1f} s {rm:6.0f} MB | {labels[1]} {ot:6.1f} s {om:6.0f} MB | "
                                f"time ×{ot / rt:.2f}, peak ×{om / rm:.2f}")


def gzip_seconds(path: Path) -> float:
    """Wall time of ``gzip -dc path > /dev/null``: the reference a reader of a gzip file is measured against."""
    t = time.perf_counter()
    subprocess.run(["gzip", "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def build_once(path: Path, build: Callable[[Path], None]) -> None:
    """``build(path)`` unless ``path`` exists (a ``--keep`` file of an earlier run), saying its size and time."""
    if path.exists():
        return
    t = time.perf_counter()
    build(path)
    print(f"built {path} ({path.stat().st_size / 2**20:.1f} MB gz) in {time.perf_counter() - t:.1f} s")
