"""Every benchmark command the docs show runs as shown, in a user's shell.

Each ``python bench/…`` line of README.md and the documentation's pages (wfutil.doc_files) runs verbatim under
``bash``, in a checkout whose ``.venv`` is this interpreter's environment, with PATH stripped of the venv but for the
activation its page states or inherits (wfutil.page_activation), with ``--dry-run`` added: the benchmark parses the
line with its own parser (bench/timing.parse_args: an unknown, renamed or abbreviated option fails, as a missing
script or a broken import does), prints what it parsed and exits without measuring. A placeholder the text writes
in capitals (RUN, WORKDIR, K) is given a value first; an optional part in brackets is run with its contents.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from wfutil import REPO, doc_files, page_activation, shell, snippets_at, venv_checkout

pytestmark = pytest.mark.slow  # each test starts a benchmark

#: A benchmark command as the docs write it: ``python bench/NAME.py …`` (a chain's part, or an inline code span).
BENCH = re.compile(r"^python3? bench/(\w+)\.py\b")

#: Values of the placeholders the docs write: a directory stands for a path, K for a number of shards.
PLACEHOLDERS = {"K": "2", "RUN": "DIR", "RUN_DIR": "DIR", "WORKDIR": "DIR", "LONG_TASKS": "DIR", "REDUCE_DIR": "DIR",
                "TRACE_DIR": "DIR"}

#: bench/ modules that are helpers of the benchmarks, not benchmarks
HELPERS = {"timing", "finished_run"}


def bench_commands() -> list[tuple[str, int, str]]:
    """(page's path relative to the repository, offset, command) of every benchmark command shown, once each."""
    seen = {}
    for page in doc_files():
        for offset, snippet in snippets_at(page.read_text()):
            if BENCH.match(snippet):
                seen.setdefault(snippet, (page.relative_to(REPO).as_posix(), offset, snippet))
    return list(seen.values())


def runnable(command: str, directory: str) -> str:
    """The command with its comment dropped, brackets opened, placeholders filled and ``--dry-run`` added."""
    words = []
    for word in shlex.split(command, comments=True):
        word = word.strip("[]")
        if word in ("…", "...", ""):
            continue
        name = word.removesuffix("...").removesuffix("…")
        if re.fullmatch(r"[A-Z][A-Z_]*", name):
            assert name in PLACEHOLDERS, f"{command!r}: placeholder {name} has no value in PLACEHOLDERS"
            word = directory if PLACEHOLDERS[name] == "DIR" else PLACEHOLDERS[name]
        words.append(word)
    return shlex.join([*words, "--dry-run"])


COMMANDS = bench_commands()


def test_the_docs_show_a_command_of_every_benchmark():
    shown = {BENCH.match(c).group(1) for _, _, c in COMMANDS}
    benchmarks = {p.stem for p in (REPO / "bench").glob("*.py")} - HELPERS
    assert "stated_times" in shown and "pipeline" in shown
    assert sorted(benchmarks - shown) == [], "benchmarks the docs show no command of"


def test_placeholders_and_brackets_are_filled():
    assert runnable("python bench/memory.py WORKDIR [WORKDIR...]", "/d") == \
        "python bench/memory.py /d /d --dry-run"
    assert runnable("python bench/paper_scale.py --shards K  # 8 min", "/d") == \
        "python bench/paper_scale.py --shards 2 --dry-run"
    with pytest.raises(AssertionError, match="placeholder NEW"):
        runnable("python bench/x.py NEW", "/d")


@pytest.mark.parametrize("page, offset, command", COMMANDS, ids=[c for _, _, c in COMMANDS])
def test_a_documented_bench_command_runs(tmp_path, page, offset, command):
    (tmp_path / "bench").symlink_to(REPO / "bench", target_is_directory=True)
    (tmp_path / "data").mkdir()
    venv_checkout(tmp_path)
    activation = page_activation(REPO / page, offset)
    line = runnable(command, str(tmp_path / "data"))
    res = shell(f"{activation}\n{line}" if activation else line, tmp_path)
    assert res.returncode == 0, f"{page}: {command!r} failed as {line!r}:\n{res.stdout[-2000:]}{res.stderr[-3000:]}"
    assert "(dry run)" in res.stdout


def test_a_renamed_or_abbreviated_option_fails_the_dry_run():
    """What the test above catches: the option a doc line names must be the benchmark's, in full."""
    run = lambda *args: subprocess.run([sys.executable, str(REPO / "bench/pipeline.py"), "--workdir", "x", *args,  # noqa: E731
                                        "--dry-run"], capture_output=True, text=True)
    assert run("--from-clean").returncode == 0
    for bad in ("--from", "--from-clear"):
        res = run(bad)
        assert res.returncode == 2 and "unrecognized arguments" in res.stderr, bad


def test_the_stated_times_benchmark_reads_the_readme_run_commands():
    """bench/stated_times.py times the README's own run commands: its dry run lists each, by the run it makes."""
    res = subprocess.run([sys.executable, str(REPO / "bench/stated_times.py"), "--dry-run", "--tests"],
                         capture_output=True, text=True, check=True)
    listed = dict(re.findall(r"^(\S+)\s+(.+)$", res.stdout, re.M)[1:])
    assert listed["sample-default"] == "snakemake --cores 2 --config trace='{\"source\": \"sample\"}'"
    assert listed["synthetic-tiny"] == "snakemake --cores 2 --config scale=tiny"
    assert listed["synthetic-default"].endswith("snakemake --cores 2")
    assert listed["tests"] == ".venv/bin/python -m pytest"
    readme = (REPO / "README.md").read_text()
    assert all(command in readme for command in listed.values())
