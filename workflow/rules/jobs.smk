# Jobs (Beaumont et al.): the job table, dominant jobs (§3), job usage mixtures (§4.1), task balance (§4.3)
# and durations (§5.1). The science lives in colocate.analysis.jobs; the figures in colocate.figures.jobs.

JOBS = config["jobs"]
JOBS_CATEGORY = "Jobs (Beaumont et al. §3–5)"
TARGETS.append(
    (
        ("entities", "usage_series", "priorities"),
        [
            f"{RESULTS}/tables/beaumont_table1_dominant.csv",
            f"{RESULTS}/figures/beaumont_fig1_classes.png",
            f"{RESULTS}/tables/beaumont_table2_mixtures.csv",
            f"{RESULTS}/figures/beaumont_fig2_usage.png",
            f"{RESULTS}/tables/beaumont_task_balance.csv",
            f"{RESULTS}/figures/beaumont_fig4_task_examples.png",
            f"{RESULTS}/figures/beaumont_fig5_balance.png",
        ],
    )
)
# Table 3 needs job_events; without them the summary leaves its rows out.
TARGETS.append((("entities", "usage_series", "priorities", "group_events"), [f"{RESULTS}/tables/beaumont_table3_durations.csv"]))
SUMMARY_PARTS.append((("entities", "usage_series", "priorities"), f"{RESULTS}/summary/beaumont_jobs.csv"))
NEEDS["dominant_jobs"] = ("Dominant jobs by priority class (Beaumont et al. §3-5.1)", ("entities", "usage_series", "priorities"))
NEEDS["job_durations"] = ("Job durations (Beaumont et al. §5.1, Table 3)", ("group_events",))


rule job_table:
    input:
        # the contract's entity pieces and group events, as the source's rules file names them
        task_pieces=lambda wc: ENTITY_PIECES,
        job_pieces=lambda wc: GROUP_EVENTS,
    output:
        f"{RESULTS}/jobs/jobs.parquet",
    params:
        n_windows=N_WINDOWS,
        # every file of the group events read (else a job still running at the last event read was seen only that long)
        whole_job_events=contract_table_whole("group_events"),
        priority_classes=SRC.priority_classes,
        code=code_digest("analysis.jobs", "io"),
    log:
        f"{RESULTS}/logs/jobs/job_table.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/job_table.tsv"
    threads: 1
    resources:
        # task pieces scanned and aggregated by job (streaming engine), ~25 bytes per piece on disk: 359 MB peak
        # for the 8-shard slice's 1.1 M pieces, 2.1 GB for the real trace's ~35 M (bench/trace_tables.py)
        mem_mb=lambda wc, input: 300 + 3 * int(input.size_mb),
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_table.py"


rule dominant_jobs:
    input:
        job_windows=lambda wc: GROUP_WINDOWS,
        jobs=f"{RESULTS}/jobs/jobs.parquet",
    output:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        windows=f"{RESULTS}/jobs/dominant_windows.parquet",
        totals=f"{RESULTS}/jobs/window_totals.parquet",
    params:
        cpu_share=JOBS["dominant_cpu_share"],
        chunk_windows=JOBS["chunk_windows"],
        n_windows=N_WINDOWS,
        code=code_digest("analysis.jobs", "io"),
    log:
        f"{RESULTS}/logs/jobs/dominant_jobs.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/dominant_jobs.tsv"
    threads: 2
    resources:
        # a day of windows at a time (~170 B per row: ~1.2 M rows for a day of the real trace) plus what is kept of
        # every row (~95 B: D's rows, totals), rows from the Parquet footers. Measured: 217 / 446 MB on the 2- /
        # 8-shard slices (all their < 1 day in one chunk), 253 MB on the default run, 3.1 GB at the real trace's
        # 34 M rows (bench/dominant_jobs.py, bench/memory.py)
        mem_mb=lambda wc, input: int(dominant_jobs_mem_mb(parquet_rows(input.job_windows))),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_dominant.py"


rule jobs_dominant_table:
    input:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        windows=f"{RESULTS}/jobs/dominant_windows.parquet",
        totals=f"{RESULTS}/jobs/window_totals.parquet",
    output:
        table1=report(f"{RESULTS}/tables/beaumont_table1_dominant.csv", caption="../report/jobs_table1.rst", category=JOBS_CATEGORY),
        shares=report(f"{RESULTS}/tables/beaumont_fig1_classes.csv", caption="../report/jobs_fig1.rst", category=JOBS_CATEGORY),
        fig1=report(f"{RESULTS}/figures/beaumont_fig1_classes.png", caption="../report/jobs_fig1.rst", category=JOBS_CATEGORY),
    params:
        code=code_digest("analysis.jobs", "figures.jobs", "figures.__init__"),
    log:
        f"{RESULTS}/logs/jobs/jobs_dominant_table.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/jobs_dominant_table.tsv"
    threads: 1
    resources:
        # peak 329 MB (5.9 MB in) / 273 MB (0.2 MB in) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=fitted_mem(420, 10),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_dominant_table.py"


rule jobs_usage_mixtures:
    input:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
    output:
        table2=report(f"{RESULTS}/tables/beaumont_table2_mixtures.csv", caption="../report/jobs_table2.rst", category=JOBS_CATEGORY),
        fig2=report(f"{RESULTS}/figures/beaumont_fig2_usage.png", caption="../report/jobs_fig2.rst", category=JOBS_CATEGORY),
    params:
        n_init=JOBS["mixture_n_init"],
        seed=JOBS["seed"],
        code=code_digest("analysis.jobs", "figures.jobs", "figures.__init__"),
    log:
        f"{RESULTS}/logs/jobs/jobs_usage_mixtures.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/jobs_usage_mixtures.tsv"
    threads: 1
    resources:
        mem_mb=500,  # peak 306 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_usage_mixtures.py"


rule jobs_task_balance:
    input:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        windows=f"{RESULTS}/jobs/dominant_windows.parquet",
    output:
        dispersion=f"{RESULTS}/jobs/task_count_dispersion.parquet",
        thresholds=f"{RESULTS}/jobs/balance_thresholds.parquet",
        table=report(f"{RESULTS}/tables/beaumont_task_balance.csv", caption="../report/jobs_balance.rst", category=JOBS_CATEGORY),
        fig4=report(f"{RESULTS}/figures/beaumont_fig4_task_examples.png", caption="../report/jobs_fig4.rst", category=JOBS_CATEGORY),
        fig5=report(f"{RESULTS}/figures/beaumont_fig5_balance.png", caption="../report/jobs_fig5.rst", category=JOBS_CATEGORY),
    params:
        quantile=JOBS["balance_quantile"],
        code=code_digest("analysis.jobs", "figures.jobs", "figures.__init__"),
    log:
        f"{RESULTS}/logs/jobs/jobs_task_balance.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/jobs_task_balance.tsv"
    threads: 1
    resources:
        # peak 341 MB (5.6 MB in) / 286 MB (0.2 MB in) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=fitted_mem(430, 10),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_task_balance.py"


rule jobs_durations:
    input:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
    output:
        table3=report(f"{RESULTS}/tables/beaumont_table3_durations.csv", caption="../report/jobs_table3.rst", category=JOBS_CATEGORY),
    params:
        code=code_digest("analysis.jobs"),
    log:
        f"{RESULTS}/logs/jobs/jobs_durations.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/jobs_durations.tsv"
    threads: 1
    resources:
        mem_mb=200,  # peak 121 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_durations.py"


rule jobs_summary:
    input:
        jobs=f"{RESULTS}/jobs/jobs.parquet",
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        table1=f"{RESULTS}/tables/beaumont_table1_dominant.csv",
        shares=f"{RESULTS}/tables/beaumont_fig1_classes.csv",
        table2=f"{RESULTS}/tables/beaumont_table2_mixtures.csv",
        dispersion=f"{RESULTS}/jobs/task_count_dispersion.parquet",
        thresholds=f"{RESULTS}/jobs/balance_thresholds.parquet",
        table3=lambda wc: f"{RESULTS}/tables/beaumont_table3_durations.csv" if GROUP_EVENTS else [],
        windows=f"{RESULTS}/jobs/window_totals.parquet",
    output:
        f"{RESULTS}/summary/beaumont_jobs.csv",
    params:
        size_scale=config["synthetic"]["job_size_scale"] if SRC.is_model else 1.0,
        # D found in a part of the trace: its jobs' durations are length-biased (Table 3 not judged)
        usage_whole=contract_table_whole("usage_records"),
        code=code_digest("analysis.jobs", "measure"),
    log:
        f"{RESULTS}/logs/jobs/jobs_summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/jobs/jobs_summary.tsv"
    threads: 1
    resources:
        mem_mb=200,  # peak 125 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_summary.py"


TARGETS.append(
    (
        ("entities", "usage_series", "priorities", "machine_events"),
        [f"{RESULTS}/figures/beaumont_notebook_periodic_job.png", f"{RESULTS}/notebooks/05_jobs_and_failures.ipynb",
         f"{RESULTS}/notebooks/05_jobs_and_failures.html"],
    )
)


rule notebook_jobs_and_failures:
    input:
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        totals=f"{RESULTS}/jobs/window_totals.parquet",
        windows=f"{RESULTS}/jobs/dominant_windows.parquet",
        components=f"{RESULTS}/periodicity/components.parquet",
        # the paper's Table 4, printed beside ours
        paper_table4=str(Path(workflow.basedir, "workflow/papers/tables/beaumont-table4.tsv")),
        removal_windows=f"{RESULTS}/failures/removals_per_window.parquet",
        failure_stats=f"{RESULTS}/tables/beaumont_failures_stats.csv",
    output:
        periodic_job=report(
            f"{RESULTS}/figures/beaumont_notebook_periodic_job.png",
            caption="../report/jobs_notebook.rst",
            category=JOBS_CATEGORY,
        ),
    params:
        n_windows=N_WINDOWS,
    log:
        notebook=f"{RESULTS}/logs/notebooks/05_jobs_and_failures.ipynb",
    benchmark:
        f"{RESULTS}/benchmarks/notebook_jobs_and_failures.tsv"
    threads: 1
    resources:
        mem_mb=lambda wc, input: 1500 + 4 * int(input.size_mb),
        runtime=10,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/05_jobs_and_failures.py.ipynb"
