"""results/summary.md assembly."""

import polars as pl

from colocate.prep import mapreduce
from colocate.report import summary


def test_rows_and_render():
    a = summary.rows("Janus §3.3", [("inst slope", "0.36", 0.35812, "OLS"), ("avg slope", "0.31", 0.3)])
    b = summary.rows("Beaumont §6", [("removals per window", "1.07", 1.0049999)])
    assert a.columns == list(summary.COLUMNS) and a["ours"].to_list() == ["0.3581", "0.3"]
    page = summary.render([a, b])
    assert page.index("## Janus §3.3") < page.index("## Beaumont §6")
    assert "| inst slope | 0.36 | 0.3581 | OLS |" in page
    assert "| removals per window | 1.07 | 1.005 |  |" in page


def test_counts_summary_hand_computed():
    counts = pl.DataFrame(
        {
            "quantity": ["tasks_with_usage", "no_task_events", "failing_dropped", "all_zero_dropped", "avg_above_one_replaced", "long", "short"],
            "count": [1000, 0, 200, 12, 3, 40, 748],
        }
    )
    s = mapreduce.counts_summary(counts)
    got = dict(zip(s["quantity"], s["ours"]))
    assert got["all-zero tasks dropped (share of tasks)"] == "0.012"
    assert got["tasks shorter than 2 h (share)"] == f"{748 / 788:.4g}"
    assert got["avg > 1 records replaced by inst"] == "3"
