# Placement simulator (Tantawi & Steinder, adaptive bin packing): Pack, Spread, XBalance and ABP on the
# Table I workload (Tables II-VIII, Figs 1-4), over many replicates, with BSA, and on requests from the trace.
from colocate.placement_workload import Experiment as PlacementExperiment, policy_specs as placement_policy_specs

PLACEMENT_CFG = config["placement"]
# Checked at parse time, so that an inconsistent config fails before any job, naming its key.
PLACEMENT_EXPERIMENT = PlacementExperiment.from_config(PLACEMENT_CFG)
PLACEMENT_SPECS = placement_policy_specs(PLACEMENT_CFG["policies"], PLACEMENT_CFG["resources"], PLACEMENT_CFG["prime_resource"], PLACEMENT_CFG["xbalance_weights"], "placement")
PLACEMENT_TRACE_SPECS = placement_policy_specs(
    PLACEMENT_CFG["trace"]["policies"], ["cpu", "memory"], PLACEMENT_CFG["trace"]["prime_resource"], PLACEMENT_CFG["trace"]["xbalance_weights"], "placement.trace"
)
PLACEMENT_EXPERIMENT_KEYS = ("nodes", "resources", "capacity", "pod_types", "load_resource", "arrival_rate", "phases", "warmup", "snapshot_pod")
PLACEMENT_PARAMS = {k: PLACEMENT_CFG[k] for k in PLACEMENT_EXPERIMENT_KEYS}
PLACEMENT_REPLICATES = list(range(PLACEMENT_CFG["replicates"]))
PLACEMENT_CODE = ("placement", "placement_workload", "placement_runs")
PLACEMENT_TABLES = ["table2", "table3", "table4", "table5", "table6", "table7", "table8", "metrics", "replicates", "tests"]
PLACEMENT_FIGURES = {
    "fig1": "placement_fig1_load_trajectory",
    "fig2": "placement_fig2_stdev",
    "fig3": "placement_fig3_snapshot",
    "fig4": "placement_fig4_error",
    "replicates": "placement_reject_replicates",
}
PLACEMENT_CATEGORY = "Placement (Tantawi & Steinder)"

TARGETS.append(
    (
        (),
        [f"results/tables/placement_{t}.csv" for t in PLACEMENT_TABLES]
        + [f"results/figures/{f}.png" for f in PLACEMENT_FIGURES.values()]
        + ["results/tables/placement_bsa.csv", "results/tables/placement_replay.csv"],
    )
)
TARGETS.append(
    (
        ("task_events", "task_usage", "machine_events"),
        ["results/tables/placement_trace.csv", "results/figures/placement_trace.png"],
    )
)
SUMMARY_PARTS.append(((), "results/summary/placement.csv"))
SUMMARY_PARTS.append((("task_events", "task_usage", "machine_events"), "results/summary/placement_trace.csv"))


rule placement_run:
    output:
        requests="results/placement/runs/rep-{replicate}/requests.parquet",
        snapshot="results/placement/runs/rep-{replicate}/snapshot.parquet",
    wildcard_constraints:
        replicate=r"\d+",
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        optimiser=PLACEMENT_CFG["optimiser"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"] if PLACEMENT_CFG["optimiser"] == "bsa" else None,
        code=code_digest(*PLACEMENT_CODE, "io"),
    log:
        "logs/placement_run/rep-{replicate}.log",
    benchmark:
        "benchmarks/placement_run/rep-{replicate}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_run.py"


rule placement_tables:
    input:
        requests=expand("results/placement/runs/rep-{replicate}/requests.parquet", replicate=PLACEMENT_REPLICATES),
        snapshots=expand("results/placement/runs/rep-{replicate}/snapshot.parquet", replicate=PLACEMENT_REPLICATES),
    output:
        **{
            t: report(
                f"results/tables/placement_{t}.csv",
                caption=f"../report/placement_{t}.rst",
                category=PLACEMENT_CATEGORY,
                subcategory="Tables",
            )
            for t in PLACEMENT_TABLES
        },
    params:
        experiment=PLACEMENT_PARAMS,
        alpha=PLACEMENT_CFG["alpha"],
        prime_resource=PLACEMENT_CFG["prime_resource"],
        target="ABP",
        code=code_digest(*PLACEMENT_CODE, "placement_analysis"),
    log:
        "logs/placement_tables.log",
    benchmark:
        "benchmarks/placement_tables.tsv"
    threads: 1
    resources:
        mem_mb=lambda wc, input: 1000 + 6 * int(input.size_mb),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_tables.py"


rule placement_figures:
    input:
        requests="results/placement/runs/rep-0/requests.parquet",
        snapshot="results/placement/runs/rep-0/snapshot.parquet",
        metrics="results/tables/placement_metrics.csv",
        replicates="results/tables/placement_replicates.csv",
    output:
        **{
            k: report(
                f"results/figures/{name}.png",
                caption=f"../report/{name}.rst",
                category=PLACEMENT_CATEGORY,
                subcategory="Figures",
            )
            for k, name in PLACEMENT_FIGURES.items()
        },
    params:
        experiment=PLACEMENT_PARAMS,
        prime_resource=PLACEMENT_CFG["prime_resource"],
        target="ABP",
        code=code_digest("placement_workload", "placement_analysis", "figures/placement", "figures/__init__"),
    log:
        "logs/placement_figures.log",
    benchmark:
        "benchmarks/placement_figures.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_figures.py"


rule placement_bsa:
    output:
        table=report(
            "results/tables/placement_bsa.csv",
            caption="../report/placement_bsa.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Tables",
        ),
        timing="results/tables/placement_bsa_timing.csv",
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"],
        code=code_digest(*PLACEMENT_CODE),
    log:
        "logs/placement_bsa.log",
    benchmark:
        "benchmarks/placement_bsa.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_bsa.py"


rule placement_summary:
    input:
        table2="results/tables/placement_table2.csv",
        table3="results/tables/placement_table3.csv",
        table8="results/tables/placement_table8.csv",
        replicates="results/tables/placement_replicates.csv",
        tests="results/tables/placement_tests.csv",
        bsa="results/tables/placement_bsa.csv",
    output:
        "results/summary/placement.csv",
    params:
        code=code_digest("placement_analysis", "summary"),
    log:
        "logs/placement_summary.log",
    benchmark:
        "benchmarks/placement_summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_summary.py"


rule notebook_placement:
    input:
        requests="results/placement/runs/rep-0/requests.parquet",
        snapshot="results/placement/runs/rep-0/snapshot.parquet",
    output:
        replay="results/tables/placement_replay.csv",
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        optimiser=PLACEMENT_CFG["optimiser"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"] if PLACEMENT_CFG["optimiser"] == "bsa" else None,
        code=code_digest(*PLACEMENT_CODE, "placement_analysis", "figures/placement"),
    log:
        notebook="results/notebooks/04_placement.ipynb",
    benchmark:
        "benchmarks/notebook_placement.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/04_placement.py.ipynb"


rule placement_trace_requests:
    input:
        unpack(lambda wc: verified()),
        events=lambda wc: [trace_file("task_events", s) for s in shard_stems("task_events")[: PLACEMENT_CFG["trace"]["event_shards"]]],
        machines=lambda wc: trace_file("machine_events", shard_stems("machine_events")[0]),
        stats="results/tasks/task_stats.parquet",
    output:
        requests="results/placement/trace/requests.parquet",
        nodes="results/placement/trace/nodes.parquet",
        facts="results/tables/placement_trace_workload.csv",
    params:
        seed=PLACEMENT_CFG["trace"]["seed"],
        machines=PLACEMENT_CFG["trace"]["machines"],
        requests=PLACEMENT_CFG["trace"]["requests"],
        offered_cpu_load=PLACEMENT_CFG["trace"]["offered_cpu_load"],
        lifetime=PLACEMENT_CFG["trace"]["lifetime"],
        event_shards=PLACEMENT_CFG["trace"]["event_shards"],
        code=code_digest("placement", "placement_workload", "trace", "io"),
    log:
        "logs/placement_trace_requests.log",
    benchmark:
        "benchmarks/placement_trace_requests.tsv"
    threads: 1
    resources:
        # task_events: ~100 bytes per event in memory for ~15 events per compressed kB
        mem_mb=lambda wc, input: 1500 + 12 * int(input.size_mb),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_trace_requests.py"


rule placement_trace_run:
    input:
        requests="results/placement/trace/requests.parquet",
        nodes="results/placement/trace/nodes.parquet",
        facts="results/tables/placement_trace_workload.csv",
    output:
        log="results/placement/trace/log.parquet",
        table=report(
            "results/tables/placement_trace.csv",
            caption="../report/placement_trace_table.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Trace-driven",
        ),
        figure=report(
            "results/figures/placement_trace.png",
            caption="../report/placement_trace.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Trace-driven",
        ),
        summary="results/summary/placement_trace.csv",
    params:
        specs=PLACEMENT_TRACE_SPECS,
        seed=PLACEMENT_CFG["trace"]["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        tie_break=PLACEMENT_CFG["tie_break"],
        warmup=PLACEMENT_CFG["trace"]["warmup"],
        code=code_digest(*PLACEMENT_CODE, "placement_analysis", "figures/placement", "summary", "io"),
    log:
        "logs/placement_trace_run.log",
    benchmark:
        "benchmarks/placement_trace_run.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_trace_run.py"
