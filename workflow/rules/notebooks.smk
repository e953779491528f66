# Inspection notebooks, executed by the `notebook:` directive; the executed copies are kept.

TARGETS.append((("task_events", "task_usage"), [f"{RESULTS}/figures/task_lengths.png"]))


rule notebook_trace_and_tasks:
    input:
        counts=f"{RESULTS}/tables/task_counts.csv",
        stats=f"{RESULTS}/tasks/task_stats.parquet",
        series=f"{RESULTS}/reduce/bucket-0/series.parquet",
    output:
        lengths=report(
            f"{RESULTS}/figures/task_lengths.png",
            caption="../report/task_lengths.rst",
            category="Trace and tasks",
        ),
        examples=report(
            f"{RESULTS}/figures/example_series.png",
            caption="../report/example_series.rst",
            category="Trace and tasks",
        ),
    params:
        long_min_records=config["mapreduce"]["long_min_records"],
    log:
        notebook=f"{RESULTS}/notebooks/01_trace_and_tasks.ipynb",
    benchmark:
        f"{RESULTS}/benchmarks/notebook_trace_and_tasks.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/01_trace_and_tasks.py.ipynb"
