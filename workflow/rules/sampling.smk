# Beyond the papers: does one random 1-s sample per window (inst) stand for a task's instantaneous variability? On a
# trace that records each window's distribution of 1-s samples (the contract's window moments; Google 2019), per task
# and in GPA's packing. The science lives in colocate.analysis.sampling.

SA = config["sampling"]
SA_NEEDS = ("entities", "usage_series", "window_distributions")
SA_CATEGORY = "Beyond the papers: one sample against the window's distribution"

TARGETS.append((SA_NEEDS, [f"{RESULTS}/tables/sampling_tasks.csv", f"{RESULTS}/figures/sampling_inst_vs_distribution.png"]))
SUMMARY_PARTS.append((SA_NEEDS, f"{RESULTS}/summary/sampling.csv"))
NEEDS["inst_sampling"] = ("One 1-s sample against the window's distribution (beyond the papers)", SA_NEEDS)


rule inst_sampling:
    input:
        # the contract's window moments, and Janus §3.1's long tasks
        moments=lambda wc: WINDOW_MOMENTS,
        long=f"{RESULTS}/tasks/long_tasks.parquet",
    output:
        tasks=report(f"{RESULTS}/tables/sampling_tasks.csv", caption="../report/sampling_tasks.rst", category=SA_CATEGORY),
        packing=report(f"{RESULTS}/tables/sampling_packing.csv", caption="../report/sampling_packing.rst",
                       category=SA_CATEGORY),
        figure=report(f"{RESULTS}/figures/sampling_inst_vs_distribution.png", caption="../report/sampling_figure.rst",
                      category=SA_CATEGORY),
        summary=f"{RESULTS}/summary/sampling.csv",
    params:
        min_windows=SA["min_windows"],
        n_tasks=SA["n_tasks"],
        instances=SA["instances"],
        realizations=SA["realizations"],
        rhos=SA["rhos"],
        capacity=SA["capacity"],
        seed=SA["seed"],
        trace=CAPABILITIES.trace,
        code=code_digest("analysis.sampling", "figures.sampling", "io"),
    log:
        f"{RESULTS}/logs/inst_sampling.log",
    benchmark:
        f"{RESULTS}/benchmarks/inst_sampling.tsv"
    threads: 1
    resources:
        # the window moments read whole and sorted: peak 840 MB for the default run's 73 MB of them
        mem_mb=lambda wc, input: int(450 + 7 * size_mb(input.moments)),
        runtime=20,
    conda:
        "../../environment.yml"
    script:
        "../scripts/sampling_inst.py"
