# colocate: rebuild the analyses of four papers on the Google cluster trace 2011.
# See README.md and docs/; the stages live in workflow/rules/, the science in workflow/colocate/.
import warnings

from snakemake.utils import min_version

# Snakemake's own bug (snakemake/snakemake#4280, open): --report evaluates resources that read input.size_mb
# without awaiting the size coroutine. Harmless (the report needs no resources), yet printed once per rule.
warnings.filterwarnings("ignore", message=r"coroutine 'InputFiles\._predicated_size_files", category=RuntimeWarning)

min_version("9.0")

# A job uses the threads its rule declares: Snakemake sets OMP_NUM_THREADS (BLAS, OpenMP) to them for every
# script, notebook and shell command; polars sizes its pool once, at import, from POLARS_MAX_THREADS, so without
# this a one-thread job ran every core's worth of polars threads and `--cores N` oversubscribed N-fold.
# A POLARS_MAX_THREADS already set in the environment wins.
shell.prefix("set -euo pipefail; export POLARS_MAX_THREADS=${{POLARS_MAX_THREADS:-$OMP_NUM_THREADS}}; ")


configfile: "config.yaml"


# workflow/rules/common.smk types the --config values by workflow/schemas/config.schema.yaml
# (colocate.configtypes), validates them, fills sizes from the scale preset and validates again.


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/resume.smk"


# The stages in the order of the papers (the summary's sections follow it); a new
# workflow/rules/<stage>.smk is included after them without a line here.
STAGES = ["mapreduce", "realizations", "colocation", "notebooks", "characterise", "packing", "admission",
          "placement", "jobs", "cpumem", "periodicity", "failures"]
_found = sorted(p.stem for p in (Path(workflow.basedir) / "workflow/rules").glob("*.smk"))
_skip = STAGES + ["common", "resume", "summary", *SOURCE_FAMILIES, Path(SRC.rules).stem]
for _stage in STAGES + [s for s in _found if s not in _skip]:

    include: f"workflow/rules/{_stage}.smk"


# The run's source: its rules file (colocate.sources; e.g. workflow/rules/google2011.smk) downloads or reads the
# trace and maps it to the contract's tables, which the stages read; no other source's rules are defined.
include: SRC.rules
include: "workflow/rules/summary.smk"


rule all:
    input:
        all_targets(),
    default_target: True


# On a cluster a job also runs Snakemake itself around the rule's script, and the cluster counts it against the
# job's memory limit: every rule's mem_mb (the script's own peak) gains cluster.job_overhead_mb there.
add_memory(workflow.rules, config["cluster"]["job_overhead_mb"], applies=lambda: workflow.non_local_exec)

