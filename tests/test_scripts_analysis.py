"""Rule scripts of machine failures, characterisation and CPU vs memory, run without Snakemake.

Each script is loaded with :func:`colocate.rulescript.load` and called with
:func:`colocate.rulescript.call` on the real machine_events shipped with the project or on small files
built here; params are those of its rule, with the config schema's defaults
(workflow/schemas/*.schema.yaml, the tiny preset of scales.yaml) where the rule reads config.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from colocate import insufficient, measure, rulescript
from colocate.analysis import cpumem
from wfutil import REPO, SAMPLE, judged

SCRIPTS = REPO / "workflow" / "scripts"

# ----------------------------------------------------------------------------- failures_removals, failures_analysis

#: The sample's machine_events is the whole table: 8,352 five-minute windows (N_WINDOWS of a sample run).
N_WINDOWS = 8352
#: failures.schema.yaml's defaults.
OUTSTANDING = {"together_s": 60, "min_readds": 15, "cycle_uptime_s": 3600, "flapping_min_cycles": 2, "others_listed": 5}
REMOVALS_PARAMS = {"n_windows": N_WINDOWS, "outstanding": OUTSTANDING, "maintenance_min_removals": 10}
ANALYSIS_PARAMS = {"maintenance_min_removals": 10, "tail_more_than": 5, "back_within_minutes": 17,
                   "duration_marks_min": [1, 5, 17, 60, 360, 1440, 10080], "alpha": 0.05, "trace_minutes": N_WINDOWS * 5}


@pytest.fixture(scope="module")
def failures_run(tmp_path_factory):
    """The 2011 source's map of the real machine_events, failures_removals then failures_analysis, as the rules chain them."""
    d = tmp_path_factory.mktemp("failures")
    removals = {k: d / f for k, f in (("removals", "removals.parquet"), ("windows", "removals_per_window.parquet"),
                                      ("facts", "machine_events_counts.csv"), ("all_episodes", "episodes.parquet"),
                                      ("episodes", "beaumont_outstanding_events.csv"))}
    raw, events = SAMPLE / "machine_events" / "part-00000-of-00001.csv.gz", d / "machine_events.parquet"
    rulescript.call(rulescript.load(SCRIPTS / "google2011_machine_events.py"), inputs={"events": raw}, outputs=[events],
                    params={}, log=d / "map.log")
    rulescript.call(rulescript.load(SCRIPTS / "failures_removals.py"), inputs={"events": [events]}, outputs=removals,
                    params=REMOVALS_PARAMS, log=d / "removals.log")
    names = ("histogram", "poisson", "stats", "dispersion", "durations", "summary")
    analysis = {k: d / f"{k}.csv" for k in names} | {"fig6": d / "fig6.png", "fig7": d / "fig7.png"}
    inputs = {k: removals[k] for k in ("removals", "windows", "facts")} | {"episodes": removals["all_episodes"]}
    rulescript.call(rulescript.load(SCRIPTS / "failures_analysis.py"), inputs=inputs, outputs=analysis,
                    params=ANALYSIS_PARAMS, log=d / "analysis.log")
    return removals, analysis


def test_failures_removals_counts_the_real_file_and_finds_its_three_outstanding_events(failures_run):
    removals, _ = failures_run
    assert pl.read_csv(removals["facts"]).row(0, named=True) == {
        "machines": 12583, "adds": 21443, "removes": 8957, "updates": 7380, "removes_outside_windows": 0, "windows": N_WINDOWS,
    }
    counts = pl.read_parquet(removals["windows"])
    assert counts.height == N_WINDOWS and counts["removals"].sum() == 8957
    assert counts["removals"].mean() == pytest.approx(1.0724, abs=5e-5)  # the paper: 1.07
    assert counts["outstanding"].sum() == 561 and counts["remaining"].sum() == 8396
    assert counts["maintenance"].sum() == 38
    report = pl.read_csv(removals["episodes"])
    out = report.filter(pl.col("outstanding")).sort("start_time")
    assert out.select("kind", "machines", "removals").rows() == [("flapping", 21, 269), ("mass", 84, 84), ("mass", 161, 208)]
    assert report.height == 3 + OUTSTANDING["others_listed"]
    assert pl.read_parquet(removals["all_episodes"])["outstanding"].sum() == 3
    assert "3 outstanding events" in (removals["removals"].parent / "removals.log").read_text()


def test_failures_analysis_reproduces_beaumont_section6_on_the_real_file(failures_run):
    _, analysis = failures_run
    stats = {r["set"]: r for r in pl.read_csv(analysis["stats"]).iter_rows(named=True)}
    assert stats["all"]["windows"] == N_WINDOWS and stats["all"]["mean"] == pytest.approx(1.0724, abs=5e-5)
    assert stats["without_outstanding"]["removals"] == 8396
    kept = stats["without_maintenance"]
    assert (kept["windows"], kept["removals"]) == (8314, 7790)  # mean 7790 / 8314
    assert kept["mean"] == pytest.approx(0.937, abs=5e-4)  # the paper: 8314, 0.94
    hist = pl.read_csv(analysis["histogram"])
    assert hist.filter(pl.col("k") <= 5)["windows_without_outstanding"].to_list() == [3675, 2678, 1275, 410, 151, 66]
    assert hist["windows_all"].sum() == N_WINDOWS and hist["windows_without_maintenance"].sum() == 8314
    poisson = pl.read_csv(analysis["poisson"])
    assert poisson["windows"].sum() == 8314 and poisson["expected"].sum() == pytest.approx(8314, rel=1e-6)
    assert insufficient.read_status(analysis["fig6"]) is None and insufficient.read_status(analysis["fig7"]) is None


def test_failures_fig7_shows_the_durations_of_the_real_removals(failures_run):
    """The durations table is the real removals' shares back within each mark (recounted here, inf never back),
    and Fig 7 drawn from the removals ends each ECDF at 1 − the share never re-added and puts its dots at the
    table's 17-minute shares. Catches a ≤/< slip at a mark, censored removals counted as back, and a figure
    whose curves mix the ordinary and the outstanding removals."""
    import matplotlib.pyplot as plt

    from colocate.figures import failures as figures

    removals, analysis = failures_run
    rem = pl.read_parquet(removals["removals"])
    table = {r["minutes"]: r for r in pl.read_csv(analysis["durations"], schema_overrides={"minutes": pl.String}).iter_rows(named=True)}
    groups = {"back_ordinary": rem.filter(~pl.col("outstanding"))["duration_s"].to_numpy(), "back_all": rem["duration_s"].to_numpy()}
    for column, d in groups.items():
        for mark in ANALYSIS_PARAMS["duration_marks_min"]:
            assert table[str(mark)][column] == pytest.approx(np.mean(d <= 60 * mark)), (column, mark)
        assert table["never"][column] == pytest.approx(np.mean(np.isinf(d)))
    fig = figures.fig7_removal_durations(rem, 17, ANALYSIS_PARAMS["trace_minutes"])
    (ax,) = fig.axes
    curves = {len(line.get_xdata()) - 1: line for line in ax.lines if line.get_drawstyle() == "steps-post"}
    for column, d in groups.items():
        x, y = curves[d.size].get_xdata()[1:], curves[d.size].get_ydata()[1:]
        assert y[x <= ANALYSIS_PARAMS["trace_minutes"]].max() == pytest.approx(1 - table["never"][column])
    dots = [line.get_ydata()[0] for line in ax.lines if line.get_marker() == "o"]
    assert dots == pytest.approx([table["17"]["back_ordinary"], table["17"]["back_all"]])
    plt.close(fig)


# ----------------------------------------------------------------------------- characterise_janus_clusters

#: The rule's params: kmeans_k and seed from characterise.schema.yaml, kmeans_n_init from the tiny preset.
CLUSTERS_PARAMS = {"k": 16, "min_tasks": 1, "n_init": 3, "seed": 2017}
CLUSTERS_OUTPUTS = {"clusters": "task_clusters.parquet", "shares": "shares.csv", "centroids": "centroids.csv",
                    "figure": "centroids.png"}


def long_tasks(path, peaks: list[int]) -> None:
    """long_tasks.parquet whose task i has all its inst usage in histogram bin ``peaks[i]``."""
    hist = np.zeros((len(peaks), 100), dtype=np.float32)
    hist[np.arange(len(peaks)), peaks] = 1.0
    pl.DataFrame({"job_id": np.arange(len(peaks), dtype=np.int64), "task_index": np.zeros(len(peaks), dtype=np.int64),
                  "inst_hist": pl.Series(hist, dtype=pl.Array(pl.Float32, 100))}).write_parquet(path)


def test_janus_clusters_recovers_sixteen_distinct_histograms(tmp_path):
    # 16 distinct histograms (one-bin peaks at 0, 6, …, 90); the peak at bin 0 is held by 5 tasks
    peaks = [0] * 4 + list(range(0, 96, 6))
    long_tasks(tmp_path / "long.parquet", peaks)
    outputs = {k: tmp_path / f for k, f in CLUSTERS_OUTPUTS.items()}
    rulescript.call(rulescript.load(SCRIPTS / "characterise_janus_clusters.py"), inputs={"long": tmp_path / "long.parquet"},
                    outputs=outputs, params=CLUSTERS_PARAMS, log=tmp_path / "clusters.log", threads=2)
    # clusters are numbered by their centroid's mean usage: cluster c is the peak at bin 6c
    clusters = pl.read_parquet(outputs["clusters"])
    assert clusters["cluster"].to_list() == [p // 6 for p in peaks]
    shares = pl.read_csv(outputs["shares"])
    assert shares["tasks"].to_list() == [5] + [1] * 15
    assert shares["share"][0] == pytest.approx(5 / 20)
    centroids = pl.read_csv(outputs["centroids"])
    assert centroids.height == 16 * 100
    top = centroids.filter(pl.col("share") > 0.5).sort("cluster")
    assert top["bin_low"].to_list() == pytest.approx([6 * c / 100 for c in range(16)])
    assert "inertia 0" in (tmp_path / "clusters.log").read_text()


def test_janus_clusters_want_enough_tasks_a_cluster_and_say_so(tmp_path):
    """20 tasks for 16 clusters are the tasks themselves: with at least 10 a cluster asked, too little data, said."""
    long_tasks(tmp_path / "long.parquet", [0] * 4 + list(range(0, 96, 6)))
    outputs = {k: tmp_path / f for k, f in CLUSTERS_OUTPUTS.items()}
    rulescript.call(rulescript.load(SCRIPTS / "characterise_janus_clusters.py"), inputs={"long": tmp_path / "long.parquet"},
                    outputs=outputs, params={**CLUSTERS_PARAMS, "min_tasks": 10}, log=tmp_path / "clusters.log")
    status = insufficient.read_status(outputs["shares"])
    assert status is not None and status.reason == "20 long tasks for k = 16 clusters" and "160 long tasks" in status.needs


def test_janus_clusters_with_fewer_tasks_than_k_writes_status_outputs(tmp_path):
    long_tasks(tmp_path / "long.parquet", list(range(10)))
    outputs = {k: tmp_path / f for k, f in CLUSTERS_OUTPUTS.items()}
    script = rulescript.load(SCRIPTS / "characterise_janus_clusters.py")
    rulescript.call(script, inputs={"long": tmp_path / "long.parquet"}, outputs=outputs, params=CLUSTERS_PARAMS,
                    log=tmp_path / "clusters.log")
    for path in outputs.values():
        status = insufficient.read_status(path)
        assert status is not None, path
        assert status.analysis == status.origin == script.ANALYSIS
        assert "k=16" in status.reason and "(10 long tasks)" in status.reason


# ----------------------------------------------------------------------------- cpumem_tables

#: The rule's params: CPUMEM_SETTINGS from cpumem.schema.yaml's defaults.
CPUMEM_SETTINGS = {"eps": 1.25, "min_samples": 7, "scaling": "standard", "r2_min": 0.5, "cv_max": 0.05,
                   "flat_range_max": 1.1, "min_points": 20}


def test_cpumem_tables_shares_by_hand(tmp_path):
    # job: 1 2 3 4 5 6 7 — 3 Flat, 1 MultiFlat, 1 Slope (5 fitted), 1 BadlyFitted (6 classified), 1 TooFewPoints
    cats = ["Flat", "Flat", "Flat", "MultiFlat", "Slope", "BadlyFitted", "TooFewPoints"]
    pl.DataFrame({"job_id": np.arange(1, 8), "category": cats, "n_points": [100] * 6 + [5], "n_clusters": [1, 1, 1, 2, 1, 1, 0],
                  "noise_share": [0.0, 0.1, 0.0, 0.0, 0.0, 0.2, 0.0]},
                 schema=cpumem.CLASS_SCHEMA).write_parquet(tmp_path / "classes.parquet")
    pl.DataFrame({"job_id": np.arange(1, 8), "class": ["production"] * 2 + ["gratis"] * 5,
                  "tasks": [1] * 7}).write_parquet(tmp_path / "dominant.parquet")
    outputs = {"table": tmp_path / "shares.csv", "summary": tmp_path / "summary.csv"}
    rulescript.call(rulescript.load(SCRIPTS / "cpumem_tables.py"),
                    inputs={"classes": tmp_path / "classes.parquet", "dominant": tmp_path / "dominant.parquet",
                            "paper_shares": REPO / "workflow/papers/tables/beaumont-s42-shares.tsv"},
                    outputs=outputs, params={"settings": CPUMEM_SETTINGS}, log=tmp_path / "tables.log")
    table = pl.read_csv(outputs["table"])
    # the paper's shares from its table, beside ours in every scope
    assert dict(table.filter(pl.col("scope") == "gratis").select("category", "paper").iter_rows()) == {
        "Flat": 0.67, "MultiFlat": 0.065, "Slope": 0.265, "BadlyFitted": 0.5, "TooFewPoints": None}
    assert table["scope"].unique(maintain_order=True).to_list() == ["all", "gratis", "production"]
    overall = {r["category"]: r for r in table.filter(pl.col("scope") == "all").iter_rows(named=True)}
    assert {c: r["n_jobs"] for c, r in overall.items()} == {
        "Flat": 3, "MultiFlat": 1, "Slope": 1, "BadlyFitted": 1, "TooFewPoints": 1}
    assert overall["Flat"]["share_of_fitted"] == pytest.approx(3 / 5)
    assert overall["BadlyFitted"]["share_of_fitted"] is None
    assert overall["BadlyFitted"]["share_of_classified"] == pytest.approx(1 / 6)
    production = table.filter(pl.col("scope") == "production")
    assert production.filter(pl.col("category") == "Flat")["share_of_fitted"].item() == pytest.approx(1.0)
    measured = pl.read_csv(outputs["summary"], schema=measure.MEASUREMENT_COLUMNS)  # judged by the summary
    ours = dict(judged(measured.to_dicts()).select("quantity", "ours").iter_rows())
    assert ours["Flat (share of fitted jobs)"] == "60%"  # shown in % as the paper prints it
    assert ours["BadlyFitted (share of classified jobs)"] == "16.67%"
    assert (ours["jobs classified"], ours["jobs with too few points"]) == ("6", "1")
    assert ours["DBSCAN noise (share of the classified jobs' points)"] == "5%"  # (10 + 20) / 600 points


def test_cpumem_tables_passes_an_upstream_status_on(tmp_path):
    upstream = insufficient.Status("Beaumont §4.2, memory vs CPU per dominant job", "no dominant job", "a dominant job")
    insufficient.write_status([tmp_path / "classes.parquet"], upstream)
    pl.DataFrame({"job_id": [1], "class": ["gratis"]}).write_parquet(tmp_path / "dominant.parquet")
    outputs = {"table": tmp_path / "shares.csv", "summary": tmp_path / "summary.csv"}
    script = rulescript.load(SCRIPTS / "cpumem_tables.py")
    rulescript.call(script, inputs={"classes": tmp_path / "classes.parquet", "dominant": tmp_path / "dominant.parquet",
                                    "paper_shares": REPO / "workflow/papers/tables/beaumont-s42-shares.tsv"},
                    outputs=outputs, params={"settings": CPUMEM_SETTINGS}, log=tmp_path / "tables.log")
    for path in outputs.values():
        assert insufficient.read_status(path) == upstream.downstream(script.ANALYSIS)
    assert insufficient.read_status(outputs["table"]).origin == upstream.analysis


# ----------------------------------------------------------------------------- characterise_janus_summary


def test_janus_summary_writes_measurements_judged_against_janus_tsv(tmp_path):
    """Janus §3's tables of a trace without instantaneous samples (no Fig 1): the part is measurements (not rows),
    judged against workflow/papers/janus.tsv with no Fig 1 row and none not judged; §3.4's tolerance is its CI's
    half-width plus 5 points (Δ = 24: 45% within 30 ± (20 + 5))."""
    tables = {
        "fig2": pl.DataFrame({"kind": ["inst", "avg"], "median": [0.022, 0.017], "share_above_other": [0.98, 0.02]}),
        "fig3": pl.DataFrame({"kind": ["inst", "avg"], "intercept": [0.015, 0.0097], "intercept_lo": [0.0148, 0.0095],
                              "intercept_hi": [0.0152, 0.0099], "slope": [0.362, 0.312], "slope_lo": [0.357, 0.307],
                              "slope_hi": [0.368, 0.316], "n_tasks": [50, 50]}),
        "shares": pl.DataFrame({"cluster": [0, 1, 2], "share": [0.02, 0.126, 0.854]}),
        "table1": pl.DataFrame({"N": [10, 50], "samples": [1000, 1000], "ad_rejection": [0.98, 0.75], "mean_total": [0.27, 1.38]}),
        "fig6": pl.DataFrame({"N": [10, 50], "percentile": [99.9, 99.9], "median": [-0.07, -0.01], "share_underestimated": [0.8, 0.7]}),
    }
    inputs = {}
    for name, frame in tables.items():
        frame.write_csv(inputs.setdefault(name, tmp_path / f"{name}.csv"))
    pl.DataFrame({"delta": [12, 24], "n_tasks": [40, 20], "rejected": [12, 9], "share": [0.3, 0.45], "ci_lo": [0.2, 0.25],
                  "ci_hi": [0.4, 0.65], "jobs": [8, 5]}).write_csv(inputs.setdefault("s34", tmp_path / "s34.csv"))
    out = tmp_path / "characterise_janus.csv"
    rulescript.call(rulescript.load(SCRIPTS / "characterise_janus_summary.py"), inputs=inputs, outputs=[out],
                    params={"n_realizations": 10000}, log=tmp_path / "summary.log")
    from colocate.report import claims

    assert claims.read_measurements(out).height > 0
    rows = judged(pl.read_csv(out, schema=measure.MEASUREMENT_COLUMNS).to_dicts())
    quantities = rows["quantity"].to_list()
    assert not [q for q in quantities if q.startswith("Fig 1")]
    assert "not judged" not in rows["verdict"].to_list() and len(quantities) == 2 + 1 + 4 + 2 + 2 + 4 + 2
    s34 = rows.filter(pl.col("quantity") == "§3.4: K-S rejects time invariance, Δ = 24").row(0, named=True)
    assert (s34["ours"], s34["tolerance"], s34["within"]) == ("45.0%", "±25", True)
    fig6 = rows.filter(pl.col("quantity").str.starts_with("Fig 6")).select("ours_value", "within").rows()
    assert fig6 == [(-0.07, False), (-0.01, True)]  # 'close to 0': within ±0.05


# ----------------------------------------------------------------------------- janus_time_invariance

S34_OUTPUTS = {"tests": "ks.parquet", "table": "s34.csv", "figure": "s34.png"}
S34_PART = SCRIPTS / "characterise_janus_time_invariance_part.py"
FIG1_PART = SCRIPTS / "characterise_janus_fig1_part.py"


def _series(path, n_tasks: int, n_records: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    pl.DataFrame({
        "job_id": np.repeat(np.arange(n_tasks, dtype=np.int64), n_records) + 100 * seed,
        "task_index": np.zeros(n_tasks * n_records, dtype=np.int64),
        "start_time": np.tile(600_000_000 + 300_000_000 * np.arange(n_records, dtype=np.int64), n_tasks),
        "inst": rng.random(n_tasks * n_records, dtype=np.float32),
        "avg": rng.random(n_tasks * n_records, dtype=np.float32),
    }).write_parquet(path)


def _time_invariance(tmp_path, series, windows):
    """The part job over every bucket of ``series``, then the job that joins the parts (as the rules chain them)."""
    part = tmp_path / "part-0.parquet"
    rulescript.call(rulescript.load(S34_PART), inputs={"series": series}, outputs={"tests": part},
                    params={"buckets": list(range(len(series))), "windows": windows, "seed": 1}, log=tmp_path / "part.log")
    outputs = {k: tmp_path / f for k, f in S34_OUTPUTS.items()}
    rulescript.call(rulescript.load(SCRIPTS / "characterise_janus_time_invariance.py"), inputs={"tests": [part]},
                    outputs=outputs, params={"windows": windows, "alpha": 0.05}, log=tmp_path / "s34.log")
    return outputs


def test_time_invariance_on_too_short_a_trace_is_too_little_data(tmp_path):
    """Series of 44 records (a 3.7-hour slice) hold two windows of Δ = 12 but not of 36: every output says so,
    naming Δ and what it needs, and the run goes on."""
    _series(tmp_path / "series.parquet", 5, 44)
    outputs = _time_invariance(tmp_path, [tmp_path / "series.parquet"], [12, 36])
    for path in outputs.values():
        status = insufficient.read_status(path)
        assert status is not None, path
        assert "Δ (delta) [36]" in status.reason and status.needs == "long tasks with at least 2 × 36 records (360 minutes)"


def test_time_invariance_window_no_trace_can_hold_is_a_bad_setting(tmp_path):
    _series(tmp_path / "series.parquet", 5, 44)
    part = tmp_path / "part-0.parquet"
    with pytest.raises(ValueError, match=r"characterise\.janus\.windows: Δ \(delta\) \[5000\]"):
        rulescript.call(rulescript.load(S34_PART), inputs={"series": [tmp_path / "series.parquet"]},
                        outputs={"tests": part}, params={"buckets": [0], "windows": [12, 5000], "seed": 1},
                        log=tmp_path / "part.log")
    assert not part.exists()


@pytest.mark.parametrize(("script", "params", "output"), [
    (S34_PART, {"windows": [6, 12]}, "tests"),
    (FIG1_PART, {"ks": [1, 5, 20]}, "values"),
])
def test_bucket_parts_join_to_the_same_rows_whatever_the_grouping(tmp_path, script, params, output):
    """characterise.buckets_per_job only groups buckets into jobs: three buckets (one without long tasks) in one
    part, or one part each, give the same rows in the same order, since every bucket draws from its own stream."""
    series = []
    for b, (n_tasks, n_records) in enumerate([(6, 40), (0, 0), (4, 30)]):
        series.append(tmp_path / f"bucket-{b}.parquet")
        _series(series[-1], n_tasks, n_records, seed=b)
    script = rulescript.load(script)

    def part(buckets, name):
        out = tmp_path / f"{name}.parquet"
        rulescript.call(script, inputs={"series": [series[b] for b in buckets]}, outputs={output: out},
                        params={"buckets": buckets, "seed": 3, **params}, log=tmp_path / f"{name}.log")
        return pl.read_parquet(out)

    whole = part([0, 1, 2], "whole")
    apart = pl.concat([part([b], f"alone-{b}") for b in range(3)])
    assert whole.equals(apart) and whole.height > 0
    assert set(whole["job_id"].unique().to_list()) == {*range(6), *range(200, 204)}  # the empty bucket adds no row
