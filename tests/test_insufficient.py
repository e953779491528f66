"""Too little data is a result: status outputs, their propagation, and the summary that lists them."""

from __future__ import annotations

import logging

import numpy as np
import polars as pl
import pytest

from colocate import insufficient
from colocate.figures import insufficient_data_figure
from colocate.insufficient import InsufficientData, Status
from colocate.prep.tasks import long_tasks_status
from colocate.report import summary

LOG = logging.getLogger("test")
STATUS = Status("Janus Fig 4", "3 long tasks, fewer than k = 16", "at least 16 long tasks")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_status_table_round_trips(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    insufficient.write_status([path], STATUS)
    assert insufficient.read_status(path) == STATUS
    frame = pl.read_csv(path) if suffix == ".csv" else pl.read_parquet(path)
    assert frame.row(0, named=True) == {"status": "insufficient data", **STATUS.__dict__}
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".png"])
def test_a_not_applicable_status_round_trips_and_passes_downstream(tmp_path, suffix):
    """"Not applicable to this trace" travels by the same mechanism as too little data (issue 16)."""
    na = Status("Machine failures (Beaumont et al. §6)", "no machine events", "machine_events",
                status=insufficient.NOT_APPLICABLE)
    path = tmp_path / f"t{suffix}"
    insufficient.write_status([path], na)
    got = insufficient.read_status(path)
    assert got == na and got.status == "not applicable to this trace"
    assert got.downstream("Fig 7").status == insufficient.NOT_APPLICABLE
    page = summary.render([pl.DataFrame(schema=summary.COLUMNS)], run="r",
                          skipped=pl.DataFrame([got.__dict__], schema={k: pl.String for k in got.__dict__}))
    assert "| not applicable to this trace: no machine events | machine_events |" in page


def test_a_normal_result_has_no_status(tmp_path):
    # a table that merely has a "status" column is a result, not a status output
    pl.DataFrame({"status": ["ok"], "x": [1]}).write_csv(tmp_path / "a.csv")
    pl.DataFrame({"status": ["insufficient data"], "reason": ["r"]}).write_parquet(tmp_path / "b.parquet")
    assert insufficient.read_status(tmp_path / "a.csv") is None
    assert insufficient.read_status(tmp_path / "b.parquet") is None
    assert insufficient.read_status(tmp_path / "missing.csv") is None
    assert insufficient.upstream_status([tmp_path / "a.csv", tmp_path / "b.parquet"]) is None


def test_the_figure_states_the_reason_not_empty_axes():
    fig = insufficient_data_figure(STATUS.analysis, STATUS.reason, STATUS.needs)
    text = " ".join(t.get_text() for t in fig.texts)
    assert STATUS.reason in text and STATUS.needs in text and STATUS.analysis in text
    assert not fig.axes


def test_other_outputs_are_written_by_kind(tmp_path):
    paths = [tmp_path / "a.png", tmp_path / "a.npy"]
    insufficient.write_status(paths, STATUS)
    assert paths[0].read_bytes().startswith(b"\x89PNG")
    assert np.load(paths[1]).size == 0
    with pytest.raises(ValueError, match=r"\.xyz"):
        insufficient.write_status([tmp_path / "a.xyz"], STATUS)
    assert not list(tmp_path.glob("*.tmp"))  # the failed write left nothing behind


def test_a_status_names_the_analysis_that_found_the_data_lacking():
    exc = InsufficientData("why", "what", analysis="Long tasks")
    assert Status.of(exc, "Fig 4") == Status("Fig 4", "why", "what", origin="Long tasks")
    assert Status.of(InsufficientData("why", "what"), "Fig 4").origin == "Fig 4"


def test_lacking_data_in_the_body_writes_every_output_as_its_status(tmp_path):
    outputs = [tmp_path / "t.csv", tmp_path / "f.png"]
    def body():
        insufficient.require(True, "never", "never")
        insufficient.require(False, "only one arrival instant", "task_usage over more than one window")

    insufficient.run_or_reason(body, [], outputs, "my analysis", LOG)
    got = insufficient.read_status(outputs[0])
    assert got == Status("my analysis", "only one arrival instant", "task_usage over more than one window")
    assert got.origin == "my analysis"
    assert insufficient.read_status(outputs[1]) == got  # the figure carries the same status (and shows its reason)


def test_an_upstream_status_ends_the_job_cleanly_naming_it(tmp_path):
    upstream = tmp_path / "long.parquet"
    insufficient.write_status([upstream], STATUS)
    out = tmp_path / "table.csv"
    ran = []
    insufficient.run_or_reason(lambda: ran.append(1), {"long": str(upstream)}, [out], "downstream", LOG)
    assert not ran
    assert insufficient.read_status(out) == Status("downstream", STATUS.reason, STATUS.needs, origin=STATUS.analysis)


def test_bad_input_is_still_an_error_and_writes_nothing(tmp_path):
    out = tmp_path / "t.csv"
    def body():
        raise KeyError("column")

    with pytest.raises(KeyError):
        insufficient.run_or_reason(body, [], [out], "x", LOG)
    assert not out.exists()


def test_no_long_task_is_explained_with_the_longest_task():
    stats = pl.DataFrame({"n_records": [1, 3, 2], "is_long": [False, False, False]})
    lacking = long_tasks_status(stats, long_min_records=24)
    assert isinstance(lacking, InsufficientData)
    assert "has 3 five-minute record(s) (15 min), fewer than 24 (120 min)" in lacking.reason
    assert "at least 2 h" in lacking.needs
    assert long_tasks_status(stats.with_columns(is_long=pl.Series([False, True, False])), 24) is None


def test_kmeans_with_fewer_tasks_than_k_lacks_data():
    from colocate.analysis import characterise as ch

    with pytest.raises(InsufficientData, match="k=16 is larger than the number of tasks"):
        ch.kmeans_histograms(np.full((3, 100), 0.01), 16, seed=1)


def test_the_summary_lists_the_skipped_analyses_with_their_reasons():
    part = summary.rows("Section A", [("x", "1", 1.0)])
    skipped = pl.DataFrame([STATUS.__dict__, STATUS.__dict__, STATUS.downstream("C").__dict__,
                            Status("B", "why", "what").__dict__])
    page = summary.render([part], run="sample-default", skipped=skipped)
    assert "Run: `sample-default`" in page and "results/sample-default/" in page
    assert "## Analyses this trace cannot support" in page
    # one row per cause, naming every analysis it stopped, once
    assert f"| {STATUS.analysis} | {STATUS.reason} | {STATUS.needs} | C; {STATUS.analysis} |" in page
    assert "| B | why | what | B |" in page
    assert "cannot support" not in summary.render([part], skipped=skipped.head(0))


def test_a_status_figure_carries_its_status(tmp_path):
    insufficient.write_status([tmp_path / "f.png"], STATUS.downstream("Fig 5"))
    got = insufficient.read_status(tmp_path / "f.png")
    assert got == Status("Fig 5", STATUS.reason, STATUS.needs, origin=STATUS.analysis)
    # an ordinary figure has none
    fig = insufficient_data_figure("a", "b", "c")
    fig.savefig(tmp_path / "plain.png")
    assert insufficient.read_status(tmp_path / "plain.png") is None


def test_a_reason_with_a_pipe_does_not_break_the_summary_table():
    skipped = pl.DataFrame([Status("A", "max |m_abs FF − m_abs BF|", "x").__dict__])
    page = summary.render([], skipped=skipped)
    assert "| A | max \\|m_abs FF − m_abs BF\\| | x | A |" in page
