# The Google 2011 source's rules (colocate.sources.google2011): the trace synthesized (default), the shipped real sample,
# downloaded from the public bucket, or a local copy, checked; its shards mapped to the contract's tables (below), read
# by the shared reduce (mapreduce.smk); the trace-driven placement's requests and machines.


# Defined only for the synthetic source: no other source's directory may be written by it.
if SRC.is_model:

    rule synthesize_trace:
        output:
            manifest=f"{TRACE_ROOT}/SHA256SUM",
            schema=f"{TRACE_ROOT}/schema.csv",
            shards=[trace_file(t, s) for t in SRC.shard_counts() for s in shard_stems(t)],
        params:
            model=SRC.model,
            shards=SRC.shard_counts(),
            seed=config["trace"]["seed"],
            code=code_digest("trace.synth", "trace"),
        log:
            # the trace is shared by every run with the same model: its log lives beside it
            f"{TRACE_ROOT}/logs/synthesize_trace.log",
        benchmark:
            f"{TRACE_ROOT}/logs/synthesize_trace.tsv"
        priority: PRIORITY_TRACE
        threads: 2
        resources:
            mem_mb=SRC.synthesis_mem_mb(config["scale"]),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/trace_synthesize.py"


rule download_manifest:
    output:
        "resources/trace/google/SHA256SUM",
    params:
        url=config["trace"]["url"],
        relpath="SHA256SUM",
        retries=config["trace"]["retries"],
        backoff=config["trace"]["backoff"],
    log:
        "resources/trace/google/logs/download/SHA256SUM.log",
    benchmark:
        "resources/trace/google/logs/download/SHA256SUM.tsv"
    priority: PRIORITY_TRACE
    threads: 1
    resources:
        mem_mb=200,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/trace_download.py"


rule download_trace:
    input:
        manifest="resources/trace/google/SHA256SUM",
    output:
        "resources/trace/google/{table}/{stem}.csv.gz",
    wildcard_constraints:
        table=TABLE_RE,
        stem=STEM_RE,
    params:
        url=config["trace"]["url"],
        relpath=lambda wc: f"{wc.table}/{wc.stem}.csv.gz",
        retries=config["trace"]["retries"],
        backoff=config["trace"]["backoff"],
    log:
        "resources/trace/google/logs/download/{table}/{stem}.log",
    benchmark:
        "resources/trace/google/logs/download/{table}/{stem}.tsv"
    priority: PRIORITY_TRACE
    threads: 1
    resources:
        mem_mb=300,
        runtime=60,
    conda:
        "../../environment.yml"
    script:
        "../scripts/trace_download.py"


rule verify_local_trace:
    input:
        shards=lambda wc: [
            trace_file(t, s) for t in SRC.verified_tables for s in shard_stems(t)
        ],
        # a SHA256SUM added later re-verifies the copy
        manifest=lambda wc: [p] if Path(p := f"{TRACE_ROOT}/SHA256SUM").exists() else [],
    output:
        f"{RESULTS}/trace/verified.tsv",
    params:
        root=TRACE_ROOT,
    log:
        f"{RESULTS}/logs/verify_local_trace.log",
    benchmark:
        f"{RESULTS}/benchmarks/verify_local_trace.tsv"
    priority: PRIORITY_TRACE
    threads: 1
    resources:
        mem_mb=300,
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/trace_verify.py"


# The contract's tables (colocate.sources.contract.TABLES) as this source writes them. Map, one job per shard or batch
# of shards: task_events to task pieces, task_usage to bucketed records, job × window aggregates and sampled
# windows, job_events to job pieces; machine_events and the first task_events to Parquet in the trace's order.
USAGE_RECORDS = expand(f"{RESULTS}/map/task_usage/{{stem}}/records.parquet", stem=map_batches("task_usage"))
ENTITY_PIECES = expand(f"{RESULTS}/map/task_events/{{stem}}.parquet", stem=map_batches("task_events"))
GROUP_WINDOWS = expand(f"{RESULTS}/map/task_usage/{{stem}}/job_windows.parquet", stem=map_batches("task_usage"))
SAMPLED_WINDOWS = expand(f"{RESULTS}/map/task_usage/{{stem}}/sampled_windows.parquet", stem=map_batches("task_usage"))
GROUP_EVENTS = expand(f"{RESULTS}/map/job_events/{{stem}}.parquet", stem=map_batches("job_events"))
MACHINE_EVENTS = [f"{RESULTS}/map/machine_events.parquet"]
PLACEMENT_EVENTS = [f"{RESULTS}/map/placement_events.parquet"]
#: The placement events are read up to the co-location analysis's last instant (colocation.days), no further.
PLACEMENT_EVENTS_UNTIL_DAY = max(config["colocation"]["days"])


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
        code=code_digest("prep.mapreduce", "prep.tasks", "sources.contract", "trace", "io"),
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
        code=code_digest("prep.mapreduce", "prep.tasks", "sources.contract", "trace", "io"),
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


rule map_job_events:
    input:
        unpack(lambda wc: verified()),
        shards=map_shards("job_events"),
    output:
        f"{RESULTS}/map/job_events/{{stem}}.parquet",
    wildcard_constraints:
        stem=MAP_RE,
    params:
        code=code_digest("analysis.jobs", "trace", "io"),
    log:
        f"{RESULTS}/logs/map_job_events/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_job_events/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # peak 165 MB (7.0 MB in) / 164 MB (9.9 MB in) on the default run / the paper-scale slice (bench/memory.py)
        # 134 MB for a batch of 10 real shards of 0.1-0.8 MB (bench/map_batches.py)
        mem_mb=batch_mem(250, 5, 1),
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/jobs_map_events.py"


rule map_machine_events:
    input:
        unpack(lambda wc: verified()),
        events=lambda wc: trace_file("machine_events", shard_stems("machine_events")[0]),
    output:
        MACHINE_EVENTS[0],
    params:
        code=code_digest("analysis.failures", "trace", "io"),
    log:
        f"{RESULTS}/logs/map_machine_events.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_machine_events.tsv"
    threads: 1
    resources:
        # the real file: ~37k events, a few MB in memory
        mem_mb=300,
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2011_machine_events.py"


rule map_placement_events:
    input:
        unpack(lambda wc: verified()),
        events=lambda wc: [trace_file("task_events", s) for s in shard_stems("task_events")],
    output:
        PLACEMENT_EVENTS[0],
    params:
        # the co-location analysis's last instant: the shards after the one that passes it are not read
        until_day=PLACEMENT_EVENTS_UNTIL_DAY,
        code=code_digest("sources.contract", "trace", "io"),
    log:
        f"{RESULTS}/logs/map_placement_events.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_placement_events.tsv"
    threads: 1
    resources:
        # the events up to the last instant: at the trace start (colocation.days [0]) the first shard's, read in
        # part (peak 148–175 MB on the default run and the paper-scale slice, bench/memory.py); a later day reads
        # every shard before it (unmeasured: ~10 MB per MB of csv.gz, as the maps)
        mem_mb=lambda wc, input: int(280 + (10 * size_mb(input.events) if PLACEMENT_EVENTS_UNTIL_DAY > 0 else 0)),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2011_placement_events.py"


# The trace-driven placement's requests (task_events' submissions and requests) and machines (machine_events).
rule placement_trace_requests:
    input:
        unpack(lambda wc: verified()),
        events=lambda wc: [trace_file("task_events", s) for s in shard_stems("task_events")[: PLACEMENT_CFG["trace"]["event_shards"]]],
        machines=lambda wc: trace_file("machine_events", shard_stems("machine_events")[0]),
        stats=f"{RESULTS}/tasks/task_stats.parquet",
    output:
        requests=f"{RESULTS}/placement/trace/requests.parquet",
        nodes=f"{RESULTS}/placement/trace/nodes.parquet",
        facts=report(
            f"{RESULTS}/tables/placement_trace_workload.csv",
            caption="../report/placement_trace_table.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Tables",
        ),
    params:
        seed=PLACEMENT_CFG["trace"]["seed"],
        machines=PLACEMENT_CFG["trace"]["machines"],
        requests=PLACEMENT_CFG["trace"]["requests"],
        offered_cpu_load=PLACEMENT_CFG["trace"]["offered_cpu_load"],
        lifetime=PLACEMENT_CFG["trace"]["lifetime"],
        event_shards=PLACEMENT_CFG["trace"]["event_shards"],
        code=code_digest("insufficient", "scheduling.placement", "scheduling.placement_workload", "trace", "io"),
    log:
        f"{RESULTS}/logs/placement_trace_requests.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_trace_requests.tsv"
    threads: 1
    resources:
        # task_events: ~100 bytes per event in memory for ~15 events per compressed kB; of the task table only
        # (job, task, records): ~20 bytes per task, ~36,000 tasks per MB on disk (the 2-shard slice: 375 MB peak)
        mem_mb=lambda wc, input: int(300 + 12 * size_mb(input.events) + 0.7 * size_mb(input.stats)),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_trace_requests.py"
