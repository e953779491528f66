"""The cross-trace comparison (issue 16): quantities matched across traces by claim, with known answers."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from colocate.report import cross_trace, summary
from colocate.report.compare import Compare


def _part(section: str, rows: list[tuple[str, str, float, str, dict]]) -> pl.DataFrame:
    """A summary part: (quantity, paper, ours, claim, values) per row."""
    return summary.rows(section, [(q, paper, ours, "", Compare(item="x", claim=claim, values=json.dumps(values)))
                                  for q, paper, ours, claim, values in rows])


DAILY = ("Table 4 daily ratio, median", "0.268", "beaumont.t4.daily.median", {})
KS = ("§IV-C: K-S D, 18 tasks (trace)", "0.084", "unuvar.s4c.ks_d.18", {"source": "trace", "tasks": 18})


def test_the_table_matches_each_quantity_across_any_number_of_runs_by_claim_and_values():
    google = _part("G", [(DAILY[0], DAILY[1], 0.19, *DAILY[2:]), (KS[0], KS[1], 0.05, *KS[2:]),
                         # the same claim at another source: not the compared one
                         ("§IV-C: K-S D, 18 tasks (realizations)", "0.084", 0.7, KS[2], {"source": "realizations"}),
                         ("unrelated", "1", 2.0, "x.y", {})])
    # another trace's rows are worded by its own entities: matched by claim and values, not by name
    azure = summary.another_trace(_part("A", [("Table 4 daily ratio, median (VMs)", "0.268", 0.0322, *DAILY[2:]),
                                              ("§IV-C: K-S D, 18 VMs (trace)", "0.084", 0.132, *KS[2:])]), "Azure")
    other = _part("O", [(KS[0], KS[1], 0.2, *KS[2:])])
    runs = [("Google model", "synthetic-default", google), ("Azure", "azure-sample", azure), ("Alibaba", "ali", other)]
    t = cross_trace.cross_trace(runs)
    assert t["quantity"].unique(maintain_order=True).to_list() == [DAILY[0], KS[0]]  # in COMPARED's order
    daily = t.filter(pl.col("quantity") == DAILY[0])
    assert daily["run"].to_list() == ["synthetic-default", "azure-sample"] and daily["value"].to_list() == [0.19, 0.0322]
    assert daily["paper_google_2011"].to_list() == [0.268, 0.268]
    ks = t.filter(pl.col("quantity") == KS[0])
    assert ks["run"].to_list() == ["synthetic-default", "azure-sample", "ali"]
    assert ks["over_paper"].to_list() == pytest.approx([0.05 / 0.084, 0.132 / 0.084, 0.2 / 0.084])
    page = cross_trace.markdown(t, [(trace, run) for trace, run, _ in runs], "a note")
    assert "| quantity | paper (Google 2011) | synthetic-default (Google model) | azure-sample (Azure) | ali (Alibaba) |" in page
    assert f"| {DAILY[0]} | 0.268 | 0.19 | 0.0322 |  |" in page and "a note" in page
    # a run that does not exist, or measured nothing, adds no row
    alone = cross_trace.cross_trace([("Google", "none", None), ("Azure", "azure-sample", azure)])
    assert set(alone["run"]) == {"azure-sample"}
    # the paper's bound ("> 50%") is no value to take a ratio to: shown without one
    share = summary.another_trace(_part("A", [("Fig 2: share", "> 50%", 1.0, cross_trace.COMPARED[0][0], {})]), "Azure")
    share = share.with_columns(pl.lit("%").alias("unit"), pl.lit(100.0).alias("ours_value"))
    row = cross_trace.cross_trace([("Azure", "a", share)]).row(0, named=True)
    assert row["quantity"] == "Fig 2: share" and row["unit"] == "%" and row["over_paper"] is None
    assert "| Fig 2: share |  | 100% |" in cross_trace.markdown(cross_trace.cross_trace([("Azure", "a", share)]), [("Azure", "a")])


def test_every_compared_claim_is_in_the_papers_tables():
    from wfutil import PAPERS

    from colocate.report import claims

    ids = set(claims.read_claims(sorted(PAPERS.glob("*.tsv")))["id"])
    assert {claim for claim, _ in cross_trace.COMPARED} <= ids


def test_the_figure_places_each_run_at_its_ratio_to_the_paper():
    from colocate.figures.cross_trace import cross_trace_figure

    table = pl.DataFrame({"quantity": ["a", "a", "b", "b"], "unit": ["", "", "%", "%"], "paper_google_2011": [0.2, 0.2, 4.0, 4.0],
                          "trace": ["G", "Z", "G", "Z"], "run": ["g", "z", "g", "z"], "value": [0.1, 0.4, 4.0, 1.0],
                          "over_paper": [0.5, 2.0, 1.0, 0.25]}, schema=cross_trace.COLUMNS)
    fig = cross_trace_figure(table)
    ax = fig.axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections])
    assert sorted(points[:, 0].tolist()) == pytest.approx(sorted([0.5, 1.0, 2.0, 0.25]))
    assert ax.get_xscale() == "log"
