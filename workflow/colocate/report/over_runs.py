"""One summary over several runs: how much of the agreement with the papers is the draw's (issue 13).

The default run's ``summary.csv`` is one realization of the synthetic trace. The same config on other trace seeds
(``--config run=seed-1 trace='{"source": "synthetic", "seed": 1}'``) gives other realizations; rows whose verdict
changes with the seed agree or disagree by the draw, not by the model (``studies/fidelity_seeds.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

__all__ = ["agreement_over_runs", "outside_in_every_run"]

_KEY = ("section", "quantity")  # a row of summary.csv, the same in every run


def agreement_over_runs(tables: Mapping[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per section, the rows within tolerance in each run; and the rows whose verdict differs between runs.

    ``tables`` maps a run's name to its summary (``summary.csv``: ``section``, ``quantity``, ``ours``,
    ``within``). Returns ``(by_section, flips)``: per section (and "all") the rows compared in every run and, per
    run, how many of them are within tolerance; and the rows compared in every run whose verdict is not the same
    in all of them, with each run's ours (``ours <run>``) and verdict (``<run>``). Raises ValueError for fewer than
    two runs.
    """
    wide = _verdicts(tables, "agreement over runs")
    names = list(tables)
    by = wide.group_by("section", maintain_order=True).agg(pl.len().alias("compared"), *[pl.col(n).sum() for n in names])
    by = pl.concat([by, by.select(pl.lit("all").alias("section"), pl.all().exclude("section").sum())])
    same = pl.all_horizontal([pl.col(n) == pl.col(names[0]) for n in names[1:]])
    flips = wide.filter(~same).select(*_KEY, *[c for n in names for c in (f"ours {n}", n)])
    return by.cast({c: pl.Int64 for c in ["compared", *names]}), flips


def outside_in_every_run(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The rows compared in every run and outside tolerance in all of them, with each run's ours (``ours <run>``).

    A row outside on every draw points to the model or a reading rather than to the draw. The rows compared less
    these bound what one draw could bring within if every row that moves with the draw fell within on it. Raises
    ValueError for fewer than two runs.
    """
    wide = _verdicts(tables, "rows outside in every run")
    names = list(tables)
    return wide.filter(~pl.any_horizontal(names)).select(*_KEY, *[f"ours {n}" for n in names])


def _verdicts(tables: Mapping[str, pl.DataFrame], what: str) -> pl.DataFrame:
    """The rows compared in every run (:data:`_KEY`), with each run's ours (``ours <run>``) and verdict (``<run>``),
    in the first run's order. Raises ValueError naming ``what`` for fewer than two runs."""
    if len(tables) < 2:
        raise ValueError(f"{what} needs at least two runs, got {len(tables)}")
    wide = None
    for name, table in tables.items():
        part = table.filter(pl.col("within").is_not_null()).select(
            *_KEY, pl.col("ours").cast(pl.String).alias(f"ours {name}"), pl.col("within").cast(pl.Boolean).alias(name))
        wide = part if wide is None else wide.join(part, on=list(_KEY), how="inner", maintain_order="left")
    return wide
