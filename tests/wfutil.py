"""Shared test helpers: the tiny preset, and Snakemake runs at the tiny scale in a temporary directory."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def doc_files() -> list[Path]:
    """The Markdown files whose commands the tests run: README.md and every page of the documentation (docs/)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def doc_text() -> str:
    """README.md and the documentation's pages, one after another (each command shown is in one of them)."""
    return "\n\n".join(path.read_text() for path in doc_files())

# ============================================================================ the docs' commands, in a user's shell
# The README's Quick start puts the venv on PATH for its own two commands, then tells the user to activate it; every
# later command is written bare (`snakemake ...`, `python bench/...`). The tests run each one as a user would: under
# bash, with a PATH that does not hold the venv, preceded by the activation the text has stated by then.

#: Where the colocate package these tests import lives (the checkout's workflow/ once it is installed).
_PACKAGE = Path(__import__("colocate").__file__).resolve().parents[1]

#: The activation the README and Getting started state, after the Quick start's two commands.
ACTIVATE = "source .venv/bin/activate"
_STATED = re.compile(r"`source \.venv/bin/activate`|^source \.venv/bin/activate$", re.M)


def snippets_at(text: str) -> list[tuple[int, str]]:
    """(offset, code) of every fenced block's lines (chains split at ``&&``, ``;``, ``||``) and every inline code
    span, in the order they appear."""
    out = []
    blocks = list(re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M))
    for block in blocks:
        at = block.start(1)
        for line in block.group(1).splitlines(keepends=True):
            out += [(at, s.strip()) for s in re.split(r"&&|;|\|\|", line) if s.strip()]
            at += len(line)
    inside = lambda i: any(b.start() <= i < b.end() for b in blocks)  # noqa: E731
    out += [(m.start(), m.group(1).strip()) for m in re.finditer(r"`([^`\n]+)`", text)
            if not inside(m.start()) and m.group(1).strip()]
    return sorted(out)


def docs_declare_activation() -> bool:
    """Whether the docs' home page declares, for all their pages, the activation Getting started states."""
    index, started = (REPO / "docs/index.md").read_text(), (REPO / "docs/getting-started.md").read_text()
    return bool(_STATED.search(index)) and "getting-started.md" in index and bool(_STATED.search(started))


def activation_for(text: str, offset: int, declared: bool) -> str | None:
    """The activation a command at ``offset`` of a page (``text``) runs after: one the page states before it, or,
    on a documentation page (``declared``: the home page declares Getting started's for them all), that one."""
    stated = _STATED.search(text)
    if stated and stated.start() < offset:
        return ACTIVATE
    return ACTIVATE if declared else None


def page_activation(page: Path, offset: int) -> str | None:
    """The activation a command at ``offset`` of ``page`` (README.md or a docs page) runs after."""
    declared = page.parent != REPO and page != REPO / "docs/getting-started.md" and docs_declare_activation()
    return activation_for(page.read_text(), offset, declared)


def bare_path() -> str:
    """PATH without this interpreter's bin directory (the venv's): a shell of a user who has not activated it."""
    venv = {str(Path(sys.executable).parent), str(Path(sys.prefix) / "bin")}
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in venv)


def venv_checkout(workdir: Path) -> None:
    """``workdir/.venv`` as the Quick start makes it, standing for this interpreter's environment (a venv or a conda
    env alike): ``bin/<tool>`` runs that environment's tool, ``bin/activate`` puts ``bin/`` first on PATH. Each tool
    finds the colocate these tests import, as a tool of a venv with the checkout installed would, even when the
    command sets its own PYTHONPATH (the docs' plug-in example)."""
    real, package = Path(sys.executable).parent, _PACKAGE
    bin_ = workdir / ".venv" / "bin"
    bin_.mkdir(parents=True, exist_ok=True)
    for tool in real.iterdir():
        if not tool.name.startswith("activate") and tool.is_file() and os.access(tool, os.X_OK):
            (bin_ / tool.name).write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{package}"\n'
                                          f"export PYTHONPATH\nexec '{tool}' \"$@\"\n")
            (bin_ / tool.name).chmod(0o755)
    (bin_ / "activate").write_text(f"VIRTUAL_ENV='{bin_.parent}'\nexport VIRTUAL_ENV\nPATH='{bin_}':\"$PATH\"\n"
                                   "export PATH\nhash -r 2>/dev/null\n")


def shell(command: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``command`` under ``bash -c`` from ``cwd``, in a shell without the venv: PATH stripped of its bin directory,
    no VIRTUAL_ENV. Only what the command itself does (an activation, a ``PATH=...`` prefix) puts it back."""
    base = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          env={**base, **(env or {}), "PATH": bare_path()})


#: The tiny scale's synthetic-model sizes, read from the preset the pipeline uses.
TINY = {
    k: v
    for k, v in yaml.safe_load((REPO / "workflow/schemas/scales.yaml").read_text())["tiny"]["synthetic"].items()
    if k != "shards"
}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2", *args]
    # without the interpreter's bin directory on PATH, as `.venv/bin/snakemake` run without activating the venv: the
    # workflow itself must find jupyter-nbconvert for the notebook rules (rules/common.smk)
    here = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != here)
    env = {**os.environ, **(env or {}), "PATH": path}
    if "PYTHONPATH" in env:  # a command's own PYTHONPATH (the plug-in example) still finds the colocate tested here,
        env["PYTHONPATH"] += os.pathsep + str(_PACKAGE)  # as in a venv with this checkout installed (venv_checkout)
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, env=env)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-6000:]}")
    return res


def write_config(workdir: Path, **sections) -> None:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scale"] = "tiny"
    for key, value in sections.items():
        if isinstance(value, dict):
            config.setdefault(key, {}).update(value)
        else:
            config[key] = value
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def run_tiny(workdir: Path) -> Path:
    """The whole default DAG at the tiny scale in ``workdir``, from config.yaml: the directory."""
    write_config(workdir)
    snakemake(workdir)
    return workdir


def planned_rules(workdir: Path, *args: str, env: dict | None = None) -> set[str]:
    """Rules a dry run (with ``args``) would execute (from its job-stats table)."""
    out = snakemake(workdir, "-n", "--quiet", "rules", *args, env=env).stdout
    if "Nothing to be done" in out:
        return set()
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", out, re.M)} - {"total"}


def assert_config_rejected(workdir: Path, needle: str, **sections) -> None:
    """A config with ``sections`` fails the dry run, the message names ``needle`` (the key), and nothing is written."""
    write_config(workdir, **sections)
    res = snakemake(workdir, "-n", check=False)
    assert res.returncode != 0
    assert needle in res.stdout + res.stderr
    assert not (workdir / "results").exists() and not (workdir / "resources").exists()


def synthetic_trace(workdir: Path) -> Path:
    """The synthetic trace a run in ``workdir`` cached (resources/trace/synthetic-<digest of its model>)."""
    (root,) = sorted((workdir / "resources/trace").glob("synthetic-*"))
    return root


#: The real 2011 sample shipped with the project (trace.source: sample), in the bucket's layout.
SAMPLE = REPO / "workflow" / "data" / "google-2011-sample"


# ============================================================================ what a figure shows
# Figures are checked by what their Axes hold (a PNG of empty axes is still 10 KB): these read back the
# data a seaborn or matplotlib call drew, keyed by the category axis's tick labels.


def png_shape(path: Path) -> tuple[int, ...]:
    """The decoded PNG's (height, width, channels): the file is an image, not only bytes."""
    import matplotlib.image

    return matplotlib.image.imread(path).shape


def tick_labels(ax, axis: str = "x") -> list[str]:
    return [t.get_text() for t in getattr(ax, f"get_{axis}ticklabels")()]


def _category(ax, x: float) -> str:
    """The x tick label of the category a box or bar centred at ``x`` belongs to (dodged: within ±0.4)."""
    ticks = {round(float(t)): lab.get_text() for t, lab in zip(ax.get_xticks(), ax.get_xticklabels())}
    return ticks[round(x)]


def box_medians(ax) -> dict[tuple[int, str], float]:
    """The median line of every seaborn box, by (hue level's index, x tick label); one hue level: index 0."""
    out = {}
    for hue, boxes in enumerate(c for c in ax.containers if hasattr(c, "medians")):
        for line in boxes.medians:
            x, y = line.get_xydata().T
            assert y[0] == y[-1]  # a vertical box: its median is a horizontal line
            out[(hue, _category(ax, float(x.mean())))] = float(y[0])
    return out


def bar_heights(ax, by_position: bool = False) -> dict[tuple[int, str | int], float]:
    """The height of every bar of a seaborn barplot, by (hue level's index, x tick label or category position)."""
    from matplotlib.container import BarContainer

    out = {}
    for hue, bars in enumerate(c for c in ax.containers if isinstance(c, BarContainer)):
        for bar in bars:
            x = bar.get_x() + bar.get_width() / 2
            out[(hue, round(x) if by_position else _category(ax, x))] = float(bar.get_height())
    return out


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


AZURE_SAMPLE = REPO / "workflow/data/azure-vm-sample/v2"


def azure_dataset_layout(root: Path, n_files: int = 195) -> Path:
    """The shipped 20 VMs in the dataset's layout (trace_data/): their readings split in time order over
    vm_cpu_readings-file-1-of-195 and -2-of-195 (first and second half of the month), byte copies of the lines."""
    lines = gzip.decompress((AZURE_SAMPLE / "vm_cpu_readings-20vms.csv.gz").read_bytes()).splitlines(keepends=True)
    half = [ln for ln in lines if int(ln.split(b",")[0]) < 1_296_000]
    rest = lines[len(half):]
    assert rest and all(int(ln.split(b",")[0]) >= 1_296_000 for ln in rest)  # the sample is in time order
    (root / "vm_cpu_readings").mkdir(parents=True)
    for i, part in enumerate((half, rest), start=1):
        (root / f"vm_cpu_readings/vm_cpu_readings-file-{i}-of-{n_files}.csv.gz").write_bytes(gzip.compress(b"".join(part)))
    (root / "vmtable").mkdir()
    shutil.copy(AZURE_SAMPLE / "vmtable-20vms.csv.gz", root / "vmtable/vmtable.csv.gz")
    return root


def synthetic_azure_layout(root: Path, n_vms: int = 150, days: int = 2, seed: int = 5) -> Path:
    """A dataset-layout Azure trace of ``n_vms`` made-up VMs (the shipped sample has only 20): each with a daily
    sinusoid of amplitude U(0, 0.4) of its mean plus noise. Two thirds run the whole ``days`` (created at 0); the
    rest arrive during the first half and live 2–24 h. Two time-ordered readings files and a V2-style vmtable. For
    the analyses that need more VMs, or arrivals, than the sample holds."""
    import numpy as np

    rng = np.random.default_rng(seed)
    slots = days * 288
    rows, table = [], []
    cores = rng.choice([1, 2, 4, 8], n_vms)
    for v in range(n_vms):
        start, end = (0, slots) if v < 2 * n_vms // 3 else (int(s := rng.integers(1, slots // 2)), int(min(slots, s + rng.integers(24, 288))))
        t = np.arange(start, end) * 300
        base, amp, phase = rng.uniform(5, 40), rng.uniform(0, 0.4), rng.uniform(0, 2 * np.pi)
        avg = np.clip(base * (1 + amp * np.cos(2 * np.pi * t / 86_400 - phase)) + rng.normal(0, 2, t.size), 0.5, 95)
        top = np.minimum(100, avg * rng.uniform(1.1, 2.0, t.size))
        low = avg * rng.uniform(0.3, 0.9, t.size)
        rows += [(int(t[k]), f"vm{v:04d}", float(low[k]), float(top[k]), float(avg[k])) for k in range(t.size)]
        table.append(f"vm{v:04d},sub{v % 7},dep{v // 3},{start * 300},{(end - 1) * 300},99.0,20.0,60.0,Interactive,"
                     f"{cores[v]},{4 * cores[v]}\r\n")
    rows.sort(key=lambda r: (r[0], r[1]))
    (root / "vm_cpu_readings").mkdir(parents=True)
    half = len(rows) // 2
    for i, part in enumerate((rows[:half], rows[half:]), start=1):
        text = "".join(f"{ts},{vm},{lo!r},{hi!r},{av!r}\r\n" for ts, vm, lo, hi, av in part)
        (root / f"vm_cpu_readings/vm_cpu_readings-file-{i}-of-195.csv.gz").write_bytes(gzip.compress(text.encode()))
    (root / "vmtable").mkdir()
    (root / "vmtable/vmtable.csv.gz").write_bytes(gzip.compress("".join(table).encode()))
    return root


PAPERS = REPO / "workflow" / "papers"


def judged(rows):
    """An analysis's measurements (colocate.measure) judged against the project's claims tables, as the summary
    rule judges them: the summary rows, all sections stacked."""
    import polars as pl

    from colocate import measure
    from colocate.report import claims

    papers = claims.read_claims(sorted(PAPERS.glob("*.tsv")))
    causes = claims.read_causes(sorted((PAPERS / "causes").glob("*.md")))
    return pl.concat([frame for _, frame in claims.judge(measure.measurements(rows), papers, causes)])


# ============================================================================ the browser tests (headless Chromium)
#: Headless Chromium where it is installed (`apt-get install chromium`); the browser tests skip without it.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "headless Chromium is not installed (apt-get install chromium)"

#: First in <head>: record console errors, uncaught errors, failed resource loads and rejected promises.
RECORD_ERRORS = """<script>window.__errors=[];(function(){var e=console.error;console.error=function(){
window.__errors.push(Array.from(arguments).join(' '));e.apply(console,arguments);};
window.addEventListener('error',function(ev){window.__errors.push('error: '+(ev.message||(ev.target&&(ev.target.src||ev.target.href))||'?'));},true);
window.addEventListener('unhandledrejection',function(ev){window.__errors.push('unhandled rejection: '+ev.reason);});})();</script>"""
