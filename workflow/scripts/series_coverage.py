"""How much of each long task's series the run read: the windows from its first record to its last, and how many
of them have a record (a bucket at a time)."""
import polars as pl

from colocate import rulescript
from colocate.prep.tasks import coverage_summary, series_coverage
from colocate.sources.contract import WINDOW_US


def main(inputs, outputs, params, log):
    per_task = pl.concat([series_coverage(pl.scan_parquet(p).select("job_id", "task_index", "start_time"), WINDOW_US)
                          for p in inputs.series])
    table = coverage_summary(per_task)
    table.write_csv(outputs.table)
    log.info("series coverage of %d long tasks\n%s", per_task.height, table)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
