"""Figs 1–4 of Tantawi & Steinder (replicate 0), and the rejections over replicates beside the paper's one run."""
import polars as pl

from colocate import rulescript
from colocate.figures import placement as figs
from colocate.report import claims
from colocate.scheduling.placement_analysis import snapshot_figure_input
from colocate.scheduling.placement_workload import Experiment

#: The claims of Table II's % reject, one per policy of the paper (workflow/papers/tantawi.tsv).
REJECT_CLAIMS = "tantawi.t2.reject_pct."


def paper_reject_pct(path) -> dict[str, float]:
    """The paper's % reject per policy (Table II, one run each), as its claims table prints it."""
    return {claim.removeprefix(REJECT_CLAIMS).upper(): float(paper) for claim, paper in claims.printed([path]).items()
            if claim.startswith(REJECT_CLAIMS) and paper}


def main(inputs, outputs, params, log):
    p, out = params, outputs
    exp = Experiment.from_config(p.experiment)
    requests = pl.read_parquet(inputs.requests)
    policies = requests["policy"].unique(maintain_order=True).to_list()
    first = requests.filter(pl.col("policy") == (p.target if p.target in policies else policies[0]))
    offered = [exp.offered_load(i) for i in range(len(exp.phases))]
    figs.fig1_load_trajectory(first, exp.resources, offered).savefig(out.fig1)
    figs.fig2_stdev(requests, exp.resources, policies).savefig(out.fig2)
    figs.fig3_snapshot(snapshot_figure_input(pl.read_parquet(inputs.snapshot), exp.resources), exp.resources, exp.snapshot_pod).savefig(out.fig3)
    figs.fig4_error(first, p.prime_resource, exp.warmup).savefig(out.fig4)
    metrics, ci = pl.read_csv(inputs.metrics), pl.read_csv(inputs.replicates)
    figs.fig_replicates(metrics, ci, policies, paper_reject_pct(inputs.claims)).savefig(out.replicates)
    log.info("figures for %s", ", ".join(policies))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
