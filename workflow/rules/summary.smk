# results/<run>/summary.csv and summary.md: every reproduced number beside the paper's, in one unit and within a
# stated tolerance (colocate.report.compare), from the parts each stage registers.


# The papers' claims (workflow/papers/<paper>.tsv) and measured causes (causes/<id>.md): inputs of what judges the
# analyses' measurements, and of nothing else, so that editing one reruns the summary alone.
PAPERS = {
    "claims": sorted(str(p) for p in Path(workflow.basedir, "workflow/papers").glob("*.tsv")),
    "causes": sorted(str(p) for p in Path(workflow.basedir, "workflow/papers/causes").glob("*.md")),
}


rule summary:
    input:
        parts=summary_parts(),
        # what the run read: the page begins with it
        capabilities=f"{RESULTS}/trace/capabilities.json",
        # how much of each long task's series was read: stated beside every row that depends on the usage read
        series=[f"{RESULTS}/tables/series_coverage.csv"] if supported("entities", "usage_series") else [],
        # the papers' claims and the measured causes the analyses' measurements are judged against
        **PAPERS,
        # Markdown sections appended to the page as they are (the cross-trace table of a run on another trace)
        sections=[] if SRC.paper_trace else [f"{RESULTS}/summary/cross_trace.md"],
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
        # the settings this run changes from the defaults ([key, value, default]): the page begins with them
        settings=CONFIG_CHANGES,
        scale=config["scale"],
        # the synthetic model's measured causes explain its rows only
        synthetic=SRC.is_model,
        # rows measured on another trace than the papers': shown beside the papers' values, not judged
        another_trace=None if SRC.paper_trace else CAPABILITIES.trace,
        code=code_digest("report.summary", "report.compare", "report.claims", "measure", "insufficient"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/summary.py"


rule not_applicable:
    output:
        f"{RESULTS}/not_applicable/{{key}}.csv",
    wildcard_constraints:
        key="|".join(not_applicable()) or "(?!)",
    params:
        analysis=lambda wc: NEEDS[wc.key][0],
        reason=lambda wc: _contract.not_applicable_reason(CAPABILITIES, NEEDS[wc.key][1])[0],
        needs=lambda wc: _contract.not_applicable_reason(CAPABILITIES, NEEDS[wc.key][1])[1],
    log:
        f"{RESULTS}/logs/not_applicable/{{key}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/not_applicable/{{key}}.tsv"
    threads: 1
    resources:
        mem_mb=200,
        runtime=2,
    conda:
        "../../environment.yml"
    script:
        "../scripts/not_applicable.py"


rule source_capabilities:
    input:
        # the contract's tables as the source's map wrote them: their footers give the rows and span read
        unpack(lambda wc: contract_tables_read()),
    output:
        f"{RESULTS}/trace/capabilities.json",
    params:
        # what the run's source records and which of its files this run reads (colocate.sources.contract)
        record=CAPABILITIES.to_json(),
        tables=lambda wc: sorted(contract_tables_read()),
        code=code_digest("sources.contract", "io"),
    log:
        f"{RESULTS}/logs/source_capabilities.log",
    benchmark:
        f"{RESULTS}/benchmarks/source_capabilities.tsv"
    threads: 1
    resources:
        mem_mb=100,
        runtime=2,
    conda:
        "../../environment.yml"
    script:
        "../scripts/source_capabilities.py"


# A run on another trace than the papers' compares its quantities with the papers' and the Google runs'
# cross_trace.compare_with names (one name, a list, or null), this run itself left out.
CROSS = config["cross_trace"]
if not SRC.paper_trace:
    TARGETS.append(((), [f"{RESULTS}/tables/cross_trace.csv", f"{RESULTS}/figures/cross_trace.png"]))
    from colocate.report.cross_trace import compared_runs as _compared_runs, how_to_make as _how_to_make

    CROSS_RUNS = _compared_runs(CROSS["compare_with"], RUN)

    rule cross_trace:
        input:
            parts=lambda wc: summary_parts(),
            **PAPERS,
            # the Google runs compared with (cross_trace.compare_with): read when they exist, never built from here,
            # each labelled by the trace it recorded
            compared=lambda wc: [f"results/{r}/summary.csv" for r in CROSS_RUNS if Path(f"results/{r}/summary.csv").exists()],
            compared_capabilities=lambda wc: [f"results/{r}/trace/capabilities.json" for r in CROSS_RUNS
                                              if Path(f"results/{r}/trace/capabilities.json").exists()],
        output:
            table=report(
                f"{RESULTS}/tables/cross_trace.csv",
                caption="../report/cross_trace.rst",
                category="Across traces",
            ),
            figure=report(
                f"{RESULTS}/figures/cross_trace.png",
                caption="../report/cross_trace.rst",
                category="Across traces",
            ),
            section=f"{RESULTS}/summary/cross_trace.md",
        params:
            run=RUN,
            trace=CAPABILITIES.trace,
            compared=CROSS_RUNS,
            # how to make each compared run, for the note on those that do not exist yet
            how_to_make={run: _how_to_make(run, _sources.SOURCES.names(), list(_PRESETS)) for run in CROSS_RUNS},
            code=code_digest("insufficient", "report.cross_trace", "report.summary", "report.claims", "measure", "figures.cross_trace",
                             "figures.__init__"),
        log:
            f"{RESULTS}/logs/cross_trace.log",
        benchmark:
            f"{RESULTS}/benchmarks/cross_trace.tsv"
        threads: 1
        resources:
            mem_mb=400,
            runtime=5,
        conda:
            "../../environment.yml"
        script:
            "../scripts/cross_trace.py"
