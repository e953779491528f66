# Reduce (one job per bucket) to per-entity data (Janus & Rzadca §3.1): the contract's per-entity statistics, series
# and histograms, from the usage records and entity pieces that the run's source maps (its rules file sets
# USAGE_RECORDS and ENTITY_PIECES).

TARGETS.append(
    (
        ("entities", "usage_series"),
        [f"{RESULTS}/tables/task_counts.csv", f"{RESULTS}/tasks/task_stats.parquet", f"{RESULTS}/tasks/long_tasks.parquet",
         f"{RESULTS}/tables/series_coverage.csv"],
    )
)
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/tasks.csv"))
NEEDS["tasks"] = ("Task filtering, long tasks and realizations (Janus & Rzadca §3.1)", ("entities", "usage_series"))


rule reduce_bucket:
    input:
        # the source's map outputs (its rules file, included last, names them): usage records and entity pieces
        records=lambda wc: USAGE_RECORDS,
        pieces=lambda wc: ENTITY_PIECES,
    output:
        stats=f"{RESULTS}/reduce/bucket-{{bucket}}/stats.parquet",
        series=f"{RESULTS}/reduce/bucket-{{bucket}}/series.parquet",
        hist=f"{RESULTS}/reduce/bucket-{{bucket}}/hist.parquet",
        counts=f"{RESULTS}/reduce/bucket-{{bucket}}/counts.parquet",
    wildcard_constraints:
        bucket=r"\d+",
    params:
        bucket=lambda wc: int(wc.bucket),
        long_min_records=config["mapreduce"]["long_min_records"],
        code=code_digest("prep.mapreduce", "prep.tasks", "io"),
    log:
        f"{RESULTS}/logs/reduce_bucket/{{bucket}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/reduce_bucket/{{bucket}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # ~1/B of every map output; fitted to the peaks at the default run's 4.9 MB a bucket (252 MB) and at the
        # real trace's ~86 MB a bucket (4.7 M records: 1319 MB, bench/paper_scale.py), × 1.35
        mem_mb=fitted_mem(256, 18, share=1 / len(BUCKETS)),
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/mapreduce_reduce_bucket.py"


rule collect_tasks:
    input:
        stats=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/stats.parquet", bucket=BUCKETS),
        hist=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/hist.parquet", bucket=BUCKETS),
        counts=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/counts.parquet", bucket=BUCKETS),
    output:
        stats=f"{RESULTS}/tasks/task_stats.parquet",
        long=f"{RESULTS}/tasks/long_tasks.parquet",
        counts=report(
            f"{RESULTS}/tables/task_counts.csv",
            caption="../report/task_counts.rst",
            category="Trace and tasks",
        ),
        summary=f"{RESULTS}/summary/tasks.csv",
    log:
        f"{RESULTS}/logs/collect_tasks.log",
    benchmark:
        f"{RESULTS}/benchmarks/collect_tasks.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # io.write_sorted: one pass of at most 4 M task rows (~200 B each with its sorted copy) plus the job IDs
        # of every task (8 B); then the long tasks with their histograms (~2× the hist files). ~36,000 tasks per
        # MB of stats on disk. Measured: 256 MB (default run), 361 MB (paper-scale slice), 1.4 GB at the real
        # trace's 25 M tasks (bench/trace_tables.py, bench/memory.py).
        mem_mb=lambda wc, input: int(
            360 + min(36_000 * size_mb(input.stats), 4e6) * 200 / 2**20 + 36_000 * size_mb(input.stats) * 8 / 2**20
            + 2 * size_mb(input.hist)
        ),
        runtime=10,
    params:
        long_min_records=config["mapreduce"]["long_min_records"],
        code=code_digest("prep.mapreduce", "io", "measure", "prep.tasks", "insufficient"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/mapreduce_collect_tasks.py"


rule series_coverage:
    input:
        series=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
    output:
        table=report(
            f"{RESULTS}/tables/series_coverage.csv",
            caption="../report/series_coverage.rst",
            category="Trace and tasks",
        ),
    params:
        code=code_digest("prep.tasks", "io"),
    log:
        f"{RESULTS}/logs/series_coverage.log",
    benchmark:
        f"{RESULTS}/benchmarks/series_coverage.tsv"
    threads: 1
    resources:
        # a bucket's task keys and times at a time, then a row per long task
        mem_mb=fitted_mem(256, 4, share=1 / len(BUCKETS)),
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/series_coverage.py"
