# Co-location: running tasks per machine at given instants, from task_events, beside the real trace's
# density at its start. The science lives in colocate.analysis.colocation.

CO = config["colocation"]

TARGETS.append((("placements",), [f"{RESULTS}/tables/colocation_density.csv"]))
SUMMARY_PARTS.append((("placements",), f"{RESULTS}/summary/colocation.csv"))
NEEDS["colocation"] = ("Co-location density per machine (issue 13)", ("placements",))


rule colocation_density:
    input:
        unpack(lambda wc: verified()),
        events=lambda wc: [trace_file("task_events", s) for s in shard_stems("task_events")],
    output:
        table=report(
            f"{RESULTS}/tables/colocation_density.csv",
            caption="../report/colocation_density.rst",
            category="Co-location",
        ),
        summary=f"{RESULTS}/summary/colocation.csv",
    params:
        days=CO["days"],
        code=code_digest("analysis.colocation", "report.compare", "report.summary", "trace"),
    log:
        f"{RESULTS}/logs/colocation_density.log",
    benchmark:
        f"{RESULTS}/benchmarks/colocation_density.tsv"
    threads: 1
    resources:
        # the events up to the last instant: at the trace start (days [0]) the first shard's, read in part (peak
        # 148–175 MB on the default run and the paper-scale slice, bench/memory.py); a later day reads every
        # shard before it (unmeasured: ~10 MB per MB of csv.gz, as the maps)
        mem_mb=lambda wc, input: int(280 + (10 * size_mb(input.events) if max(CO["days"]) > 0 else 0)),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/colocation_density.py"
