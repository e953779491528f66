"""The characterisation rules (Janus & Rzadca §3, Unuvar et al. §IV) in the tiny workflow run."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest
import yaml
from scipy import stats

from colocate import insufficient
from wfutil import (
    REPO,
    assert_config_rejected,
    bar_heights,
    box_medians,
    legend_texts,
    planned_rules,
    png_shape,
    snakemake,
    tick_labels,
    write_config,
)

pytestmark = pytest.mark.workflow

#: The section's defaults, as the rules see them (the tiny preset changes sizes and repetitions only).
_SCHEMA = yaml.safe_load((REPO / "workflow/schemas/characterise.schema.yaml").read_text())["properties"]
SEED, ALPHA = _SCHEMA["seed"]["default"], _SCHEMA["alpha"]["default"]
JANUS = {k: v.get("default") for k, v in _SCHEMA["janus"]["properties"].items()}
UNUVAR = {k: v.get("default") for k, v in _SCHEMA["unuvar"]["properties"].items()}
#: Table 1's R at the tiny scale (its realization matrix has fewer, so the rule draws the tasks again with it).
TINY_TABLE1_R = yaml.safe_load((REPO / "workflow/schemas/scales.yaml").read_text())["tiny"]["characterise"]["janus"]["table1_realizations"]

JANUS_FIGURES = [
    "janus_fig1_sampling", "janus_fig2_std_cdf", "janus_fig3_std_vs_mean", "janus_s34_time_invariance",
    "janus_fig4_centroids", "janus_fig4_elbow", "janus_fig5_totals", "janus_fig6_percentiles",
]
UNUVAR_FIGURES = ["unuvar_fig4_beta_fit", "unuvar_fig7_beta_fit", "unuvar_gaussian_vs_beta"]
#: The rules of workflow/rules/characterise.smk (other stages may be planned for their own reasons).
RULES = {
    "janus_fig1_sampling_part", "janus_fig1_sampling", "janus_variability", "janus_time_invariance_part",
    "janus_time_invariance", "janus_clusters", "janus_elbow",
    "janus_total_usage", "janus_fig5_totals", "janus_summary", "unuvar_aggregates", "unuvar_beta_fit",
    "unuvar_sweep", "notebook_characterisation",
}


def test_characterisation_outputs(tiny_run):
    for name in JANUS_FIGURES + UNUVAR_FIGURES:
        assert min(png_shape(tiny_run / f"results/synthetic-tiny/figures/{name}.png")[:2]) > 200, name
    long = pl.read_parquet(tiny_run / "results/synthetic-tiny/tasks/long_tasks.parquet")
    clusters = pl.read_parquet(tiny_run / "results/synthetic-tiny/characterise/task_clusters.parquet")
    assert clusters.height == long.height and clusters["cluster"].n_unique() == 16
    shares = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig4_cluster_shares.csv")
    assert shares["share"].sum() == pytest.approx(1.0)
    fig1 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig1_sampling.csv")
    assert fig1["k"][0] == 1 and fig1["n"][0] == long.height
    s34 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_s34_time_invariance.csv")
    assert s34["delta"].to_list() == [12, 24, 36] and ((s34["share"] > 0) & (s34["share"] < 1)).all()
    # tiny: 200 tasks have realizations, so Table 1 keeps N ≤ 200
    table1 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_table1_normality.csv")
    assert table1["N"].to_list() == [10, 20, 30, 50, 100, 150]  # the tiny preset's table1_sizes
    # the rejection rate is the share of the written samples whose A-D p-value is below α, inside its interval
    samples = pl.read_parquet(tiny_run / "results/synthetic-tiny/characterise/janus_total_usage_samples.parquet")
    rates = samples.filter(pl.col("N").is_in(table1["N"].implode())).group_by("N").agg(
        pl.len().alias("samples"), (pl.col("ad_pvalue") < ALPHA).mean().alias("rate")).sort("N")
    assert table1["samples"].to_list() == rates["samples"].to_list() == [100] * 6  # the tiny preset's repetitions
    assert table1["ad_rejection"].to_list() == pytest.approx(rates["rate"].to_list())
    assert ((table1["ad_rejection_lo"] <= table1["ad_rejection"]) & (table1["ad_rejection"] <= table1["ad_rejection_hi"])).all()
    lines = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig3_trend_lines.csv")
    assert lines["kind"].to_list() == ["inst", "avg"]
    sources = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/unuvar_aggregates.csv")
    assert sources["size"].to_list() == [18, 49, 88, 154]
    assert set(sources["source"]) <= {"machines", "trace", "realizations"}
    aggs = pl.read_parquet(tiny_run / "results/synthetic-tiny/characterise/unuvar_aggregates.parquet")
    peaks = aggs.group_by("size").agg(pl.col("utilisation").max())["utilisation"].to_numpy()
    assert np.allclose(peaks, 0.9)
    nb = (tiny_run / "results/synthetic-tiny/notebooks/02_characterisation.ipynb").read_text()
    assert '"output_type"' in nb and "Traceback" not in nb  # the executed copy, without errors
    summary = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "## Task characterisation (Janus & Rzadca §3)" in summary
    # the run's config.yaml changes the scale and (as the shipped one does) the placement load: the page says so
    assert "- `scale`: `\"tiny\"` (default `\"default\"`)" in summary and "- `placement.load_factor`: `0.93` (default `1.0`)" in summary
    assert "## Aggregated utilisation, Beta fit (Unuvar et al. §IV)" in summary
    assert "| Fig 3: inst std-vs-mean slope | 0.36 |" in summary


def beta_by_moments(u: np.ndarray) -> tuple[float, float]:
    """Unuvar eqs 7–8 by hand: α = R̄·c, β = (1 − R̄)·c with c = R̄(1 − R̄)/S̄² − 1 (S̄: std with ddof 1)."""
    m, v = float(u.mean()), float(u.var(ddof=1))
    c = m * (1 - m) / v - 1
    return m * c, (1 - m) * c


def test_unuvar_tables_follow_from_the_written_aggregates(tiny_run):
    """Tables II/IV, VI and VII and the Beta rows of the model comparison, recomputed from the aggregates
    parquet with numpy and scipy.stats: the Beta by moments, its K-S test, and P(U ≥ U*) fitted and actual.

    Catches a table written from other aggregates (another size, the usage before normalising to the peak),
    a std with ddof 0 in eqs 7–8, a K-S test against another distribution, and P(U > U*) for P(U ≥ U*).
    """
    r = tiny_run / "results/synthetic-tiny"
    aggs = pl.read_parquet(r / "characterise/unuvar_aggregates.parquet")
    statistics = pl.read_csv(r / "tables/unuvar_table2_4_statistics.csv")
    ks = pl.read_csv(r / "tables/unuvar_table6_ks.csv")
    over = pl.read_csv(r / "tables/unuvar_table7_overutilisation.csv")
    models = pl.read_csv(r / "tables/unuvar_gaussian_vs_beta.csv").filter(pl.col("model") == "beta")
    assert statistics["size"].to_list() == ks["size"].to_list() == over["size"].to_list() == [18, 49, 88, 154]
    for size in statistics["size"]:
        u = aggs.filter(pl.col("size") == size)["utilisation"].to_numpy()
        row = statistics.filter(pl.col("size") == size).row(0, named=True)
        assert (row["observations"], row["max"]) == (u.size, pytest.approx(0.9))  # normalised to a 90% peak
        assert (row["mean"], row["std"]) == (pytest.approx(u.mean()), pytest.approx(u.std(ddof=1)))
        a, b = beta_by_moments(u)
        dist = stats.beta(a, b)
        m = models.filter(pl.col("size") == size)
        assert m["param_1"].to_list() == pytest.approx([a] * m.height) and m["param_2"].to_list() == pytest.approx([b] * m.height)
        test = stats.kstest(u, dist.cdf)
        k = ks.filter(pl.col("size") == size).row(0, named=True)
        assert (k["ks_d"], k["ks_p"]) == (pytest.approx(test.statistic), pytest.approx(test.pvalue))
        assert k["rejected"] == (test.pvalue < k["alpha"])
        o = over.filter(pl.col("size") == size).row(0, named=True)
        assert o["actual"] == pytest.approx(float(np.mean(u >= o["threshold"])))
        assert o["estimated"] == pytest.approx(float(dist.sf(o["threshold"])))
        assert o["error"] == pytest.approx(o["actual"] - o["estimated"])
        for t in m.iter_rows(named=True):  # every tail threshold of the comparison
            assert (t["actual"], t["estimated"]) == (pytest.approx(float(np.mean(u >= t["threshold"]))), pytest.approx(float(dist.sf(t["threshold"]))))


def test_janus_figures_show_the_tables(tiny_run):
    """Janus Figs 1–6 and §3.4 drawn from the run's tables (as the rule scripts draw them) show those tables, and
    the tables agree with the values written beside them (recomputed here with numpy).

    Catches a figure drawn from the wrong kind (avg for inst), a lost sample size, cluster or Δ, a box or bar
    off its table row, a trend line not the table's OLS, a Fig 5 Gaussian of another sample of tasks, and
    tables summarising other values than the ones written (a quantile of another k, a recount of clusters).
    """
    import matplotlib.pyplot as plt

    from colocate.analysis import characterise as ch
    from colocate.figures import characterise as figs

    r = tiny_run / "results/synthetic-tiny"
    long = pl.read_parquet(r / "tasks/long_tasks.parquet")

    # Fig 1: the box table is the written differences' quartiles per k; the figure's boxes are its rows
    values = pl.read_parquet(r / "characterise/janus_fig1_sampling.parquet")
    box = pl.read_csv(r / "tables/janus_fig1_sampling.csv")
    for row in box.iter_rows(named=True):
        v = values.filter(pl.col("k") == row["k"])["rel_diff"].to_numpy()
        assert row["n"] == v.size and (row["q1"], row["median"], row["q3"]) == pytest.approx(np.percentile(v, [25, 50, 75]))
    fig = figs.janus_fig1_sampling(box)
    (ax,) = fig.axes
    assert tick_labels(ax) == [str(k) for k in box["k"]]
    spans = [(p.get_path().vertices[:, 1].min(), p.get_path().vertices[:, 1].max()) for p in ax.patches]
    np.testing.assert_allclose(spans, box.select("q1", "q3").to_numpy())
    flat = {round(float(line.get_ydata()[0]), 9) for line in ax.lines if line.get_ydata()[0] == line.get_ydata()[-1]}
    assert {round(m, 9) for m in box["median"]} <= flat
    plt.close(fig)

    # Fig 2: one ECDF per kind, of the long tasks' std
    fig = figs.janus_fig2_std_cdf(long)
    (ax,) = fig.axes
    curves = sorted(tuple(line.get_xdata()[1:]) for line in ax.lines if line.get_drawstyle() == "steps-post")
    want = sorted(tuple(np.sort(long[f"{k}_std"].to_numpy())) for k in ("inst", "avg"))
    assert len(curves) == 2 and all(np.allclose(a, b) for a, b in zip(curves, want))
    plt.close(fig)

    # Fig 3: the trend lines table is numpy's least squares; panels (a), (b) draw it over the tasks' histogram
    lines = pl.read_csv(r / "tables/janus_fig3_trend_lines.csv")
    for row in lines.iter_rows(named=True):
        slope, intercept = np.polyfit(long[f"{row['kind']}_mean"].to_numpy(), long[f"{row['kind']}_std"].to_numpy(), 1)
        assert (row["slope"], row["intercept"], row["n_tasks"]) == (pytest.approx(slope), pytest.approx(intercept), long.height)
    mean_edges, std_edges = ch.heatmap_edges(long, JANUS["heatmap_bins"], JANUS["heatmap_quantile"])
    bands = ch.trend_bands(long, np.linspace(0, mean_edges[-1], 100), ALPHA)
    fig = figs.janus_fig3_std_vs_mean(ch.std_heatmaps(long, mean_edges, std_edges), mean_edges, std_edges, bands, lines)
    for ax, kind in zip(fig.axes[:2], ("inst", "avg")):
        (image,) = ax.images
        counts, _, _ = np.histogram2d(long[f"{kind}_mean"], long[f"{kind}_std"], bins=[mean_edges, std_edges])
        np.testing.assert_allclose(image.get_array().filled(0), counts.T / long.height)
        row = lines.filter(pl.col("kind") == kind).row(0, named=True)
        (trend,) = ax.lines
        np.testing.assert_allclose(trend.get_ydata(), row["intercept"] + row["slope"] * np.asarray(trend.get_xdata()), rtol=1e-9)
    plt.close(fig)

    # §3.4: the shares are the written tests' rejections at α; one p-value ECDF per Δ, one bar per Δ
    tests = pl.read_parquet(r / "characterise/janus_s34_ks.parquet")
    shares = pl.read_csv(r / "tables/janus_s34_time_invariance.csv")
    recount = tests.group_by("delta").agg(pl.len().alias("n"), (pl.col("pvalue") < ALPHA).sum().alias("rejected")).sort("delta")
    assert shares["n_tasks"].to_list() == recount["n"].to_list() and shares["rejected"].to_list() == recount["rejected"].to_list()
    fig = figs.janus_s34_time_invariance(tests, shares, ALPHA)
    ax1, ax2 = fig.axes
    curves = sorted(tuple(line.get_xdata()[1:]) for line in ax1.lines if line.get_drawstyle() == "steps-post")
    want = sorted(tuple(np.sort(g["pvalue"].to_numpy())) for _, g in tests.group_by("delta"))
    assert len(curves) == shares.height and all(np.allclose(a, b) for a, b in zip(curves, want))
    assert bar_heights(ax2) == pytest.approx({(0, f"Δ = {d}"): s for d, s in shares.select("delta", "share").iter_rows()})
    plt.close(fig)

    # Fig 4: the shares recount the written clusters; a panel per centroid, its bars up to 0.5, titled with its share
    clusters = pl.read_parquet(r / "characterise/task_clusters.parquet")
    cshares = pl.read_csv(r / "tables/janus_fig4_cluster_shares.csv")
    assert cshares["tasks"].to_list() == np.bincount(clusters["cluster"].to_numpy(), minlength=cshares.height).tolist()
    cen = pl.read_csv(r / "tables/janus_fig4_centroids.csv").sort("cluster", "bin_low")
    centroids = cen["share"].to_numpy().reshape(cshares.height, -1)
    np.testing.assert_allclose(centroids.sum(axis=1), 1, rtol=1e-5)  # each centre is a histogram
    fig = figs.janus_fig4_centroids(centroids, cshares)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == cshares.height == JANUS["kmeans_k"]
    for c, ax in enumerate(panels):
        np.testing.assert_allclose([b.get_height() for b in ax.patches], 100 * centroids[c, : centroids.shape[1] // 2], rtol=1e-6)
        assert f"{cshares['share'][c]:.1%} of tasks" in ax.get_title()
    plt.close(fig)

    # the elbow: inertia per task is inertia over the tasks clustered, drawn against k with k marked
    elbow = pl.read_csv(r / "tables/janus_fig4_elbow.csv")
    assert (elbow["inertia"] / elbow["inertia_per_task"]).round(6).unique().to_list() == [float(min(long.height, JANUS["elbow_max_tasks"]))]
    assert (elbow["inertia"].diff().drop_nulls() < 0).mean() > 0.8  # more clusters, less inertia (k-means is seeded, not exact)
    fig = figs.janus_fig4_elbow(elbow, JANUS["kmeans_k"])
    (ax,) = fig.axes
    curve, mark = ax.lines
    assert curve.get_xdata().tolist() == elbow["k"].to_list() and np.allclose(curve.get_ydata(), elbow["inertia_per_task"])
    assert list(mark.get_xdata()) == [JANUS["kmeans_k"]] * 2
    plt.close(fig)

    # Fig 5: one panel per N; the curve is the written Gaussian, the totals' mean is Σμ_i within 5 standard errors
    gaussians = pl.read_csv(r / "tables/janus_fig5_totals.csv")
    inst = np.load(r / "realizations/inst.npy", mmap_mode="r")
    mu, sigma = ch.task_moments(pl.read_parquet(r / "realizations/tasks.parquet"), long)
    totals, _ = ch.example_totals(inst, mu, sigma, gaussians["N"].to_list(), ch.stream(SEED, "janus_fig5"))
    fig = figs.janus_fig5_totals(totals, gaussians)
    assert len(fig.axes) == gaussians.height
    for ax, g in zip(fig.axes, gaussians.iter_rows(named=True)):
        t = totals.filter(pl.col("N") == g["N"])["total"].to_numpy()
        assert abs(t.mean() - g["mu_j"]) < 5 * g["sigma_j"] / np.sqrt(t.size)
        (curve,) = ax.lines
        np.testing.assert_allclose(curve.get_ydata(), stats.norm.pdf(curve.get_xdata(), g["mu_j"], g["sigma_j"]))
        assert sum(b.get_height() * b.get_width() for b in ax.patches) == pytest.approx(1.0)  # a density
        assert ax.get_title() == f"N = {g['N']}"
    plt.close(fig)

    # Fig 6: (Gaussian − empirical) / empirical percentile from the written samples; a violin per N and k spans its values
    samples = pl.read_parquet(r / "characterise/janus_total_usage_samples.parquet")
    table = pl.read_csv(r / "tables/janus_fig6_percentiles.csv")
    parts = []
    for col in (c for c in samples.columns if c.startswith("empirical_p")):
        k = float(col.removeprefix("empirical_p").replace("_", "."))
        parts.append(samples.filter(pl.col(col) != 0).select(
            "N", pl.lit(k).alias("percentile"), ((pl.col(col.replace("empirical", "gaussian")) - pl.col(col)) / pl.col(col)).alias("rel_diff")))
    diffs = pl.concat(parts).filter(pl.col("N").is_in(JANUS["fig6_sizes"]))
    for row in table.iter_rows(named=True):
        v = diffs.filter((pl.col("N") == row["N"]) & (pl.col("percentile") == row["percentile"]))["rel_diff"].to_numpy()
        assert (row["samples"], row["median"]) == (v.size, pytest.approx(np.median(v)))
        assert row["share_underestimated"] == pytest.approx(np.mean(v < 0))
    fig = figs.janus_fig6_percentiles(ch.percentile_differences(samples, JANUS["fig6_sizes"]))
    (ax,) = fig.axes
    violins = sorted((round(float(c.get_paths()[0].vertices[:, 1].min()), 9), round(float(c.get_paths()[0].vertices[:, 1].max()), 9))
                     for c in ax.collections)
    spans = diffs.group_by("N", "percentile").agg(pl.col("rel_diff").min().alias("lo"), pl.col("rel_diff").max().alias("hi"))
    assert violins == sorted((round(lo, 9), round(hi, 9)) for lo, hi in spans.select("lo", "hi").iter_rows())  # cut = 0
    assert tick_labels(ax) == [str(n) for n in JANUS["fig6_sizes"]] and legend_texts(ax) == ["95th", "99th", "99.9th"]
    plt.close(fig)


def test_unuvar_figures_show_the_fits(tiny_run):
    """Unuvar Figs 4–8 drawn from the aggregates with the Beta the tables give, and the Gaussian-vs-Beta figure from
    the rule's sweep: the Q-Q points are the sorted utilisation against that Beta's quantiles, the pdf and the shaded
    P(U ≥ U*) are its own, the series is the aggregate; the boxes' medians are the sweep table's.

    Catches a panel showing another aggregate or another Beta than the tables' (e.g. the Gaussian's), a
    tail probability computed at another threshold, and a sweep figure out of step with its table.
    """
    import matplotlib.pyplot as plt

    from colocate.analysis import aggregate, betafit
    from colocate.analysis import characterise as ch
    from colocate.figures import characterise as figs

    r = tiny_run / "results/synthetic-tiny"
    aggs = pl.read_parquet(r / "characterise/unuvar_aggregates.parquet")
    models = pl.read_csv(r / "tables/unuvar_gaussian_vs_beta.csv").filter(pl.col("model") == "beta")
    fits = models.group_by("size", maintain_order=True).agg(pl.col("param_1").first().alias("alpha"), pl.col("param_2").first().alias("beta"))
    fits = fits.join(aggs.group_by("size").agg(pl.col("source").first()), on="size")
    sizes = fits["size"].to_list()
    fig = figs.unuvar_beta_fit({n: aggs.filter(pl.col("size") == n) for n in sizes}, fits, UNUVAR["threshold"], "Figs 4-8")
    assert len(fig.axes) == 3 * len(sizes)
    for (qq, hist, series), f in zip(np.reshape(fig.axes, (-1, 3)), fits.iter_rows(named=True)):
        u = aggs.filter(pl.col("size") == f["size"])["utilisation"].to_numpy()
        dist = stats.beta(f["alpha"], f["beta"])
        points = qq.lines[0]
        n = u.size
        np.testing.assert_allclose(points.get_ydata(), np.sort(u))
        np.testing.assert_allclose(points.get_xdata(), dist.ppf(np.arange(1, n + 1) / (n + 1)), rtol=1e-6)
        pdf = next(line for line in hist.lines if line.get_label() == "fitted Beta pdf")
        np.testing.assert_allclose(pdf.get_ydata(), dist.pdf(pdf.get_xdata()))
        tail = f"P(U ≥ {UNUVAR['threshold']:g}) = {dist.sf(UNUVAR['threshold']):.3f}\nactual: {np.mean(u >= UNUVAR['threshold']):.3f}"
        assert any(tail in t for t in legend_texts(hist))
        observed = next(line for line in series.lines if line.get_label() == "observed")
        np.testing.assert_allclose(observed.get_ydata(), u)
        if f["source"] in ("machines", "trace"):  # at the windows' times in the trace
            np.testing.assert_allclose(observed.get_xdata(), aggs.filter(pl.col("size") == f["size"])["time_days"].to_numpy())
    plt.close(fig)

    table = pl.read_csv(r / "tables/unuvar_gaussian_vs_beta_sweep.csv")
    matrix = np.load(r / f"realizations/{UNUVAR['usage']}.npy", mmap_mode="r")
    sets = aggregate.colocated_sets(matrix, table["size"].unique(maintain_order=True).to_list(), UNUVAR["observations"],
                                    int(table["aggregates"][0]), ch.stream(SEED, "unuvar_sweep"))
    sweep = betafit.model_sweep(aggregate.utilisation(sets, ["size", "rep"], UNUVAR["peak"]), UNUVAR["tail_thresholds"])
    fig = figs.unuvar_gaussian_vs_beta(sweep, UNUVAR["threshold"])
    ax1, ax2 = fig.axes
    hues = legend_texts(ax1)
    at = table.filter(pl.col("threshold") == UNUVAR["threshold"])
    want = {(hues.index(m), str(n)): d for n, m, d in at.select("size", "model", "median_ks_d").iter_rows()}
    assert box_medians(ax1) == pytest.approx(want)
    errors = sweep.filter(pl.col("threshold") == UNUVAR["threshold"]).group_by("size", "model").agg(pl.col("error").median())
    assert box_medians(ax2) == pytest.approx({(hues.index(m), str(n)): e for n, m, e in errors.iter_rows()})
    plt.close(fig)


def test_a_characterisation_setting_reruns_only_what_reads_it(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, characterise={"unuvar": {"threshold": 0.85}})
    assert planned_rules(work) & RULES == {"unuvar_beta_fit", "unuvar_sweep", "notebook_characterisation"}
    write_config(work, characterise={"janus": {"windows": [12, 24]}})
    assert planned_rules(work) & RULES == {"janus_time_invariance_part", "janus_time_invariance", "janus_summary",
                                           "notebook_characterisation"}
    write_config(work, characterise={"janus": {"sampling_ks": [1, 2, 5]}})
    assert planned_rules(work) & RULES == {"janus_fig1_sampling_part", "janus_fig1_sampling", "janus_summary"}
    # the level is the joins' business: the parts, which read every record, stay
    write_config(work, characterise={"alpha": 0.01})
    assert not planned_rules(work) & {"janus_fig1_sampling_part", "janus_time_invariance_part"}


def test_bucket_parts_of_one_bucket_join_to_the_same_bytes(tiny_run, tmp_path):
    """``characterise.buckets_per_job: 1`` splits Fig 1 and §3.4 into one job per bucket, named by its buckets (so
    no file of the old grouping is read again); the joins write the same bytes as the default's single part."""
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    r = "results/synthetic-tiny"
    joined = [f"{r}/characterise/janus_fig1_sampling.parquet", f"{r}/tables/janus_fig1_sampling.csv",
              f"{r}/characterise/janus_s34_ks.parquet", f"{r}/tables/janus_s34_time_invariance.csv"]
    before = {name: (work / name).read_bytes() for name in joined}
    assert sorted(p.name for p in (work / r / "characterise/janus_s34").iterdir()) == ["buckets-0-3.parquet"]
    write_config(work, characterise={"buckets_per_job": 1})
    snakemake(work, *joined)
    for table in ("janus_fig1", "janus_s34"):
        names = sorted(p.name for p in (work / r / "characterise" / table).iterdir())
        assert names == ["buckets-0-0.parquet", "buckets-0-3.parquet", "buckets-1-1.parquet", "buckets-2-2.parquet",
                         "buckets-3-3.parquet"], table
    assert {name: (work / name).read_bytes() for name in joined} == before


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"janus": {"kmeans_k": 0}}, "kmeans_k"),
        ({"unuvar": {"source": "racks"}}, "source"),
        ({"janus": {"kmeans": 16}}, "kmeans"),
        ({"janus": {"table1_sizes": [1000, 2000]}}, "table1_sizes"),
    ],
)
def test_invalid_characterisation_config_is_rejected_naming_the_key(tmp_path, section, key):
    assert_config_rejected(tmp_path, key, characterise=section)


def test_bad_sizes_fail_the_job_naming_the_parameter(tiny_run, tmp_path):
    """A window Δ that no 29-day trace can hold twice fails its job naming Δ (delta) and leaves no output; k larger
    than the number of long tasks is too little data, not bad input: k-means writes its outputs with the
    reason, naming k."""
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, characterise={"janus": {"windows": [100_000], "kmeans_k": 100_000}})
    res = snakemake(work, "--keep-going", "results/synthetic-tiny/tables/janus_s34_time_invariance.csv",
                    "results/synthetic-tiny/characterise/task_clusters.parquet", check=False)
    assert res.returncode != 0
    s34_log = (work / "results/synthetic-tiny/logs/characterise/janus_time_invariance/buckets-0-3.log").read_text()
    out = res.stdout + res.stderr
    assert "delta" in s34_log + out and "100000" in s34_log + out
    assert "k=100000" in (work / "results/synthetic-tiny/logs/characterise/janus_clusters.log").read_text()
    assert not (work / "results/synthetic-tiny/characterise/janus_s34/buckets-0-3.parquet").exists()  # the failed job's
    status = insufficient.read_status(work / "results/synthetic-tiny/characterise/task_clusters.parquet")
    assert status is not None and "k=100000 is larger than the number of tasks" in status.reason


def test_table1_draws_study_measures_the_spread_of_the_rates(tiny_run):
    """studies/table1_draws.py (the evidence behind Table 1's cause) on a finished run: one line per N with each
    draw's rate in [0, 1], and mean, min and max that order as they must."""
    import subprocess
    import sys

    run = tiny_run / "results/synthetic-tiny"
    out = subprocess.run([sys.executable, str(REPO / "studies/table1_draws.py"), str(run), "--draws", "3",
                          "--repetitions", "30", "--realizations", "300", "--sizes", "5", "10", "--seed", str(SEED)],
                         capture_output=True, text=True, check=True).stdout
    assert out.count("  draw ") == 3 and out.count("the run's draw: ") == 1
    table = [line.split() for line in out.splitlines() if line.split()[:1] in (["5"], ["10"])]
    assert [int(r[0]) for r in table] == [5, 10]
    for _, mean, lo, hi, own, _paper in table:
        assert 0 <= float(lo) <= float(mean) <= float(hi) <= 1 and 0 <= float(own) <= 1
    # the run's draw is the rule's: at the rule's settings it gives the run's own Table 1
    ran = pl.read_csv(run / "tables/janus_table1_normality.csv")
    settings = ["--draws", "1", "--repetitions", str(ran["samples"][0]), "--sizes", *map(str, ran["N"].to_list()),
                "--seed", str(SEED), "--realizations", str(TINY_TABLE1_R)]
    again = subprocess.run([sys.executable, str(REPO / "studies/table1_draws.py"), str(run), *settings],
                           capture_output=True, text=True, check=True).stdout
    own = [float(v) for v in next(x for x in again.splitlines() if "the run's draw: " in x).split(": ")[1].split(" / ")]
    assert own == pytest.approx(ran["ad_rejection"].to_list(), abs=5e-4)
    bad = subprocess.run([sys.executable, str(REPO / "studies/table1_draws.py"), str(tiny_run)], capture_output=True, text=True)
    assert bad.returncode != 0 and "not a finished run" in bad.stderr
