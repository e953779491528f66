# Co-location: running tasks per machine at given instants, from task_events, beside the real trace's
# density at its start. The science lives in colocate.analysis.colocation.

CO = config["colocation"]

TARGETS.append((("task_events",), [f"{RESULTS}/tables/colocation_density.csv"]))
SUMMARY_PARTS.append((("task_events",), f"{RESULTS}/summary/colocation.csv"))


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
        # the events up to the last instant: at the trace start one shard (real part 0: 450k events)
        mem_mb=lambda wc, input: 1000 + 20 * int(input.size_mb if max(CO["days"]) > 0 else input.size_mb / len(input.events)),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/colocation_density.py"
