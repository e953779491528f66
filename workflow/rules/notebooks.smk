# Inspection notebooks, executed by the `notebook:` directive. Snakemake writes each executed copy as its rule's
# log, logs/notebooks/<name>.ipynb, with run times and the run's absolute paths; normalise_notebook keeps it as
# notebooks/<name>.ipynb without them (colocate.report.notebooks): the same inputs give the same bytes.

TARGETS.append(
    (("entities", "usage_series"), [f"{RESULTS}/figures/task_lengths.png", f"{RESULTS}/notebooks/01_trace_and_tasks.ipynb",
                                     f"{RESULTS}/notebooks/01_trace_and_tasks.html"])
)


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
        notebook=f"{RESULTS}/logs/notebooks/01_trace_and_tasks.ipynb",
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


rule normalise_notebook:
    input:
        f"{RESULTS}/logs/notebooks/{{name}}.ipynb",
    output:
        f"{RESULTS}/notebooks/{{name}}.ipynb",
    wildcard_constraints:
        name=r"\d\d_\w+",
    params:
        # shown as <workflow> where an output names it (the run's directory as .)
        basedir=workflow.basedir,
        # the run the kept copy's first cell finds when the notebook is re-run in Jupyter
        run=RUN,
    log:
        f"{RESULTS}/logs/normalise_notebook/{{name}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/normalise_notebook/{{name}}.tsv"
    threads: 1
    resources:
        mem_mb=160,  # peak 95 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=2,
    conda:
        "../../environment.yml"
    script:
        "../scripts/notebook_normalise.py"


rule notebook_html:
    input:
        f"{RESULTS}/notebooks/{{name}}.ipynb",
    output:
        report(f"{RESULTS}/notebooks/{{name}}.html", caption="../report/notebooks.rst", category="Notebooks"),
    wildcard_constraints:
        name=r"\d\d_\w+",
    params:
        code=code_digest("report.notebooks"),
    log:
        f"{RESULTS}/logs/notebook_html/{{name}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/notebook_html/{{name}}.tsv"
    threads: 1
    resources:
        mem_mb=230,  # peak 137 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=2,
    conda:
        "../../environment.yml"
    script:
        "../scripts/notebook_html.py"
