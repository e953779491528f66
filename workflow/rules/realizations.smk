# N long tasks × R realizations of inst and avg usage (Janus & Rzadca §3.1), memory-mapped float32.

TARGETS.append((("entities", "usage_series"), [f"{RESULTS}/realizations/tasks.parquet"]))
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/realizations.csv"))


rule sample_realizations:
    input:
        long=f"{RESULTS}/tasks/long_tasks.parquet",
        series=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
    output:
        inst=f"{RESULTS}/realizations/inst.npy",
        avg=f"{RESULTS}/realizations/avg.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
        summary=f"{RESULTS}/summary/realizations.csv",
    params:
        n_tasks=config["realizations"]["n_tasks"],
        n_realizations=config["realizations"]["n_realizations"],
        seed=config["realizations"]["seed"],
        chunk_tasks=config["realizations"]["chunk_tasks"],
        code=code_digest("insufficient", "prep.realizations", "io", "measure"),
    log:
        f"{RESULTS}/logs/sample_realizations.log",
    benchmark:
        f"{RESULTS}/benchmarks/sample_realizations.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        mem_mb=sample_realizations_mem_mb,
        runtime=60,
    conda:
        "../../environment.yml"
    script:
        "../scripts/realizations_sample.py"
