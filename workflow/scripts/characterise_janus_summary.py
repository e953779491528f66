"""What Janus & Rzadca §3 reports, as measured here (a part of results/summary.md, judged there against
workflow/papers/janus.tsv): the measurements of every table its analysis gave; a table that did not apply to the
trace, or lacked data, gives none."""
import polars as pl

from colocate import insufficient, measure, rulescript
from colocate.analysis import characterise as ch

ANALYSIS = "Janus & Rzadca §3, headline numbers"
TABLES = ("fig1", "fig2", "fig3", "s34", "shares", "table1", "fig6")


def main(inputs, outputs, params, log):
    paths = {name: getattr(inputs, name, None) for name in TABLES}
    status = {name: insufficient.read_status(path) if path else None for name, path in paths.items()}
    if not any(path and not status[name] for name, path in paths.items()):  # no table at all: say the first reason
        first = next(s for s in status.values() if s)
        insufficient.write_status([outputs[0]], first.downstream(ANALYSIS))
        log.warning("%s: %s", ANALYSIS, first.reason)
        return
    tables = [pl.read_csv(paths[n]) if paths[n] and not status[n] else None for n in TABLES]
    measured = ch.janus_measurements(*tables, n_realizations=params.n_realizations)
    measure.measurements(measured).write_csv(outputs[0])
    log.info("%d measurements; without %s", len(measured), [n for n in TABLES if not paths[n] or status[n]] or "none")


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake): statuses are read table by table
