# Placement simulator (Tantawi & Steinder, adaptive bin packing): Pack, Spread, XBalance and ABP on the
# Table I workload (Tables II-VIII, Figs 1-4), over many replicates, with BSA, and on requests from the trace.
from colocate.scheduling import placement as _placement
from colocate.scheduling.placement_workload import Experiment as PlacementExperiment, policy_specs as placement_policy_specs

PLACEMENT_CFG = config["placement"]
# Checked at parse time, so that an inconsistent config fails before any job, naming its key.
PLACEMENT_EXPERIMENT = PlacementExperiment.from_config(PLACEMENT_CFG)
PLACEMENT_SPECS = placement_policy_specs(PLACEMENT_CFG["policies"], PLACEMENT_CFG["resources"], PLACEMENT_CFG["prime_resource"], PLACEMENT_CFG["xbalance_weights"], "placement")
PLACEMENT_TRACE_SPECS = placement_policy_specs(
    PLACEMENT_CFG["trace"]["policies"], ["cpu", "memory"], PLACEMENT_CFG["trace"]["prime_resource"], PLACEMENT_CFG["trace"]["xbalance_weights"], "placement.trace"
)
_placement.make_optimiser(PLACEMENT_CFG["optimiser"], tie_break=PLACEMENT_CFG["tie_break"], **PLACEMENT_CFG["bsa"])
PLACEMENT_PLUGINS = plugin_digest(
    PLACEMENT_CFG["optimiser"], *(s["kind"] for s in PLACEMENT_SPECS + PLACEMENT_TRACE_SPECS)
)
PLACEMENT_EXPERIMENT_KEYS = ("nodes", "resources", "capacity", "pod_types", "load_resource", "arrival_rate", "arrival_mix", "load_factor", "phases", "warmup", "snapshot_pod")
PLACEMENT_PARAMS = {k: PLACEMENT_CFG[k] for k in PLACEMENT_EXPERIMENT_KEYS}
PLACEMENT_REPLICATES = list(range(PLACEMENT_CFG["replicates"]))
PLACEMENT_CODE = ("scheduling.placement", "scheduling.placement_workload", "scheduling.placement_runs")
PLACEMENT_TABLES = ["table2", "table3", "table4", "table5", "table6", "table7", "table8", "metrics", "replicates", "tests"]
PLACEMENT_FIGURES = {
    "fig1": "placement_fig1_load_trajectory",
    "fig2": "placement_fig2_stdev",
    "fig3": "placement_fig3_snapshot",
    "fig4": "placement_fig4_error",
    "replicates": "placement_reject_replicates",
}
PLACEMENT_CATEGORY = "Placement (Tantawi & Steinder)"

# The paper's own workload (Table I) needs no trace: it runs beside the analyses of the papers' trace; a run on
# another trace replays that trace's requests instead (its bytes are the same on every run).
if SRC.paper_trace:
    TARGETS.append(
        (
            (),
            [f"{RESULTS}/tables/placement_{t}.csv" for t in PLACEMENT_TABLES]
            + [f"{RESULTS}/figures/{f}.png" for f in PLACEMENT_FIGURES.values()]
            + [f"{RESULTS}/tables/placement_bsa.csv", f"{RESULTS}/tables/placement_replay.csv"]
            + [f"{RESULTS}/notebooks/04_placement.ipynb", f"{RESULTS}/notebooks/04_placement.html"],
        )
    )
    SUMMARY_PARTS.append(((), f"{RESULTS}/summary/placement.csv"))
# The trace-driven run reads the requests and machines that the source's rules file maps from its trace
# (placement/trace/requests.parquet, nodes.parquet and tables/placement_trace_workload.csv), with what it needs.
# A source that maps none (placement_needs None) has no trace-driven run.
if SRC.placement_needs is not None:
    TARGETS.append((SRC.placement_needs, [f"{RESULTS}/tables/placement_trace.csv", f"{RESULTS}/figures/placement_trace.png"]))
    SUMMARY_PARTS.append((SRC.placement_needs, f"{RESULTS}/summary/placement_trace.csv"))
    NEEDS["placement_trace"] = ("Trace-driven placement (Tantawi & Steinder on the trace's requests)", SRC.placement_needs)


rule placement_run:
    output:
        requests=f"{RESULTS}/placement/runs/rep-{{replicate}}/requests.parquet",
        snapshot=f"{RESULTS}/placement/runs/rep-{{replicate}}/snapshot.parquet",
    wildcard_constraints:
        replicate=r"\d+",
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        replicate=lambda wc: int(wc.replicate),
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        optimiser=PLACEMENT_CFG["optimiser"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"] if PLACEMENT_CFG["optimiser"] == "bsa" else None,
        code=code_digest(*PLACEMENT_CODE, "io") + PLACEMENT_PLUGINS,
    log:
        f"{RESULTS}/logs/placement_run/rep-{{replicate}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_run/rep-{{replicate}}.tsv"
    threads: 1
    resources:
        mem_mb=220,  # peak 136 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_run.py"


rule placement_tables:
    input:
        requests=expand(f"{RESULTS}/placement/runs/rep-{{replicate}}/requests.parquet", replicate=PLACEMENT_REPLICATES),
        snapshots=expand(f"{RESULTS}/placement/runs/rep-{{replicate}}/snapshot.parquet", replicate=PLACEMENT_REPLICATES),
    output:
        **{
            t: report(
                f"{RESULTS}/tables/placement_{t}.csv",
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
        code=code_digest(*PLACEMENT_CODE, "scheduling.placement_analysis"),
    log:
        f"{RESULTS}/logs/placement_tables.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_tables.tsv"
    threads: 1
    resources:
        mem_mb=650,  # peak 413 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_tables.py"


rule placement_figures:
    input:
        requests=f"{RESULTS}/placement/runs/rep-0/requests.parquet",
        snapshot=f"{RESULTS}/placement/runs/rep-0/snapshot.parquet",
        metrics=f"{RESULTS}/tables/placement_metrics.csv",
        replicates=f"{RESULTS}/tables/placement_replicates.csv",
        # the paper's one run per policy (Table II's % reject), drawn beside ours
        claims=str(Path(workflow.basedir, "workflow/papers/tantawi.tsv")),
    output:
        **{
            k: report(
                f"{RESULTS}/figures/{name}.png",
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
        code=code_digest("scheduling.placement_workload", "scheduling.placement_analysis", "figures/placement", "figures/__init__"),
    log:
        f"{RESULTS}/logs/placement_figures.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_figures.tsv"
    threads: 1
    resources:
        mem_mb=500,  # peak 300 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_figures.py"


rule placement_bsa:
    output:
        table=report(
            f"{RESULTS}/tables/placement_bsa.csv",
            caption="../report/placement_bsa.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Tables",
        ),
        timing=report(
            f"{RESULTS}/tables/placement_bsa_timing.csv",
            caption="../report/placement_bsa.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Tables",
        ),
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"],
        code=code_digest(*PLACEMENT_CODE) + PLACEMENT_PLUGINS,
    log:
        f"{RESULTS}/logs/placement_bsa.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_bsa.tsv"
    threads: 1
    resources:
        mem_mb=200,  # peak 125 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_bsa.py"


rule placement_summary:
    input:
        table2=f"{RESULTS}/tables/placement_table2.csv",
        table3=f"{RESULTS}/tables/placement_table3.csv",
        table8=f"{RESULTS}/tables/placement_table8.csv",
        replicates=f"{RESULTS}/tables/placement_replicates.csv",
        tests=f"{RESULTS}/tables/placement_tests.csv",
        bsa=f"{RESULTS}/tables/placement_bsa.csv",
    output:
        f"{RESULTS}/summary/placement.csv",
    params:
        code=code_digest("scheduling.placement_analysis", "measure"),
    log:
        f"{RESULTS}/logs/placement_summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_summary.tsv"
    threads: 1
    resources:
        mem_mb=350,  # peak 218 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_summary.py"


rule notebook_placement:
    input:
        requests=f"{RESULTS}/placement/runs/rep-0/requests.parquet",
        snapshot=f"{RESULTS}/placement/runs/rep-0/snapshot.parquet",
    output:
        replay=report(
            f"{RESULTS}/tables/placement_replay.csv",
            caption="../report/placement_replay.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Tables",
        ),
    params:
        experiment=PLACEMENT_PARAMS,
        specs=PLACEMENT_SPECS,
        seed=PLACEMENT_CFG["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        optimiser=PLACEMENT_CFG["optimiser"],
        tie_break=PLACEMENT_CFG["tie_break"],
        bsa=PLACEMENT_CFG["bsa"] if PLACEMENT_CFG["optimiser"] == "bsa" else None,
        code=code_digest(*PLACEMENT_CODE, "scheduling.placement_analysis", "figures/placement"),
    log:
        notebook=f"{RESULTS}/logs/notebooks/04_placement.ipynb",
    benchmark:
        f"{RESULTS}/benchmarks/notebook_placement.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/04_placement.py.ipynb"


rule placement_trace_run:
    input:
        requests=f"{RESULTS}/placement/trace/requests.parquet",
        nodes=f"{RESULTS}/placement/trace/nodes.parquet",
        facts=f"{RESULTS}/tables/placement_trace_workload.csv",
    output:
        log=f"{RESULTS}/placement/trace/log.parquet",
        table=report(
            f"{RESULTS}/tables/placement_trace.csv",
            caption="../report/placement_trace_table.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Trace-driven",
        ),
        figure=report(
            f"{RESULTS}/figures/placement_trace.png",
            caption="../report/placement_trace.rst",
            category=PLACEMENT_CATEGORY,
            subcategory="Trace-driven",
        ),
        summary=f"{RESULTS}/summary/placement_trace.csv",
    params:
        specs=PLACEMENT_TRACE_SPECS,
        seed=PLACEMENT_CFG["trace"]["seed"],
        alpha=PLACEMENT_CFG["alpha"],
        tie_break=PLACEMENT_CFG["tie_break"],
        warmup=PLACEMENT_CFG["trace"]["warmup"],
        code=code_digest("insufficient", *PLACEMENT_CODE, "scheduling.placement_analysis", "figures/placement", "measure", "io")
        + PLACEMENT_PLUGINS,
    log:
        f"{RESULTS}/logs/placement_trace_run.log",
    benchmark:
        f"{RESULTS}/benchmarks/placement_trace_run.tsv"
    threads: 1
    resources:
        mem_mb=450,  # peak 289 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/placement_trace_run.py"
