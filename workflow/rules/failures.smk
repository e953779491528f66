# Machine failures (Beaumont et al. §6): removals per 5-minute window against Poisson, the outstanding
# events, maintenance windows, the per-machine failure rate and removal durations (Figs 6-7).
# The science lives in colocate.analysis.failures and colocate.figures.failures.

FA = config["failures"]
FA_CATEGORY = "Machine failures (Beaumont et al. §6)"

TARGETS.append(
    (
        ("machine_events",),
        [
            f"{RESULTS}/tables/beaumont_outstanding_events.csv",
            f"{RESULTS}/tables/beaumont_failures_histogram.csv",
            f"{RESULTS}/tables/beaumont_failures_poisson.csv",
            f"{RESULTS}/tables/beaumont_failures_stats.csv",
            f"{RESULTS}/tables/beaumont_failures_dispersion.csv",
            f"{RESULTS}/tables/beaumont_failures_durations.csv",
            f"{RESULTS}/figures/beaumont_fig6_poisson.png",
            f"{RESULTS}/figures/beaumont_fig7_removal_durations.png",
        ],
    )
)
SUMMARY_PARTS.append((("machine_events",), f"{RESULTS}/summary/beaumont_failures.csv"))
NEEDS["failures"] = ("Machine failures (Beaumont et al. §6)", ("machine_events",))


rule failures_removals:
    input:
        events=lambda wc: MACHINE_EVENTS,
    output:
        removals=f"{RESULTS}/failures/removals.parquet",
        windows=f"{RESULTS}/failures/removals_per_window.parquet",
        facts=f"{RESULTS}/failures/machine_events_counts.csv",
        all_episodes=f"{RESULTS}/failures/episodes.parquet",
        episodes=report(
            f"{RESULTS}/tables/beaumont_outstanding_events.csv",
            caption="../report/failures_outstanding.rst",
            category=FA_CATEGORY,
        ),
    params:
        n_windows=N_WINDOWS,
        outstanding=FA["outstanding"],
        maintenance_min_removals=FA["maintenance_min_removals"],
        code=code_digest("analysis.failures", "sources.contract", "io"),
    log:
        f"{RESULTS}/logs/failures/removals.log",
    benchmark:
        f"{RESULTS}/benchmarks/failures/removals.tsv"
    threads: 1
    resources:
        # the real file: ~37k events, a few MB in memory
        mem_mb=350,  # peak 205 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/failures_removals.py"


rule failures_analysis:
    input:
        removals=f"{RESULTS}/failures/removals.parquet",
        windows=f"{RESULTS}/failures/removals_per_window.parquet",
        facts=f"{RESULTS}/failures/machine_events_counts.csv",
        episodes=f"{RESULTS}/failures/episodes.parquet",
    output:
        histogram=report(
            f"{RESULTS}/tables/beaumont_failures_histogram.csv",
            caption="../report/failures_histogram.rst",
            category=FA_CATEGORY,
        ),
        poisson=report(
            f"{RESULTS}/tables/beaumont_failures_poisson.csv",
            caption="../report/failures_fig6.rst",
            category=FA_CATEGORY,
        ),
        stats=report(
            f"{RESULTS}/tables/beaumont_failures_stats.csv",
            caption="../report/failures_stats.rst",
            category=FA_CATEGORY,
        ),
        dispersion=report(
            f"{RESULTS}/tables/beaumont_failures_dispersion.csv",
            caption="../report/failures_stats.rst",
            category=FA_CATEGORY,
        ),
        durations=report(
            f"{RESULTS}/tables/beaumont_failures_durations.csv",
            caption="../report/failures_fig7.rst",
            category=FA_CATEGORY,
        ),
        fig6=report(
            f"{RESULTS}/figures/beaumont_fig6_poisson.png",
            caption="../report/failures_fig6.rst",
            category=FA_CATEGORY,
        ),
        fig7=report(
            f"{RESULTS}/figures/beaumont_fig7_removal_durations.png",
            caption="../report/failures_fig7.rst",
            category=FA_CATEGORY,
        ),
        summary=f"{RESULTS}/summary/beaumont_failures.csv",
    params:
        maintenance_min_removals=FA["maintenance_min_removals"],
        tail_more_than=FA["tail_more_than"],
        back_within_minutes=FA["back_within_minutes"],
        duration_marks_min=FA["duration_marks_min"],
        alpha=FA["alpha"],
        trace_minutes=N_WINDOWS * 5,
        code=code_digest("analysis.failures", "figures.failures", "figures.__init__", "measure"),
    log:
        f"{RESULTS}/logs/failures/analysis.log",
    benchmark:
        f"{RESULTS}/benchmarks/failures/analysis.tsv"
    threads: 1
    resources:
        mem_mb=550,  # peak 337 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/failures_analysis.py"
