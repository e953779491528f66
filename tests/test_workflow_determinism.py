"""Two clean tiny runs are byte-identical except the named timing files (issue 14).

The session's tiny run (``tiny_run``) is the first; one more, in a fresh directory, is the second (about
3-4 minutes on 2 cores). Every file under results/ is compared by SHA-256: figures, tables, parquet, the
executed notebooks, the summary.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from wfutil import run_tiny

pytestmark = pytest.mark.workflow

#: What records when or how long something ran, and so differs between any two runs. Paths relative to
#: results/<run>/: a directory covers everything under it.
TIMING = (
    "benchmarks/",  # the rules' benchmark: files (wall-clock seconds, memory)
    "logs/",  # timestamped log lines; logs/notebooks/ the executed notebooks as papermill wrote them (run times)
    "tables/placement_bsa_timing.csv",  # milliseconds per placement decision, BSA against the exhaustive search
)


def is_timing(rel: str) -> bool:
    return any(rel.startswith(t) if t.endswith("/") else rel == t for t in TIMING)


def digests(workdir: Path) -> dict[str, str]:
    """results/<run>/<path> → SHA-256, for every file of every run under results/."""
    root = workdir / "results"
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def second_run(tmp_path_factory) -> Path:
    return run_tiny(tmp_path_factory.mktemp("tiny-again"))


def test_two_clean_tiny_runs_give_the_same_bytes_but_timings(tiny_run, second_run):
    first, second = digests(tiny_run), digests(second_run)
    assert sorted(first) == sorted(second), (
        f"files only in the first run: {sorted(set(first) - set(second))}; "
        f"only in the second: {sorted(set(second) - set(first))}"
    )
    runs = {path.split("/", 1)[0] for path in first}
    timing = sorted(p for p in first if is_timing(p.split("/", 1)[1]))
    compared = sorted(p for p in first if p not in timing)
    # the exemptions name files that exist, and leave every kind of result compared
    for t in TIMING:
        assert any(p.split("/", 1)[1].startswith(t) for p in timing), f"no {t} in the run: out of date?"
    for suffix in (".png", ".csv", ".parquet", ".ipynb", ".npy", ".md"):
        assert any(p.endswith(suffix) for p in compared), suffix
    differ = [p for p in compared if first[p] != second[p]]
    assert not differ, (
        f"{len(differ)} of {len(compared)} result files differ between two clean tiny runs "
        f"({tiny_run} and {second_run}); only {TIMING} may:\n" + "\n".join(differ)
    )
    assert runs == {"synthetic-tiny"}


def test_no_result_names_the_run_directory(tiny_run, second_run):
    """Text results (tables, notebooks, the summary) hold no absolute path of the run."""
    for workdir in (tiny_run, second_run):
        named = [
            p.relative_to(workdir).as_posix()
            for p in sorted((workdir / "results").rglob("*"))
            if p.is_file() and p.suffix in (".csv", ".md", ".ipynb", ".json", ".txt")
            and not is_timing(p.relative_to(workdir / "results").as_posix().split("/", 1)[1])
            and str(workdir.resolve()) in p.read_text(encoding="utf-8", errors="replace")
        ]
        assert not named, f"results naming {workdir}: {named}"
