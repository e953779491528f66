# Periodicity (Beaumont et al.): Fourier components of long-running production jobs (§5.2, Table 4)
# and packing periodic jobs (§8.2). The science lives in colocate.analysis.periodicity and
# colocate.scheduling.periodic_packing; the figures in colocate.figures.periodicity. Reads the dominant jobs
# of workflow/rules/jobs.smk (map outputs only).

from colocate.analysis import periodicity as _periodicity

PE = config["periodicity"]
PE_PACK = PE["packing"]
PE_CATEGORY = "Periodicity (Beaumont et al. §5.2, §8.2)"

TARGETS.append(
    (
        ("entities", "usage_series"),
        [
            f"{RESULTS}/tables/beaumont_table4_fourier.csv",
            f"{RESULTS}/tables/beaumont_weekly_shape.csv",
            f"{RESULTS}/tables/beaumont_daily_phases.csv",
            f"{RESULTS}/figures/beaumont_fourier_spectra.png",
            f"{RESULTS}/tables/beaumont_periodic_packing.csv",
            f"{RESULTS}/figures/beaumont_periodic_packing.png",
        ],
    )
)
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/beaumont_periodicity.csv"))
NEEDS["periodicity"] = ("Periodicity and periodic packing (Beaumont et al. §5.2, §8.2)", ("entities", "usage_series"))


# The groups analysed: on a trace with priorities, the long-running dominant jobs of periodicity.classes
# (jobs.smk); on one without (VMs), each entity read over the whole span is its own group (periodicity.entities).
if CAPABILITIES.supports(["priorities"]):
    PE_GROUPS = {"dominant": f"{RESULTS}/jobs/dominant_jobs.parquet", "windows": f"{RESULTS}/jobs/dominant_windows.parquet"}
    PE_CLASSES = PE["classes"]
else:
    PE_GROUPS = {"dominant": f"{RESULTS}/periodicity/entities.parquet", "windows": f"{RESULTS}/periodicity/entity_windows.parquet"}
    PE_CLASSES = [_periodicity.ENTITY_CLASS]

    rule periodicity_entities:
        input:
            series=CH_SERIES,
        output:
            dominant=PE_GROUPS["dominant"],
            windows=PE_GROUPS["windows"],
        params:
            n_windows=N_WINDOWS,
            min_coverage=PE["min_coverage"],
            max_entities=PE["entities"]["max_entities"],
            seed=PE["entities"]["seed"],
            code=code_digest("insufficient", "analysis.periodicity", "io"),
        log:
            f"{RESULTS}/logs/periodicity/entities.log",
        benchmark:
            f"{RESULTS}/benchmarks/periodicity/entities.tsv"
        threads: 1
        resources:
            # one bucket's series at a time, then the chosen entities' series (a float per window, a few copies)
            mem_mb=lambda wc, input: int(290 + 4 * PE["entities"]["max_entities"] * RENDERED_WINDOWS * 8 / 2**20
                                         + 3 * size_mb(input.series) / max(len(BUCKETS), 1)),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/periodicity_entities.py"


rule periodicity_components:
    input:
        dominant=PE_GROUPS["dominant"],
        windows=PE_GROUPS["windows"],
    output:
        components=f"{RESULTS}/periodicity/components.parquet",
        spectra=f"{RESULTS}/periodicity/spectra.parquet",
        weekly=report(
            f"{RESULTS}/tables/beaumont_weekly_shape.csv",
            caption="../report/periodicity_weekly.rst",
            category=PE_CATEGORY,
        ),
        phases=report(
            f"{RESULTS}/tables/beaumont_daily_phases.csv",
            caption="../report/periodicity_phases.rst",
            category=PE_CATEGORY,
        ),
    params:
        n_windows=N_WINDOWS,
        classes=PE_CLASSES,
        min_coverage=PE["min_coverage"],
        significance_ratio=PE["significance_ratio"],
        strong_ratio=PE["strong_ratio"],
        phase_min_ratio=PE["phase_min_ratio"],
        spectra_jobs=PE["spectra_jobs"],
        code=code_digest("insufficient", "analysis.periodicity", "io"),
    log:
        f"{RESULTS}/logs/periodicity/components.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/components.tsv"
    threads: 1
    resources:
        # the dominant windows (~40 bytes a row in memory) and one float64 series per long-running job
        # peak 217 MB (5.6 MB in) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=fitted_mem(300, 6),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_components.py"


# Table 4 beside the paper's: its own small job, so that editing the paper's table reruns this and not the analysis
rule periodicity_table4:
    input:
        components=f"{RESULTS}/periodicity/components.parquet",
        paper_table4=str(Path(workflow.basedir, "workflow/papers/tables/beaumont-table4.tsv")),
    output:
        report(
            f"{RESULTS}/tables/beaumont_table4_fourier.csv",
            caption="../report/periodicity_table4.rst",
            category=PE_CATEGORY,
        ),
    params:
        code=code_digest("insufficient", "analysis.periodicity", "analysis.jobs"),
    log:
        f"{RESULTS}/logs/periodicity/table4.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/table4.tsv"
    threads: 1
    resources:
        mem_mb=300,
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_table4.py"


rule periodicity_figure:
    input:
        components=f"{RESULTS}/periodicity/components.parquet",
        spectra=f"{RESULTS}/periodicity/spectra.parquet",
        weekly=f"{RESULTS}/tables/beaumont_weekly_shape.csv",
        phases=f"{RESULTS}/tables/beaumont_daily_phases.csv",
    output:
        report(
            f"{RESULTS}/figures/beaumont_fourier_spectra.png",
            caption="../report/periodicity_spectra.rst",
            category=PE_CATEGORY,
        ),
    params:
        significance_ratio=PE["significance_ratio"],
        phase_limits_deg=PE["phase_limits_deg"],
        code=code_digest("insufficient", "figures.periodicity", "figures.__init__"),
    log:
        f"{RESULTS}/logs/periodicity/figure.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/figure.tsv"
    threads: 1
    resources:
        mem_mb=500,  # peak 306 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_figure.py"


rule periodicity_packing:
    input:
        components=f"{RESULTS}/periodicity/components.parquet",
        windows=PE_GROUPS["windows"],
    output:
        table=report(
            f"{RESULTS}/tables/beaumont_periodic_packing.csv",
            caption="../report/periodicity_packing.rst",
            category=PE_CATEGORY,
        ),
        loads=f"{RESULTS}/periodicity/packing_loads.parquet",
    params:
        n_windows=N_WINDOWS,
        capacities=PE_PACK["capacities"],
        sample_points=PE_PACK["sample_points"],
        code=code_digest("insufficient", "scheduling.periodic_packing", "analysis.periodicity", "io"),
    log:
        f"{RESULTS}/logs/periodicity/packing.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/packing.tsv"
    threads: 1
    resources:
        # the dominant windows, the jobs' series and 256 machines' load series at a time
        # peak 222 MB (5.4 MB in) on the default run / the paper-scale slice (bench/memory.py)
        mem_mb=fitted_mem(300, 6),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_packing.py"


rule periodicity_packing_figure:
    input:
        table=f"{RESULTS}/tables/beaumont_periodic_packing.csv",
        loads=f"{RESULTS}/periodicity/packing_loads.parquet",
    output:
        report(
            f"{RESULTS}/figures/beaumont_periodic_packing.png",
            caption="../report/periodicity_packing_figure.rst",
            category=PE_CATEGORY,
        ),
    params:
        capacity_unit="normalised CPU",
        code=code_digest("insufficient", "figures.periodicity", "figures.__init__"),
    log:
        f"{RESULTS}/logs/periodicity/packing_figure.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/packing_figure.tsv"
    threads: 1
    resources:
        mem_mb=500,  # peak 329 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_packing_figure.py"


rule periodicity_summary:
    input:
        components=f"{RESULTS}/periodicity/components.parquet",
        weekly=f"{RESULTS}/tables/beaumont_weekly_shape.csv",
        phases=f"{RESULTS}/tables/beaumont_daily_phases.csv",
        packing=f"{RESULTS}/tables/beaumont_periodic_packing.csv",
    output:
        f"{RESULTS}/summary/beaumont_periodicity.csv",
    params:
        n_windows=N_WINDOWS,
        significance_ratio=PE["significance_ratio"],
        strong_ratio=PE["strong_ratio"],
        phase_min_ratio=PE["phase_min_ratio"],
        phase_limits_deg=PE["phase_limits_deg"],
        # what was analysed, where it is not the paper's jobs (null: the paper's wording)
        groups=None if CAPABILITIES.supports(["priorities"]) else f"{CAPABILITIES.entity}s read over the whole trace",
        code=code_digest("insufficient", "analysis.periodicity", "scheduling.periodic_packing", "measure"),
    log:
        f"{RESULTS}/logs/periodicity/summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/periodicity/summary.tsv"
    threads: 1
    resources:
        mem_mb=320,  # peak 191 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/periodicity_summary.py"
