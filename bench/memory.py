"""Benchmark: every rule's declared ``resources.mem_mb`` against its measured peak RSS, over finished runs.

For each work directory given (a finished run: the default run, a paper-scale slice of ``paper_scale.py``,
the tiny run…), ``snakemake -n --forceall`` evaluates each job's ``mem_mb`` with the current rules on the
inputs that run wrote, and the job's own benchmark file gives its measured peak. Printed per rule and run:
input MB, peak RSS MB, declared mem_mb and their ratio, with the issue's bounds: declared ≥ measured, and at
most 2× over. The reference of each ratio is the peak measured in the same run.

Not judged (listed apart): jobs that wrote status outputs (too little data: their peak is not the
analysis's), ``notebook:`` jobs (they run in Snakemake's own process, whose benchmark is Snakemake's) and
the synthetic trace's generator (a real run downloads the shards instead).
A job's peak is the larger of its benchmark's and the kernel's high-water mark that its rule script logs
(Snakemake samples RSS at intervals and misses the peak of a job shorter than a sample). A job that maps
N × R matrices and peaks above its declaration is judged by its largest anonymous RSS, which its script
also logs (sampled every 50 ms): the rest are file pages that the kernel drops under a limit (marked mmap).

    python bench/memory.py /tmp/default-run /tmp/slice-2 [--markdown out.md]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_scale import Job, Rule, parse_jobs, read_benchmark, snakemake  # noqa: E402
from timing import parse_args  # noqa: E402



def input_mb(workdir: Path, inputs: str, suffix: str = "") -> float:
    """Bytes of a job's input files (directories summed over their files; only names ending in ``suffix``), in MB."""
    total = 0
    for name in (s.strip() for s in inputs.split(",") if s.strip() and s.strip().endswith(suffix)):
        p = workdir / name
        if p.is_dir():
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        elif p.exists():
            total += p.stat().st_size
    return total / 2**20


def measure(workdir: Path) -> list[tuple[Job, float, float]]:
    """Each job of the run with its benchmark read and its declaration under the current rules; its input MB, and
    the MB of the memory-mapped matrices (``.npy``) it reads or writes."""
    config = workdir / "config.yaml"
    args = ["-n", "--forceall"]
    if config.exists():
        args += ["--configfile", str(config)]
    jobs = parse_jobs(snakemake(workdir, *args))
    out = []
    for j in jobs:
        read_benchmark(workdir, j)
        if j.benchmark and j.rss > 0:
            # mapped: the .npy matrices it reads, or writes through a memory map
            out.append((j, input_mb(workdir, j.inputs), input_mb(workdir, j.inputs, ".npy") + input_mb(workdir, j.outputs, ".npy")))
    return out


def verdict(declared: int | None, peak: float, mapped: float = 0.0, anon: float = 0.0) -> str:
    """"ok" (declared within 1–2× the peak), "under", "over", or "mmap": a job that maps matrices (``mapped`` MB)
    and peaks above its declaration only through their file pages, which the kernel drops under a memory
    limit; judged by its largest anonymous RSS (``anon``, logged by its rule script): declared ≥ anon and
    ≤ 2× the peak. Without a logged ``anon`` such a job is "under"."""
    if not declared or peak <= 0:
        return "under"
    if declared < peak:
        return "mmap" if mapped > 0 and 0 < anon <= declared else "under"
    return "over" if declared > 2 * peak else "ok"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdirs", type=Path, nargs="+", help="finished runs' working directories (each with its results/ and config.yaml)")
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a judged peak is outside [1, 2]× its declaration")
    args = parse_args(ap)
    rows: dict[str, list[tuple[str, Job, float, float]]] = defaultdict(list)
    for wd in args.workdirs:
        if not (wd / "results").is_dir():  # e.g. results/<run> given: snakemake -n needs the run's working directory
            sys.exit(f"{wd}: not a working directory with results/ (give the directory the run was made in, not results/<run>)")
        for job, mb, mapped in measure(wd.resolve()):
            rows[job.rule].append((wd.resolve().name, job, mb, mapped))
    lines = ["| rule | run | jobs | input MB (max) | peak RSS MB | declared mem_mb | declared / peak |", "|---|---|---|---|---|---|---|"]
    under, over, skipped, judged = [], [], set(), 0
    for rule in sorted(rows):
        by_run: dict[str, list[tuple[Job, float, float]]] = defaultdict(list)
        for run, job, mb, mapped in rows[rule]:
            by_run[run].append((job, mb, mapped))
        for run, jobs in by_run.items():
            # every job against its own declaration; the row shows the highest peak and the range of ratios
            job, mb, mapped = max(jobs, key=lambda t: t[0].rss)
            ratios = [j.mem_mb / j.rss for j, _, _ in jobs if j.mem_mb and j.rss > 0]
            ratio = f"{min(ratios):.2f}" + (f"–{max(ratios):.2f}" if len(ratios) > 1 and max(ratios) - min(ratios) >= 0.005 else "") if ratios else "n/a"
            why = ("insufficient data" if job.insufficient else "notebook (Snakemake's process)" if Rule(rule).notebook
                   else "the synthetic trace's generator: a real run downloads" if rule == "synthesize_trace" else "")
            flag = ""
            if why:
                skipped.add(f"{rule} ({run}: {why})")
            else:
                judged += 1
                verdicts = {verdict(j.mem_mb, j.rss, m, j.anon) for j, _, m in jobs}
                if "under" in verdicts:
                    flag = " ✗ under"
                    under.append(f"{rule} ({run})")
                elif "over" in verdicts:
                    flag = " ✗ over 2×"
                    over.append(f"{rule} ({run})")
                elif "mmap" in verdicts:
                    flag = f" (mmap: anonymous peak {job.anon:.0f} MB; the rest is pages of {mapped:.0f} MB of mapped matrices)"
            lines.append(f"| {rule} | {run} | {len(jobs)} | {max(m for _, m, _ in jobs):.1f} | {job.rss:.0f} | "
                         f"{job.mem_mb} | {ratio}{flag or (' (' + why + ')' if why else '')} |")
    lines.append(f"\nJudged {judged} rule × run peaks. Declared below the peak: {', '.join(under) or 'none'}.")
    lines.append(f"Declared above 2× the peak: {', '.join(over) or 'none'}.")
    lines.append(f"Not judged: {len(skipped)} ({'; '.join(sorted(skipped))}).")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    sys.exit(1 if args.strict and (under or over) else 0)


if __name__ == "__main__":
    main()
