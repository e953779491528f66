# The trace: synthesized (default), downloaded from the public bucket, or read from a local copy.


rule synthesize_trace:
    output:
        manifest="resources/trace/synthetic/SHA256SUM",
        schema="resources/trace/synthetic/schema.csv",
        shards=synthetic_outputs() if SOURCE == "synthetic" else [],
    params:
        model={k: v for k, v in config["synthetic"].items() if k != "shards"},
        shards=synthetic_shard_counts(),
        seed=config["trace"]["seed"],
        code=code_digest("synth", "trace"),
    log:
        "logs/synthesize_trace.log",
    benchmark:
        "benchmarks/synthesize_trace.tsv"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/synthesize_trace.py"


rule download_manifest:
    output:
        "resources/trace/google/SHA256SUM",
    params:
        url=config["trace"]["url"],
        relpath="SHA256SUM",
        retries=config["trace"]["retries"],
        backoff=config["trace"]["backoff"],
    log:
        "logs/download/SHA256SUM.log",
    benchmark:
        "benchmarks/download/SHA256SUM.tsv"
    threads: 1
    resources:
        mem_mb=200,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/download_trace.py"


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
        "logs/download/{table}/{stem}.log",
    benchmark:
        "benchmarks/download/{table}/{stem}.tsv"
    threads: 1
    resources:
        mem_mb=300,
        runtime=60,
    conda:
        "../../environment.yml"
    script:
        "../scripts/download_trace.py"


rule verify_local_trace:
    input:
        shards=lambda wc: [
            trace_file(t, s) for t in ("task_events", "task_usage", "job_events", "machine_events") for s in shard_stems(t)
        ],
    output:
        "results/trace/verified.tsv",
    params:
        root=TRACE_ROOT,
    log:
        "logs/verify_local_trace.log",
    benchmark:
        "benchmarks/verify_local_trace.tsv"
    threads: 1
    resources:
        mem_mb=300,
        runtime=120,
    conda:
        "../../environment.yml"
    script:
        "../scripts/verify_local_trace.py"
