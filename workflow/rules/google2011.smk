# The Google 2011 source's rules (colocate.sources.google2011): the trace synthesized (default), the shipped real sample,
# downloaded from the public bucket, or a local copy, checked; its shards are mapped by mapreduce.smk.


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
