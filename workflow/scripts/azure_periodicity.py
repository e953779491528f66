"""Beaumont §5.2 on Azure VMs: Table 4's Fourier ratios, weekly shape and daily phases of the VMs read all month."""
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.analysis import periodicity as pe
from colocate.report import cross_trace, summary
from colocate.trace import azure

ANALYSIS = "Beaumont Table 4 on Azure VMs (§5.2)"


def main(inputs, outputs, params, log):
    p, o = params, outputs
    parts = [pl.scan_parquet(f) for f in inputs.series]  # the contract's series, a bucket at a time
    vms = azure.entity_spans(parts)
    vmtable = pl.read_parquet(inputs.vmtable)
    n_slots = azure.trace_slots(vmtable)  # the trace's month, whatever share of it the readings files cover
    chosen = azure.long_running(vms, n_slots, p.min_coverage, p.max_vms, p.seed)
    insufficient.require(chosen.height > 0, f"no VM is read from the first to the last of the trace's {n_slots} slots "
                         f"({n_slots / 288:.1f} days) in ≥ {p.min_coverage:.0%} of them; the readings cover slots "
                         f"{vms['first_slot'].min()}..{vms['last_slot'].max()}", "every readings file of the month")
    dominant, windows = azure.as_periodicity_input(chosen, azure.series_of(parts, chosen), p.host_cores)
    io.write_parquet(windows, o.windows)
    res = pe.analyse(dominant, windows, n_slots, classes=("vm",), min_coverage=p.min_coverage,
                     significance_ratio=p.significance_ratio, strong_ratio=p.strong_ratio,
                     phase_min_ratio=p.phase_min_ratio, spectra_jobs=p.spectra_jobs)
    io.write_parquet(res["components"], o.components)
    io.write_parquet(res["spectra"], o.spectra)
    for name in ("table4", "weekly", "phases"):
        res[name].write_csv(getattr(o, name))
    rows = pe.summary_rows(res["components"], res["weekly"], res["phases"], n_windows=n_slots,
                           significance_ratio=p.significance_ratio, strong_ratio=p.strong_ratio,
                           phase_min_ratio=p.phase_min_ratio, phase_limits_deg=p.phase_limits_deg)
    part = summary.rows("Periodicity of Azure VMs (Beaumont et al. §5.2 on another trace)", rows)
    part = part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String))
    part.write_csv(o.summary)  # compared with the paper's, not judged: the summary says so of another trace
    log.info("%d of %d VMs read over all %d slots; Table 4:\n%s", chosen.height, vms.height, n_slots, res["table4"])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
