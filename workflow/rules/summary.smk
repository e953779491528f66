# results/<run>/summary.csv and summary.md: every reproduced number beside the paper's, in one unit and within a
# stated tolerance (colocate.report.compare), from the parts each stage registers.


rule summary:
    input:
        parts=summary_parts(),
        # Markdown sections appended to the page as they are (the cross-trace table of an Azure run)
        sections=[f"{RESULTS}/summary/cross_trace.md"] if AZURE else [],
        # every output of the run: the summary lists the analyses that lacked data, with their reasons
        outputs=lambda wc: [t for t in all_targets() if not t.endswith(("summary.md", "summary.csv"))],
    output:
        table=report(f"{RESULTS}/summary.csv", caption="../report/summary.rst", category="Summary"),
        page=report(f"{RESULTS}/summary.md", caption="../report/summary.rst", category="Summary"),
    log:
        f"{RESULTS}/logs/summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/summary.tsv"
    threads: 1
    resources:
        mem_mb=230,  # peak 137 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=5,
    params:
        run=RUN,
        # the synthetic model's measured causes explain its rows only
        synthetic=SOURCE == "synthetic",
        code=code_digest("report.summary", "report.compare", "insufficient"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/summary.py"
