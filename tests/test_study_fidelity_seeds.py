"""The default summary's agreement over trace seeds: ``report.over_runs`` on constructed summaries with the counts
worked out by hand, and ``studies/fidelity_seeds.py`` run as the docs give it."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest

from colocate.report.over_runs import agreement_over_runs, outside_in_every_run
from colocate.report.summary import COLUMNS, combine
from wfutil import REPO

pytestmark = pytest.mark.study


def _summary(within: list[bool | None], ours: list[str], extra: bool = False) -> pl.DataFrame:
    """Two sections; section B's last row is scale-dependent (no verdict); ``extra`` adds a row one run lacks."""
    rows = {"section": ["A", "A", "B", "B"], "quantity": ["a1", "a2", "b1", "b2"], "ours": ours, "within": within}
    t = pl.DataFrame(rows, schema={"section": pl.String, "quantity": pl.String, "ours": pl.String, "within": pl.Boolean})
    if extra:
        t = pl.concat([t, pl.DataFrame({"section": ["B"], "quantity": ["b3"], "ours": ["9"], "within": [True]})])
    return t


def test_counts_and_flips_by_hand():
    runs = {"ref": _summary([True, False, True, None], ["1", "2", "3", "4"]),
            "s1": _summary([True, True, False, None], ["1", "5", "6", "4"], extra=True),
            "s2": _summary([True, True, True, None], ["1", "7", "3", "4"])}
    by, flips = agreement_over_runs(runs)
    # b2 has no verdict and b3 is not in every run: three rows compared; within: ref 2, s1 2, s2 3
    assert by.to_dicts() == [
        {"section": "A", "compared": 2, "ref": 1, "s1": 2, "s2": 2},
        {"section": "B", "compared": 1, "ref": 1, "s1": 0, "s2": 1},
        {"section": "all", "compared": 3, "ref": 2, "s1": 2, "s2": 3},
    ]
    assert flips["quantity"].to_list() == ["a2", "b1"]  # a1 is within everywhere
    a2 = flips.row(0, named=True)
    assert (a2["ours ref"], a2["ref"], a2["ours s1"], a2["s1"], a2["ours s2"], a2["s2"]) == ("2", False, "5", True, "7", True)


def test_one_run_is_refused():
    with pytest.raises(ValueError, match="at least two runs"):
        agreement_over_runs({"ref": _summary([True, False, True, None], ["1", "2", "3", "4"])})
    with pytest.raises(ValueError, match="at least two runs"):
        outside_in_every_run({"ref": _summary([True, False, True, None], ["1", "2", "3", "4"])})


def test_rows_outside_in_every_run_by_hand():
    # a1 is outside in both runs; a2 and b1 in one each; b2 has no verdict; b3 is outside but not in every run
    runs = {"ref": _summary([False, False, True, None], ["1", "2", "3", "4"]),
            "s1": _summary([False, True, False, None], ["5", "6", "7", "4"], extra=True)}
    runs["s1"] = runs["s1"].with_columns(pl.when(pl.col("quantity") == "b3").then(False).otherwise(pl.col("within"))
                                         .alias("within"))
    always = outside_in_every_run(runs)
    assert always.to_dicts() == [{"section": "A", "quantity": "a1", "ours ref": "1", "ours s1": "5"}]
    # every row within somewhere: none
    assert outside_in_every_run({"ref": _summary([True, False, True, None], ["1", "2", "3", "4"]),
                                 "s1": _summary([True, True, False, None], ["1", "5", "6", "4"])}).height == 0


def test_the_study_runs_as_the_docs_give_it(tmp_path):
    for name, within, ours in (("synthetic-default", [True, False, False, None], ["1", "2", "3", "4"]),
                               ("seed-1", [True, True, False, None], ["1", "5", "6", "4"])):
        (tmp_path / "results" / name).mkdir(parents=True)
        t = _summary(within, ours)  # as the summary rule writes it: every column of summary.csv
        combine([t.with_columns(pl.lit(None, dtype=d).alias(c) for c, d in COLUMNS.items() if c not in t.columns)]
                ).write_csv(tmp_path / "results" / name / "summary.csv")
    cmd = [sys.executable, str(REPO / "studies/fidelity_seeds.py"), "results/synthetic-default", "results/seed-1"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "synthetic-default: 1 of 3 within (33.3%), 1.000× the reference synthetic-default" in out
    assert "seed-1: 2 of 3 within (66.7%), 2.000× the reference" in out
    assert "1 rows change their verdict" in out and "A | a2: synthetic-default 2 (out); seed-1 5 (in)" in out
    # b1 is outside in both: at most 2 of 3 within, where the one row that changes (a2) is within in seed-1 only
    assert "1 rows are outside in every run: at most 2 of 3 within (66.7%)" in out
    assert "synthetic-default has 0, seed-1 has 1" in out
    assert "B | b1: synthetic-default 3; seed-1 6" in out
    assert "peak memory" in out
    missing = subprocess.run([*cmd[:2], "results/synthetic-default", "results/nowhere"], cwd=tmp_path,
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "results/nowhere/summary.csv: no summary" in missing.stderr
