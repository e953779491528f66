# The Google 2019 source's rules (colocate.sources.google2019): the synthetic model written in the 2019 format, one
# cell downloaded from Google Cloud Storage, or a local copy; each JSON-lines shard mapped to the contract's tables
# (below), read by the shared reduce (mapreduce.smk); the trace-driven placement's requests and machines. Included only
# on a 2019 run.

from colocate import io as _io
from colocate.sources import google2019 as _g19

#: A shard's stem: <table>-<12-digit shard>.
G19_STEM = r"[a-z_]+-\d{12}"


# Defined only for the synthetic source: no other source's directory may be written by it.
if SRC.is_model:

    rule synthesize_trace:
        output:
            manifest=f"{TRACE_ROOT}/SHA256SUM",
            shards=[trace_file(t, s) for t in _g19.TRACE_TABLES for s in shard_stems(t)],
        params:
            model=SRC.model,
            shards=SRC.shard_counts(),
            seed=config["trace"]["seed"],
            code=code_digest("trace.synth", "trace", "sources.google2019"),
        log:
            # the trace is shared by every run with the same model: its log lives beside it
            f"{TRACE_ROOT}/logs/synthesize_trace.log",
        benchmark:
            f"{TRACE_ROOT}/logs/synthesize_trace.tsv"
        priority: PRIORITY_TRACE
        threads: 2
        resources:
            # the model as for 2011, plus a shard's JSON held twice while its NULL fields are dropped
            mem_mb=SRC.synthesis_mem_mb(config["scale"]) + 1000,
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/google2019_synthesize.py"


if isinstance(SRC, _g19.Download):

    rule download_google2019:
        output:
            f"{TRACE_ROOT}/{{table}}/{{stem}}.json.gz",
        wildcard_constraints:
            table="|".join(_g19.TRACE_TABLES),
            stem=G19_STEM,
        params:
            url=lambda wc: SRC.url(wc.table, wc.stem),
            retries=config["trace"]["retries"],
            backoff=config["trace"]["backoff"],
        log:
            f"{TRACE_ROOT}/logs/download/{{table}}/{{stem}}.log",
        benchmark:
            f"{TRACE_ROOT}/logs/download/{{table}}/{{stem}}.tsv"
        priority: PRIORITY_TRACE
        threads: 1
        resources:
            # streamed to disk, hashed as it arrives
            mem_mb=300,
            runtime=60,
        conda:
            "../../environment.yml"
        script:
            "../scripts/google2019_download.py"


# The contract's tables (colocate.sources.contract.TABLES) as this source writes them, one map job per shard.
USAGE_RECORDS = expand(f"{RESULTS}/map/instance_usage/{{stem}}/records.parquet", stem=shard_stems("instance_usage"))
#: each shard's records of the job × window aggregates, sorted by window (a shard holds rows from the whole month)
G19_WINDOW_RECORDS = expand(f"{RESULTS}/map/instance_usage/{{stem}}/window_records.parquet", stem=shard_stems("instance_usage"))
#: the job × window aggregates, exact: one reduce per chunk of jobs.chunk_windows windows, over every shard
G19_WINDOW_CHUNKS = -(-N_WINDOWS // config["jobs"]["chunk_windows"])
GROUP_WINDOWS = expand(f"{RESULTS}/reduce/job_windows/chunk-{{chunk}}.parquet", chunk=range(G19_WINDOW_CHUNKS))
SAMPLED_WINDOWS = expand(f"{RESULTS}/map/instance_usage/{{stem}}/sampled_windows.parquet", stem=shard_stems("instance_usage"))
WINDOW_MOMENTS = expand(f"{RESULTS}/map/instance_usage/{{stem}}/window_moments.parquet", stem=shard_stems("instance_usage"))
ENTITY_PIECES = expand(f"{RESULTS}/map/instance_events/{{stem}}/pieces.parquet", stem=shard_stems("instance_events"))
#: the instance events in 2011's task_events columns, for the placement events and requests
G19_EVENTS = expand(f"{RESULTS}/map/instance_events/{{stem}}/events.parquet", stem=shard_stems("instance_events"))
GROUP_EVENTS = expand(f"{RESULTS}/map/collection_events/{{stem}}.parquet", stem=shard_stems("collection_events"))
MACHINE_EVENTS = [f"{RESULTS}/map/machine_events.parquet"]
PLACEMENT_EVENTS = [f"{RESULTS}/map/placement_events.parquet"]


rule map_instance_usage:
    input:
        shard=lambda wc: trace_file("instance_usage", wc.stem),
    output:
        records=f"{RESULTS}/map/instance_usage/{{stem}}/records.parquet",
        window_records=f"{RESULTS}/map/instance_usage/{{stem}}/window_records.parquet",
        sampled=f"{RESULTS}/map/instance_usage/{{stem}}/sampled_windows.parquet",
        moments=f"{RESULTS}/map/instance_usage/{{stem}}/window_moments.parquet",
    wildcard_constraints:
        stem=G19_STEM,
    params:
        buckets=config["mapreduce"]["buckets"],
        n_windows=N_WINDOWS,
        windows_per_day=config["mapreduce"]["sampled_windows_per_day"],
        seed=config["mapreduce"]["seed"],
        code=code_digest("prep.mapreduce", "analysis.sampling", "sources.google2019", "io"),
    log:
        f"{RESULTS}/logs/map_instance_usage/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_instance_usage/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    # two: the shard is decompressed and parsed ahead in threads while a block is mapped (1.5 cores even at one)
    threads: 2
    resources:
        # read in blocks, the slim columns of every row kept: peak 710-783 MB for the default run's shards (99 MB gz),
        # 937-1,044 MB for a real-size one (498 MB gz, 2.6 GB of JSON, 3.55 M rows; bench/google2019_map.py); 908 /
        # 1,022 MB (1 / 2 polars threads) with its window records (sorted, written before the records are bucketed)
        mem_mb=fitted_mem(900, 0.8),
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_map_instance_usage.py"


# The job × window aggregates of a chunk of windows (the contract's group windows), from every shard's records of it:
# exact, where aggregates per shard would split every (job, window) across the shards, and their percentiles could
# only be approximated.
rule job_windows_google2019:
    input:
        rows=lambda wc: G19_WINDOW_RECORDS,
    output:
        f"{RESULTS}/reduce/job_windows/chunk-{{chunk}}.parquet",
    wildcard_constraints:
        chunk=r"\d+",
    params:
        lo=lambda wc: window_chunk(wc)[0],
        hi=lambda wc: window_chunk(wc)[1],
        code=code_digest("prep.mapreduce", "io"),
    log:
        f"{RESULTS}/logs/job_windows_google2019/chunk-{{chunk}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/job_windows_google2019/chunk-{{chunk}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # the records of the row groups the chunk's windows may be in (the footers' statistics: the chunk, plus a
        # group at each edge of each shard), ~130 B each with the group-by's and percentiles' work: peak 1,128 / 749
        # MB for 9.1 / 4.8 M records of 4 shards (the tiny model's tiled), 138 MB for the tiny run's 76 k
        mem_mb=lambda wc, input: int(250 + 130 * _io.rows_in_range(input.rows, "window", *window_chunk(wc)) / 2**20),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_job_windows.py"


rule map_instance_events:
    input:
        shard=lambda wc: trace_file("instance_events", wc.stem),
    output:
        pieces=f"{RESULTS}/map/instance_events/{{stem}}/pieces.parquet",
        events=f"{RESULTS}/map/instance_events/{{stem}}/events.parquet",
    wildcard_constraints:
        stem=G19_STEM,
    params:
        buckets=config["mapreduce"]["buckets"],
        code=code_digest("prep.mapreduce", "sources.google2019", "io"),
    log:
        f"{RESULTS}/logs/map_instance_events/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_instance_events/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        mem_mb=fitted_mem(300, 40),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_map_instance_events.py"


rule map_collection_events:
    input:
        shard=lambda wc: trace_file("collection_events", wc.stem),
    output:
        f"{RESULTS}/map/collection_events/{{stem}}.parquet",
    wildcard_constraints:
        stem=G19_STEM,
    params:
        code=code_digest("analysis.jobs", "sources.google2019", "io"),
    log:
        f"{RESULTS}/logs/map_collection_events/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_collection_events/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        mem_mb=fitted_mem(300, 40),
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_map_collection_events.py"


rule map_machine_events:
    input:
        events=lambda wc: [trace_file("machine_events", s) for s in shard_stems("machine_events")],
    output:
        MACHINE_EVENTS[0],
    params:
        code=code_digest("sources.google2019", "io"),
    log:
        f"{RESULTS}/logs/map_machine_events.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_machine_events.tsv"
    threads: 1
    resources:
        mem_mb=fitted_mem(300, 40),
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_machine_events.py"


rule map_placement_events:
    input:
        events=lambda wc: G19_EVENTS,
    output:
        PLACEMENT_EVENTS[0],
    params:
        # the co-location analysis's last instant
        until_day=max(config["colocation"]["days"]),
        code=code_digest("sources.contract", "io"),
    log:
        f"{RESULTS}/logs/map_placement_events.log",
    benchmark:
        f"{RESULTS}/benchmarks/map_placement_events.tsv"
    threads: 1
    resources:
        # every shard's events read, those up to the last instant kept
        mem_mb=lambda wc, input: int(300 + 3 * size_mb(input.events)),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/google2019_placement_events.py"


# The trace-driven placement's requests (the instance events' submissions and requests) and machines (machine events).
rule placement_trace_requests:
    input:
        # the first event_shards shards: a sample of the month's events, not its first days (the shards are not
        # time-ordered)
        events=lambda wc: G19_EVENTS[: PLACEMENT_CFG["trace"]["event_shards"]],
        machines=MACHINE_EVENTS[0],
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
        mem_mb=lambda wc, input: int(300 + 4 * size_mb(input.events) + 0.7 * size_mb(input.stats)),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_trace_requests.py"
