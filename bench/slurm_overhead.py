"""Benchmark: the tiny pipeline through Slurm against the same pipeline run locally, in the same session.

Needs a Slurm cluster (``cluster/one-node-slurm up`` starts one on this machine). Both runs start from clean, in
fresh working directories under ``--workdir``: first ``snakemake --cores N --config scale=tiny`` (the reference),
then ``snakemake --workflow-profile profiles/slurm --config scale=tiny`` with only the partition set. Prints both
walls, their ratio, the jobs that went through sbatch and the extra seconds each cost, the jobs' mean wait in the
queue and run time from sacct, and Snakemake's peak RSS in each run.

    python bench/slurm_overhead.py --workdir /tmp/colocate-slurm-bench
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import yaml
from timing import parse_args

REPO = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path) -> tuple[float, str, float]:
    """Wall seconds, output and the peak RSS (MB) of Snakemake (and what it ran locally) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), *args], cwd=cwd,
                         capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if res.returncode:
        sys.exit(f"snakemake {' '.join(args)} failed in {cwd}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return wall, res.stdout + res.stderr, peak


def fresh(directory: Path) -> Path:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    shutil.copy(REPO / "config.yaml", directory / "config.yaml")
    return directory


def sacct_times(ids: list[str]) -> tuple[float, float]:
    """Mean seconds each job waited in the queue and ran, from sacct."""
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", ",".join(ids), "-o", "Submit,Start,End"],
                         capture_output=True, text=True, check=True).stdout
    waits, runs = [], []
    for line in out.split():
        submit, start, end = (datetime.fromisoformat(x) for x in line.split("|"))
        waits.append((start - submit).total_seconds())
        runs.append((end - start).total_seconds())
    return sum(waits) / len(waits), sum(runs) / len(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--cores", type=int, default=2, help="cores of the local reference run")
    args = parse_args(ap)
    if subprocess.run(["scontrol", "ping"], capture_output=True).returncode:
        sys.exit("no Slurm controller answers: start one with cluster/one-node-slurm up")
    partition = next(p.rstrip("*") for p in subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True,
                                                           text=True).stdout.split() if p.endswith("*"))
    node = subprocess.run(["sinfo", "-h", "-o", "%c CPUs, %m MB"], capture_output=True, text=True).stdout.strip()
    print(f"cluster: partition {partition}, {node}; this machine: {os.cpu_count()} CPUs")

    local, _, local_rss = run(["--cores", str(args.cores), "--config", "scale=tiny"], fresh(args.workdir / "local"))
    print(f"local   --cores {args.cores}          {local:7.1f} s  (reference)  Snakemake peak RSS {local_rss:6.0f} MB")

    work = fresh(args.workdir / "slurm")
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    profile["default-resources"]["slurm_partition"] = partition
    (work / "profile").mkdir()
    (work / "profile/config.yaml").write_text(yaml.safe_dump(profile))
    slurm, out, slurm_rss = run(["--workflow-profile", str(work / "profile"), "--config", "scale=tiny"], work)
    ids = sorted(set(re.findall(r"submitted with SLURM jobid (\d+)", out)), key=int)
    wait, ran = sacct_times(ids)
    print(f"Slurm   profiles/slurm    {slurm:7.1f} s  = {slurm / local:.2f}x local   Snakemake peak RSS {slurm_rss:6.0f} MB")
    print(f"jobs through sbatch       {len(ids):7d}    {(slurm - local) / len(ids):.1f} s more each than locally")
    print(f"per job (sacct)           waited {wait:.1f} s in the queue, ran {ran:.1f} s (both Snakemake starts inside)")


if __name__ == "__main__":
    main()
