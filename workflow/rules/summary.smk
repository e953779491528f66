# results/summary.md: every reproduced number beside the paper's, from the parts each stage registers.


rule summary:
    input:
        parts=summary_parts(),
    output:
        report("results/summary.md", caption="../report/summary.rst", category="Summary"),
    log:
        "logs/summary.log",
    benchmark:
        "benchmarks/summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        code=code_digest("summary"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/summary.py"
