# Co-location: running tasks per machine at given instants, from the contract's placement events, beside the real trace's
# density at its start. The science lives in colocate.analysis.colocation.

CO = config["colocation"]

TARGETS.append((("placements",), [f"{RESULTS}/tables/colocation_density.csv"]))
SUMMARY_PARTS.append((("placements",), f"{RESULTS}/summary/colocation.csv"))
NEEDS["colocation"] = ("Co-location density per machine (issue 13)", ("placements",))


rule colocation_density:
    input:
        # the contract's placement events, up to the last of colocation.days
        events=lambda wc: PLACEMENT_EVENTS,
    output:
        table=report(
            f"{RESULTS}/tables/colocation_density.csv",
            caption="../report/colocation_density.rst",
            category="Co-location",
        ),
        summary=f"{RESULTS}/summary/colocation.csv",
    params:
        days=CO["days"],
        code=code_digest("analysis.colocation", "sources.contract", "measure", "io"),
    log:
        f"{RESULTS}/logs/colocation_density.log",
    benchmark:
        f"{RESULTS}/benchmarks/colocation_density.tsv"
    threads: 1
    resources:
        # the events up to the last instant, ~30 B each in Parquet and ~50 B in memory, sorted once per instant
        mem_mb=lambda wc, input: int(280 + 6 * size_mb(input.events)),
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/colocation_density.py"
