# CPU vs memory of dominant jobs (Beaumont et al. §4.2, Fig 3): per job, DBSCAN clusters of its tasks'
# (CPU, memory) dots at the sampled windows, one OLS line per cluster, Flat / multi-cluster Flat / Slope /
# BadlyFitted. The science lives in colocate.analysis.cpumem; the figures in colocate.figures.cpumem.

CPUMEM = config["cpumem"]
CPUMEM_CATEGORY = "CPU vs memory (Beaumont et al. §4.2)"
CPUMEM_SETTINGS = {k: CPUMEM[k] for k in ("eps", "min_samples", "scaling", "r2_min", "cv_max", "flat_range_max", "min_points")}

TARGETS.append(
    (
        ("entities", "usage_series", "priorities", "memory_usage"),
        [
            f"{RESULTS}/tables/beaumont_cpumem_shares.csv",
            f"{RESULTS}/figures/beaumont_fig3_cpu_memory.png",
            f"{RESULTS}/figures/beaumont_cpumem_shares.png",
        ],
    )
)
SUMMARY_PARTS.append((("entities", "usage_series", "priorities", "memory_usage"), f"{RESULTS}/summary/beaumont_cpumem.csv"))
# (by dominant job and class: cpumem_classify reads jobs/dominant_jobs.parquet)
NEEDS["cpu_memory"] = ("CPU against memory usage (Beaumont et al. §4.2)", ("usage_series", "priorities", "memory_usage"))


rule cpumem_classify:
    input:
        sampled=lambda wc: SAMPLED_WINDOWS,
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
    output:
        fits=f"{RESULTS}/cpumem/job_fits.parquet",
        classes=f"{RESULTS}/cpumem/job_classes.parquet",
        examples=f"{RESULTS}/cpumem/fig3_examples.parquet",
    params:
        settings=CPUMEM_SETTINGS,
        max_points_per_job=CPUMEM["max_points_per_job"],
        seed=CPUMEM["seed"],
        code=code_digest("insufficient", "analysis.cpumem"),
    log:
        f"{RESULTS}/logs/cpumem/classify.log",
    benchmark:
        f"{RESULTS}/benchmarks/cpumem/classify.tsv"
    threads: 1
    resources:
        # the kept points (≤ 1.5 × max_points_per_job per job before the exact cap) and one DBSCAN
        # neighbourhood graph (≤ max_points² pairs) at a time
        mem_mb=cpumem_classify_mem_mb,
        # 301 s for 2,000 jobs of 5,000 points (bench/cpumem_classify.py): the full trace's 25,839 take up to ~65 min
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/cpumem_classify.py"


rule cpumem_tables:
    input:
        classes=f"{RESULTS}/cpumem/job_classes.parquet",
        dominant=f"{RESULTS}/jobs/dominant_jobs.parquet",
        # the paper's shares, printed beside ours
        paper_shares=str(Path(workflow.basedir, "workflow/papers/tables/beaumont-s42-shares.tsv")),
    output:
        table=report(
            f"{RESULTS}/tables/beaumont_cpumem_shares.csv",
            caption="../report/cpumem_shares_table.rst",
            category=CPUMEM_CATEGORY,
        ),
        summary=f"{RESULTS}/summary/beaumont_cpumem.csv",
    params:
        settings=CPUMEM_SETTINGS,
        code=code_digest("insufficient", "analysis.cpumem", "measure"),
    log:
        f"{RESULTS}/logs/cpumem/tables.log",
    benchmark:
        f"{RESULTS}/benchmarks/cpumem/tables.tsv"
    threads: 1
    resources:
        mem_mb=450,  # peak 290 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/cpumem_tables.py"


rule cpumem_figures:
    input:
        examples=f"{RESULTS}/cpumem/fig3_examples.parquet",
        fits=f"{RESULTS}/cpumem/job_fits.parquet",
        table=f"{RESULTS}/tables/beaumont_cpumem_shares.csv",
    output:
        fig3=report(
            f"{RESULTS}/figures/beaumont_fig3_cpu_memory.png",
            caption="../report/cpumem_fig3.rst",
            category=CPUMEM_CATEGORY,
        ),
        shares=report(
            f"{RESULTS}/figures/beaumont_cpumem_shares.png",
            caption="../report/cpumem_shares_figure.rst",
            category=CPUMEM_CATEGORY,
        ),
    params:
        code=code_digest("insufficient", "analysis.cpumem", "figures.cpumem", "figures.__init__"),
    log:
        f"{RESULTS}/logs/cpumem/figures.log",
    benchmark:
        f"{RESULTS}/benchmarks/cpumem/figures.tsv"
    threads: 1
    resources:
        mem_mb=550,  # peak 353 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/cpumem_figures.py"
