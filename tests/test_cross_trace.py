"""The cross-trace comparison (issue 16): quantities matched across traces by name, with known answers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from colocate.report import cross_trace, summary
from colocate.report.compare import Compare


def _part(section: str, rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    return summary.rows(section, [(q, paper, ours, "", Compare(item="x")) for q, paper, ours in rows])


def test_a_google_quantity_is_worded_for_vms():
    assert cross_trace.vm_quantity("§IV-C: K-S D, 18 tasks (trace)") == "§IV-C: K-S D, 18 VMs (trace)"
    assert cross_trace.vm_quantity("long-running production dominant jobs analysed") == "VMs read over the whole trace analysed"
    assert cross_trace.vm_quantity("Table 4 daily ratio, median") == "Table 4 daily ratio, median"


def test_the_table_matches_each_quantity_across_traces_with_known_values():
    google = _part("G", [("Table 4 daily ratio, median", "0.268", 0.19), ("§IV-C: K-S D, 18 tasks (trace)", "0.084", 0.05),
                         ("unrelated", "1", 2.0)])
    azure = summary.another_trace(_part("A", [("Table 4 daily ratio, median", "0.268", 0.0322),
                                              ("§IV-C: K-S D, 18 VMs (trace)", "0.084", 0.132)]), "Azure")
    t = cross_trace.cross_trace(azure, google, "azure-sample", "synthetic-default")
    assert t["quantity"].to_list() == ["Table 4 daily ratio, median", "§IV-C: K-S D, 18 tasks (trace)"]
    assert t["paper_google_2011"].to_list() == [0.268, 0.084]
    assert t["google"].to_list() == [0.19, 0.05] and t["azure"].to_list() == [0.0322, 0.132]
    assert t["azure_over_paper"].to_list() == pytest.approx([0.0322 / 0.268, 0.132 / 0.084])
    assert set(t["google_run"]) == {"synthetic-default"} and set(t["azure_run"]) == {"azure-sample"}
    # without a Google run, the column is empty and the page says which run is missing
    alone = cross_trace.cross_trace(azure, None, "azure-sample", None)
    assert alone["google"].is_null().all() and alone["google_run"].is_null().all()
    page = cross_trace.markdown(alone, "No Google run to compare")
    assert "| Table 4 daily ratio, median | 0.268 |  | 0.0322 |" in page
    share = summary.another_trace(_part("A", [("Fig 2: share of VMs with inst std > avg std", None, 1.0)]), "Azure")
    share = share.with_columns(pl.lit("%").alias("unit"), pl.lit(100.0).alias("ours_value"))
    row = cross_trace.cross_trace(share, None, "a", None).row(0, named=True)
    assert row["quantity"] == "Fig 2: share of tasks with inst std > avg std" and row["unit"] == "%"
    assert "| Fig 2: share of tasks with inst std > avg std |  |  | 100% |" in cross_trace.markdown(pl.DataFrame([row])) and "No Google run to compare" in page
    assert "| quantity | paper (Google 2011) | Google run (none) | azure-sample (Azure) |" in page


def test_the_figure_places_each_trace_at_its_ratio_to_the_paper():
    from colocate.figures.cross_trace import cross_trace_figure

    table = pl.DataFrame({"quantity": ["a", "b"], "unit": ["", "%"], "paper_google_2011": [0.2, 4.0], "google_run": ["g", "g"],
                          "google": [0.1, 4.0], "azure_run": ["z", "z"], "azure": [0.4, 1.0], "azure_over_paper": [2.0, 0.25]},
                         schema=cross_trace.COLUMNS)
    fig = cross_trace_figure(table)
    ax = fig.axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections])
    assert sorted(points[:, 0].tolist()) == pytest.approx(sorted([0.5, 1.0, 2.0, 0.25]))
    assert ax.get_xscale() == "log"
