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


def test_the_figure_of_a_run_that_measured_none_of_the_quantities_is_drawn_empty():
    """A trace whose analyses measured none of the compared quantities (the Azure V1 head files): an empty table, or
    rows without a finite ratio, give an empty figure, not an error."""
    from colocate.figures.cross_trace import cross_trace_figure

    empty = pl.DataFrame(schema=cross_trace.COLUMNS)
    no_ratio = pl.DataFrame({"quantity": ["a"], "unit": [""], "paper_google_2011": [0.0], "trace": ["Z"], "run": ["z"],
                             "value": [1.0], "over_paper": [None]}, schema=cross_trace.COLUMNS)
    for table in (empty, no_ratio):
        ax = cross_trace_figure(table).axes[0]
        assert not ax.collections  # no dots


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


def _summary(rows: list[tuple[str, str, float, str, dict]], trace: str | None = None) -> pl.DataFrame:
    """A run's summary.csv table (as the summary rule writes it; another trace's rows compared, not judged)."""
    table = summary.combine([_part("S", rows)])
    return summary.another_trace(table, trace) if trace else table


ADR = ("Table 1: A-D rejection rate, N = 10", "0.5", "janus.t1.ad_rejection_n10", {})


def test_a_run_of_a_third_trace_is_a_column_beside_the_2011_and_2019_runs():
    """Known answer (issue 45): a 2011 run, a 2019 run and this run (Azure), each measuring some of the quantities."""
    g2011 = _summary([(DAILY[0], DAILY[1], 0.25, *DAILY[2:]), (KS[0], KS[1], 0.1, *KS[2:]), (ADR[0], ADR[1], 0.4, *ADR[2:])])
    g2019 = _summary([(DAILY[0], DAILY[1], 0.3, *DAILY[2:]), (ADR[0], ADR[1], 0.6, *ADR[2:])], "Google 2019")
    azure = _summary([("Table 4 daily ratio, median (VMs)", DAILY[1], 0.0322, *DAILY[2:]),
                      ("§IV-C: K-S D, 18 VMs (trace)", KS[1], 0.132, *KS[2:])], "Azure")
    runs = [("the synthetic 2011 trace", "synthetic-default", g2011),
            ("the synthetic trace in the 2019 format", "synthetic2019-default", g2019),
            ("the shipped Azure V2 sample (20 VMs)", "azure-sample-tiny", azure)]
    t = cross_trace.cross_trace(runs)
    expected = pl.DataFrame(
        [(ADR[0], "", 0.5, "the synthetic 2011 trace", "synthetic-default", 0.4, 0.8),
         (ADR[0], "", 0.5, "the synthetic trace in the 2019 format", "synthetic2019-default", 0.6, 1.2),
         (DAILY[0], "", 0.268, "the synthetic 2011 trace", "synthetic-default", 0.25, 0.25 / 0.268),
         (DAILY[0], "", 0.268, "the synthetic trace in the 2019 format", "synthetic2019-default", 0.3, 0.3 / 0.268),
         (DAILY[0], "", 0.268, "the shipped Azure V2 sample (20 VMs)", "azure-sample-tiny", 0.0322, 0.0322 / 0.268),
         (KS[0], "", 0.084, "the synthetic 2011 trace", "synthetic-default", 0.1, 0.1 / 0.084),
         (KS[0], "", 0.084, "the shipped Azure V2 sample (20 VMs)", "azure-sample-tiny", 0.132, 0.132 / 0.084)],
        schema=cross_trace.COLUMNS, orient="row")
    # in COMPARED's order (Table 1 before Table 4 before §IV-C), each quantity's runs in the order given
    assert t["quantity"].unique(maintain_order=True).to_list() == [ADR[0], DAILY[0], KS[0]]
    assert t.drop("over_paper").equals(expected.drop("over_paper"))
    assert t["over_paper"].to_list() == pytest.approx(expected["over_paper"].to_list())
    page = cross_trace.markdown(t, [(trace, run) for trace, run, _ in runs])
    assert ("| quantity | paper (Google 2011) | synthetic-default (the synthetic 2011 trace) | synthetic2019-default "
            "(the synthetic trace in the 2019 format) | azure-sample-tiny (the shipped Azure V2 sample (20 VMs)) |") in page
    assert "|---|---|---|---|---|" in page
    assert f"| {ADR[0]} | 0.5 | 0.4 | 0.6 |  |" in page
    assert f"| {DAILY[0]} | 0.268 | 0.25 | 0.3 | 0.0322 |" in page
    assert f"| {KS[0]} | 0.084 | 0.1 |  | 0.132 |" in page


def test_the_runs_compared_are_named_once_in_order_without_this_run():
    assert cross_trace.compared_runs(None, "azure-default") == []
    assert cross_trace.compared_runs([], "azure-default") == []
    assert cross_trace.compared_runs("sample-default", "azure-default") == ["sample-default"]
    assert cross_trace.compared_runs("azure-default", "azure-default") == []
    # a 2019 run compares with the 2011 run and the paper: itself, listed by default, is skipped
    assert cross_trace.compared_runs(["synthetic-default", "synthetic2019-default", "synthetic-default"],
                                     "synthetic2019-default") == ["synthetic-default"]


def test_a_compared_run_is_labelled_by_the_trace_it_recorded_else_by_its_name():
    recorded = {"trace": "the synthetic trace in the 2019 format (the 2011-calibrated model)", "has": []}
    assert cross_trace.trace_label("my-run", recorded) == recorded["trace"]
    assert cross_trace.trace_label("synthetic-default", None) == "synthetic model of Google 2011"
    assert cross_trace.trace_label("synthetic-default", {}) == "synthetic model of Google 2011"
    assert cross_trace.trace_label("synthetic2019-tiny", None) == "synthetic model of Google 2011 in the 2019 format"
    assert cross_trace.trace_label("google2019-default", None) == "Google 2019 data"
    assert cross_trace.trace_label("sample-default", None) == "Google 2011 data"


def test_a_missing_run_is_named_in_the_note_with_how_to_make_it():
    from colocate import sources

    sources.builtins()  # each module registers its sources on import
    names, scales = sources.SOURCES.names(), ["tiny", "default", "paper"]
    assert cross_trace.how_to_make("synthetic-default", names, scales) == "`snakemake --cores 2`"
    assert cross_trace.how_to_make("synthetic2019-default", names, scales) == (
        "`snakemake --cores 2 --config trace='{\"source\": \"synthetic2019\"}'`")
    assert cross_trace.how_to_make("azure-sample-tiny", names, scales) == (
        "`snakemake --cores 2 --config trace='{\"source\": \"azure-sample\"}' scale=tiny`")
    assert cross_trace.how_to_make("mine", names, scales) == "a run of this pipeline named mine (`--config run=mine`)"
    assert cross_trace.missing_note([]) == ""
    note = cross_trace.missing_note([("synthetic2019-default", cross_trace.how_to_make("synthetic2019-default", names, scales))])
    assert ("- results/synthetic2019-default/summary.csv does not exist: make it with `snakemake --cores 2 --config "
            "trace='{\"source\": \"synthetic2019\"}'`.") in note
    assert "cross_trace.compare_with" in note
    # the runs that exist are columns; the one that does not is in the section's note, not a column
    g2011 = _summary([(DAILY[0], DAILY[1], 0.25, *DAILY[2:])])
    azure = _summary([("Table 4 daily ratio, median (VMs)", DAILY[1], 0.0322, *DAILY[2:])], "Azure")
    runs = [("Google model", "synthetic-default", g2011), ("Azure", "azure-default", azure)]
    page = cross_trace.markdown(cross_trace.cross_trace(runs), [(t, r) for t, r, _ in runs], note)
    assert note in page and "| quantity | paper (Google 2011) | synthetic-default (Google model) | azure-default (Azure) |" in page
    assert "synthetic2019-default (" not in page


@pytest.mark.parametrize(("value", "error"), [
    (["synthetic-default", "synthetic2019-default"], None),
    ("synthetic-default", None),
    (None, None),
    ([], None),
    (["synthetic-default", "a/b"], ("cross_trace.compare_with.1", "does not match")),
    ({"run": "x"}, ("cross_trace.compare_with", "is not of type 'array', 'string', 'null'")),
    ("../x", ("cross_trace.compare_with", "does not match")),
])
def test_compare_with_takes_a_run_a_list_of_runs_or_null_and_a_bad_value_names_its_key(value, error):
    import jsonschema
    from snakemake.cli import parse_config
    from wfutil import REPO

    from colocate.configtypes import cli_text, coerce_config, config_schema, fill_defaults

    schema = config_schema(REPO / "workflow/schemas")
    entry = f"cross_trace={json.dumps({'compare_with': value})}"
    config = coerce_config(parse_config([entry]), schema, cli_text([entry]))  # as the command line gives it
    assert config["cross_trace"]["compare_with"] == value
    found = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if error is None:
        assert found is None
    else:
        assert found is not None and ".".join(map(str, found.absolute_path)) == error[0] and error[1] in found.message
    # unset, the 2011 and the 2019 default runs
    default = fill_defaults({}, schema)["cross_trace"]["compare_with"]
    assert default == ["synthetic-default", "synthetic2019-default"] and jsonschema.Draft202012Validator(schema).is_valid({"cross_trace": {"compare_with": default}})
