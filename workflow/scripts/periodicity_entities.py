"""The groups of Beaumont §5.2 on a trace without priorities: each entity read over the whole span is its own group."""
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.analysis import periodicity as pe

ANALYSIS = "Beaumont §5.2, entities read over the whole trace"


def main(inputs, outputs, params, log):
    p = params
    parts = [pl.scan_parquet(f) for f in inputs.series]  # the contract's series, a bucket at a time
    spans = pe.entity_spans(parts)
    chosen = pe.whole_span_entities(spans, p.n_windows, p.min_coverage, p.max_entities, p.seed)
    insufficient.require(chosen.height > 0, f"no entity is read from the first to the last of the trace's {p.n_windows} "
                         f"windows ({p.n_windows / 288:.1f} days) in ≥ {p.min_coverage:.0%} of them; " + (
                             f"the series cover windows {spans['first_window'].min()}..{spans['last_window'].max()}"
                             if spans.height else "no entity has usage records"), "the whole trace's usage")
    keys = chosen.lazy().select("job_id", "task_index")
    series = pl.concat([part.join(keys, on=["job_id", "task_index"], how="semi").collect() for part in parts])
    dominant, windows = pe.entity_groups(chosen, series)
    io.write_parquet(dominant, outputs.dominant)
    io.write_parquet(windows, outputs.windows)
    log.info("%d of %d entities read over all %d windows (≥ %.0f%% of them)", chosen.height, spans.height, p.n_windows,
             100 * p.min_coverage)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
