# The Beta admission controller of Unuvar et al. §IV-F on sets of the trace's long tasks at their own times
# (or on arrivals drawn from their realizations; Table VIII, Fig 9). The science lives in
# colocate.scheduling.admission.

TARGETS.append(
    (("entities", "usage_series"), [f"{RESULTS}/tables/admission.csv", f"{RESULTS}/figures/admission_fig9_utilisation.png"])
)


rule admission_control:
    input:
        inst=f"{RESULTS}/realizations/inst.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
        series=CH_SERIES,
    output:
        utilisation=f"{RESULTS}/admission/utilisation.parquet",
        table=report(
            f"{RESULTS}/tables/admission.csv",
            caption="../report/admission_table.rst",
            category="Admission control (Unuvar et al.)",
        ),
        replicates=report(
            f"{RESULTS}/tables/admission_replicates.csv",
            caption="../report/admission_replicates.rst",
            category="Admission control (Unuvar et al.)",
        ),
        summary=f"{RESULTS}/summary/admission.csv",
    params:
        arrivals=config["packing"]["admission"]["arrivals"],
        mean_running=config["packing"]["admission"]["mean_running"],
        threshold=config["packing"]["admission"]["threshold"],
        eps=config["packing"]["admission"]["eps"],
        peak_utilisation=config["packing"]["admission"]["peak_utilisation"],
        peak_quantile=config["packing"]["admission"]["peak_quantile"],
        seed=config["packing"]["admission"]["seed"],
        replicates=config["packing"]["admission"]["replicates"],
        source=config["packing"]["admission"]["source"],
        estimator=config["packing"]["admission"]["estimator"],
        history=config["packing"]["admission"]["history_windows"],
        job_cap=CH_UNUVAR["job_cap"],
        usage=CH_UNUVAR["usage"],
        code=code_digest("insufficient", "scheduling.admission", "analysis.aggregate", "measure", "io"),
    log:
        f"{RESULTS}/logs/admission_control.log",
    benchmark:
        f"{RESULTS}/benchmarks/admission_control.tsv"
    threads: 1
    resources:
        mem_mb=admission_mem_mb,
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/admission_run.py"


rule admission_figure:
    input:
        f"{RESULTS}/admission/utilisation.parquet",
    output:
        report(
            f"{RESULTS}/figures/admission_fig9_utilisation.png",
            caption="../report/admission_fig9.rst",
            category="Admission control (Unuvar et al.)",
        ),
    params:
        eps=0.01,
        threshold=config["packing"]["admission"]["threshold"],
        code=code_digest("insufficient", "figures/packing"),
    log:
        f"{RESULTS}/logs/admission_figure.log",
    benchmark:
        f"{RESULTS}/benchmarks/admission_figure.tsv"
    threads: 1
    resources:
        mem_mb=400,  # peak 262 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    conda:
        "../../environment.yml"
    script:
        "../scripts/admission_figure.py"
