# Task characterisation (Janus & Rzadca §3) and aggregated utilisation of co-located tasks (Unuvar et al. §IV).
# The science lives in colocate.analysis.characterise, colocate.analysis.aggregate and colocate.analysis.betafit.

CH = config["characterise"]
CH_JANUS = CH["janus"]
CH_UNUVAR = CH["unuvar"]
CH_N_TASKS = config["realizations"]["n_tasks"]
CH_CATEGORY_J = "Characterisation (Janus & Rzadca §3)"
CH_CATEGORY_U = "Aggregated utilisation (Unuvar et al. §IV)"
# Sample sizes drawn from the realization matrix cannot exceed its N tasks: larger ones are skipped (and said).
CH_SIZES = {
    f"{name}.{key}": [n for n in section[key] if n <= CH_N_TASKS]
    for name, section, keys in (
        ("janus", CH_JANUS, ("fig5_sizes", "table1_sizes", "fig6_sizes")),
        ("unuvar", CH_UNUVAR, ("sizes", "sweep_sizes")),
    )
    for key in keys
}
for _key, _kept in CH_SIZES.items():
    _asked = CH_JANUS[_key.split(".")[1]] if _key.startswith("janus") else CH_UNUVAR[_key.split(".")[1]]
    if not _kept:
        raise ValueError(f"config key characterise.{_key}: every size exceeds realizations.n_tasks = {CH_N_TASKS}")
    if len(_kept) < len(_asked) and _key not in _WARNED:
        _WARNED.add(_key)
        logger.warning(
            f"colocate: characterise.{_key}: sizes {sorted(set(_asked) - set(_kept))} exceed "
            f"realizations.n_tasks = {CH_N_TASKS}; skipped"
        )
CH_OBSERVATIONS = min(CH_UNUVAR["observations"], config["realizations"]["n_realizations"])
CH_SERIES = expand(f"{RESULTS}/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS)
# Fig 1 and §3.4 read every long task's records: a job per `characterise.buckets_per_job` buckets, then one that
# joins them, so that no one job reads the whole trace (the cluster's critical path; same bytes for any value)
CH_PARTS = bucket_parts(CH["buckets_per_job"])

TARGETS.append(
    (
        ("entities", "usage_series"),
        [
            f"{RESULTS}/figures/janus_fig2_std_cdf.png",
            f"{RESULTS}/figures/janus_fig3_std_vs_mean.png",
            f"{RESULTS}/figures/janus_s34_time_invariance.png",
            f"{RESULTS}/figures/janus_fig4_centroids.png",
            f"{RESULTS}/figures/janus_fig4_elbow.png",
            f"{RESULTS}/figures/janus_fig5_totals.png",
            f"{RESULTS}/figures/janus_fig6_percentiles.png",
            f"{RESULTS}/tables/janus_table1_normality.csv",
            f"{RESULTS}/characterise/task_clusters.parquet",
            f"{RESULTS}/figures/unuvar_fig4_beta_fit.png",
            f"{RESULTS}/figures/unuvar_fig7_beta_fit.png",
            f"{RESULTS}/figures/unuvar_gaussian_vs_beta.png",
            f"{RESULTS}/figures/characterisation_clusters.png",
            f"{RESULTS}/figures/characterisation_table1.png",
            f"{RESULTS}/notebooks/02_characterisation.ipynb",
            f"{RESULTS}/notebooks/02_characterisation.html",
        ],
    )
)
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/characterise_janus.csv"))
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/characterise_unuvar.csv"))
NEEDS["characterisation"] = ("Task characterisation (Janus & Rzadca §3; Unuvar et al. §IV)", ("entities", "usage_series"))
# Fig 1 compares a sampled instantaneous usage with the 5-minute mean: a trace with only the window's maximum has none
TARGETS.append((("entities", "usage_series", "inst_usage"), [f"{RESULTS}/figures/janus_fig1_sampling.png"]))
NEEDS["janus_fig1"] = ("Janus Fig 1, sampled inst against the 5-minute mean (§3.2)", ("usage_series", "inst_usage"))


rule janus_fig1_sampling_part:
    input:
        series=lambda wc: bucket_series(CH_PARTS[wc.part]),
    output:
        values=f"{RESULTS}/characterise/janus_fig1/{{part}}.parquet",
    wildcard_constraints:
        part=r"buckets-\d+-\d+",
    params:
        buckets=lambda wc: CH_PARTS[wc.part],
        ks=CH_JANUS["sampling_ks"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "prep.tasks", "io"),
    log:
        f"{RESULTS}/logs/characterise/janus_fig1_sampling/{{part}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_fig1_sampling/{{part}}.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # one bucket's records at a time (five float64 columns, sorted, plus one permutation per k): peak 137 MB
        # (0.14 MB buckets, the 2-shard slice), 182 MB (1.7 MB, the default run) and 768-818 MB at a full bucket's
        # 27 MB, 4.8 M records (bench/memory.py; docs/performance.md)
        mem_mb=largest_input_mem(180, 28),
        runtime=60,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_fig1_part.py"


rule janus_fig1_sampling:
    input:
        values=expand(f"{RESULTS}/characterise/janus_fig1/{{part}}.parquet", part=CH_PARTS),
        # its status says why when the trace has no long task
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        values=f"{RESULTS}/characterise/janus_fig1_sampling.parquet",
        table=report(
            f"{RESULTS}/tables/janus_fig1_sampling.csv",
            caption="../report/characterise_janus_fig1.rst",
            category=CH_CATEGORY_J,
        ),
        figure=report(
            f"{RESULTS}/figures/janus_fig1_sampling.png",
            caption="../report/characterise_janus_fig1.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__", "io"),
    log:
        f"{RESULTS}/logs/characterise/janus_fig1_sampling.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_fig1_sampling.tsv"
    threads: 1
    resources:
        # every long task's differences (k, rel_diff: ~24 B a row in memory, ~10 on disk), read and written once
        mem_mb=lambda wc, input: int(420 + 8 * size_mb(input.values)),
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_fig1.py"


rule janus_variability:
    input:
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        fig2_table=report(
            f"{RESULTS}/tables/janus_fig2_std.csv",
            caption="../report/characterise_janus_fig2.rst",
            category=CH_CATEGORY_J,
        ),
        fig2=report(
            f"{RESULTS}/figures/janus_fig2_std_cdf.png",
            caption="../report/characterise_janus_fig2.rst",
            category=CH_CATEGORY_J,
        ),
        fig3_table=report(
            f"{RESULTS}/tables/janus_fig3_trend_lines.csv",
            caption="../report/characterise_janus_fig3.rst",
            category=CH_CATEGORY_J,
        ),
        fig3=report(
            f"{RESULTS}/figures/janus_fig3_std_vs_mean.png",
            caption="../report/characterise_janus_fig3.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        alpha=CH["alpha"],
        bins=CH_JANUS["heatmap_bins"],
        quantile=CH_JANUS["heatmap_quantile"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__"),
    log:
        f"{RESULTS}/logs/characterise/janus_variability.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_variability.tsv"
    threads: 1
    resources:
        # peak 337 MB (0.4 MB in) / 361 MB (3.0 MB in) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=fitted_mem(500, 10),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_variability.py"


rule janus_time_invariance_part:
    input:
        series=lambda wc: bucket_series(CH_PARTS[wc.part]),
    output:
        tests=f"{RESULTS}/characterise/janus_s34/{{part}}.parquet",
    wildcard_constraints:
        part=r"buckets-\d+-\d+",
    params:
        buckets=lambda wc: CH_PARTS[wc.part],
        windows=CH_JANUS["windows"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "prep.tasks", "io", "trace"),
    log:
        f"{RESULTS}/logs/characterise/janus_time_invariance/{{part}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_time_invariance/{{part}}.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # one bucket's records at a time: peak 195 MB (0.14 MB buckets, the 2-shard slice), 236 MB (1.7 MB, the
        # default run) and 696-709 MB at a full bucket's 27 MB, 4.8 M records (bench/memory.py; docs/performance.md)
        mem_mb=largest_input_mem(250, 22),
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_time_invariance_part.py"


rule janus_time_invariance:
    input:
        tests=expand(f"{RESULTS}/characterise/janus_s34/{{part}}.parquet", part=CH_PARTS),
        # its status says why when the trace has no long task
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        tests=f"{RESULTS}/characterise/janus_s34_ks.parquet",
        table=report(
            f"{RESULTS}/tables/janus_s34_time_invariance.csv",
            caption="../report/characterise_janus_s34.rst",
            category=CH_CATEGORY_J,
        ),
        figure=report(
            f"{RESULTS}/figures/janus_s34_time_invariance.png",
            caption="../report/characterise_janus_s34.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        windows=CH_JANUS["windows"],
        alpha=CH["alpha"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__", "io"),
    log:
        f"{RESULTS}/logs/characterise/janus_time_invariance.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_time_invariance.tsv"
    threads: 1
    resources:
        # every long task's tests (8 columns, ~64 B a row in memory) and the cluster-robust OLS per Δ
        mem_mb=lambda wc, input: int(420 + 8 * size_mb(input.tests)),
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_time_invariance.py"


rule janus_clusters:
    input:
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        clusters=f"{RESULTS}/characterise/task_clusters.parquet",
        shares=report(
            f"{RESULTS}/tables/janus_fig4_cluster_shares.csv",
            caption="../report/characterise_janus_fig4.rst",
            category=CH_CATEGORY_J,
        ),
        centroids=report(
            f"{RESULTS}/tables/janus_fig4_centroids.csv",
            caption="../report/characterise_janus_fig4.rst",
            category=CH_CATEGORY_J,
        ),
        figure=report(
            f"{RESULTS}/figures/janus_fig4_centroids.png",
            caption="../report/characterise_janus_fig4.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        k=CH_JANUS["kmeans_k"],
        min_tasks=CH_JANUS["kmeans_min_tasks"],
        n_init=CH_JANUS["kmeans_n_init"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__", "io"),
    log:
        f"{RESULTS}/logs/characterise/janus_clusters.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_clusters.tsv"
    threads: 1
    resources:
        # per long task: its histogram as float32 and float64 (tasks × 100) and k-means' work, ~2 KB; the file's
        # bytes say little (sparse histograms compress). Peak 1,777 MB at 800,000 tasks (bench/janus_clusters.py)
        mem_mb=lambda wc, input: int(1.3 * (250 + 2000 * parquet_rows(input.long) / 2**20)),
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_clusters.py"


rule janus_elbow:
    input:
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        table=report(
            f"{RESULTS}/tables/janus_fig4_elbow.csv",
            caption="../report/characterise_janus_elbow.rst",
            category=CH_CATEGORY_J,
        ),
        figure=report(
            f"{RESULTS}/figures/janus_fig4_elbow.png",
            caption="../report/characterise_janus_elbow.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        k=CH_JANUS["kmeans_k"],
        k_range=CH_JANUS["elbow_k"],
        max_tasks=CH_JANUS["elbow_max_tasks"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__"),
    log:
        f"{RESULTS}/logs/characterise/janus_elbow.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_elbow.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # every task's histogram read densely (grows with the long tasks) and a sparse sample of at most
        # elbow_max_tasks clustered: peak 289 MB (0.4 MB in) / 377 MB (3.0 MB) / 391 MB (4.5 MB) on the default
        # run / the 2- and 8-shard paper-scale slices (bench/memory.py)
        mem_mb=fitted_mem(350, 20),
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_elbow.py"


rule janus_total_usage:
    input:
        inst=f"{RESULTS}/realizations/inst.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
        long=f"{RESULTS}/tasks/long_tasks.parquet",
        # read only when Table 1's R exceeds the matrix's: the tasks' realizations are drawn again
        series=CH_SERIES,
    output:
        samples=f"{RESULTS}/characterise/janus_total_usage_samples.parquet",
        table1=report(
            f"{RESULTS}/tables/janus_table1_normality.csv",
            caption="../report/characterise_janus_table1.rst",
            category=CH_CATEGORY_J,
        ),
        fig6_table=report(
            f"{RESULTS}/tables/janus_fig6_percentiles.csv",
            caption="../report/characterise_janus_fig6.rst",
            category=CH_CATEGORY_J,
        ),
        fig6=report(
            f"{RESULTS}/figures/janus_fig6_percentiles.png",
            caption="../report/characterise_janus_fig6.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        table1_sizes=CH_SIZES["janus.table1_sizes"],
        fig6_sizes=CH_SIZES["janus.fig6_sizes"],
        percentiles=CH_JANUS["fig6_percentiles"],
        repetitions=CH_JANUS["repetitions"],
        table1_realizations=CH_JANUS["table1_realizations"],
        alpha=CH["alpha"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__", "io",
                         "prep.realizations"),
    log:
        f"{RESULTS}/logs/characterise/janus_total_usage.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_total_usage.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # the N × R matrix (memory-mapped, or drawn again with Table 1's R as float32), the chosen tasks'
        # series when it is drawn again, plus chunks of 8e6 float64 totals. Peak 849 MB (default run, drawn
        # again: 5,000 × 10,000) and 3.4 GB (paper-scale slice, mapped 2.9 GB matrix; bench/memory.py)
        mem_mb=lambda wc, input: 1000 + int(input.size_mb) + (
            config["realizations"]["n_tasks"] * CH_JANUS["table1_realizations"] * 4 // 2**20
            if CH_JANUS["table1_realizations"] > config["realizations"]["n_realizations"] else 0),
        runtime=240,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_total_usage.py"


rule janus_fig5_totals:
    input:
        inst=f"{RESULTS}/realizations/inst.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        table=report(
            f"{RESULTS}/tables/janus_fig5_totals.csv",
            caption="../report/characterise_janus_fig5.rst",
            category=CH_CATEGORY_J,
        ),
        figure=report(
            f"{RESULTS}/figures/janus_fig5_totals.png",
            caption="../report/characterise_janus_fig5.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        sizes=CH_SIZES["janus.fig5_sizes"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__"),
    log:
        f"{RESULTS}/logs/characterise/janus_fig5_totals.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_fig5_totals.tsv"
    threads: 1
    resources:
        # peak 312 MB / 363 MB (mapped matrix pages included) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=500,
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_fig5.py"


rule janus_summary:
    input:
        # Fig 1 where the trace samples inst (its rows are left out elsewhere)
        unpack(lambda wc: {"fig1": f"{RESULTS}/tables/janus_fig1_sampling.csv"} if CAPABILITIES.supports(["inst_usage"]) else {}),
        fig2=f"{RESULTS}/tables/janus_fig2_std.csv",
        fig3=f"{RESULTS}/tables/janus_fig3_trend_lines.csv",
        s34=f"{RESULTS}/tables/janus_s34_time_invariance.csv",
        shares=f"{RESULTS}/tables/janus_fig4_cluster_shares.csv",
        table1=f"{RESULTS}/tables/janus_table1_normality.csv",
        fig6=f"{RESULTS}/tables/janus_fig6_percentiles.csv",
    output:
        f"{RESULTS}/summary/characterise_janus.csv",
    params:
        # Table 1's R: its own draw when larger than the realization matrix's (rule janus_total_usage)
        n_realizations=max(config["realizations"]["n_realizations"], CH_JANUS["table1_realizations"]),
        code=code_digest("insufficient", "analysis.characterise", "measure"),
    log:
        f"{RESULTS}/logs/characterise/janus_summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/janus_summary.tsv"
    threads: 1
    resources:
        mem_mb=200,  # peak 119 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_janus_summary.py"


rule unuvar_aggregates:
    input:
        series=CH_SERIES,
        inst=f"{RESULTS}/realizations/inst.npy",
        avg=f"{RESULTS}/realizations/avg.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
    output:
        aggregates=f"{RESULTS}/characterise/unuvar_aggregates.parquet",
        sources=report(
            f"{RESULTS}/tables/unuvar_aggregates.csv",
            caption="../report/characterise_unuvar_aggregates.rst",
            category=CH_CATEGORY_U,
        ),
    params:
        sizes=CH_SIZES["unuvar.sizes"],
        source=CH_UNUVAR["source"],
        tolerance=CH_UNUVAR["machine_tolerance"],
        job_cap=CH_UNUVAR["job_cap"],
        usage=CH_UNUVAR["usage"],
        observations=CH_OBSERVATIONS,
        peak=CH_UNUVAR["peak"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.aggregate", "analysis.characterise", "io"),
    log:
        f"{RESULTS}/logs/characterise/unuvar_aggregates.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/unuvar_aggregates.tsv"
    threads: 1
    resources:
        # machines' windows counted a bucket at a time (~3 × a bucket's series, plus one byte per machine and
        # window: 100 MB for the whole trace), then one machine's records or one set's (a semi-join per bucket)
        # at a time; per long task one row of record counts; the matrices are mapped and only the drawn rows
        # are read. Peak 384 MB (default run: trace sets of up to 154 × 8,352 records), 236 MB (paper-scale slice;
        # bench/memory.py)
        mem_mb=lambda wc, input: int(380 + 3 * size_mb(input.series) / max(len(BUCKETS), 1) + 12_583 * RENDERED_WINDOWS / 2**20),
        runtime=60,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_unuvar_aggregates.py"


rule unuvar_beta_fit:
    input:
        aggregates=f"{RESULTS}/characterise/unuvar_aggregates.parquet",
    output:
        statistics=report(
            f"{RESULTS}/tables/unuvar_table2_4_statistics.csv",
            caption="../report/characterise_unuvar_tables.rst",
            category=CH_CATEGORY_U,
        ),
        moments=report(
            f"{RESULTS}/tables/unuvar_table3_5_moments.csv",
            caption="../report/characterise_unuvar_tables.rst",
            category=CH_CATEGORY_U,
        ),
        ks=report(
            f"{RESULTS}/tables/unuvar_table6_ks.csv",
            caption="../report/characterise_unuvar_tables.rst",
            category=CH_CATEGORY_U,
        ),
        overutilisation=report(
            f"{RESULTS}/tables/unuvar_table7_overutilisation.csv",
            caption="../report/characterise_unuvar_tables.rst",
            category=CH_CATEGORY_U,
        ),
        models=report(
            f"{RESULTS}/tables/unuvar_gaussian_vs_beta.csv",
            caption="../report/characterise_unuvar_models.rst",
            category=CH_CATEGORY_U,
        ),
        fig4=report(
            f"{RESULTS}/figures/unuvar_fig4_beta_fit.png",
            caption="../report/characterise_unuvar_figs.rst",
            category=CH_CATEGORY_U,
        ),
        fig7=report(
            f"{RESULTS}/figures/unuvar_fig7_beta_fit.png",
            caption="../report/characterise_unuvar_figs.rst",
            category=CH_CATEGORY_U,
        ),
        summary=f"{RESULTS}/summary/characterise_unuvar.csv",
    params:
        threshold=CH_UNUVAR["threshold"],
        tail_thresholds=CH_UNUVAR["tail_thresholds"],
        alpha=CH["alpha"],
        code=code_digest("insufficient", "analysis.betafit", "figures.characterise", "figures.__init__", "measure"),
    log:
        f"{RESULTS}/logs/characterise/unuvar_beta_fit.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/unuvar_beta_fit.tsv"
    threads: 1
    resources:
        mem_mb=550,  # peak 346 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_unuvar_beta_fit.py"


rule unuvar_sweep:
    input:
        inst=f"{RESULTS}/realizations/inst.npy",
        avg=f"{RESULTS}/realizations/avg.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
    output:
        table=report(
            f"{RESULTS}/tables/unuvar_gaussian_vs_beta_sweep.csv",
            caption="../report/characterise_unuvar_models.rst",
            category=CH_CATEGORY_U,
        ),
        figure=report(
            f"{RESULTS}/figures/unuvar_gaussian_vs_beta.png",
            caption="../report/characterise_unuvar_models.rst",
            category=CH_CATEGORY_U,
        ),
    params:
        sizes=CH_SIZES["unuvar.sweep_sizes"],
        repetitions=CH_UNUVAR["sweep_repetitions"],
        usage=CH_UNUVAR["usage"],
        observations=CH_OBSERVATIONS,
        peak=CH_UNUVAR["peak"],
        threshold=CH_UNUVAR["threshold"],
        tail_thresholds=CH_UNUVAR["tail_thresholds"],
        alpha=CH["alpha"],
        seed=CH["seed"],
        code=code_digest("insufficient", "analysis.aggregate", "analysis.betafit", "analysis.characterise", "figures.characterise", "figures.__init__"),
    log:
        f"{RESULTS}/logs/characterise/unuvar_sweep.log",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/unuvar_sweep.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # peak 419 MB (76 MB in) / 3.7 GB on the default run / the paper-scale slice, where its anonymous peak is 702 MB
        # and the rest pages of the 2.9 GB mapped matrix (bench/memory.py)
        mem_mb=fitted_mem(750, 0.06),
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/characterise_unuvar_sweep.py"


rule notebook_characterisation:
    input:
        long=f"{RESULTS}/tasks/long_tasks.parquet",
        lines=f"{RESULTS}/tables/janus_fig3_trend_lines.csv",
        s34=f"{RESULTS}/tables/janus_s34_time_invariance.csv",
        clusters=f"{RESULTS}/characterise/task_clusters.parquet",
        table1=f"{RESULTS}/tables/janus_table1_normality.csv",
        samples=f"{RESULTS}/characterise/janus_total_usage_samples.parquet",
        sources=f"{RESULTS}/tables/unuvar_aggregates.csv",
        statistics=f"{RESULTS}/tables/unuvar_table2_4_statistics.csv",
        ks=f"{RESULTS}/tables/unuvar_table6_ks.csv",
        overutilisation=f"{RESULTS}/tables/unuvar_table7_overutilisation.csv",
        sweep=f"{RESULTS}/tables/unuvar_gaussian_vs_beta_sweep.csv",
        # the paper's Table 1 and Fig 3 lines, shown beside ours: its claims table (editing it redraws the notebook)
        claims=str(Path(workflow.basedir, "workflow/papers/janus.tsv")),
    output:
        clusters=report(
            f"{RESULTS}/figures/characterisation_clusters.png",
            caption="../report/characterise_notebook_clusters.rst",
            category=CH_CATEGORY_J,
        ),
        table1=report(
            f"{RESULTS}/figures/characterisation_table1.png",
            caption="../report/characterise_notebook_table1.rst",
            category=CH_CATEGORY_J,
        ),
    params:
        threshold=CH_UNUVAR["threshold"],
        code=code_digest("analysis.characterise"),
    log:
        notebook=f"{RESULTS}/logs/notebooks/02_characterisation.ipynb",
    benchmark:
        f"{RESULTS}/benchmarks/characterise/notebook_characterisation.tsv"
    threads: 1
    resources:
        mem_mb=lambda wc, input: 1500 + 4 * int(input.size_mb),
        runtime=15,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/02_characterisation.py.ipynb"
