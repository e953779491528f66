"""Benchmark: the default pipeline from clean, and the no-op rerun decision.

Reference measured in the same run: Snakemake's bare start-up (``python -m snakemake --version``).

* ``--from-clean`` runs ``snakemake --cores 2`` in a fresh working directory (target ≤ 10 min at the
  default scale) and reports its wall time and the slowest rules from the benchmark files;
* then ``snakemake -n`` on the finished run, which must decide "Nothing to be done" (target ≤ 10 s).

    python bench/pipeline.py --workdir /tmp/colocate-default [--from-clean] [--scale default]
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import time
from pathlib import Path

from timing import parse_args

REPO = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"snakemake {' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return time.perf_counter() - t, res.stdout + res.stderr


def slowest_rules(workdir: Path, top: int = 6) -> list[tuple[str, float]]:
    totals: dict[str, float] = {}
    for tsv in (workdir / "benchmarks").rglob("*.tsv"):
        rel = tsv.relative_to(workdir / "benchmarks")
        rule = rel.parts[0].removesuffix(".tsv")
        with open(tsv) as fh:
            row = next(csv.DictReader(fh, delimiter="\t"))
        totals[rule] = totals.get(rule, 0.0) + float(row["s"])
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--from-clean", action="store_true", help="delete the workdir and run the whole pipeline first")
    ap.add_argument("--scale", default="default")
    ap.add_argument("--cores", type=int, default=2)
    args = parse_args(ap)
    common = ["-s", str(REPO / "Snakefile"), "-d", str(args.workdir), "--configfile", str(REPO / "config.yaml"),
              "--config", f"scale={args.scale}"]
    startup, _ = run(["--version"], REPO)
    print(f"snakemake start-up        {startup:6.2f} s  (reference)")
    if args.from_clean:
        shutil.rmtree(args.workdir, ignore_errors=True)
        args.workdir.mkdir(parents=True)
        wall, _ = run([*common, "--cores", str(args.cores)], args.workdir)
        print(f"pipeline from clean       {wall:6.1f} s  = {wall / 60:.1f} min (target ≤ 10 min)")
        for rule, seconds in slowest_rules(args.workdir):
            print(f"    {rule:28s} {seconds:7.1f} s (summed over its jobs)")
    noop, out = run([*common, "-n"], args.workdir)
    decided = "Nothing to be done" in out
    print(f"no-op rerun decision      {noop:6.2f} s  = {noop / startup:.1f}x start-up (target ≤ 10 s); nothing to do: {decided}")


if __name__ == "__main__":
    main()
