# Map (one job per shard or batch of shards) and reduce (one job per bucket) to per-task data (Janus & Rzadca §3.1).

TARGETS.append(
    (
        ("task_events", "task_usage"),
        [f"{RESULTS}/tables/task_counts.csv", f"{RESULTS}/tasks/task_stats.parquet", f"{RESULTS}/tasks/long_tasks.parquet"],
    )
)
SUMMARY_PARTS.append((("task_events", "task_usage"), f"{RESULTS}/summary/tasks.csv"))
NEEDS["tasks"] = ("Task filtering, long tasks and realizations (Janus & Rzadca §3.1)", ("entities", "usage_series"))


rule map_task_events:
    input:
        unpack(lambda wc: verified()),
        shards=map_shards("task_events"),
    output:
        f"{RESULTS}/map/task_events/{{stem}}.parquet",
    wildcard_constraints:
        stem=MAP_RE,
    params:
        buckets=config["mapreduce"]["buckets"],
        code=code_digest("prep.mapreduce", "prep.tasks", "trace", "io"),
    log:
        f"{RESULTS}/logs/map_task_events/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_task_events/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    # one thread: gunzip and the CSV parse are mostly serial, so two one-thread maps beat one of two threads
    threads: 1
    resources:
        # peak 178 MB (3.0 MB in) / 313 MB (10.8 MB in) on the default run / the paper-scale slice (bench/memory.py);
        # 511 MB for a batch of 10 real shards of 0.9-4.1 MB (bench/map_batches.py)
        mem_mb=batch_mem(176, 24, 15),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/mapreduce_map_task_events.py"


rule map_task_usage:
    input:
        unpack(lambda wc: verified()),
        shards=map_shards("task_usage"),
    output:
        records=f"{RESULTS}/map/task_usage/{{stem}}/records.parquet",
        job_windows=f"{RESULTS}/map/task_usage/{{stem}}/job_windows.parquet",
        sampled=f"{RESULTS}/map/task_usage/{{stem}}/sampled_windows.parquet",
    wildcard_constraints:
        stem=MAP_RE,
    params:
        buckets=config["mapreduce"]["buckets"],
        windows_per_day=config["mapreduce"]["sampled_windows_per_day"],
        seed=config["mapreduce"]["seed"],
        code=code_digest("prep.mapreduce", "prep.tasks", "trace", "io"),
    log:
        f"{RESULTS}/logs/map_task_usage/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_task_usage/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    # one thread: 8 real-size shards take 16.2-16.6 s two at a time, 19.0-19.3 s one at a time with two threads
    threads: 1
    resources:
        # one shard: peak 311 MB (27.7 MB in) / 569 MB (111 MB in; a real shard is ~90 MB) on the default run / the
        # paper-scale slice; a batch of two real-size shards (the default shards_per_map): 1,169-1,279 MB (the
        # 8-shard slice) and 1,221 MB (the 2-shard slice's 111 + 103 MB) (bench/memory.py)
        mem_mb=batch_mem(315, 4.35, 5.2),
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/mapreduce_map_task_usage.py"


rule reduce_bucket:
    input:
        records=expand(f"{RESULTS}/map/task_usage/{{stem}}/records.parquet", stem=map_batches("task_usage")),
        pieces=expand(f"{RESULTS}/map/task_events/{{stem}}.parquet", stem=map_batches("task_events")),
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
        code=code_digest("prep.mapreduce", "io", "report.summary", "prep.tasks", "insufficient"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/mapreduce_collect_tasks.py"
