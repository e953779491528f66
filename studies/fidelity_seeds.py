"""Study: the default summary's agreement over trace seeds (issue 13: how much of it is the draw's).

The default run is one realization of the synthetic trace (``trace.seed`` 20110501), and the model was calibrated
on it. Run the same config on other seeds, each into its own run directory (about 5 minutes each here on 2 cores:
4, and 1 for the synthesis of its trace):

    snakemake --cores 2 --config run=seed-1 trace='{"source": "synthetic", "seed": 1}'
    snakemake --cores 2 --config run=seed-2 trace='{"source": "synthetic", "seed": 2}'
    python studies/fidelity_seeds.py results/synthetic-default results/seed-1 results/seed-2

It prints, per section, the rows within tolerance in each run (of those compared in all), each run's total
against the first run's (the reference: a ratio), the rows whose verdict changes with the seed with each run's
value, the rows outside in every run (so the most rows within that any one draw could give, where every row that
changes fell within), and the study's peak memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.report.over_runs import agreement_over_runs, outside_in_every_run  # noqa: E402
from colocate.report.summary import COLUMNS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="finished runs (results/<run>), the first the reference")
    args = ap.parse_args(argv)
    tables = {}
    for run in args.runs:
        path = run / "summary.csv"
        if not path.is_file():
            ap.error(f"{path}: no summary (is {run} a finished run?)")
        tables[run.name] = pl.read_csv(path, schema=COLUMNS)
    if len(tables) < 2:
        ap.error("name at least two runs (run names must differ)")
    by, flips = agreement_over_runs(tables)
    names = list(tables)
    width = max(len(s) for s in by["section"])
    print(f"{'section':<{width}}  compared  " + "  ".join(f"{n:>16}" for n in names))
    for r in by.iter_rows(named=True):
        print(f"{r['section']:<{width}}  {r['compared']:>8}  " + "  ".join(f"{r[n]:>16}" for n in names))
    total = by.filter(pl.col("section") == "all").row(0, named=True)
    ref = total[names[0]]
    for n in names:
        print(f"{n}: {total[n]} of {total['compared']} within ({total[n] / total['compared']:.1%}), "
              f"{total[n] / ref:.3f}× the reference {names[0]}")
    print(f"\n{flips.height} rows change their verdict with the run:")
    for r in flips.iter_rows(named=True):
        cells = "; ".join(f"{n} {r[f'ours {n}']} ({'in' if r[n] else 'out'})" for n in names)
        print(f"  {r['section'][:40]} | {r['quantity']}: {cells}")
    always = outside_in_every_run(tables)
    moving = flips.height
    print(f"\n{always.height} rows are outside in every run: at most {total['compared'] - always.height} of "
          f"{total['compared']} within ({(total['compared'] - always.height) / total['compared']:.1%}) on a draw where "
          f"all {moving} rows that change fell within; of those, " + ", ".join(
              f"{n} has {int(flips[n].sum())}" for n in names))
    for r in always.iter_rows(named=True):
        print(f"  {r['section'][:40]} | {r['quantity']}: " + "; ".join(f"{n} {r[f'ours {n}']}" for n in names))
    print(f"\npeak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
