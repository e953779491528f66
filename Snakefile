# colocate: rebuild the analyses of four papers on the Google cluster trace 2011.
# See README.md; the stages live in workflow/rules/, the science in workflow/colocate/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


# workflow/rules/common.smk types the --config values by workflow/schemas/config.schema.yaml
# (colocate.configtypes), validates them, fills sizes from the scale preset and validates again.


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/resume.smk"
include: "workflow/rules/trace.smk"
include: "workflow/rules/mapreduce.smk"
include: "workflow/rules/realizations.smk"
include: "workflow/rules/notebooks.smk"
include: "workflow/rules/characterise.smk"
include: "workflow/rules/packing.smk"
include: "workflow/rules/admission.smk"
include: "workflow/rules/placement.smk"
include: "workflow/rules/jobs.smk"
include: "workflow/rules/cpumem.smk"
include: "workflow/rules/periodicity.smk"
include: "workflow/rules/failures.smk"
include: "workflow/rules/summary.smk"


rule all:
    input:
        all_targets(),
    default_target: True
