"""Benchmark: the run times the README and the docs state, measured by running README.md's own run commands.

Every ``snakemake`` run command of README.md (a fenced or inline command with ``--cores``, not a dry run, a report or
an unlock) is read from README.md itself, so the commands timed cannot drift from the ones shown. Each runs
verbatim under ``bash`` in its own fresh clone of this checkout's HEAD, from clean (no cached trace), after the
activation the README states (``source .venv/bin/activate``; a command carrying its own ``PATH=`` runs as written).
The clone's ``.venv`` links to the environment running this benchmark, and PYTHONPATH holds the clone's
``workflow/``, as ``pip install -e .`` in the clone would give. ``--tests`` also times the README's test command
(``.venv/bin/python -m pytest``, the whole suite: about 20 minutes on 2 cores).

References measured in the same run, in the same shell: ``python -c pass`` and Snakemake's bare start-up
(``snakemake --version``), each the best of three. Printed per command: its wall time, the ratio to Snakemake's
start-up, its CPU time (user + system, over the command's process tree: what other work on the machine changes
least) and its peak RSS (the largest single process of the tree), both from ``wait4``, and the load average when it
ended. First come the machine (CPU model, cores, memory) and its load average, as other work may share it.

    python bench/stated_times.py [--runs synthetic-tiny sample-default synthetic-default] [--tests] [--workdir DIR]
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from timing import parse_args

REPO = Path(__file__).resolve().parents[1]

#: Run ``bash -c SCRIPT`` from ``CWD``, then print its wall seconds, exit code, peak RSS (MB) and CPU seconds (user +
#: system) of its process tree.
_WRAP = """
import os, subprocess, sys, time
script, cwd, log = sys.argv[1:4]
t = time.perf_counter()
with open(log, "w") as out:
    proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(proc.pid, 0)
print(time.perf_counter() - t, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024,
      usage.ru_utime + usage.ru_stime)
"""


def readme_commands(text: str) -> list[str]:
    """The run commands of a README's text: each fenced line's or inline code span's ``&&``-separated part that
    runs ``snakemake`` with ``--cores`` (not ``-n``, ``--report``, ``--unlock``), once each, in order."""
    fenced = [m.group(1) for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)]
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M))
    out = []
    for snippet in [line for block in fenced for line in block.splitlines()] + inline:
        for part in (p.strip() for p in re.split(r"&&|;|\|\|", snippet)):
            try:
                words = shlex.split(part)
            except ValueError:
                continue
            if not any(w == "snakemake" or w.endswith("/snakemake") for w in words) or "--cores" not in words:
                continue
            if {"-n", "--dry-run", "--report", "--unlock"} & set(words) or part in out:
                continue
            out.append(part)
    return out


def test_command(text: str) -> str:
    """The README's test command: the part of its fenced line that runs pytest."""
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        for part in (p.strip() for line in block.splitlines() for p in line.split("&&")):
            if re.search(r"\bpython -m pytest\b", part):
                return part
    sys.exit("README.md shows no pytest command")


def run_name(command: str) -> str:
    """The run a command makes, ``<source>-<scale>`` as README.md names it, from its ``--config`` (config.yaml's
    defaults: synthetic, default; a ``run=NAME`` names it)."""
    words = shlex.split(command)
    config = {}
    if "--config" in words:
        for entry in words[words.index("--config") + 1:]:
            if entry.startswith("-"):
                break
            key, _, value = entry.partition("=")
            config[key] = yaml.safe_load(value)
    if config.get("run"):
        return str(config["run"])
    source = (config.get("trace") or {}).get("source", "synthetic")
    return f"{source}-{config.get('scale', 'default')}"


def machine() -> str:
    """CPU model, cores (and those this process may use), memory, load average: the line quoted with a time."""
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next(iter(re.findall(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)), "unknown CPU")
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    kib = re.search(r"^MemTotal:\s+(\d+) kB", meminfo, re.M)
    memory = f"{int(kib.group(1)) / 2**20:.1f} GiB" if kib else "unknown memory"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {os.cpu_count()} cores ({usable} usable), {memory}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def clean_path() -> str:
    """PATH without this interpreter's bin directory: only what a command's activation puts back."""
    venv = {str(Path(sys.executable).parent), str(Path(sys.prefix) / "bin")}
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in venv)


def fresh_clone(dest: Path, commit: str) -> Path:
    """A clone of this checkout at ``commit`` in ``dest``, with ``.venv`` linking to the running environment."""
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", commit], check=True)
    (dest / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return dest


def timed(script: str, cwd: Path, log: Path) -> tuple[float, int, float, float]:
    """``bash -c script`` from ``cwd`` (output to ``log``): wall seconds, exit code, peak RSS in MB, CPU seconds."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=clean_path(), PYTHONPATH=str(cwd / "workflow"))
    res = subprocess.run([sys.executable, "-c", _WRAP, script, str(cwd), str(log)], env=env, capture_output=True,
                         text=True, check=True)
    wall, code, rss, cpu = res.stdout.split()
    return float(wall), int(code), float(rss), float(cpu)


def activated(command: str) -> str:
    """The command after the README's activation, unless it puts the venv on PATH itself."""
    return command if re.search(r"\.venv/bin", command) else f"source .venv/bin/activate\n{command}"


def minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{seconds:.1f} s"


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", metavar="RUN",
                    help="only these of README.md's runs, by the run each makes (e.g. synthetic-tiny sample-default)")
    ap.add_argument("--tests", action="store_true", help="also the README's test command (the whole suite)")
    ap.add_argument("--workdir", type=Path, help="make the clones here and keep them (default: a temporary directory)")
    readme = (REPO / "README.md").read_text()
    commands = {run_name(c): c for c in readme_commands(readme)}

    def plan(args: argparse.Namespace) -> None:
        for name, command in commands.items():
            print(f"{name:20s} {command}")
        if args.tests:
            print(f"{'tests':20s} {test_command(readme)}")

    args = parse_args(ap, plan)
    if not commands:
        sys.exit("README.md shows no snakemake run command (--cores, not -n or --report)")
    unknown = sorted(set(args.runs or ()) - set(commands))
    if unknown:
        sys.exit(f"no README.md run makes {', '.join(unknown)}; it shows {', '.join(commands)}")
    chosen = {n: commands[n] for n in args.runs or commands}  # in the order asked
    if args.tests:
        chosen["tests"] = test_command(readme)

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    root = args.workdir.resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="stated-times-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"machine   {machine()}")
    print(f"load      {load()} (1, 5, 15 min) at the start; commit {commit}; {time.strftime('%Y-%m-%d %H:%M')}")
    ref = fresh_clone(root / "reference", commit) if not (root / "reference").exists() else root / "reference"
    refs = {}
    for label, script in (("python -c pass", "source .venv/bin/activate\npython -c pass"),
                          ("snakemake --version", "source .venv/bin/activate\nsnakemake --version")):
        refs[label] = min(timed(script, ref, root / "reference.log")[0] for _ in range(3))
        print(f"reference {label:22s} {refs[label]:8.2f} s (best of 3)")
    startup = refs["snakemake --version"]
    try:
        for name, command in chosen.items():
            clone = root / name
            shutil.rmtree(clone, ignore_errors=True)
            fresh_clone(clone, commit)
            wall, code, rss, cpu = timed(activated(command), clone, root / f"{name}.log")
            if code:
                tail = (root / f"{name}.log").read_text(errors="replace")[-3000:]
                sys.exit(f"{name}: {command} failed (exit {code}); its log, {root / f'{name}.log'}, ends:\n{tail}")
            print(f"{name:19s} {wall:8.1f} s = {minutes(wall):>12s}  ×{wall / startup:6.0f} snakemake start-up  "
                  f"CPU {cpu:7.0f} s  peak RSS {rss:6.0f} MB  load {load()}   {command}")
    finally:
        print(f"load      {load()} (1, 5, 15 min) at the end")
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
