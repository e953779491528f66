# Stochastic bin packing (Janus & Rzadca §4–5, with Unuvar's Beta test and peak predictors beside GPA):
# a Paramspace of settings (data, clairvoyance, capacity), one job each over all instances, then one
# tidy table, its summary and Figs 7–13 plus an m–q Pareto figure. Then the Beta admission controller
# of Unuvar §IV-F on a stream of long tasks (Table VIII, Fig 9).
from snakemake.utils import Paramspace

from colocate.scheduling import fit_tests as _fit_tests
from colocate.scheduling import packing_grid as _packing_grid

# An absent `packing:` section gets its defaults here too (a $ref'd schema's default is not applied).
PK = config["packing"]
PACKING_ON = "instances" in PK and "tasks_per_instance" in PK
if not PACKING_ON:
    logger.warning("colocate: packing.instances and packing.tasks_per_instance are unset (scale preset); skipping packing")
elif PK["tasks_per_instance"] > config["realizations"]["n_tasks"]:
    raise ValueError(
        f"config key packing.tasks_per_instance: {PK['tasks_per_instance']} exceeds realizations.n_tasks "
        f"({config['realizations']['n_tasks']})"
    )
# Checked at parse time (plug-ins imported and checked too), so a bad grid fails before any job, naming its key.
PACKING_ESTIMATORS, PACKING_ESTIMATOR_OPTIONS = _packing_grid.estimator_settings(PK["estimators"])
PACKING_CELLS = _packing_grid.expand_grid(PACKING_ESTIMATORS, PK["sections"])
PACKING_SPACE = Paramspace(_packing_grid.settings(PACKING_CELLS).to_pandas(), param_sep="~")
PACKING_CATEGORY = "Packing (Janus & Rzadca)"
PACKING_FIGURES = {
    "fig7": "packing_fig7_machines",
    "fig8": "packing_fig8_m_vs_q",
    "fig9": "packing_fig9_gpa_error",
    "fig10": "packing_fig10_inst_vs_avg",
    "fig11": "packing_fig11_capacity",
    "fig12": "packing_fig12_clairvoyance",
    "fig13": "packing_fig13_rebalancing",
    "pareto": "packing_pareto",
}
PACKING_CODE = ("scheduling.packing", "scheduling.fit_tests", "scheduling.packing_grid", "io")

if PACKING_ON:
    TARGETS.append(
        (
            ("entities", "usage_series"),
            [f"{RESULTS}/tables/packing.parquet", f"{RESULTS}/tables/packing_summary.csv"]
            + [f"{RESULTS}/figures/{name}.png" for name in PACKING_FIGURES.values()],
        )
    )
    SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/packing.csv"))
SUMMARY_PARTS.append((("entities", "usage_series"), f"{RESULTS}/summary/admission.csv"))
NEEDS["packing"] = ("Stochastic packing and admission control (Janus & Rzadca §4-5; Unuvar et al. §IV-F)",
                    ("entities", "usage_series"))


rule packing_setting:
    input:
        inst=f"{RESULTS}/realizations/inst.npy",
        avg=f"{RESULTS}/realizations/avg.npy",
        tasks=f"{RESULTS}/realizations/tasks.parquet",
        stats=f"{RESULTS}/tasks/task_stats.parquet",
    output:
        f"{RESULTS}/packing/{PACKING_SPACE.wildcard_pattern}.parquet",
    params:
        setting=lambda wc: dict(PACKING_SPACE.instance(wc)),
        cells=lambda wc: _packing_grid.cells_of(PACKING_CELLS, PACKING_SPACE.instance(wc)),
        instances=PK.get("instances"),
        tasks_per_instance=PK.get("tasks_per_instance"),
        seed=PK["seed"],
        max_failures=PK["max_failures"],
        # every grid-wide option a built-in fit test declares (packing.beta_threshold, ...), by its config key
        fit_options={key: PK[key] for key in _fit_tests.FIT_OPTIONS},
        estimator_options=PACKING_ESTIMATOR_OPTIONS,
        code=code_digest("insufficient", *PACKING_CODE) + plugin_digest(*PACKING_ESTIMATORS),
    log:
        f"{RESULTS}/logs/packing_setting/{PACKING_SPACE.wildcard_pattern}.log",
    benchmark:
        f"{RESULTS}/benchmarks/packing_setting/{PACKING_SPACE.wildcard_pattern}.tsv"
    priority: PRIORITY_LONG_JOB
    threads: 1
    resources:
        # one instance of inst and avg in memory, plus its percentiles and machine totals. Peak 334 MB (default
        # run); 5.1 GB on the paper-scale slice, of it all but 241 MB (its largest anonymous RSS) mapped matrix
        # pages, which the kernel drops under a limit (bench/memory.py)
        mem_mb=lambda wc: 400 + 4 * PK["tasks_per_instance"] * config["realizations"]["n_realizations"] * 4 // 2**20,
        runtime=lambda wc: 10
        + len(_packing_grid.cells_of(PACKING_CELLS, PACKING_SPACE.instance(wc))) * PK["instances"] // 40,
    conda:
        "../../environment.yml"
    script:
        "../scripts/packing_setting.py"


rule packing_table:
    input:
        expand(f"{RESULTS}/packing/{{setting}}.parquet", setting=PACKING_SPACE.instance_patterns),
    output:
        table=f"{RESULTS}/tables/packing.parquet",
        csv=report(
            f"{RESULTS}/tables/packing_summary.csv",
            caption="../report/packing_summary.rst",
            category=PACKING_CATEGORY,
        ),
        summary=f"{RESULTS}/summary/packing.csv",
    params:
        code=code_digest("insufficient", "scheduling.packing_grid", "measure", "io"),
    log:
        f"{RESULTS}/logs/packing_table.log",
    benchmark:
        f"{RESULTS}/benchmarks/packing_table.tsv"
    threads: 1
    resources:
        mem_mb=400,  # peak 254 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/packing_table.py"


rule packing_figures:
    input:
        table=f"{RESULTS}/tables/packing.parquet",
    output:
        **{
            key: report(
                f"{RESULTS}/figures/{name}.png",
                caption=f"../report/{name}.rst",
                category=PACKING_CATEGORY,
            )
            for key, name in PACKING_FIGURES.items()
        },
    params:
        note="",
        code=code_digest("insufficient", "figures.packing", "scheduling.packing_grid"),
    log:
        f"{RESULTS}/logs/packing_figures.log",
    benchmark:
        f"{RESULTS}/benchmarks/packing_figures.tsv"
    threads: 1
    resources:
        mem_mb=550,  # peak 356 MB on the default run and the paper-scale slice (bench/memory.py)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/packing_figures.py"


TARGETS.append((("entities", "usage_series"), [f"{RESULTS}/notebooks/03_packing.ipynb", f"{RESULTS}/notebooks/03_packing.html"] if PACKING_ON else []))


rule notebook_packing:
    input:
        table=f"{RESULTS}/tables/packing.parquet",
        inst=f"{RESULTS}/realizations/inst.npy",
    output:
        instance=report(
            f"{RESULTS}/figures/packing_one_instance.png",
            caption="../report/packing_one_instance.rst",
            category="Packing (Janus & Rzadca)",
        ),
    params:
        instances=PK.get("instances"),
        tasks_per_instance=PK.get("tasks_per_instance"),
        seed=PK["seed"],
    log:
        notebook=f"{RESULTS}/logs/notebooks/03_packing.ipynb",
    benchmark:
        f"{RESULTS}/benchmarks/notebook_packing.tsv"
    threads: 1
    resources:
        mem_mb=lambda wc: 1500 + 3 * PK["tasks_per_instance"] * config["realizations"]["n_realizations"] * 4 // 2**20,
        runtime=15,
    conda:
        "../../environment.yml"
    notebook:
        "../../notebooks/03_packing.py.ipynb"
